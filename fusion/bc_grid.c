/* The grid of Behaviour Clustering (docs/fusion.md, BC steps 2-7).
 *
 * The finest division dmax is the paper's: per overlapping event, range /
 * (smallest prev-cur difference), minimum over the events.  Every XU gets
 * integer coordinates c = floor((v - min) / range * dmax) once; the grid
 * at level L has cells c >> L, so each relaxation doubles the cell size
 * and grids are nested.  Nesting makes "is there a cell with XUs of both
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
 * reads, per XU in Morton order, its tag and the level it shares with its
 * predecessor.  Contiguity gives level(a, c) = max(level(a, b),
 * level(b, c)) for a <= b <= c, so the cells of all levels form a tree,
 * and all iterations are done in one pass with a stack of open cells
 * (pair_levels). */
#include <math.h>
#include <string.h>

#include "bc_grid.h"

/* Tag of an XU: side, paired flag, index within its side. */
#define TAG_SIDE (1ull << 63)
#define TAG_PAIRED (1ull << 62)
#define TAG_INDEX 0xffffffffull

struct bc_grid {
    size_t cap, kmax;  /* XUs of both sides, values per XU */
    uint64_t *rec;     /* the caller's rows of values, made k coordinates +
                          tag per XU in place, for the sort; then the
                          order keys in Morton order */
    uint64_t *key;     /* Morton prefixes, then the tags in record order;
                          also the doubles' sort keys */
    uint32_t *idx;     /* sort permutation */
    uint64_t *tag;     /* tags in Morton order, then those of the XUs with
                          a missing value from the top down; also dmax's
                          values and the radix sort's scratch keys */
    void *scr;         /* the radix sorts' other scratch: cap / 2 keys
                          (dmax) or cap payloads (the Morton sort); then
                          the pairs (prev, then cur indices: cap / 2
                          each) */
    uint32_t *pp, *pc; /* the pairs, in scr */
    uint8_t *lv;       /* lv[j]: level XU j shares with XU j - 1 */
    fz_key_t *tp, *tc; /* one cell's members, per side */
    double *mn, *mx;   /* bounds per value */
    uint8_t *whole;    /* per value: all of them integers (counts are) */
};

bc_grid_t *bc_grid_create(size_t maxn, size_t kmax)
{
    bc_grid_t *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    size_t n = 2 * (maxn ? maxn : 1);
    g->cap = n;
    g->kmax = kmax;
    g->rec = malloc(n * (kmax + 1) * sizeof *g->rec);
    g->key = malloc(n * sizeof *g->key);
    g->idx = malloc(n * sizeof *g->idx);
    g->tag = malloc(n * sizeof *g->tag);
    g->scr = malloc(n * sizeof(uint32_t)); /* n / 2 keys of 8 bytes */
    g->pp = g->scr;
    g->pc = g->pp ? g->pp + n / 2 : NULL;
    g->lv = malloc(n);
    g->tp = malloc(n / 2 * sizeof *g->tp);
    g->tc = malloc(n / 2 * sizeof *g->tc);
    g->mn = malloc((kmax ? kmax : 1) * sizeof *g->mn);
    g->whole = malloc(kmax ? kmax : 1);
    g->mx = malloc((kmax ? kmax : 1) * sizeof *g->mx);
    if (!g->mn || !g->mx || !g->whole || !g->rec || !g->key || !g->idx || !g->tag ||
        !g->scr || !g->lv || !g->tp || !g->tc) {
        bc_grid_destroy(g);
        return NULL;
    }
    return g;
}

uint64_t *bc_grid_rows(bc_grid_t *g)
{
    return g->rec;
}

uint32_t *bc_grid_spare(bc_grid_t *g)
{
    return g->idx; /* the sort permutation and the open cells' members */
}

void bc_grid_destroy(bc_grid_t *g)
{
    if (!g)
        return;
    free(g->rec);
    free(g->key);
    free(g->idx);
    free(g->tag);
    free(g->scr);
    free(g->lv);
    free(g->tp);
    free(g->tc);
    free(g->mn);
    free(g->whole);
    free(g->mx);
    free(g);
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

/* Dimensions and records, for the qsort comparator of ties (per thread:
 * fusions may run concurrently). */
static _Thread_local size_t g_k;
static _Thread_local const uint64_t *g_rec;

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
    uint64_t ta = a[k] & ~TAG_PAIRED, tb = b[k] & ~TAG_PAIRED;
    return (ta > tb) - (ta < tb);
}

static int cmp_morton_idx(const void *pa, const void *pb)
{
    size_t w = g_k + 1;
    return cmp_morton(g_rec + *(const uint32_t *)pa * w,
                      g_rec + *(const uint32_t *)pb * w, g_k);
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

/* Sorts the n records (stride k + 1) in cmp_morton order, which is total
 * (tags are unique): the 64-bit prefixes are radix-sorted, and runs of
 * equal prefixes, possible only when the coordinates have more bits, are
 * finished with the comparator.  Records are filled in tag order, so the
 * stable radix sort already orders equal coordinates by tag.  Leaves
 * g->tag and g->lv in that order. */
static int sort_morton(bc_grid_t *g, size_t n, size_t k, uint64_t cmax)
{
    size_t w = k + 1;
    uint64_t *rec = g->rec, *key = g->key;
    uint32_t *idx = g->idx;
    unsigned levels = fz_bitlen(cmax);
    morton_prefix_t m;
    prefix_init(&m, k, levels);
    for (size_t j = 0; j < n; j++) {
        key[j] = prefix_of(&m, rec + j * w);
        idx[j] = (uint32_t)j;
    }
    int rc = fz_radix_sort_buf(key, idx, n, g->tag, g->scr);
    if (rc)
        return rc;
    int complete = (size_t)levels * k <= 64;
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
    /* The level two neighbours share: from the first differing bit of
     * their prefixes (bit p from the top lies in level levels - 1 - p/k),
     * or from the coordinates when the prefixes are equal. */
    for (size_t j = 0; j < n; j++) {
        if (!j)
            g->lv[j] = 0;
        else if (key[j] != key[j - 1])
            g->lv[j] = (uint8_t)(levels -
                                 (unsigned)__builtin_clzll(key[j] ^ key[j - 1]) / k);
        else
            g->lv[j] = complete ? 0
                                : (uint8_t)shared_level(rec + (size_t)idx[j - 1] * w,
                                                        rec + (size_t)idx[j] * w, k);
    }
    /* The tags in Morton order, gathered from a compact copy in record
     * order (in the prefixes' place) rather than from the records. */
    for (size_t j = 0; j < n; j++)
        key[j] = rec[j * w + k];
    for (size_t j = 0; j < n; j++)
        g->tag[j] = key[idx[j]];
    return 0;
}

/* ---- finest division ----------------------------------------------------- */

/* Sorts n doubles (no NaN) through their order-preserving integer keys
 * (tmp), with scr as the sort's scratch (n keys). */
static int sort_doubles(double *v, uint64_t *tmp, uint64_t *scr, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tmp[i] = fz_double_key(v[i]);
    int rc = fz_radix_sort_buf(tmp, NULL, n, scr, NULL);
    for (size_t i = 0; i < n; i++)
        v[i] = fz_key_double(tmp[i]);
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

static double grid_dmax(const bc_prob_t *pb, const uint64_t *rows, const double *mn,
                        const double *mx, const uint8_t *whole, double *buf, uint64_t *tmp,
                        uint64_t *scr)
{
    size_t w = BC_ROW(pb->k);
    const uint64_t *crows = rows + pb->np * w;
    double dmax = INFINITY;
    for (size_t e = 0; e < pb->k; e++) {
        double range = mx[e] - mn[e];
        if (!(range > 0))
            continue;
        size_t nx = 0, ny = 0;
        double *y = buf + pb->np;
        const double *x = buf;
        if (pb->psorted && pb->psorted[e]) {
            x = pb->psorted[e];
            nx = pb->npsorted[e];
        } else {
            for (size_t i = 0; i < pb->np; i++) {
                double v = bc_get(&rows[i * w + e]);
                if (!isnan(v))
                    buf[nx++] = v;
            }
            if (sort_doubles(buf, tmp, scr, nx))
                return -1;
        }
        for (size_t i = 0; i < pb->nc; i++) {
            double v = bc_get(&crows[i * w + e]);
            if (!isnan(v))
                y[ny++] = v;
        }
        if (sort_doubles(y, tmp, scr, ny))
            return -1;
        double diff, gap;
        min_diffs(x, nx, y, ny, whole[e], &diff, &gap);
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

/* ---- pairing --------------------------------------------------------------- */

/* The order key of XU x of a side (bc_prob_t). */
static inline fz_key_t key_of(const bc_prob_t *pb, unsigned side, uint32_t x)
{
    fz_key_t key;
    if (pb->rank[side]) {
        key.k1 = pb->rank[side][x];
    } else {
        uint64_t s = pb->seed + ((side ? pb->np : 0) + (uint64_t)x) * 0x9e3779b97f4a7c15ull;
        key.k1 = fz_rand(&s);
    }
    key.k2 = pb->base[side] ? pb->base[side][(size_t)x * pb->stride[side]]
                            : pb->first[side] + x;
    key.idx = 0;
    return key;
}

/* Pairs, among the cnt XUs at positions pos[] (ascending: Morton order),
 * prev and cur members in order-key order; the position breaks ties of
 * the key, as it always has.  mk: the order keys (k1, k2) by position, or
 * NULL to look them up by XU index. */
static void pair_members(bc_grid_t *g, bc_prob_t *pb, uint64_t *tag, const uint32_t *pos,
                         size_t cnt, const uint64_t *mk)
{
    size_t np = 0, nc = 0;
    fz_key_t *tp = g->tp, *tc = g->tc;
    for (size_t i = 0; i < cnt; i++) {
        uint64_t t = tag[pos[i]];
        if (t & TAG_PAIRED)
            continue;
        fz_key_t key;
        if (mk) {
            key.k1 = mk[2 * (size_t)pos[i]];
            key.k2 = mk[2 * (size_t)pos[i] + 1];
        } else {
            key = key_of(pb, (t & TAG_SIDE) ? 1 : 0, (uint32_t)(t & TAG_INDEX));
        }
        key.idx = pos[i];
        if (t & TAG_SIDE)
            tc[nc++] = key;
        else
            tp[np++] = key;
    }
    size_t m = np < nc ? np : nc;
    if (!m)
        return;
    /* most cells hold a few XUs: fz_sort_keys sorts them by insertion */
    fz_sort_keys(tp, np);
    fz_sort_keys(tc, nc);
    for (size_t j = 0; j < m; j++) {
        uint64_t *p = &tag[tp[j].idx], *q = &tag[tc[j].idx];
        g->pp[pb->n_pairs] = (uint32_t)(*p & TAG_INDEX);
        g->pc[pb->n_pairs] = (uint32_t)(*q & TAG_INDEX);
        pb->n_pairs++;
        *p |= TAG_PAIRED;
        *q |= TAG_PAIRED;
    }
}

/* The open cells of pair_levels, bottom to top. */
typedef struct cell_stack {
    uint32_t *pos;    /* unpaired positions of the open cells, in order */
    uint64_t *frame;  /* per open cell: first member << 16 | side bits << 8 |
                         level of the boundary to its left */
    size_t n, top;    /* open cells, members */
    uint64_t levels;  /* bit L: some level-L cell was paired */
} cell_stack_t;

#define FR_FIRST(f) ((size_t)((f) >> 16))
#define FR_SIDES(f) ((unsigned)((f) >> 8) & 3u)
#define FR_LEVEL(f) ((unsigned)(f) & 255u)

static uint64_t frame_of(size_t first, unsigned sides, unsigned level)
{
    return (uint64_t)first << 16 | (uint64_t)sides << 8 | level;
}

static unsigned sides_of(uint64_t t)
{
    return (t & TAG_SIDE) ? 2u : 1u;
}

/* Closes the open cells on top whose left boundary has level L, merging
 * them into the cell below (the level-L cell), and pairs it. */
static void close_level(bc_grid_t *g, bc_prob_t *pb, uint64_t *tag, const uint64_t *mk,
                        cell_stack_t *cs)
{
    unsigned L = FR_LEVEL(cs->frame[cs->n - 1]), sides = 0;
    size_t m = cs->n - 1;
    while (m > 0 && FR_LEVEL(cs->frame[m]) == L)
        sides |= FR_SIDES(cs->frame[m--]);
    /* cells m .. n-1 become cell m */
    uint64_t base = cs->frame[m];
    sides |= FR_SIDES(base);
    size_t first = FR_FIRST(base);
    cs->n = m + 1;
    if (sides == 3) {
        pair_members(g, pb, tag, cs->pos + first, cs->top - first, mk);
        cs->levels |= 1ull << L;
        size_t keep = first;
        sides = 0;
        for (size_t i = first; i < cs->top; i++) {
            uint64_t t = tag[cs->pos[i]];
            if (t & TAG_PAIRED)
                continue;
            sides |= sides_of(t);
            cs->pos[keep++] = cs->pos[i];
        }
        cs->top = keep;
    }
    cs->frame[m] = frame_of(first, sides, FR_LEVEL(base));
}

/* The cells of all levels form a tree (a level-L cell is a run of
 * neighbours sharing level <= L), and pairing inside a cell only needs
 * its sub-cells' unpaired XUs, which are one-sided once they are paired.
 * So instead of one pass over all unpaired XUs per level, one pass over
 * the XUs keeps a stack of cells: when the boundary to the next XU is of
 * a higher level than the ones on top, those cells are closed (merged
 * into the cell of their boundary's level and paired there if it holds
 * both sides).  The pairs are those of the level-by-level relaxation of
 * the paper (docs/fusion.md, BC), which processes exactly the levels at
 * which some cell holds both sides: the iterations reported are those
 * levels.  Returns the number of unpaired XUs left, their positions
 * first in pos[]. */
static size_t pair_levels(bc_grid_t *g, bc_prob_t *pb, uint64_t *tag, const uint8_t *lv,
                          size_t ne, unsigned *iterations)
{
    /* The order keys in Morton order, gathered once (the coordinates'
     * space is free after the sort): a cell's members are then read in
     * sequence instead of at random places, at every level they take part
     * in. */
    uint64_t *mk = g->kmax >= 1 ? g->rec : NULL;
    for (size_t j = 0; mk && j < ne; j++) {
        if (j + 16 < ne) {
            uint64_t t = tag[j + 16];
            unsigned side = (t & TAG_SIDE) ? 1 : 0;
            size_t x = (size_t)(t & TAG_INDEX);
            if (pb->rank[side])
                __builtin_prefetch(&pb->rank[side][x]);
            if (pb->base[side])
                __builtin_prefetch(&pb->base[side][x * pb->stride[side]]);
        }
        uint64_t t = tag[j];
        fz_key_t key = key_of(pb, (t & TAG_SIDE) ? 1 : 0, (uint32_t)(t & TAG_INDEX));
        mk[2 * j] = key.k1;
        mk[2 * j + 1] = key.k2;
    }
    cell_stack_t cs = {g->idx, g->key, 0, 0, 0};
    for (size_t j = 0; j < ne; j++) {
        unsigned b = j ? lv[j] : 0;
        while (cs.n >= 2 && FR_LEVEL(cs.frame[cs.n - 1]) < b)
            close_level(g, pb, tag, mk, &cs);
        cs.frame[cs.n++] = frame_of(cs.top, sides_of(tag[j]), b);
        cs.pos[cs.top++] = (uint32_t)j;
    }
    while (cs.n >= 2)
        close_level(g, pb, tag, mk, &cs);
    *iterations = (unsigned)__builtin_popcountll(cs.levels);
    return cs.top;
}

int bc_grid_solve(bc_grid_t *g, bc_prob_t *pb)
{
    size_t k = pb->k, n = pb->np + pb->nc, w = k + 1;
    pb->n_pairs = 0;
    pb->pair_p = g->pp;
    pb->pair_c = g->pc;
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
    const uint64_t *rows = g->rec;
    for (size_t i = 0; i < n; i++)
        for (size_t e = 0; e < k; e++) {
            double v = bc_get(&rows[i * w + e]);
            if (isnan(v))
                continue;
            if (v < mn[e])
                mn[e] = v;
            if (v > mx[e])
                mx[e] = v;
            /* doubles from 2^52 up are all integers */
            whole[e] &= fabs(v) >= 4503599627370496.0 || (double)(int64_t)v == v;
        }
    /* tag, key and scr are free until the coordinates are made */
    double dmax = grid_dmax(pb, rows, mn, mx, whole, (double *)g->tag, g->key, g->scr);
    if (dmax < 0)
        return OMPF_ENOMEM;
    pb->dmax = dmax;
    uint64_t cmax = (uint64_t)ceil(dmax) - 1;
    /* Each row becomes its coordinates and tag in place; the rows of XUs
     * with a missing value are dropped (ne <= i: row ne is read before it
     * is written). */
    size_t ne = 0, na = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t t = i < pb->np ? (uint64_t)i : TAG_SIDE | (uint64_t)(i - pb->np);
        const uint64_t *src = g->rec + i * w;
        int missing = 0;
        for (size_t e = 0; e < k; e++)
            missing |= isnan(bc_get(&src[e]));
        if (missing) {
            g->tag[g->cap - ++na] = t;
            continue;
        }
        uint64_t *r = g->rec + (ne++) * w;
        for (size_t e = 0; e < k; e++) {
            double v = bc_get(&src[e]), range = mx[e] - mn[e];
            if (!(range > 0)) {
                r[e] = 0;
                continue;
            }
            double x = floor((v - mn[e]) / range * dmax);
            r[e] = x <= 0 ? 0 : (x >= (double)cmax ? cmax : (uint64_t)x);
        }
        r[k] = t;
    }
    int rc = sort_morton(g, ne, k, cmax);
    if (rc)
        return rc;
    uint64_t *tag = g->tag;
    unsigned iters;
    size_t left = pair_levels(g, pb, tag, g->lv, ne, &iters);
    pb->iterations += iters;
    /* the unpaired XUs' tags first, in Morton order (positions ascend) */
    for (size_t i = 0; i < left; i++)
        tag[i] = tag[g->idx[i]];
    ne = left;
    if (na) {
        /* Missing overlapping values: one last cell with all that is left. */
        size_t rp = 0, rcur = 0;
        memmove(tag + ne, tag + g->cap - na, na * sizeof *tag);
        for (size_t j = 0; j < ne + na; j++)
            (tag[j] & TAG_SIDE) ? rcur++ : rp++;
        if (rp && rcur) {
            for (size_t j = 0; j < ne + na; j++)
                g->idx[j] = (uint32_t)j;
            pair_members(g, pb, tag, g->idx, ne + na, NULL);
            pb->iterations++;
        }
    }
    return 0;
}
