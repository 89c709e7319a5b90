/* The emulator's bookkeeping, driven by a fake group and manual ticks:
 * windows, enabled/running, values, rotation only when the thread ran at
 * least half a period since the last one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ompfuse/hem.h"

#define P 10000u /* period (ns) */

typedef struct {
    uint64_t val[8];
    uint64_t clock;
    int fail;
} fake_t;

static int fake_read(void *ctx, uint64_t *value, uint64_t *clock)
{
    fake_t *f = ctx;
    if (f->fail)
        return -1;
    memcpy(value, f->val, sizeof f->val);
    *clock = f->clock;
    return 0;
}

/* Every event i gains (i + 1) per ns of clock. */
static void advance(fake_t *f, uint64_t dt)
{
    for (int i = 0; i < 8; i++)
        f->val[i] += (uint64_t)(i + 1) * dt;
    f->clock += dt;
}

static void test_round_robin(void **state)
{
    (void)state;
    fake_t f;
    memset(&f, 0, sizeof f);
    f.clock = 1000; /* non-zero start: engine works relative to creation */
    f.val[0] = 77;
    ompf_mux_t *m;
    ompf_error_t err;
    assert_int_equal(ompf_mux_create(fake_read, &f, 4, 2, P, OMPF_MUX_NO_TIMER, &m, &err), 0);
    uint64_t v[4], e[4], r[4];

    advance(&f, P); /* window {0,1} */
    assert_int_equal(ompf_mux_sample(m, v, e, r), 0);
    uint64_t ev1[4] = {P, P, P, P}, rv1[4] = {P, P, 0, 0}, vv1[4] = {P, 2 * P, 0, 0};
    assert_memory_equal(e, ev1, sizeof e);
    assert_memory_equal(r, rv1, sizeof r);
    assert_memory_equal(v, vv1, sizeof v);

    assert_int_equal(ompf_mux_tick(m), 0); /* -> {1,2} */
    advance(&f, P);
    assert_int_equal(ompf_mux_sample(m, v, e, r), 0);
    uint64_t rv2[4] = {P, 2 * P, P, 0}, vv2[4] = {P, 4 * P, 3 * P, 0};
    assert_memory_equal(r, rv2, sizeof r);
    assert_memory_equal(v, vv2, sizeof v);

    assert_int_equal(ompf_mux_tick(m), 0); /* -> {2,3} */
    assert_int_equal(ompf_mux_tick(m), 0); /* clock did not move: stays */
    advance(&f, P / 4);
    assert_int_equal(ompf_mux_tick(m), 0); /* ran P/4 < P/2: stays */
    advance(&f, P / 4);
    assert_int_equal(ompf_mux_tick(m), 0); /* P/2 since last: -> {3,0} */
    advance(&f, P);
    assert_int_equal(ompf_mux_sample(m, v, e, r), 0);
    /* ev0: P + P ; ev1: 2P ; ev2: P + P/2 ; ev3: P/2 + P */
    uint64_t rv3[4] = {2 * P, 2 * P, 3 * P / 2, 3 * P / 2};
    uint64_t T = 7 * P / 2, ev3[4] = {T, T, T, T};
    uint64_t vv3[4] = {2 * P, 4 * P, 9 * P / 2, 6 * P};
    assert_memory_equal(r, rv3, sizeof r);
    assert_memory_equal(e, ev3, sizeof e);
    assert_memory_equal(v, vv3, sizeof v);
    uint64_t sum = 0;
    for (int i = 0; i < 4; i++)
        sum += r[i];
    assert_int_equal(sum, 2 * e[0]); /* two slots busy all the time */

    ompf_mux_stats_t st;
    ompf_mux_get_stats(m, &st);
    assert_int_equal(st.rotations, 3);
    uint64_t real[4], clk;
    ompf_mux_real(m, real, &clk);
    assert_int_equal(clk, T);
    uint64_t rr[4] = {T, 2 * T, 3 * T, 4 * T};
    assert_memory_equal(real, rr, sizeof rr);

    f.fail = 1; /* failed read: error, outputs keep the previous state */
    uint64_t v2[4];
    assert_int_equal(ompf_mux_sample(m, v2, NULL, NULL), OMPF_EIO);
    assert_memory_equal(v2, vv3, sizeof v2);
    ompf_mux_get_stats(m, &st);
    assert_int_equal(st.read_errors, 1);
    ompf_mux_destroy(m);
}

/* 5 events, 3 slots: the window slides by one, wrapping around. */
static void test_wrap(void **state)
{
    (void)state;
    fake_t f;
    memset(&f, 0, sizeof f);
    ompf_mux_t *m;
    assert_int_equal(ompf_mux_create(fake_read, &f, 5, 3, P, OMPF_MUX_NO_TIMER, &m, NULL), 0);
    /* windows: {0,1,2} {1,2,3} {2,3,4} {3,4,0} {4,0,1}: each event is in
     * 3 of 5 windows */
    for (int k = 0; k < 5; k++) {
        advance(&f, P);
        assert_int_equal(ompf_mux_tick(m), 0);
    }
    uint64_t r[5], e[5];
    assert_int_equal(ompf_mux_sample(m, NULL, e, r), 0);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(e[i], 5 * P);
        assert_int_equal(r[i], 3 * P);
    }
    ompf_mux_destroy(m);
}

static void test_no_multiplexing(void **state)
{
    (void)state;
    fake_t f;
    memset(&f, 0, sizeof f);
    ompf_mux_t *m;
    assert_int_equal(ompf_mux_create(fake_read, &f, 3, 3, P, OMPF_MUX_NO_TIMER, &m, NULL), 0);
    uint64_t v[3], e[3], r[3];
    for (int k = 0; k < 5; k++) {
        advance(&f, 7 * P);
        ompf_mux_tick(m);
    }
    assert_int_equal(ompf_mux_sample(m, v, e, r), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(e[i], 35 * P);
        assert_int_equal(r[i], 35 * P);
        assert_int_equal(v[i], (uint64_t)(i + 1) * 35 * P);
    }
    ompf_mux_stats_t st;
    ompf_mux_get_stats(m, &st);
    assert_int_equal(st.rotations, 0);
    ompf_mux_destroy(m);
}

static void test_bad_args(void **state)
{
    (void)state;
    fake_t f;
    memset(&f, 0, sizeof f);
    ompf_mux_t *m = (ompf_mux_t *)&f;
    ompf_error_t err;
    assert_int_equal(ompf_mux_create(fake_read, &f, 0, 1, P, OMPF_MUX_NO_TIMER, &m, &err),
                     OMPF_EINVAL);
    assert_null(m);
    assert_int_equal(ompf_mux_create(fake_read, &f, 65, 1, P, OMPF_MUX_NO_TIMER, &m, &err),
                     OMPF_EINVAL);
    assert_int_equal(ompf_mux_create(fake_read, &f, 4, 0, P, OMPF_MUX_NO_TIMER, &m, &err),
                     OMPF_EINVAL);
    assert_int_equal(ompf_mux_create(fake_read, &f, 4, 2, 9999, OMPF_MUX_NO_TIMER, &m, &err),
                     OMPF_EINVAL); /* below the 10 us floor */
    assert_int_equal(ompf_mux_create(NULL, &f, 4, 2, P, OMPF_MUX_NO_TIMER, &m, &err),
                     OMPF_EINVAL);
    /* a timed engine needs the signal set up first */
    assert_int_equal(ompf_mux_create(fake_read, &f, 4, 2, P, 0, &m, &err), OMPF_EINVAL);
    assert_non_null(strstr(err.msg, "ompf_mux_signal_init"));
    f.fail = 1;
    assert_int_equal(ompf_mux_create(fake_read, &f, 4, 2, P, OMPF_MUX_NO_TIMER, &m, &err),
                     OMPF_EIO);
    assert_int_equal(ompf_mux_sample(NULL, NULL, NULL, NULL), OMPF_EINVAL);
    ompf_mux_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_robin),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_no_multiplexing),
        cmocka_unit_test(test_bad_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
