/* Writes the seed corpus of fuzz_profile_read: small valid profiles (plain,
 * fused, stream-written) and truncated copies.  Run once by hand:
 *   build/bin/fuzz_make_seeds tests/fuzz/corpus/profile */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../profile/gen.h"
#include "ompfuse/file.h"

static void put(const char *dir, const char *name, const unsigned char *b, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, n, f) != n) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

static void seeds_of(const char *dir, const char *tag, const char *path)
{
    size_t n;
    unsigned char *b = gen_slurp(path, &n);
    char name[256];
    snprintf(name, sizeof name, "%s.ompf", tag);
    put(dir, name, b, n);
    size_t cuts[] = {n / 3, n / 2, n - 1, 40};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        if (cuts[i] >= n)
            continue;
        snprintf(name, sizeof name, "%s-cut%zu.ompf", tag, cuts[i]);
        put(dir, name, b, cuts[i]);
    }
    free(b);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_make_seeds DIR\n");
        return 2;
    }
    char *tmp = gen_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s/p.ompf", tmp);
    ompf_error_t err;
    struct {
        const char *tag;
        gen_opts_t o;
    } shapes[] = {
        {"empty", {.n_xu = 0, .seed = 1}},
        {"one", {.n_xu = 1, .n_threads = 1, .n_events = 2, .seed = 2}},
        {"small", {.n_xu = 12, .n_threads = 3, .n_events = 3, .n_constructs = 3,
                   .missing_rate = 0.2, .special_values = 1, .seed = 3}},
        {"fused", {.n_xu = 8, .n_threads = 2, .n_events = 2, .n_constructs = 2,
                   .n_sources = 2, .seed = 4}},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        ompf_profile_t *p = gen_profile(&shapes[i].o);
        if (ompf_profile_write(p, path, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        seeds_of(argv[1], shapes[i].tag, path);
        ompf_profile_destroy(p);
    }
    /* Exact counts no double holds (an EXACT chunk). */
    {
        gen_opts_t o = {.n_xu = 3, .n_threads = 1, .n_events = 2, .seed = 5};
        ompf_profile_t *p = gen_profile(&o);
        if (ompf_xu_value_set_u64(p, 0, 0, 9007199254740993ull) ||
            ompf_xu_value_set_u64(p, 2, 1, UINT64_MAX) ||
            ompf_profile_write(p, path, &err)) {
            fprintf(stderr, "exact seed: %s\n", err.msg);
            return 1;
        }
        seeds_of(argv[1], "exact", path);
        ompf_profile_destroy(p);
    }
    /* Stream-written: two streams, labels across streams. */
    ompf_profile_t *h;
    ompf_profile_create(&h);
    ompf_event_t e = {.name = "perf::TASK-CLOCK", .source = -1};
    ompf_event_add(h, &e, NULL);
    ompf_writer_t *w;
    if (ompf_writer_create(path, h, &w, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    ompf_wstream_t *s[2];
    ompf_wstream_create(w, 256, &s[0]);
    ompf_wstream_create(w, 256, &s[1]);
    ompf_construct_t c = {.module = "/bin/a", .build_id = "01", .offset = 9,
                          .kind = OMPF_CK_TASK};
    ompf_wstream_construct(s[0], 3, &c);
    ompf_wstream_construct(s[1], 3, &c);
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 2; k++) {
            uint64_t id = 2 * (uint64_t)i + (uint64_t)k + 1;
            ompf_wstream_label(s[k], id, k ? id - 1 : 0, (uint64_t)i);
            /* XU 1 ran in two parts, one on each stream's thread */
            ompf_xu_t x = {.id = id, .thread = (uint32_t)k, .parts = id == 1 ? 2 : 1,
                           .kind = OMPF_XU_TASK, .start_ns = 100 * id, .end_ns = 100 * id + 90};
            double v = i * 10.5;
            ompf_wstream_xu(s[k], &x, 3, id, &v);
            if (id == 1) {
                ompf_part_t a = {1, 100, 130}, b = {0, 160, 190};
                ompf_wstream_part(s[1], id, &a);
                ompf_wstream_part(s[0], id, &b);
            }
        }
    if (ompf_writer_finish(w, h, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    seeds_of(argv[1], "stream", path);
    ompf_profile_destroy(h);
    gen_rmdir(tmp);
    return 0;
}
