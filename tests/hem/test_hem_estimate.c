/* Estimators of hem.h against hand-worked numbers (docs/hem.md). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ompfuse/hem.h"

/* cmocka 1.1 has no floating-point assertion */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static ompf_hem_reading_t rd(uint64_t v, uint64_t e, uint64_t r)
{
    ompf_hem_reading_t x = {v, e, r};
    return x;
}

static void test_scaled(void **state)
{
    (void)state;
    ompf_hem_reading_t a = rd(100, 1000, 500);
    assert_near(ompf_hem_scaled(&a), 200.0, 1e-12);
    ompf_hem_reading_t b = rd(7, 0, 0); /* never ran: 0, as perf stat */
    assert_near(ompf_hem_scaled(&b), 0.0, 0);
    ompf_hem_reading_t c = rd(42, 900, 900);
    assert_near(ompf_hem_scaled(&c), 42.0, 0);
}

/* Active over the whole part, same ratio before and after: both agree. */
static void test_active_part(void **state)
{
    (void)state;
    ompf_hem_reading_t s = rd(100, 1000, 500), e = rd(300, 2000, 1000);
    /* 300*2000/1000 - 100*1000/500 = 600 - 200 */
    assert_near(ompf_hem_cumulative(&s, &e), 400.0, 1e-9);
    /* 200 * 1000 / 500 */
    assert_near(ompf_hem_delta(&s, &e), 400.0, 1e-9);
}

/* Inactive over the part: cumulative scaling still invents counts (the
 * running average times the elapsed time), delta scaling has none. */
static void test_inactive_part(void **state)
{
    (void)state;
    ompf_hem_reading_t s = rd(100, 1000, 500), e = rd(100, 2000, 500);
    assert_near(ompf_hem_cumulative(&s, &e), 200.0, 1e-9);
    assert_true(ompf_is_missing(ompf_hem_delta(&s, &e)));
}

/* The ratio drops when the event comes back on: negative hem. */
static void test_negative(void **state)
{
    (void)state;
    ompf_hem_reading_t s = rd(1000, 1000, 500), e = rd(1010, 1100, 600);
    /* 1010*1100/600 - 2000 = 1851.666... - 2000 */
    assert_near(ompf_hem_cumulative(&s, &e), 1010.0 * 1100.0 / 600.0 - 2000.0,
                        1e-9);
    assert_true(ompf_hem_cumulative(&s, &e) < -148.0);
    assert_near(ompf_hem_delta(&s, &e), 10.0, 0); /* 10*100/100 */
}

static void test_partial_running(void **state)
{
    (void)state;
    ompf_hem_reading_t s = rd(50, 400, 200), e = rd(80, 700, 300);
    /* dv 30, de 300, dr 100 -> 90 */
    assert_near(ompf_hem_delta(&s, &e), 90.0, 1e-12);
    /* 80*700/300 - 50*400/200 = 186.666... - 100 */
    assert_near(ompf_hem_cumulative(&s, &e), 80.0 * 700.0 / 300.0 - 100.0, 1e-9);
}

/* Two parts, the second inactive: hem sums, hem-delta pools. */
static void test_acc_parts(void **state)
{
    (void)state;
    ompf_hem_acc_t a;
    ompf_hem_acc_reset(&a);
    assert_true(ompf_is_missing(ompf_hem_acc_delta(&a)));
    ompf_hem_reading_t r0 = rd(0, 0, 0), r1 = rd(10, 100, 50), r2 = rd(10, 300, 50);
    ompf_hem_acc_add(&a, &r0, &r1); /* hem 20 */
    ompf_hem_acc_add(&a, &r1, &r2); /* hem 60 - 20 = 40 */
    assert_near(ompf_hem_acc_hem(&a), 60.0, 1e-9);
    /* pooled: 10 * 300 / 50 = 60 */
    assert_near(ompf_hem_acc_delta(&a), 60.0, 1e-9);
    assert_int_equal(a.dvalue, 10);
    assert_int_equal(a.denabled, 300);
    assert_int_equal(a.drunning, 50);
}

/* XU parts + gap telescope to the scaled thread total under hem. */
static void test_telescoping(void **state)
{
    (void)state;
    ompf_hem_reading_t pts[5] = {rd(0, 0, 0), rd(5, 40, 20), rd(9, 90, 40),
                                 rd(9, 130, 40), rd(30, 200, 110)};
    double sum = 0;
    for (int i = 0; i < 4; i++)
        sum += ompf_hem_cumulative(&pts[i], &pts[i + 1]);
    assert_near(sum, ompf_hem_scaled(&pts[4]), 1e-9);
}

/* The array helper charges each event and advances prev. */
static void test_charge(void **state)
{
    (void)state;
    ompf_hem_reading_t prev[2] = {{0, 0, 0}, {0, 0, 0}};
    ompf_hem_acc_t xu[2], gap[2];
    ompf_hem_acc_reset(&xu[0]);
    ompf_hem_acc_reset(&xu[1]);
    ompf_hem_acc_reset(&gap[0]);
    ompf_hem_acc_reset(&gap[1]);
    uint64_t v1[2] = {10, 4}, e1[2] = {100, 100}, r1[2] = {50, 100};
    ompf_hem_charge(2, prev, v1, e1, r1, gap);
    uint64_t v2[2] = {10, 9}, e2[2] = {300, 300}, r2[2] = {50, 300};
    ompf_hem_charge(2, prev, v2, e2, r2, xu);
    uint64_t v3[2] = {12, 9}, e3[2] = {320, 320}, r3[2] = {70, 320};
    ompf_hem_charge(2, prev, v3, e3, r3, NULL); /* charged to nothing */
    assert_near(ompf_hem_acc_hem(&gap[0]), 20.0, 1e-12);
    assert_near(ompf_hem_acc_hem(&xu[0]), 40.0, 1e-12);   /* 60 - 20 */
    assert_true(ompf_is_missing(ompf_hem_acc_delta(&xu[0])));
    assert_near(ompf_hem_acc_delta(&xu[1]), 5.0, 0);       /* never muxed */
    assert_int_equal(prev[0].value, 12);
    assert_int_equal(prev[0].running, 70);
    assert_int_equal(prev[1].enabled, 320);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scaled),        cmocka_unit_test(test_active_part),
        cmocka_unit_test(test_inactive_part), cmocka_unit_test(test_negative),
        cmocka_unit_test(test_partial_running), cmocka_unit_test(test_acc_parts),
        cmocka_unit_test(test_telescoping), cmocka_unit_test(test_charge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
