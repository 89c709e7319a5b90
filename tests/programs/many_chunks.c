/* Many one-iteration chunks: a schedule(dynamic,1) loop of C iterations
 * (default C = 1000000, argv[1] to change) in a parallel region of N
 * threads.  XUs with N >= 2: C chunks of one iteration (N = 1: libomp 19
 * reports one chunk of C).  The checksum is the exact integer sum of the
 * iteration numbers. */
#include <stdlib.h>

#include "prog_util.h"

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 1000000L;
    if (count < 0) {
        fprintf(stderr, "prog_many_chunks: count must be >= 0\n");
        return 2;
    }
    long long total = 0;
#pragma omp parallel shared(total)
    {
        /* A private partial sum, not a reduction clause: see cg.c. */
        long long part = 0;
#pragma omp for schedule(dynamic, 1) nowait
        for (long i = 0; i < count; i++)
            part += i;
#pragma omp atomic
        total += part;
    }
    double v = (double)total;
    prog_checksum("many_chunks", &v, 1);
    return 0;
}
