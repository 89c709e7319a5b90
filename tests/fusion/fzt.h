/* Helpers for the fusion tests: hand-built profiles in memory. */
#ifndef OMPF_TESTS_FZT_H
#define OMPF_TESTS_FZT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/fusion.h"
#include "ompfuse/profile.h"

/* splitmix64: the tests' deterministic random numbers. */
static inline uint64_t fzt_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#define FZT_CHECK(x)                                                       \
    do {                                                                   \
        int fzt_rc_ = (x);                                                 \
        if (fzt_rc_) {                                                     \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__,  \
                    #x, fzt_rc_);                                          \
            abort();                                                       \
        }                                                                  \
    } while (0)

/* A run of program "prog" (argv "prog\x1f-n\x1f10", team_size 4) counting
 * the comma-separated events. */
static inline ompf_profile_t *fzt_profile(uint64_t run_id, const char *events)
{
    ompf_profile_t *p;
    FZT_CHECK(ompf_profile_create(&p));
    FZT_CHECK(ompf_meta_set(p, "program", "prog"));
    FZT_CHECK(ompf_meta_set(p, "argv", "prog\x1f-n\x1f" "10"));
    FZT_CHECK(ompf_meta_set(p, "team_size", "4"));
    FZT_CHECK(ompf_meta_set(p, "cpu_model", "Test CPU"));
    FZT_CHECK(ompf_meta_set(p, "mode", OMPF_MODE_RUN));
    FZT_CHECK(ompf_profile_set_run_id(p, run_id));
    char buf[512];
    snprintf(buf, sizeof buf, "%s", events);
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
        ompf_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.name = s;
        ev.source = -1;
        ev.status = OMPF_EV_COUNTED;
        FZT_CHECK(ompf_event_add(p, &ev, NULL));
    }
    return p;
}

/* Construct "file.c:<line>" (identified by name across runs). */
static inline uint32_t fzt_type(ompf_profile_t *p, int line)
{
    ompf_construct_t c;
    memset(&c, 0, sizeof c);
    char name[64];
    snprintf(name, sizeof name, "file.c:%d", line);
    c.module = "";
    c.build_id = "";
    c.kind = OMPF_CK_TASK;
    c.name = name;
    ompf_construct_t key = c;
    int f = ompf_construct_find(p, &key);
    if (f >= 0)
        return (uint32_t)f;
    uint32_t idx;
    FZT_CHECK(ompf_construct_add(p, &c, &idx));
    return idx;
}

/* XU with id, construct line, dotted label, start time and values (one per
 * event of p). */
static inline void fzt_xu(ompf_profile_t *p, uint64_t id, int line,
                          const char *label, uint64_t start,
                          const double *vals)
{
    ompf_xu_t x;
    memset(&x, 0, sizeof x);
    x.id = id;
    x.type = fzt_type(p, line);
    FZT_CHECK(ompf_label_parse(p, label, &x.label));
    x.parts = 1;
    x.cpu = x.core = x.numa = -1;
    x.kind = OMPF_XU_TASK;
    x.start_ns = start;
    x.end_ns = start + 100;
    FZT_CHECK(ompf_xu_add(p, &x, vals));
}

/* Index of the fused XU whose provenance for source s is id (or -1). */
static inline long fzt_find_prov(const ompf_profile_t *f, size_t s, uint64_t id)
{
    for (size_t i = 0; i < ompf_xu_count(f); i++)
        if (ompf_xu_provenance_const(f, i)[s] == id)
            return (long)i;
    return -1;
}

static inline double fzt_val(const ompf_profile_t *f, size_t xu,
                             const char *event)
{
    int e = ompf_event_find(f, event);
    if (e < 0)
        return -1e300;
    return ompf_xu_values_const(f, xu)[e];
}

static inline int fzt_fuse(ompf_profile_t **in, size_t n, int strategy,
                           uint64_t seed, ompf_profile_t **out,
                           ompf_fuse_report_t **rep, ompf_error_t *err)
{
    ompf_fuse_opts_t o;
    ompf_fuse_opts_init(&o);
    o.strategy = strategy;
    o.seed = seed;
    return ompf_fuse((const ompf_profile_t *const *)in, NULL, n, &o, out, rep,
                     err);
}

#endif
