/* EPD: one profile's values rearranged by evaluation event (a colset),
 * its XUs' evaluation types, and Spearman coefficients over them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epd_internal.h"

/* ---- columns ----------------------------------------------------------- */

/* Frees the placed values only (references: once their histograms are
 * built). */
void ompf__colset_unplace(colset_t *c)
{
    for (size_t a = 0; a < c->naxes; a++) {
        free(c->abin[a]);
        free(c->acoord[a]);
        if (c->tbin) {
            free(c->tbin[a]);
            free(c->tcoord[a]);
        }
    }
    free(c->abin);
    free(c->acoord);
    free(c->tbin);
    free(c->tcoord);
    c->abin = c->tbin = NULL;
    c->acoord = c->tcoord = NULL;
    c->naxes = 0;
}

void ompf__colset_free(colset_t *c, size_t nev)
{
    if (!c)
        return;
    ompf__colset_unplace(c);
    for (size_t e = 0; c->col && e < nev; e++) {
        free(c->col[e]);
        if (c->rank)
            free(c->rank[e]);
    }
    free(c->col);
    free(c->rank);
    free(c->type);
    free(c->emin);
    free(c->emax);
    free(c->tmin);
    free(c->tmax);
    memset(c, 0, sizeof *c);
}

static int find_type(const ompf_eval_t *ev, const char *key)
{
    for (size_t t = 0; t < ev->ntypes; t++)
        if (!strcmp(ev->typekey[t], key))
            return (int)t;
    return -1;
}

/* Copies the values of the evaluation's events out of p.  only_counted:
 * events not counted for the whole run are treated as absent (references).
 * add_types: unknown construct keys are added to the type table. */
int ompf__colset_build(ompf_eval_t *ev, const ompf_profile_t *p,
                        int only_counted, int add_types, colset_t *c)
{
    memset(c, 0, sizeof *c);
    size_t nxu = ompf_xu_count(p);
    c->nxu = nxu;
    c->col = calloc(ev->nev ? ev->nev : 1, sizeof *c->col);
    c->rank = calloc(ev->nev ? ev->nev : 1, sizeof *c->rank);
    c->type = malloc((nxu ? nxu : 1) * sizeof *c->type);
    if (!c->col || !c->rank || !c->type)
        return OMPF_ENOMEM;
    for (size_t e = 0; e < ev->nev; e++) {
        int pe = ompf_event_find(p, ev->evname[e]);
        if (pe < 0)
            continue;
        const ompf_event_t *pev = ompf_event_get(p, (uint32_t)pe);
        if (pev->status == OMPF_EV_FAILED ||
            (only_counted && pev->status != OMPF_EV_COUNTED))
            continue;
        c->col[e] = malloc((nxu ? nxu : 1) * sizeof(double));
        if (!c->col[e])
            return OMPF_ENOMEM;
    }
    int *evmap = malloc((ev->nev ? ev->nev : 1) * sizeof *evmap);
    if (!evmap)
        return OMPF_ENOMEM;
    for (size_t e = 0; e < ev->nev; e++)
        evmap[e] = c->col[e] ? ompf_event_find(p, ev->evname[e]) : -1;
    for (size_t i = 0; i < nxu; i++) {
        const double *row = ompf_xu_values_const(p, i);
        for (size_t e = 0; e < ev->nev; e++)
            if (evmap[e] >= 0)
                c->col[e][i] = row[evmap[e]];
    }
    free(evmap);
    /* types: construct index -> evaluation type */
    size_t ncons = ompf_construct_count(p);
    uint32_t *tmap = malloc((ncons ? ncons : 1) * sizeof *tmap);
    if (!tmap)
        return OMPF_ENOMEM;
    for (size_t k = 0; k < ncons; k++) {
        char key[4200];
        tmap[k] = OMPF_NONE32;
        if (ompf_construct_key(p, (uint32_t)k, key, sizeof key) < 0)
            continue;
        int t = find_type(ev, key);
        if (t < 0 && add_types) {
            char **nk = realloc(ev->typekey, (ev->ntypes + 1) * sizeof *nk);
            if (nk)
                ev->typekey = nk;
            char **nn = nk ? realloc(ev->typename, (ev->ntypes + 1) * sizeof *nn)
                           : NULL;
            if (nn)
                ev->typename = nn;
            if (!nk || !nn || !(nk[ev->ntypes] = ompf__eval_strdup(key))) {
                free(tmap);
                return OMPF_ENOMEM;
            }
            if (!(nn[ev->ntypes] = ompf__eval_strdup(ompf_construct_name(p, (uint32_t)k)))) {
                free(nk[ev->ntypes]);
                free(tmap);
                return OMPF_ENOMEM;
            }
            t = (int)ev->ntypes++;
        }
        if (t >= 0)
            tmap[k] = (uint32_t)t;
    }
    for (size_t i = 0; i < nxu; i++) {
        uint32_t ty = ompf_xu_get(p, i)->type;
        c->type[i] = ty < ncons ? tmap[ty] : OMPF_NONE32;
    }
    free(tmap);
    /* Ranks for Spearman of complete columns, computed once. */
    if (want_spearman(ev)) {
        for (size_t e = 0; e < ev->nev; e++) {
            if (!c->col[e])
                continue;
            size_t i = 0;
            while (i < nxu && !isnan(c->col[e][i]))
                i++;
            if (i < nxu)
                continue;
            c->rank[e] = malloc((nxu ? nxu : 1) * sizeof(double));
            if (!c->rank[e] || ompf__ranks(c->col[e], nxu, c->rank[e]))
                return OMPF_ENOMEM;
        }
    }
    return 0;
}

/* Spearman of events a, b of a colset over XUs with both values. */
double ompf__colset_spearman(const colset_t *c, uint32_t a, uint32_t b)
{
    if (c->rank[a] && c->rank[b])
        return ompf__pearson(c->rank[a], c->rank[b], c->nxu);
    size_t n = 0;
    double *x = malloc((c->nxu ? c->nxu : 1) * 2 * sizeof *x);
    if (!x)
        return NAN;
    double *y = x + c->nxu;
    for (size_t i = 0; i < c->nxu; i++) {
        if (isnan(c->col[a][i]) || isnan(c->col[b][i]))
            continue;
        x[n] = c->col[a][i];
        y[n] = c->col[b][i];
        n++;
    }
    double r = ompf_spearman(x, y, n);
    free(x);
    return r;
}
