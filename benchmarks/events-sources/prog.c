/* The probed program of events_sources: every thread of one parallel
 * region calls each of 8 noinline functions H times (argv[1], default
 * 1000); the benchmark probes the first N of them. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

#define F(k)                                                                 \
    __attribute__((noinline)) void es_probe_f##k(long v)                     \
    {                                                                        \
        __asm__ __volatile__("" ::: "memory");                               \
        sink += v + k;                                                       \
    }
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7)

int main(int argc, char **argv)
{
    long h = argc > 1 ? atol(argv[1]) : 1000;
#pragma omp parallel
    {
        for (long i = 0; i < h; i++) {
            es_probe_f0(i); es_probe_f1(i); es_probe_f2(i); es_probe_f3(i);
            es_probe_f4(i); es_probe_f5(i); es_probe_f6(i); es_probe_f7(i);
        }
    }
    printf("%ld\n", sink > 0 ? h : -h);
    return 0;
}
