/* EPD: one profile seen by evaluation event (a colset: where each event's
 * values are in its rows), its XUs' evaluation types, and Spearman
 * coefficients over them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epd_internal.h"

/* ---- columns ----------------------------------------------------------- */

void ompf__colset_release(colset_t *c)
{
    for (size_t e = 0; c->rank && e < c->nev; e++)
        free(c->rank[e]);
    free(c->rank);
    free(c->type);
    free(c->own);
    c->rank = NULL;
    c->type = NULL;
    c->own = NULL;
}

void ompf__colset_free(colset_t *c)
{
    if (!c)
        return;
    ompf__colset_release(c);
    free(c->evmap);
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

/* Copies of the values of the events c has, each XU's in a row (a
 * reference's: the evaluation then needs the profile no longer). */
static int colset_copy(colset_t *c)
{
    size_t k = 0;
    for (size_t e = 0; e < c->nev; e++)
        k += c->evmap[e] >= 0;
    int *col = malloc((k ? k : 1) * sizeof *col);
    c->own = malloc((c->nxu && k ? c->nxu * k : 1) * sizeof *c->own);
    if (!col || !c->own) {
        free(col);
        return OMPF_ENOMEM;
    }
    k = 0;
    for (size_t e = 0; e < c->nev; e++)
        if (c->evmap[e] >= 0) {
            col[k] = c->evmap[e];
            c->evmap[e] = (int)k++;
        }
    for (size_t i = 0; i < c->nxu; i++) {
        const double *row = ompf_xu_values_const(c->p, i);
        double *dst = c->own + i * k;
        for (size_t j = 0; j < k; j++)
            dst[j] = row[col[j]];
    }
    free(col);
    c->stride = k;
    c->p = NULL;
    return 0;
}

int ompf__colset_events(const ompf_eval_t *ev, colset_t *c)
{
    if (c->nev == ev->nev)
        return 0;
    int *m = realloc(c->evmap, ev->nev * sizeof *m);
    if (!m)
        return OMPF_ENOMEM;
    c->evmap = m;
    for (size_t e = c->nev; e < ev->nev; e++)
        m[e] = -1;
    c->nev = ev->nev;
    return 0;
}

/* Where the evaluation's events are in p.  only_counted: events not
 * counted for the whole run are treated as absent (references).
 * add_types: unknown construct keys are added to the type table. */
int ompf__colset_build(ompf_eval_t *ev, const ompf_profile_t *p,
                        int only_counted, int add_types, int copy,
                        colset_t *c)
{
    memset(c, 0, sizeof *c);
    size_t nxu = ompf_xu_count(p);
    c->p = p;
    c->nxu = nxu;
    c->nev = ev->nev;
    c->evmap = malloc((ev->nev ? ev->nev : 1) * sizeof *c->evmap);
    c->type = malloc((nxu ? nxu : 1) * sizeof *c->type);
    if (!c->evmap || !c->type)
        return OMPF_ENOMEM;
    for (size_t e = 0; e < ev->nev; e++) {
        int pe = ompf_event_find(p, ev->evname[e]);
        c->evmap[e] = -1;
        if (pe < 0)
            continue;
        const ompf_event_t *pev = ompf_event_get(p, (uint32_t)pe);
        if (pev->status == OMPF_EV_FAILED ||
            (only_counted && pev->status != OMPF_EV_COUNTED))
            continue;
        c->evmap[e] = pe;
    }
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
    ompf_u32_view_t vt = ompf_xu_view_u32(p, OMPF_XU_TYPE); /* lean or full */
    for (size_t i = 0; i < nxu; i++) {
        uint32_t ty = vt.base[i * vt.stride];
        c->type[i] = ty < ncons ? tmap[ty] : OMPF_NONE32;
    }
    free(tmap);
    return copy ? colset_copy(c) : 0;
}

static int rank_event(void *ctx, size_t e, size_t thread)
{
    (void)thread;
    colset_t *c = ctx;
    if (!c->rank[e])
        return 0;
    /* in place: ompf__ranks copies the values before writing ranks */
    return ompf__ranks(c->rank[e], c->nxu, c->rank[e]);
}

/* Ranks for Spearman of complete columns, computed once per profile: the
 * values are gathered in one pass over the rows, then ranked in place. */
int ompf__colset_ranks(const ompf_eval_t *ev, colset_t *c)
{
    size_t nxu = c->nxu;
    c->rank = calloc(ev->nev ? ev->nev : 1, sizeof *c->rank);
    if (!c->rank)
        return OMPF_ENOMEM;
    for (size_t e = 0; e < ev->nev; e++)
        if (colset_has(c, e) &&
            !(c->rank[e] = malloc((nxu ? nxu : 1) * sizeof(double))))
            return OMPF_ENOMEM;
    for (size_t i = 0; i < nxu; i++) {
        const double *row = colset_row(c, i);
        for (size_t e = 0; e < ev->nev; e++)
            if (c->rank[e])
                c->rank[e][i] = row[c->evmap[e]];
    }
    for (size_t e = 0; e < ev->nev; e++) {
        size_t i = 0;
        while (c->rank[e] && i < nxu && !isnan(c->rank[e][i]))
            i++;
        if (i < nxu) {
            free(c->rank[e]);
            c->rank[e] = NULL;
        }
    }
    return ompf__parallel_for(ev->nev, ev->threads, rank_event, c, NULL);
}

/* Spearman of events a, b of a colset over XUs with both values. */
double ompf__colset_spearman(const colset_t *c, uint32_t a, uint32_t b)
{
    if (c->rank && c->rank[a] && c->rank[b])
        return ompf__pearson(c->rank[a], c->rank[b], c->nxu);
    size_t n = 0;
    double *x = malloc((c->nxu ? c->nxu : 1) * 2 * sizeof *x);
    if (!x)
        return NAN;
    double *y = x + c->nxu;
    int ia = c->evmap[a], ib = c->evmap[b];
    for (size_t i = 0; i < c->nxu; i++) {
        const double *row = colset_row(c, i);
        if (isnan(row[ia]) || isnan(row[ib]))
            continue;
        x[n] = row[ia];
        y[n] = row[ib];
        n++;
    }
    double r = ompf_spearman(x, y, n);
    free(x);
    return r;
}
