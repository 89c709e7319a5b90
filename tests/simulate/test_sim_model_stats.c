/* Statistics of the simulated truth: the model does what docs/simulator.md
 * says ("The model").  Thresholds are stated next to each assertion;
 * docs/simulator.md ("Model statistics") lists the measured values. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ompfuse/simulate.h"

/* A simulated truth of `runs` runs (every event of every XU), with XUs of
 * every run indexed by label so that runs can be compared XU by XU. */
typedef struct truth {
    ompf_sim_model_t *m;
    ompf_sim_output_t out;
    uint32_t X, E, T, runs;
    size_t *at;    /* runs x X: truth XU index of XU x (label order) in run k */
    uint32_t *type; /* X */
} truth_t;

static void truth_make(truth_t *t, const char *spec, const char *const *sets, uint32_t runs,
                       uint64_t seed)
{
    ompf_error_t err = {0, ""};
    memset(t, 0, sizeof *t);
    assert_int_equal(ompf_sim_model_load(spec, &t->m, &err), 0);
    for (size_t i = 0; sets && sets[i]; i += 2)
        if (ompf_sim_model_set(t->m, sets[i], sets[i + 1], &err))
            fail_msg("%s", err.msg);
    char plan_text[64];
    snprintf(plan_text, sizeof plan_text, "run %u ev0\n", runs);
    ompf_sim_plan_t *plan;
    if (ompf_sim_plan_parse(plan_text, "stats", t->m, &plan, &err))
        fail_msg("%s", err.msg);
    if (ompf_sim_generate(t->m, plan, seed, OMPF_SIM_TRUTH_ALL, &t->out, &err))
        fail_msg("%s", err.msg);
    ompf_sim_plan_destroy(plan);
    const ompf_profile_t *tr = t->out.truth;
    t->X = ompf_sim_model_xu_count(t->m);
    t->E = ompf_sim_model_event_count(t->m);
    t->T = (uint32_t)(ompf_thread_count(tr) / runs);
    t->runs = runs;
    assert_int_equal(ompf_xu_count(tr), (size_t)t->X * runs);
    /* Labels are shared by the runs of the truth: label node -> dense XU. */
    size_t nl = ompf_label_count(tr);
    uint32_t *dense = malloc(nl * sizeof *dense);
    t->at = malloc((size_t)runs * t->X * sizeof *t->at);
    t->type = malloc(t->X * sizeof *t->type);
    assert_true(dense && t->at && t->type);
    for (size_t i = 0; i < nl; i++)
        dense[i] = UINT32_MAX;
    uint32_t next = 0;
    for (size_t i = 0; i < ompf_xu_count(tr); i++) {
        const ompf_xu_t *xu = ompf_xu_get(tr, i);
        uint32_t k = (uint32_t)(xu->id >> 32);
        assert_true(k < runs);
        if (dense[xu->label] == UINT32_MAX) {
            assert_true(next < t->X);
            t->type[next] = xu->type;
            dense[xu->label] = next++;
        }
        t->at[(size_t)k * t->X + dense[xu->label]] = i;
    }
    assert_int_equal(next, t->X); /* every run has the same XUs */
    free(dense);
}

static void truth_free(truth_t *t)
{
    free(t->at);
    free(t->type);
    ompf_sim_output_free(&t->out);
    ompf_sim_model_destroy(t->m);
}

static const double *val(const truth_t *t, uint32_t k, uint32_t x)
{
    return ompf_xu_values_const(t->out.truth, t->at[(size_t)k * t->X + x]);
}

static const ompf_xu_t *xu_of(const truth_t *t, uint32_t k, uint32_t x)
{
    return ompf_xu_get(t->out.truth, t->at[(size_t)k * t->X + x]);
}

static double pearson(const double *a, const double *b, size_t n)
{
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; i++) {
        ma += a[i] / (double)n;
        mb += b[i] / (double)n;
    }
    for (size_t i = 0; i < n; i++) {
        sab += (a[i] - ma) * (b[i] - mb);
        saa += (a[i] - ma) * (a[i] - ma);
        sbb += (b[i] - mb) * (b[i] - mb);
    }
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0;
}

static const double *rank_key;
static int cmp_rank(const void *p, const void *q)
{
    double a = rank_key[*(const size_t *)p], b = rank_key[*(const size_t *)q];
    return a < b ? -1 : a > b;
}

/* Ranks with ties averaged (thread numbers tie a lot). */
static void ranks(const double *v, size_t n, double *r)
{
    size_t *idx = malloc(n * sizeof *idx);
    assert_non_null(idx);
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    rank_key = v;
    qsort(idx, n, sizeof *idx, cmp_rank);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && v[idx[j + 1]] == v[idx[i]])
            j++;
        for (size_t k = i; k <= j; k++)
            r[idx[k]] = 0.5 * (double)(i + j);
        i = j + 1;
    }
    free(idx);
}

static double spearman(const double *a, const double *b, size_t n)
{
    double *ra = malloc(n * sizeof *ra), *rb = malloc(n * sizeof *rb);
    assert_true(ra && rb);
    ranks(a, n, ra);
    ranks(b, n, rb);
    double c = pearson(ra, rb, n);
    free(ra);
    free(rb);
    return c;
}

/* log(1 + value) of event e over the XUs of run k. */
static void log_event(const truth_t *t, uint32_t k, uint32_t e, double *out)
{
    for (uint32_t x = 0; x < t->X; x++)
        out[x] = log1p(fmax(val(t, k, x)[e], 0));
}

/* Near duplicates correlate almost perfectly; weak events hardly. */
static void test_event_correlations(void **state)
{
    (void)state;
    const char *sets[] = {"xus", "3000", NULL};
    truth_t t;
    truth_make(&t, "builtin:high", sets, 1, 1);
    double *a = malloc(t.X * sizeof *a), *b = malloc(t.X * sizeof *b);
    assert_true(a && b);
    int dups = 0, weak = 0;
    double dup_min = 1, weak_max = 0;
    for (uint32_t e = 0; e < t.E; e++) {
        char nm[80];
        ompf_sim_event_name(t.m, e, nm, sizeof nm);
        unsigned src = 0;
        /* E03 l2_dca duplicates E02 l1_dcm, E08 ref_cycles E00 cycles,
         * "_dup_ENN" events their ENN. */
        const char *d = strstr(nm, "_dup_E");
        int is_dup = e == 3 || e == 8 || (d && sscanf(d, "_dup_E%u", &src) == 1);
        if (e == 3)
            src = 2;
        if (e == 8)
            src = 0;
        if (is_dup) {
            log_event(&t, 0, e, a);
            log_event(&t, 0, src, b);
            double c = pearson(a, b, t.X);
            printf("  dup  %-22s vs E%02u: r = %.5f\n", nm, src, c);
            dup_min = fmin(dup_min, c);
            dups++;
        } else if (strstr(nm, "_weak")) {
            log_event(&t, 0, e, a);
            for (uint32_t f = 0; f < 2; f++) { /* cycles, instructions */
                log_event(&t, 0, f, b);
                double c = fabs(pearson(a, b, t.X));
                printf("  weak %-22s vs E%02u: |r| = %.3f\n", nm, f, c);
                weak_max = fmax(weak_max, c);
            }
            weak++;
        }
    }
    printf("near duplicates: %d, min r %.5f; weak events: %d, max |r| %.3f\n", dups, dup_min,
           weak, weak_max);
    assert_int_equal(dups, 4);       /* dup_events = 4 */
    assert_int_equal(weak, 4);       /* weak_events = 4 */
    assert_true(dup_min > 0.95);     /* near duplicates: r > 0.95 in log */
    assert_true(weak_max < 0.5);     /* weakly related: |r| < 0.5 in log */
    free(a);
    free(b);
    truth_free(&t);
}

/* A share alt_share of XUs behaves differently in each run: their memory
 * intensity (l1_dcm per instruction) is alt_mem times that of the XU's
 * normal runs.  With little other variability the share is measurable XU
 * by XU: an XU-run is "different" when its log(l1_dcm / instructions)
 * exceeds the XU's lowest over the runs by more than log(alt_mem) / 2.
 * Expected: alt_share - alt_share^runs (an XU different in every run has
 * no normal run to compare with). */
static void test_alt_share(void **state)
{
    (void)state;
    const char *sets[] = {"xus", "2000", "alt_share", "0.25", "alt_mem", "3", NULL};
    const uint32_t R = 6;
    truth_t t;
    truth_make(&t, "builtin:low", sets, R, 3);
    uint64_t diff = 0;
    double *lm = malloc(R * sizeof *lm);
    assert_non_null(lm);
    for (uint32_t x = 0; x < t.X; x++) {
        double lo = INFINITY;
        for (uint32_t k = 0; k < R; k++) {
            const double *v = val(&t, k, x);
            lm[k] = log(fmax(v[2], 1)) - log(fmax(v[1], 1));
            lo = fmin(lo, lm[k]);
        }
        for (uint32_t k = 0; k < R; k++)
            diff += lm[k] - lo > 0.5 * log(3.0);
    }
    double share = (double)diff / ((double)t.X * R), want = 0.25 - pow(0.25, R);
    printf("XU-runs behaving differently: %.4f (expected %.4f)\n", share, want);
    assert_true(fabs(share - want) < 0.02); /* tolerance 0.02 (5 standard errors) */
    free(lm);
    truth_free(&t);
}

/* Per run, execution order, thread numbering and CPUs are shuffled on
 * `high` (order_jitter 1, thread_shuffle 1) and kept on `zero`. */
static void shuffle_stats(const char *spec, double *rho_order, double *rho_thread,
                          double *rho_cpu, double *same_thread)
{
    const char *sets[] = {"xus", "3000", NULL};
    truth_t t;
    truth_make(&t, spec, sets, 2, 1);
    double *a = malloc(t.X * sizeof *a), *b = malloc(t.X * sizeof *b);
    double *c = malloc(t.X * sizeof *c), *d = malloc(t.X * sizeof *d);
    double *e = malloc(t.X * sizeof *e), *f = malloc(t.X * sizeof *f);
    assert_true(a && b && c && d && e && f);
    uint64_t same = 0;
    for (uint32_t x = 0; x < t.X; x++) {
        const ompf_xu_t *p = xu_of(&t, 0, x), *q = xu_of(&t, 1, x);
        a[x] = (double)(uint32_t)p->id; /* position in the execution order */
        b[x] = (double)(uint32_t)q->id;
        c[x] = (double)p->thread;       /* run 0: threads 0..T-1 */
        d[x] = (double)(q->thread - t.T); /* run 1: threads T..2T-1 */
        e[x] = (double)p->cpu;
        f[x] = (double)q->cpu;
        same += c[x] == d[x];
    }
    *rho_order = spearman(a, b, t.X);
    *rho_thread = spearman(c, d, t.X);
    *rho_cpu = spearman(e, f, t.X);
    *same_thread = (double)same / t.X;
    printf("%s: rank correlation between two runs: order %.4f, thread %.4f, cpu %.4f; "
           "same thread %.4f (1/T = %.4f)\n",
           spec, *rho_order, *rho_thread, *rho_cpu, *same_thread, 1.0 / t.T);
    free(a);
    free(b);
    free(c);
    free(d);
    free(e);
    free(f);
    truth_free(&t);
}

static void test_shuffles(void **state)
{
    (void)state;
    double o, th, cpu, same;
    shuffle_stats("builtin:high", &o, &th, &cpu, &same);
    assert_true(fabs(o) < 0.1);   /* order shuffled: |rho| < 0.1 */
    assert_true(fabs(th) < 0.1);  /* thread numbering permuted */
    assert_true(fabs(cpu) < 0.1); /* CPUs permuted */
    assert_true(same < 0.05);     /* ~1/192 of XUs keep their thread */
    /* Control: without variability nothing moves. */
    shuffle_stats("builtin:zero", &o, &th, &cpu, &same);
    assert_true(o == 1 && th == 1 && cpu == 1 && same == 1);
}

/* Multi-modality: per type, log(instructions) of one run, split in two at
 * the best 2-means cut (each side at least 5% of the type's XUs); the
 * type is bimodal when Ashman's D = sqrt(2) |m1 - m2| / sqrt(s1^2 + s2^2)
 * of the two sides exceeds 3.8 (a normal sample cut this way gives about
 * 3.2; D > 2 is the usual criterion of a clean separation) and the
 * bimodality coefficient (skew^2 + 1) / kurtosis exceeds 5/9 (the value
 * of a uniform distribution; a normal gives 1/3).  Returns the number of
 * types with at least 60 XUs and, of those, the bimodal ones. */
static int bimodal_types(const truth_t *t, int *big, double *best_d)
{
    int n_bimodal = 0;
    *big = 0;
    *best_d = 0;
    double *v = malloc(t->X * sizeof *v);
    assert_non_null(v);
    uint32_t T = 0;
    for (uint32_t x = 0; x < t->X; x++)
        T = t->type[x] + 1 > T ? t->type[x] + 1 : T;
    for (uint32_t ty = 0; ty < T; ty++) {
        size_t n = 0;
        for (uint32_t x = 0; x < t->X; x++)
            if (t->type[x] == ty)
                v[n++] = log(fmax(val(t, 0, x)[1], 1));
        if (n < 60)
            continue;
        (*big)++;
        /* insertion sort of the type's values */
        for (size_t i = 1; i < n; i++) {
            double key = v[i];
            size_t j = i;
            while (j > 0 && v[j - 1] > key) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = key;
        }
        double mean = 0, m2 = 0, m3 = 0, m4 = 0;
        for (size_t i = 0; i < n; i++)
            mean += v[i] / (double)n;
        for (size_t i = 0; i < n; i++) {
            double d = v[i] - mean;
            m2 += d * d / (double)n;
            m3 += d * d * d / (double)n;
            m4 += d * d * d * d / (double)n;
        }
        double skew = m3 / pow(m2, 1.5), kurt = m4 / (m2 * m2);
        double bc = (skew * skew + 1) / kurt;
        double best = 0;
        size_t lo = (n + 19) / 20;
        for (size_t cut = lo; cut + lo <= n; cut++) {
            double s1 = 0, s2 = 0, q1 = 0, q2 = 0;
            for (size_t i = 0; i < cut; i++) {
                s1 += v[i];
                q1 += v[i] * v[i];
            }
            for (size_t i = cut; i < n; i++) {
                s2 += v[i];
                q2 += v[i] * v[i];
            }
            double n1 = (double)cut, n2 = (double)(n - cut);
            double mu1 = s1 / n1, mu2 = s2 / n2;
            double var1 = fmax(q1 / n1 - mu1 * mu1, 1e-12), var2 = fmax(q2 / n2 - mu2 * mu2, 1e-12);
            double dd = sqrt(2.0) * fabs(mu2 - mu1) / sqrt(var1 + var2);
            if (dd > best)
                best = dd;
        }
        int bi = best > 3.8 && bc > 5.0 / 9.0;
        n_bimodal += bi;
        if (best > *best_d)
            *best_d = best;
        printf("  type %2u: %5zu XUs, Ashman D %.2f, bimodality coefficient %.3f%s\n", ty, n, best,
               bc, bi ? "  bimodal" : "");
    }
    free(v);
    return n_bimodal;
}

static void test_multimodal(void **state)
{
    (void)state;
    const char *sets[] = {"xus", "8080", NULL};
    truth_t t;
    int big;
    double d;
    truth_make(&t, "builtin:high", sets, 1, 1);
    int bi = bimodal_types(&t, &big, &d);
    printf("defaults (mode_gap 0.9): %d of %d types with >= 60 XUs bimodal, best D %.2f\n", bi,
           big, d);
    truth_free(&t);
    /* model_seed 1 draws 2 or 3 modes for every type: measured 16 of 16
     * bimodal (D 3.96 to 5.84, coefficient 0.61 to 0.78); require 12. */
    assert_true(big >= 16);
    assert_true(bi >= 12);
    assert_true(d > 5);
    /* Control: modes at one place (mode_gap 0) are not separated. */
    const char *flat[] = {"xus", "8080", "mode_gap", "0", NULL};
    truth_make(&t, "builtin:high", flat, 1, 1);
    bi = bimodal_types(&t, &big, &d);
    printf("mode_gap 0: %d of %d types bimodal, best D %.2f\n", bi, big, d);
    truth_free(&t);
    assert_true(bi == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_correlations),
        cmocka_unit_test(test_alt_share),
        cmocka_unit_test(test_shuffles),
        cmocka_unit_test(test_multimodal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
