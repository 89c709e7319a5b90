/* The strategies' radix sort (fusion/sort.c) in ns per key, min of 7 runs,
 * at 10^5, 10^6 and 10^7 keys of 60 varying bits (BC's Morton keys) and
 * doubles below 10^6 (values: two 16-bit passes), with the 32-bit payload
 * the strategies sort along.  Checks every result is in order.  Figures: docs/benchmarks.md
 * (issue 20, session 10).
 *
 * usage: bench_sort [MAX_KEYS]    (default 10000000) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fz.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int main(int argc, char **argv)
{
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    uint64_t *k0 = malloc(max * sizeof *k0), *k = malloc(max * sizeof *k);
    uint32_t *ix = malloc(max * sizeof *ix);
    if (!max || !k0 || !k || !ix) {
        fprintf(stderr, "bench_sort: no memory for %zu keys\n", max);
        return 1;
    }
    printf("| keys | kind | varying bits | ns per key (min of 7) |\n|---|---|---|---|\n");
    for (int shape = 0; shape < 2; shape++)
        for (size_t n = 100000; n <= max; n *= 10) {
            uint64_t s = 88172645463325252ull;
            for (size_t i = 0; i < n; i++) {
                uint64_t r = next(&s);
                double d = (double)(r % 1000000);
                if (shape)
                    memcpy(&k0[i], &d, sizeof d);
                else
                    k0[i] = r >> 4;
            }
            uint64_t any = 0, all = ~0ull;
            for (size_t i = 0; i < n; i++) {
                any |= k0[i];
                all &= k0[i];
            }
            double best = 1e30;
            for (int rep = 0; rep < 7; rep++) {
                memcpy(k, k0, n * sizeof *k);
                for (size_t i = 0; i < n; i++)
                    ix[i] = (uint32_t)i;
                double t = now();
                if (fz_radix_sort(k, ix, n)) {
                    fprintf(stderr, "bench_sort: out of memory\n");
                    return 1;
                }
                t = now() - t;
                for (size_t i = 1; i < n; i++)
                    if (k[i] < k[i - 1] || (k[i] == k[i - 1] && ix[i] < ix[i - 1])) {
                        fprintf(stderr, "bench_sort: not sorted at %zu\n", i);
                        return 1;
                    }
                best = t < best ? t : best;
            }
            printf("| %zu | %s | %d | %.1f |\n", n, shape ? "doubles < 10^6" : "Morton-like",
                   __builtin_popcountll(any ^ all), best / (double)n * 1e9);
        }
    free(k0);
    free(k);
    free(ix);
    return 0;
}
