/* EPD calibration: per pair (and per type), the median EMD between the
 * repeats' histograms, floored at one XU's weight; and the references'
 * Spearman coefficient of the pair. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epd_internal.h"

/* Median of the EMDs between all unordered pairs of repeat histograms,
 * floored at 1/|XUs| (the largest repeat histogram). */
static int calibrate(ompf_emd_ws_t *ws, const ompf_hist2d_t *h, size_t nrep,
                     double *cal, int *floor_hit)
{
    size_t np = nrep * (nrep - 1) / 2, k = 0;
    double *v = malloc((np ? np : 1) * sizeof *v);
    if (!v)
        return OMPF_ENOMEM;
    int64_t maxn = 0;
    for (size_t r = 0; r < nrep; r++)
        if (h[r].total > maxn)
            maxn = h[r].total;
    for (size_t r = 0; r < nrep; r++)
        for (size_t s = r + 1; s < nrep; s++) {
            int rc = ompf_emd_2d(ws, h[r].nbins, h[r].count, h[r].pos,
                                 h[s].nbins, h[s].count, h[s].pos, &v[k++],
                                 NULL);
            if (rc) {
                free(v);
                return rc;
            }
        }
    double med = ompf_median(v, np);
    free(v);
    double fl = 1.0 / (double)(maxn > 0 ? maxn : 1);
    *floor_hit = med < fl;
    *cal = med < fl ? fl : med;
    return 0;
}

/* Calibration of a pair (and its types) once every repeat is binned. */
int ompf__pair_prepare(void *ctx, size_t i, size_t thread)
{
    ompf_eval_t *ev = ctx;
    pair_t *pr = &ev->pairs[i];
    if (pr->problem)
        return 0;
    for (size_t r = 0; r < pr->nrep; r++)
        if (pr->hist[r].total == 0) {
            pr->problem = ompf__eval_asprintf("reference %s has no XU with values of "
                                    "both events",
                                    ev->names[pr->rep[r]]);
            return pr->problem ? 0 : OMPF_ENOMEM;
        }
    int rc = calibrate(ev->ws[thread], pr->hist, pr->nrep, &pr->calibration,
                       &pr->floor);
    if (rc)
        return rc;
    if (want_spearman(ev)) {
        double *sp = malloc(pr->nrep * sizeof *sp);
        if (!sp)
            return OMPF_ENOMEM;
        for (size_t r = 0; r < pr->nrep; r++)
            sp[r] = pr->sp[r];
        pr->spearman_ref = ompf_median(sp, pr->nrep);
        free(sp);
    }
    for (size_t k = 0; k < pr->ntypes; k++) {
        ptype_t *pt = &pr->types[k];
        uint32_t t = pt->type;
        int complete = 1;
        for (size_t r = 0; r < pr->nrep; r++) {
            pt->weight += (double)pt->hist[r].total;
            if (pt->hist[r].total == 0 && complete) {
                complete = 0;
                pt->problem = ompf__eval_asprintf(
                    "type %s has no XU with both values in reference %s",
                    ev->typename[t], ev->names[pr->rep[r]]);
                if (!pt->problem)
                    return OMPF_ENOMEM;
            }
        }
        if (complete) {
            rc = calibrate(ev->ws[thread], pt->hist, pr->nrep,
                           &pt->calibration, &pt->floor);
            if (rc)
                return rc;
        }
    }
    return 0;
}
