/* Compute kernel: T Jacobi sweeps (default T = 20) of a 5-point stencil
 * on an S x S grid (default S = 512; argv[1] = S, argv[2] = T), each
 * sweep one schedule(static) loop over the S - 2 interior rows in a
 * parallel region of N threads.
 * XUs with N >= 2: T x min(N, S - 2) static chunks (one per thread per
 * sweep; 40 for the defaults and N = 2); no tasks.  N = 1 (serialized
 * team): libomp 19 sends no dispatch for these static loops. */
#include <stdlib.h>

#include "prog_util.h"

int main(int argc, char **argv)
{
    int s = argc > 1 ? atoi(argv[1]) : 512;
    int t = argc > 2 ? atoi(argv[2]) : 20;
    if (s < 3 || s > 16384 || t < 0 || t > 100000) {
        fprintf(stderr, "prog_compute: usage: prog_compute [size 3..16384] [sweeps 0..100000]\n");
        return 2;
    }
    size_t cells = (size_t)s * (size_t)s;
    double *a = malloc(cells * sizeof *a), *b = malloc(cells * sizeof *b);
    if (!a || !b) {
        fprintf(stderr, "prog_compute: out of memory for a %d x %d grid\n", s, s);
        return 1;
    }
    for (size_t k = 0; k < cells; k++)
        a[k] = b[k] = (double)(k % 17) / 17.0;
#pragma omp parallel
    for (int it = 0; it < t; it++) {
        const double *src = (it % 2) ? b : a;
        double *dst = (it % 2) ? a : b;
#pragma omp for schedule(static)
        for (int i = 1; i < s - 1; i++)
            for (int j = 1; j < s - 1; j++)
                dst[(size_t)i * s + j] =
                    0.2 * (src[(size_t)i * s + j] + src[(size_t)(i - 1) * s + j] +
                           src[(size_t)(i + 1) * s + j] + src[(size_t)i * s + j - 1] +
                           src[(size_t)i * s + j + 1]);
    }
    const double *res = (t % 2) ? b : a;
    prog_checksum("compute", res, (int)cells);
    free(a);
    free(b);
    return 0;
}
