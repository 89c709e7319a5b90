/* ompf_hem_clean() on hand-built profiles with known nearest neighbours,
 * outliers, negative values, fallbacks and untouched events. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ompfuse/hem.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))
#define M OMPF_MISSING

static ompf_profile_t *make(unsigned nev, unsigned ntypes)
{
    ompf_profile_t *p;
    assert_int_equal(ompf_profile_create(&p), 0);
    static const char *names[] = {"a", "b", "c", "d"};
    for (unsigned i = 0; i < nev; i++) {
        ompf_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.name = names[i];
        ev.source = -1;
        assert_int_equal(ompf_event_add(p, &ev, NULL), 0);
    }
    for (unsigned t = 0; t < ntypes; t++) {
        ompf_construct_t c;
        memset(&c, 0, sizeof c);
        char name[16];
        snprintf(name, sizeof name, "t%u.c:%u", t, t + 1);
        c.name = name;
        c.module = "";
        c.build_id = "";
        c.offset = t + 1;
        assert_int_equal(ompf_construct_add(p, &c, NULL), 0);
    }
    uint32_t th;
    assert_int_equal(ompf_thread_add(p, 1, &th), 0);
    return p;
}

static size_t add(ompf_profile_t *p, uint32_t type, const double *v)
{
    ompf_xu_t x;
    memset(&x, 0, sizeof x);
    x.id = ompf_xu_count(p) + 1;
    x.type = type;
    x.label = OMPF_LABEL_ROOT;
    x.parts = 1;
    x.cpu = x.core = x.numa = -1;
    assert_int_equal(ompf_xu_add(p, &x, v), 0);
    return ompf_xu_count(p) - 1;
}

static double val(const ompf_profile_t *p, size_t i, unsigned e)
{
    return ompf_xu_values_const(p, i)[e];
}

/* b = 10 a in type 0, b = 1000 a in type 1: neighbours stay in the type. */
static void test_knn_fill(void **state)
{
    (void)state;
    ompf_profile_t *p = make(2, 2);
    for (int a = 1; a <= 7; a++) {
        double v0[2] = {a, 10.0 * a}, v1[2] = {a, 1000.0 * a};
        add(p, 0, v0);
        add(p, 1, v1);
    }
    double q[2] = {4.2, M};
    size_t x0 = add(p, 0, q), x1 = add(p, 1, q);
    double q2[2] = {M, 31.0}; /* fills a from b: nearest b=30 and b=40 */
    size_t x2 = add(p, 0, q2);
    ompf_clean_opts_t o;
    ompf_clean_opts_default(&o);
    o.k = 2;
    ompf_clean_count_t cnt[2];
    ompf_error_t err;
    assert_int_equal(ompf_hem_clean(p, &o, cnt, &err), 0);
    assert_near(val(p, x0, 1), 45.0, 1e-9);    /* a=4, a=5 */
    assert_near(val(p, x1, 1), 4500.0, 1e-9);  /* same neighbours, type 1 */
    assert_near(val(p, x2, 0), 3.5, 1e-9);     /* a=3, a=4 */
    assert_int_equal(cnt[0].missing, 1);
    assert_int_equal(cnt[1].missing, 2);
    assert_int_equal(cnt[0].outliers + cnt[1].outliers, 0);
    assert_string_equal(ompf_meta_get(p, "cleaned"), "1");
    assert_string_equal(ompf_meta_get(p, "clean_k"), "2");
    assert_string_equal(ompf_meta_get(p, "clean_sigma"), "5");
    /* untouched values stay */
    assert_near(val(p, 0, 1), 10.0, 0);
    ompf_profile_destroy(p);
}

/* One value far above mean + 5 std is replaced from its neighbours. */
static void test_outlier(void **state)
{
    (void)state;
    ompf_profile_t *p = make(2, 1);
    size_t bad = 0;
    for (int a = 1; a <= 50; a++) {
        double v[2] = {a, a == 25 ? 1e6 : 2.0 * a};
        size_t i = add(p, 0, v);
        if (a == 25)
            bad = i;
    }
    ompf_clean_opts_t o;
    ompf_clean_opts_default(&o);
    o.k = 2;
    ompf_clean_count_t cnt[2];
    assert_int_equal(ompf_hem_clean(p, &o, cnt, NULL), 0);
    assert_near(val(p, bad, 1), 50.0, 1e-9); /* a=24 -> 48, a=26 -> 52 */
    assert_int_equal(cnt[1].outliers, 1);
    assert_int_equal(cnt[1].missing, 0);
    assert_int_equal(cnt[0].outliers, 0);
    for (size_t i = 0; i < 50; i++)
        if (i != bad)
            assert_near(val(p, i, 1), 2.0 * (double)(i + 1), 0);
    ompf_profile_destroy(p);

    /* The same value passes a looser threshold (z = 6.9 < 8). */
    p = make(2, 1);
    for (int a = 1; a <= 50; a++) {
        double v[2] = {a, a == 25 ? 1e6 : 2.0 * a};
        add(p, 0, v);
    }
    o.sigma = 8;
    assert_int_equal(ompf_hem_clean(p, &o, cnt, NULL), 0);
    assert_near(val(p, 24, 1), 1e6, 0);
    assert_int_equal(cnt[1].outliers, 0);
    ompf_profile_destroy(p);
}

static void test_negative(void **state)
{
    (void)state;
    for (int keep = 0; keep <= 1; keep++) {
        ompf_profile_t *p = make(2, 1);
        for (int a = 1; a <= 6; a++) {
            double v[2] = {a, a == 3 ? -7.0 : 3.0 * a};
            add(p, 0, v);
        }
        ompf_clean_opts_t o;
        ompf_clean_opts_default(&o);
        o.k = 2;
        o.keep_negative = keep;
        ompf_clean_count_t cnt[2];
        assert_int_equal(ompf_hem_clean(p, &o, cnt, NULL), 0);
        if (keep) {
            assert_near(val(p, 2, 1), -7.0, 0);
            assert_int_equal(cnt[1].negative, 0);
            assert_string_equal(ompf_meta_get(p, "clean_keep_negative"), "1");
        } else {
            assert_near(val(p, 2, 1), 9.0, 1e-9); /* a=2 -> 6, a=4 -> 12 */
            assert_int_equal(cnt[1].negative, 1);
        }
        ompf_profile_destroy(p);
    }
}

/* Presence patterns as HEM windows give them: {a,b}, {b,c}, {c,a}. */
static void test_patterns(void **state)
{
    (void)state;
    ompf_profile_t *p = make(3, 1);
    /* donors with {a, c}: c = a + 100 */
    for (int a = 1; a <= 5; a++) {
        double v[3] = {a, M, a + 100.0};
        add(p, 0, v);
    }
    /* donors with {b, c} only share c with the query below: not used for
     * the query (no common present event) */
    for (int b = 1; b <= 5; b++) {
        double v[3] = {M, b, 999.0};
        add(p, 0, v);
    }
    double q[3] = {2.1, M, M};
    size_t x = add(p, 0, q);
    ompf_clean_opts_t o;
    ompf_clean_opts_default(&o);
    o.k = 1;
    ompf_clean_count_t cnt[3];
    assert_int_equal(ompf_hem_clean(p, &o, cnt, NULL), 0);
    assert_near(val(p, x, 2), 102.0, 1e-9); /* nearest {a,c} donor: a = 2 */
    /* b: only {b,c} donors have it and they share nothing with {a}: the
     * type's median of b */
    assert_near(val(p, x, 1), 3.0, 1e-9);
    /* the {a,c} donors miss b too, but share c with the {b,c} ones */
    assert_int_equal(cnt[1].fallback, 1);
    assert_int_equal(cnt[1].missing, 6);
    assert_int_equal(cnt[0].missing, 5); /* {b,c} XUs get a through c */
    assert_int_equal(cnt[0].fallback, 0);
    ompf_profile_destroy(p);
}

static void test_fallback_and_unfilled(void **state)
{
    (void)state;
    ompf_profile_t *p = make(3, 1);
    for (int a = 1; a <= 5; a++) {
        double v[3] = {a, 10.0 * a, M}; /* event c never measured */
        add(p, 0, v);
    }
    size_t x = add(p, 0, NULL); /* everything missing */
    ompf_clean_count_t cnt[3];
    assert_int_equal(ompf_hem_clean(p, NULL, cnt, NULL), 0);
    assert_near(val(p, x, 0), 3.0, 0);  /* median */
    assert_near(val(p, x, 1), 30.0, 0);
    assert_true(ompf_is_missing(val(p, x, 2)));
    assert_int_equal(cnt[0].fallback, 1);
    assert_int_equal(cnt[0].missing, 1);
    assert_int_equal(cnt[2].unfilled, 6);
    assert_int_equal(cnt[2].missing, 0);
    ompf_profile_destroy(p);
}

static void test_bad_options(void **state)
{
    (void)state;
    ompf_profile_t *p = make(1, 1);
    ompf_clean_opts_t o;
    ompf_clean_opts_default(&o);
    o.k = 0;
    ompf_error_t err;
    assert_int_equal(ompf_hem_clean(p, &o, NULL, &err), OMPF_EINVAL);
    o.k = 3;
    o.sigma = -1;
    assert_int_equal(ompf_hem_clean(p, &o, NULL, &err), OMPF_EINVAL);
    o.sigma = 5;
    assert_int_equal(ompf_hem_clean(p, &o, NULL, &err), 0); /* no XUs */
    ompf_profile_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_knn_fill),     cmocka_unit_test(test_outlier),
        cmocka_unit_test(test_negative),     cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_fallback_and_unfilled),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
