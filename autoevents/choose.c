/* The choice of `--events auto` from the XU pilot's profile: statistics
 * within constructs, the ranking, the greedy pass with the thresholds and
 * the fallback (docs/events.md). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoevents_internal.h"
#include "ompfuse/evaluate.h"

/* The first reason a candidate is out is the one shown. */
void ompf__auto_reject(ompf_auto_cand_t *c, const char *fmt, ...)
{
    if (c->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
}

/* EPD's view of a value: one of BINS equal intervals over [lo, hi]. */
#define BINS 10
unsigned char ompf__auto_bin(double v, double lo, double hi)
{
    if (!(hi > lo))
        return 0;
    double b = floor((v - lo) / (hi - lo) * BINS);
    return b >= BINS ? BINS - 1 : b < 0 ? 0 : (unsigned char)b;
}

/* Statistics across XUs.  What counts is the variation among XUs of the
 * same construct: fusion pairs XUs within a construct (and the random
 * control shuffles within one), so an event that only tells constructs
 * apart (a line run once per loop) cannot show whether the right XUs were
 * paired.  So vals[i] (each XU's value on entry) becomes each XU's value
 * minus its construct's mean, cv is the root of the mean squared residual
 * over the mean value, and twins are judged on residuals too; bin[i] keeps
 * the value's interval, for the pairs' dependence (ompf__auto_dependence). */
int ompf__auto_stats(ompf_auto_t *a, size_t nx, const uint32_t *type, size_t ntypes,
                     double **vals)
{
    a->xus = nx;
    a->ntypes = ntypes;
    a->xtype = malloc((nx ? nx : 1) * sizeof *a->xtype);
    a->bin = calloc(a->n + 1, sizeof *a->bin);
    a->lo = calloc(a->n + 1, sizeof *a->lo);
    a->hi = calloc(a->n + 1, sizeof *a->hi);
    double *tsum = calloc(ntypes + 1, sizeof *tsum);
    size_t *tcount = calloc(ntypes + 1, sizeof *tcount);
    int rc = a->xtype && a->bin && a->lo && a->hi && tsum && tcount ? 0 : OMPF_ENOMEM;
    for (size_t x = 0; rc == 0 && x < nx; x++) {
        if (type[x] >= ntypes)
            rc = OMPF_EINVAL;
        else
            tcount[a->xtype[x] = type[x]]++;
    }
    for (size_t i = 0; rc == 0 && i < a->n; i++) {
        ompf_auto_cand_t *c = &a->c[i];
        double *v = vals[i];
        if (!v)
            continue;
        if (!(a->bin[i] = malloc(nx ? nx : 1))) {
            rc = OMPF_ENOMEM;
            break;
        }
        double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
        size_t nonzero = 0;
        memset(tsum, 0, ntypes * sizeof *tsum);
        for (size_t x = 0; x < nx; x++) {
            sum += v[x];
            nonzero += v[x] != 0;
            tsum[type[x]] += v[x];
            lo = fmin(lo, v[x]);
            hi = fmax(hi, v[x]);
        }
        a->lo[i] = lo;
        a->hi[i] = hi;
        for (size_t x = 0; x < nx; x++) {
            a->bin[i][x] = ompf__auto_bin(v[x], lo, hi);
            v[x] -= tsum[type[x]] / (double)tcount[type[x]];
            sq += v[x] * v[x];
        }
        double mean = nx ? sum / (double)nx : 0;
        c->cv = mean > 0 ? sqrt(sq / (double)nx) / mean : 0;
        c->covered = nx ? (double)nonzero / (double)nx : 0;
        if (sum == 0)
            ompf__auto_reject(c, "never fires inside an XU");
    }
    free(tsum);
    free(tcount);
    return rc;
}

/* From the XU pilot's profile: each candidate's values per XU, its share
 * inside XUs and its cost, then ompf__auto_stats. */
int ompf__auto_xu_stats(ompf_auto_t *a, const ompf_profile_t *p, double **vals)
{
    size_t nx = ompf_xu_count(p);
    uint32_t *type = malloc((nx ? nx : 1) * sizeof *type);
    if (!type)
        return OMPF_ENOMEM;
    for (size_t x = 0; x < nx; x++)
        type[x] = ompf_xu_get(p, x)->type;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < a->n; i++) {
        ompf_auto_cand_t *c = &a->c[i];
        vals[i] = NULL;
        if (c->why[0])
            continue;
        int e = ompf_event_find(p, c->name);
        const ompf_event_t *ev = e >= 0 ? ompf_event_get(p, (uint32_t)e) : NULL;
        if (!ev || ev->status != OMPF_EV_COUNTED) {
            ompf__auto_reject(c, "does not open here");
            if (ev && ev->reason)
                snprintf(c->why, sizeof c->why, "does not open: %.140s", ev->reason);
            continue;
        }
        double *v = calloc(nx ? nx : 1, sizeof *v);
        if (!v) {
            rc = OMPF_ENOMEM;
            break;
        }
        double sum = 0, gap = 0;
        for (size_t x = 0; x < nx; x++) {
            double y = ompf_xu_values_const(p, x)[e];
            v[x] = ompf_is_missing(y) ? 0 : y;
            sum += v[x];
        }
        for (size_t t = 0; t < ompf_thread_count(p); t++) {
            double g = ompf_thread_get_const(p, (uint32_t)t)->gap[e];
            if (!ompf_is_missing(g))
                gap += g;
        }
        vals[i] = v;
        c->total = sum + gap;
        c->inside = c->total > 0 ? sum / c->total : 0;
        /* a uprobe also costs, per thread, the open and close of its event */
        c->cost_s = c->total * ompf__auto_cost_of(a, c) +
                    (c->kind == OMPF_AUTO_UPROBE ? a->uprobe_fixed * (double)ompf_thread_count(p)
                                                 : 0);
    }
    if (rc == 0)
        rc = ompf__auto_stats(a, nx, type, ompf_construct_count(p) + 1, vals);
    free(type);
    return rc;
}

/* The total variation distance between the joint histogram of (bi, bj)
 * over the XUs (where use is NULL or use[x]) and, per construct, the
 * product of its two marginals: the share of XUs a shuffle within each
 * construct moves to another cell. */
static double tv(const ompf_auto_t *a, const unsigned char *bi, const unsigned char *bj)
{
    size_t nt = a->ntypes, nx = a->xus;
    double *joint = calloc(nt * BINS * BINS, sizeof *joint);
    double *mi = calloc(nt * BINS, sizeof *mi), *mj = calloc(nt * BINS, sizeof *mj);
    double *cnt = calloc(nt, sizeof *cnt);
    double d = 0, used = 0;
    if (joint && mi && mj && cnt) {
        for (size_t x = 0; x < nx; x++) {
            if (a->match && a->match[x] == UINT32_MAX)
                continue; /* no XU of that label in the second run */
            size_t t = a->xtype[x];
            joint[(t * BINS + bi[x]) * BINS + bj[x]]++;
            mi[t * BINS + bi[x]]++;
            mj[t * BINS + bj[x]]++;
            cnt[t]++;
            used++;
        }
        for (size_t t = 0; t < nt; t++)
            for (size_t u = 0; cnt[t] > 0 && u < BINS; u++)
                for (size_t w = 0; w < BINS; w++)
                    d += fabs(joint[(t * BINS + u) * BINS + w] -
                              mi[t * BINS + u] * mj[t * BINS + w] / cnt[t]);
        d = used > 0 ? d / (2.0 * used) : 0;
    }
    free(joint);
    free(mi);
    free(mj);
    free(cnt);
    return d;
}

/* What the random control breaks in the pair (i, j): the dependence of i
 * and j within constructs (EPD's 10 x 10 intervals), 0 (random pairing
 * scores what a matched one does) to 1.  With the XU pilot's second run
 * (ompf__auto_cross) i of one run against j of the other, XUs matched by
 * label, the lesser of both ways: only what holds between runs counts. */
double ompf__auto_dependence(const ompf_auto_t *a, size_t i, size_t j)
{
    if (!a->bin[i] || !a->bin[j] || a->xus == 0)
        return 0;
    if (!a->match)
        return tv(a, a->bin[i], a->bin[j]);
    if (!a->bin2[i] || !a->bin2[j])
        return 0;
    return fmin(tv(a, a->bin[i], a->bin2[j]), tv(a, a->bin2[i], a->bin[j]));
}

/* What the probes' cost is compared with: the program's CPU time under
 * the tool (a hit's trap adds to it, whatever else the machine runs), or
 * its wall time when that is unknown. */
double ompf__auto_budget_ref(const ompf_auto_t *a)
{
    return a->base_cpu > 0 ? a->base_cpu : a->base_s;
}

/* Pearson's r of two residual vectors (their construct means are 0). */
static double pearson(const double *x, const double *y, size_t n)
{
    double xy = 0, xx = 0, yy = 0;
    for (size_t k = 0; k < n; k++) {
        xy += x[k] * y[k];
        xx += x[k] * x[k];
        yy += y[k] * y[k];
    }
    return xx > 0 && yy > 0 ? xy / sqrt(xx * yy) : 0;
}

/* Deterministic sources first (uprobes, then tracepoints, then software
 * events, which are timing noise per XU), within a kind by variation
 * times the share of XUs it fires in (the CV capped: an event seen in a
 * handful of XUs has a huge CV but says little about the others), then by
 * how much of the run they see. */
static const ompf_auto_t *sort_ctx;
static int by_rank(const void *pa, const void *pb)
{
    const ompf_auto_cand_t *x = &sort_ctx->c[*(const size_t *)pa],
                           *y = &sort_ctx->c[*(const size_t *)pb];
    if (x->kind != y->kind)
        return x->kind - y->kind;
    double sx = fmin(x->cv, 3) * x->covered, sy = fmin(y->cv, 3) * y->covered;
    if (sx != sy)
        return sx > sy ? -1 : 1;
    return x->total > y->total ? -1 : x->total < y->total;
}

/* A deterministic count (uprobe) is worth more in a pair than a timing or
 * kernel event: its reference repeats agree exactly, so whatever the
 * random control breaks shows in full against the calibration.  With one
 * XU-pilot run the kind stands in for that. */
static double weight(const ompf_auto_cand_t *c)
{
    return c->kind == OMPF_AUTO_UPROBE ? 1.0 : 0.5;
}

/* What EPD's calibration sees of the pair (i, j): the share of the XUs in
 * another cell of the pair's joint histogram (all XUs, as EPD's) in the
 * second XU-pilot run than in the first; 0 for deterministic counts. */
double ompf__auto_repeat_noise(const ompf_auto_t *a, size_t i, size_t j)
{
    if (!a->match || !a->bin[i] || !a->bin[j] || !a->bin2[i] || !a->bin2[j])
        return 0;
    double h1[BINS * BINS] = {0}, h2[BINS * BINS] = {0}, used = 0, d = 0;
    for (size_t x = 0; x < a->xus; x++) {
        if (a->match[x] == UINT32_MAX)
            continue;
        h1[a->bin[i][x] * BINS + a->bin[j][x]]++;
        h2[a->bin2[i][x] * BINS + a->bin2[j][x]]++;
        used++;
    }
    for (size_t c = 0; c < BINS * BINS; c++)
        d += fabs(h1[c] - h2[c]);
    return used > 0 ? d / (2 * used) : 0;
}

/* How much the pair (i, j) can tell a matched pairing from a random one:
 * its dependence between runs against what its repeats differ by anyway
 * (EPD divides by that calibration, at least 1/|XUs|), scaled so that a
 * deterministic pair scores its dependence.  A timing pair that depends
 * strongly but varies between runs as much scores little. */
static double pair_score(const ompf_auto_t *a, size_t i, size_t j)
{
    double dep = ompf__auto_dependence(a, i, j);
    if (!a->match)
        return weight(&a->c[i]) * weight(&a->c[j]) * dep;
    double floor = a->xus ? 1.0 / (double)a->xus : 1.0;
    return dep * floor / fmax(ompf__auto_repeat_noise(a, i, j), floor);
}

/* Does candidate k pass the thresholds (strict: o's; else it must vary at
 * all)?  Sets the reason when not, marked soft: the fallback may take it. */
static int passes(ompf_auto_t *a, const ompf_auto_opts_t *o, int strict, size_t k)
{
    ompf_auto_cand_t *c = &a->c[k];
    if (!strict)
        return c->cv > 0;
    if (c->inside < o->min_inside)
        ompf__auto_reject(c, "mostly outside XUs: %.0f%% inside", 100 * c->inside);
    else if (c->covered < MIN_COVERED)
        ompf__auto_reject(c, "fires in only %.1f%% of the XUs", 100 * c->covered);
    else if (c->cv < o->min_cv)
        ompf__auto_reject(c, "varies too little within constructs: CV %.3f < %.2f", c->cv,
                          o->min_cv);
    else
        return 1;
    c->soft = 1;
    return 0;
}

/* Does candidate k fit next to the chosen ones: no twin (|Pearson r| of
 * the residuals above max_corr: the same quantity up to scale, like
 * TASK-CLOCK and CPU-CLOCK or two lines of one block), within the budget?
 * With why, says why not. */
static int fits(ompf_auto_t *a, double **vals, const ompf_auto_opts_t *o, size_t k, int why)
{
    ompf_auto_cand_t *c = &a->c[k];
    for (size_t j = 0; j < a->nchosen; j++) {
        double r = pearson(vals[k], vals[a->order[j]], a->xus);
        if (fabs(r) > o->max_corr) {
            if (why)
                snprintf(c->why, sizeof c->why, "twin of %.100s (Pearson %.3f within "
                         "constructs)", a->c[a->order[j]].name, r);
            return 0;
        }
    }
    if (a->est_s + c->cost_s > o->max_slowdown * ompf__auto_budget_ref(a)) {
        if (why)
            ompf__auto_reject(c, "too costly: %.3f s of probes, %.1f%% of the run's CPU time "
                              "with the others", c->cost_s,
                              100 * (a->est_s + c->cost_s) / ompf__auto_budget_ref(a));
        return 0;
    }
    return 1;
}

static void take(ompf_auto_t *a, size_t k, int strict, double dep)
{
    ompf_auto_cand_t *c = &a->c[k];
    a->est_s += c->cost_s;
    c->chosen = 1;
    char pair[64] = "";
    if (dep > 0)
        snprintf(pair, sizeof pair, "random pairing moves %.1f%% of the XUs, ", 100 * dep);
    snprintf(c->why, sizeof c->why,
             "%sCV %.2f within constructs (%zu XUs), %s%.0f%% inside XUs, %.0f per run, "
             "~%.3f s of probes%s", strict ? "" : "FALLBACK (no better candidate): ", c->cv,
             a->xus, pair, 100 * c->inside, c->total, c->cost_s,
             c->emulated ? " (emulated)" : "");
    a->order[a->nchosen++] = k;
}

/* strict: the thresholds of o; else the fallback when fewer than two
 * events pass them: anything that fires inside XUs and is no twin.
 *
 * Greedy over pairs: EPD compares pairs of events counted in different
 * runs, and random pairing only scores worse than a matched one where it
 * breaks the dependence of two events within a construct.  So the next
 * event is the acceptable one that adds the most score (pair_score: the
 * dependence against the repeats' own difference) with the chosen ones --
 * the first two together, the best pair -- and by rank when none adds any. */
int ompf__auto_choose(ompf_auto_t *a, double **vals, const ompf_auto_opts_t *o, int strict)
{
    size_t *rank = calloc(a->n + 1, sizeof *rank);
    if (!a->order)
        a->order = calloc(a->n + 1, sizeof *a->order);
    if (!rank || !a->order) {
        free(rank);
        return OMPF_ENOMEM;
    }
    size_t nr = 0;
    for (size_t i = 0; i < a->n; i++)
        if (!a->c[i].chosen && (!a->c[i].why[0] || (!strict && a->c[i].soft)))
            rank[nr++] = i;
    sort_ctx = a;
    qsort(rank, nr, sizeof *rank, by_rank);
    /* the thresholds first: what fails one is out of this pass */
    size_t ok = 0;
    for (size_t k = 0; k < nr; k++)
        if (passes(a, o, strict, rank[k]))
            rank[ok++] = rank[k];
    nr = ok;
    while (a->nchosen < o->want) {
        size_t best = nr, best2 = nr;
        double gain = MIN_DEPENDENCE;
        for (size_t k = 0; k < nr; k++) {
            if (a->c[rank[k]].chosen || !fits(a, vals, o, rank[k], 0))
                continue;
            if (a->nchosen == 0) {
                /* the best pair: rank[k] with a later one */
                for (size_t l = k + 1; l < nr; l++) {
                    if (fabs(pearson(vals[rank[k]], vals[rank[l]], a->xus)) > o->max_corr ||
                        a->c[rank[k]].cost_s + a->c[rank[l]].cost_s + a->est_s >
                            o->max_slowdown * ompf__auto_budget_ref(a))
                        continue;
                    double g = pair_score(a, rank[k], rank[l]);
                    if (g > gain) {
                        gain = g;
                        best = k;
                        best2 = l;
                    }
                }
                continue;
            }
            double g = 0;
            for (size_t j = 0; j < a->nchosen; j++)
                g += pair_score(a, rank[k], a->order[j]);
            if (g > gain) {
                gain = g;
                best = k;
            }
        }
        if (best == nr) /* no dependence left to add: by rank */
            for (size_t k = 0; k < nr && best == nr; k++)
                if (!a->c[rank[k]].chosen && fits(a, vals, o, rank[k], 0))
                    best = k;
        if (best == nr)
            break;
        double dep = 0;
        for (size_t j = 0; j < a->nchosen; j++)
            dep = fmax(dep, ompf__auto_dependence(a, rank[best], a->order[j]));
        if (best2 < nr)
            dep = ompf__auto_dependence(a, rank[best], rank[best2]);
        take(a, rank[best], strict, dep);
        if (best2 < nr && a->nchosen < o->want)
            take(a, rank[best2], strict, dep);
    }
    /* the reasons of the rest */
    for (size_t k = 0; k < nr; k++)
        if (!a->c[rank[k]].chosen && fits(a, vals, o, rank[k], 1))
            ompf__auto_reject(&a->c[rank[k]], "not needed: %u events chosen before it",
                              o->want);
    free(rank);
    return 0;
}
