/*
 * Scaling of `ompfuse clean` (ompf_hem_clean): synthetic hem-delta-like
 * profiles of N XUs (default 1e5 and 1e6), 8 types, 6 events, each XU
 * missing the events outside a random 2-event window (what short XUs get
 * with 6 events on 2 slots), 10 % of XUs complete, 0.5 % outliers.
 * Prints build and clean times (wall and CPU: the CPU time is what to
 * compare on a shared machine) and XUs per CPU second.
 *
 *   build/bin/hem_clean_scale [N...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ompfuse/hem.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static double clk(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static double now(void)
{
    return clk(CLOCK_MONOTONIC);
}

enum { NE = 6, NT = 8 };

static ompf_profile_t *make(size_t n)
{
    ompf_profile_t *p;
    if (ompf_profile_create(&p))
        return NULL;
    static const char *names[NE] = {"perf::TASK-CLOCK", "perf::CPU-CLOCK",
                                    "perf::PAGE-FAULTS", "perf::MINOR-FAULTS",
                                    "perf::CONTEXT-SWITCHES",
                                    "perf::CPU-MIGRATIONS"};
    for (int e = 0; e < NE; e++) {
        ompf_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.name = names[e];
        ev.source = -1;
        ompf_event_add(p, &ev, NULL);
    }
    for (int t = 0; t < NT; t++) {
        ompf_construct_t c;
        memset(&c, 0, sizeof c);
        char nm[32];
        snprintf(nm, sizeof nm, "bench.c:%d", 100 + t);
        c.name = nm;
        c.module = "";
        c.build_id = "";
        c.offset = (uint64_t)t + 1;
        ompf_construct_add(p, &c, NULL);
    }
    uint32_t th;
    ompf_thread_add(p, 1, &th);
    ompf_xu_reserve(p, n);
    for (size_t i = 0; i < n; i++) {
        ompf_xu_t x;
        memset(&x, 0, sizeof x);
        x.id = i + 1;
        x.type = (uint32_t)(urand() * NT);
        x.parts = 1;
        x.cpu = x.core = x.numa = -1;
        double t = 1e4 * (x.type + 1) * (0.5 + urand());
        double pf = t / 100 * urand();
        double v[NE] = {t, t * 1.001, pf, pf, urand() < 0.1, 0};
        if (urand() >= 0.1) {
            unsigned w = (unsigned)(urand() * NE);
            for (unsigned e = 0; e < NE; e++)
                if (e != w && e != (w + 1) % NE)
                    v[e] = OMPF_MISSING;
        }
        if (urand() < 0.005 && !ompf_is_missing(v[0]))
            v[0] *= 100;
        ompf_xu_add(p, &x, v);
    }
    return p;
}

int main(int argc, char **argv)
{
    size_t sizes[8] = {100000, 1000000};
    int ns = 2;
    if (argc > 1) {
        ns = 0;
        for (int i = 1; i < argc && ns < 8; i++)
            sizes[ns++] = strtoull(argv[i], NULL, 10);
    }
    printf("%10s %10s %10s %10s %12s %10s\n", "XUs", "build s", "clean s",
           "clean cpu", "XUs/cpu-s", "replaced");
    for (int s = 0; s < ns; s++) {
        double t0 = now();
        ompf_profile_t *p = make(sizes[s]);
        if (!p)
            return 1;
        double t1 = now(), c1 = clk(CLOCK_PROCESS_CPUTIME_ID);
        ompf_clean_count_t cnt[NE];
        ompf_error_t err;
        if (ompf_hem_clean(p, NULL, cnt, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        double t2 = now(), c2 = clk(CLOCK_PROCESS_CPUTIME_ID);
        uint64_t filled = 0;
        for (int e = 0; e < NE; e++)
            filled += cnt[e].missing + cnt[e].outliers + cnt[e].negative;
        printf("%10zu %10.2f %10.2f %10.2f %12.0f %10llu\n", sizes[s], t1 - t0,
               t2 - t1, c2 - c1, (double)sizes[s] / (c2 - c1),
               (unsigned long long)filled);
        ompf_profile_destroy(p);
    }
    return 0;
}
