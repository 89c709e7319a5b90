/* Known-answer tests of every fusion strategy on hand-built profiles.  One
 * file over 600 lines: the strategies share the fixtures built here, and
 * each case is a few lines of expected values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "fzt.h"

static void destroy_all(ompf_profile_t **p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ompf_profile_destroy(p[i]);
}

/* LGL pairs by label whatever the record order and start times. */
static void test_lgl_by_label(void **state)
{
    (void)state;
    ompf_profile_t *in[2];
    in[0] = fzt_profile(0xa1, "perf::TASK-CLOCK");
    in[1] = fzt_profile(0xb2, "perf::CPU-CLOCK");
    const char *labels[] = {"0.1", "0.2", "0.2.1", "0.3"};
    for (int i = 0; i < 4; i++) {
        double v = 10.0 * (i + 1);
        fzt_xu(in[0], 100 + (uint64_t)i, 7, labels[i], (uint64_t)i * 1000, &v);
    }
    /* Reversed record order, scrambled start times. */
    uint64_t starts[] = {5, 900, 3, 70};
    for (int i = 3; i >= 0; i--) {
        double v = 10.0 * (i + 1) + 1;
        fzt_xu(in[1], 200 + (uint64_t)i, 7, labels[i], starts[i], &v);
    }
    ompf_profile_t *f;
    ompf_fuse_report_t *rep;
    ompf_error_t err;
    int rc = fzt_fuse(in, 2, OMPF_FUSE_LGL, 1, &f, &rep, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(ompf_xu_count(f), 4);
    for (size_t i = 0; i < 4; i++) {
        double a = fzt_val(f, i, "perf::TASK-CLOCK");
        double b = fzt_val(f, i, "perf::CPU-CLOCK");
        assert_true(b == a + 1);
        const uint64_t *pv = ompf_xu_provenance_const(f, i);
        assert_int_equal(pv[0] - 100, pv[1] - 200);
        char l[64];
        ompf_label_format(f, ompf_xu_get(f, i)->label, l, sizeof l);
        assert_string_equal(l, labels[pv[0] - 100]);
        /* Base-run order: XU i of the result is XU i of input 0. */
        assert_int_equal(pv[0], 100 + i);
        assert_int_equal(ompf_xu_get(f, i)->id, 100 + i);
    }
    assert_int_equal(ompf_fuse_report_unmatched(rep, 0), 0);
    assert_int_equal(ompf_fuse_report_unmatched(rep, 1), 0);
    /* Provenance: sources, run ids, event sources. */
    assert_int_equal(ompf_source_count(f), 2);
    assert_int_equal(ompf_source_get(f, 0)->run_id, 0xa1);
    assert_int_equal(ompf_source_get(f, 1)->run_id, 0xb2);
    assert_int_equal(ompf_event_get(f, (uint32_t)ompf_event_find(f, "perf::TASK-CLOCK"))->source, 0);
    assert_int_equal(ompf_event_get(f, (uint32_t)ompf_event_find(f, "perf::CPU-CLOCK"))->source, 1);
    assert_string_equal(ompf_meta_get(f, "mode"), "fused");
    assert_string_equal(ompf_meta_get(f, "strategy"), "lgl");
    assert_string_equal(ompf_meta_get(f, "program"), "prog");
    assert_string_equal(ompf_meta_get(f, "team_size"), "4");
    assert_string_equal(ompf_meta_get(f, "forced"), "0");
    assert_non_null(ompf_meta_get(f, "seed"));
    assert_non_null(ompf_meta_get(f, "strategy_params"));
    assert_true(ompf_profile_run_id(f) != 0xa1 && ompf_profile_run_id(f) != 0);
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    destroy_all(in, 2);
}

/* LGL: labels missing from a run are unmatched and reported; duplicated
 * labels pair in start order and are counted. */
static void test_lgl_unmatched_and_duplicates(void **state)
{
    (void)state;
    ompf_profile_t *in[3];
    in[0] = fzt_profile(1, "A");
    in[1] = fzt_profile(2, "B");
    in[2] = fzt_profile(3, "C");
    double v;
    /* label 0.5 twice in every run (a static chunk set), start order
     * differs from record order in run 1. */
    v = 1; fzt_xu(in[0], 1, 3, "0.5", 10, &v);
    v = 2; fzt_xu(in[0], 2, 3, "0.5", 20, &v);
    v = 3; fzt_xu(in[0], 3, 3, "0.6", 30, &v);
    v = 4; fzt_xu(in[0], 4, 3, "0.7", 40, &v); /* missing in run 2 */
    v = 20; fzt_xu(in[1], 11, 3, "0.5", 25, &v);
    v = 10; fzt_xu(in[1], 12, 3, "0.5", 15, &v);
    v = 30; fzt_xu(in[1], 13, 3, "0.6", 30, &v);
    v = 40; fzt_xu(in[1], 14, 3, "0.7", 40, &v);
    v = 100; fzt_xu(in[2], 21, 3, "0.5", 1, &v);
    v = 200; fzt_xu(in[2], 22, 3, "0.5", 2, &v);
    v = 300; fzt_xu(in[2], 23, 3, "0.6", 3, &v);
    v = 900; fzt_xu(in[2], 24, 3, "0.9", 4, &v); /* only in run 2 */
    ompf_profile_t *f;
    ompf_fuse_report_t *rep;
    ompf_error_t err;
    assert_int_equal(fzt_fuse(in, 3, OMPF_FUSE_LGL, 1, &f, &rep, &err), 0);
    assert_int_equal(ompf_xu_count(f), 3);
    for (size_t i = 0; i < 3; i++) {
        double a = fzt_val(f, i, "A");
        assert_true(fzt_val(f, i, "B") == 10 * a);
        assert_true(fzt_val(f, i, "C") == 100 * a);
    }
    assert_int_equal(ompf_fuse_report_unmatched(rep, 0), 1);
    assert_int_equal(ompf_fuse_report_unmatched(rep, 1), 1);
    assert_int_equal(ompf_fuse_report_unmatched(rep, 2), 1);
    const ompf_fuse_type_stats_t *ts = ompf_fuse_report_type(rep, 0);
    assert_int_equal(ts->fused, 3);
    assert_int_equal(ts->in[0], 4);
    assert_int_equal(ts->label_dups, 3);
    int noted = 0;
    for (size_t i = 0; i < ompf_fuse_report_n_notes(rep); i++)
        noted |= strstr(ompf_fuse_report_note(rep, i), "more than once") != NULL;
    assert_true(noted);
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    destroy_all(in, 3);
}

/* CTC pairs per type by start order; an extra XU is reported unmatched. */
static void test_ctc_start_order(void **state)
{
    (void)state;
    ompf_profile_t *in[2];
    in[0] = fzt_profile(1, "A");
    in[1] = fzt_profile(2, "B");
    double v;
    /* type 1: starts 30, 10, 20 with values = start; type 2: 5, 6 */
    v = 30; fzt_xu(in[0], 1, 1, "0.1", 30, &v);
    v = 10; fzt_xu(in[0], 2, 1, "0.2", 10, &v);
    v = 5; fzt_xu(in[0], 3, 2, "0.3", 5, &v);
    v = 20; fzt_xu(in[0], 4, 1, "0.4", 20, &v);
    v = 6; fzt_xu(in[0], 5, 2, "0.5", 6, &v);
    /* run 1: labels deliberately unrelated; values = 2 * start-rank value */
    v = 5000; fzt_xu(in[1], 11, 2, "0.9", 500, &v);   /* type 2, 1st */
    v = 40; fzt_xu(in[1], 12, 1, "0.8", 200, &v);     /* type 1, 2nd */
    v = 20; fzt_xu(in[1], 13, 1, "0.7", 100, &v);     /* type 1, 1st */
    v = 60; fzt_xu(in[1], 14, 1, "0.6", 300, &v);     /* type 1, 3rd */
    v = 6000; fzt_xu(in[1], 15, 2, "0.1", 600, &v);   /* type 2, 2nd */
    v = 7000; fzt_xu(in[1], 16, 2, "0.2", 700, &v);   /* type 2, extra */
    ompf_profile_t *f;
    ompf_fuse_report_t *rep;
    ompf_error_t err;
    assert_int_equal(fzt_fuse(in, 2, OMPF_FUSE_CTC, 1, &f, &rep, &err), 0);
    assert_int_equal(ompf_xu_count(f), 5);
    for (size_t i = 0; i < 5; i++) {
        double a = fzt_val(f, i, "A"), b = fzt_val(f, i, "B");
        if (ompf_xu_get(f, i)->type == ompf_xu_get(f, 0)->type)
            assert_true(b == 2 * a);
        else
            assert_true(b == 1000 * a);
    }
    int t2 = ompf_fuse_report_find_type(rep, "file.c:2");
    assert_true(t2 >= 0);
    const ompf_fuse_type_stats_t *ts = ompf_fuse_report_type(rep, (size_t)t2);
    assert_int_equal(ts->fused, 2);
    assert_int_equal(ts->in[1] - ts->fused, 1);
    assert_int_equal(ompf_fuse_report_unmatched(rep, 0), 0);
    assert_int_equal(ompf_fuse_report_unmatched(rep, 1), 1);
    /* Provenance of the fused XU built from input 0's XU 2 (start 10). */
    long k = fzt_find_prov(f, 0, 2);
    assert_true(k >= 0);
    assert_int_equal(ompf_xu_provenance_const(f, (size_t)k)[1], 13);
    /* CTC labels: the common prefix of the sources' labels. */
    char l[32];
    ompf_label_format(f, ompf_xu_get(f, (size_t)k)->label, l, sizeof l);
    assert_string_equal(l, "0");
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    destroy_all(in, 2);
}

/* CTC's two sorts (ctc.c): run 0's start times span 2^63 ns, too wide to
 * share a 64-bit key with the XU index, so they are sorted beside an index
 * array; run 1's are not.  Both order equal start times (and ends) by
 * label order: run 0 gives 3, 2 (0.2), 1 (0.5), 4; run 1 gives 11, 13
 * (0.1), 12 (0.9). */
static void test_ctc_ties_wide(void **state)
{
    (void)state;
    ompf_profile_t *in[2];
    in[0] = fzt_profile(1, "A");
    in[1] = fzt_profile(2, "B");
    double v = 1;
    fzt_xu(in[0], 1, 1, "0.5", 100, &v);
    fzt_xu(in[0], 2, 1, "0.2", 100, &v);
    fzt_xu(in[0], 3, 1, "0.3", 50, &v);
    fzt_xu(in[0], 4, 1, "0.7", 1ull << 63, &v);
    fzt_xu(in[1], 12, 1, "0.9", 7, &v);
    fzt_xu(in[1], 13, 1, "0.1", 7, &v);
    fzt_xu(in[1], 11, 1, "0.3", 3, &v);
    ompf_profile_t *f;
    ompf_fuse_report_t *rep;
    ompf_error_t err;
    assert_int_equal(fzt_fuse(in, 2, OMPF_FUSE_CTC, 1, &f, &rep, &err), 0);
    assert_int_equal(ompf_xu_count(f), 3);
    static const uint64_t pairs[3][2] = {{3, 11}, {2, 13}, {1, 12}};
    for (size_t j = 0; j < 3; j++) {
        long k = fzt_find_prov(f, 0, pairs[j][0]);
        assert_true(k >= 0);
        assert_int_equal(ompf_xu_provenance_const(f, (size_t)k)[1], pairs[j][1]);
    }
    assert_int_equal(ompf_fuse_report_unmatched(rep, 0), 1);
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    destroy_all(in, 2);
}

/* CTC over 3 runs (each sorted in place) and 9 (each a ninth of the input
 * XUs: sorted through the radix sort's scratch, ctc.c): the same 40 XUs
 * in every run, recorded in a different order per run, two types whose
 * XUs interleave, start times tied in pairs within a type (ordered by
 * label).  Every fused XU must join the same XU of every run. */
static void test_ctc_many_runs(void **state)
{
    (void)state;
    for (size_t nr = 3; nr <= 9; nr += 6) {
        ompf_profile_t *in[9];
        char ev[9][8];
        for (size_t r = 0; r < nr; r++) {
            snprintf(ev[r], sizeof ev[r], "E%zu", r);
            in[r] = fzt_profile(r + 1, ev[r]);
            uint64_t s = 77 + r;
            unsigned order[40];
            for (unsigned k = 0; k < 40; k++)
                order[k] = k;
            for (unsigned k = 39; k > 0 && r; k--) { /* run 0 in order, the others shuffled */
                unsigned j = (unsigned)(fzt_rand(&s) % (k + 1)), t = order[k];
                order[k] = order[j];
                order[j] = t;
            }
            for (unsigned q = 0; q < 40; q++) {
                unsigned k = order[q];
                double v = k;
                char l[16];
                snprintf(l, sizeof l, "0.%u", k);
                fzt_xu(in[r], 1000 * r + q + 1, (int)(k % 2) + 1, l, (k / 4) * 10 + 5, &v);
            }
        }
        ompf_profile_t *f;
        ompf_fuse_report_t *rep;
        ompf_error_t err;
        assert_int_equal(fzt_fuse(in, nr, OMPF_FUSE_CTC, 1, &f, &rep, &err), 0);
        assert_int_equal(ompf_xu_count(f), 40);
        for (size_t i = 0; i < 40; i++)
            for (size_t r = 1; r < nr; r++)
                assert_true(fzt_val(f, i, ev[r]) == fzt_val(f, i, ev[0]));
        ompf_fuse_report_destroy(rep);
        ompf_profile_destroy(f);
        destroy_all(in, nr);
    }
}

/* First run wins for an event measured by several runs (CTC, LGL,
 * random), and for BC the first run in the combination order. */
static void test_first_run_wins(void **state)
{
    (void)state;
    int strategies[] = {OMPF_FUSE_CTC, OMPF_FUSE_LGL, OMPF_FUSE_RANDOM,
                        OMPF_FUSE_BC, OMPF_FUSE_BC_UNLABELED};
    for (size_t s = 0; s < 5; s++) {
        ompf_profile_t *in[2];
        in[0] = fzt_profile(1, "X,A");
        in[1] = fzt_profile(2, "B,X");
        double v0[2] = {7, 1}, v1[2] = {2, 7.5};
        fzt_xu(in[0], 1, 1, "0.1", 0, v0);
        fzt_xu(in[1], 2, 1, "0.1", 0, v1);
        ompf_profile_t *f;
        ompf_fuse_report_t *rep;
        ompf_error_t err;
        assert_int_equal(fzt_fuse(in, 2, strategies[s], 3, &f, &rep, &err), 0);
        assert_int_equal(ompf_xu_count(f), 1);
        assert_true(fzt_val(f, 0, "X") == 7);
        assert_true(fzt_val(f, 0, "A") == 1);
        assert_true(fzt_val(f, 0, "B") == 2);
        assert_int_equal(ompf_event_get(f, (uint32_t)ompf_event_find(f, "X"))->source, 0);
        assert_int_equal(ompf_event_get(f, (uint32_t)ompf_event_find(f, "B"))->source, 1);
        assert_int_equal(ompf_event_count(f), 3);
        ompf_fuse_report_destroy(rep);
        ompf_profile_destroy(f);
        destroy_all(in, 2);
    }
}

/* BC pairs the XUs with the nearest overlapping counts even when labels
 * and record order say otherwise. */
static void test_bc_nearest(void **state)
{
    (void)state;
    ompf_profile_t *in[2];
    in[0] = fzt_profile(1, "O,A");
    in[1] = fzt_profile(2, "O,B");
    double p[3][2] = {{10, 1}, {20, 2}, {30, 3}};
    const char *pl[3] = {"0.1", "0.2", "0.3"};
    for (int i = 0; i < 3; i++)
        fzt_xu(in[0], 1 + (uint64_t)i, 1, pl[i], (uint64_t)i, p[i]);
    /* cur: O = 31, 9, 19 with labels 0.1, 0.2, 0.3 (i.e. label 0.1 is
     * nearest to prev's 0.3): B = O so the pairing shows. */
    double c[3][2] = {{31, 31}, {9, 9}, {19, 19}};
    for (int i = 0; i < 3; i++)
        fzt_xu(in[1], 11 + (uint64_t)i, 1, pl[i], (uint64_t)i, c[i]);
    for (int lab = 0; lab < 2; lab++) {
        ompf_profile_t *f;
        ompf_fuse_report_t *rep;
        ompf_error_t err;
        assert_int_equal(fzt_fuse(in, 2, lab ? OMPF_FUSE_BC : OMPF_FUSE_BC_UNLABELED,
                                  5, &f, &rep, &err), 0);
        assert_int_equal(ompf_xu_count(f), 3);
        for (size_t i = 0; i < 3; i++) {
            double o = fzt_val(f, i, "O"), b = fzt_val(f, i, "B");
            assert_true(fabs(o - b) <= 1.0);
            assert_true(fzt_val(f, i, "A") * 10 == o); /* prev's O kept */
        }
        /* Combined label = common prefix: prev 0.3 with cur 0.1 -> "0". */
        long k = fzt_find_prov(f, 0, 3);
        assert_true(k >= 0);
        assert_int_equal(ompf_xu_provenance_const(f, (size_t)k)[1], 11);
        char l[32];
        ompf_label_format(f, ompf_xu_get(f, (size_t)k)->label, l, sizeof l);
        assert_string_equal(l, "0");
        assert_true(ompf_fuse_report_iterations(rep) >= 1);
        assert_true(ompf_fuse_report_iterations(rep) <= 8);
        ompf_fuse_report_destroy(rep);
        ompf_profile_destroy(f);
    }
    destroy_all(in, 2);
}

/* Inside one cell BC pairs in label order (not record order). */
static void test_bc_label_order_in_cell(void **state)
{
    (void)state;
    ompf_profile_t *in[2];
    in[0] = fzt_profile(1, "O,A");
    in[1] = fzt_profile(2, "O,B");
    const char *pl[4] = {"0.1", "0.1.2", "0.2", "0.10"};
    for (int i = 0; i < 4; i++) {
        double v[2] = {100, i};
        fzt_xu(in[0], 1 + (uint64_t)i, 1, pl[i], (uint64_t)i, v);
    }
    for (int i = 3; i >= 0; i--) {
        double v[2] = {100, 10 * i};
        fzt_xu(in[1], 11 + (uint64_t)i, 1, pl[i], (uint64_t)(10 - i), v);
    }
    ompf_profile_t *f;
    ompf_fuse_report_t *rep;
    ompf_error_t err;
    assert_int_equal(fzt_fuse(in, 2, OMPF_FUSE_BC, 1, &f, &rep, &err), 0);
    assert_int_equal(ompf_xu_count(f), 4);
    for (size_t i = 0; i < 4; i++) {
        assert_true(fzt_val(f, i, "B") == 10 * fzt_val(f, i, "A"));
        char l[32];
        ompf_label_format(f, ompf_xu_get(f, i)->label, l, sizeof l);
        assert_string_equal(l, pl[(int)fzt_val(f, i, "A")]);
    }
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    destroy_all(in, 2);
}

/* BC-unlabeled: the same seed reproduces the pairing, other seeds give
 * other pairings inside a cell. */
static void pairing_of(ompf_profile_t **in, uint64_t seed, uint64_t *out, size_t n)
{
    ompf_profile_t *f;
    ompf_error_t err;
    assert_int_equal(fzt_fuse(in, 2, OMPF_FUSE_BC_UNLABELED, seed, &f, NULL, &err), 0);
    assert_int_equal(ompf_xu_count(f), n);
    for (size_t i = 0; i < n; i++) {
        const uint64_t *pv = ompf_xu_provenance_const(f, i);
        out[pv[0]] = pv[1];
    }
    ompf_profile_destroy(f);
}

static void test_bc_unlabeled_seed(void **state)
{
    (void)state;
    enum { N = 40 };
    ompf_profile_t *in[2];
    in[0] = fzt_profile(1, "O,A");
    in[1] = fzt_profile(2, "O,B");
    for (int i = 0; i < N; i++) {
        double v[2] = {5, i};
        char l[16];
        snprintf(l, sizeof l, "0.%d", i);
        fzt_xu(in[0], (uint64_t)i, 1, l, 0, v);
        fzt_xu(in[1], (uint64_t)i, 1, l, 0, v);
    }
    uint64_t a[N], b[N], c[N];
    pairing_of(in, 42, a, N);
    pairing_of(in, 42, b, N);
    assert_memory_equal(a, b, sizeof a);
    int differs = 0, identity = 1;
    for (uint64_t s = 1; s < 4; s++) {
        pairing_of(in, s, c, N);
        differs |= memcmp(a, c, sizeof a) != 0;
    }
    for (int i = 0; i < N; i++)
        identity &= a[i] == (uint64_t)i;
    assert_true(differs);
    assert_false(identity); /* labels are not used */
    /* the labelled variant pairs equal labels here */
    ompf_profile_t *f;
    ompf_error_t err;
    assert_int_equal(fzt_fuse(in, 2, OMPF_FUSE_BC, 42, &f, NULL, &err), 0);
    for (size_t i = 0; i < N; i++) {
        const uint64_t *pv = ompf_xu_provenance_const(f, i);
        assert_int_equal(pv[0], pv[1]);
    }
    ompf_profile_destroy(f);
    destroy_all(in, 2);
}

/* Random control: reproducible with a seed, all XUs paired within types. */
static void test_random_seeded(void **state)
{
    (void)state;
    enum { N = 30 };
    ompf_profile_t *in[2];
    in[0] = fzt_profile(1, "A");
    in[1] = fzt_profile(2, "B");
    for (int i = 0; i < N; i++) {
        double v = i;
        fzt_xu(in[0], (uint64_t)i, 1 + i % 2, "0.1", 0, &v);
        fzt_xu(in[1], (uint64_t)i, 1 + i % 2, "0.1", 0, &v);
    }
    ompf_profile_t *f1, *f2;
    ompf_error_t err;
    assert_int_equal(fzt_fuse(in, 2, OMPF_FUSE_RANDOM, 9, &f1, NULL, &err), 0);
    assert_int_equal(fzt_fuse(in, 2, OMPF_FUSE_RANDOM, 9, &f2, NULL, &err), 0);
    assert_int_equal(ompf_profile_compare(f1, f2, &err), 0);
    int moved = 0;
    for (size_t i = 0; i < N; i++) {
        const uint64_t *pv = ompf_xu_provenance_const(f1, i);
        assert_int_equal(pv[0] % 2, pv[1] % 2); /* same type */
        moved += pv[0] != pv[1];
    }
    assert_true(moved > N / 2);
    ompf_profile_destroy(f1);
    ompf_profile_destroy(f2);
    destroy_all(in, 2);
}

static int has_note(const ompf_fuse_report_t *r, const char *needle)
{
    for (size_t i = 0; i < ompf_fuse_report_n_notes(r); i++)
        if (strstr(ompf_fuse_report_note(r, i), needle))
            return 1;
    return 0;
}

/* A run of /DIR/prog whose program module has build-id bid. */
static ompf_profile_t *moved_run(uint64_t id, const char *events, const char *path,
                                 const char *argv0, const char *bid)
{
    ompf_profile_t *p = fzt_profile(id, events);
    char argv[256];
    snprintf(argv, sizeof argv, "%s\x1f-n\x1f" "10", argv0);
    FZT_CHECK(ompf_meta_set(p, "program", path));
    FZT_CHECK(ompf_meta_set(p, "argv", argv));
    ompf_construct_t c;
    memset(&c, 0, sizeof c);
    c.module = path;
    c.build_id = bid;
    c.offset = 0x1234;
    c.kind = OMPF_CK_PARALLEL;
    FZT_CHECK(ompf_construct_add(p, &c, NULL));
    double v[2] = {1, 1};
    fzt_xu(p, 1, 1, "0.1", 0, v);
    return p;
}

/* One executable at two paths (same file name and build-id) is one
 * program; another build, another name or other arguments are not. */
static void test_program_moved(void **state)
{
    (void)state;
    static const struct {
        const char *path_b, *argv0_b, *bid_b;
        int ok;
    } cases[] = {
        {"/node/tmp/prog", "/node/tmp/prog", "abc123", 1}, /* staged copy */
        {"/node/tmp/prog", "./prog", "abc123", 1},         /* argv[0] by file name */
        {"/node/tmp/prog", "/node/tmp/prog", "def456", 0}, /* another build */
        {"/node/tmp/prog2", "/node/tmp/prog2", "abc123", 0}, /* another name */
        {"/node/tmp/prog", "/node/tmp/prog", "", 0},       /* build-id unknown */
        {"/node/tmp/prog", "/node/tmp/other", "abc123", 0}, /* argv[0] differs */
    };
    const char *paths[2] = {"a.ompf", "b.ompf"};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        ompf_profile_t *in[2];
        in[0] = moved_run(1, "A,O", "/home/u/prog", "/home/u/prog", "abc123");
        in[1] = moved_run(2, "B,O", cases[k].path_b, cases[k].argv0_b, cases[k].bid_b);
        ompf_profile_t *f = NULL;
        ompf_fuse_report_t *rep = NULL;
        ompf_error_t err;
        ompf_fuse_opts_t o;
        ompf_fuse_opts_init(&o);
        int rc = ompf_fuse((const ompf_profile_t *const *)in, paths, 2, &o, &f, &rep, &err);
        if (cases[k].ok) {
            assert_int_equal(rc, 0);
            assert_true(has_note(rep, "a.ompf and b.ompf record one program at two paths "
                                      "(/home/u/prog, /node/tmp/prog; the same build-id "
                                      "abc123)"));
            assert_false(has_note(rep, "forced"));
            assert_string_equal(ompf_meta_get(f, "forced"), "0");
        } else {
            assert_int_equal(rc, OMPF_EMISMATCH);
            assert_non_null(strstr(err.msg, "differ in program"));
        }
        ompf_fuse_report_destroy(rep);
        ompf_profile_destroy(f);
        ompf_profile_destroy(in[0]);
        ompf_profile_destroy(in[1]);
    }
}

/* Input checks: clear errors and notes. */
static void test_input_checks(void **state)
{
    (void)state;
    ompf_profile_t *in[3];
    in[0] = fzt_profile(1, "A,O");
    in[1] = fzt_profile(2, "B,O");
    in[2] = fzt_profile(3, "C");
    double v[2] = {1, 1};
    for (int r = 0; r < 3; r++)
        fzt_xu(in[r], 1, 1, "0.1", 0, v);
    ompf_profile_t *f;
    ompf_fuse_report_t *rep;
    ompf_error_t err;
    ompf_fuse_opts_t o;
    const char *paths[3] = {"a.ompf", "b.ompf", "c.ompf"};
    const ompf_profile_t *const *cin = (const ompf_profile_t *const *)in;

    ompf_fuse_opts_init(&o);
    assert_int_equal(ompf_fuse(cin, paths, 1, &o, &f, NULL, &err), OMPF_EINVAL);
    assert_non_null(strstr(err.msg, "at least two"));

    /* different program: refused, unless forced (and recorded) */
    FZT_CHECK(ompf_meta_set(in[1], "program", "other"));
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, NULL, &err), OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "b.ompf"));
    assert_non_null(strstr(err.msg, "program"));
    assert_non_null(strstr(err.msg, "--force"));
    o.force = 1;
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, &rep, &err), 0);
    assert_string_equal(ompf_meta_get(f, "forced"), "1");
    assert_non_null(strstr(ompf_meta_get(f, "forced_checks"), "program"));
    assert_true(has_note(rep, "forced"));
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    o.force = 0;
    FZT_CHECK(ompf_meta_set(in[1], "program", "prog"));

    /* argv differs: refused naming both inputs, unless forced (and
     * recorded) */
    FZT_CHECK(ompf_meta_set(in[1], "argv", "prog\x1f-n\x1f" "20"));
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, NULL, &err), OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "a.ompf"));
    assert_non_null(strstr(err.msg, "b.ompf"));
    assert_non_null(strstr(err.msg, "argv"));
    assert_non_null(strstr(err.msg, "'prog -n 10' vs 'prog -n 20'"));
    assert_non_null(strstr(err.msg, "--force"));
    o.force = 1;
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, &rep, &err), 0);
    assert_string_equal(ompf_meta_get(f, "forced"), "1");
    assert_string_equal(ompf_meta_get(f, "forced_checks"), "argv");
    assert_true(has_note(rep, "forced: a.ompf and b.ompf differ in argv"));
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    o.force = 0;
    FZT_CHECK(ompf_meta_set(in[1], "argv", "prog\x1f-n\x1f" "10"));
    /* every key recorded and equal: no "cannot be checked" note */
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, &rep, &err), 0);
    assert_false(has_note(rep, "cannot be checked"));
    assert_false(has_note(rep, "forced"));
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);

    /* team size differs */
    FZT_CHECK(ompf_meta_set(in[1], "team_size", "8"));
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, NULL, &err), OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "team_size"));
    FZT_CHECK(ompf_meta_set(in[1], "team_size", "4"));

    /* duplicated run id */
    FZT_CHECK(ompf_profile_set_run_id(in[1], 1));
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, NULL, &err), OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "same run id"));
    FZT_CHECK(ompf_profile_set_run_id(in[1], 2));

    /* different CPU model: warning, refused with strict */
    FZT_CHECK(ompf_meta_set(in[1], "cpu_model", "Other CPU"));
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, &rep, &err), 0);
    assert_true(has_note(rep, "different CPU models"));
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    o.strict = 1;
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, NULL, &err), OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "CPU"));
    o.strict = 0;
    FZT_CHECK(ompf_meta_set(in[1], "cpu_model", "Test CPU"));

    /* a fused input is allowed, and said so */
    FZT_CHECK(ompf_meta_set(in[1], "mode", OMPF_MODE_FUSED));
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, &rep, &err), 0);
    assert_true(has_note(rep, "itself a fused profile"));
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    FZT_CHECK(ompf_meta_set(in[1], "mode", OMPF_MODE_RUN));

    /* BC: input 2 (C) shares no event with A,O + B,O: an order that
     * starts from it cannot exist either. */
    o.strategy = OMPF_FUSE_BC;
    o.order_given = 1;
    assert_int_equal(ompf_fuse(cin, paths, 3, &o, &f, NULL, &err), OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "c.ompf"));
    o.order_given = 0;
    assert_int_equal(ompf_fuse(cin, paths, 3, &o, &f, NULL, &err), OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "c.ompf"));
    assert_non_null(strstr(err.msg, "no valid order"));

    /* a valid order exists but not the given one: C,O | A,B | B,O */
    ompf_profile_t *in2[3];
    in2[0] = fzt_profile(11, "C,O");
    in2[1] = fzt_profile(12, "A,B");
    in2[2] = fzt_profile(13, "B,O");
    for (int r = 0; r < 3; r++)
        fzt_xu(in2[r], 1, 1, "0.1", 0, v);
    const ompf_profile_t *const *cin2 = (const ompf_profile_t *const *)in2;
    o.order_given = 1;
    assert_int_equal(ompf_fuse(cin2, paths, 3, &o, &f, NULL, &err), OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "b.ompf"));
    assert_non_null(strstr(err.msg, "--order auto"));
    o.order_given = 0;
    assert_int_equal(ompf_fuse(cin2, paths, 3, &o, &f, &rep, &err), 0);
    const uint32_t *ord = ompf_fuse_report_order(rep);
    assert_int_equal(ord[0], 0);
    assert_int_equal(ord[1], 2);
    assert_int_equal(ord[2], 1);
    assert_true(has_note(rep, "valid order"));
    assert_int_equal(ompf_xu_count(f), 1);
    /* B comes from input 2 (earlier in the BC order than input 1) */
    assert_int_equal(ompf_event_get(f, (uint32_t)ompf_event_find(f, "B"))->source, 2);
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    destroy_all(in2, 3);

    /* an event that failed in every input */
    ompf_profile_t *in3[2];
    in3[0] = fzt_profile(21, "A,Z");
    in3[1] = fzt_profile(22, "B,Z");
    for (int r = 0; r < 2; r++) {
        FZT_CHECK(ompf_event_set_status(in3[r], 1, OMPF_EV_FAILED, "no PMU"));
        double w[2] = {1, OMPF_MISSING};
        fzt_xu(in3[r], 1, 1, "0.1", 0, w);
    }
    o.strategy = OMPF_FUSE_LGL;
    assert_int_equal(ompf_fuse((const ompf_profile_t *const *)in3, paths, 2, &o,
                               &f, &rep, &err), 0);
    assert_true(has_note(rep, "Z was not measured by any input"));
    const ompf_event_t *z = ompf_event_get(f, (uint32_t)ompf_event_find(f, "Z"));
    assert_int_equal(z->status, OMPF_EV_FAILED);
    assert_int_equal(z->source, -1);
    assert_true(ompf_is_missing(fzt_val(f, 0, "Z")));
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    destroy_all(in3, 2);

    /* team_size not recorded in one input (CSV import, truncated run):
     * noted, not refused. */
    ompf_profile_t *in4[2];
    in4[0] = fzt_profile(31, "A");
    FZT_CHECK(ompf_profile_create(&in4[1]));
    FZT_CHECK(ompf_meta_set(in4[1], "program", "prog"));
    FZT_CHECK(ompf_meta_set(in4[1], "argv", "prog\x1f-n\x1f" "10"));
    FZT_CHECK(ompf_meta_set(in4[1], "cpu_model", "Test CPU"));
    {
        ompf_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.name = "B";
        ev.source = -1;
        FZT_CHECK(ompf_event_add(in4[1], &ev, NULL));
    }
    for (int r = 0; r < 2; r++)
        fzt_xu(in4[r], 1, 1, "0.1", 0, v);
    assert_int_equal(ompf_fuse((const ompf_profile_t *const *)in4, paths, 2, &o,
                               &f, &rep, &err), 0);
    assert_true(has_note(rep, "team_size is not recorded in b.ompf"));
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    destroy_all(in4, 2);
    destroy_all(in, 3);
}

/* A profile without any of the compared metadata (as `ompfuse import`
 * without --program writes): each key gets one "cannot be checked" note
 * instead of passing as NULL == NULL. */
static void test_unrecorded_keys_noted(void **state)
{
    (void)state;
    ompf_profile_t *in[2];
    for (int r = 0; r < 2; r++) {
        FZT_CHECK(ompf_profile_create(&in[r]));
        ompf_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.name = r ? "B" : "A";
        ev.source = -1;
        FZT_CHECK(ompf_event_add(in[r], &ev, NULL));
        FZT_CHECK(ompf_profile_set_run_id(in[r], 40 + (uint64_t)r));
        double v = r + 1;
        fzt_xu(in[r], 1, 1, "0.1", 0, &v);
    }
    /* program recorded in one input only: "not recorded in" that one */
    FZT_CHECK(ompf_meta_set(in[1], "program", "prog"));
    const char *paths[2] = {"a.ompf", "b.ompf"};
    ompf_fuse_opts_t o;
    ompf_fuse_opts_init(&o);
    ompf_profile_t *f;
    ompf_fuse_report_t *rep;
    ompf_error_t err;
    assert_int_equal(ompf_fuse((const ompf_profile_t *const *)in, paths, 2, &o,
                               &f, &rep, &err), 0);
    assert_true(has_note(rep, "argv not recorded in any input: cannot be checked"));
    assert_true(has_note(rep, "team_size not recorded in any input: cannot be checked"));
    assert_true(has_note(rep, "cpu_model not recorded in any input: cannot be checked"));
    assert_false(has_note(rep, "program not recorded in any input"));
    assert_true(has_note(rep, "program is not recorded in a.ompf"));
    size_t n_argv = 0;
    for (size_t i = 0; i < ompf_fuse_report_n_notes(rep); i++)
        n_argv += strstr(ompf_fuse_report_note(rep, i), "argv") != NULL;
    assert_int_equal(n_argv, 1);
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    destroy_all(in, 2);
}

/* The same file given twice is refused (whatever the run ids: imported
 * profiles have run id 0), naming both arguments; --force records it.
 * Distinct inputs with run id 0 and identical values are noted. */
static void test_duplicate_inputs(void **state)
{
    (void)state;
    const char *file = "fz_dup_input.ompf";
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fputs("x", fp);
    fclose(fp);
    ompf_profile_t *in[2];
    in[0] = fzt_profile(0, "A");
    in[1] = fzt_profile(0, "B");
    double v = 1, w = 2;
    fzt_xu(in[0], 1, 1, "0.1", 0, &v);
    fzt_xu(in[1], 1, 1, "0.1", 0, &w);
    const ompf_profile_t *const *cin = (const ompf_profile_t *const *)in;
    const char *paths[2] = {"fz_dup_input.ompf", "./fz_dup_input.ompf"};
    ompf_fuse_opts_t o;
    ompf_fuse_opts_init(&o);
    ompf_profile_t *f;
    ompf_fuse_report_t *rep;
    ompf_error_t err;
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, NULL, &err), OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "fz_dup_input.ompf (input 1)"));
    assert_non_null(strstr(err.msg, "./fz_dup_input.ompf (input 2)"));
    assert_non_null(strstr(err.msg, "same file"));
    assert_non_null(strstr(err.msg, "--force"));
    o.force = 1;
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, &rep, &err), 0);
    assert_string_equal(ompf_meta_get(f, "forced"), "1");
    assert_string_equal(ompf_meta_get(f, "forced_checks"), "same_file");
    assert_true(has_note(rep, "forced: fz_dup_input.ompf (input 1) and "
                              "./fz_dup_input.ompf (input 2) are the same file"));
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    o.force = 0;

    /* Paths that do not exist (display names only) are not compared. */
    const char *names[2] = {"x.ompf", "x.ompf"};
    assert_int_equal(ompf_fuse(cin, names, 2, &o, &f, &rep, &err), 0);
    assert_false(has_note(rep, "identical XU values"));
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);

    /* Distinct inputs, run id 0, identical values: noted, not refused. */
    *ompf_xu_values(in[1], 0) = 1;
    const char *two[2] = {"a.ompf", "b.ompf"};
    assert_int_equal(ompf_fuse(cin, two, 2, &o, &f, &rep, &err), 0);
    assert_true(has_note(rep, "a.ompf and b.ompf have no run id and identical "
                              "XU values"));
    assert_string_equal(ompf_meta_get(f, "forced"), "0");
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    /* ... but only without run ids: distinct run ids are distinct runs. */
    FZT_CHECK(ompf_profile_set_run_id(in[0], 5));
    FZT_CHECK(ompf_profile_set_run_id(in[1], 6));
    assert_int_equal(ompf_fuse(cin, two, 2, &o, &f, &rep, &err), 0);
    assert_false(has_note(rep, "identical XU values"));
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    /* the same file with distinct run ids is still the same file */
    assert_int_equal(ompf_fuse(cin, paths, 2, &o, &f, NULL, &err), OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "same file"));
    remove(file);
    destroy_all(in, 2);
}

/* An event marked counted whose values are all missing (an all-empty CSV
 * column) is not provided by that input: the next input with values
 * provides it; with none, it is "measured by no input". */
static void test_event_without_values(void **state)
{
    (void)state;
    int strategies[] = {OMPF_FUSE_CTC, OMPF_FUSE_LGL, OMPF_FUSE_RANDOM,
                        OMPF_FUSE_BC, OMPF_FUSE_BC_UNLABELED};
    for (size_t s = 0; s < 5; s++) {
        ompf_profile_t *in[3];
        in[0] = fzt_profile(1, "O,E,A,N");
        in[1] = fzt_profile(2, "O,B,N");
        in[2] = fzt_profile(3, "O,E");
        double m = OMPF_MISSING;
        double v0[4] = {7, m, 1, m}, v1[3] = {7, 2, m}, v2[2] = {7, 30};
        fzt_xu(in[0], 1, 1, "0.1", 0, v0);
        fzt_xu(in[1], 2, 1, "0.1", 0, v1);
        fzt_xu(in[2], 3, 1, "0.1", 0, v2);
        const char *paths[3] = {"a.ompf", "b.ompf", "c.ompf"};
        ompf_fuse_opts_t o;
        ompf_fuse_opts_init(&o);
        o.strategy = strategies[s];
        ompf_profile_t *f;
        ompf_fuse_report_t *rep;
        ompf_error_t err;
        assert_int_equal(ompf_fuse((const ompf_profile_t *const *)in, paths, 3,
                                   &o, &f, &rep, &err), 0);
        assert_int_equal(ompf_xu_count(f), 1);
        /* E: counted in a.ompf but empty there: from c.ompf */
        const ompf_event_t *e = ompf_event_get(f, (uint32_t)ompf_event_find(f, "E"));
        assert_int_equal(e->source, 2);
        assert_int_equal(e->status, OMPF_EV_COUNTED);
        assert_true(fzt_val(f, 0, "E") == 30);
        assert_int_equal(ompf_xu_provenance_const(f, 0)[2], 3);
        assert_true(has_note(rep, "event E is marked counted in a.ompf, but no "
                                  "XU there has a value for it: its values "
                                  "come from c.ompf"));
        /* N: empty everywhere: measured by no input */
        const ompf_event_t *nv = ompf_event_get(f, (uint32_t)ompf_event_find(f, "N"));
        assert_int_equal(nv->source, -1);
        assert_int_equal(nv->status, OMPF_EV_FAILED);
        assert_true(ompf_is_missing(fzt_val(f, 0, "N")));
        assert_true(has_note(rep, "event N was not measured by any input "
                                  "(marked counted in a.ompf, b.ompf"));
        assert_true(fzt_val(f, 0, "A") == 1);
        assert_true(fzt_val(f, 0, "B") == 2);
        ompf_fuse_report_destroy(rep);
        ompf_profile_destroy(f);
        destroy_all(in, 3);
    }
}

/* Non-deterministic program: different XU counts per type; types missing
 * from a run are reported. */
static void test_nondeterministic_counts(void **state)
{
    (void)state;
    int strategies[] = {OMPF_FUSE_CTC, OMPF_FUSE_BC, OMPF_FUSE_BC_UNLABELED,
                        OMPF_FUSE_RANDOM};
    for (size_t s = 0; s < 4; s++) {
        ompf_profile_t *in[2];
        in[0] = fzt_profile(1, "O,A");
        in[1] = fzt_profile(2, "O,B");
        for (int i = 0; i < 7; i++) {
            double v[2] = {i, i};
            fzt_xu(in[0], (uint64_t)i, 1, "0.1", (uint64_t)i, v);
        }
        for (int i = 0; i < 4; i++) {
            double v[2] = {i, i};
            fzt_xu(in[1], (uint64_t)i, 1, "0.1", (uint64_t)i, v);
        }
        double v[2] = {1, 1};
        fzt_xu(in[1], 99, 2, "0.2", 0, v); /* type only in run 1 */
        ompf_profile_t *f;
        ompf_fuse_report_t *rep;
        ompf_error_t err;
        assert_int_equal(fzt_fuse(in, 2, strategies[s], 1, &f, &rep, &err), 0);
        assert_int_equal(ompf_xu_count(f), 4);
        assert_int_equal(ompf_fuse_report_unmatched(rep, 0), 3);
        assert_int_equal(ompf_fuse_report_unmatched(rep, 1), 1);
        assert_true(has_note(rep, "missing from"));
        ompf_fuse_report_destroy(rep);
        ompf_profile_destroy(f);
        destroy_all(in, 2);
    }
}

/* BC scales: the number of grid iterations is bounded by the bit length
 * of the finest division (values in [0, 2^20): at most 21 levels + 1). */
static void test_bc_iterations_bounded(void **state)
{
    (void)state;
    enum { N = 20000 };
    ompf_profile_t *in[2];
    in[0] = fzt_profile(1, "O1,O2,A");
    in[1] = fzt_profile(2, "O1,O2,B");
    uint64_t s = 77;
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < N; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            double v[3] = {(double)((s >> 20) & 0xfffff),
                           (double)((s >> 40) & 0xfffff), i};
            char l[32];
            snprintf(l, sizeof l, "0.%d", i);
            fzt_xu(in[r], (uint64_t)i, 1, l, 0, v);
        }
    ompf_profile_t *f;
    ompf_fuse_report_t *rep;
    ompf_error_t err;
    assert_int_equal(fzt_fuse(in, 2, OMPF_FUSE_BC, 1, &f, &rep, &err), 0);
    assert_int_equal(ompf_xu_count(f), N);
    uint32_t it = ompf_fuse_report_iterations(rep);
    assert_true(it >= 2);
    assert_true(it <= 22);
    /* Pairs are close: the mean |O1 difference| is far below the mean
     * difference of random pairs (range / 3). */
    double sum = 0;
    for (size_t i = 0; i < N; i++) {
        const uint64_t *pv = ompf_xu_provenance_const(f, i);
        double a = ompf_xu_values_const(in[0], pv[0])[0];
        double b = ompf_xu_values_const(in[1], pv[1])[0];
        assert_true(fzt_val(f, i, "O1") == a);
        sum += fabs(a - b);
    }
    assert_true(sum / N < 1048576.0 / 3 / 10);
    ompf_fuse_report_destroy(rep);
    ompf_profile_destroy(f);
    destroy_all(in, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lgl_by_label),
        cmocka_unit_test(test_lgl_unmatched_and_duplicates),
        cmocka_unit_test(test_ctc_start_order),
        cmocka_unit_test(test_ctc_ties_wide),
        cmocka_unit_test(test_ctc_many_runs),
        cmocka_unit_test(test_first_run_wins),
        cmocka_unit_test(test_bc_nearest),
        cmocka_unit_test(test_bc_label_order_in_cell),
        cmocka_unit_test(test_bc_unlabeled_seed),
        cmocka_unit_test(test_random_seeded),
        cmocka_unit_test(test_input_checks),
        cmocka_unit_test(test_program_moved),
        cmocka_unit_test(test_unrecorded_keys_noted),
        cmocka_unit_test(test_duplicate_inputs),
        cmocka_unit_test(test_event_without_values),
        cmocka_unit_test(test_nondeterministic_counts),
        cmocka_unit_test(test_bc_iterations_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
