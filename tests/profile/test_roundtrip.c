/* write -> read -> compare for profiles of every shape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <dlfcn.h>
#include <limits.h>

#include "gen.h"
#include "ompfuse/file.h"

static void roundtrip(const gen_opts_t *o)
{
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/p.ompf", dir);
    ompf_profile_t *p = gen_profile(o);
    ompf_error_t err = {0};
    assert_int_equal(ompf_profile_write(p, path, &err), 0);

    /* No temporary file is left behind. */
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    assert_int_not_equal(access(tmp, F_OK), 0);

    ompf_profile_t *q = NULL;
    ompf_read_info_t info;
    int rc = ompf_profile_read(path, &q, &info, &err);
    if (rc)
        fprintf(stderr, "read: %s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(info.truncated, 0);
    assert_int_equal(info.xus_read, o->n_xu);
    assert_int_equal(info.xus_dropped, 0);
    rc = ompf_profile_compare(p, q, &err);
    if (rc)
        fprintf(stderr, "compare: %s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(ompf_label_count(q) > 0, 1);

    /* Writing what was read gives the same bytes: the format is canonical
     * for a given profile. */
    char path2[512];
    snprintf(path2, sizeof path2, "%s/q.ompf", dir);
    assert_int_equal(ompf_profile_write(q, path2, &err), 0);
    size_t n1, n2;
    unsigned char *b1 = gen_slurp(path, &n1), *b2 = gen_slurp(path2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    free(b1);
    free(b2);
    /* The reader drops the label hash (memory); a lookup rebuilds it and
     * finds every node read, and a new label is still added. */
    size_t nl = ompf_label_count(q);
    for (uint32_t i = 1; i < nl; i++) {
        uint32_t node = OMPF_NONE32;
        assert_int_equal(ompf_label_child(q, ompf_label_parent(q, i),
                                          ompf_label_component(q, i), &node), 0);
        assert_int_equal(node, i);
    }
    assert_int_equal(ompf_label_count(q), nl);
    uint32_t fresh;
    assert_int_equal(ompf_label_child(q, OMPF_LABEL_ROOT, UINT64_MAX - 3, &fresh), 0);
    assert_int_equal(fresh, nl);
    assert_int_equal(ompf_label_count(q), nl + 1);
    ompf_profile_destroy(p);
    ompf_profile_destroy(q);
    gen_rmdir(dir);
}

static void test_zero_xus(void **state)
{
    (void)state;
    gen_opts_t o = {.n_xu = 0, .n_threads = 0, .n_events = 0, .seed = 1};
    roundtrip(&o);
    gen_opts_t o2 = {.n_xu = 0, .n_threads = 4, .n_events = 3, .n_constructs = 2, .seed = 2};
    roundtrip(&o2);
}

static void test_one_xu(void **state)
{
    (void)state;
    gen_opts_t o = {.n_xu = 1, .n_threads = 1, .n_events = 2, .seed = 3};
    roundtrip(&o);
    gen_opts_t o2 = {.n_xu = 1, .n_threads = 0, .n_events = 0, .seed = 4};
    roundtrip(&o2);
}

static void test_million_xus(void **state)
{
    (void)state;
    gen_opts_t o = {.n_xu = 1000000, .n_threads = 8, .n_events = 2, .n_constructs = 7,
                    .missing_rate = 0.01, .seed = 5};
    roundtrip(&o);
}

static void test_many_threads(void **state)
{
    (void)state;
    gen_opts_t o = {.n_xu = 20000, .n_threads = 64, .n_events = 5, .n_constructs = 30,
                    .seed = 6};
    roundtrip(&o);
}

static void test_missing_and_special_values(void **state)
{
    (void)state;
    gen_opts_t o = {.n_xu = 5000, .n_threads = 4, .n_events = 6, .n_constructs = 3,
                    .missing_rate = 0.3, .special_values = 1, .seed = 7};
    roundtrip(&o);
    gen_opts_t all = {.n_xu = 300, .n_threads = 2, .n_events = 2, .missing_rate = 1.0,
                      .seed = 8};
    roundtrip(&all);
}

static void test_fused(void **state)
{
    (void)state;
    gen_opts_t o = {.n_xu = 70000, .n_threads = 4, .n_events = 4, .n_constructs = 5,
                    .n_sources = 3, .missing_rate = 0.05, .seed = 9};
    roundtrip(&o);
}

/* A construct whose strings carry every byte but NUL survives. */
static void test_odd_strings(void **state)
{
    (void)state;
    gen_opts_t o = {.n_xu = 3, .n_threads = 1, .n_events = 1, .seed = 10};
    ompf_profile_t *p = gen_profile(&o);
    char odd[256];
    for (int i = 1; i < 256; i++)
        odd[i - 1] = (char)i;
    odd[255] = 0;
    ompf_construct_t c = {.module = odd, .build_id = "", .kind = OMPF_CK_TASK, .name = odd};
    assert_int_equal(ompf_construct_add(p, &c, NULL), 0);
    assert_int_equal(ompf_meta_set(p, odd, odd), 0);
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/odd.ompf", dir);
    ompf_error_t err = {0};
    assert_int_equal(ompf_profile_write(p, path, &err), 0);
    ompf_profile_t *q;
    assert_int_equal(ompf_profile_read(path, &q, NULL, &err), 0);
    assert_int_equal(ompf_profile_compare(p, q, &err), 0);
    ompf_profile_destroy(p);
    ompf_profile_destroy(q);
    gen_rmdir(dir);
}

static void test_write_errors(void **state)
{
    (void)state;
    gen_opts_t o = {.n_xu = 3, .n_threads = 1, .n_events = 1, .seed = 11};
    ompf_profile_t *p = gen_profile(&o);
    ompf_error_t err = {0};
    assert_int_equal(ompf_profile_write(p, "/nonexistent-dir/x.ompf", &err), OMPF_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/x.ompf"));
    assert_non_null(strstr(err.msg, "cannot create"));
    ompf_profile_t *q = (ompf_profile_t *)1;
    assert_int_equal(ompf_profile_read("/nonexistent-dir/x.ompf", &q, NULL, &err), OMPF_EIO);
    assert_null(q);
    assert_non_null(strstr(err.msg, "cannot open"));
    assert_int_equal(ompf_profile_read("/tmp", &q, NULL, &err), OMPF_EIO);
    assert_non_null(strstr(err.msg, "not a regular file"));
    ompf_profile_destroy(p);
}

static void test_outfile(void **state)
{
    (void)state;
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    ompf_outfile_t *o;
    FILE *fp;
    ompf_error_t err = {0};
    assert_int_equal(ompf_outfile_open(path, &o, &fp, &err), 0);
    fputs("hello\n", fp);
    /* Not visible under its name before the commit. */
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(ompf_outfile_commit(o, &err), 0);
    size_t n;
    unsigned char *b = gen_slurp(path, &n);
    assert_int_equal(n, 6);
    assert_memory_equal(b, "hello\n", 6);
    free(b);
    /* Abort leaves the previous content and no temporary file. */
    assert_int_equal(ompf_outfile_open(path, &o, &fp, &err), 0);
    fputs("partial", fp);
    ompf_outfile_abort(o);
    b = gen_slurp(path, &n);
    assert_int_equal(n, 6);
    free(b);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    assert_int_not_equal(access(tmp, F_OK), 0);
    snprintf(path, sizeof path, "%s/no/such/dir", dir);
    assert_int_not_equal(ompf_outfile_open(path, &o, &fp, &err), 0);
    assert_non_null(strstr(err.msg, "cannot create"));
    gen_rmdir(dir);
}

/* A function whose address this test resolves (libdw). */
__attribute__((noinline)) int ompf_test_marker(int x);
__attribute__((noinline)) int ompf_test_marker(int x)
{
    return x * 3 + 1;
}

static void test_resolve(void **state)
{
    (void)state;
    Dl_info di;
    assert_int_not_equal(dladdr((void *)ompf_test_marker, &di), 0);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = 0;
    ompf_profile_t *p;
    assert_int_equal(ompf_profile_create(&p), 0);
    /* offset as the tool records it: a return address inside the function,
     * relative to the module's load base. */
    uint64_t off = (uint64_t)((uintptr_t)ompf_test_marker - (uintptr_t)di.dli_fbase) + 4;
    ompf_construct_t here = {.module = exe, .build_id = "", .offset = off,
                             .kind = OMPF_CK_TASK};
    ompf_construct_t gone = {.module = "/nonexistent/module.so", .build_id = "", .offset = 16,
                             .kind = OMPF_CK_TASK};
    ompf_construct_t done = {.module = exe, .build_id = "", .offset = off, .kind = OMPF_CK_TASK,
                             .file = "already.c", .line = 7};
    /* a function without a line (as an earlier resolver may have stored
     * it): tried again */
    ompf_construct_t half = {.module = exe, .build_id = "", .offset = off, .kind = OMPF_CK_LOOP,
                             .function = "stored_fn"};
    assert_int_equal(ompf_construct_add(p, &here, NULL), 0);
    assert_int_equal(ompf_construct_add(p, &gone, NULL), 0);
    assert_int_equal(ompf_construct_add(p, &done, NULL), 0);
    assert_int_equal(ompf_construct_add(p, &half, NULL), 0);
    ompf_error_t err;
    assert_int_equal(ompf_resolve_constructs(p, &err), 2);
    const ompf_construct_t *h = ompf_construct_get(p, 3);
    assert_non_null(h->file);
    assert_non_null(strstr(h->file, "test_roundtrip.c"));
    assert_string_equal(h->function, "ompf_test_marker");
    const ompf_construct_t *c = ompf_construct_get(p, 0);
    assert_non_null(c->file);
    assert_non_null(strstr(c->file, "test_roundtrip.c"));
    assert_true(c->line > 0);
    assert_non_null(c->function);
    assert_string_equal(c->function, "ompf_test_marker");
    assert_null(ompf_construct_get(p, 1)->file);
    assert_string_equal(ompf_construct_get(p, 2)->file, "already.c");
    assert_int_equal(ompf_test_marker(1), 4);
    ompf_profile_destroy(p);
}

/* ---- ompf_profile_write_feed with the labels from the feed -------------- */

static ompf_profile_t *feed_header(void)
{
    ompf_profile_t *h;
    assert_int_equal(ompf_profile_create(&h), 0);
    assert_int_equal(ompf_meta_set(h, "program", "feed"), 0);
    ompf_event_t e = {.name = "perf::TASK-CLOCK", .source = -1};
    assert_int_equal(ompf_event_add(h, &e, NULL), 0);
    ompf_construct_t c = {.module = "/bin/a", .build_id = "01", .offset = 9,
                          .kind = OMPF_CK_TASK};
    assert_int_equal(ompf_construct_add(h, &c, NULL), 0);
    return h;
}

/* The feed: XU i of p, and p's label trie node by node. */
static int fed_rows(void *ctx, size_t first, size_t n, ompf_xu_t *xu, double *values,
                    uint64_t *prov)
{
    (void)prov;
    const ompf_profile_t *p = ctx;
    for (size_t j = 0; j < n; j++) {
        xu[j] = *ompf_xu_get(p, first + j);
        values[j] = ompf_xu_values_const(p, first + j)[0];
    }
    return 0;
}

static void fed_label(void *ctx, uint32_t node, uint32_t *parent, uint64_t *comp)
{
    *parent = ompf_label_parent(ctx, node);
    *comp = ompf_label_component(ctx, node);
}

static void test_feed_labels(void **state)
{
    (void)state;
    char *dir = gen_tmpdir();
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/a.ompf", dir);
    snprintf(b, sizeof b, "%s/b.ompf", dir);
    /* 140,000 XUs (the feed's batches of 4,096 rows and three XUS chunks
     * of at most 65,536) over a trie of 1 + 40 + 40 * 30 nodes (not in
     * XU order) */
    ompf_profile_t *p = feed_header();
    uint32_t leaf[1200];
    for (uint32_t k = 0; k < 40; k++) {
        uint32_t mid;
        assert_int_equal(ompf_label_append(p, OMPF_LABEL_ROOT, 1000 + k, &mid), 0);
        for (uint32_t j = 0; j < 30; j++)
            assert_int_equal(ompf_label_append(p, mid, j * 7, &leaf[k * 30 + j]), 0);
    }
    for (uint32_t i = 0; i < 140000; i++) {
        /* cpu constant until row 70,000 (inside a batch of the second
         * chunk), then varying */
        ompf_xu_t x = {.id = i + 1, .label = leaf[(i * 37) % 1200], .parts = 1,
                       .kind = OMPF_XU_TASK, .start_ns = i, .end_ns = 2 * i + 5,
                       .cpu = i < 70000 ? 1 : (int32_t)(i % 5) - 1, .core = -1,
                       .numa = -1};
        double v = i * 0.5;
        assert_int_equal(ompf_xu_add(p, &x, &v), 0);
    }
    ompf_error_t err;
    assert_int_equal(ompf_profile_write(p, a, &err), 0);
    ompf_profile_t *h = feed_header();
    ompf_xu_feed_t f = {.n_xu = 140000, .ctx = p, .rows = fed_rows,
                        .n_labels = ompf_label_count(p), .label = fed_label};
    assert_int_equal(ompf_profile_write_feed(h, &f, b, &err), 0);
    size_t n1, n2;
    unsigned char *b1 = gen_slurp(a, &n1), *b2 = gen_slurp(b, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1); /* as if the header held the trie */
    free(b1);
    free(b2);
    /* labels in both: refused, and nothing written */
    assert_int_equal(unlink(b), 0);
    assert_int_equal(ompf_label_append(h, OMPF_LABEL_ROOT, 5, NULL), 0);
    assert_int_equal(ompf_profile_write_feed(h, &f, b, &err), OMPF_EINVAL);
    assert_non_null(strstr(err.msg, "labels both in the header and in the feed"));
    assert_int_not_equal(access(b, F_OK), 0);
    ompf_profile_destroy(h);
    ompf_profile_destroy(p);
    gen_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_xus),
        cmocka_unit_test(test_one_xu),
        cmocka_unit_test(test_million_xus),
        cmocka_unit_test(test_many_threads),
        cmocka_unit_test(test_missing_and_special_values),
        cmocka_unit_test(test_fused),
        cmocka_unit_test(test_odd_strings),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_outfile),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_feed_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
