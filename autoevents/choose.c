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

/* Statistics across XUs from the XU pilot's profile.  What counts is the
 * variation among XUs of the same construct: fusion pairs XUs within a
 * construct (and the random control shuffles within one), so an event that
 * only tells constructs apart (a line run once per loop) cannot show
 * whether the right XUs were paired.  So vals[i] keeps each XU's value
 * minus its construct's mean, cv is the root of the mean squared residual
 * over the mean value, and twins are judged on residuals too (|Spearman|). */
int ompf__auto_xu_stats(ompf_auto_t *a, const ompf_profile_t *p, double **vals)
{
    size_t nx = ompf_xu_count(p), ntypes = ompf_construct_count(p) + 1;
    a->xus = nx;
    double *tsum = calloc(ntypes, sizeof *tsum);
    size_t *tcount = calloc(ntypes, sizeof *tcount);
    if (!tsum || !tcount) {
        free(tsum);
        free(tcount);
        return OMPF_ENOMEM;
    }
    for (size_t x = 0; x < nx; x++)
        if (ompf_xu_get(p, x)->type < ntypes)
            tcount[ompf_xu_get(p, x)->type]++;
        else
            return OMPF_EFORMAT; /* the reader checks references: not reached */
    for (size_t i = 0; i < a->n; i++) {
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
            free(tsum);
            free(tcount);
            return OMPF_ENOMEM;
        }
        double sum = 0, sq = 0, gap = 0;
        size_t nonzero = 0;
        for (size_t x = 0; x < nx; x++) {
            double y = ompf_xu_values_const(p, x)[e];
            v[x] = ompf_is_missing(y) ? 0 : y;
            sum += v[x];
            nonzero += v[x] != 0;
            tsum[ompf_xu_get(p, x)->type] += v[x];
        }
        for (size_t x = 0; x < nx; x++) {
            uint32_t t = ompf_xu_get(p, x)->type;
            v[x] -= tsum[t] / (double)tcount[t];
            sq += v[x] * v[x];
        }
        memset(tsum, 0, ntypes * sizeof *tsum);
        for (size_t t = 0; t < ompf_thread_count(p); t++) {
            double g = ompf_thread_get_const(p, (uint32_t)t)->gap[e];
            if (!ompf_is_missing(g))
                gap += g;
        }
        vals[i] = v;
        c->total = sum + gap;
        c->inside = c->total > 0 ? sum / c->total : 0;
        double mean = nx ? sum / (double)nx : 0;
        c->cv = mean > 0 ? sqrt(sq / (double)nx) / mean : 0;
        c->cost_s = c->kind == OMPF_AUTO_UPROBE     ? c->total * a->uprobe_cost +
                                                          a->uprobe_fixed * (double)ompf_thread_count(p)
                    : c->kind == OMPF_AUTO_TRACEPOINT ? c->total * TRACEPOINT_COST
                                                      : 0;
        c->covered = nx ? (double)nonzero / (double)nx : 0;
        if (sum == 0)
            ompf__auto_reject(c, "never fires inside an XU");
    }
    free(tsum);
    free(tcount);
    return 0;
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

/* strict: the thresholds of o; else the fallback when fewer than two
 * events pass them: anything that fires inside XUs and is no twin. */
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
    double budget = o->max_slowdown * a->base_s;
    for (size_t k = 0; k < nr; k++) {
        ompf_auto_cand_t *c = &a->c[rank[k]];
        if (strict && c->inside < o->min_inside) {
            ompf__auto_reject(c, "mostly outside XUs: %.0f%% inside", 100 * c->inside);
            c->soft = 1;
            continue;
        }
        if (strict && c->covered < 0.05) {
            ompf__auto_reject(c, "fires in only %.1f%% of the XUs", 100 * c->covered);
            c->soft = 1;
            continue;
        }
        if (strict && c->cv < o->min_cv) {
            ompf__auto_reject(c, "varies too little within constructs: CV %.3f < %.2f", c->cv, o->min_cv);
            c->soft = 1;
            continue;
        }
        if (!strict && c->cv <= 0)
            continue;
        if (a->nchosen >= o->want) {
            ompf__auto_reject(c, "not needed: %u events chosen before it", o->want);
            continue;
        }
        size_t twin = 0;
        double r = 0;
        for (size_t j = 0; j < a->nchosen && !twin; j++) {
            r = ompf_spearman(vals[rank[k]], vals[a->order[j]], a->xus);
            if (fabs(r) > o->max_corr)
                twin = j + 1;
        }
        if (twin) {
            snprintf(c->why, sizeof c->why, "twin of %.100s (Spearman %.3f within constructs)",
                     a->c[a->order[twin - 1]].name, r);
            continue;
        }
        if (a->est_s + c->cost_s > budget) {
            ompf__auto_reject(c, "too costly: %.3f s of probes, %.1f%% of the run with the others",
                   c->cost_s, 100 * (a->est_s + c->cost_s) / a->base_s);
            continue;
        }
        a->est_s += c->cost_s;
        c->chosen = 1;
        snprintf(c->why, sizeof c->why,
                 "%sCV %.2f within constructs (%zu XUs), %.0f%% inside XUs, %.0f per run, "
                 "~%.3f s of probes", strict ? "" : "FALLBACK (no better candidate): ",
                 c->cv, a->xus, 100 * c->inside, c->total, c->cost_s);
        a->order[a->nchosen++] = rank[k];
    }
    free(rank);
    return 0;
}
