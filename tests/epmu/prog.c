/* Test program of the emulated PMU (tests/epmu): one parallel loop,
 * schedule(dynamic, 1), N iterations (one XU each).  Iteration i computes
 * WORK*(1 + i%3) steps and, when libepmu.so is preloaded, signals i+1
 * units to it in the middle of its work, so each XU's true count of every
 * emulated event is known: weight * (i+1) plus its CPU-time part.  Prints
 * the same line with and without the emulator and the tool. */
#include <stdio.h>
#include <stdlib.h>

#include "epmu.h"

static double work(long n, double x)
{
    for (long k = 0; k < n; k++)
        x = x * 0.9999999 + 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 16;
    long w = argc > 2 ? atol(argv[2]) : 200000;
    double sum = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : sum)
    for (long i = 0; i < n; i++) {
        long steps = w * (1 + i % 3);
        double x = work(steps / 2, 1.0);
        if (epmu_signal)
            epmu_signal((unsigned long)(i + 1));
        sum += work(steps - steps / 2, x);
    }
    printf("%ld iterations, sum %.6f\n", n, sum);
    return 0;
}
