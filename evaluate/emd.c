/*
 * Exact Earth Mover's Distance: primal network simplex on the bipartite
 * transportation network (sources = bins of histogram A, sinks = bins of B).
 *
 * Why integer masses: a histogram bin's weight is count/|XUs|.  Scaling the
 * two histograms to the common total lcm(|A|, |B|) makes every supply,
 * demand and flow an exact integer, so feasibility, ratio tests and
 * degeneracy (zero flows) are decided exactly; only costs and potentials
 * are floating point.
 *
 * Why it terminates: the basis is kept strongly feasible (Cunningham): the
 * initial tree has positive flow on every real arc and zero flow only on
 * artificial arcs directed away from the root, and the leaving arc is the
 * last blocking arc of the cycle counted from its apex.  Degenerate pivots
 * then cannot cycle.
 *
 * Why artificial arcs cost nothing: the start is a feasible row-minimum
 * greedy solution (a forest with positive flows), so the artificial arcs
 * (root -> sink) only join its components into a tree and always carry
 * zero flow (every cycle through the root has theta = 0).  They are never
 * priced, so potentials stay of the order of real costs (no big-M
 * round-off).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/evaluate.h"

struct ompf_emd_ws {
    size_t cap_nodes, cap_arcs;
    /* per node */
    int32_t *parent, *pred, *depth, *adj_start, *adj, *queue;
    int32_t *fchild, *nsib, *psib, *stk; /* children lists of the tree */
    uint8_t *up;
    double *pot;
    /* per arc (real arcs m*n, then one artificial arc per sink) */
    int64_t *flow;
    /* basis: n_nodes - 1 arcs, with their endpoints */
    int32_t *basis, *bsrc, *bdst;
    /* scratch */
    int32_t *order_a, *uf;
    int64_t *ra, *rb;
    double *cost;
    size_t cap_cost;
};

int ompf_emd_ws_create(ompf_emd_ws_t **out)
{
    if (!out)
        return OMPF_EINVAL;
    *out = calloc(1, sizeof **out);
    return *out ? 0 : OMPF_ENOMEM;
}

static void ws_free_arrays(ompf_emd_ws_t *w)
{
    void *arrays[] = {w->parent, w->pred,  w->depth, w->adj_start, w->adj,
                      w->queue,  w->fchild, w->nsib, w->psib,      w->stk,
                      w->up,     w->pot,   w->flow,  w->basis,     w->bsrc,
                      w->bdst,   w->order_a, w->uf,  w->ra,        w->rb};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++)
        free(arrays[k]);
}

void ompf_emd_ws_destroy(ompf_emd_ws_t *w)
{
    if (!w)
        return;
    ws_free_arrays(w);
    free(w->cost);
    free(w);
}

static int ws_reserve(ompf_emd_ws_t *w, size_t m, size_t n)
{
    size_t nodes = m + n + 1, arcs = m * n + n;
    if (nodes <= w->cap_nodes && arcs <= w->cap_arcs)
        return 0;
    if (nodes < w->cap_nodes)
        nodes = w->cap_nodes;
    if (arcs < w->cap_arcs)
        arcs = w->cap_arcs;
    ws_free_arrays(w);
    w->cap_nodes = w->cap_arcs = 0;
    w->parent = malloc(nodes * sizeof *w->parent);
    w->pred = malloc(nodes * sizeof *w->pred);
    w->depth = malloc(nodes * sizeof *w->depth);
    w->adj_start = malloc((nodes + 1) * sizeof *w->adj_start);
    w->adj = malloc(2 * nodes * sizeof *w->adj);
    w->queue = malloc(nodes * sizeof *w->queue);
    w->up = malloc(nodes * sizeof *w->up);
    w->fchild = malloc(nodes * sizeof *w->fchild);
    w->nsib = malloc(nodes * sizeof *w->nsib);
    w->psib = malloc(nodes * sizeof *w->psib);
    w->stk = malloc(nodes * sizeof *w->stk);
    w->pot = malloc(nodes * sizeof *w->pot);
    w->flow = malloc(arcs * sizeof *w->flow);
    w->basis = malloc(nodes * sizeof *w->basis);
    w->bsrc = malloc(nodes * sizeof *w->bsrc);
    w->bdst = malloc(nodes * sizeof *w->bdst);
    w->order_a = malloc(nodes * sizeof *w->order_a);
    w->uf = malloc(nodes * sizeof *w->uf);
    w->ra = malloc(nodes * sizeof *w->ra);
    w->rb = malloc(nodes * sizeof *w->rb);
    if (!w->parent || !w->pred || !w->depth || !w->adj_start || !w->adj ||
        !w->queue || !w->up || !w->fchild || !w->nsib || !w->psib ||
        !w->stk || !w->pot || !w->flow || !w->basis || !w->bsrc ||
        !w->bdst || !w->order_a || !w->uf || !w->ra || !w->rb)
        return OMPF_ENOMEM;
    w->cap_nodes = nodes;
    w->cap_arcs = arcs;
    return 0;
}

/* Arc endpoints: real arc e < m*n goes from source e/n to sink m + e%n;
 * artificial arc m*n + j goes from the root (m+n) to sink m + j. */
typedef struct {
    size_t m, n;
    int32_t root;
    const double *cost;
} net_t;

static inline int32_t arc_src(const net_t *g, int32_t e)
{
    return (size_t)e < g->m * g->n ? (int32_t)((size_t)e / g->n) : g->root;
}
static inline int32_t arc_dst(const net_t *g, int32_t e)
{
    size_t mn = g->m * g->n;
    return (size_t)e < mn ? (int32_t)(g->m + (size_t)e % g->n)
                          : (int32_t)(g->m + ((size_t)e - mn));
}
static inline double arc_cost(const net_t *g, int32_t e)
{
    return (size_t)e < g->m * g->n ? g->cost[e] : 0.0;
}

static inline void set_basis(ompf_emd_ws_t *w, const net_t *g, size_t q,
                             int32_t e)
{
    w->basis[q] = e;
    w->bsrc[q] = arc_src(g, e);
    w->bdst[q] = arc_dst(g, e);
}

/* Rebuilds parent/pred/up/depth/potentials from the basis arcs (BFS from
 * the root).  O(nodes): cheap next to pricing for our sizes (<= 289 nodes). */
static void rebuild_tree(ompf_emd_ws_t *w, const net_t *g)
{
    int32_t nn = g->root + 1;
    int32_t *start = w->adj_start;
    memset(start, 0, (size_t)(nn + 1) * sizeof *start);
    for (int32_t k = 0; k < nn - 1; k++) {
        start[w->bsrc[k] + 1]++;
        start[w->bdst[k] + 1]++;
    }
    for (int32_t v = 0; v < nn; v++)
        start[v + 1] += start[v];
    int32_t *fill = w->queue; /* reused as insertion cursor */
    memcpy(fill, start, (size_t)nn * sizeof *fill);
    for (int32_t k = 0; k < nn - 1; k++) {
        w->adj[fill[w->bsrc[k]]++] = k;
        w->adj[fill[w->bdst[k]]++] = k;
    }
    int32_t *q = w->queue;
    int32_t head = 0, tail = 0;
    q[tail++] = g->root;
    w->parent[g->root] = -1;
    w->pred[g->root] = -1;
    w->depth[g->root] = 0;
    w->pot[g->root] = 0.0;
    while (head < tail) {
        int32_t x = q[head++];
        for (int32_t k = start[x]; k < start[x + 1]; k++) {
            int32_t b = w->adj[k], e = w->basis[b];
            if (e == w->pred[x])
                continue;
            int32_t s = w->bsrc[b], t = w->bdst[b];
            int32_t y = s == x ? t : s;
            w->parent[y] = x;
            w->pred[y] = e;
            w->depth[y] = w->depth[x] + 1;
            if (s == x) { /* x -> y: arc points down */
                w->up[y] = 0;
                w->pot[y] = w->pot[x] + arc_cost(g, e);
            } else {
                w->up[y] = 1;
                w->pot[y] = w->pot[x] - arc_cost(g, e);
            }
            q[tail++] = y;
        }
    }
}

static inline void child_unlink(ompf_emd_ws_t *w, int32_t v)
{
    int32_t p = w->parent[v];
    if (w->psib[v] >= 0)
        w->nsib[w->psib[v]] = w->nsib[v];
    else
        w->fchild[p] = w->nsib[v];
    if (w->nsib[v] >= 0)
        w->psib[w->nsib[v]] = w->psib[v];
}

static inline void child_link(ompf_emd_ws_t *w, int32_t v, int32_t p)
{
    w->parent[v] = p;
    w->psib[v] = -1;
    w->nsib[v] = w->fchild[p];
    if (w->fchild[p] >= 0)
        w->psib[w->fchild[p]] = v;
    w->fchild[p] = v;
}

/* Potentials and depths of the subtree rooted at x from its parent. */
static void update_subtree(ompf_emd_ws_t *w, const net_t *g, int32_t x)
{
    int32_t top = 0;
    w->stk[top++] = x;
    while (top) {
        int32_t v = w->stk[--top], p = w->parent[v];
        double c = arc_cost(g, w->pred[v]);
        w->pot[v] = w->pot[p] + (w->up[v] ? -c : c);
        w->depth[v] = w->depth[p] + 1;
        for (int32_t ch = w->fchild[v]; ch >= 0; ch = w->nsib[ch])
            w->stk[top++] = ch;
    }
}

static int32_t uf_find(int32_t *uf, int32_t v)
{
    while (uf[v] != v) {
        uf[v] = uf[uf[v]];
        v = uf[v];
    }
    return v;
}

static int cmp_key_idx(const void *pa, const void *pb, void *ctx)
{
    const double *key = ctx;
    double a = key[*(const int32_t *)pa], b = key[*(const int32_t *)pb];
    return (a > b) - (a < b);
}

/* Insertion sort by key (n <= a few hundred; qsort_r is not portable C11). */
static void sort_by_key(int32_t *idx, size_t n, const double *key)
{
    for (size_t i = 1; i < n; i++) {
        int32_t v = idx[i];
        size_t j = i;
        while (j > 0 && cmp_key_idx(&idx[j - 1], &v, (void *)key) > 0) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

int ompf_emd_transport(ompf_emd_ws_t *w, size_t m, const int64_t *a,
                       size_t n, const int64_t *b, const double *cost,
                       const double *row_key,
                       double *out, ompf_emd_stats_t *stats)
{
    if (!w || !a || !b || !cost || !out || m == 0 || n == 0 ||
        m > INT32_MAX / 2 || n > INT32_MAX / 2 || m * n + n > (size_t)INT32_MAX)
        return OMPF_EINVAL;
    int64_t ta = 0, tb = 0;
    for (size_t i = 0; i < m; i++) {
        if (a[i] <= 0 || a[i] > (INT64_C(1) << 53))
            return OMPF_EINVAL;
        ta += a[i];
    }
    for (size_t j = 0; j < n; j++) {
        if (b[j] <= 0 || b[j] > (INT64_C(1) << 53))
            return OMPF_EINVAL;
        tb += b[j];
    }
    if (ta != tb || ta > (INT64_C(1) << 53))
        return OMPF_EINVAL;
    int rc = ws_reserve(w, m, n);
    if (rc)
        return rc;
    net_t g = {m, n, (int32_t)(m + n), cost};
    double maxc = 0.0;
    for (size_t e = 0; e < m * n; e++) {
        if (!(cost[e] >= 0.0) || !isfinite(cost[e]))
            return OMPF_EINVAL;
        if (cost[e] > maxc)
            maxc = cost[e];
    }

    /* Initial feasible solution: row-minimum greedy (rows in the order of
     * the caller's key): each source in turn ships to its cheapest sinks
     * with demand left.  Every allocation exhausts a row or a column, so
     * the allocated cells form a forest with positive flows; each of its
     * components is joined to the root by an artificial arc root -> sink
     * at zero flow, directed away from the root: strongly feasible. */
    int32_t *oa = w->order_a;
    for (size_t i = 0; i < m; i++)
        oa[i] = (int32_t)i;
    if (row_key)
        sort_by_key(oa, m, row_key);
    memset(w->flow, 0, (m * n + n) * sizeof *w->flow);
    int64_t *ra = w->ra, *rb = w->rb;
    for (size_t i = 0; i < m; i++)
        ra[i] = a[i];
    for (size_t j = 0; j < n; j++)
        rb[j] = b[j];
    /* union-find over nodes to find the forest's components */
    int32_t *uf = w->uf;
    for (size_t v = 0; v < m + n; v++)
        uf[v] = (int32_t)v;
    int32_t *live = w->queue; /* sinks with demand left */
    size_t nlive = n, nbasis = 0;
    for (size_t j = 0; j < n; j++)
        live[j] = (int32_t)j;
    for (size_t pi = 0; pi < m; pi++) {
        int32_t i = oa[pi];
        const double *crow = cost + (size_t)i * n;
        while (ra[i] > 0) {
            if (nlive == 0)
                return OMPF_EINVAL; /* cannot happen with balanced totals */
            size_t bk = 0;
            double bc = crow[live[0]];
            for (size_t q = 1; q < nlive; q++)
                if (crow[live[q]] < bc) {
                    bc = crow[live[q]];
                    bk = q;
                }
            int32_t j = live[bk];
            int64_t f = ra[i] < rb[j] ? ra[i] : rb[j];
            int32_t e = (int32_t)((size_t)i * n + (size_t)j);
            w->flow[e] = f;
            set_basis(w, &g, nbasis++, e);
            int32_t r1 = uf_find(uf, i), r2 = uf_find(uf, (int32_t)m + j);
            uf[r1] = r2;
            ra[i] -= f;
            rb[j] -= f;
            if (rb[j] == 0)
                live[bk] = live[--nlive];
        }
    }
    for (size_t j = 0; j < n; j++) {
        int32_t v = (int32_t)(m + j);
        if (uf_find(uf, v) == v) /* one sink per component: its root */
            set_basis(w, &g, nbasis++, (int32_t)(m * n + j));
    }
    if (nbasis != m + n)
        return OMPF_EINVAL; /* not a spanning tree: cannot happen */

    rebuild_tree(w, &g);
    int32_t nn = g.root + 1;
    for (int32_t v = 0; v < nn; v++)
        w->fchild[v] = -1;
    for (int32_t v = 0; v < nn; v++)
        if (v != g.root)
            child_link(w, v, w->parent[v]);

    /* Round-off in reduced costs grows with potentials (sums of costs
     * along tree paths).  Phase 1 ignores anything within a safe bound of
     * zero; phase 2 polishes with a bound of a few ulps of the largest
     * potential, which matters for nearly equal histograms (EMD << largest
     * cost), and is capped so that round-off cannot make it loop. */
    double eps = 64.0 * DBL_EPSILON * (maxc > 0 ? maxc : 1.0) *
                 (double)(m + n);
    int phase = 1;
    uint64_t polish_limit = 0;
    const size_t narcs = m * n;
    size_t block = (size_t)ceil(sqrt((double)narcs));
    if (block < 16)
        block = 16;
    if (block > narcs)
        block = narcs;
    size_t next_row = 0;
    uint64_t pivots = 0, degenerate = 0;
    const uint64_t max_pivots = 1000u * (uint64_t)(narcs + m + n) + 100000u;
    const double *psink = w->pot + m;

    for (;;) {
        /* Block search pricing (as in LEMON), by whole rows so that the
         * inner loop is a plain contiguous minimum: best arc of the first
         * block of rows that contains an improving arc. */
        int32_t enter = -1;
        double best = -eps;
        size_t rows = 0, in_block = 0, row = next_row;
        while (rows < m) {
            const double *crow = cost + row * n;
            double rmin = crow[0] - psink[0];
            size_t rj = 0;
            for (size_t j = 1; j < n; j++) {
                double r = crow[j] - psink[j];
                if (r < rmin) {
                    rmin = r;
                    rj = j;
                }
            }
            if (rmin + w->pot[row] < best) {
                best = rmin + w->pot[row];
                enter = (int32_t)(row * n + rj);
            }
            if (++row == m)
                row = 0;
            rows++;
            in_block += n;
            if (in_block >= block) {
                if (enter >= 0)
                    break;
                in_block = 0;
            }
        }
        next_row = row;
        if (enter < 0 && phase == 1) {
            double maxpot = maxc > 0 ? maxc : 1.0;
            for (int32_t v = 0; v < nn; v++)
                if (fabs(w->pot[v]) > maxpot)
                    maxpot = fabs(w->pot[v]);
            eps = 8.0 * DBL_EPSILON * maxpot;
            phase = 2;
            polish_limit = pivots + 4u * (uint64_t)(m + n) + 100u;
            continue;
        }
        if (enter < 0 || (phase == 2 && pivots >= polish_limit))
            break;
        if (++pivots > max_pivots)
            return OMPF_ERANGE;

        int32_t k = arc_src(&g, enter), l = arc_dst(&g, enter);
        /* Apex of the cycle. */
        int32_t u = k, v = l;
        while (u != v) {
            if (w->depth[u] >= w->depth[v])
                u = w->parent[u];
            else
                v = w->parent[v];
        }
        int32_t apex = u;
        /* Ratio test.  Path apex..k is traversed downwards (arcs pointing
         * up lose flow), path l..apex upwards (arcs pointing down lose
         * flow).  The last blocking arc from the apex: on the l side the
         * one nearest the apex (<=), else on the k side the one nearest k
         * (<). */
        int64_t theta = INT64_MAX;
        int32_t leave = -1; /* child node whose pred arc leaves */
        for (int32_t x = k; x != apex; x = w->parent[x])
            if (w->up[x] && w->flow[w->pred[x]] < theta) {
                theta = w->flow[w->pred[x]];
                leave = x;
            }
        for (int32_t x = l; x != apex; x = w->parent[x])
            if (!w->up[x] && w->flow[w->pred[x]] <= theta) {
                theta = w->flow[w->pred[x]];
                leave = x;
            }
        if (leave < 0)
            return OMPF_ERANGE; /* unbounded: impossible with costs >= 0 */
        if (theta > 0) {
            for (int32_t x = k; x != apex; x = w->parent[x])
                w->flow[w->pred[x]] += w->up[x] ? -theta : theta;
            for (int32_t x = l; x != apex; x = w->parent[x])
                w->flow[w->pred[x]] += w->up[x] ? theta : -theta;
        } else {
            degenerate++;
        }
        w->flow[enter] = theta;
        /* Re-hang the subtree below the leaving arc: it contains x, one
         * end of the entering arc; reverse the path x..leave so that x
         * becomes its root, child of y, the other end. */
        int leave_on_k = 0;
        for (int32_t x = k; x != apex; x = w->parent[x])
            if (x == leave) {
                leave_on_k = 1;
                break;
            }
        int32_t x = leave_on_k ? k : l, y = leave_on_k ? l : k;
        int32_t newpar = y, newpred = enter;
        v = x;
        uint8_t newup = leave_on_k; /* enter = k->l: up when x == k */
        for (;;) {
            int32_t oldpar = w->parent[v], oldpred = w->pred[v];
            uint8_t oldup = w->up[v];
            child_unlink(w, v);
            child_link(w, v, newpar);
            w->pred[v] = newpred;
            w->up[v] = newup;
            if (v == leave)
                break;
            newpar = v;
            newpred = oldpred;
            newup = !oldup;
            v = oldpar;
        }
        update_subtree(w, &g, x);
    }

    /* Objective with the masses normalised to 1. */
    double total = (double)ta, sum = 0.0, comp = 0.0;
    for (int32_t v = 0; v < nn; v++) {
        int32_t e = w->pred[v];
        if (v == g.root || (size_t)e >= narcs || w->flow[e] == 0)
            continue;
        double term = ((double)w->flow[e] / total) * cost[e];
        /* Kahan: keeps the sum exact to the last bits for the oracle. */
        double y = term - comp, t = sum + y;
        comp = (t - sum) - y;
        sum = t;
    }
    *out = sum;
    if (stats) {
        stats->pivots = pivots;
        stats->degenerate_pivots = degenerate;
    }
    return 0;
}

int ompf_emd_2d(ompf_emd_ws_t *w, size_t m, const int64_t *ca,
                const double *pa, size_t n, const int64_t *cb,
                const double *pb, double *out, ompf_emd_stats_t *stats)
{
    if (!w || !ca || !pa || !cb || !pb || !out || m == 0 || n == 0)
        return OMPF_EINVAL;
    int64_t ta = 0, tb = 0;
    for (size_t i = 0; i < m; i++)
        ta += ca[i];
    for (size_t j = 0; j < n; j++)
        tb += cb[j];
    if (ta <= 0 || tb <= 0)
        return OMPF_EINVAL;
    /* Common total lcm(ta, tb): exact integers (refuse beyond 2^53). */
    int64_t ga = ta, gb = tb;
    while (gb) {
        int64_t r = ga % gb;
        ga = gb;
        gb = r;
    }
    const int64_t fa = tb / ga, fb = ta / ga; /* scale factors of a and b */
    if ((double)ta * (double)fa > 9007199254740992.0)
        return OMPF_ERANGE;
    int rc = ws_reserve(w, m, n);
    if (rc)
        return rc;
    if (w->cap_cost < m * n) {
        free(w->cost);
        w->cost = malloc(m * n * sizeof *w->cost);
        if (!w->cost) {
            w->cap_cost = 0;
            return OMPF_ENOMEM;
        }
        w->cap_cost = m * n;
    }
    int64_t *sa = malloc((m + n) * sizeof *sa);
    double *keys = malloc(m * sizeof *keys); /* row order of the start */
    if (!sa || !keys) {
        free(sa);
        free(keys);
        return OMPF_ENOMEM;
    }
    int64_t *sb = sa + m;
    for (size_t i = 0; i < m; i++) {
        sa[i] = ca[i] * fa;
        keys[i] = pa[2 * i] + pa[2 * i + 1];
    }
    for (size_t j = 0; j < n; j++) {
        sb[j] = cb[j] * fb;
    }
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double dx = pa[2 * i] - pb[2 * j], dy = pa[2 * i + 1] - pb[2 * j + 1];
            w->cost[i * n + j] = sqrt(dx * dx + dy * dy);
        }
    rc = ompf_emd_transport(w, m, sa, n, sb, w->cost, keys, out, stats);
    free(sa);
    free(keys);
    return rc;
}
