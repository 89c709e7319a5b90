/*
 * Test helper for the clean oracle (clean_oracle.py):
 *   hem_profile_tool gen SEED N PATH [reference]
 *       writes a random HEM-like profile (with "reference": mode
 *       reference, every value present, no outliers, status counted):
 *       3 types, 4 events (SEED < 100: two of them integer-valued, so
 *       that neighbours tie; otherwise all continuous), values missing in rotating windows (as
 *       hem-delta leaves them), a few outliers and negative values
 *   hem_profile_tool dump PATH          prints "type,v0,v1,v2,v3" per XU
 *       (%.17g, "nan" for missing) after a header line of metadata
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/file.h"
#include "ompfuse/profile.h"

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static int gen(unsigned long seed, size_t n, const char *path, int ref)
{
    rng ^= seed * 0x9e3779b97f4a7c15ull;
    ompf_profile_t *p;
    if (ompf_profile_create(&p))
        return 1;
    ompf_meta_set(p, "mode", ref ? "reference" : "hem-delta");
    ompf_meta_set(p, "program", "/bench/synthetic");
    ompf_meta_set(p, "team_size", "2");
    const char *names[4] = {"perf::TASK-CLOCK", "perf::CPU-CLOCK",
                            "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES"};
    for (int e = 0; e < 4; e++) {
        ompf_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.name = names[e];
        ev.pe_type = 1;
        ev.config = (uint64_t)e;
        ev.status = ref ? OMPF_EV_COUNTED : OMPF_EV_ESTIMATED;
        ev.source = -1;
        ompf_event_add(p, &ev, NULL);
    }
    for (int t = 0; t < 3; t++) {
        ompf_construct_t c;
        memset(&c, 0, sizeof c);
        char name[32];
        snprintf(name, sizeof name, "kernel.c:%d", 10 * (t + 1));
        c.name = name;
        c.module = "";
        c.build_id = "";
        c.offset = (uint64_t)(t + 1) * 64;
        c.kind = OMPF_CK_TASK;
        ompf_construct_add(p, &c, NULL);
    }
    uint32_t th;
    ompf_thread_add(p, 100, &th);
    for (size_t i = 0; i < n; i++) {
        ompf_xu_t x;
        memset(&x, 0, sizeof x);
        x.id = i + 1;
        x.type = (uint32_t)(urand() * 3);
        x.label = OMPF_LABEL_ROOT;
        x.parts = 1;
        x.cpu = x.core = x.numa = -1;
        x.start_ns = i * 1000;
        x.end_ns = x.start_ns + 500;
        double scale = 1000.0 * (x.type + 1);
        double t = scale * (0.5 + urand());
        double v[4] = {t, t * (1.0 + 0.01 * urand()), t / 50 * urand(),
                       3 * urand()};
        if (seed < 100) { /* integer counts, as page faults are: ties */
            v[2] = floor(v[2]);
            v[3] = floor(v[3]);
        }
        unsigned w = (unsigned)(urand() * 4); /* window {w, w+1} present */
        double r = ref ? 0.0 : urand();
        for (unsigned e = 0; e < 4; e++) {
            int present = ref || e == w || e == (w + 1) % 4 || r < 0.1;
            if (!present)
                v[e] = ompf_missing();
        }
        if (urand() < 0.01 && !ompf_is_missing(v[0]) && !ref)
            v[0] *= 1000; /* outlier */
        if (urand() < 0.01 && !ompf_is_missing(v[2]) && !ref)
            v[2] = -v[2] - 1; /* negative */
        ompf_xu_add(p, &x, v);
    }
    ompf_error_t err;
    if (ompf_profile_write(p, path, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    ompf_profile_destroy(p);
    return 0;
}

static int dump(const char *path)
{
    ompf_profile_t *p;
    ompf_error_t err;
    if (ompf_profile_read(path, &p, NULL, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    const char *keys[] = {"mode", "cleaned", "clean_k", "clean_sigma"};
    for (int k = 0; k < 4; k++) {
        const char *v = ompf_meta_get(p, keys[k]);
        printf("%s%s=%s", k ? "," : "#", keys[k], v ? v : "");
    }
    printf("\n");
    size_t ne = ompf_event_count(p);
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        const double *v = ompf_xu_values_const(p, i);
        printf("%u", ompf_xu_get(p, i)->type);
        for (size_t e = 0; e < ne; e++) {
            if (ompf_is_missing(v[e]))
                printf(",nan");
            else
                printf(",%.17g", v[e]);
        }
        printf("\n");
    }
    ompf_profile_destroy(p);
    return 0;
}

int main(int argc, char **argv)
{
    if ((argc == 5 || argc == 6) && !strcmp(argv[1], "gen"))
        return gen(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10), argv[4],
                   argc == 6 && !strcmp(argv[5], "reference"));
    if (argc == 3 && !strcmp(argv[1], "dump"))
        return dump(argv[2]);
    fprintf(stderr, "usage: %s gen SEED N PATH [reference] | dump PATH\n", argv[0]);
    return 2;
}
