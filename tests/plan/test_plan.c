/* Planners and plan files: coverage, slot limits, overlap, suggestions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/plan.h"

static char **make_names(size_t n)
{
    char **v = calloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        v[i] = malloc(16);
        snprintf(v[i], 16, "ev%02zu", i);
    }
    return v;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int idx_of(const char *name) { return atoi(name + 2); }

/* A PMU model: events whose index is a multiple of 5 need counter 0 (at
 * most one of them per set); ev01 and ev02 can never be together. */
static int constrained(const char *const *ev, size_t n, void *ctx, char *why,
                       size_t len)
{
    int *calls = ctx;
    (*calls)++;
    int c0 = 0, has1 = 0, has2 = 0;
    for (size_t i = 0; i < n; i++) {
        int k = idx_of(ev[i]);
        c0 += k % 5 == 0;
        has1 |= k == 1;
        has2 |= k == 2;
    }
    if (c0 > 1 || (has1 && has2)) {
        if (why)
            snprintf(why, len, "conflict");
        return 0;
    }
    return 1;
}

static int set_ok(const ompf_plan_run_t *r)
{
    int calls = 0;
    return constrained((const char *const *)r->events, r->n_events, &calls, NULL, 0);
}

static void test_pairs_33_under_4(void **state)
{
    (void)state;
    size_t n = 33;
    char **names = make_names(n);
    ompf_plan_opts_t o;
    ompf_plan_opts_init(&o);
    o.slots = 4;
    o.compat = ompf_plan_assume_compat;
    ompf_plan_t *p;
    assert_int_equal(ompf_plan_create(&p), 0);
    ompf_plan_stats_t st;
    memset(&st, 0, sizeof st);
    ompf_error_t err;
    assert_int_equal(ompf_plan_pairs(p, (const char *const *)names, n, &o, &st, &err), 0);
    assert_int_equal(st.pairs, 528);
    assert_int_equal(st.naive_ref_sets, 528);
    assert_int_equal(ompf_plan_check_pairs(p, 4, &err), 0);
    /* Schönheim bound: ceil(33/4 * ceil(32/3)) = 91 sets at best */
    printf("33 events under 4 slots: %zu reference sets (x%u = %zu runs) cover all 528 "
           "pairs; one set per pair would need 528 sets (%zu runs)\n",
           st.ref_sets, o.references, st.ref_runs, 528 * (size_t)o.references);
    assert_true(st.ref_sets >= 91);
    assert_true(st.ref_sets <= 130);
    for (size_t i = 0; i < ompf_plan_count(p); i++) {
        assert_true(ompf_plan_get(p, i)->n_events <= 4);
        assert_int_equal(ompf_plan_get(p, i)->repeat, 3);
    }
    ompf_plan_destroy(p);
    free_names(names, n);
}

/* Every pair covered, for many sizes, and never more than slots. */
static void test_pairs_cover_all_sizes(void **state)
{
    (void)state;
    for (size_t n = 2; n <= 24; n++)
        for (unsigned slots = 2; slots <= 7; slots++) {
            char **names = make_names(n);
            ompf_plan_opts_t o;
            ompf_plan_opts_init(&o);
            o.slots = slots;
            o.references = 2;
            o.compat = ompf_plan_assume_compat;
            ompf_plan_t *p;
            ompf_plan_create(&p);
            ompf_error_t err;
            ompf_plan_stats_t st;
            memset(&st, 0, sizeof st);
            assert_int_equal(ompf_plan_pairs(p, (const char *const *)names, n, &o, &st, &err), 0);
            if (ompf_plan_check_pairs(p, slots, &err) != 0)
                fail_msg("n=%zu slots=%u: %s", n, slots, err.msg);
            /* at most as many sets as pairs, and a single set when it fits */
            assert_true(st.ref_sets <= n * (n - 1) / 2);
            if (n <= slots)
                assert_int_equal(st.ref_sets, 1);
            ompf_plan_destroy(p);
            free_names(names, n);
        }
}

/* With an oracle that refuses some sets: every set is compatible, every
 * compatible pair covered, the incompatible pair reported. */
static void test_pairs_respect_oracle(void **state)
{
    (void)state;
    size_t n = 16;
    char **names = make_names(n);
    int calls = 0;
    ompf_plan_opts_t o;
    ompf_plan_opts_init(&o);
    o.slots = 4;
    o.compat = constrained;
    o.compat_ctx = &calls;
    ompf_plan_t *p;
    ompf_plan_create(&p);
    ompf_error_t err;
    ompf_plan_stats_t st;
    memset(&st, 0, sizeof st);
    assert_int_equal(ompf_plan_pairs(p, (const char *const *)names, n, &o, &st, &err), 0);
    assert_true(calls > 0);
    for (size_t i = 0; i < ompf_plan_count(p); i++)
        assert_true(set_ok(ompf_plan_get(p, i)));
    /* uncoverable: (1,2) and every pair of multiples of 5: 0,5,10,15 */
    assert_int_equal(st.pairs_uncoverable, 1 + 6);
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++) {
            int bad = (a == 1 && b == 2) || (a % 5 == 0 && b % 5 == 0);
            int found = 0;
            for (size_t i = 0; i < ompf_plan_count(p) && !found; i++) {
                const ompf_plan_run_t *r = ompf_plan_get(p, i);
                int ha = 0, hb = 0;
                for (size_t k = 0; k < r->n_events; k++) {
                    ha |= (size_t)idx_of(r->events[k]) == a;
                    hb |= (size_t)idx_of(r->events[k]) == b;
                }
                found = ha && hb;
            }
            assert_int_equal(found, !bad);
        }
    ompf_plan_destroy(p);
    free_names(names, n);
}

static void test_disjoint(void **state)
{
    (void)state;
    size_t n = 17;
    char **names = make_names(n);
    int calls = 0;
    ompf_plan_opts_t o;
    ompf_plan_opts_init(&o);
    o.slots = 4;
    o.compat = constrained;
    o.compat_ctx = &calls;
    ompf_plan_t *p;
    ompf_plan_create(&p);
    ompf_error_t err;
    assert_int_equal(ompf_plan_disjoint(p, OMPF_ROLE_LGL, (const char *const *)names, n, &o, NULL, &err), 0);
    int seen[17] = {0};
    for (size_t i = 0; i < ompf_plan_count(p); i++) {
        const ompf_plan_run_t *r = ompf_plan_get(p, i);
        assert_int_equal(r->role, OMPF_ROLE_LGL);
        assert_true(r->n_events <= 4);
        assert_true(set_ok(r));
        for (size_t k = 0; k < r->n_events; k++)
            seen[idx_of(r->events[k])]++;
    }
    for (size_t i = 0; i < n; i++)
        assert_int_equal(seen[i], 1);
    /* multiples of 5 (0,5,10,15) need separate sets: at least 4 sets; 17
     * events in 4 slots: at least 5 */
    assert_true(ompf_plan_count(p) >= 5);
    ompf_plan_destroy(p);
    free_names(names, n);
}

static void test_chain_overlap(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 20; n++)
        for (unsigned slots = 2; slots <= 6; slots++)
            for (unsigned ov = 1; ov < slots && ov <= 2; ov++) {
                char **names = make_names(n);
                int calls = 0;
                ompf_plan_opts_t o;
                ompf_plan_opts_init(&o);
                o.slots = slots;
                o.bc_overlap = ov;
                o.compat = constrained;
                o.compat_ctx = &calls;
                ompf_plan_t *p;
                ompf_plan_create(&p);
                ompf_error_t err;
                int rc = ompf_plan_chain(p, (const char *const *)names, n, &o, NULL, &err);
                if (rc)
                    fail_msg("n=%zu slots=%u: %s", n, slots, err.msg);
                if (ompf_plan_check_chain(p, &err))
                    fail_msg("n=%zu slots=%u ov=%u: %s", n, slots, ov, err.msg);
                int seen[20] = {0};
                for (size_t i = 0; i < ompf_plan_count(p); i++) {
                    const ompf_plan_run_t *r = ompf_plan_get(p, i);
                    assert_true(r->n_events <= slots);
                    assert_true(set_ok(r));
                    for (size_t k = 0; k < r->n_events; k++)
                        seen[idx_of(r->events[k])] = 1;
                }
                for (size_t i = 0; i < n; i++)
                    assert_int_equal(seen[i], 1);
                ompf_plan_destroy(p);
                free_names(names, n);
            }
}

/* Overlap chosen by correlation: the covered event most correlated with
 * the new ones. */
static void test_chain_correlation(void **state)
{
    (void)state;
    const char *ev[4] = {"a", "b", "c", "d"};
    double corr[16];
    for (int i = 0; i < 16; i++)
        corr[i] = 0.1;
    for (int i = 0; i < 4; i++)
        corr[i * 4 + i] = 1;
    /* d follows b closely; c follows a */
    corr[1 * 4 + 3] = corr[3 * 4 + 1] = 0.95;
    corr[0 * 4 + 2] = corr[2 * 4 + 0] = 0.9;
    ompf_plan_opts_t o;
    ompf_plan_opts_init(&o);
    o.slots = 2;
    o.compat = ompf_plan_assume_compat;
    o.corr = corr;
    ompf_plan_t *p;
    ompf_plan_create(&p);
    ompf_error_t err;
    assert_int_equal(ompf_plan_chain(p, ev, 4, &o, NULL, &err), 0);
    assert_int_equal(ompf_plan_count(p), 3);
    /* {a,b}, {c + a}, {d + b} */
    const ompf_plan_run_t *r1 = ompf_plan_get(p, 1), *r2 = ompf_plan_get(p, 2);
    assert_string_equal(r1->events[0], "c");
    assert_string_equal(r1->events[1], "a");
    assert_string_equal(r2->events[0], "d");
    assert_string_equal(r2->events[1], "b");
    ompf_plan_destroy(p);

    /* without correlations: perf::TASK-CLOCK is the anchor */
    const char *sw[4] = {"perf::PAGE-FAULTS", "perf::MINOR-FAULTS", "perf::TASK-CLOCK",
                         "perf::CPU-CLOCK"};
    o.corr = NULL;
    ompf_plan_create(&p);
    assert_int_equal(ompf_plan_chain(p, sw, 4, &o, NULL, &err), 0);
    assert_int_equal(ompf_plan_count(p), 3);
    assert_string_equal(ompf_plan_get(p, 0)->events[0], "perf::TASK-CLOCK");
    for (size_t i = 1; i < 3; i++)
        assert_string_equal(ompf_plan_get(p, i)->events[1], "perf::TASK-CLOCK");
    ompf_plan_destroy(p);
}

/* Spearman on a pilot profile: monotonic = 1, reversed = 1 (absolute),
 * independent of scale; unknown pair NaN. */
static void test_correlation(void **state)
{
    (void)state;
    ompf_profile_t *pr;
    assert_int_equal(ompf_profile_create(&pr), 0);
    const char *names[3] = {"x", "y", "z"};
    for (int i = 0; i < 3; i++) {
        ompf_event_t e;
        memset(&e, 0, sizeof e);
        e.name = names[i];
        e.source = -1;
        assert_int_equal(ompf_event_add(pr, &e, NULL), 0);
    }
    ompf_construct_t c;
    memset(&c, 0, sizeof c);
    c.module = "";
    c.build_id = "";
    c.name = "t";
    uint32_t ci;
    assert_int_equal(ompf_construct_add(pr, &c, &ci), 0);
    uint32_t th;
    assert_int_equal(ompf_thread_add(pr, 1, &th), 0);
    for (int k = 0; k < 20; k++) {
        ompf_xu_t x;
        memset(&x, 0, sizeof x);
        x.id = (uint64_t)k + 1;
        x.type = ci;
        x.thread = th;
        x.parts = 1;
        x.cpu = x.core = x.numa = -1;
        double v[3] = {k, exp(k / 3.0), -k * 7.0};
        assert_int_equal(ompf_xu_add(pr, &x, v), 0);
    }
    const char *ask[4] = {"x", "y", "z", "w"};
    double out[16];
    const ompf_profile_t *ps[1] = {pr};
    assert_int_equal(ompf_plan_correlation(ps, 1, ask, 4, out), 0);
    assert_true(fabs(out[0 * 4 + 1] - 1.0) < 1e-12);
    assert_true(fabs(out[0 * 4 + 2] - 1.0) < 1e-12);
    assert_true(fabs(out[2 * 4 + 1] - 1.0) < 1e-12);
    assert_true(isnan(out[0 * 4 + 3]));
    ompf_profile_destroy(pr);
}

static void test_build_and_roundtrip(void **state)
{
    (void)state;
    const char *ev[5] = {"perf::TASK-CLOCK", "perf::CPU-CLOCK", "perf::PAGE-FAULTS",
                         "perf::MINOR-FAULTS", "perf::CONTEXT-SWITCHES"};
    ompf_plan_opts_t o;
    ompf_plan_opts_init(&o);
    o.slots = 2;
    o.hem = 1;
    o.compat = ompf_plan_assume_compat;
    ompf_plan_t *p;
    ompf_plan_stats_t st;
    ompf_error_t err;
    assert_int_equal(ompf_plan_build(ev, 5, &o, &p, &st, &err), 0);
    assert_int_equal(st.lgl_sets, 3);
    assert_int_equal(st.bc_sets, 4);
    assert_int_equal(st.ref_sets, 10);
    assert_int_equal(ompf_plan_total_runs(p, OMPF_ROLE_REFERENCE), 30);
    assert_int_equal(ompf_plan_total_runs(p, OMPF_ROLE_HEM), 1);
    assert_int_equal(ompf_plan_slots(p), 2);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(ompf_plan_write(p, f), 0);
    fclose(f);
    ompf_plan_t *q;
    if (ompf_plan_parse(buf, "mem", &q, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(ompf_plan_count(q), ompf_plan_count(p));
    assert_int_equal(ompf_plan_slots(q), 2);
    for (size_t i = 0; i < ompf_plan_count(p); i++) {
        const ompf_plan_run_t *a = ompf_plan_get(p, i), *b = ompf_plan_get(q, i);
        assert_int_equal(a->role, b->role);
        assert_int_equal(a->repeat, b->repeat);
        assert_int_equal(a->n_events, b->n_events);
        for (size_t k = 0; k < a->n_events; k++)
            assert_string_equal(a->events[k], b->events[k]);
    }
    /* written again: byte-identical */
    char *buf2 = NULL;
    size_t len2 = 0;
    f = open_memstream(&buf2, &len2);
    ompf_plan_write(q, f);
    fclose(f);
    assert_string_equal(buf, buf2);
    free(buf);
    free(buf2);
    ompf_plan_destroy(p);
    ompf_plan_destroy(q);
}

static void test_parse(void **state)
{
    (void)state;
    ompf_plan_t *p;
    ompf_error_t err;
    const char *ok = "# hello\n"
                     "# slots: 2\n"
                     "lgl 1 a,b\n"
                     "  bc 2 b,c   period_us=1000 foo=bar\r\n"
                     "\n"
                     "hem 1 all\n"
                     "reference 3 a,c\n";
    if (ompf_plan_parse(ok, "t", &p, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(ompf_plan_count(p), 4);
    assert_int_equal(ompf_plan_slots(p), 2);
    const ompf_plan_run_t *r = ompf_plan_get(p, 1);
    assert_int_equal(r->role, OMPF_ROLE_BC);
    assert_int_equal(r->repeat, 2);
    assert_int_equal(r->n_opts, 2);
    assert_string_equal(r->opts[0], "period_us=1000");
    assert_int_equal(r->src_line, 4);
    r = ompf_plan_get(p, 2);
    assert_int_equal(r->role, OMPF_ROLE_HEM);
    assert_int_equal(r->n_events, 3); /* a, b, c */
    assert_string_equal(r->events[2], "c");
    assert_int_equal(ompf_plan_total_runs(p, -1), 1 + 2 + 1 + 3);
    ompf_plan_destroy(p);

    struct {
        const char *text, *expect;
    } bad[] = {
        {"lgll 1 a\n", "t:1: unknown role \"lgll\""},
        {"lgl 0 a\n", "t:1: repeat \"0\""},
        {"lgl x a\n", "t:1: repeat \"x\""},
        {"lgl 1\n", "t:1: expected"},
        {"# c\nlgl 1 a,,b\n", "t:2: an empty item"},
        {"lgl 1 a,b,a\n", "t:1: event a is listed twice"},
        {"lgl 1 a b\n", "t:1: \"b\" after the events is not a key=value"},
        {"hem 1 all\n", "needs other lines"},
        {"# only comments\n", "no run lines"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        p = NULL;
        memset(&err, 0, sizeof err);
        assert_int_not_equal(ompf_plan_parse(bad[i].text, "t", &p, &err), 0);
        assert_null(p);
        if (!strstr(err.msg, bad[i].expect))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].expect);
    }
}

static void test_suggest(void **state)
{
    (void)state;
    ompf_catalog_t *c;
    ompf_error_t err;
    assert_int_equal(ompf_catalog_load(&c, &err), 0);
    assert_true(ompf_catalog_event_count(c) > 10);
    char buf[512];
    assert_int_equal(ompf_catalog_suggest(c, "perf::TASK-CLOK", 3, buf, sizeof buf), 3);
    assert_non_null(strstr(buf, "perf::TASK-CLOCK"));
    assert_true(strncmp(buf, "perf::TASK-CLOCK", 16) == 0); /* closest first */
    assert_int_equal(ompf_catalog_suggest(c, "MINOR-FAULT", 3, buf, sizeof buf), 3);
    assert_true(strncmp(buf, "perf::MINOR-FAULTS", 18) == 0);
    ompf_catalog_destroy(c);

    const char *names[2] = {"perf::TASK-CLOCK", "perf::PAGE-FALTS"};
    memset(&err, 0, sizeof err);
    assert_int_equal(ompf_plan_check_names(names, 2, &err), OMPF_ENOTFOUND);
    assert_non_null(strstr(err.msg, "perf::PAGE-FALTS"));
    assert_non_null(strstr(err.msg, "did you mean perf::PAGE-FAULTS"));
    assert_int_equal(ompf_plan_check_names(names, 1, &err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pairs_33_under_4),
        cmocka_unit_test(test_pairs_cover_all_sizes),
        cmocka_unit_test(test_pairs_respect_oracle),
        cmocka_unit_test(test_disjoint),
        cmocka_unit_test(test_chain_overlap),
        cmocka_unit_test(test_chain_correlation),
        cmocka_unit_test(test_correlation),
        cmocka_unit_test(test_build_and_roundtrip),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_suggest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
