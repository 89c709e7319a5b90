/* The grid of Behaviour Clustering (docs/fusion.md, BC steps 2-7).
 *
 * The finest division dmax is the paper's: per overlapping event, range /
 * (smallest prev-cur difference), minimum over the events.  Every XU gets
 * integer coordinates c = floor((v - min) / range * dmax); the grid at
 * level L has cells c >> L, so each relaxation doubles the cell size and
 * grids are nested.  Nesting makes "is there a cell with XUs of both
 * sides" monotone in L, and the next useful level is computed directly:
 * sorting the XUs in Morton (bit-interleaved) order makes every cell of
 * every level a contiguous range, and the finest level at which two XUs
 * share a cell, max over events of bitlength(c_a ^ c_b), is minimal for
 * some pair of neighbours of different sides.  Each iteration therefore
 * pairs at least one couple, and there are at most bitlength(dmax) + 1
 * iterations.  XUs with a missing overlapping value join in a last
 * one-cell iteration.
 *
 * After the sort the coordinates are no longer needed: the pairing only
 * reads, per XU in Morton order, its side and the level it shares with
 * its predecessor.  Contiguity gives level(a, c) = max(level(a, b),
 * level(b, c)) for a <= b <= c, so the cells of all levels form a tree,
 * and all iterations are done in one pass with a stack of open cells
 * (pair_levels).
 *
 * Memory is what sets the size of the programs BC can fuse (issue 20), so
 * the grid holds 13 bytes per XU: a 64-bit key and a 32-bit row (the XU:
 * prev x is row x, cur x is row np + x) and a level byte.  The values are
 * read where the runs hold them (bc_col_t), once for the bounds, once for
 * dmax and once for the coordinates, which become Morton keys at once.
 * The keys are sorted with their rows, in place above BC_SCRATCH_KEYS; then
 * the level bytes are taken from neighbouring keys, and the pairing turns
 * the arrays into its stack: entry i < j holds an open cell's unpaired
 * member (its order key and row) when XU j is reached, and a cell is
 * paired by sorting its own entries. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bc_grid.h"

bc_grid_t *bc_grid_create(size_t maxn, size_t kmax, size_t scratch_keys, int copy_values)
{
    bc_grid_t *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    size_t n = 2 * (maxn ? maxn : 1), k = kmax ? kmax : 1;
    g->cap = n;
    g->kmax = kmax;
    g->nscr = scratch_keys > BC_SCRATCH_KEYS ? scratch_keys : BC_SCRATCH_KEYS;
    if (g->nscr > n)
        g->nscr = n;
    g->key = malloc(n * sizeof *g->key);
    g->row = malloc(n * sizeof *g->row);
    g->lv = malloc(n);
    g->skey = malloc(g->nscr * sizeof *g->skey);
    g->srow = malloc(g->nscr * sizeof *g->srow);
    g->ck = malloc((n / 2 < BC_SMALL_CELL ? n / 2 : BC_SMALL_CELL) * sizeof *g->ck);
    g->cap_frame = 256;
    g->frame = malloc(g->cap_frame * sizeof *g->frame);
    g->coord = malloc(k * sizeof *g->coord);
    g->mn = malloc(k * sizeof *g->mn);
    g->mx = malloc(k * sizeof *g->mx);
    g->whole = malloc(k);
    if (copy_values && !(g->vals = malloc(n * k * sizeof *g->vals))) {
        bc_grid_destroy(g);
        return NULL;
    }
    if (!g->key || !g->row || !g->lv || !g->skey || !g->srow || !g->ck || !g->frame ||
        !g->coord || !g->mn || !g->mx || !g->whole) {
        bc_grid_destroy(g);
        return NULL;
    }
    return g;
}

void bc_grid_scratch_limit(bc_grid_t *g, size_t n)
{
    if (n < g->nscr)
        g->nscr = n;
}

void bc_grid_frames_start(bc_grid_t *g, size_t n)
{
    if (n && n < g->cap_frame)
        g->cap_frame = n; /* the rest of the allocation goes unused */
}

void bc_grid_destroy(bc_grid_t *g)
{
    if (!g)
        return;
    free(g->key);
    free(g->row);
    free(g->lv);
    free(g->skey);
    free(g->srow);
    free(g->ck);
    free(g->frame);
    free(g->grp);
    free(g->coord);
    free(g->mn);
    free(g->mx);
    free(g->whole);
    free(g->vals);
    free(g);
}

/* ---- the XUs' values, where the runs hold them --------------------------- */

static inline const double *col_at(const bc_col_t *c, size_t x)
{
    size_t i = c->map ? c->map[x * c->mstride] : c->first + x;
    return c->v + i * c->vstride;
}

/* Value e of row r (prev x = r, cur x = r - np). */
static inline double value(const bc_prob_t *pb, size_t r, size_t e)
{
    return r < pb->np ? *col_at(&pb->col[0][e], r) : *col_at(&pb->col[1][e], r - pb->np);
}

/* Value e of row r, from the grid's copy when it holds one. */
static inline double grid_value(const bc_grid_t *g, const bc_prob_t *pb, size_t r, size_t e)
{
    return g->vals ? g->vals[r * pb->k + e] : value(pb, r, e);
}

/* A hint some rows ahead: the values are at random places of the runs. */
static inline void prefetch_row(const bc_prob_t *pb, size_t r)
{
    if (r >= pb->np + pb->nc)
        return;
    for (size_t e = 0; e < pb->k; e++)
        __builtin_prefetch(r < pb->np ? col_at(&pb->col[0][e], r)
                                      : col_at(&pb->col[1][e], r - pb->np));
}

static inline uint64_t coord_of(double v, double mn, double mx, double dmax, uint64_t cmax)
{
    double range = mx - mn;
    if (!(range > 0))
        return 0;
    double x = floor((v - mn) / range * dmax);
    return x <= 0 ? 0 : (x >= (double)cmax ? cmax : (uint64_t)x);
}

static unsigned shared_level(const uint64_t *a, const uint64_t *b, size_t k)
{
    unsigned l = 0;
    for (size_t e = 0; e < k; e++) {
        unsigned b2 = fz_bitlen(a[e] ^ b[e]);
        if (b2 > l)
            l = b2;
    }
    return l;
}

/* ---- Morton sort ---------------------------------------------------------- */

/* Dimensions, for the qsort comparator of ties (per thread: fusions may
 * run concurrently). */
static _Thread_local size_t g_k;

static inline int less_msb(uint64_t x, uint64_t y)
{
    return x < y && x < (x ^ y);
}

/* Morton (bit-interleaved) order without interleaving: the coordinate
 * with the most significant differing bit decides (Chan's trick); then
 * the tag (prev before cur, then index). */
static int cmp_morton(const uint64_t *a, const uint64_t *b, size_t k)
{
    size_t msd = 0;
    uint64_t x = 0;
    for (size_t e = 0; e < k; e++) {
        uint64_t y = a[e] ^ b[e];
        if (less_msb(x, y)) {
            msd = e;
            x = y;
        }
    }
    if (a[msd] != b[msd])
        return a[msd] < b[msd] ? -1 : 1;
    return (a[k] > b[k]) - (a[k] < b[k]); /* rows: prev before cur, then index */
}

static int cmp_morton_rec(const void *pa, const void *pb)
{
    return cmp_morton(pa, pb, g_k);
}

/* The first 64 bits of a record's interleaved coordinates (bit levels
 * from the top, dimension 0 first within a level), built a byte of each
 * coordinate at a time: spread[v] holds v's bits at positions 0, k, 2k. */
typedef struct morton_prefix {
    size_t k;
    unsigned h, r, lo, total; /* full levels, bits of the next, shift */
    uint64_t spread[256];
} morton_prefix_t;

static void prefix_init(morton_prefix_t *m, size_t k, unsigned levels)
{
    m->k = k;
    size_t total = (size_t)levels * k;
    m->total = total <= 64 ? (unsigned)total : 64;
    m->h = k == 0 ? 0 : total <= 64 ? levels : (unsigned)(64 / k);
    m->r = total <= 64 ? 0 : 64 - m->h * (unsigned)k;
    m->lo = levels - m->h;
    for (unsigned v = 0; v < 256; v++) {
        uint64_t x = 0;
        for (unsigned b = 0; b < 8; b++)
            if (((v >> b) & 1) && (size_t)b * k < 64)
                x |= 1ull << (b * k);
        m->spread[v] = x;
    }
}

static uint64_t prefix_of(const morton_prefix_t *m, const uint64_t *c)
{
    size_t k = m->k;
    uint64_t x = 0, mask = m->h ? ~0ull >> (64 - m->h) : 0;
    for (size_t e = 0; m->h && e < k; e++) {
        uint64_t t = (c[e] >> m->lo) & mask, s = 0;
        for (unsigned b = 0; b < m->h; b += 8)
            s |= m->spread[(t >> b) & 255] << (b * k);
        x |= s << (k - 1 - e);
    }
    if (m->r) { /* the next level, dimensions 0 .. r - 1 */
        uint64_t part = 0;
        for (size_t e = 0; e < m->r; e++)
            part = (part << 1) | ((c[e] >> (m->lo - 1)) & 1);
        x = m->h ? (x << m->r) | part : part;
    } else if (m->total && m->total < 64) {
        x <<= 64 - m->total;
    }
    return x;
}

/* Keys that are equal in their first 64 bits but whose coordinates have
 * more: their rows are put in cmp_morton order from the coordinates,
 * computed again, and the levels between them come from those. */
static int sort_ties(bc_grid_t *g, const bc_prob_t *pb, size_t a, size_t m, uint64_t cmax,
                     double dmax)
{
    size_t k = pb->k, w = k + 1;
    if (m * w > g->cap_grp) {
        uint64_t *q = realloc(g->grp, m * w * sizeof *q);
        if (!q)
            return OMPF_ENOMEM;
        g->grp = q;
        g->cap_grp = m * w;
    }
    uint64_t *rec = g->grp;
    for (size_t i = 0; i < m; i++) {
        uint32_t r = g->row[a + i];
        for (size_t e = 0; e < k; e++)
            rec[i * w + e] = coord_of(grid_value(g, pb, r, e), g->mn[e], g->mx[e], dmax, cmax);
        rec[i * w + k] = r; /* the tag: prev before cur, then index */
    }
    g_k = k;
    qsort(rec, m, w * sizeof *rec, cmp_morton_rec);
    for (size_t i = 0; i < m; i++) {
        g->row[a + i] = (uint32_t)rec[i * w + k];
        if (i)
            g->lv[a + i] = (uint8_t)shared_level(rec + (i - 1) * w, rec + i * w, k);
    }
    return 0;
}

/* Sorts the ne keys with their rows in Morton order: by the 64-bit
 * prefixes, then, when the coordinates have more bits, equal prefixes by
 * the comparator.  The order of XUs with equal coordinates does not
 * matter (a cell's members pair in order-key order): the in-place sort
 * leaves them as it may.  Fills lv. */
static int sort_morton(bc_grid_t *g, const bc_prob_t *pb, size_t ne, uint64_t cmax,
                       double dmax)
{
    size_t k = pb->k;
    uint64_t *key = g->key;
    uint32_t *row = g->row;
    unsigned levels = fz_bitlen(cmax);
    if (ne <= g->nscr) {
        int rc = fz_radix_sort_buf(key, row, ne, g->skey, g->srow);
        if (rc)
            return rc;
    } else {
        fz_sort_u64_idx(key, row, ne);
    }
    int complete = (size_t)levels * k <= 64;
    /* The level two neighbours share: from the first differing bit of
     * their prefixes (bit p from the top lies in level levels - 1 - p/k),
     * or 0 for equal coordinates. */
    for (size_t j = 0; j < ne; j++)
        g->lv[j] = !j || key[j] == key[j - 1]
                       ? 0
                       : (uint8_t)(levels - (unsigned)__builtin_clzll(key[j] ^ key[j - 1]) / k);
    for (size_t a = 0; a < ne && !complete;) {
        size_t b = a + 1;
        while (b < ne && key[b] == key[a])
            b++;
        if (b - a > 1) {
            int rc = sort_ties(g, pb, a, b - a, cmax, dmax);
            if (rc)
                return rc;
        }
        a = b;
    }
    return 0;
}

/* ---- finest division ----------------------------------------------------- */

/* Value e of the n rows from r0 that have one, sorted, in dst (read as
 * doubles after); scr is the radix sort's scratch (n keys). */
static int gather_sorted(const bc_grid_t *g, const bc_prob_t *pb, size_t r0, size_t n,
                         size_t e, uint64_t *dst, uint64_t *scr, size_t *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!g->vals && !(i & 7))
            for (size_t h = 0; h < 8 && i + 16 + h < n; h++)
                __builtin_prefetch(r0 + i + 16 + h < pb->np
                                       ? col_at(&pb->col[0][e], r0 + i + 16 + h)
                                       : col_at(&pb->col[1][e], r0 + i + 16 + h - pb->np));
        double v = grid_value(g, pb, r0 + i, e);
        if (!isnan(v))
            dst[m++] = fz_double_key(v);
    }
    int rc = fz_radix_sort_buf(dst, NULL, m, scr, NULL);
    for (size_t i = 0; i < m; i++) {
        double d = fz_key_double(dst[i]);
        memcpy(&dst[i], &d, sizeof d);
    }
    *out = m;
    return rc;
}

/* One merge of sorted x and y: *cross, the smallest |a - b| with a from x
 * and b from y, and *gap, the smallest gap between distinct values of both
 * (the grid must still separate distinct values when some are identical
 * across the runs).  Neighbours in the merged order attain both minima;
 * differences are exact-rounded and symmetric.  whole: all values are
 * integers.  The caller takes the cross minimum if positive, else the gap:
 * once the cross minimum is 0 or 1 and a gap of 1 was seen, that is 1
 * whatever follows, and the merge stops (runs' counts share values). */
static void min_diffs(const double *x, size_t nx, const double *y, size_t ny, int whole,
                      double *cross, double *gap)
{
    double stop = whole ? 1 : -1;
    double bc = INFINITY, bg = INFINITY, last = 0;
    int side = -1; /* side of the last value merged, -1 before the first */
    size_t i = 0, j = 0;
    while (i < nx || j < ny) {
        int s = j >= ny || (i < nx && x[i] <= y[j]) ? 0 : 1;
        double v = s ? y[j++] : x[i++];
        if (side >= 0) {
            double d = v - last;
            if (s != side && d < bc)
                bc = d;
            if (d > 0 && d < bg)
                bg = d;
            if (bc <= stop && bg <= stop)
                break;
        }
        last = v;
        side = s;
    }
    *cross = bc;
    *gap = bg;
}

static double grid_dmax(bc_grid_t *g, const bc_prob_t *pb)
{
    double dmax = INFINITY;
    uint64_t *scr = (uint64_t *)(void *)g->row; /* cap / 2 keys */
    for (size_t e = 0; e < pb->k; e++) {
        double range = g->mx[e] - g->mn[e];
        if (!(range > 0))
            continue;
        size_t nx = 0, ny = 0;
        const double *x;
        if (pb->psorted && pb->psorted[e]) {
            x = pb->psorted[e];
            nx = pb->npsorted[e];
        } else {
            if (gather_sorted(g, pb, 0, pb->np, e, g->key, scr, &nx))
                return -1;
            x = (const double *)(const void *)g->key;
        }
        uint64_t *ky = g->key + g->cap / 2;
        if (gather_sorted(g, pb, pb->np, pb->nc, e, ky, scr, &ny))
            return -1;
        double diff, gap;
        min_diffs(x, nx, (const double *)(const void *)ky, ny, g->whole[e], &diff, &gap);
        if (!(diff > 0)) /* identical values across the runs */
            diff = gap;
        if (isfinite(diff) && diff > 0 && range / diff < dmax)
            dmax = range / diff;
    }
    if (!isfinite(dmax) || dmax < 1)
        dmax = 1;
    if (dmax > 4503599627370496.0) /* 2^52: coordinates stay exact */
        dmax = 4503599627370496.0;
    return dmax;
}

int bc_grid_solve(bc_grid_t *g, bc_prob_t *pb)
{
    size_t k = pb->k, n = pb->np + pb->nc;
    pb->n_pairs = 0;
    pb->iterations = 0;
    pb->dmax = 1;
    if (!pb->np || !pb->nc)
        return 0;
    if (n > g->cap || k > g->kmax || pb->np > g->cap / 2 || pb->nc > g->cap / 2)
        return OMPF_EINVAL;
    double *mn = g->mn, *mx = g->mx;
    uint8_t *whole = g->whole;
    for (size_t e = 0; e < k; e++) {
        mn[e] = INFINITY;
        mx[e] = -INFINITY;
        whole[e] = 1;
    }
    /* with a copy, the values are read from the runs here alone */
    for (size_t r = 0; r < n && g->vals; r++) {
        prefetch_row(pb, r + 16);
        for (size_t e = 0; e < k; e++)
            g->vals[r * k + e] = value(pb, r, e);
    }
    for (size_t r = 0; r < n; r++) {
        if (!g->vals)
            prefetch_row(pb, r + 16);
        for (size_t e = 0; e < k; e++) {
            double v = grid_value(g, pb, r, e);
            if (isnan(v))
                continue;
            if (v < mn[e])
                mn[e] = v;
            if (v > mx[e])
                mx[e] = v;
            /* doubles from 2^52 up are all integers */
            whole[e] &= fabs(v) >= 4503599627370496.0 || (double)(int64_t)v == v;
        }
    }
    double dmax = grid_dmax(g, pb);
    if (dmax < 0)
        return OMPF_ENOMEM;
    pb->dmax = dmax;
    uint64_t cmax = (uint64_t)ceil(dmax) - 1;
    morton_prefix_t m;
    prefix_init(&m, k, fz_bitlen(cmax));
    /* Each XU's coordinates become its Morton key; the rows of XUs with a
     * missing value go to the end of row[] (ne + na <= r). */
    size_t ne = 0, na = 0;
    uint64_t *c = g->coord;
    for (size_t r = 0; r < n; r++) {
        if (!g->vals)
            prefetch_row(pb, r + 16);
        int missing = 0;
        for (size_t e = 0; e < k; e++) {
            double v = grid_value(g, pb, r, e);
            missing |= isnan(v);
            c[e] = missing ? 0 : coord_of(v, mn[e], mx[e], dmax, cmax);
        }
        if (missing) {
            g->row[g->cap - ++na] = (uint32_t)r;
            continue;
        }
        g->key[ne] = prefix_of(&m, c);
        g->row[ne++] = (uint32_t)r;
    }
    int rc = sort_morton(g, pb, ne, cmax, dmax);
    if (rc)
        return rc;
    unsigned iters;
    long left = bc_pair_levels(g, pb, ne, &iters);
    if (left < 0)
        return (int)left;
    pb->iterations += iters;
    if (na) {
        /* Missing overlapping values: one last cell with all that is left. */
        size_t all = (size_t)left + na;
        memmove(g->row + left, g->row + g->cap - na, na * sizeof *g->row);
        unsigned sides = 0;
        for (size_t i = 0; i < all; i++) {
            if (i >= (size_t)left)
                g->key[i] = bc_order_key(pb, g->row[i]);
            sides |= bc_side_bit(pb, g->row[i]);
        }
        if (sides == 3) {
            bc_pair_cell(g, pb, 0, all, &sides);
            pb->iterations++;
        }
    }
    return 0;
}
