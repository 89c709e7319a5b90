#include "gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(x)                                                                   \
    do {                                                                           \
        if ((x) != 0) {                                                            \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x);         \
            abort();                                                               \
        }                                                                          \
    } while (0)

static uint64_t rng(uint64_t *s)
{
    *s += 0x9E3779B97F4A7C15ULL;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double value(uint64_t *s, const gen_opts_t *o)
{
    if (o->missing_rate > 0 && (double)(rng(s) % 10000) < o->missing_rate * 10000)
        return OMPF_MISSING;
    if (o->special_values) {
        switch (rng(s) % 12) {
        case 0: return (double)(rng(s) % 1000000) / 7.0;
        case 1: return -0.0;
        case 2: return INFINITY;
        case 3: return -INFINITY;
        case 4: return 9007199254740993.0 * 1024; /* integer beyond 2^53 */
        case 5: return -(double)(rng(s) % 100000);
        case 6: return 1e-310; /* subnormal */
        case 7: return nan("7"); /* any NaN reads back as missing */
        default: break;
        }
    }
    return (double)(rng(s) % 5000000);
}

ompf_profile_t *gen_profile(const gen_opts_t *o)
{
    uint64_t s = o->seed * 7919ULL + 1;
    ompf_profile_t *p;
    CHECK(ompf_profile_create(&p));
    CHECK(ompf_meta_set(p, "program", "./gen"));
    CHECK(ompf_meta_set(p, "argv", "./gen\x1f-n\x1f" "42"));
    CHECK(ompf_meta_set(p, "mode", o->n_sources ? OMPF_MODE_FUSED : OMPF_MODE_RUN));
    char buf[64];
    snprintf(buf, sizeof buf, "%u", o->n_threads);
    CHECK(ompf_meta_set(p, "team_size", buf));
    CHECK(ompf_profile_set_run_id(p, 0x1234abcd5678ef00ULL ^ o->seed));
    for (uint32_t e = 0; e < o->n_events; e++) {
        char name[64], reason[64];
        snprintf(name, sizeof name, e == 0 ? "perf::TASK-CLOCK" : "EVENT_%u:u", e);
        snprintf(reason, sizeof reason, "reason %u", e);
        ompf_event_t ev = {
            .name = name, .pe_type = e % 5, .config = rng(&s), .config1 = e,
            .config2 = UINT64_MAX - e, .pe_flags = e & 7,
            .status = (int32_t)(e % OMPF_EV_STATUS_COUNT),
            .reason = e % 2 ? reason : NULL, .source = -1,
        };
        CHECK(ompf_event_add(p, &ev, NULL));
    }
    for (uint32_t k = 0; k < o->n_sources; k++) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/run-%u.ompf", k);
        ompf_source_t src = {.run_id = rng(&s), .path = path};
        CHECK(ompf_source_add(p, &src, NULL));
    }
    for (uint32_t e = 0; o->n_sources && e < o->n_events; e++)
        CHECK(ompf_event_set_source(p, e, (int32_t)(e % o->n_sources)));
    uint32_t ncon = o->n_constructs ? o->n_constructs : 1;
    for (uint32_t c = 0; c < ncon; c++) {
        char file[64], fn[64];
        snprintf(file, sizeof file, "src/kernel_%u.c", c);
        snprintf(fn, sizeof fn, "kernel_%u", c);
        ompf_construct_t k = {
            .module = c % 3 == 2 ? "" : "/usr/bin/app", .build_id = c % 2 ? "abcdef0123" : "",
            .offset = 0x401000 + 0x40 * c, .kind = (int32_t)(c % OMPF_CK_COUNT),
            .file = c % 3 == 1 ? NULL : file, .line = c % 3 == 1 ? 0 : (int32_t)(10 + c),
            .function = c % 3 == 1 ? NULL : fn,
        };
        CHECK(ompf_construct_add(p, &k, NULL));
    }
    uint32_t nth = o->n_threads ? o->n_threads : 1;
    for (uint32_t t = 0; t < o->n_threads; t++) {
        uint32_t idx;
        CHECK(ompf_thread_add(p, (int32_t)(1000 + t), &idx));
        ompf_thread_t *th = ompf_thread_get(p, idx);
        for (uint32_t e = 0; e < o->n_events; e++) {
            th->total[e] = value(&s, o);
            th->gap[e] = value(&s, o);
            th->enabled_ns[e] = (double)(rng(&s) % 100000000);
            th->running_ns[e] = t % 4 == 3 ? OMPF_MISSING : th->enabled_ns[e];
        }
    }
    CHECK(ompf_xu_reserve(p, o->n_xu));
    double *vals = calloc(o->n_events + 1, sizeof *vals);
    uint32_t prev_label = OMPF_LABEL_ROOT;
    uint64_t t0 = 1000;
    for (size_t i = 0; i < o->n_xu; i++) {
        /* Labels: a mix of deep chains, siblings and big components. */
        uint32_t parent = (rng(&s) % 4 == 0) ? OMPF_LABEL_ROOT : prev_label;
        if (ompf_label_depth(p, parent) > 12)
            parent = OMPF_LABEL_ROOT;
        uint64_t comp = rng(&s) % 3 == 0 ? 0x401000 + (rng(&s) % 64) : i % 97;
        uint32_t label;
        CHECK(ompf_label_child(p, parent, comp, &label));
        prev_label = label;
        t0 += rng(&s) % 2000;
        ompf_xu_t x = {
            .id = i + 1, .type = (uint32_t)(rng(&s) % ncon), .label = label,
            .thread = (uint32_t)(rng(&s) % nth), .team_thread = (uint32_t)(i % nth),
            .team_size = nth, .parts = 1 + (uint32_t)(rng(&s) % 3),
            .cpu = (int32_t)(rng(&s) % 8) - 1, .core = (int32_t)(rng(&s) % 4) - 1,
            .numa = (int32_t)(rng(&s) % 2) - 1, .kind = (uint8_t)(rng(&s) % OMPF_XU_KIND_COUNT),
            .start_ns = t0, .end_ns = t0 + rng(&s) % 100000,
            .iter_start = rng(&s) % 1000000, .iter_count = rng(&s) % 64,
        };
        for (uint32_t e = 0; e < o->n_events; e++)
            vals[e] = value(&s, o);
        CHECK(ompf_xu_add(p, &x, vals));
        if (o->n_sources) {
            uint64_t *pv = ompf_xu_provenance(p, i);
            for (uint32_t k = 0; k < o->n_sources; k++)
                pv[k] = rng(&s) % 5 == 0 ? OMPF_NONE64 : i * 3 + k;
        }
    }
    free(vals);
    return p;
}

unsigned char *gen_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        abort();
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
        abort();
    fclose(f);
    *len = (size_t)n;
    return b;
}

void gen_spit(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
        perror(path);
        abort();
    }
}

char *gen_tmpdir(void)
{
    char *d = strdup("/tmp/ompf-test-XXXXXX");
    if (!d || !mkdtemp(d))
        abort();
    return d;
}

void gen_rmdir(char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", dir);
    free(dir);
}
