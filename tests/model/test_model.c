/* Unit tests of the in-memory profile (profile.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ompfuse/profile.h"

static uint32_t lab(ompf_profile_t *p, const char *s)
{
    uint32_t n = 0;
    assert_int_equal(ompf_label_parse(p, s, &n), 0);
    return n;
}

static void fmt_is(ompf_profile_t *p, uint32_t n, const char *want)
{
    char buf[256];
    size_t need = ompf_label_format(p, n, buf, sizeof buf);
    assert_string_equal(buf, want);
    assert_int_equal(need, strlen(want));
}

static void test_label_parse_format(void **st)
{
    (void)st;
    ompf_profile_t *p;
    assert_int_equal(ompf_profile_create(&p), 0);
    assert_int_equal(lab(p, "0"), OMPF_LABEL_ROOT);
    fmt_is(p, OMPF_LABEL_ROOT, "0");
    uint32_t a = lab(p, "0.1.4198400.3");
    fmt_is(p, a, "0.1.4198400.3");
    assert_int_equal(ompf_label_depth(p, a), 3);
    /* the same label again is the same node (a trie, not a list) */
    assert_int_equal(lab(p, "0.1.4198400.3"), a);
    assert_int_equal(ompf_label_count(p), 4);
    uint32_t big = lab(p, "0.18446744073709551615");
    fmt_is(p, big, "0.18446744073709551615");
    const char *bad[] = {"", "1", "0.", "0..1", "0.x", "0.1.", "01",
                         "0.18446744073709551616", "0.-1", " 0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_not_equal(ompf_label_parse(p, bad[i], NULL), 0);
    /* a short buffer is terminated and the needed size reported */
    char small[5];
    assert_int_equal(ompf_label_format(p, a, small, sizeof small), 13);
    assert_true(strlen(small) < sizeof small);
    ompf_profile_destroy(p);
}

static void test_label_order_and_common(void **st)
{
    (void)st;
    ompf_profile_t *p;
    assert_int_equal(ompf_profile_create(&p), 0);
    /* inserted out of order on purpose */
    const char *labels[] = {"0.2", "0.1.10", "0.1", "0.10", "0.1.2", "0.1.2.7", "0.3"};
    const char *dfs[] = {"0", "0.1", "0.1.2", "0.1.2.7", "0.1.10", "0.2", "0.3", "0.10"};
    for (size_t i = 0; i < 7; i++)
        lab(p, labels[i]);
    size_t n = ompf_label_count(p);
    assert_int_equal(n, 8);
    uint32_t *rank = malloc(n * sizeof *rank);
    assert_int_equal(ompf_label_dfs_rank(p, rank), 0);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(rank[lab(p, dfs[i])], i);
    free(rank);
    for (size_t i = 0; i + 1 < 8; i++) {
        assert_true(ompf_label_compare(p, lab(p, dfs[i]), p, lab(p, dfs[i + 1])) < 0);
        assert_true(ompf_label_compare(p, lab(p, dfs[i + 1]), p, lab(p, dfs[i])) > 0);
    }
    fmt_is(p, ompf_label_common(p, lab(p, "0.1.2.7"), lab(p, "0.1.10")), "0.1");
    fmt_is(p, ompf_label_common(p, lab(p, "0.1.2.7"), lab(p, "0.1.2")), "0.1.2");
    fmt_is(p, ompf_label_common(p, lab(p, "0.2"), lab(p, "0.3")), "0");

    /* across profiles: by value, not by node number */
    ompf_profile_t *q;
    assert_int_equal(ompf_profile_create(&q), 0);
    uint32_t qn = lab(q, "0.1.2.7");
    assert_int_equal(ompf_label_compare(p, lab(p, "0.1.2.7"), q, qn), 0);
    assert_true(ompf_label_compare(q, qn, p, lab(p, "0.1.10")) < 0);
    uint32_t imp;
    assert_int_equal(ompf_label_import(q, p, lab(p, "0.10"), &imp), 0);
    fmt_is(q, imp, "0.10");
    ompf_profile_destroy(q);
    ompf_profile_destroy(p);
}

static void test_many_labels(void **st)
{
    (void)st;
    ompf_profile_t *p;
    assert_int_equal(ompf_profile_create(&p), 0);
    uint32_t parent = OMPF_LABEL_ROOT, node;
    /* a deep chain (recursive tasks) and a wide fan-out */
    for (uint64_t i = 0; i < 5000; i++)
        assert_int_equal(ompf_label_child(p, parent, i % 7, &parent), 0);
    for (uint64_t i = 0; i < 200000; i++)
        assert_int_equal(ompf_label_child(p, OMPF_LABEL_ROOT, i * 3, &node), 0);
    assert_int_equal(ompf_label_count(p), 1 + 5000 + 200000 - 1 /* 0.0 shared */);
    assert_int_equal(ompf_label_depth(p, parent), 5000);
    char *buf = malloc(20000);
    size_t need = ompf_label_format(p, parent, buf, 20000);
    assert_int_equal(need, 1 + 2 * 5000);
    uint32_t again;
    assert_int_equal(ompf_label_parse(p, buf, &again), 0);
    assert_int_equal(again, parent);
    free(buf);
    ompf_profile_destroy(p);
}

static ompf_profile_t *small_profile(void)
{
    ompf_profile_t *p;
    assert_int_equal(ompf_profile_create(&p), 0);
    assert_int_equal(ompf_meta_set(p, "program", "/bin/x"), 0);
    assert_int_equal(ompf_meta_set(p, "program", "/bin/y"), 0); /* replaces */
    assert_int_equal(ompf_profile_set_run_id(p, 0xabcdef0123456789ull), 0);
    ompf_event_t ev = {.name = "perf::TASK-CLOCK", .pe_type = 1, .config = 1, .source = -1};
    assert_int_equal(ompf_event_add(p, &ev, NULL), 0);
    ev.name = "perf::PAGE-FAULTS";
    ev.config = 2;
    assert_int_equal(ompf_event_add(p, &ev, NULL), 0);
    assert_int_equal(ompf_event_add(p, &ev, NULL), OMPF_EINVAL); /* dup */
    ompf_construct_t c = {.module = "/bin/y", .build_id = "ab12", .offset = 0x1234,
                          .kind = OMPF_CK_TASK};
    uint32_t ci;
    assert_int_equal(ompf_construct_add(p, &c, &ci), 0);
    assert_int_equal(ompf_thread_add(p, 4242, NULL), 0);
    ompf_xu_t x = {.id = 7, .type = ci, .label = lab(p, "0.1.4660"), .parts = 1,
                   .cpu = -1, .core = -1, .numa = -1, .kind = OMPF_XU_TASK,
                   .start_ns = 10, .end_ns = 20};
    double v[2] = {1000, OMPF_MISSING};
    assert_int_equal(ompf_xu_add(p, &x, v), 0);
    return p;
}

static void test_profile_basics(void **st)
{
    (void)st;
    ompf_profile_t *p = small_profile();
    assert_string_equal(ompf_meta_get(p, "program"), "/bin/y");
    assert_int_equal(ompf_meta_count(p), 2);
    assert_true(ompf_profile_run_id(p) == 0xabcdef0123456789ull);
    assert_int_equal(ompf_event_find(p, "perf::PAGE-FAULTS"), 1);
    assert_int_equal(ompf_event_find(p, "cycles"), -1);
    const ompf_construct_t *c = ompf_construct_get(p, 0);
    assert_string_equal(c->name, "y+0x1234");
    char key[128];
    assert_int_equal(ompf_construct_key(p, 0, key, sizeof key), 0);
    assert_string_equal(key, "y|ab12|0x1234");
    /* the same identity under another install path finds it */
    ompf_construct_t k = {.module = "/other/dir/y", .build_id = "ab12", .offset = 0x1234};
    assert_int_equal(ompf_construct_find(p, &k), 0);
    k.offset = 0x1235;
    assert_int_equal(ompf_construct_find(p, &k), -1);
    assert_int_equal(ompf_construct_set_source(p, 0, "src/y.c", 12, "main"), 0);
    assert_string_equal(ompf_construct_get(p, 0)->name, "src/y.c:12 main");
    /* events are fixed once XUs exist */
    ompf_event_t ev = {.name = "late"};
    assert_int_equal(ompf_event_add(p, &ev, NULL), OMPF_EINVAL);
    const double *v = ompf_xu_values_const(p, 0);
    assert_true(v[0] == 1000);
    assert_true(ompf_is_missing(v[1]));
    assert_false(ompf_is_missing(0.0));
    ompf_thread_t *t = ompf_thread_get(p, 0);
    assert_true(ompf_is_missing(t->total[0]) && ompf_is_missing(t->running_ns[1]));
    /* references out of range are refused */
    ompf_xu_t bad = *ompf_xu_get(p, 0);
    bad.type = 5;
    assert_int_equal(ompf_xu_add(p, &bad, NULL), OMPF_ERANGE);
    bad = *ompf_xu_get(p, 0);
    bad.thread = 3;
    assert_int_equal(ompf_xu_add(p, &bad, NULL), OMPF_ERANGE);
    assert_int_equal(ompf_xu_count(p), 1);
    ompf_profile_destroy(p);
}

static void test_compare_and_provenance(void **st)
{
    (void)st;
    ompf_profile_t *a = small_profile(), *b = small_profile();
    ompf_error_t err;
    assert_int_equal(ompf_profile_compare(a, b, &err), 0);
    ompf_xu_values(b, 0)[0] = 1001;
    assert_int_equal(ompf_profile_compare(a, b, &err), OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "perf::TASK-CLOCK"));
    ompf_xu_values(b, 0)[0] = 1000;
    ompf_xu_values(b, 0)[1] = 0; /* missing is not zero */
    assert_int_equal(ompf_profile_compare(a, b, &err), OMPF_EMISMATCH);
    ompf_profile_destroy(a);
    ompf_profile_destroy(b);

    ompf_profile_t *f;
    assert_int_equal(ompf_profile_create(&f), 0);
    ompf_source_t s = {.run_id = 1, .path = "a.ompf"};
    assert_int_equal(ompf_source_add(f, &s, NULL), 0);
    s.run_id = 2;
    s.path = "b.ompf";
    assert_int_equal(ompf_source_add(f, &s, NULL), 0);
    ompf_construct_t c = {.file = "x.c", .line = 3, .kind = OMPF_CK_LOOP};
    assert_int_equal(ompf_construct_add(f, &c, NULL), 0);
    assert_string_equal(ompf_construct_get(f, 0)->name, "x.c:3");
    ompf_xu_t x = {.kind = OMPF_XU_LOOP_CHUNK, .parts = 1};
    for (int i = 0; i < 1000; i++) {
        x.id = (uint64_t)i;
        assert_int_equal(ompf_xu_add(f, &x, NULL), 0);
        uint64_t *pv = ompf_xu_provenance(f, (size_t)i);
        assert_true(pv[0] == OMPF_NONE64 && pv[1] == OMPF_NONE64);
        pv[0] = (uint64_t)i;
        pv[1] = (uint64_t)(2 * i);
    }
    assert_true(ompf_xu_provenance_const(f, 999)[1] == 1998);
    assert_int_equal(ompf_source_add(f, &s, NULL), OMPF_EINVAL);
    ompf_profile_destroy(f);
}

static void test_names(void **st)
{
    (void)st;
    for (int k = 0; k < OMPF_XU_KIND_COUNT; k++)
        assert_int_equal(ompf_xu_kind_parse(ompf_xu_kind_name(k)), k);
    for (int k = 0; k < OMPF_CK_COUNT; k++)
        assert_int_equal(ompf_construct_kind_parse(ompf_construct_kind_name(k)), k);
    for (int k = 0; k < OMPF_EV_STATUS_COUNT; k++)
        assert_int_equal(ompf_event_status_parse(ompf_event_status_name(k)), k);
    assert_int_equal(ompf_xu_kind_parse("bogus"), -1);
    assert_string_equal(ompf_xu_kind_name(OMPF_XU_LOOP_CHUNK), "loop-chunk");
    assert_string_equal(ompf_strerror(OMPF_ETRUNC), "profile truncated");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_parse_format),
        cmocka_unit_test(test_label_order_and_common),
        cmocka_unit_test(test_many_labels),
        cmocka_unit_test(test_profile_basics),
        cmocka_unit_test(test_compare_and_provenance),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
