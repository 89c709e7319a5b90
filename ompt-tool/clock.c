/* Timestamps from the TSC where the kernel itself trusts it (clocksource
 * "tsc", constant_tsc): rdtsc costs a third of clock_gettime on this kind
 * of VM.  The rate is calibrated once against CLOCK_MONOTONIC_RAW, the
 * unslewed clock whose rate is the kernel's own TSC rate (the rate of
 * perf's TASK-CLOCK / CPU-CLOCK: an XU's duration and its clock counts
 * must agree, see docs/tool.md).  Each end of the calibration is a clock
 * reading bracketed by two rdtsc (the narrowest of several tries), and
 * the calibration runs until the brackets bound the rate's relative error
 * by FT_CLOCK_REL_ERR: an interrupt at one end cannot skew it. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tool.h"

ft_clock_t ft_clk;

#define FT_CLOCK_REL_ERR 2e-5     /* documented bound (tolerance 1e-4) */
#define FT_CLOCK_MIN_NS 2000000   /* calibrate at least 2 ms ... */
#define FT_CLOCK_MAX_NS 50000000  /* ... and give up after 50 ms */

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

static uint64_t raw_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static uint64_t tsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

/* One (ns, cycles) pair: *c is the middle of the narrowest rdtsc bracket
 * around a clock reading; returns the bracket's width in cycles. */
static uint64_t pair(uint64_t *ns, uint64_t *c)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t a = tsc(), n = raw_ns(), b = tsc();
        if (b > a && b - a < best) {
            best = b - a;
            *ns = n;
            *c = a + (b - a) / 2;
        }
    }
    return best;
}
#endif

/* Makes c the clock (ft_now), unless its shift is beyond ft_tsc_ns's. */
static void publish(ft_clock_t *c)
{
    if (c->shift > 32)
        return;
    c->mult32 = (uint64_t)c->mult << (32 - c->shift);
    c->tsc = 1;
    ft_clk = *c;
}

/* c cycles in ns (perf's userpage arithmetic: no overflow). */
static uint64_t conv(const ft_clock_t *k, uint64_t c)
{
    uint64_t quot = c >> k->shift;
    uint64_t rem = c & (((uint64_t)1 << k->shift) - 1);
    return quot * k->mult + ((rem * k->mult) >> k->shift);
}

void ft_clock_init(void)
{
#if defined(__x86_64__)
    /* the kernel can leave the TSC at run time: always asked (one read,
     * no stdio buffer: this is every run's start-up) */
    char src[64];
    ft_read_small("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  src, sizeof src);
    if (!strstr(src, "tsc")) /* tsc, tsc-early, hyperv_clocksource_tsc_page */
        return;
    ft_clock_t c;
    /* the rate is per boot (start-up cache); only the offset is new */
    int cached = ft_cache_clock(&c.mult, &c.shift);
    if (cached < 0)
        return;
    uint64_t n0, c0, n1, c1;
    if (cached > 0 && pair(&n1, &c1) != UINT64_MAX) {
        c.zero = n1 - conv(&c, c1);
        publish(&c);
        return;
    }
    if (!file_has("/proc/cpuinfo", "constant_tsc")) {
        ft_cache_put_clock(0, 0, 0);
        return;
    }
    uint64_t w0 = pair(&n0, &c0), w1;
    if (w0 == UINT64_MAX)
        return;
    for (;;) {
        w1 = pair(&n1, &c1);
        if (c1 <= c0 || w1 == UINT64_MAX)
            return;
        /* each end is off by at most half its bracket */
        double err = (double)(w0 + w1) / 2.0 / (double)(c1 - c0);
        if (n1 - n0 >= FT_CLOCK_MIN_NS && err <= FT_CLOCK_REL_ERR)
            break;
        if (n1 - n0 > FT_CLOCK_MAX_NS)
            return; /* too disturbed: CLOCK_MONOTONIC_RAW it is */
    }
    /* ns = zero + (c * mult) >> shift, evaluated as in perf's userpage */
    double ns_per_cycle = (double)(n1 - n0) / (double)(c1 - c0);
    c.shift = 24;
    c.mult = (uint32_t)(ns_per_cycle * (double)(1u << 24) + 0.5);
    if (c.mult == 0 || ns_per_cycle > 100.0)
        return;
    c.zero = n1 - conv(&c, c1);
    publish(&c);
    ft_cache_put_clock(1, c.mult, c.shift);
#endif
}

uint64_t ft_now_slow(void)
{
    return raw_ns();
}
