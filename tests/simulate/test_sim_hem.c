/* The simulator's per-XU HEM values come from libompfhem's estimators on the
 * integer readings the kernel would report: sim_hem_estimate() (what the
 * engine calls per thread and event) is checked against an independent
 * re-derivation of the HEM formulas (docs/semantics.md, Counters) written
 * here, on random readings and on reads of a simulated multiplexed timeline,
 * and against libompfhem called directly on the same readings. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ompfuse/hem.h"
#include "sim_internal.h"

/* docs/semantics.md (Counters) from scratch: scaled = value * enabled /
 * running (0 while nothing ran); hem = scaled(end) - scaled(start); hem-delta
 * = dvalue * denabled / drunning, missing when drunning = 0. */
static double oracle_scaled(double v, double e, double r)
{
    if (r == 0)
        return 0;
    return r == e ? v : v * e / r;
}

static void oracle(const double *raw, const double *t, const double *run, size_t stride, size_t j,
                   double *hem, double *hemd, double *scale)
{
    double v0 = floor(raw[2 * j * stride]), v1 = floor(raw[(2 * j + 1) * stride]);
    double e0 = round(t[2 * j]), e1 = round(t[2 * j + 1]);
    double r0 = round(run[2 * j * stride]), r1 = round(run[(2 * j + 1) * stride]);
    *hem = oracle_scaled(v1, e1, r1) - oracle_scaled(v0, e0, r0);
    /* hem differences two large scaled values: rounding is relative to them. */
    *scale = fabs(oracle_scaled(v1, e1, r1)) + fabs(oracle_scaled(v0, e0, r0));
    *hemd = r1 == r0 ? ompf_missing() : (r1 - r0 == e1 - e0 ? v1 - v0 : (v1 - v0) * (e1 - e0) / (r1 - r0));
}

static void check_close(double got, double want, double scale)
{
    if (ompf_is_missing(want)) {
        assert_true(ompf_is_missing(got));
        return;
    }
    assert_false(ompf_is_missing(got));
    if (fabs(got - want) > 1e-12 * fmax(1.0, fmax(scale, fabs(want))))
        fail_msg("estimate %.17g, re-derived %.17g", got, want);
}

/* Checks one event's reads (n_xus XUs and the thread end) both ways. */
static size_t check_reads(const double *raw, const double *t, const double *run, size_t stride,
                          size_t n_xus)
{
    double *est = malloc((n_xus + 1) * sizeof *est), *estd = malloc((n_xus + 1) * sizeof *estd);
    double tot, totd;
    size_t missing = 0;
    assert_non_null(est);
    assert_non_null(estd);
    sim_hem_estimate(raw, t, run, stride, n_xus, 0, est, &tot);
    sim_hem_estimate(raw, t, run, stride, n_xus, 1, estd, &totd);
    for (size_t j = 0; j < n_xus; j++) {
        double h, hd, sc;
        oracle(raw, t, run, stride, j, &h, &hd, &sc);
        check_close(est[j], h, sc);
        check_close(estd[j], hd, 0);
        missing += ompf_is_missing(hd);
        /* libompfhem directly, bit for bit. */
        ompf_hem_reading_t a = {(uint64_t)raw[2 * j * stride], (uint64_t)llround(t[2 * j]),
                                (uint64_t)llround(run[2 * j * stride])};
        ompf_hem_reading_t b = {(uint64_t)raw[(2 * j + 1) * stride], (uint64_t)llround(t[2 * j + 1]),
                                (uint64_t)llround(run[(2 * j + 1) * stride])};
        assert_true(est[j] == ompf_hem_cumulative(&a, &b));
        double d = ompf_hem_delta(&a, &b);
        assert_int_equal(ompf_is_missing(d), ompf_is_missing(estd[j]));
        if (!ompf_is_missing(d))
            assert_true(d == estd[j]);
    }
    size_t re = 2 * n_xus;
    check_close(tot, oracle_scaled(floor(raw[re * stride]), round(t[re]), round(run[re * stride])), 0);
    assert_true(tot == totd);
    free(est);
    free(estd);
    return missing;
}

/* Random cumulative readings: never decreasing, running <= enabled, with
 * zero running, unmultiplexed stretches and non-integer times. */
static void test_random_readings(void **state)
{
    (void)state;
    sim_rng_t r;
    sim_rng_init(&r, 42, 1, 2);
    enum { NX = 500, NR = 2 * NX + 1 };
    double raw[NR], t[NR], run[NR];
    size_t missing = 0;
    for (int rep = 0; rep < 100; rep++) {
        double v = 0, e = 0, u = 0;
        for (int i = 0; i < NR; i++) {
            double de = sim_uniform(&r) * 1e6;
            int mode = (int)sim_below(&r, 4); /* 0: not running, 1: fully, else part */
            double du = mode == 0 ? 0 : mode == 1 ? de : sim_uniform(&r) * de;
            e += de;
            u += du;
            v += floor(sim_uniform(&r) * 1e5);
            raw[i] = v;
            t[i] = e;
            run[i] = u;
        }
        missing += check_reads(raw, t, run, 1, NX);
    }
    assert_true(missing > 0); /* the missing case was exercised */
}

/* Reads of a multiplexed timeline (5 events on 2 counters, XUs shorter
 * and longer than a period), as the engine does per thread. */
static void test_timeline(void **state)
{
    (void)state;
    enum { E = 5, NX = 400 };
    sim_mux_t mux;
    assert_int_equal(sim_mux_init(&mux, E, 2, 1, 1000.0, 317.0), 0);
    static double rates[2 * NX + 1][E];
    sim_seg_t segs[2 * NX + 1];
    double times[2 * NX + 1], raw[(2 * NX + 1) * E], run[(2 * NX + 1) * E];
    sim_rng_t r;
    sim_rng_init(&r, 7, 3, 4);
    double now = 0;
    size_t ns = 0, nt = 0;
    for (int j = 0; j < NX; j++) {
        double gap = 50 + sim_uniform(&r) * 400, dur = 100 + sim_uniform(&r) * 4000;
        for (int e = 0; e < E; e++) {
            rates[ns][e] = 0.1;
            rates[ns + 1][e] = sim_uniform(&r) * 3;
        }
        segs[ns] = (sim_seg_t){now, now + gap, rates[ns]};
        segs[ns + 1] = (sim_seg_t){now + gap, now + gap + dur, rates[ns + 1]};
        ns += 2;
        times[nt++] = now + gap;
        times[nt++] = now + gap + dur;
        now += gap + dur;
    }
    times[nt++] = now;
    assert_int_equal(sim_mux_read(&mux, segs, ns, times, nt, raw, run), 0);
    sim_mux_free(&mux);
    size_t missing = 0;
    for (int e = 0; e < E; e++)
        missing += check_reads(raw + e, times, run + e, E, NX);
    /* Short XUs miss events under multiplexing; long ones do not. */
    assert_true(missing > 0 && missing < (size_t)E * NX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_readings),
                                       cmocka_unit_test(test_timeline)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
