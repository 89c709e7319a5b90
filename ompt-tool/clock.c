/* Timestamps from the TSC where the kernel itself trusts it (clocksource
 * "tsc", constant_tsc): rdtsc costs a third of clock_gettime on this kind
 * of VM.  The rate is calibrated once against CLOCK_MONOTONIC over ~2 ms
 * (relative error ~1e-4: a linear scale that keeps every order and changes
 * durations by far less than their run-to-run noise). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tool.h"

ft_clock_t ft_clk;

static int file_has(const char *path, const char *word)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, word) != NULL;
    fclose(f);
    return found;
}

static uint64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ft_clock_init(void)
{
#if defined(__x86_64__)
    if (!file_has("/sys/devices/system/clocksource/clocksource0/"
                  "current_clocksource", "tsc") ||
        !file_has("/proc/cpuinfo", "constant_tsc"))
        return;
    uint32_t lo, hi;
    uint64_t n0 = mono();
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    uint64_t c0 = (uint64_t)hi << 32 | lo, n1, c1;
    do {
        n1 = mono();
        __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
        c1 = (uint64_t)hi << 32 | lo;
    } while (n1 - n0 < 2000000);
    if (c1 <= c0)
        return;
    /* ns = zero + (c * mult) >> shift, evaluated as in perf's userpage */
    double ns_per_cycle = (double)(n1 - n0) / (double)(c1 - c0);
    ft_clock_t c;
    c.shift = 24;
    c.mult = (uint32_t)(ns_per_cycle * (double)(1u << 24) + 0.5);
    if (c.mult == 0 || ns_per_cycle > 100.0)
        return;
    uint64_t quot = c1 >> c.shift;
    uint64_t rem = c1 & (((uint64_t)1 << c.shift) - 1);
    uint64_t conv = quot * c.mult + ((rem * c.mult) >> c.shift);
    c.zero = n1 - conv;
    c.tsc = 1;
    ft_clk = c;
#endif
}

uint64_t ft_now_slow(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
