/* Helpers shared by the tool-test programs: a deterministic unit of work
 * and the checksum line the tests compare with and without the tool. */
#ifndef OMPF_PROG_UTIL_H
#define OMPF_PROG_UTIL_H

#include <stdio.h>

/* A dependent floating-point chain: no memory traffic, same result on
 * every run; about 2-3 ns per iteration on the development VM, so
 * 400000 iterations ~ 1 ms. */
__attribute__((noinline, unused)) static double prog_work(long iters, double seed)
{
    double x = seed;
    for (long i = 0; i < iters; i++)
        x = x * 0.999999 + 0.5;
    return x;
}

__attribute__((unused)) static void prog_checksum(const char *name, const double *v, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) /* fixed order: the sum is reproducible */
        s += v[i] * (double)(i + 1);
    printf("%s checksum = %.10e\n", name, s);
}

#endif
