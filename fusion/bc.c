/* Behaviour Clustering (TACO 2017 §3.2, Alg. 3-4; docs/semantics.md,
 * Fusion), labelled and unlabelled.
 *
 * Runs are combined in a valid order (fuse.c).  Per type and step, the XUs
 * of the combined profile so far (prev) and of the next run (cur) are put
 * on a grid over the overlapping events, bounds taken over both sides.
 * XUs sharing a cell are paired position j with j, in depth-first label
 * order (BC) or in a seeded random order (BC-unlabeled); then the grid is
 * relaxed and the rest is paired, until one side is exhausted.
 *
 * This file runs the steps type by type and gathers each step's values;
 * the grid (bc_grid.c) pairs one type's prev and cur XUs per step.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bc_grid.h"

/* ---- per type, per step -------------------------------------------------- */

typedef struct bc_step {
    uint32_t q;        /* input index of the incoming run */
    size_t k;          /* overlapping events */
    uint32_t *prov_run; /* per overlapping event: run providing prev value */
    int32_t *prov_ev, *cur_ev; /* event index in that run / in q */
} bc_step_t;

static int describe_steps(fz_ctx_t *c, bc_step_t *st)
{
    ompf_fuse_report_t *r = c->rep;
    size_t n = c->n;
    r->n_steps = n - 1;
    r->step_desc = calloc(n, sizeof *r->step_desc);
    r->step_iter = calloc(n, sizeof *r->step_iter);
    if (!r->step_desc || !r->step_iter)
        return OMPF_ENOMEM;
    for (size_t s = 1; s < n; s++) {
        uint32_t q = c->order[s];
        bc_step_t *S = &st[s];
        S->q = q;
        S->prov_run = malloc((c->n_events ? c->n_events : 1) * sizeof(uint32_t));
        S->prov_ev = malloc((c->n_events ? c->n_events : 1) * sizeof(int32_t));
        S->cur_ev = malloc((c->n_events ? c->n_events : 1) * sizeof(int32_t));
        if (!S->prov_run || !S->prov_ev || !S->cur_ev)
            return OMPF_ENOMEM;
        char ov[512], nw[512];
        size_t lo = 0, ln = 0;
        ov[0] = nw[0] = 0;
        for (size_t g = 0; g < c->n_events; g++) {
            if (c->runs[q].ev[g] < 0)
                continue;
            uint32_t pr = FZ_NONE;
            for (size_t j = 0; j < s && pr == FZ_NONE; j++)
                if (c->runs[c->order[j]].ev[g] >= 0)
                    pr = c->order[j];
            if (pr == FZ_NONE) {
                if (ln + 1 < sizeof nw)
                    ln += (size_t)snprintf(nw + ln, sizeof nw - ln, "%s%s",
                                           ln ? ", " : "", c->events[g].name);
                continue;
            }
            S->prov_run[S->k] = pr;
            S->prov_ev[S->k] = c->runs[pr].ev[g];
            S->cur_ev[S->k] = c->runs[q].ev[g];
            S->k++;
            if (lo + 1 < sizeof ov)
                lo += (size_t)snprintf(ov + lo, sizeof ov - lo, "%s%s",
                                       lo ? ", " : "", c->events[g].name);
        }
        char d[1200];
        snprintf(d, sizeof d, "+[%u] overlap {%s}, new {%s}", q, ov, nw);
        if (!(r->step_desc[s - 1] = fz_strdup(d)))
            return OMPF_ENOMEM;
    }
    return 0;
}

/* Prev's values of an overlapping event come from the run that measured
 * it first (its provider), step after step.  When several steps draw the
 * same event from the same provider, that run's values over the type are
 * sorted once per type and each step keeps those of the XUs still in
 * play, instead of sorting them again.  That costs 20 bytes per XU of the
 * type (key, index, the kept values): worth it from three steps on (a
 * sort of 10^6 values is about 20 ms), not for two (three runs). */
#define CACHE_FROM 3
typedef struct bc_sorted {
    uint32_t run;
    int32_t ev;
    unsigned uses;  /* steps that draw it */
    size_t n;       /* sorted values (key NULL until built for the type) */
    uint64_t *key;  /* fz_double_key of each value, ascending */
    uint32_t *idx;  /* its XU in run */
} bc_sorted_t;

typedef struct bc_cache {
    bc_sorted_t *s;
    size_t n;
    uint8_t *mark;  /* per XU of a run: still in play */
    double *out;    /* kmax x maxn filtered values */
    const double **ps;
    size_t *nps;
} bc_cache_t;

static bc_sorted_t *cache_find(bc_cache_t *cc, uint32_t run, int32_t ev)
{
    for (size_t i = 0; i < cc->n; i++)
        if (cc->s[i].run == run && cc->s[i].ev == ev)
            return &cc->s[i];
    return NULL;
}

static int cache_init(bc_cache_t *cc, const fz_ctx_t *c, const bc_step_t *st,
                      size_t maxn, size_t kmax)
{
    size_t cap = 0, maxx = 1;
    for (size_t s = 1; s < c->n; s++)
        cap += st[s].k;
    for (size_t r = 0; r < c->n; r++)
        maxx = c->runs[r].n_xu > maxx ? c->runs[r].n_xu : maxx;
    cc->s = calloc(cap ? cap : 1, sizeof *cc->s);
    cc->mark = calloc(maxx, 1);
    cc->ps = calloc(kmax, sizeof *cc->ps);
    cc->nps = calloc(kmax, sizeof *cc->nps);
    if (!cc->s || !cc->mark || !cc->ps || !cc->nps)
        return OMPF_ENOMEM;
    for (size_t s = 1; s < c->n; s++)
        for (size_t e = 0; e < st[s].k; e++) {
            bc_sorted_t *x = cache_find(cc, st[s].prov_run[e], st[s].prov_ev[e]);
            if (!x) {
                x = &cc->s[cc->n++];
                x->run = st[s].prov_run[e];
                x->ev = st[s].prov_ev[e];
            }
            x->uses++;
        }
    size_t shared = 0;
    for (size_t i = 0; i < cc->n; i++)
        shared += cc->s[i].uses >= CACHE_FROM;
    if (shared && !(cc->out = malloc(kmax * maxn * sizeof *cc->out)))
        return OMPF_ENOMEM;
    return 0;
}

/* Drops the sorted values of the previous type. */
static void cache_clear(bc_cache_t *cc)
{
    for (size_t i = 0; i < cc->n; i++) {
        free(cc->s[i].key);
        free(cc->s[i].idx);
        cc->s[i].key = NULL;
        cc->s[i].idx = NULL;
        cc->s[i].n = 0;
    }
}

static void cache_free(bc_cache_t *cc)
{
    cache_clear(cc);
    free(cc->s);
    free(cc->mark);
    free(cc->out);
    free(cc->ps);
    free(cc->nps);
}

/* Fills cc->ps / cc->nps for step S of type t: per overlapping event drawn
 * by several steps, the sorted non-missing values of the np prev XUs. */
static int cache_prev(bc_cache_t *cc, const fz_ctx_t *c, const bc_step_t *S,
                      size_t t, const uint32_t *ptup, size_t np, size_t maxn)
{
    size_t n = c->n;
    for (size_t e = 0; e < S->k; e++) {
        bc_sorted_t *x = cache_find(cc, S->prov_run[e], S->prov_ev[e]);
        cc->ps[e] = NULL;
        if (!x || x->uses < CACHE_FROM)
            continue;
        const fz_run_t *R = &c->runs[x->run];
        if (!x->key) {
            size_t cnt = R->tstart[t + 1] - R->tstart[t], m = 0;
            x->key = malloc((cnt ? cnt : 1) * sizeof *x->key);
            x->idx = malloc((cnt ? cnt : 1) * sizeof *x->idx);
            if (!x->key || !x->idx)
                return OMPF_ENOMEM;
            for (size_t j = 0; j < cnt; j++) {
                uint32_t i = fz_typed(R, t, j);
                double v = ompf_xu_values_const(R->p, i)[x->ev];
                if (isnan(v))
                    continue;
                x->key[m] = fz_double_key(v);
                x->idx[m++] = i;
            }
            x->n = m;
            int rc = fz_radix_sort(x->key, x->idx, m);
            if (rc)
                return rc;
        }
        for (size_t j = 0; j < np; j++)
            cc->mark[ptup[j * n + x->run]] = 1;
        double *o = cc->out + e * maxn;
        size_t m = 0;
        for (size_t i = 0; i < x->n; i++)
            if (cc->mark[x->idx[i]])
                o[m++] = fz_key_double(x->key[i]);
        for (size_t j = 0; j < np; j++)
            cc->mark[ptup[j * n + x->run]] = 0;
        cc->ps[e] = o;
        cc->nps[e] = m;
    }
    return 0;
}

int fz_bc(fz_ctx_t *c, int labeled)
{
    size_t n = c->n;
    uint32_t b = c->order[0];
    int rc = OMPF_ENOMEM;
    bc_step_t *st = calloc(n, sizeof *st);
    uint32_t *ptup, *plab; /* the current type's tuples, in c->res */
    uint32_t *clab = NULL; /* union label of each cur XU */
    bc_col_t *cols = NULL; /* the grid's value columns: prev's, cur's */
    bc_grid_t *grid = NULL;
    bc_cache_t cc;
    memset(&cc, 0, sizeof cc);
    if (!st || (rc = describe_steps(c, st)))
        goto out;
    rc = OMPF_ENOMEM;
    size_t maxn = fz_type_max(c); /* scratch is reused type by type */
    size_t kmax = 1;
    for (size_t s = 1; s < n; s++)
        if (st[s].k > kmax)
            kmax = st[s].k;
    /* Each type's tuples and their union labels are made in the result
     * itself, after those of the types before: a type has at most its
     * base XUs, so all of them fit in the base run's count (the pages are
     * touched as they are used).  Nothing is copied at the end of a type,
     * where a separate array and the result grown by it were the peak of
     * a program with two types. */
    fz_run_t *B = &c->runs[b];
    size_t nbase = B->tstart[c->n_types] > B->n_xu ? B->tstart[c->n_types] : B->n_xu;
    free(c->res.v);
    free(c->res.lab);
    c->res.n = 0;
    c->res.cap = nbase;
    c->res.v = malloc((nbase ? nbase : 1) * n * sizeof *c->res.v);
    c->res.lab = malloc((nbase ? nbase : 1) * sizeof *c->res.lab);
    clab = malloc(maxn * sizeof *clab);
    cols = malloc(2 * kmax * sizeof *cols);
    /* The grid's Morton sort takes twice as long in place as with its
     * scratch (12 bytes an XU of both sides): scratch while that is at
     * most 2 bytes per input XU (many runs or types: 9 runs of 2 types
     * at 10^6 XUs per type took 10 % longer in place), in place when the
     * type is a large part of the input (a task program's three runs).
     * Likewise the grid copies the values (8 bytes each) while that costs
     * at most 3 bytes per input XU, instead of reading them from the runs
     * in each of its three passes. */
    size_t in_xus = 0;
    for (size_t r = 0; r < n; r++)
        in_xus += c->runs[r].n_xu;
    grid = bc_grid_create(maxn, kmax, in_xus / 6, 16 * kmax * maxn <= 3 * in_xus);
    if (!grid || !c->res.v || !c->res.lab || !clab || !cols ||
        (rc = cache_init(&cc, c, st, maxn, kmax)))
        goto out;
    rc = 0;
    for (size_t t = 0; t < c->n_types && !rc; t++) {
        ptup = c->res.v + c->res.n * n;
        plab = c->res.lab + c->res.n;
        size_t np = B->tstart[t + 1] - B->tstart[t];
        for (size_t j = 0; j < np; j++) {
            uint32_t i = fz_typed(B, t, j);
            for (size_t r = 0; r < n; r++)
                ptup[j * n + r] = FZ_NONE;
            ptup[j * n + b] = i;
            plab[j] = fz_xu_ulab(B, i);
        }
        for (size_t s = 1; s < n && np; s++) {
            bc_step_t *S = &st[s];
            fz_run_t *Q = &c->runs[S->q];
            size_t nc = Q->tstart[t + 1] - Q->tstart[t];
            size_t k = S->k;
            /* The grid reads the values where the runs hold them: prev's
             * from each value's provider, through the tuples.  (Without
             * cur XUs nothing pairs, and Q may hold no values at all.) */
            const uint32_t *qmap = Q->bytype ? Q->bytype + Q->tstart[t] : NULL;
            bc_col_t *pcol = cols, *ccol = cols + kmax;
            for (size_t e = 0; e < k && nc; e++) {
                const ompf_profile_t *P = c->runs[S->prov_run[e]].p;
                pcol[e] = (bc_col_t){ompf_xu_values_const(P, 0) + S->prov_ev[e],
                                     ompf_event_count(P), ptup + S->prov_run[e], n, 0};
                ccol[e] = (bc_col_t){ompf_xu_values_const(Q->p, 0) + S->cur_ev[e],
                                     ompf_event_count(Q->p), qmap, 1, Q->tstart[t]};
            }
            for (size_t j = 0; j < nc; j++)
                clab[j] = fz_xu_ulab(Q, fz_typed(Q, t, j));
            if ((rc = cache_prev(&cc, c, S, t, ptup, np, maxn)))
                break;
            /* BC orders a cell's members by label rank, BC-unlabeled by
             * random keys drawn for prev then cur; the base run's index
             * (prev) or the run's (cur) breaks ties (bc_prob_t).  The
             * pairs go to the tuples' column of this run, which is
             * FZ_NONE until then. */
            bc_prob_t pb = {np, nc, k, {pcol, ccol}, labeled ? c->urank : NULL,
                            {plab, clab}, fz_stream(c->opts->seed, t, s),
                            {ptup + b, qmap}, {n, 1}, {0, Q->tstart[t]}, cc.ps, cc.nps,
                            ptup + S->q, n, 0, 0, 1};
            if ((rc = bc_grid_solve(grid, &pb)))
                break;
            c->rep->types[t].iterations += pb.iterations;
            c->rep->step_iter[s - 1] += pb.iterations;
            /* New prev side, in base-run order so that the next step
             * (and its random stream) does not depend on cell order.  The
             * prev side is in that order already: the pairs are placed by
             * their prev index and prev is read in sequence, so the new
             * side is written over the old one (nw <= pi). */
            /* prev index -> its cur partner or FZ_NONE, in the tuples */
            const uint32_t *slot = ptup + S->q;
            size_t nw = 0;
            for (size_t pi = 0; pi < np; pi++) {
                uint32_t cj = slot[pi * n];
                if (cj == FZ_NONE)
                    continue;
                if (pi + 16 < np && slot[(pi + 16) * n] != FZ_NONE) {
                    if (Q->bytype)
                        __builtin_prefetch(&Q->bytype[Q->tstart[t] + slot[(pi + 16) * n]]);
                    __builtin_prefetch(&clab[slot[(pi + 16) * n]]);
                }
                if (pi + 8 < np && slot[(pi + 8) * n] != FZ_NONE) {
                    fz_lca_prefetch(c, plab[pi + 8]);
                    fz_lca_prefetch(c, clab[slot[(pi + 8) * n]]);
                }
                if (nw != pi)
                    memcpy(ptup + nw * n, ptup + pi * n, n * sizeof *ptup);
                ptup[nw * n + S->q] = fz_typed(Q, t, cj);
                plab[nw] = plab[pi] == clab[cj]
                              ? plab[pi]
                              : fz_lca(c, plab[pi], clab[cj]);
                nw++;
            }
            np = pb.n_pairs;
        }
        if (!rc)
            c->res.n += np;
        cache_clear(&cc);
        c->rep->types[t].fused = rc ? 0 : np;
        fz_progress_type(c, t);
    }
out:
    if (st)
        for (size_t s = 0; s < n; s++) {
            free(st[s].prov_run);
            free(st[s].prov_ev);
            free(st[s].cur_ev);
        }
    free(st);
    free(clab);
    free(cols);
    bc_grid_destroy(grid);
    cache_free(&cc);
    return rc;
}
