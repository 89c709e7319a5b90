/* Shared by the cg and mg benchmarks: the NPB pseudo-random generator,
 * a wall clock and the verification print.  Written from the NAS Parallel
 * Benchmarks specification (RNR-94-007, NPB 2 report). */
#ifndef OMPF_BENCH_NPB_COMMON_H
#define OMPF_BENCH_NPB_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* The NPB linear congruential generator x_{k+1} = a * x_k mod 2^46 with
 * a = 5^13.  NPB carries x and a as integral doubles and splits them into
 * 23-bit halves; since 2^46 divides 2^64, a wrapping 64-bit product masked
 * to 46 bits gives exactly the same integer sequence. */
#define NPB_SEED 314159265.0
#define NPB_AMULT 1220703125.0 /* 5^13 */
#define NPB_MASK46 ((UINT64_C(1) << 46) - 1)
#define NPB_R46 (1.0 / 70368744177664.0) /* 2^-46 */

/* Advances *x by one step with multiplier a; returns the new x * 2^-46,
 * a uniform number in (0, 1). */
static inline double npb_randlc(double *x, double a)
{
    uint64_t xi = (uint64_t)*x, ai = (uint64_t)a;
    xi = (ai * xi) & NPB_MASK46;
    *x = (double)xi;
    return NPB_R46 * (double)xi;
}

/* Fills y[0..n-1] with the next n numbers of the sequence. */
static inline void npb_vranlc(int n, double *x, double a, double *y)
{
    uint64_t xi = (uint64_t)*x, ai = (uint64_t)a;
    for (int i = 0; i < n; i++) {
        xi = (ai * xi) & NPB_MASK46;
        y[i] = NPB_R46 * (double)xi;
    }
    *x = (double)xi;
}

static inline double npb_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* NPB's verification rule with the relative epsilon of the issue (1e-8).
 * Prints the outcome and returns 1 when verified. */
static inline int npb_verify(const char *what, double value, double ref)
{
    double err = fabs(value - ref) / fabs(ref);
    int ok = err <= 1.0e-8;
    printf(" %s       = %20.13e\n", what, value);
    printf(" Reference    = %20.13e\n", ref);
    printf(" Rel. error   = %20.13e\n", err);
    printf(ok ? " VERIFICATION SUCCESSFUL\n" : " VERIFICATION UNSUCCESSFUL\n");
    return ok;
}

#endif
