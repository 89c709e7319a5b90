/* EPD of a target: its histograms per pair, TMD to each repeat,
 * calibrated and combined (per type, then over pairs: EPD), Correlation
 * Error, and the errors a target can give. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epd_internal.h"

/* ---- targets ----------------------------------------------------------- */

typedef struct {
    ompf_eval_t *ev;
    colset_t tc;
    ompf_hist2d_t *hall; /* per pair: the target's histogram */
    ompf_hist2d_t **th;  /* per pair, per type (per_type) */
    ompf_eval_result_t *res;
    const char *name;
} tctx_t;

static int tmd_to_repeats(ompf_emd_ws_t *ws, const ompf_hist2d_t *ht,
                          const ompf_hist2d_t *hr, size_t nrep, double cal,
                          double *uncal, double *tmd, int *floor_hit)
{
    double *v = malloc(nrep * sizeof *v);
    if (!v)
        return OMPF_ENOMEM;
    for (size_t r = 0; r < nrep; r++) {
        int rc = ompf_emd_2d(ws, ht->nbins, ht->count, ht->pos, hr[r].nbins,
                             hr[r].count, hr[r].pos, &uncal[r], NULL);
        if (rc) {
            free(v);
            return rc;
        }
        v[r] = uncal[r];
    }
    /* The same floor as the calibration's: a distance below one XU's weight
     * is not measurable, and an exact 0 would collapse the geometric mean
     * (EPD) to 0 whatever the other pairs say.  Not in the papers: reported
     * (tmd_floor) and documented in docs/evaluation.md. */
    int64_t maxn = ht->total;
    for (size_t r = 0; r < nrep; r++)
        if (hr[r].total > maxn)
            maxn = hr[r].total;
    double med = ompf_median(v, nrep), fl = 1.0 / (double)(maxn > 0 ? maxn : 1);
    *floor_hit = med < fl;
    *tmd = (med < fl ? fl : med) / cal;
    free(v);
    return 0;
}

static int pair_target(void *ctx, size_t i, size_t thread)
{
    tctx_t *tc = ctx;
    ompf_eval_t *ev = tc->ev;
    const pair_t *pr = &ev->pairs[i];
    ompf_eval_pair_result_t *res = &tc->res->pairs[i];
    ompf_emd_ws_t *ws = ev->ws[thread];
    res->pair = i;
    res->repeats = pr->nrep;
    res->tmd = res->calibration = NAN;
    res->spearman_target = res->spearman_reference = NAN;
    if (pr->problem) {
        res->problem = pr->problem;
        return 0;
    }
    res->calibration = pr->calibration;
    res->calibration_floor = pr->floor;
    int has_a = colset_has(&tc->tc, pr->ev[0]);
    if (!has_a || !colset_has(&tc->tc, pr->ev[1])) {
        res->problem = ev->lack[pr->ev[has_a ? 1 : 0]];
        return 0;
    }
    res->uncalibrated = calloc(pr->nrep, sizeof *res->uncalibrated);
    if (!res->uncalibrated)
        return OMPF_ENOMEM;
    /* binned before (ompf__colset_bin), all types in the same pass */
    ompf_hist2d_t ht = tc->hall[i];
    tc->hall[i] = (ompf_hist2d_t){0};
    ompf_hist2d_t *th = NULL;
    if (tc->th) {
        th = tc->th[i];
        tc->th[i] = NULL;
    }
    int rc = 0;
    if (!rc && ht.total == 0)
        res->problem = "no XU of the target has values of both events";
    double tmd_all = NAN;
    if (!rc && ht.total)
        rc = tmd_to_repeats(ws, &ht, pr->hist, pr->nrep, pr->calibration,
                            res->uncalibrated, &tmd_all, &res->tmd_floor);
    res->left_out = ht.left_out;
    res->binned = (uint64_t)ht.total;
    ompf_hist2d_free(&ht);
    if (rc || res->problem) {
        for (size_t t = 0; th && t < pr->ntypes; t++)
            ompf_hist2d_free(&th[t]);
        free(th);
        return rc;
    }
    if (want_spearman(ev)) {
        res->spearman_target = ompf__colset_spearman(&tc->tc, pr->ev[0], pr->ev[1]);
        res->spearman_reference = pr->spearman_ref;
    }
    if (!ev->opts.per_type) {
        res->tmd = tmd_all;
        res->evaluated = 1;
        return 0;
    }
    /* Per type: weighted geometric mean over the types evaluated. */
    res->types = calloc(pr->ntypes ? pr->ntypes : 1, sizeof *res->types);
    res->ntypes = res->types ? pr->ntypes : 0;
    rc = res->types ? 0 : OMPF_ENOMEM;
    /* The pair's own floor flag is about its all-XU TMD, which per_type
     * does not use: the types' flags count instead. */
    res->tmd_floor = 0;
    double wsum = 0, lsum = 0;
    int zero = 0;
    for (size_t t = 0; !rc && t < pr->ntypes; t++) {
        const ptype_t *pt = &pr->types[t];
        ompf_eval_type_result_t *tr = &res->types[t];
        tr->type = ev->typename[pt->type];
        tr->weight = pt->weight;
        tr->calibration = pt->calibration;
        tr->calibration_floor = pt->floor;
        tr->tmd = NAN;
        if (pt->problem) {
            tr->problem = pt->problem;
            continue;
        }
        ht = th[t];
        th[t] = (ompf_hist2d_t){0};
        tr->left_out = ht.left_out;
        tr->binned = (uint64_t)ht.total;
        if (ht.total == 0) {
            ompf_hist2d_free(&ht);
            tr->problem = "the target has no XU of this type with values of "
                          "both events";
            continue;
        }
        tr->uncalibrated = calloc(pr->nrep, sizeof *tr->uncalibrated);
        rc = tr->uncalibrated
                 ? tmd_to_repeats(ws, &ht, pt->hist, pr->nrep,
                                  pt->calibration, tr->uncalibrated, &tr->tmd,
                                  &tr->tmd_floor)
                 : OMPF_ENOMEM;
        ompf_hist2d_free(&ht);
        if (rc)
            break;
        wsum += tr->weight;
        if (tr->tmd == 0)
            zero = 1;
        else
            lsum += tr->weight * log(tr->tmd);
    }
    for (size_t t = 0; t < pr->ntypes; t++)
        ompf_hist2d_free(&th[t]);
    free(th);
    if (rc)
        return rc;
    if (wsum == 0) {
        res->problem = "no type of this pair could be evaluated";
        return 0;
    }
    res->tmd = zero ? 0.0 : exp(lsum / wsum);
    res->evaluated = 1;
    return 0;
}

void ompf_eval_result_free(ompf_eval_result_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; r->pairs && i < r->pairs_total; i++) {
        free(r->pairs[i].uncalibrated);
        for (size_t t = 0; r->pairs[i].types && t < r->pairs[i].ntypes; t++)
            free(r->pairs[i].types[t].uncalibrated);
        free(r->pairs[i].types);
    }
    free(r->pairs);
    free(r->target);
    free(r);
}

/* The target's colset and the histograms no pair took (after an error). */
static void target_free(tctx_t *tc)
{
    for (size_t i = 0; i < tc->ev->npairs; i++) {
        if (tc->hall)
            ompf_hist2d_free(&tc->hall[i]);
        const pair_t *pr = &tc->ev->pairs[i];
        for (size_t k = 0; tc->th && tc->th[i] && k < pr->ntypes; k++)
            ompf_hist2d_free(&tc->th[i][k]);
        if (tc->th)
            free(tc->th[i]);
    }
    free(tc->hall);
    free(tc->th);
    ompf__colset_free(&tc->tc);
}

int ompf_eval_target(ompf_eval_t *ev, const ompf_profile_t *target,
                     const char *name, ompf_eval_result_t **out,
                     ompf_error_t *err)
{
    if (!ev || !target || !out)
        return ompf_error_set(err, OMPF_EINVAL, "no target to evaluate");
    *out = NULL;
    if (!name)
        name = "target";
    int rc;
    if (ev->opts.check_program &&
        (rc = ompf__same_program(ev->program, ev->argv, ev->program_bid, ev->names[0],
                                 ompf_meta_get(target, "program"),
                                 ompf_meta_get(target, "argv"),
                                 ompf_program_build_id(target), name, err)))
        return rc;
    tctx_t tc = {.ev = ev, .name = name};
    ompf_eval_result_t *res = calloc(1, sizeof *res);
    if (!res)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    tc.res = res;
    res->pairs_total = ev->npairs;
    res->epd = res->correlation_error = NAN;
    res->target = ompf__eval_strdup(name);
    res->pairs = calloc(ev->npairs, sizeof *res->pairs);
    if (!res->target || !res->pairs) {
        ompf_eval_result_free(res);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    size_t np = ev->npairs ? ev->npairs : 1;
    unsigned char *want = calloc(np, 1);
    tc.hall = calloc(np, sizeof *tc.hall);
    if (ev->opts.per_type)
        tc.th = calloc(np, sizeof *tc.th);
    rc = !want || !tc.hall || (ev->opts.per_type && !tc.th) ? OMPF_ENOMEM : 0;
    if (!rc)
        rc = ompf__colset_build(ev, target, 0, 0, 0, &tc.tc);
    for (size_t i = 0; !rc && i < ev->npairs; i++) {
        const pair_t *pr = &ev->pairs[i];
        want[i] = !pr->problem && colset_has(&tc.tc, pr->ev[0]) &&
                  colset_has(&tc.tc, pr->ev[1]);
    }
    char label[300];
    snprintf(label, sizeof label, "evaluate %s: binning", name);
    if (!rc)
        rc = ompf__colset_bin(ev, &tc.tc, want, tc.hall, tc.th, label);
    if (!rc && want_spearman(ev))
        rc = ompf__colset_ranks(ev, &tc.tc);
    free(want);
    if (rc) {
        target_free(&tc);
        ompf_eval_result_free(res);
        return ompf_error_set(err, rc, "%s: %s", name, ompf_strerror(rc));
    }
    snprintf(label, sizeof label, "evaluate %s", name);
    ompf_progress_t *prog =
        ompf_progress_create(label, ev->npairs, "pairs", ev->opts.progress);
    rc = ompf__parallel_for(ev->npairs, ev->threads, pair_target, &tc, prog);
    ompf_progress_destroy(prog);
    /* Events the target lacks, named in the error below. */
    char lacks[600] = "";
    size_t nlack = 0, ll = 0;
    for (size_t e = 0; e < ev->nev; e++)
        if (!colset_has(&tc.tc, e)) {
            if (ll < sizeof lacks)
                ll += (size_t)snprintf(lacks + ll, sizeof lacks - ll, "%s%s",
                                       nlack ? ", " : "", ev->evname[e]);
            nlack++;
        }
    target_free(&tc);
    if (rc) {
        ompf_eval_result_free(res);
        return ompf_error_set(err, rc, "evaluating %s failed: %s", name,
                              ompf_strerror(rc));
    }
    /* A problem that is the target's (not the references') is an error
     * unless allow_partial. */
    size_t target_bad = 0, first_bad = 0;
    double lsum = 0, cesum = 0;
    size_t cen = 0;
    int zero = 0;
    for (size_t i = 0; i < ev->npairs; i++) {
        ompf_eval_pair_result_t *p = &res->pairs[i];
        int bad = !ev->pairs[i].problem && !p->evaluated;
        for (size_t t = 0; t < p->ntypes; t++)
            if (p->types[t].problem && !ev->pairs[i].types[t].problem)
                bad = 1;
        if (bad) {
            if (!target_bad)
                first_bad = i;
            target_bad++;
        }
        if (!p->evaluated)
            continue;
        res->pairs_evaluated++;
        res->calibration_floor_hits += p->calibration_floor != 0;
        for (size_t t = 0; t < p->ntypes; t++)
            res->calibration_floor_hits += p->types[t].calibration_floor &&
                                           !isnan(p->types[t].tmd);
        res->tmd_floor_hits += p->tmd_floor != 0;
        for (size_t t = 0; t < p->ntypes; t++)
            res->tmd_floor_hits += p->types[t].tmd_floor &&
                                   !isnan(p->types[t].tmd);
        if (p->left_out > res->left_out_max)
            res->left_out_max = p->left_out;
        if (p->tmd == 0)
            zero = 1;
        else
            lsum += log(p->tmd);
        if (!isnan(p->spearman_target) && !isnan(p->spearman_reference)) {
            cesum += fabs(p->spearman_target - p->spearman_reference);
            cen++;
        }
    }
    if (target_bad && !ev->opts.allow_partial) {
        const ompf_eval_pair_result_t *p = &res->pairs[first_bad];
        const char *why = p->problem;
        const char *type = "";
        for (size_t t = 0; !why && t < p->ntypes; t++)
            if (p->types[t].problem) {
                why = p->types[t].problem;
                type = p->types[t].type;
            }
        if (nlack)
            rc = ompf_error_set(
                err, OMPF_EMISMATCH,
                "%s lacks event%s %s that the references count (absent "
                "from the target or not counted), so %zu event pair%s "
                "cannot be evaluated, e.g. %s,%s; give a target with all "
                "the references' events, or pass --allow-partial to "
                "evaluate the others",
                name, nlack == 1 ? "" : "s", lacks, target_bad,
                target_bad == 1 ? "" : "s",
                ev->evname[ev->pairs[first_bad].ev[0]],
                ev->evname[ev->pairs[first_bad].ev[1]]);
        else
            rc = ompf_error_set(
                err, OMPF_EMISMATCH,
                "%s: %zu event pair%s cannot be evaluated, e.g. %s,%s%s%s: "
                "%s; pass --allow-partial to evaluate the others",
                name, target_bad, target_bad == 1 ? "" : "s",
                ev->evname[ev->pairs[first_bad].ev[0]],
                ev->evname[ev->pairs[first_bad].ev[1]], *type ? " type " : "",
                type, why ? why : "unknown");
        ompf_eval_result_free(res);
        return rc;
    }
    if (res->pairs_evaluated)
        res->epd = zero ? 0.0 : exp(lsum / (double)res->pairs_evaluated);
    if (ev->opts.correlation_error && cen)
        res->correlation_error = cesum / (double)cen;
    *out = res;
    return 0;
}
