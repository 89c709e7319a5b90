/*
 * EPD (docs/semantics.md, Evaluation): event pairs and repeats from the
 * references' metadata, histogram bounds and calibration per pair (and per
 * type), then TMD of each target per pair, EPD as their geometric mean,
 * Correlation Error.
 * Choices the papers leave open are documented in docs/evaluation.md.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evaluate_internal.h"
#include "ompfuse/evaluate.h"
#include "ompfuse/csv.h"

/* A profile's values rearranged by evaluation event (columns), with each
 * XU's evaluation type. */
typedef struct colset {
    size_t nxu;
    double **col;   /* per evaluation event; NULL: not counted/absent */
    double **rank;  /* per event: ranks when the column has no missing */
    uint32_t *type; /* per XU: evaluation type or OMPF_NONE32 */
    /* references: min/max of each event over XUs with a value, and per
     * type ([type * nev + event]); NaN when no value */
    double *emin, *emax, *tmin, *tmax;
    /* values placed on each axis (NULL: not placed), all XUs and per type */
    size_t naxes;
    uint16_t **abin, **tbin;
    double **acoord, **tcoord;
} colset_t;

/* One event on one grid dimension: pairs whose repeats are the same share
 * the event's bounds, so its values are binned once per XU for all of them
 * (ompf_eval_create keys axes by event and repeat list). */
typedef struct axis {
    uint32_t ev;
    size_t nrep;
    const size_t *rep; /* the first pair's repeat list */
    int have;          /* some repeat has a value */
    ompf_grid_t grid;  /* dimension 0: the bounds over the repeats */
    unsigned char *thave; /* per type */
    ompf_grid_t *tgrid;   /* per type (per_type) */
} axis_t;

typedef struct ptype {
    uint32_t type;
    ompf_grid_t grid;
    ompf_hist2d_t *hist; /* per repeat */
    double weight;
    double calibration;
    int floor;
    char *problem;
} ptype_t;

typedef struct pair {
    uint32_t ev[2];
    uint32_t ax[2];
    size_t nrep;
    size_t *rep;
    ompf_grid_t grid;
    ompf_hist2d_t *hist; /* per repeat */
    double calibration;
    int floor;
    double spearman_ref;
    char *problem;
    size_t ntypes;
    ptype_t *types;
    uint32_t *slot; /* per type: index in types or OMPF_NONE32 */
} pair_t;

struct ompf_eval {
    ompf_eval_opts_t opts;
    const ompf_profile_t *const *refs;
    char **names;
    size_t nrefs;
    size_t nev;
    char **evname;
    size_t ntypes;
    char **typekey;  /* identity (matching across profiles) */
    char **typename; /* construct key, what is printed */
    colset_t *refcols;
    size_t npairs;
    pair_t *pairs;
    size_t naxes;
    axis_t *axes;
    unsigned threads;
    ompf_emd_ws_t **ws; /* one per thread */
    char *notes;
    size_t notes_len;
    char **lack; /* per event: problem of a target without it */
};

/* Spearman coefficients are computed for Correlation Error and for the
 * CSV's columns. */
static int want_spearman(const ompf_eval_t *ev)
{
    return ev->opts.correlation_error || ev->opts.spearman;
}

void ompf_eval_opts_default(ompf_eval_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->bins = 10;
    o->check_program = 1;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static char *xasprintf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static int notes_add(ompf_eval_t *ev, const char *line)
{
    size_t l = strlen(line);
    char *n = realloc(ev->notes, ev->notes_len + l + 2);
    if (!n)
        return OMPF_ENOMEM;
    memcpy(n + ev->notes_len, line, l);
    n[ev->notes_len + l] = '\n';
    n[ev->notes_len + l + 1] = '\0';
    ev->notes = n;
    ev->notes_len += l + 1;
    return 0;
}

/* ---- program check ----------------------------------------------------- */

int ompf_eval_same_program(const ompf_profile_t *a, const char *name_a,
                           const ompf_profile_t *b, const char *name_b,
                           ompf_error_t *err)
{
    static const char *keys[] = {"program", "argv"};
    for (int k = 0; k < 2; k++) {
        const char *va = ompf_meta_get(a, keys[k]);
        const char *vb = ompf_meta_get(b, keys[k]);
        /* absent or empty (a CSV import): unknown, not a mismatch */
        if (!va || !vb || !*va || !*vb || !strcmp(va, vb))
            continue;
        char sa[200], sb[200];
        /* argv is joined by \x1f: show it with spaces */
        snprintf(sa, sizeof sa, "%s", va);
        snprintf(sb, sizeof sb, "%s", vb);
        for (char *p = sa; *p; p++)
            if (*p == '\x1f')
                *p = ' ';
        for (char *p = sb; *p; p++)
            if (*p == '\x1f')
                *p = ' ';
        return ompf_error_set(
            err, OMPF_EMISMATCH,
            "%s and %s are runs of different programs (%s '%s' vs '%s'); "
            "evaluate profiles of one program with one set of arguments, or "
            "pass --ignore-program if they are the same program",
            name_a, name_b, keys[k], sa, sb);
    }
    return 0;
}

/* ---- columns ----------------------------------------------------------- */

/* Frees the placed values only (references: once their histograms are
 * built). */
static void colset_unplace(colset_t *c)
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

static void colset_free(colset_t *c, size_t nev)
{
    if (!c)
        return;
    colset_unplace(c);
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
static int colset_build(ompf_eval_t *ev, const ompf_profile_t *p,
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
            if (!nk || !nn || !(nk[ev->ntypes] = xstrdup(key))) {
                free(tmap);
                return OMPF_ENOMEM;
            }
            if (!(nn[ev->ntypes] = xstrdup(ompf_construct_name(p, (uint32_t)k)))) {
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
static double colset_spearman(const colset_t *c, uint32_t a, uint32_t b)
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

/* ---- bounds and calibration -------------------------------------------- */

/* Bounds of the evaluation's events in a reference, once: a pair's bounds
 * are then the extremes over its repeats. */
static int colset_bounds(const ompf_eval_t *ev, colset_t *c)
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
static int axis_get(ompf_eval_t *ev, uint32_t e, const size_t *rep,
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

/* Work on one colset: ref is the reference's index, or SIZE_MAX for a
 * target.  Placing its values on the axes: for a reference only the axes
 * over its repeats, for a target those of the events it has; binning a
 * reference into the histograms of the pairs it is a repeat of. */
typedef struct {
    ompf_eval_t *ev;
    colset_t *c;
    size_t ref;
} job_t;

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

static int colset_place(ompf_eval_t *ev, colset_t *c, size_t ref)
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

/* A pair's grids and empty histograms (before any reference is binned). */
static int pair_setup(ompf_eval_t *ev, pair_t *pr)
{
    if (pr->problem)
        return 0;
    const axis_t *xa = &ev->axes[pr->ax[0]], *xb = &ev->axes[pr->ax[1]];
    if (!xa->have || !xb->have) {
        pr->problem = xasprintf("no reference XU has values of both events");
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
static int pair_hist(const pair_t *pr, const colset_t *c, ompf_hist2d_t *h)
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
static ompf_hist2d_t *pair_type_hists(const pair_t *pr, const colset_t *c,
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
static int pair_bin(void *ctx, size_t i, size_t thread)
{
    (void)thread;
    job_t *b = ctx;
    pair_t *pr = &b->ev->pairs[i];
    size_t r = rep_index(pr->rep, pr->nrep, b->ref);
    if (pr->problem || r == pr->nrep)
        return 0;
    if (!pr->types)
        return pair_hist(pr, b->c, &pr->hist[r]);
    int rc;
    ompf_hist2d_t *th = pair_type_hists(pr, b->c, &pr->hist[r], &rc);
    if (!th)
        return rc;
    for (size_t k = 0; k < pr->ntypes; k++) /* freed with the pair */
        pr->types[k].hist[r] = th[k];
    free(th);
    return rc;
}

/* Calibration of a pair (and its types) once every repeat is binned. */
static int pair_prepare(void *ctx, size_t i, size_t thread)
{
    ompf_eval_t *ev = ctx;
    pair_t *pr = &ev->pairs[i];
    if (pr->problem)
        return 0;
    for (size_t r = 0; r < pr->nrep; r++)
        if (pr->hist[r].total == 0) {
            pr->problem = xasprintf("reference %s has no XU with values of "
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
            sp[r] = colset_spearman(&ev->refcols[pr->rep[r]], pr->ev[0],
                                    pr->ev[1]);
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
                pt->problem = xasprintf(
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

/* ---- create / destroy -------------------------------------------------- */

void ompf_eval_destroy(ompf_eval_t *ev)
{
    if (!ev)
        return;
    for (size_t i = 0; i < ev->npairs; i++) {
        pair_t *pr = &ev->pairs[i];
        for (size_t r = 0; pr->hist && r < pr->nrep; r++)
            ompf_hist2d_free(&pr->hist[r]);
        free(pr->hist);
        for (size_t t = 0; t < pr->ntypes; t++) {
            for (size_t r = 0; pr->types[t].hist && r < pr->nrep; r++)
                ompf_hist2d_free(&pr->types[t].hist[r]);
            free(pr->types[t].hist);
            free(pr->types[t].problem);
        }
        free(pr->types);
        free(pr->slot);
        free(pr->rep);
        free(pr->problem);
    }
    free(ev->pairs);
    for (size_t a = 0; a < ev->naxes; a++) {
        free(ev->axes[a].thave);
        free(ev->axes[a].tgrid);
    }
    free(ev->axes);
    for (size_t r = 0; r < ev->nrefs; r++) {
        if (ev->refcols)
            colset_free(&ev->refcols[r], ev->nev);
        if (ev->names)
            free(ev->names[r]);
    }
    free(ev->refcols);
    free(ev->names);
    for (size_t e = 0; e < ev->nev; e++)
        free(ev->evname[e]);
    free(ev->evname);
    for (size_t t = 0; t < ev->ntypes; t++) {
        free(ev->typekey[t]);
        free(ev->typename[t]);
    }
    free(ev->typekey);
    free(ev->typename);
    for (unsigned t = 0; ev->ws && t < ev->threads; t++)
        ompf_emd_ws_destroy(ev->ws[t]);
    free(ev->ws);
    free(ev->notes);
    for (size_t e = 0; ev->lack && e < ev->nev; e++)
        free(ev->lack[e]);
    free(ev->lack);
    free(ev);
}

int ompf_eval_create(const ompf_profile_t *const *refs,
                     const char *const *names, size_t nrefs,
                     const ompf_eval_opts_t *opts, ompf_eval_t **out,
                     ompf_error_t *err)
{
    if (!refs || !out || nrefs == 0)
        return ompf_error_set(err, OMPF_EINVAL,
                              "no reference profiles given: pass the "
                              "profiles of the reference runs");
    *out = NULL;
    ompf_eval_t *ev = calloc(1, sizeof *ev);
    if (!ev)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    if (opts)
        ev->opts = *opts;
    else
        ompf_eval_opts_default(&ev->opts);
    if (ev->opts.bins == 0)
        ev->opts.bins = 10;
    if (ev->opts.bins > 1000) {
        ompf_eval_destroy(ev);
        return ompf_error_set(err, OMPF_EINVAL,
                              "%u intervals per event is too many for an "
                              "exact EMD (at most 1000)",
                              ev->opts.bins);
    }
    ev->refs = refs;
    ev->nrefs = nrefs;
    ev->threads = ev->opts.threads ? ev->opts.threads : ompf__default_threads();
    int rc = OMPF_ENOMEM;
    ev->names = calloc(nrefs, sizeof *ev->names);
    ev->refcols = calloc(nrefs, sizeof *ev->refcols);
    ev->ws = calloc(ev->threads, sizeof *ev->ws);
    if (!ev->names || !ev->refcols || !ev->ws)
        goto fail;
    for (unsigned t = 0; t < ev->threads; t++)
        if (ompf_emd_ws_create(&ev->ws[t]))
            goto fail;
    for (size_t r = 0; r < nrefs; r++) {
        char buf[32];
        snprintf(buf, sizeof buf, "reference #%zu", r + 1);
        ev->names[r] = xstrdup(names && names[r] ? names[r] : buf);
        if (!ev->names[r])
            goto fail;
    }
    if (ev->opts.check_program)
        for (size_t r = 1; r < nrefs; r++)
            if ((rc = ompf_eval_same_program(refs[0], ev->names[0], refs[r],
                                             ev->names[r], err))) {
                ompf_eval_destroy(ev);
                return rc;
            }
    /* Events: counted in some reference, in order of first appearance. */
    for (size_t r = 0; r < nrefs; r++) {
        size_t ne = ompf_event_count(refs[r]);
        for (size_t e = 0; e < ne; e++) {
            const ompf_event_t *pe = ompf_event_get(refs[r], (uint32_t)e);
            if (pe->status != OMPF_EV_COUNTED)
                continue;
            size_t k = 0;
            while (k < ev->nev && strcmp(ev->evname[k], pe->name))
                k++;
            if (k < ev->nev)
                continue;
            char **nn = realloc(ev->evname, (ev->nev + 1) * sizeof *nn);
            if (!nn)
                goto fail;
            ev->evname = nn;
            if (!(nn[ev->nev] = xstrdup(pe->name)))
                goto fail;
            ev->nev++;
        }
    }
    if (ev->nev < 2) {
        rc = ompf_error_set(err, OMPF_EINVAL,
                            "the references count %zu event%s (%s...): EPD "
                            "needs pairs of events counted together",
                            ev->nev, ev->nev == 1 ? "" : "s", ev->names[0]);
        ompf_eval_destroy(ev);
        return rc;
    }
    ev->lack = calloc(ev->nev, sizeof *ev->lack);
    if (!ev->lack)
        goto fail;
    for (size_t e = 0; e < ev->nev; e++)
        if (!(ev->lack[e] = xasprintf("the target has no values of %s "
                                      "(absent or not counted)",
                                      ev->evname[e])))
            goto fail;
    for (size_t r = 0; r < nrefs; r++)
        if ((rc = colset_build(ev, refs[r], 1, 1, &ev->refcols[r])))
            goto fail;
    /* after all types are known */
    for (size_t r = 0; r < nrefs; r++)
        if ((rc = colset_bounds(ev, &ev->refcols[r])))
            goto fail;
    /* Pairs and their repeats. */
    size_t np = ev->nev * (ev->nev - 1) / 2;
    ev->pairs = calloc(np, sizeof *ev->pairs);
    if (!ev->pairs)
        goto fail;
    for (uint32_t a = 0; a < ev->nev; a++)
        for (uint32_t b = a + 1; b < ev->nev; b++) {
            pair_t *pr = &ev->pairs[ev->npairs++];
            pr->ev[0] = a;
            pr->ev[1] = b;
            pr->rep = malloc(nrefs * sizeof *pr->rep);
            if (!pr->rep)
                goto fail;
            for (size_t r = 0; r < nrefs; r++)
                if (ev->refcols[r].col[a] && ev->refcols[r].col[b])
                    pr->rep[pr->nrep++] = r;
            if (pr->nrep < 2) {
                pr->problem = xasprintf(
                    "%s and %s are counted together in %zu reference run%s "
                    "(EPD needs at least 2 repeats)",
                    ev->evname[a], ev->evname[b], pr->nrep,
                    pr->nrep == 1 ? "" : "s");
                if (!pr->problem)
                    goto fail;
            }
        }
    /* Axes of the pairs that have repeats; each reference's values placed
     * once per axis, binned into the pairs, then dropped. */
    if (!(ev->axes = calloc(2 * ev->npairs, sizeof *ev->axes)))
        goto fail;
    for (size_t i = 0; i < ev->npairs; i++) {
        pair_t *pr = &ev->pairs[i];
        for (int d = 0; d < 2 && !pr->problem; d++)
            if ((rc = axis_get(ev, pr->ev[d], pr->rep, pr->nrep, &pr->ax[d])))
                goto fail;
    }
    for (size_t i = 0; i < ev->npairs; i++)
        if ((rc = pair_setup(ev, &ev->pairs[i])))
            goto fail;
    for (size_t r = 0; r < nrefs; r++) {
        job_t b = {.ev = ev, .c = &ev->refcols[r], .ref = r};
        rc = colset_place(ev, &ev->refcols[r], r);
        if (!rc)
            rc = ompf__parallel_for(ev->npairs, ev->threads, pair_bin, &b,
                                    "binning", 0);
        colset_unplace(&ev->refcols[r]);
        if (rc)
            goto fail;
    }
    rc = ompf__parallel_for(ev->npairs, ev->threads, pair_prepare, ev,
                            "calibrating", ev->opts.progress);
    if (rc)
        goto fail;
    size_t bad = 0;
    for (size_t i = 0; i < ev->npairs; i++) {
        pair_t *pr = &ev->pairs[i];
        char line[1200];
        if (pr->problem) {
            snprintf(line, sizeof line, "%s,%s: %s", ev->evname[pr->ev[0]],
                     ev->evname[pr->ev[1]], pr->problem);
            if (notes_add(ev, line))
                goto fail;
            bad++;
        }
        for (size_t t = 0; t < pr->ntypes; t++)
            if (pr->types[t].problem) {
                snprintf(line, sizeof line, "%s,%s: %s (type left out)",
                         ev->evname[pr->ev[0]], ev->evname[pr->ev[1]],
                         pr->types[t].problem);
                if (notes_add(ev, line))
                    goto fail;
            }
    }
    if (bad && !ev->opts.allow_partial) {
        const pair_t *pr = NULL;
        for (size_t i = 0; i < ev->npairs && !pr; i++)
            if (ev->pairs[i].problem)
                pr = &ev->pairs[i];
        rc = ompf_error_set(
            err, OMPF_EMISMATCH,
            "%zu of %zu event pairs cannot be evaluated from these "
            "references, e.g. %s,%s: %s; add reference runs covering them "
            "or pass --allow-partial to evaluate the others",
            bad, ev->npairs, ev->evname[pr->ev[0]], ev->evname[pr->ev[1]],
            pr->problem);
        ompf_eval_destroy(ev);
        return rc;
    }
    if (bad == ev->npairs) {
        rc = ompf_error_set(err, OMPF_EMISMATCH,
                            "no event pair can be evaluated from these "
                            "references:\n%s",
                            ev->notes ? ev->notes : "");
        ompf_eval_destroy(ev);
        return rc;
    }
    *out = ev;
    return 0;
fail:
    ompf_eval_destroy(ev);
    return ompf_error_set(err, rc ? rc : OMPF_ENOMEM,
                          "evaluation of the references failed: %s",
                          ompf_strerror(rc ? rc : OMPF_ENOMEM));
}

size_t ompf_eval_event_count(const ompf_eval_t *ev) { return ev->nev; }
const char *ompf_eval_event_name(const ompf_eval_t *ev, size_t i)
{
    return i < ev->nev ? ev->evname[i] : NULL;
}
size_t ompf_eval_pair_count(const ompf_eval_t *ev) { return ev->npairs; }
const char *ompf_eval_reference_notes(const ompf_eval_t *ev)
{
    return ev->notes;
}

int ompf_eval_pair_info(const ompf_eval_t *ev, size_t i,
                        ompf_eval_pair_info_t *info)
{
    if (!ev || i >= ev->npairs || !info)
        return OMPF_EINVAL;
    const pair_t *pr = &ev->pairs[i];
    info->ev[0] = pr->ev[0];
    info->ev[1] = pr->ev[1];
    info->repeats = pr->nrep;
    info->repeat_refs = pr->rep;
    info->grid = pr->problem ? NULL : &pr->grid;
    info->calibration = pr->problem ? NAN : pr->calibration;
    info->calibration_floor = pr->floor;
    info->problem = pr->problem;
    return 0;
}

/* ---- targets ----------------------------------------------------------- */

typedef struct {
    ompf_eval_t *ev;
    colset_t tc;
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
    const double *va = tc->tc.col[pr->ev[0]], *vb = tc->tc.col[pr->ev[1]];
    if (!va || !vb) {
        res->problem = ev->lack[pr->ev[va ? 1 : 0]];
        return 0;
    }
    res->uncalibrated = calloc(pr->nrep, sizeof *res->uncalibrated);
    if (!res->uncalibrated)
        return OMPF_ENOMEM;
    ompf_hist2d_t ht;
    int rc;
    /* per type: the types' histograms come from the same pass */
    ompf_hist2d_t *th = NULL;
    if (ev->opts.per_type) {
        if (!(th = pair_type_hists(pr, &tc->tc, &ht, &rc)))
            return rc;
    } else {
        rc = pair_hist(pr, &tc->tc, &ht);
    }
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
        res->spearman_target = colset_spearman(&tc->tc, pr->ev[0], pr->ev[1]);
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
        (rc = ompf_eval_same_program(ev->refs[0], ev->names[0], target, name,
                                     err)))
        return rc;
    tctx_t tc = {.ev = ev, .name = name};
    ompf_eval_result_t *res = calloc(1, sizeof *res);
    if (!res)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    tc.res = res;
    res->pairs_total = ev->npairs;
    res->epd = res->correlation_error = NAN;
    res->target = xstrdup(name);
    res->pairs = calloc(ev->npairs, sizeof *res->pairs);
    if (!res->target || !res->pairs) {
        ompf_eval_result_free(res);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    if ((rc = colset_build(ev, target, 0, 0, &tc.tc)) ||
        (rc = colset_place(ev, &tc.tc, SIZE_MAX))) {
        colset_free(&tc.tc, ev->nev);
        ompf_eval_result_free(res);
        return ompf_error_set(err, rc, "%s: %s", name, ompf_strerror(rc));
    }
    char label[300];
    snprintf(label, sizeof label, "evaluating %s", name);
    rc = ompf__parallel_for(ev->npairs, ev->threads, pair_target, &tc, label,
                            ev->opts.progress);
    /* Events the target lacks, named in the error below. */
    char lacks[600] = "";
    size_t nlack = 0, ll = 0;
    for (size_t e = 0; e < ev->nev; e++)
        if (!tc.tc.col[e]) {
            if (ll < sizeof lacks)
                ll += (size_t)snprintf(lacks + ll, sizeof lacks - ll, "%s%s",
                                       nlack ? ", " : "", ev->evname[e]);
            nlack++;
        }
    colset_free(&tc.tc, ev->nev);
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

static const ompf_eval_result_t *sort_res;
static int cmp_worst(const void *a, const void *b)
{
    double x = sort_res->pairs[*(const size_t *)a].tmd;
    double y = sort_res->pairs[*(const size_t *)b].tmd;
    if (x != y)
        return (x < y) - (x > y);
    return (*(const size_t *)a > *(const size_t *)b) -
           (*(const size_t *)a < *(const size_t *)b);
}

size_t ompf_eval_worst_pairs(const ompf_eval_result_t *r, size_t *idx,
                             size_t max)
{
    size_t n = 0;
    size_t *all = malloc((r->pairs_total ? r->pairs_total : 1) * sizeof *all);
    if (!all)
        return 0;
    for (size_t i = 0; i < r->pairs_total; i++)
        if (r->pairs[i].evaluated)
            all[n++] = i;
    /* qsort has no context argument in C11; results are read-only. */
    sort_res = r;
    qsort(all, n, sizeof *all, cmp_worst);
    sort_res = NULL;
    if (n > max)
        n = max;
    memcpy(idx, all, n * sizeof *idx);
    free(all);
    return n;
}

/* ---- CSV --------------------------------------------------------------- */

static size_t max_repeats(const ompf_eval_t *ev)
{
    size_t k = 0;
    for (size_t i = 0; i < ev->npairs; i++)
        if (ev->pairs[i].nrep > k)
            k = ev->pairs[i].nrep;
    return k;
}

static void csv_num(FILE *f, double v)
{
    if (!isnan(v))
        fprintf(f, "%.17g", v);
}

int ompf_eval_csv_header(const ompf_eval_t *ev, FILE *out)
{
    fputs("target,event_a,event_b,type,repeats,calibration,"
          "calibration_floor",
          out);
    size_t k = max_repeats(ev);
    for (size_t r = 1; r <= k; r++)
        fprintf(out, ",uncalibrated_%zu", r);
    fputs(",tmd,tmd_floor,left_out,binned,spearman_target,"
          "spearman_reference,status\n",
          out);
    return ferror(out) ? OMPF_EIO : 0;
}

int ompf_eval_csv_rows(const ompf_eval_t *ev, const ompf_eval_result_t *r,
                       FILE *out)
{
    size_t k = max_repeats(ev);
    for (size_t i = 0; i < r->pairs_total; i++) {
        const ompf_eval_pair_result_t *p = &r->pairs[i];
        const pair_t *pr = &ev->pairs[i];
        ompf_csv_field(out, r->target);
        fputc(',', out);
        ompf_csv_field(out, ev->evname[pr->ev[0]]);
        fputc(',', out);
        ompf_csv_field(out, ev->evname[pr->ev[1]]);
        fprintf(out, ",all,%zu,", pr->nrep);
        csv_num(out, p->calibration);
        fprintf(out, ",%d", p->calibration_floor);
        for (size_t q = 0; q < k; q++) {
            fputc(',', out);
            if (p->uncalibrated && q < pr->nrep && p->evaluated)
                csv_num(out, p->uncalibrated[q]);
        }
        fputc(',', out);
        csv_num(out, p->tmd);
        fprintf(out, ",%d,%llu,%llu,", p->tmd_floor,
                (unsigned long long)p->left_out,
                (unsigned long long)p->binned);
        csv_num(out, p->spearman_target);
        fputc(',', out);
        csv_num(out, p->spearman_reference);
        fputc(',', out);
        ompf_csv_field(out, p->evaluated ? "ok" : p->problem ? p->problem : "");
        fputc('\n', out);
        for (size_t t = 0; t < p->ntypes; t++) {
            const ompf_eval_type_result_t *tr = &p->types[t];
            ompf_csv_field(out, r->target);
            fputc(',', out);
            ompf_csv_field(out, ev->evname[pr->ev[0]]);
            fputc(',', out);
            ompf_csv_field(out, ev->evname[pr->ev[1]]);
            fputc(',', out);
            ompf_csv_field(out, tr->type);
            fprintf(out, ",%zu,", pr->nrep);
            csv_num(out, tr->problem && !tr->calibration ? NAN
                                                          : tr->calibration);
            fprintf(out, ",%d", tr->calibration_floor);
            for (size_t q = 0; q < k; q++) {
                fputc(',', out);
                if (tr->uncalibrated && q < pr->nrep)
                    csv_num(out, tr->uncalibrated[q]);
            }
            fputc(',', out);
            csv_num(out, tr->tmd);
            /* Spearman is per pair (all XUs): empty on type rows. */
            fprintf(out, ",%d,%llu,%llu,,,", tr->tmd_floor,
                    (unsigned long long)tr->left_out,
                    (unsigned long long)tr->binned);
            ompf_csv_field(out, tr->problem ? tr->problem : "ok");
            fputc('\n', out);
        }
    }
    return ferror(out) ? OMPF_EIO : 0;
}
