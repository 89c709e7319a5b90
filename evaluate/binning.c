/* EPD histograms: bounds of the events in the references, the axes (one
 * event over one repeat set) that values are placed on once per XU, and
 * the pairs' histograms (all XUs and per type) gathered from them.
 * Values are placed and gathered chunk by chunk of XUs straight from the
 * profile's rows: beyond the profiles, memory is the pairs' bin
 * accumulators and one chunk's placed values, whatever the XU count. */
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
    double *lo = c->emin, *hi = c->emax;
    for (size_t e = 0; e < ev->nev; e++) {
        lo[e] = INFINITY;
        hi[e] = -INFINITY;
    }
    /* one pass over the rows; each event still sees its XUs in order */
    for (size_t i = 0; i < c->nxu; i++) {
        const double *row = colset_row(c, i);
        for (size_t e = 0; e < ev->nev; e++) {
            if (!colset_has(c, e))
                continue;
            double v = row[c->evmap[e]];
            if (isnan(v))
                continue;
            if (v < lo[e])
                lo[e] = v;
            if (v > hi[e])
                hi[e] = v;
            if (c->tmin && c->type[i] != OMPF_NONE32) {
                size_t k = (size_t)c->type[i] * ev->nev + e;
                if (!(v >= c->tmin[k]))
                    c->tmin[k] = v;
                if (!(v <= c->tmax[k]))
                    c->tmax[k] = v;
            }
        }
    }
    for (size_t e = 0; e < ev->nev; e++)
        if (!(lo[e] <= hi[e]))
            lo[e] = hi[e] = NAN;
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
    if (want_spearman(ev) && !(pr->sp = calloc(pr->nrep, sizeof *pr->sp)))
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

/* ---- binning ------------------------------------------------------------ */

/* XUs placed at once: their placed values (10 bytes per axis, twice per
 * type) stay in the caches while every pair gathers them. */
#define CHUNK ((size_t)16384)
/* XUs of one placing work item: their rows are read once for all axes. */
#define PLACE_PART ((size_t)1024)
/* Bin accumulators held at once; with more (many types, many intervals)
 * the pairs are binned in several passes over the XUs. */
#define ACC_BUDGET ((size_t)64 << 20)
/* Pairs gathered by one work item. */
#define WAYS 4

typedef struct {
    ompf_eval_t *ev;
    const colset_t *c;
    const unsigned char *want;
    int per_type;
    size_t p0, p1;            /* pairs of the pass */
    unsigned char *need;      /* per axis: placed in this pass */
    uint32_t *placed;         /* the axes needed, naxes_placed of them */
    size_t naxes_placed;
    const ompf_grid_t **grids; /* per axis, per type: grid or NULL */
    size_t i0, n;             /* the chunk */
    const double **rows;      /* its rows */
    uint16_t **abin, **tbin;  /* per axis: CHUNK placed values */
    double **acoord, **tcoord;
    uint32_t *toff;           /* per XU of the chunk: typed bins' offset of
                                 the pairs whose slots are the types */
    uint32_t **scratch;       /* per thread, WAYS x CHUNK: other pairs' */
    ompf__hacc_t *acc;        /* per pair of the pass */
    uint64_t *type_xus;       /* per type: its XUs */
    uint64_t *xus;            /* per slot of a pair */
    uint64_t done;            /* XUs of all passes, for the progress line */
} binner_t;

/* Typed bins' offset of an XU whose type has slot s (OMPF_NONE32: none)
 * in an accumulator of the given stride. */
static inline uint32_t slot_off(uint32_t s, size_t stride)
{
    return s == OMPF_NONE32 ? 0 : (uint32_t)((1 + (size_t)s) * stride);
}

/* v placed on g (bin, coordinate); missing, or no grid: bin nobin. */
static inline void put(const ompf_grid_t *g, double v, uint16_t nobin,
                       uint16_t *bin, double *coord)
{
    if (!g || isnan(v)) {
        *bin = nobin;
        *coord = 0;
        return;
    }
    *bin = (uint16_t)ompf__place(g, 0, v, coord);
}

/* Places XUs [PLACE_PART * part, ...) of the chunk on every needed axis:
 * each row read once for all of them. */
static int place_chunk(void *ctx, size_t part, size_t thread)
{
    (void)thread;
    binner_t *b = ctx;
    const ompf_eval_t *ev = b->ev;
    const colset_t *c = b->c;
    unsigned n = ev->opts.bins ? ev->opts.bins : 10;
    uint16_t nobin = (uint16_t)(n + 2);
    size_t nt = ev->ntypes, stride = (size_t)(n + 3) * (n + 3);
    size_t k0 = part * PLACE_PART;
    size_t k1 = k0 + PLACE_PART < b->n ? k0 + PLACE_PART : b->n;
    for (size_t k = k0; k < k1; k++) {
        const double *row = b->rows[k];
        uint32_t ty = c->type[b->i0 + k];
        if (b->per_type)
            b->toff[k] = ty == OMPF_NONE32 || ty >= nt
                             ? 0
                             : slot_off(ty, stride);
        for (size_t j = 0; j < b->naxes_placed; j++) {
            uint32_t a = b->placed[j];
            const axis_t *x = &ev->axes[a];
            double v = row[c->evmap[x->ev]];
            put(&x->grid, v, nobin, &b->abin[a][k], &b->acoord[a][k]);
            if (b->per_type)
                put(ty == OMPF_NONE32 ? NULL : b->grids[a * nt + ty], v,
                    nobin, &b->tbin[a][k], &b->tcoord[a][k]);
        }
    }
    return 0;
}

/* Whether a pair's type slots are the evaluation's types themselves. */
static int slots_are_types(const ompf_eval_t *ev, const pair_t *pr)
{
    if (pr->ntypes != ev->ntypes)
        return 0;
    for (uint32_t t = 0; t < ev->ntypes; t++)
        if (pr->slot[t] != t)
            return 0;
    return 1;
}

/* The chunk into the accumulators of pairs p0 + WAYS * g ...: four at a
 * time, with or without types. */
static int gather_chunk(void *ctx, size_t g, size_t thread)
{
    binner_t *b = ctx;
    ompf__hacc_t *acc[WAYS];
    ompf__placed_t all[WAYS], typed[WAYS];
    const uint32_t *toff[WAYS] = {0};
    size_t m = 0, k0 = g * WAYS;
    for (size_t k = k0; k < k0 + WAYS && b->p0 + k < b->p1; k++) {
        size_t i = b->p0 + k;
        if (!b->want[i])
            continue;
        const pair_t *pr = &b->ev->pairs[i];
        const uint32_t a0 = pr->ax[0], a1 = pr->ax[1];
        all[m] = (ompf__placed_t){b->abin[a0], b->abin[a1], b->acoord[a0],
                                  b->acoord[a1]};
        if (b->per_type) {
            typed[m] = (ompf__placed_t){b->tbin[a0], b->tbin[a1],
                                        b->tcoord[a0], b->tcoord[a1]};
            toff[m] = b->toff;
            if (!slots_are_types(b->ev, pr)) {
                /* this pair's own slots (types absent from an axis) */
                uint32_t *o = b->scratch[thread] + m * CHUNK;
                const uint32_t *type = b->c->type + b->i0;
                size_t stride = b->acc[k].stride;
                for (size_t x = 0; x < b->n; x++)
                    o[x] = type[x] == OMPF_NONE32
                               ? 0
                               : slot_off(pr->slot[type[x]], stride);
                toff[m] = o;
            }
        }
        acc[m++] = &b->acc[k];
    }
    size_t j = 0;
    if (m == WAYS) {
        ompf__hacc_gather(acc, all, b->per_type ? typed : NULL, toff, WAYS,
                          b->n);
        j = m;
    }
    for (; j < m; j++)
        ompf__hacc_gather(acc + j, all + j, b->per_type ? typed + j : NULL,
                          toff + j, 1, b->n);
    return 0;
}

static size_t pair_slots(const binner_t *b, size_t i)
{
    return 1 + (b->per_type ? b->ev->pairs[i].ntypes : 0);
}

/* Pairs [p0, p1) of one pass over the XUs. */
static int bin_pass(binner_t *b, size_t p1, ompf_hist2d_t *hall,
                    ompf_hist2d_t **th, ompf_progress_t *prog)
{
    ompf_eval_t *ev = b->ev;
    size_t p0 = b->p0;
    int rc = 0;
    b->p1 = p1;
    memset(b->need, 0, ev->naxes ? ev->naxes : 1);
    for (size_t i = p0; i < p1 && !rc; i++) {
        if (!b->want[i])
            continue;
        b->need[ev->pairs[i].ax[0]] = b->need[ev->pairs[i].ax[1]] = 1;
        rc = ompf__hacc_init(&b->acc[i - p0], ev->pairs[i].grid.n,
                             pair_slots(b, i));
    }
    b->naxes_placed = 0;
    for (size_t a = 0; a < ev->naxes; a++)
        if (b->need[a])
            b->placed[b->naxes_placed++] = (uint32_t)a;
    for (size_t i0 = 0; !rc && i0 < b->c->nxu; i0 += CHUNK) {
        b->i0 = i0;
        b->n = b->c->nxu - i0 < CHUNK ? b->c->nxu - i0 : CHUNK;
        /* progress per XU: the line reads the clock every 1024 calls */
        for (size_t k = 0; k < b->n; k++) {
            b->rows[k] = colset_row(b->c, i0 + k);
            ompf_progress_update(prog, ++b->done);
        }
        rc = ompf__parallel_for((b->n + PLACE_PART - 1) / PLACE_PART,
                                ev->threads, place_chunk, b, NULL);
        if (!rc)
            rc = ompf__parallel_for((p1 - p0 + WAYS - 1) / WAYS, ev->threads,
                                    gather_chunk, b, NULL);
    }
    for (size_t i = p0; i < p1; i++) {
        ompf__hacc_t *a = &b->acc[i - p0];
        if (!b->want[i] || !a->bin)
            continue;
        if (rc) {
            ompf__hacc_free(a);
            continue;
        }
        ompf_hist2d_t *h = malloc(a->nslots * sizeof *h);
        if (!h) {
            ompf__hacc_free(a);
            rc = OMPF_ENOMEM;
            continue;
        }
        size_t ns = a->nslots;
        const pair_t *pr = &ev->pairs[i];
        b->xus[0] = b->c->nxu;
        for (size_t k = 1; k < ns; k++)
            b->xus[k] = b->type_xus[pr->types[k - 1].type];
        rc = ompf__hacc_finish(a, b->xus, h);
        hall[i] = h[0];
        if (th) {
            /* the types' histograms, in place of the all-XU one */
            memmove(h, h + 1, (ns - 1) * sizeof *h);
            th[i] = h;
        } else {
            free(h);
        }
    }
    return rc;
}

int ompf__colset_bin(ompf_eval_t *ev, const colset_t *c,
                     const unsigned char *want, ompf_hist2d_t *hall,
                     ompf_hist2d_t **th, const char *label)
{
    size_t na = ev->naxes ? ev->naxes : 1, nt = ev->ntypes;
    size_t chunk = c->nxu < CHUNK ? (c->nxu ? c->nxu : 1) : CHUNK;
    binner_t b = {.ev = ev, .c = c, .want = want, .per_type = th != NULL};
    int rc = OMPF_ENOMEM;
    b.need = calloc(na, 1);
    b.placed = calloc(na, sizeof *b.placed);
    b.rows = malloc(chunk * sizeof *b.rows);
    b.abin = calloc(na, sizeof *b.abin);
    b.acoord = calloc(na, sizeof *b.acoord);
    b.tbin = calloc(na, sizeof *b.tbin);
    b.tcoord = calloc(na, sizeof *b.tcoord);
    b.acc = calloc(ev->npairs ? ev->npairs : 1, sizeof *b.acc);
    b.type_xus = calloc(nt ? nt : 1, sizeof *b.type_xus);
    b.xus = calloc(nt + 1, sizeof *b.xus);
    unsigned threads = ev->threads ? ev->threads : ompf__default_threads();
    if (b.per_type) {
        b.grids = calloc(na * (nt ? nt : 1), sizeof *b.grids);
        b.toff = malloc(chunk * sizeof *b.toff);
        b.scratch = calloc(threads, sizeof *b.scratch);
        for (unsigned t = 0; b.scratch && t < threads; t++)
            if (!(b.scratch[t] = malloc(WAYS * CHUNK * sizeof **b.scratch)))
                goto out;
    }
    if (!b.need || !b.placed || !b.rows || !b.abin || !b.acoord || !b.tbin ||
        !b.tcoord || !b.acc || !b.type_xus || !b.xus ||
        (b.per_type && (!b.grids || !b.toff || !b.scratch)))
        goto out;
    for (size_t i = 0; b.per_type && i < c->nxu; i++)
        if (c->type[i] != OMPF_NONE32)
            b.type_xus[c->type[i]]++;
    /* placed values of the axes some wanted pair uses */
    for (size_t i = 0; i < ev->npairs; i++)
        if (want[i])
            b.need[ev->pairs[i].ax[0]] = b.need[ev->pairs[i].ax[1]] = 1;
    for (size_t a = 0; a < ev->naxes; a++) {
        if (!b.need[a])
            continue;
        if (!(b.abin[a] = malloc(chunk * sizeof **b.abin)) ||
            !(b.acoord[a] = malloc(chunk * sizeof **b.acoord)))
            goto out;
        if (!b.per_type)
            continue;
        if (!(b.tbin[a] = malloc(chunk * sizeof **b.tbin)) ||
            !(b.tcoord[a] = malloc(chunk * sizeof **b.tcoord)))
            goto out;
        const axis_t *x = &ev->axes[a];
        for (size_t t = 0; t < nt; t++)
            b.grids[a * nt + t] = x->thave[t] ? &x->tgrid[t] : NULL;
    }
    /* passes: as many pairs as the accumulator budget holds (at least 1) */
    size_t passes = 0, bytes = 0;
    for (size_t i = 0; i < ev->npairs; i++) {
        if (!want[i])
            continue;
        size_t pb = ompf__hacc_bytes(ev->pairs[i].grid.n, pair_slots(&b, i));
        if (!passes || bytes + pb > ACC_BUDGET) {
            passes++;
            bytes = 0;
        }
        bytes += pb;
    }
    ompf_progress_t *prog = ompf_progress_create(
        label, (uint64_t)passes * c->nxu, "XUs", ev->opts.progress);
    rc = 0;
    for (size_t p0 = 0; !rc && passes && p0 < ev->npairs;) {
        size_t p1 = p0;
        bytes = 0;
        while (p1 < ev->npairs) {
            size_t pb = want[p1] ? ompf__hacc_bytes(ev->pairs[p1].grid.n,
                                                    pair_slots(&b, p1))
                                 : 0;
            if (bytes && bytes + pb > ACC_BUDGET)
                break;
            bytes += pb;
            p1++;
        }
        b.p0 = p0;
        rc = bin_pass(&b, p1, hall, th, prog);
        p0 = p1;
    }
    ompf_progress_destroy(prog);
out:
    for (size_t a = 0; a < ev->naxes; a++) {
        if (b.abin)
            free(b.abin[a]);
        if (b.acoord)
            free(b.acoord[a]);
        if (b.tbin)
            free(b.tbin[a]);
        if (b.tcoord)
            free(b.tcoord[a]);
    }
    for (unsigned t = 0; b.scratch && t < threads; t++)
        free(b.scratch[t]);
    free(b.scratch);
    free(b.toff);
    free(b.placed);
    free(b.need);
    free(b.rows);
    free(b.abin);
    free(b.acoord);
    free(b.tbin);
    free(b.tcoord);
    free(b.acc);
    free(b.type_xus);
    free(b.xus);
    free(b.grids);
    return rc;
}

/* Position of ref in rep[] (n when absent). */
static size_t rep_index(const size_t *rep, size_t n, size_t ref)
{
    size_t r = 0;
    while (r < n && rep[r] != ref)
        r++;
    return r;
}

typedef struct {
    ompf_eval_t *ev;
    size_t ref;
} refjob_t;

/* The reference's Spearman coefficient of pair i, while its ranks are
 * there. */
static int ref_spearman(void *ctx, size_t i, size_t thread)
{
    (void)thread;
    refjob_t *j = ctx;
    pair_t *pr = &j->ev->pairs[i];
    size_t r = rep_index(pr->rep, pr->nrep, j->ref);
    if (!pr->problem && r < pr->nrep)
        pr->sp[r] = ompf__colset_spearman(&j->ev->refcols[j->ref], pr->ev[0],
                                          pr->ev[1]);
    return 0;
}

int ompf__bin_reference(ompf_eval_t *ev, size_t ref)
{
    colset_t *c = &ev->refcols[ref];
    size_t np = ev->npairs ? ev->npairs : 1;
    unsigned char *want = calloc(np, 1);
    ompf_hist2d_t *hall = calloc(np, sizeof *hall);
    ompf_hist2d_t **th = ev->opts.per_type ? calloc(np, sizeof *th) : NULL;
    int rc = OMPF_ENOMEM;
    if (!want || !hall || (ev->opts.per_type && !th))
        goto out;
    for (size_t i = 0; i < ev->npairs; i++) {
        const pair_t *pr = &ev->pairs[i];
        want[i] = !pr->problem && rep_index(pr->rep, pr->nrep, ref) < pr->nrep;
    }
    char label[300];
    snprintf(label, sizeof label, "evaluate: binning %s", ev->names[ref]);
    rc = ompf__colset_bin(ev, c, want, hall, th, label);
    /* into the pairs (freed with them), even after an error */
    for (size_t i = 0; i < ev->npairs; i++) {
        pair_t *pr = &ev->pairs[i];
        if (!want[i])
            continue;
        size_t r = rep_index(pr->rep, pr->nrep, ref);
        pr->hist[r] = hall[i];
        for (size_t k = 0; th && th[i] && k < pr->ntypes; k++)
            pr->types[k].hist[r] = th[i][k];
        if (th)
            free(th[i]);
    }
    if (!rc && want_spearman(ev)) {
        refjob_t j = {.ev = ev, .ref = ref};
        rc = ompf__colset_ranks(ev, c);
        if (!rc)
            rc = ompf__parallel_for(ev->npairs, ev->threads, ref_spearman, &j,
                                    NULL);
    }
out:
    free(want);
    free(hall);
    free(th);
    return rc;
}
