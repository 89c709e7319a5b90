/* TMD / EPD / Correlation Error on hand-built profiles.  Every expected
 * value is worked out by hand in the comment next to it
 * (docs/semantics.md, Evaluation). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ompfuse/evaluate.h"

#define NAN_ OMPF_MISSING
#define TOL 1e-12

/* cmocka 1.1 has no floating-point assertion: |got - want| <= tol. */
#define assert_double_equal(got, want, tol) \
    check_close((got), (want), (tol), #got, __FILE__, __LINE__)
static void check_close(double got, double want, double tol, const char *what,
                        const char *file, int line)
{
    if (!(fabs(got - want) <= tol)) {
        print_error("%s = %.17g, expected %.17g (tolerance %g)\n", what, got,
                    want, tol);
        _fail(file, line);
    }
}

/* A profile of program "prog" with events names[] (status counted unless
 * status[] says otherwise), XUs of type types[i] (index into tnames) with
 * values vals[i * nev + e]. */
static ompf_profile_t *mk(size_t nev, const char *const *names,
                          const int *status, size_t nxu, const double *vals,
                          const int *types, const char *program)
{
    ompf_profile_t *p;
    assert_int_equal(ompf_profile_create(&p), 0);
    assert_int_equal(ompf_meta_set(p, "program", program ? program : "prog"), 0);
    assert_int_equal(ompf_meta_set(p, "argv", "prog\x1f" "10"), 0);
    for (size_t e = 0; e < nev; e++) {
        ompf_event_t ev = {.name = names[e], .status = status ? status[e] : 0,
                           .source = -1};
        assert_int_equal(ompf_event_add(p, &ev, NULL), 0);
    }
    static const char *tn[] = {"x.c:10", "x.c:20"};
    for (int t = 0; t < 2; t++) {
        ompf_construct_t c = {.module = "", .build_id = "", .kind = OMPF_CK_TASK,
                              .name = tn[t]};
        assert_int_equal(ompf_construct_add(p, &c, NULL), 0);
    }
    for (size_t i = 0; i < nxu; i++) {
        ompf_xu_t xu = {.id = i + 1, .type = types ? (uint32_t)types[i] : 0,
                        .label = 0, .parts = 1, .cpu = -1, .core = -1,
                        .numa = -1};
        assert_int_equal(ompf_xu_add(p, &xu, vals + i * nev), 0);
    }
    return p;
}

static ompf_eval_opts_t opts(void)
{
    ompf_eval_opts_t o;
    ompf_eval_opts_default(&o);
    o.threads = 2;
    return o;
}

static const char *ABC[] = {"A", "B", "C"};

/* Three repeats, 5 XUs, events A B C (rows are XUs: a b c):
 *   R1: (0,0,0) (0,0,0) (10,10,10) (5,5,5) (5,5,5)
 *   R2: like R1 but the last XU is (7,5,7)
 *   R3: like R1 but the last XU is (8,5,8)
 * Bounds [0,10] for every event, interval width 1, so coordinates are the
 * values themselves.  (Not 9: 9 and 10 share the last inner bin [9,10].) */
static const double R1[] = {0, 0, 0, 0, 0, 0, 10, 10, 10, 5, 5, 5, 5, 5, 5};
static const double R2[] = {0, 0, 0, 0, 0, 0, 10, 10, 10, 5, 5, 5, 7, 5, 7};
static const double R3[] = {0, 0, 0, 0, 0, 0, 10, 10, 10, 5, 5, 5, 8, 5, 8};
/* Target: R1 with A + 1 on every XU (11 lands in the outer bin above). */
static const double T1[] = {1, 0, 0, 1, 0, 0, 11, 10, 10, 6, 5, 5, 6, 5, 5};

typedef struct {
    ompf_profile_t *r[3];
    ompf_eval_t *ev;
} fx_t;

static void fx_make(fx_t *f, ompf_eval_opts_t o)
{
    f->r[0] = mk(3, ABC, NULL, 5, R1, NULL, NULL);
    f->r[1] = mk(3, ABC, NULL, 5, R2, NULL, NULL);
    f->r[2] = mk(3, ABC, NULL, 5, R3, NULL, NULL);
    ompf_error_t err = {0};
    const char *names[] = {"r1", "r2", "r3"};
    int rc = ompf_eval_create((const ompf_profile_t *const *)f->r, names, 3,
                              &o, &f->ev, &err);
    if (rc)
        fail_msg("%s", err.msg);
}

static void fx_free(fx_t *f)
{
    ompf_eval_destroy(f->ev);
    for (int i = 0; i < 3; i++)
        ompf_profile_destroy(f->r[i]);
}

static size_t pair_of(const ompf_eval_t *ev, const char *a, const char *b)
{
    for (size_t i = 0; i < ompf_eval_pair_count(ev); i++) {
        ompf_eval_pair_info_t in;
        ompf_eval_pair_info(ev, i, &in);
        if (!strcmp(ompf_eval_event_name(ev, in.ev[0]), a) &&
            !strcmp(ompf_eval_event_name(ev, in.ev[1]), b))
            return i;
    }
    fail_msg("no pair %s,%s", a, b);
    return 0;
}

static void test_calibration_and_tmd(void **state)
{
    (void)state;
    fx_t f;
    ompf_eval_opts_t o = opts();
    o.correlation_error = 1;
    fx_make(&f, o);
    assert_int_equal(ompf_eval_pair_count(f.ev), 3);
    size_t ab = pair_of(f.ev, "A", "B"), ac = pair_of(f.ev, "A", "C"),
           bc = pair_of(f.ev, "B", "C");
    ompf_eval_pair_info_t in;
    /* (A,B): R1 has 2/5 at (5,5); R2 moves 1/5 of it to (7,5): 0.4; R3 to
     * (8,5): 0.6; R2-R3: 0.2.  Median of {0.4, 0.6, 0.2} = 0.4. */
    ompf_eval_pair_info(f.ev, ab, &in);
    assert_int_equal(in.repeats, 3);
    assert_double_equal(in.calibration, 0.4, TOL);
    assert_int_equal(in.calibration_floor, 0);
    /* (A,C): the moves are diagonal: 0.2*2*sqrt2, 0.2*3*sqrt2, 0.2*sqrt2 */
    ompf_eval_pair_info(f.ev, ac, &in);
    assert_double_equal(in.calibration, 0.4 * sqrt(2), TOL);
    /* (B,C): like (A,B) with the axes swapped: 0.4 */
    ompf_eval_pair_info(f.ev, bc, &in);
    assert_double_equal(in.calibration, 0.4, TOL);

    ompf_profile_t *t = mk(3, ABC, NULL, 5, T1, NULL, NULL);
    ompf_eval_result_t *res;
    ompf_error_t err = {0};
    if (ompf_eval_target(f.ev, t, "shifted", &res, &err))
        fail_msg("%s", err.msg);
    const ompf_eval_pair_result_t *p = &res->pairs[ab];
    /* (A,B) vs R1: every XU moved by exactly one interval (11 is in the
     * outer bin at coordinate 11, one from (10,10)): 1.0.
     * vs R2: every target point's nearest R2 point is 1 away: 1.0.
     * vs R3: 0.2 must reach (8,5), nearest source (6,5) at 2, the other
     * 0.8 moves >= 1: 0.8 + 0.4 = 1.2.  TMD = median(1, 1, 1.2)/0.4 = 2.5 */
    assert_true(p->evaluated);
    assert_double_equal(p->uncalibrated[0], 1.0, TOL);
    assert_double_equal(p->uncalibrated[1], 1.0, TOL);
    assert_double_equal(p->uncalibrated[2], 1.2, TOL);
    assert_double_equal(p->tmd, 2.5, TOL);
    /* (A,C) vs R1: 1.0; vs R2: 0.8 + 0.2*sqrt5 ((6,5)->(7,7)); vs R3:
     * 0.8 + 0.2*sqrt13 ((6,5)->(8,8); (11,10) is as far).
     * TMD = (0.8 + 0.2 sqrt5) / (0.4 sqrt2). */
    p = &res->pairs[ac];
    assert_double_equal(p->uncalibrated[0], 1.0, TOL);
    assert_double_equal(p->uncalibrated[1], 0.8 + 0.2 * sqrt(5), TOL);
    assert_double_equal(p->uncalibrated[2], 0.8 + 0.2 * sqrt(13), TOL);
    double tmd_ac = (0.8 + 0.2 * sqrt(5)) / (0.4 * sqrt(2));
    assert_double_equal(p->tmd, tmd_ac, TOL);
    /* (B,C): the target's B and C are R1's: identical distributions give
     * 0 uncalibrated; vs R2 0.4, R3 0.6: TMD = 0.4/0.4 = 1. */
    p = &res->pairs[bc];
    assert_double_equal(p->uncalibrated[0], 0.0, 0.0);
    assert_double_equal(p->uncalibrated[1], 0.4, TOL);
    assert_double_equal(p->uncalibrated[2], 0.6, TOL);
    assert_double_equal(p->tmd, 1.0, TOL);
    /* EPD: geometric mean over the three pairs. */
    assert_int_equal(res->pairs_evaluated, 3);
    assert_double_equal(res->epd, cbrt(2.5 * tmd_ac * 1.0), TOL);
    /* Spearman of (B,C): target = R1: b = c = (0,0,10,5,5): 1.  R2: b =
     * (0,0,10,5,5), c = (0,0,10,5,7): ranks (1.5,1.5,5,3.5,3.5) and
     * (1.5,1.5,5,3,4), centred (-1.5,-1.5,2,.5,.5), (-1.5,-1.5,2,0,1):
     * sxy = 9, sxx = 9, syy = 9.5: 9/sqrt(85.5); R3 has the same ranks.
     * Reference = median(1, r, r) = r. */
    assert_double_equal(res->pairs[bc].spearman_target, 1.0, TOL);
    assert_double_equal(res->pairs[bc].spearman_reference, 9 / sqrt(85.5),
                        TOL);
    assert_true(res->correlation_error >= 0 && res->correlation_error <= 2);
    ompf_eval_result_free(res);

    /* A target identical to R1: uncalibrated 0 to R1 on every pair. */
    ompf_profile_t *same = mk(3, ABC, NULL, 5, R1, NULL, NULL);
    if (ompf_eval_target(f.ev, same, "same", &res, &err))
        fail_msg("%s", err.msg);
    for (size_t i = 0; i < 3; i++)
        assert_double_equal(res->pairs[i].uncalibrated[0], 0.0, 0.0);
    /* (A,B): median(0, 0.4, 0.6) / 0.4 = 1: as close as a repeat */
    assert_double_equal(res->pairs[ab].tmd, 1.0, TOL);
    /* Spearman of R1 is 1 on every pair; references: (A,B) r = 9/sqrt(85.5)
     * as (B,C) above, (A,C) 1 (a = c in every repeat), (B,C) r:
     * error = (2 (1 - r) + 0) / 3 */
    assert_double_equal(res->correlation_error,
                        2 * (1 - 9 / sqrt(85.5)) / 3, TOL);
    ompf_eval_result_free(res);
    ompf_profile_destroy(same);
    ompf_profile_destroy(t);
    fx_free(&f);
}

/* Zero-width range and the calibration floor: two repeats with A always 5
 * and B = (0, 10).  Identical repeats: calibration median 0, floored at
 * 1/|XUs| = 1/2 and reported.  Width of A = 1 count, so a target with
 * A = 7 is 2 intervals away (outer bin): uncalibrated 2, TMD 2/0.5 = 4. */
static void test_zero_width_and_floor(void **state)
{
    (void)state;
    const double r[] = {5, 0, 5, 10};
    const double tv[] = {7, 0, 7, 10};
    ompf_profile_t *refs[2] = {mk(2, ABC, NULL, 2, r, NULL, NULL),
                               mk(2, ABC, NULL, 2, r, NULL, NULL)};
    ompf_profile_t *t = mk(2, ABC, NULL, 2, tv, NULL, NULL);
    ompf_eval_opts_t o = opts();
    ompf_eval_t *ev;
    ompf_error_t err = {0};
    if (ompf_eval_create((const ompf_profile_t *const *)refs, NULL, 2, &o,
                         &ev, &err))
        fail_msg("%s", err.msg);
    ompf_eval_pair_info_t in;
    ompf_eval_pair_info(ev, 0, &in);
    assert_double_equal(in.grid->width[0], 1.0, 0);
    assert_double_equal(in.grid->width[1], 1.0, 0);
    assert_double_equal(in.calibration, 0.5, 0);
    assert_int_equal(in.calibration_floor, 1);
    ompf_eval_result_t *res;
    if (ompf_eval_target(ev, t, "t", &res, &err))
        fail_msg("%s", err.msg);
    assert_double_equal(res->pairs[0].uncalibrated[0], 2.0, TOL);
    assert_double_equal(res->pairs[0].tmd, 4.0, TOL);
    assert_int_equal(res->calibration_floor_hits, 1);
    assert_int_equal(res->pairs[0].tmd_floor, 0);
    assert_int_equal(res->tmd_floor_hits, 0);
    assert_double_equal(res->epd, 4.0, TOL);
    ompf_eval_result_free(res);
    /* A target identical to both repeats: uncalibrated (0, 0), median 0,
     * raised to the target floor 1/|XUs| = 1/2 (not in the papers, reported):
     * TMD = 0.5 / 0.5 = 1, where the papers alone give 0 (and EPD 0). */
    ompf_profile_t *same = mk(2, ABC, NULL, 2, r, NULL, NULL);
    if (ompf_eval_target(ev, same, "same", &res, &err))
        fail_msg("%s", err.msg);
    assert_double_equal(res->pairs[0].uncalibrated[0], 0.0, 0);
    assert_double_equal(res->pairs[0].uncalibrated[1], 0.0, 0);
    assert_int_equal(res->pairs[0].tmd_floor, 1);
    assert_int_equal(res->tmd_floor_hits, 1);
    assert_double_equal(res->pairs[0].tmd, 1.0, 0);
    assert_double_equal(res->epd, 1.0, 0);
    ompf_eval_result_free(res);
    ompf_profile_destroy(same);
    ompf_eval_destroy(ev);
    ompf_profile_destroy(refs[0]);
    ompf_profile_destroy(refs[1]);
    ompf_profile_destroy(t);
}

/* Binning: n = 10 over [0, 10]: a value equal to max goes into the last
 * inner bin, above max into the outer bin; 9.5 and 10 share a bin whose
 * centroid is their mean. */
static void test_binning(void **state)
{
    (void)state;
    ompf_grid_t g;
    ompf_grid_init(&g, 10, 0, 10, 0, 10);
    assert_int_equal(ompf_grid_bin(&g, 0, -0.1), 0);
    assert_int_equal(ompf_grid_bin(&g, 0, 0), 1);
    assert_int_equal(ompf_grid_bin(&g, 0, 0.999), 1);
    assert_int_equal(ompf_grid_bin(&g, 0, 1), 2);
    assert_int_equal(ompf_grid_bin(&g, 0, 10), 10);
    assert_int_equal(ompf_grid_bin(&g, 0, 10.001), 11);
    /* odd bounds where (hi-lo)/width rounds: max still in bin n */
    ompf_grid_init(&g, 7, 0.1, 0.7, 3, 3);
    assert_int_equal(ompf_grid_bin(&g, 0, 0.7), 7);
    assert_int_equal(ompf_grid_bin(&g, 1, 3), 1); /* zero width: [3, 4) */
    assert_double_equal(ompf_grid_coord(&g, 1, 5), 2.0, 0);
    ompf_grid_init(&g, 10, 0, 10, 0, 10);
    double a[] = {9.5, 10, 3, NAN_}, b[] = {9.5, 10, 3, 1};
    ompf_hist2d_t h;
    assert_int_equal(ompf_hist2d_build(&g, a, b, 4, NULL, 0, &h), 0);
    assert_int_equal(h.nbins, 2);
    assert_int_equal(h.total, 3);
    assert_int_equal(h.left_out, 1);
    for (size_t k = 0; k < 2; k++)
        if (h.count[k] == 2) {
            assert_double_equal(h.pos[2 * k], 9.75, 0);
            assert_double_equal(h.pos[2 * k + 1], 9.75, 0);
        } else {
            assert_double_equal(h.pos[2 * k], 3, 0);
        }
    ompf_hist2d_free(&h);
}

/* Per type: type X (2 XUs/run): repeats identical (0,0) (10,10), so the
 * calibration is the floor 1/2; the target has (1,0) (11,10): uncal 1,
 * TMD 2.  Type Y (4 XUs/run): R1 (0,0) (4,0) (10,10) (10,10), R2 has
 * (6,0) instead of (4,0): calibration 0.25*2 = 0.5; target = R1: uncal
 * (0, 0.5), median of two = 0.25, TMD 0.5.  Weights: reference XUs of the
 * type over both repeats, 4 and 8: exp((4 ln 2 + 8 ln 0.5)/12) = 2^(-1/3).
 */
/* steps: the references through ompf_eval_begin/add_reference (with a
 * copy, each profile destroyed as soon as it is added: under ASan a later
 * use of it fails)/finish instead of ompf_eval_create; same results. */
static void per_type_case(int steps)
{
    const double r1[] = {0, 0, 10, 10, 0, 0, 4, 0, 10, 10, 10, 10};
    const double r2[] = {0, 0, 10, 10, 0, 0, 6, 0, 10, 10, 10, 10};
    const double tv[] = {1, 0, 11, 10, 0, 0, 4, 0, 10, 10, 10, 10};
    const int ty[] = {0, 0, 1, 1, 1, 1};
    ompf_profile_t *refs[2] = {mk(2, ABC, NULL, 6, r1, ty, NULL),
                               mk(2, ABC, NULL, 6, r2, ty, NULL)};
    ompf_profile_t *t = mk(2, ABC, NULL, 6, tv, ty, NULL);
    ompf_eval_opts_t o = opts();
    o.per_type = 1;
    ompf_eval_t *ev;
    ompf_error_t err = {0};
    if (steps) {
        if (ompf_eval_begin(&o, &ev, &err))
            fail_msg("%s", err.msg);
        for (int r = 0; r < 2; r++) {
            if (ompf_eval_add_reference(ev, refs[r], NULL, 1, &err))
                fail_msg("%s", err.msg);
            ompf_profile_destroy(refs[r]);
            refs[r] = NULL;
        }
        if (ompf_eval_finish(ev, &err))
            fail_msg("%s", err.msg);
    } else if (ompf_eval_create((const ompf_profile_t *const *)refs, NULL, 2,
                                &o, &ev, &err)) {
        fail_msg("%s", err.msg);
    }
    ompf_eval_result_t *res;
    if (ompf_eval_target(ev, t, "t", &res, &err))
        fail_msg("%s", err.msg);
    const ompf_eval_pair_result_t *p = &res->pairs[0];
    assert_int_equal(p->ntypes, 2);
    for (size_t k = 0; k < 2; k++) {
        const ompf_eval_type_result_t *tr = &p->types[k];
        /* both types: 2 target XUs of X, 4 of Y, all binned */
        assert_non_null(tr->uncalibrated);
        assert_int_equal(tr->tmd_floor, 0);
        if (strstr(tr->type, "x.c:10")) {
            assert_int_equal(tr->binned, 2);
            /* (1,0) (11,10) vs (0,0) (10,10) in both repeats: 1, 1 */
            assert_double_equal(tr->uncalibrated[0], 1.0, TOL);
            assert_double_equal(tr->uncalibrated[1], 1.0, TOL);
            assert_double_equal(tr->weight, 4, 0);
            assert_double_equal(tr->calibration, 0.5, 0);
            assert_int_equal(tr->calibration_floor, 1);
            assert_double_equal(tr->tmd, 2.0, TOL);
        } else {
            assert_true(strstr(tr->type, "x.c:20") != NULL);
            assert_int_equal(tr->binned, 4);
            assert_double_equal(tr->uncalibrated[0], 0.0, 0);
            assert_double_equal(tr->uncalibrated[1], 0.5, TOL);
            assert_double_equal(tr->weight, 8, 0);
            assert_double_equal(tr->calibration, 0.5, TOL);
            assert_int_equal(tr->calibration_floor, 0);
            assert_double_equal(tr->tmd, 0.5, TOL);
        }
    }
    assert_double_equal(p->tmd, pow(2.0, -1.0 / 3.0), TOL);
    assert_double_equal(res->epd, pow(2.0, -1.0 / 3.0), TOL);
    ompf_eval_result_free(res);
    ompf_eval_destroy(ev);
    ompf_profile_destroy(refs[0]);
    ompf_profile_destroy(refs[1]);
    ompf_profile_destroy(t);
}

static void test_per_type(void **state)
{
    (void)state;
    per_type_case(0);
}

static void test_per_type_steps(void **state)
{
    (void)state;
    per_type_case(1);
}

/* Missing values: a target XU without B is left out of (A,B) and counted;
 * the others are normalised among themselves (weights 1/5, not 1/6), so
 * R1 plus such an XU is still at 0 from R1. */
static void test_missing_values(void **state)
{
    (void)state;
    fx_t f;
    fx_make(&f, opts());
    double tv[18];
    memcpy(tv, R1, sizeof R1);
    tv[15] = 3;
    tv[16] = NAN_;
    tv[17] = 3;
    ompf_profile_t *t = mk(3, ABC, NULL, 6, tv, NULL, NULL);
    ompf_eval_result_t *res;
    ompf_error_t err = {0};
    if (ompf_eval_target(f.ev, t, "hem", &res, &err))
        fail_msg("%s", err.msg);
    size_t ab = pair_of(f.ev, "A", "B"), ac = pair_of(f.ev, "A", "C");
    assert_int_equal(res->pairs[ab].left_out, 1);
    assert_int_equal(res->pairs[ab].binned, 5);
    assert_double_equal(res->pairs[ab].uncalibrated[0], 0.0, 0);
    assert_int_equal(res->pairs[ac].left_out, 0);
    assert_int_equal(res->left_out_max, 1);
    ompf_eval_result_free(res);
    ompf_profile_destroy(t);
    fx_free(&f);
}

/* opts.spearman (the CLI sets it for --csv): the Spearman coefficients
 * without Correlation Error.  Target R1 on (B,C): 1 and 9/sqrt(85.5) as in
 * test_calibration_and_tmd; without the option they are NaN. */
static void test_spearman_without_ce(void **state)
{
    (void)state;
    for (int on = 0; on < 2; on++) {
        fx_t f;
        ompf_eval_opts_t o = opts();
        o.spearman = on;
        fx_make(&f, o);
        ompf_profile_t *t = mk(3, ABC, NULL, 5, R1, NULL, NULL);
        ompf_eval_result_t *res;
        ompf_error_t err = {0};
        if (ompf_eval_target(f.ev, t, "same", &res, &err))
            fail_msg("%s", err.msg);
        size_t bc = pair_of(f.ev, "B", "C");
        if (on) {
            assert_double_equal(res->pairs[bc].spearman_target, 1.0, TOL);
            assert_double_equal(res->pairs[bc].spearman_reference,
                                9 / sqrt(85.5), TOL);
        } else {
            assert_true(isnan(res->pairs[bc].spearman_target));
            assert_true(isnan(res->pairs[bc].spearman_reference));
        }
        assert_true(isnan(res->correlation_error));
        ompf_eval_result_free(res);
        ompf_profile_destroy(t);
        fx_free(&f);
    }
}

/* Errors: a target lacking an event; --allow-partial evaluates the rest. */
static void test_target_lacks_event(void **state)
{
    (void)state;
    fx_t f;
    fx_make(&f, opts());
    /* Only A and B */
    const double tv[] = {0, 0, 0, 0, 10, 10, 5, 5, 5, 5};
    ompf_profile_t *t = mk(2, ABC, NULL, 5, tv, NULL, NULL);
    ompf_eval_result_t *res = NULL;
    ompf_error_t err = {0};
    assert_int_equal(ompf_eval_target(f.ev, t, "ab.ompf", &res, &err),
                     OMPF_EMISMATCH);
    assert_null(res);
    assert_non_null(strstr(err.msg, "ab.ompf"));
    assert_non_null(strstr(err.msg, "--allow-partial"));
    assert_non_null(strstr(err.msg, "lacks event C "));
    fx_free(&f);
    ompf_eval_opts_t o = opts();
    o.allow_partial = 1;
    fx_make(&f, o);
    assert_int_equal(ompf_eval_target(f.ev, t, "ab.ompf", &res, &err), 0);
    assert_int_equal(res->pairs_evaluated, 1);
    size_t ab = pair_of(f.ev, "A", "B"), ac = pair_of(f.ev, "A", "C");
    assert_true(res->pairs[ab].evaluated);
    assert_false(res->pairs[ac].evaluated);
    assert_non_null(res->pairs[ac].problem);
    assert_non_null(strstr(res->pairs[ac].problem, "no values of C "));
    /* target = R1 on (A,B): median(0, .4, .6)/.4 = 1 */
    assert_double_equal(res->epd, 1.0, TOL);
    ompf_eval_result_free(res);
    ompf_profile_destroy(t);
    fx_free(&f);
}

/* Errors: a pair with one repeat; references of another program. */
static void test_reference_errors(void **state)
{
    (void)state;
    int st[] = {0, 0, OMPF_EV_FAILED};
    ompf_profile_t *refs[3] = {mk(3, ABC, NULL, 5, R1, NULL, NULL),
                               mk(3, ABC, st, 5, R2, NULL, NULL),
                               mk(3, ABC, st, 5, R3, NULL, NULL)};
    ompf_eval_opts_t o = opts();
    ompf_eval_t *ev = NULL;
    ompf_error_t err = {0};
    const char *names[] = {"r1", "r2", "r3"};
    assert_int_equal(ompf_eval_create((const ompf_profile_t *const *)refs,
                                      names, 3, &o, &ev, &err),
                     OMPF_EMISMATCH);
    assert_null(ev);
    assert_non_null(strstr(err.msg, "1 reference run"));
    assert_non_null(strstr(err.msg, "--allow-partial"));
    o.allow_partial = 1;
    assert_int_equal(ompf_eval_create((const ompf_profile_t *const *)refs,
                                      names, 3, &o, &ev, &err),
                     0);
    const char *notes = ompf_eval_reference_notes(ev);
    assert_non_null(notes);
    assert_non_null(strstr(notes, "A,C"));
    assert_non_null(strstr(notes, "B,C"));
    ompf_eval_destroy(ev);
    ompf_profile_destroy(refs[2]);
    refs[2] = mk(3, ABC, NULL, 5, R3, NULL, "other");
    assert_int_equal(ompf_eval_create((const ompf_profile_t *const *)refs,
                                      names, 3, &o, &ev, &err),
                     OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "r3"));
    assert_non_null(strstr(err.msg, "different programs"));
    for (int i = 0; i < 3; i++)
        ompf_profile_destroy(refs[i]);
}

/* Spearman with ties: x = (1,2,2,3), y = (1,2,3,4): ranks (1,2.5,2.5,4)
 * and (1,2,3,4); centred: (-1.5,0,0,1.5), (-1.5,-.5,.5,1.5): sxy = 4.5,
 * sxx = 4.5, syy = 5: rho = 4.5/sqrt(22.5) = 0.948683... */
static void test_spearman_ties(void **state)
{
    (void)state;
    double x[] = {1, 2, 2, 3}, y[] = {1, 2, 3, 4}, z[] = {4, 3, 2, 1};
    assert_double_equal(ompf_spearman(x, y, 4), 4.5 / sqrt(22.5), TOL);
    assert_double_equal(ompf_spearman(y, z, 4), -1.0, TOL);
    double c[] = {5, 5, 5, 5};
    assert_double_equal(ompf_spearman(y, c, 4), 0.0, 0);
    assert_true(isnan(ompf_spearman(y, z, 1)));
    double m[] = {3, 1, 2, 4};
    assert_double_equal(ompf_median(m, 4), 2.5, 0); /* even count: mean */
    double m3[] = {3, 1, 2};
    assert_double_equal(ompf_median(m3, 3), 2, 0);
}

/* Correlation Error bounds: references with B rising with A (rho 1), a
 * target with B falling (rho -1): error 2, the upper bound; the target
 * equal to a reference: 0. */
static void test_correlation_error_bounds(void **state)
{
    (void)state;
    const double up[] = {1, 1, 2, 2, 3, 3, 4, 4};
    const double up2[] = {1, 1, 2, 2, 3, 3, 5, 5};
    const double down[] = {1, 4, 2, 3, 3, 2, 4, 1};
    ompf_profile_t *refs[2] = {mk(2, ABC, NULL, 4, up, NULL, NULL),
                               mk(2, ABC, NULL, 4, up2, NULL, NULL)};
    ompf_eval_opts_t o = opts();
    o.correlation_error = 1;
    ompf_eval_t *ev;
    ompf_error_t err = {0};
    if (ompf_eval_create((const ompf_profile_t *const *)refs, NULL, 2, &o,
                         &ev, &err))
        fail_msg("%s", err.msg);
    ompf_profile_t *t = mk(2, ABC, NULL, 4, down, NULL, NULL);
    ompf_eval_result_t *res;
    assert_int_equal(ompf_eval_target(ev, t, "down", &res, &err), 0);
    assert_double_equal(res->pairs[0].spearman_target, -1, TOL);
    assert_double_equal(res->pairs[0].spearman_reference, 1, TOL);
    assert_double_equal(res->correlation_error, 2.0, TOL);
    ompf_eval_result_free(res);
    assert_int_equal(ompf_eval_target(ev, refs[0], "ref", &res, &err), 0);
    assert_double_equal(res->correlation_error, 0.0, TOL);
    ompf_eval_result_free(res);
    /* ties: target (1,1),(2,2),(2,3),(3,4): rho 0.948683, error 0.051317 */
    const double tie[] = {1, 1, 2, 2, 2, 3, 3, 4};
    ompf_profile_t *t2 = mk(2, ABC, NULL, 4, tie, NULL, NULL);
    assert_int_equal(ompf_eval_target(ev, t2, "tie", &res, &err), 0);
    assert_double_equal(res->correlation_error, 1 - 4.5 / sqrt(22.5), TOL);
    ompf_eval_result_free(res);
    ompf_eval_destroy(ev);
    ompf_profile_destroy(t);
    ompf_profile_destroy(t2);
    ompf_profile_destroy(refs[0]);
    ompf_profile_destroy(refs[1]);
}

/* Small exact EMD cases: one bin to one bin; a split. */
static void test_emd_small(void **state)
{
    (void)state;
    ompf_emd_ws_t *w;
    assert_int_equal(ompf_emd_ws_create(&w), 0);
    int64_t a[] = {1}, b[] = {3};
    double pa[] = {0, 0}, pb[] = {3, 4};
    double v;
    assert_int_equal(ompf_emd_2d(w, 1, a, pa, 1, b, pb, &v, NULL), 0);
    assert_double_equal(v, 5.0, 0);
    /* 1/2 at 0 and 1/2 at 2 vs all at 1: 1 */
    int64_t a2[] = {1, 1}, b2[] = {7};
    double pa2[] = {0, 0, 2, 0}, pb2[] = {1, 0};
    assert_int_equal(ompf_emd_2d(w, 2, a2, pa2, 1, b2, pb2, &v, NULL), 0);
    assert_double_equal(v, 1.0, 0);
    /* unbalanced integer input to the raw solver is refused */
    double cost[] = {1, 2};
    int64_t s[] = {2}, d[] = {1, 2};
    assert_int_equal(ompf_emd_transport(w, 1, s, 2, d, cost, NULL, &v, NULL),
                     OMPF_EINVAL);
    ompf_emd_ws_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_emd_small),
        cmocka_unit_test(test_binning),
        cmocka_unit_test(test_calibration_and_tmd),
        cmocka_unit_test(test_zero_width_and_floor),
        cmocka_unit_test(test_per_type),
        cmocka_unit_test(test_per_type_steps),
        cmocka_unit_test(test_missing_values),
        cmocka_unit_test(test_target_lacks_event),
        cmocka_unit_test(test_reference_errors),
        cmocka_unit_test(test_spearman_ties),
        cmocka_unit_test(test_spearman_without_ce),
        cmocka_unit_test(test_correlation_error_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
