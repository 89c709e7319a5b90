/* EPD histograms: bounds of the events in the references, the axes (one
 * event over one repeat set) that values are placed on once per XU, and
 * the pairs' histograms (all XUs and per type) gathered from them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epd_internal.h"

/* ---- bounds and axes -------------------------------------------------- */

/* Bounds of the evaluation's events in a reference, once: a pair's bounds
 * are then the extremes over its repeats. */
int ompf__colset_bounds(const ompf_eval_t *ev, colset_t *c)
{
    size_t ne = ev->nev ? ev->nev : 1, nt = ev->ntypes ? ev->ntypes : 1;
    c->emin = malloc(ne * sizeof *c->emin);
    c->emax = malloc(ne * sizeof *c->emax);
    if (!c->emin || !c->emax)
        return OMPF_ENOMEM;
    if (ev->opts.per_type) {
        c->tmin = malloc(nt * ne * sizeof *c->tmin);
        c->tmax = malloc(nt * ne * sizeof *c->tmax);
        if (!c->tmin || !c->tmax)
            return OMPF_ENOMEM;
        for (size_t k = 0; k < nt * ne; k++)
            c->tmin[k] = c->tmax[k] = NAN;
    }
    for (size_t e = 0; e < ev->nev; e++) {
        double lo = INFINITY, hi = -INFINITY;
        const double *v = c->col[e];
        for (size_t i = 0; v && i < c->nxu; i++) {
            if (isnan(v[i]))
                continue;
            if (v[i] < lo)
                lo = v[i];
            if (v[i] > hi)
                hi = v[i];
            if (c->tmin && c->type[i] != OMPF_NONE32) {
                size_t k = (size_t)c->type[i] * ev->nev + e;
                if (!(v[i] >= c->tmin[k]))
                    c->tmin[k] = v[i];
                if (!(v[i] <= c->tmax[k]))
                    c->tmax[k] = v[i];
            }
        }
        c->emin[e] = lo <= hi ? lo : NAN;
        c->emax[e] = lo <= hi ? hi : NAN;
    }
    return 0;
}

/* Bounds of event e over the repeats rep[] (all XUs, or the XUs of one
 * type); 0 when no repeat has a value. */
static int axis_bounds(const ompf_eval_t *ev, const size_t *rep, size_t nrep,
                       uint32_t e, uint32_t type, int by_type, double *lo,
                       double *hi)
{
    int have = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t r = 0; r < nrep; r++) {
        const colset_t *c = &ev->refcols[rep[r]];
        double mn = by_type ? c->tmin[(size_t)type * ev->nev + e] : c->emin[e];
        double mx = by_type ? c->tmax[(size_t)type * ev->nev + e] : c->emax[e];
        if (isnan(mn))
            continue;
        have = 1;
        if (mn < *lo)
            *lo = mn;
        if (mx > *hi)
            *hi = mx;
    }
    return have;
}

/* The axis of event e over repeats rep[] (found or added). */
int ompf__axis_get(ompf_eval_t *ev, uint32_t e, const size_t *rep,
                    size_t nrep, uint32_t *out)
{
    for (size_t a = 0; a < ev->naxes; a++) {
        const axis_t *x = &ev->axes[a];
        if (x->ev == e && x->nrep == nrep &&
            !memcmp(x->rep, rep, nrep * sizeof *rep)) {
            *out = (uint32_t)a;
            return 0;
        }
    }
    axis_t *x = &ev->axes[ev->naxes];
    memset(x, 0, sizeof *x);
    x->ev = e;
    x->rep = rep;
    x->nrep = nrep;
    double lo, hi;
    x->have = axis_bounds(ev, rep, nrep, e, 0, 0, &lo, &hi);
    ompf_grid_init(&x->grid, ev->opts.bins, lo, hi, lo, hi);
    if (ev->opts.per_type) {
        size_t nt = ev->ntypes ? ev->ntypes : 1;
        x->thave = calloc(nt, 1);
        x->tgrid = calloc(nt, sizeof *x->tgrid);
        if (!x->thave || !x->tgrid)
            return OMPF_ENOMEM;
        for (uint32_t t = 0; t < ev->ntypes; t++) {
            x->thave[t] = (unsigned char)axis_bounds(ev, rep, nrep, e, t, 1,
                                                     &lo, &hi);
            ompf_grid_init(&x->tgrid[t], ev->opts.bins, lo, hi, lo, hi);
        }
    }
    *out = (uint32_t)ev->naxes++;
    return 0;
}

/* Position of ref in rep[] (n when absent). */
static size_t rep_index(const size_t *rep, size_t n, size_t ref)
{
    size_t r = 0;
    while (r < n && rep[r] != ref)
        r++;
    return r;
}

static int place_axis(void *ctx, size_t a, size_t thread)
{
    (void)thread;
    job_t *pl = ctx;
    const axis_t *x = &pl->ev->axes[a];
    colset_t *c = pl->c;
    const double *v = c->col[x->ev];
    if (!v || !x->have ||
        (pl->ref != SIZE_MAX && rep_index(x->rep, x->nrep, pl->ref) == x->nrep))
        return 0;
    size_t n = c->nxu ? c->nxu : 1;
    if (!(c->abin[a] = malloc(n * sizeof **c->abin)) ||
        !(c->acoord[a] = malloc(n * sizeof **c->acoord)))
        return OMPF_ENOMEM;
    ompf__axis_place(&x->grid, NULL, NULL, v, c->nxu, c->abin[a],
                     c->acoord[a]);
    if (!c->tbin)
        return 0;
    const ompf_grid_t **grids = malloc((pl->ev->ntypes ? pl->ev->ntypes : 1) *
                                       sizeof *grids);
    if (!grids || !(c->tbin[a] = malloc(n * sizeof **c->tbin)) ||
        !(c->tcoord[a] = malloc(n * sizeof **c->tcoord))) {
        free(grids);
        return OMPF_ENOMEM;
    }
    for (size_t t = 0; t < pl->ev->ntypes; t++)
        grids[t] = x->thave[t] ? &x->tgrid[t] : NULL;
    ompf__axis_place(NULL, grids, c->type, v, c->nxu, c->tbin[a],
                     c->tcoord[a]);
    free(grids);
    return 0;
}

int ompf__colset_place(ompf_eval_t *ev, colset_t *c, size_t ref)
{
    size_t na = ev->naxes ? ev->naxes : 1;
    c->naxes = ev->naxes;
    c->abin = calloc(na, sizeof *c->abin);
    c->acoord = calloc(na, sizeof *c->acoord);
    if (!c->abin || !c->acoord)
        return OMPF_ENOMEM;
    if (ev->opts.per_type) {
        c->tbin = calloc(na, sizeof *c->tbin);
        c->tcoord = calloc(na, sizeof *c->tcoord);
        if (!c->tbin || !c->tcoord)
            return OMPF_ENOMEM;
    }
    job_t pl = {.ev = ev, .c = c, .ref = ref};
    return ompf__parallel_for(ev->naxes, ev->threads, place_axis, &pl,
                              "binning", 0);
}

/* A pair's grids and empty histograms (before any reference is binned). */
int ompf__pair_setup(ompf_eval_t *ev, pair_t *pr)
{
    if (pr->problem)
        return 0;
    const axis_t *xa = &ev->axes[pr->ax[0]], *xb = &ev->axes[pr->ax[1]];
    if (!xa->have || !xb->have) {
        pr->problem = ompf__eval_asprintf("no reference XU has values of both events");
        return pr->problem ? 0 : OMPF_ENOMEM;
    }
    ompf_grid_init(&pr->grid, ev->opts.bins, xa->grid.lo[0], xa->grid.hi[0],
                   xb->grid.lo[0], xb->grid.hi[0]);
    pr->hist = calloc(pr->nrep, sizeof *pr->hist);
    if (!pr->hist)
        return OMPF_ENOMEM;
    if (!ev->opts.per_type)
        return 0;
    /* Per type: the types present in the repeats. */
    size_t nt = ev->ntypes ? ev->ntypes : 1;
    pr->types = calloc(nt, sizeof *pr->types);
    pr->slot = malloc(nt * sizeof *pr->slot);
    if (!pr->types || !pr->slot)
        return OMPF_ENOMEM;
    for (uint32_t t = 0; t < ev->ntypes; t++) {
        pr->slot[t] = OMPF_NONE32;
        if (!xa->thave[t] || !xb->thave[t])
            continue;
        ptype_t *pt = &pr->types[pr->ntypes];
        pt->type = t;
        ompf_grid_init(&pt->grid, ev->opts.bins, xa->tgrid[t].lo[0],
                       xa->tgrid[t].hi[0], xb->tgrid[t].lo[0],
                       xb->tgrid[t].hi[0]);
        if (!(pt->hist = calloc(pr->nrep, sizeof *pt->hist)))
            return OMPF_ENOMEM;
        pr->slot[t] = (uint32_t)pr->ntypes++;
    }
    return 0;
}

/* A pair's histogram of a placed colset over all XUs. */
int ompf__pair_hist(const pair_t *pr, const colset_t *c, ompf_hist2d_t *h)
{
    const uint32_t a0 = pr->ax[0], a1 = pr->ax[1];
    return ompf__hist2d_placed(pr->grid.n, c->abin[a0], c->acoord[a0],
                               c->abin[a1], c->acoord[a1], c->nxu, NULL, NULL,
                               1, h);
}

/* The all-XU histogram into *hall and the types' histograms (returned,
 * pr->types order), all in one pass over the XUs; NULL when out of
 * memory.  *rc: the error (the array is returned even then, for
 * freeing). */
ompf_hist2d_t *ompf__pair_type_hists(const pair_t *pr, const colset_t *c,
                                      ompf_hist2d_t *hall, int *rc)
{
    const uint32_t a0 = pr->ax[0], a1 = pr->ax[1];
    ompf__placed_t all = {c->abin[a0], c->abin[a1], c->acoord[a0],
                          c->acoord[a1]};
    ompf__placed_t typed = {c->tbin[a0], c->tbin[a1], c->tcoord[a0],
                            c->tcoord[a1]};
    ompf_hist2d_t *th = calloc(pr->ntypes ? pr->ntypes : 1, sizeof *th);
    memset(hall, 0, sizeof *hall);
    *rc = th ? ompf__hist2d_placed_all_types(pr->grid.n, &all, &typed,
                                             c->nxu, c->type, pr->slot,
                                             pr->ntypes, hall, th)
             : OMPF_ENOMEM;
    return th;
}

/* Binning a reference whose values are placed (one at a time bounds the
 * memory). */
int ompf__pair_bin(void *ctx, size_t i, size_t thread)
{
    (void)thread;
    job_t *b = ctx;
    pair_t *pr = &b->ev->pairs[i];
    size_t r = rep_index(pr->rep, pr->nrep, b->ref);
    if (pr->problem || r == pr->nrep)
        return 0;
    if (!pr->types)
        return ompf__pair_hist(pr, b->c, &pr->hist[r]);
    int rc;
    ompf_hist2d_t *th = ompf__pair_type_hists(pr, b->c, &pr->hist[r], &rc);
    if (!th)
        return rc;
    for (size_t k = 0; k < pr->ntypes; k++) /* freed with the pair */
        pr->types[k].hist[r] = th[k];
    free(th);
    return rc;
}
