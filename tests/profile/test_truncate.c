/* A profile cut short (a crash, a full disk, an interrupted copy) is read
 * up to its last complete chunk: cut at every chunk boundary and inside
 * chunks, and at every byte of small files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fmt.h"
#include "gen.h"
#include "ompfuse/file.h"

typedef struct chunk_info {
    size_t off, end; /* [off, end) */
    uint32_t type, count;
} chunk_info_t;

static size_t walk(const unsigned char *b, size_t n, chunk_info_t *out, size_t max)
{
    size_t k = 0, off = FMT_HEADER_SIZE;
    while (off < n && k < max) {
        out[k].off = off;
        out[k].type = fmt_get_u32(b + off);
        out[k].count = fmt_get_u32(b + off + 24);
        off += FMT_CHUNK_HEADER_SIZE + fmt_get_u64(b + off + 8);
        out[k].end = off;
        k++;
    }
    return k;
}

/* XUs in XUS chunks that end at or before cut. */
static uint64_t xus_before(const chunk_info_t *c, size_t nc, size_t cut)
{
    uint64_t n = 0;
    for (size_t i = 0; i < nc; i++)
        if (c[i].type == FMT_CHUNK_XUS && c[i].end <= cut)
            n += c[i].count;
    return n;
}

/* Reads the first cut bytes; checks the outcome and returns XUs read. */
static uint64_t check_cut(const unsigned char *b, size_t n, size_t cut, const chunk_info_t *c,
                          size_t nc, const ompf_profile_t *orig, int exact_prefix)
{
    ompf_profile_t *p = NULL;
    ompf_read_info_t info;
    ompf_error_t err = {0};
    int rc = ompf_profile_read_mem(b, cut, "cut.ompf", &p, &info, &err);
    if (cut < FMT_HEADER_SIZE) {
        assert_int_equal(rc, OMPF_EFORMAT);
        assert_null(p);
        assert_true(strstr(err.msg, cut ? "truncated header" : "empty") != NULL);
        return 0;
    }
    if (cut == n) {
        assert_int_equal(rc, 0);
        assert_int_equal(info.truncated, 0);
    } else {
        if (rc != OMPF_ETRUNC)
            fprintf(stderr, "cut %zu of %zu: %s\n", cut, n, err.msg);
        assert_int_equal(rc, OMPF_ETRUNC);
        assert_int_equal(info.truncated, 1);
        char want[64];
        snprintf(want, sizeof want, "truncated after %llu XUs",
                 (unsigned long long)info.xus_read);
        assert_non_null(strstr(info.note, want));
        assert_non_null(strstr(err.msg, want));
        assert_non_null(strstr(err.msg, "cut.ompf"));
    }
    assert_non_null(p);
    assert_int_equal(ompf_xu_count(p), info.xus_read);
    /* Everything in complete chunks is either read or accounted as
     * dropped for a reference lost in the tail. */
    assert_int_equal(info.xus_read + info.xus_dropped, xus_before(c, nc, cut));
    if (exact_prefix) {
        assert_int_equal(info.xus_dropped, 0);
        size_t nev = ompf_event_count(p);
        for (size_t i = 0; i < ompf_xu_count(p); i += 97) {
            assert_int_equal(ompf_xu_get(p, i)->id, ompf_xu_get(orig, i)->id);
            assert_int_equal(ompf_label_compare(p, ompf_xu_get(p, i)->label, orig,
                                                ompf_xu_get(orig, i)->label), 0);
            if (nev)
                assert_memory_equal(ompf_xu_values_const(p, i),
                                    ompf_xu_values_const(orig, i), nev * sizeof(double));
        }
    }
    ompf_profile_destroy(p);
    return info.xus_read;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Cuts at every boundary and at several places inside every chunk. */
static void cut_everywhere_chunky(const unsigned char *b, size_t n, const ompf_profile_t *orig,
                                  int exact_prefix, size_t *boundaries_out)
{
    chunk_info_t c[4096];
    size_t nc = walk(b, n, c, 4096);
    assert_true(nc < 4096);
    size_t *cuts = malloc((nc * 8 + 8) * sizeof *cuts);
    size_t k = 0;
    cuts[k++] = 0;
    cuts[k++] = 7;
    cuts[k++] = FMT_HEADER_SIZE;
    for (size_t i = 0; i < nc; i++) {
        size_t len = c[i].end - c[i].off;
        size_t in[] = {1, 16, FMT_CHUNK_HEADER_SIZE - 1, FMT_CHUNK_HEADER_SIZE,
                       FMT_CHUNK_HEADER_SIZE + len / 2, len - 1, len};
        for (size_t j = 0; j < sizeof in / sizeof in[0]; j++)
            if (in[j] <= len)
                cuts[k++] = c[i].off + in[j];
    }
    qsort(cuts, k, sizeof *cuts, cmp_size);
    uint64_t prev = 0;
    for (size_t i = 0; i < k; i++) {
        uint64_t got = check_cut(b, n, cuts[i], c, nc, orig, exact_prefix);
        assert_true(got >= prev); /* monotone in the cut */
        prev = got;
    }
    assert_int_equal(prev, ompf_xu_count(orig));
    *boundaries_out = nc;
    free(cuts);
}

static void test_profile_write_cuts(void **state)
{
    (void)state;
    /* 150000 XUs: three XUS chunks; labels and threads in their own. */
    gen_opts_t o = {.n_xu = 150000, .n_threads = 4, .n_events = 2, .n_constructs = 3,
                    .missing_rate = 0.1, .seed = 21};
    ompf_profile_t *p = gen_profile(&o);
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/t.ompf", dir);
    ompf_error_t err;
    assert_int_equal(ompf_profile_write(p, path, &err), 0);
    size_t n, nc;
    unsigned char *b = gen_slurp(path, &n);
    cut_everywhere_chunky(b, n, p, 1, &nc);
    assert_true(nc >= 7);
    free(b);
    ompf_profile_destroy(p);
    gen_rmdir(dir);
}

/* Two streams; the second one's labels hang below the first one's, so a
 * cut can lose a parent: those XUs are dropped and counted. */
static unsigned char *stream_file(size_t n_per_stream, size_t cap, size_t *len,
                                  ompf_profile_t **header)
{
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/s.ompf", dir);
    ompf_profile_t *h;
    assert_int_equal(ompf_profile_create(&h), 0);
    ompf_event_t e = {.name = "perf::TASK-CLOCK", .source = -1};
    assert_int_equal(ompf_event_add(h, &e, NULL), 0);
    ompf_error_t err;
    ompf_writer_t *w;
    assert_int_equal(ompf_writer_create(path, h, &w, &err), 0);
    ompf_wstream_t *s[2];
    assert_int_equal(ompf_wstream_create(w, cap, &s[0]), 0);
    assert_int_equal(ompf_wstream_create(w, cap, &s[1]), 0);
    ompf_construct_t c = {.module = "/bin/a", .build_id = "", .offset = 5,
                          .kind = OMPF_CK_TASK};
    for (int k = 0; k < 2; k++)
        assert_int_equal(ompf_wstream_construct(s[k], 1, &c), 0);
    for (size_t i = 0; i < n_per_stream; i++) {
        for (int k = 0; k < 2; k++) {
            uint64_t id = 2 * i + (uint64_t)k + 1;
            assert_int_equal(ompf_wstream_label(s[k], id, k ? id - 1 : 0, i), 0);
            ompf_xu_t x = {.id = id, .thread = (uint32_t)k, .parts = 1, .cpu = -1,
                           .kind = OMPF_XU_TASK, .start_ns = i};
            double v = (double)i;
            assert_int_equal(ompf_wstream_xu(s[k], &x, 1, id, &v), 0);
        }
        /* Stream 1 flushes more often: its children often precede their
         * parents in the file. */
        if (i % 7 == 0)
            assert_int_equal(ompf_wstream_flush(s[1]), 0);
    }
    for (int k = 0; k < 2; k++) {
        double tot = 1, gap = 0, en = 1, run = 1;
        ompf_thread_t t = {.index = (uint32_t)k, .os_tid = 7, .total = &tot, .gap = &gap,
                           .enabled_ns = &en, .running_ns = &run};
        assert_int_equal(ompf_wstream_thread(s[k], &t), 0);
    }
    assert_int_equal(ompf_writer_finish(w, NULL, &err), 0);
    unsigned char *b = gen_slurp(path, len);
    gen_rmdir(dir);
    *header = h;
    return b;
}

static void test_stream_cuts(void **state)
{
    (void)state;
    ompf_profile_t *h;
    size_t n, nc;
    unsigned char *b = stream_file(500, 4096, &n, &h);
    ompf_profile_t *full;
    ompf_error_t err;
    assert_int_equal(ompf_profile_read_mem(b, n, "full", &full, NULL, &err), 0);
    assert_int_equal(ompf_xu_count(full), 1000);
    cut_everywhere_chunky(b, n, full, 0, &nc);
    assert_true(nc > 30);
    ompf_profile_destroy(full);
    ompf_profile_destroy(h);
    free(b);
}

/* Small files: every single byte position. */
static void test_every_byte(void **state)
{
    (void)state;
    gen_opts_t o = {.n_xu = 20, .n_threads = 2, .n_events = 2, .n_constructs = 2,
                    .n_sources = 2, .seed = 22};
    ompf_profile_t *p = gen_profile(&o);
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/b.ompf", dir);
    ompf_error_t err;
    assert_int_equal(ompf_profile_write(p, path, &err), 0);
    size_t n;
    unsigned char *b = gen_slurp(path, &n);
    chunk_info_t c[64];
    size_t nc = walk(b, n, c, 64);
    uint64_t prev = 0;
    for (size_t cut = 0; cut <= n; cut++) {
        uint64_t got = check_cut(b, n, cut, c, nc, p, 1);
        assert_true(got >= prev);
        prev = got;
    }
    assert_int_equal(prev, 20);
    free(b);
    ompf_profile_destroy(p);
    gen_rmdir(dir);

    ompf_profile_t *h, *full;
    b = stream_file(40, 512, &n, &h);
    nc = walk(b, n, c, 64);
    assert_true(nc < 64);
    assert_int_equal(ompf_profile_read_mem(b, n, "full", &full, NULL, &err), 0);
    prev = 0;
    for (size_t cut = 0; cut <= n; cut++) {
        uint64_t got = check_cut(b, n, cut, c, nc, full, 0);
        assert_true(got >= prev);
        prev = got;
    }
    assert_int_equal(prev, 80);
    ompf_profile_destroy(full);
    ompf_profile_destroy(h);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_write_cuts),
        cmocka_unit_test(test_stream_cuts),
        cmocka_unit_test(test_every_byte),
    };
    if (getenv("OMPF_TEST_FILTER"))
        cmocka_set_test_filter(getenv("OMPF_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
