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

int fz_bc(fz_ctx_t *c, int labeled)
{
    size_t n = c->n;
    uint32_t b = c->order[0];
    int rc = OMPF_ENOMEM;
    bc_step_t *st = calloc(n, sizeof *st);
    uint32_t *ptup = NULL, *ntup = NULL, *plab = NULL, *nlab = NULL;
    uint32_t *clab = NULL; /* union label of each cur XU */
    double *P = NULL, *C = NULL;
    fz_key_t *pkey = NULL, *ckey = NULL;
    uint32_t *slot = NULL; /* base XU index -> pair, FZ_NONE when none */
    uint32_t *pair_p = NULL, *pair_c = NULL;
    bc_grid_t *grid = NULL;
    if (!st || (rc = describe_steps(c, st)))
        goto out;
    rc = OMPF_ENOMEM;
    size_t maxn = fz_type_max(c); /* scratch is reused type by type */
    size_t kmax = 1;
    for (size_t s = 1; s < n; s++)
        if (st[s].k > kmax)
            kmax = st[s].k;
    ptup = malloc(maxn * n * sizeof *ptup);
    ntup = malloc(maxn * n * sizeof *ntup);
    plab = malloc(maxn * sizeof *plab);
    nlab = malloc(maxn * sizeof *nlab);
    clab = malloc(maxn * sizeof *clab);
    P = malloc(maxn * kmax * sizeof *P);
    C = malloc(maxn * kmax * sizeof *C);
    pkey = malloc(maxn * sizeof *pkey);
    ckey = malloc(maxn * sizeof *ckey);
    slot = malloc(c->runs[b].n_xu ? c->runs[b].n_xu * sizeof *slot : 1);
    pair_p = malloc(maxn * sizeof *pair_p);
    pair_c = malloc(maxn * sizeof *pair_c);
    grid = bc_grid_create(maxn, kmax);
    if (!grid || !ptup || !ntup || !plab || !nlab || !clab || !P || !C || !pkey || !ckey ||
        !slot || !pair_p || !pair_c)
        goto out;
    for (size_t i = 0; i < c->runs[b].n_xu; i++)
        slot[i] = FZ_NONE;
    rc = 0;
    for (size_t t = 0; t < c->n_types && !rc; t++) {
        fz_run_t *B = &c->runs[b];
        size_t np = B->tstart[t + 1] - B->tstart[t];
        for (size_t j = 0; j < np; j++) {
            uint32_t i = B->bytype[B->tstart[t] + j];
            for (size_t r = 0; r < n; r++)
                ptup[j * n + r] = FZ_NONE;
            ptup[j * n + b] = i;
            plab[j] = B->ulab[ompf_xu_get(B->p, i)->label];
        }
        for (size_t s = 1; s < n && np; s++) {
            bc_step_t *S = &st[s];
            fz_run_t *Q = &c->runs[S->q];
            size_t nc = Q->tstart[t + 1] - Q->tstart[t];
            const uint32_t *cx = Q->bytype + Q->tstart[t];
            size_t k = S->k;
            for (size_t j = 0; j < np; j++)
                for (size_t e = 0; e < k; e++) {
                    const fz_run_t *R = &c->runs[S->prov_run[e]];
                    P[j * k + e] = ompf_xu_values_const(
                        R->p, ptup[j * n + S->prov_run[e]])[S->prov_ev[e]];
                }
            for (size_t j = 0; j < nc; j++) {
                const double *v = ompf_xu_values_const(Q->p, cx[j]);
                for (size_t e = 0; e < k; e++)
                    C[j * k + e] = v[S->cur_ev[e]];
            }
            for (size_t j = 0; j < nc; j++)
                clab[j] = Q->ulab[ompf_xu_get(Q->p, cx[j])->label];
            if (labeled) {
                for (size_t j = 0; j < np; j++) {
                    pkey[j].k1 = c->urank[plab[j]];
                    pkey[j].k2 = ptup[j * n + b];
                }
                for (size_t j = 0; j < nc; j++) {
                    ckey[j].k1 = c->urank[clab[j]];
                    ckey[j].k2 = cx[j];
                }
            } else {
                uint64_t sd = fz_stream(c->opts->seed, t, s);
                for (size_t j = 0; j < np; j++) {
                    pkey[j].k1 = fz_rand(&sd);
                    pkey[j].k2 = ptup[j * n + b];
                }
                for (size_t j = 0; j < nc; j++) {
                    ckey[j].k1 = fz_rand(&sd);
                    ckey[j].k2 = cx[j];
                }
            }
            bc_prob_t pb = {np, nc, k, P, C, pkey, ckey, pair_p, pair_c,
                            0, 0, 1};
            if ((rc = bc_grid_solve(grid, &pb)))
                break;
            c->rep->types[t].iterations += pb.iterations;
            c->rep->step_iter[s - 1] += pb.iterations;
            /* New prev side, in base-run order so that the next step
             * (and its random stream) does not depend on cell order. */
            for (size_t j = 0; j < pb.n_pairs; j++)
                slot[ptup[(size_t)pair_p[j] * n + b]] = (uint32_t)j;
            size_t w = 0;
            for (size_t j = B->tstart[t]; j < B->tstart[t + 1]; j++) {
                uint32_t pj = slot[B->bytype[j]];
                if (pj == FZ_NONE)
                    continue;
                slot[B->bytype[j]] = FZ_NONE;
                uint32_t pi = pair_p[pj], cj = pair_c[pj];
                memcpy(ntup + w * n, ptup + (size_t)pi * n, n * sizeof *ntup);
                ntup[w * n + S->q] = cx[cj];
                nlab[w] = plab[pi] == clab[cj]
                              ? plab[pi]
                              : ompf_label_common(c->ut, plab[pi], clab[cj]);
                w++;
            }
            uint32_t *sw = ptup;
            ptup = ntup;
            ntup = sw;
            sw = plab;
            plab = nlab;
            nlab = sw;
            np = pb.n_pairs;
        }
        for (size_t j = 0; j < np && !rc; j++)
            rc = fz_tuples_push(&c->res, n, ptup + j * n);
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
    free(ptup);
    free(ntup);
    free(plab);
    free(nlab);
    free(clab);
    free(P);
    free(C);
    free(pkey);
    free(ckey);
    free(slot);
    free(pair_p);
    free(pair_c);
    bc_grid_destroy(grid);
    return rc;
}
