/* End to end on simulated campaigns: fusion strategies and HEM scored per
 * XU against the truth and by EPD against simulated references.
 *
 * Thresholds come from the runs documented in docs/simulator.md ("Test
 * thresholds": SIM_TEST_SEEDS=6 prints seeds 1-6 of the high model without
 * asserting); the ratios leave a margin of at least 15% from the worst
 * seed, except "EPD of BC below LGL's", which is the paper's claim itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ompfuse/evaluate.h"
#include "ompfuse/fusion.h"
#include "ompfuse/simulate.h"

typedef struct metrics {
    double epd[8], err[8], worst[8];
    uint64_t fused[8];
    size_t pairs[8], pairs_all;
} metrics_t;

enum { M_CTC, M_LGL, M_RANDOM, M_BC, M_BCU, M_HEM, M_HEMD, M_N };
static const char *const names[M_N] = {"ctc", "lgl", "random", "bc", "bc-unlabeled", "hem",
                                       "hem-delta"};

static void campaign(const char *spec, const char *const *sets, uint64_t seed, metrics_t *mt)
{
    ompf_error_t err = {0, ""};
    ompf_sim_model_t *m;
    assert_int_equal(ompf_sim_model_load(spec, &m, &err), 0);
    for (size_t i = 0; sets[i]; i += 2)
        if (ompf_sim_model_set(m, sets[i], sets[i + 1], &err))
            fail_msg("%s", err.msg);
    ompf_sim_plan_t *plan;
    assert_int_equal(ompf_sim_plan_auto(m, ompf_sim_model_slots(m), 2, 1, &plan, &err), 0);
    ompf_sim_output_t out;
    assert_int_equal(ompf_sim_generate(m, plan, seed, OMPF_SIM_TRUTH_NO_REFERENCES, &out, &err), 0);
    const ompf_profile_t *lgl[64], *bc[64], *refs[512], *hem[2] = {NULL, NULL};
    size_t nl = 0, nb = 0, nr = 0;
    for (size_t i = 0; i < out.n_runs; i++) {
        const ompf_sim_plan_line_t *ln = out.lines[i];
        if (ln->role == OMPF_SIM_REFERENCE && nr < 512)
            refs[nr++] = out.runs[i];
        else if (ln->role == OMPF_SIM_HEM || ln->role == OMPF_SIM_HEM_DELTA)
            hem[ln->role == OMPF_SIM_HEM_DELTA] = out.runs[i];
        else if (!strcmp(ln->group, "lgl") && nl < 64)
            lgl[nl++] = out.runs[i];
        else if (!strcmp(ln->group, "bc") && nb < 64)
            bc[nb++] = out.runs[i];
    }
    assert_true(nl >= 2 && nb >= 2 && nr >= 2 && hem[0] && hem[1]);
    ompf_eval_opts_t eo;
    ompf_eval_opts_default(&eo);
    eo.allow_partial = 1; /* hem-delta misses values */
    eo.threads = 2;
    ompf_eval_t *ev;
    if (ompf_eval_create(refs, NULL, nr, &eo, &ev, &err))
        fail_msg("references: %s", err.msg);
    for (int s = 0; s < M_N; s++) {
        ompf_profile_t *fused = NULL;
        const ompf_profile_t *target;
        if (s < M_HEM) {
            ompf_fuse_opts_t fo;
            ompf_fuse_opts_init(&fo);
            fo.strategy = ompf_fuse_strategy_parse(names[s]);
            fo.seed = seed;
            int is_bc = s == M_BC || s == M_BCU;
            if (ompf_fuse(is_bc ? bc : lgl, NULL, is_bc ? nb : nl, &fo, &fused, NULL, &err))
                fail_msg("%s: %s", names[s], err.msg);
            target = fused;
        } else {
            target = hem[s - M_HEM];
        }
        ompf_eval_result_t *res;
        if (ompf_eval_target(ev, target, names[s], &res, &err))
            fail_msg("%s: %s", names[s], err.msg);
        mt->epd[s] = res->epd;
        mt->pairs[s] = res->pairs_evaluated;
        ompf_eval_result_free(res);
        ompf_sim_score_t sc;
        if (ompf_sim_score(target, out.truth, &sc, &err))
            fail_msg("%s: %s", names[s], err.msg);
        mt->err[s] = sc.median;
        mt->worst[s] = sc.worst;
        mt->fused[s] = sc.scored;
        ompf_profile_destroy(fused);
    }
    mt->pairs_all = ompf_eval_pair_count(ev);
    printf("%s seed %llu:\n", spec, (unsigned long long)seed);
    for (int s = 0; s < M_N; s++)
        printf("  %-13s EPD %9.3f (%zu/%zu pairs)  per-XU error median %.4f worst %.4g  (%llu XUs)\n",
               names[s], mt->epd[s], mt->pairs[s], mt->pairs_all, mt->err[s], mt->worst[s],
               (unsigned long long)mt->fused[s]);
    ompf_eval_destroy(ev);
    ompf_sim_output_free(&out);
    ompf_sim_plan_destroy(plan);
    ompf_sim_model_destroy(m);
}

/* No variability: LGL and CTC (program order kept) reproduce every value
 * of every XU exactly; BC too (identical runs cluster on exact values). */
static void test_zero_exact(void **state)
{
    (void)state;
    const char *sets[] = {"xus", "600", "types", "6", "threads", "8", "events", "12",
                          "pmu_slots", "4", NULL};
    metrics_t mt;
    campaign("builtin:zero", sets, 1, &mt);
    for (int s = M_CTC; s <= M_BC; s++) {
        if (s == M_RANDOM)
            continue;
        assert_int_equal(mt.fused[s], 600);
        if (mt.worst[s] != 0)
            fail_msg("%s is not exact: worst value error %g", names[s], mt.worst[s]);
    }
    /* BC-unlabeled pairs XUs of a grid cell in random order: a cell can
     * hold XUs that differ only in events not yet combined. */
    assert_true(mt.err[M_BCU] == 0);
    assert_true(mt.err[M_RANDOM] > 0.01); /* the control is not exact */
    assert_true(mt.err[M_HEM] > 0.05);
}

/* High variability (the Xeon-192 situation), builtin:high with only the
 * XU count reduced (33 events, 8 counters, 192 threads, 4 ms HEM period):
 * BC beats LGL per XU and by EPD, and both are far better than HEM.
 * Measured on seeds 1-6 (docs/simulator.md, "Test thresholds"): BC/LGL
 * per-XU error 0.47-0.50, EPD of BC 6-16% below LGL's, hem's EPD 17-21
 * times and hem-delta's 7-21 times the larger of BC's and LGL's,
 * hem-delta evaluating 87-117 of 528 pairs.  SIM_TEST_SEEDS=N prints
 * seeds 1..N without asserting. */
static void test_high_variability(void **state)
{
    (void)state;
    const char *sets[] = {"xus", "3000", NULL};
    uint64_t seeds = getenv("SIM_TEST_SEEDS") ? strtoull(getenv("SIM_TEST_SEEDS"), NULL, 10) : 1;
    for (uint64_t seed = 1; seed <= seeds; seed++) {
        metrics_t mt;
        campaign("builtin:high", sets, seed, &mt);
        if (getenv("SIM_TEST_SEEDS"))
            continue;
        assert_int_equal(mt.pairs_all, 33 * 32 / 2);
        /* Per XU: BC and BC-unlabeled below 0.6 x LGL (measured <= 0.50). */
        assert_true(mt.err[M_BC] < 0.6 * mt.err[M_LGL]);
        assert_true(mt.err[M_BCU] < 0.6 * mt.err[M_LGL]);
        /* EPD: BC below LGL (the paper's claim itself; measured 6-16% below). */
        assert_true(mt.epd[M_BC] < mt.epd[M_LGL]);
        /* Both far below HEM: hem's EPD above 10 x (measured >= 17 x),
         * hem-delta's above 5 x (measured >= 6.9 x) the larger of the two. */
        double fusion = mt.epd[M_BC] > mt.epd[M_LGL] ? mt.epd[M_BC] : mt.epd[M_LGL];
        assert_true(mt.epd[M_HEM] > 10 * fusion);
        assert_true(mt.epd[M_HEMD] > 5 * fusion);
        /* hem-delta's EPD rests on enough pairs (measured >= 87 of 528). */
        assert_true(mt.pairs[M_HEMD] >= 60);
        assert_true(mt.err[M_LGL] < 0.5 * mt.err[M_HEM]);
        /* LGL beats the random control. */
        assert_true(mt.err[M_LGL] < mt.err[M_RANDOM]);
    }
}

/* Low variability (Xeon-32): label joins are nearly exact. */
static void test_low_variability(void **state)
{
    (void)state;
    const char *sets[] = {"xus", "1500", "events", "16", "pmu_slots", "4", NULL};
    metrics_t mt;
    campaign("builtin:low", sets, 1, &mt);
    assert_true(mt.err[M_LGL] < 0.05);
    assert_true(mt.epd[M_LGL] < 1.5);
    assert_true(mt.err[M_BC] < 0.5 * mt.err[M_HEM]);
    assert_true(mt.epd[M_BC] * 3 < mt.epd[M_HEM]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_exact),
        cmocka_unit_test(test_high_variability),
        cmocka_unit_test(test_low_variability),
    };
    /* SIM_TEST_FILTER=test_high_variability runs one test (documenting runs). */
    if (getenv("SIM_TEST_FILTER"))
        cmocka_set_test_filter(getenv("SIM_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
