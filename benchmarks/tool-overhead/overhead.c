/* Workloads for the tool-overhead benchmark (see run.py):
 *   overhead tasks N    N empty tasks created by one thread (single)
 *   overhead chunks N   N one-iteration dynamic chunks
 *   overhead compute N  a compute kernel (dynamic,16 loop of N rows)
 * Prints the wall and CPU time of the OpenMP part in ns, and per XU. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static volatile long sink;

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: overhead tasks|chunks|compute N\n");
        return 2;
    }
    long n = atol(argv[2]);
    double s = 0;
    /* start the runtime (and the tool) before timing */
#pragma omp parallel
    sink++;
    double c0 = cpu_ns();
    double t0 = omp_get_wtime();
    if (!strcmp(argv[1], "tasks")) {
#pragma omp parallel
#pragma omp single
        for (long i = 0; i < n; i++) {
#pragma omp task
            sink++;
        }
    } else if (!strcmp(argv[1], "chunks")) {
#pragma omp parallel for schedule(dynamic, 1)
        for (long i = 0; i < n; i++)
            sink++;
    } else if (!strcmp(argv[1], "compute")) {
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : s)
        for (long i = 0; i < n; i++) {
            double x = (double)i;
            for (int k = 0; k < 20000; k++)
                x = x * 0.999999 + 1e-9 * k;
            s += x;
        }
    } else {
        fprintf(stderr, "overhead: unknown workload %s\n", argv[1]);
        return 2;
    }
    double t1 = omp_get_wtime();
    double c1 = cpu_ns();
    /* wall ns, wall ns per XU, CPU ns (all threads), CPU ns per XU */
    printf("%s %ld %.0f ns %.1f ns/xu %.0f cpu-ns %.1f cpu-ns/xu %g\n",
           argv[1], n, (t1 - t0) * 1e9, (t1 - t0) * 1e9 / (double)n,
           c1 - c0, (c1 - c0) / (double)n, s > 0 ? 1.0 : 0.0);
    return 0;
}
