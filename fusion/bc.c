/* Behaviour Clustering (TACO 2017 §3.2, Alg. 3-4; docs/semantics.md,
 * Fusion), labelled and unlabelled.
 *
 * One file over 600 lines: the grid, the pairing and the per-type steps
 * share one context and run in one loop.
 *
 * Runs are combined in a valid order (fuse.c).  Per type and step, the XUs
 * of the combined profile so far (prev) and of the next run (cur) are put
 * on a grid over the overlapping events, bounds taken over both sides.
 * XUs sharing a cell are paired position j with j, in depth-first label
 * order (BC) or in a seeded random order (BC-unlabeled); then the grid is
 * relaxed and the rest is paired, until one side is exhausted.
 *
 * Grid.  The finest division dmax is the paper's: per overlapping event,
 * range / (smallest prev-cur difference), minimum over the events.  Every
 * XU gets integer coordinates c = floor((v - min) / range * dmax) once;
 * the grid at level L has cells c >> L, so each relaxation doubles the
 * cell size and grids are nested (a cell of level L lies inside one cell
 * of level L+1).  Nesting makes "is there a cell with XUs of both sides"
 * monotone in L, and the next useful level is computed directly: sorting
 * the XUs in Morton (bit-interleaved) order makes every cell of every level
 * a contiguous range, and the finest level at which two XUs share a cell,
 * max over events of bitlength(c_a ^ c_b), is minimal for some pair of
 * neighbours of different sides.  Each iteration therefore pairs at least
 * one couple, and there are at most bitlength(dmax) + 1 iterations, i.e.
 * O(log range); cells are never enumerated, only occupied ranges scanned.
 * XUs with a missing overlapping value join in a last one-cell iteration.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fz.h"

/* An XU on the grid: a record of k coordinates followed by one tag word
 * (side, paired flag, index within its side).  Records are stored inline,
 * contiguous, so that sorting and the per-iteration scans stream through
 * memory instead of chasing pointers. */
#define TAG_SIDE (1ull << 63)
#define TAG_PAIRED (1ull << 62)
#define TAG_INDEX 0xffffffffull

/* Dimensions and records, for the qsort comparators (per thread: fusions
 * may run concurrently). */
static _Thread_local size_t g_k;
static _Thread_local const uint64_t *g_rec;

static inline int less_msb(uint64_t x, uint64_t y)
{
    return x < y && x < (x ^ y);
}

/* Morton (bit-interleaved) order without interleaving: the coordinate
 * with the most significant differing bit decides (Chan's trick). */
static int cmp_morton(const void *pa, const void *pb)
{
    const uint64_t *a = pa, *b = pb;
    size_t msd = 0;
    uint64_t x = 0;
    for (size_t e = 0; e < g_k; e++) {
        uint64_t y = a[e] ^ b[e];
        if (less_msb(x, y)) {
            msd = e;
            x = y;
        }
    }
    if (a[msd] != b[msd])
        return a[msd] < b[msd] ? -1 : 1;
    uint64_t ta = a[g_k] & ~TAG_PAIRED, tb = b[g_k] & ~TAG_PAIRED;
    return (ta > tb) - (ta < tb); /* prev before cur, then index */
}

static inline unsigned bitlen(uint64_t x)
{
    return x ? 64u - (unsigned)__builtin_clzll(x) : 0u;
}

static int cmp_morton_idx(const void *pa, const void *pb)
{
    size_t w = g_k + 1;
    return cmp_morton(g_rec + *(const uint32_t *)pa * w,
                      g_rec + *(const uint32_t *)pb * w);
}

/* Sorts the n records (stride k + 1) in cmp_morton order, which is total
 * (tags are unique), so the result is the one qsort gives.  The first 64
 * bits of each record's interleaved coordinates (bit levels from the top,
 * dimension 0 first within a level: Morton order) are radix-sorted; runs
 * of equal prefixes, possible only when the coordinates have more bits,
 * are finished with the comparator.  Records are filled in tag order, so
 * the stable radix sort already orders equal coordinates by tag. */
static int sort_morton(uint64_t *rec, size_t n, size_t k, uint64_t cmax)
{
    size_t w = k + 1;
    if (n < 2)
        return 0;
    uint64_t *key = malloc(n * sizeof *key);
    uint32_t *idx = malloc(n * sizeof *idx);
    uint64_t *tmp = malloc(w * sizeof *tmp);
    int rc = OMPF_ENOMEM;
    if (!key || !idx || !tmp)
        goto out;
    unsigned levels = bitlen(cmax);
    int complete = (size_t)levels * k <= 64;
    for (size_t j = 0; j < n; j++) {
        const uint64_t *r = rec + j * w;
        uint64_t x = 0;
        unsigned bits = 0;
        for (unsigned l = levels; l-- > 0 && bits < 64;)
            for (size_t e = 0; e < k && bits < 64; e++, bits++)
                x = (x << 1) | ((r[e] >> l) & 1);
        key[j] = bits == 0 ? 0 : bits < 64 ? x << (64 - bits) : x;
        idx[j] = (uint32_t)j;
    }
    if ((rc = fz_radix_sort(key, idx, n)))
        goto out;
    if (!complete) {
        g_k = k;
        g_rec = rec;
        for (size_t a = 0; a < n;) {
            size_t b = a + 1;
            while (b < n && key[b] == key[a])
                b++;
            if (b - a > 1)
                qsort(idx + a, b - a, sizeof *idx, cmp_morton_idx);
            a = b;
        }
    }
    /* Permutes in place, cycle by cycle (idx[j] = j marks a placed
     * record). */
    for (size_t s0 = 0; s0 < n; s0++) {
        if (idx[s0] == s0)
            continue;
        memcpy(tmp, rec + s0 * w, w * sizeof *tmp);
        size_t cur = s0;
        while (idx[cur] != s0) {
            size_t nx = idx[cur];
            memcpy(rec + cur * w, rec + nx * w, w * sizeof *rec);
            idx[cur] = (uint32_t)cur;
            cur = nx;
        }
        memcpy(rec + cur * w, tmp, w * sizeof *tmp);
        idx[cur] = (uint32_t)cur;
    }
    rc = 0;
out:
    free(key);
    free(idx);
    free(tmp);
    return rc;
}

static unsigned shared_level(const uint64_t *a, const uint64_t *b, size_t k)
{
    unsigned l = 0;
    for (size_t e = 0; e < k; e++) {
        unsigned b2 = bitlen(a[e] ^ b[e]);
        if (b2 > l)
            l = b2;
    }
    return l;
}

static int same_cell(const uint64_t *a, const uint64_t *b, size_t k,
                     unsigned L)
{
    for (size_t e = 0; e < k; e++)
        if ((a[e] >> L) != (b[e] >> L))
            return 0;
    return 1;
}

/* Sorts n doubles (no NaN) through their order-preserving integer keys. */
static int sort_doubles(double *v, uint64_t *tmp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tmp[i] = fz_double_key(v[i]);
    int rc = fz_radix_sort(tmp, NULL, n);
    for (size_t i = 0; i < n; i++)
        v[i] = fz_key_double(tmp[i]);
    return rc;
}

/* One side-pair problem: np prev and nc cur XUs with k overlapping values
 * each (row-major, NaN = missing) and order keys; writes pairs. */
typedef struct bc_prob {
    size_t np, nc, k;
    const double *P, *C;
    const fz_key_t *pkey, *ckey; /* order keys (k1, k2; idx unused) */
    uint32_t *pair_p, *pair_c;   /* out: min(np, nc) capacity */
    size_t n_pairs;
    uint32_t iterations;
    double dmax;
} bc_prob_t;

/* Smallest |a - b| with a from sorted x, b from sorted y. */
static double min_cross(const double *x, size_t nx, const double *y, size_t ny)
{
    double best = INFINITY;
    size_t i = 0, j = 0;
    while (i < nx && j < ny) {
        double d = fabs(x[i] - y[j]);
        if (d < best)
            best = d;
        if (x[i] < y[j])
            i++;
        else
            j++;
    }
    return best;
}

static double grid_dmax(const bc_prob_t *pb, const double *mn,
                        const double *mx, double *buf, uint64_t *tmp)
{
    double dmax = INFINITY;
    for (size_t e = 0; e < pb->k; e++) {
        double range = mx[e] - mn[e];
        if (!(range > 0))
            continue;
        size_t nx = 0, ny = 0;
        double *x = buf, *y = buf + pb->np;
        for (size_t i = 0; i < pb->np; i++)
            if (!isnan(pb->P[i * pb->k + e]))
                x[nx++] = pb->P[i * pb->k + e];
        for (size_t i = 0; i < pb->nc; i++)
            if (!isnan(pb->C[i * pb->k + e]))
                y[ny++] = pb->C[i * pb->k + e];
        if (sort_doubles(x, tmp, nx) || sort_doubles(y, tmp, ny))
            return -1;
        double diff = min_cross(x, nx, y, ny);
        if (!(diff > 0)) {
            /* Identical values across the runs: the grid must still
             * separate distinct values, so use the smallest gap between
             * any two distinct values of this event. */
            diff = INFINITY;
            size_t i = 0, j = 0;
            double last = NAN;
            while (i < nx || j < ny) {
                double v = (j >= ny || (i < nx && x[i] <= y[j])) ? x[i++] : y[j++];
                if (!isnan(last) && v > last && v - last < diff)
                    diff = v - last;
                last = v;
            }
        }
        if (isfinite(diff) && diff > 0 && range / diff < dmax)
            dmax = range / diff;
    }
    if (!isfinite(dmax) || dmax < 1)
        dmax = 1;
    if (dmax > 4503599627370496.0) /* 2^52: coordinates stay exact */
        dmax = 4503599627370496.0;
    return dmax;
}

/* Pairs, inside one cell (records a..b-1 of stride w), prev and cur
 * members in order-key order. */
static void pair_cell(bc_prob_t *pb, uint64_t *rec, size_t w, size_t a,
                      size_t b, fz_key_t *tp, fz_key_t *tc)
{
    size_t k = pb->k, np = 0, nc = 0;
    for (size_t j = a; j < b; j++) {
        uint64_t tag = rec[j * w + k];
        if (tag & TAG_PAIRED)
            continue;
        uint32_t i = (uint32_t)(tag & TAG_INDEX);
        fz_key_t key = (tag & TAG_SIDE) ? pb->ckey[i] : pb->pkey[i];
        key.idx = (uint32_t)j;
        if (tag & TAG_SIDE)
            tc[nc++] = key;
        else
            tp[np++] = key;
    }
    size_t m = np < nc ? np : nc;
    if (!m)
        return;
    if (np > 1)
        fz_sort_keys(tp, np);
    if (nc > 1)
        fz_sort_keys(tc, nc);
    for (size_t j = 0; j < m; j++) {
        uint64_t *p = &rec[(size_t)tp[j].idx * w + k];
        uint64_t *q = &rec[(size_t)tc[j].idx * w + k];
        pb->pair_p[pb->n_pairs] = (uint32_t)(*p & TAG_INDEX);
        pb->pair_c[pb->n_pairs] = (uint32_t)(*q & TAG_INDEX);
        pb->n_pairs++;
        *p |= TAG_PAIRED;
        *q |= TAG_PAIRED;
    }
}

static int bc_solve(bc_prob_t *pb)
{
    size_t k = pb->k, n = pb->np + pb->nc, w = k + 1;
    pb->n_pairs = 0;
    pb->iterations = 0;
    pb->dmax = 1;
    if (!pb->np || !pb->nc)
        return 0;
    int rc = OMPF_ENOMEM;
    double *mn = malloc(k * sizeof *mn), *mx = malloc(k * sizeof *mx);
    double *buf = malloc(n * sizeof *buf);
    uint64_t *rec = malloc(n * w * sizeof *rec);   /* on the grid */
    uint64_t *aside = malloc(n * w * sizeof *aside); /* missing values */
    fz_key_t *tp = malloc(pb->np * sizeof *tp), *tc = malloc(pb->nc * sizeof *tc);
    if (!mn || !mx || !buf || !rec || !tp || !tc || !aside)
        goto out;
    for (size_t e = 0; e < k; e++) {
        mn[e] = INFINITY;
        mx[e] = -INFINITY;
    }
    for (size_t s = 0; s < 2; s++) {
        const double *V = s ? pb->C : pb->P;
        size_t cnt = s ? pb->nc : pb->np;
        for (size_t i = 0; i < cnt; i++)
            for (size_t e = 0; e < k; e++) {
                double v = V[i * k + e];
                if (isnan(v))
                    continue;
                if (v < mn[e])
                    mn[e] = v;
                if (v > mx[e])
                    mx[e] = v;
            }
    }
    double dmax = grid_dmax(pb, mn, mx, buf, aside);
    if (dmax < 0)
        goto out;
    pb->dmax = dmax;
    uint64_t cmax = (uint64_t)ceil(dmax) - 1;
    size_t ne = 0, na = 0;
    for (size_t s = 0; s < 2; s++) {
        const double *V = s ? pb->C : pb->P;
        size_t cnt = s ? pb->nc : pb->np;
        for (size_t i = 0; i < cnt; i++) {
            int missing = 0;
            for (size_t e = 0; e < k; e++)
                missing |= isnan(V[i * k + e]);
            uint64_t *r = missing ? aside + (na++) * w : rec + (ne++) * w;
            for (size_t e = 0; e < k; e++) {
                double v = V[i * k + e], range = mx[e] - mn[e];
                if (isnan(v) || !(range > 0)) {
                    r[e] = 0;
                    continue;
                }
                double x = floor((v - mn[e]) / range * dmax);
                r[e] = x <= 0 ? 0 : (x >= (double)cmax ? cmax : (uint64_t)x);
            }
            r[k] = (s ? TAG_SIDE : 0) | (uint64_t)i;
        }
    }
    if ((rc = sort_morton(rec, ne, k, cmax)))
        goto out;
    rc = OMPF_ENOMEM;
    for (;;) {
        /* Finest level at which two neighbours of different sides share a
         * cell: the next level that can pair anything. */
        unsigned L = 65;
        for (size_t j = 1; j < ne; j++) {
            const uint64_t *x = rec + (j - 1) * w, *y = rec + j * w;
            if ((x[k] ^ y[k]) & TAG_SIDE) {
                unsigned l = shared_level(x, y, k);
                if (l < L)
                    L = l;
            }
        }
        if (L == 65)
            break;
        for (size_t a = 0; a < ne;) {
            size_t b = a + 1;
            int mixed = 0;
            const uint64_t *ra = rec + a * w;
            while (b < ne && same_cell(ra, rec + b * w, k, L)) {
                mixed |= ((ra[k] ^ rec[b * w + k]) & TAG_SIDE) != 0;
                b++;
            }
            if (mixed)
                pair_cell(pb, rec, w, a, b, tp, tc);
            a = b;
        }
        pb->iterations++;
        size_t keep = 0;
        for (size_t j = 0; j < ne; j++)
            if (!(rec[j * w + k] & TAG_PAIRED)) {
                if (keep != j)
                    memcpy(rec + keep * w, rec + j * w, w * sizeof *rec);
                keep++;
            }
        ne = keep;
    }
    if (na) {
        /* Missing overlapping values: one last cell with all that is left. */
        size_t rp = 0, rcur = 0;
        memcpy(rec + ne * w, aside, na * w * sizeof *rec);
        for (size_t j = 0; j < ne + na; j++)
            (rec[j * w + k] & TAG_SIDE) ? rcur++ : rp++;
        if (rp && rcur) {
            pair_cell(pb, rec, w, 0, ne + na, tp, tc);
            pb->iterations++;
        }
    }
    rc = 0;
out:
    free(mn);
    free(mx);
    free(buf);
    free(rec);
    free(aside);
    free(tp);
    free(tc);
    return rc;
}

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
    if (!ptup || !ntup || !plab || !nlab || !clab || !P || !C || !pkey || !ckey ||
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
            if ((rc = bc_solve(&pb)))
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
    return rc;
}
