/*
 * bench_analyze_gen N THREADS PATH: a run-like profile of N XUs with 8
 * events (software and hardware names, so that the built-in metrics
 * apply), 24 constructs, a task tree (one label node per XU, depth <= 4),
 * back-to-back XUs with gaps per thread and thread totals and gaps.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ompfuse/file.h"
#include "ompfuse/profile.h"

static uint64_t s = 88172645463325252ull;
static double urand(void)
{
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return (double)(s >> 11) / 9007199254740992.0;
}

#define CHECK(x)                                                                   \
    do {                                                                           \
        if ((x) != 0) {                                                            \
            fprintf(stderr, "bench_analyze_gen: %s failed\n", #x);                 \
            return 1;                                                              \
        }                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_analyze_gen N THREADS PATH\n");
        return 2;
    }
    size_t n = strtoull(argv[1], NULL, 10);
    uint32_t nth = (uint32_t)strtoul(argv[2], NULL, 10);
    static const char *const names[8] = {
        "perf::TASK-CLOCK", "perf::CPU-CLOCK", "perf::PAGE-FAULTS", "perf::MINOR-FAULTS",
        "perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS", "perf::INSTRUCTIONS",
        "perf::CYCLES"};
    ompf_profile_t *p;
    CHECK(ompf_profile_create(&p));
    CHECK(ompf_meta_set(p, "mode", OMPF_MODE_RUN));
    CHECK(ompf_meta_set(p, "program", "/bench/big"));
    for (int e = 0; e < 8; e++) {
        ompf_event_t ev = {.name = names[e], .source = -1};
        CHECK(ompf_event_add(p, &ev, NULL));
    }
    for (int c = 0; c < 24; c++) {
        char file[32];
        snprintf(file, sizeof file, "kernel%d.c", c / 4);
        ompf_construct_t k = {.module = "", .build_id = "", .offset = 64u * (unsigned)c,
                              .kind = OMPF_CK_TASK, .file = file, .line = 10 + c};
        CHECK(ompf_construct_add(p, &k, NULL));
    }
    double *sum = calloc((size_t)nth * 8, sizeof *sum);
    uint64_t *t = calloc(nth, sizeof *t);
    uint32_t *last = calloc(nth, sizeof *last);
    CHECK(!sum || !t || !last);
    CHECK(ompf_xu_reserve(p, n));
    for (uint32_t th = 0; th < nth; th++)
        CHECK(ompf_thread_add(p, (int32_t)(1000 + th), NULL));
    for (size_t i = 0; i < n; i++) {
        uint32_t th = (uint32_t)(i % nth), label;
        /* children of the thread's previous task, back to the root at depth 4 */
        uint32_t parent = ompf_label_depth(p, last[th]) >= 4 ? OMPF_LABEL_ROOT : last[th];
        CHECK(ompf_label_child(p, parent, i + 1, &label));
        last[th] = label;
        uint32_t type = (uint32_t)(urand() * 24);
        double d = 1000 * pow(10, 2 * urand()) * (1 + type % 3);
        t[th] += (uint64_t)(urand() * 500);
        ompf_xu_t x = {.id = i + 1, .type = type, .label = label, .thread = th,
                       .team_thread = th, .team_size = nth, .parts = 1,
                       .cpu = (int32_t)th, .core = (int32_t)th, .numa = (int32_t)(th % 2),
                       .kind = OMPF_XU_TASK, .start_ns = t[th], .end_ns = t[th] + (uint64_t)d};
        t[th] = x.end_ns;
        double ipc = 0.5 + 2 * urand() / (1 + type % 4);
        double v[8] = {d * (0.8 + 0.2 * urand()), d * (0.8 + 0.2 * urand()),
                       floor(urand() * 3), 0, floor(urand() * 1.2), 0, 0,
                       floor(d * 2.5)};
        v[3] = v[2];
        v[6] = floor(v[7] * ipc);
        for (int e = 0; e < 8; e++)
            sum[th * 8 + e] += v[e];
        CHECK(ompf_xu_add(p, &x, v));
    }
    for (uint32_t th = 0; th < nth; th++) {
        ompf_thread_t *tt = ompf_thread_get(p, th);
        for (int e = 0; e < 8; e++) {
            tt->gap[e] = floor(sum[th * 8 + e] * 0.05);
            tt->total[e] = sum[th * 8 + e] + tt->gap[e];
        }
    }
    ompf_error_t err;
    if (ompf_profile_write(p, argv[3], &err)) {
        fprintf(stderr, "bench_analyze_gen: %s\n", err.msg);
        return 1;
    }
    ompf_profile_destroy(p);
    free(sum);
    free(t);
    free(last);
    return 0;
}
