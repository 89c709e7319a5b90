/* The FFT pattern of third-party task benchmarks: a task calls a
 * recursive static helper that creates the tasks (two halves, then a
 * taskwait and a butterfly pass), built with -O2 and sibling calls on.
 * The first half is created by one of two constructs, whose identical
 * call tails clang -O2 merges: the merged call (one construct) has line 0
 * in the line table, so it resolves to its function only (fft_aux).
 * Usage: prog_fft_tasks [log2 n] (default 10, 4..16).
 * XUs (any N threads): 1 + 2 (n / 16 - 1) tasks (the helper splits down
 * to 16 points); n = 1024: 127 tasks. */
#include <math.h>
#include <stdlib.h>

#include "prog_util.h"

static void butterfly(double *re, double *im, long n)
{
    for (long k = 0; k < n / 2; k++) {
        double c = cos(2 * M_PI * (double)k / (double)n);
        double s = -sin(2 * M_PI * (double)k / (double)n);
        double tr = re[k + n / 2] * c - im[k + n / 2] * s;
        double ti = re[k + n / 2] * s + im[k + n / 2] * c;
        re[k + n / 2] = re[k] - tr;
        im[k + n / 2] = im[k] - ti;
        re[k] += tr;
        im[k] += ti;
    }
}

static void fft_aux(double *re, double *im, long n)
{
    if (n <= 16) {
        for (long s = 2; s <= n; s *= 2)
            for (long b = 0; b < n; b += s)
                butterfly(re + b, im + b, s);
        return;
    }
    /* the first half by one of two constructs (as the radix choice of
     * a real FFT): at -O2 their identical call tails merge, and the
     * merged call's line is 0 */
    if (n % 64 == 0) {
#pragma omp task firstprivate(re, im, n)
        fft_aux(re, im, n / 2);
    } else {
#pragma omp task firstprivate(re, im, n)
        fft_aux(re, im, n / 2);
    }
#pragma omp task firstprivate(re, im, n)
    fft_aux(re + n / 2, im + n / 2, n / 2);
#pragma omp taskwait
    butterfly(re, im, n);
}

int main(int argc, char **argv)
{
    int lg = argc > 1 ? atoi(argv[1]) : 10;
    if (lg < 4 || lg > 16) {
        fprintf(stderr, "prog_fft_tasks: log2 n must be in 4..16\n");
        return 2;
    }
    long n = 1L << lg;
    double *re = calloc((size_t)n, sizeof *re), *im = calloc((size_t)n, sizeof *im);
    if (!re || !im) {
        fprintf(stderr, "prog_fft_tasks: out of memory\n");
        return 1;
    }
    for (long i = 0; i < n; i++)
        re[i] = (double)(i % 7) - 3.0;
#pragma omp parallel
#pragma omp single
#pragma omp task
    fft_aux(re, im, n);
    double v[2] = {re[1], im[1]};
    prog_checksum("fft_tasks", v, 2);
    free(re);
    free(im);
    return 0;
}
