/* The grid of Behaviour Clustering (bc_grid.c), used by bc.c: one
 * side-pair problem per type and step.  Internal, not installed. */
#ifndef OMPF_FUSION_BC_GRID_H
#define OMPF_FUSION_BC_GRID_H

#include "fz.h"

typedef struct bc_grid bc_grid_t;

/* One overlapping value of one side, read where the runs hold it (the
 * grid keeps no copy): XU x's value is v[i * vstride] with i its index in
 * its run, map[x * mstride], or first + x when map is NULL.  NaN is a
 * missing value. */
typedef struct bc_col {
    const double *v; /* the run's values, from the event's column */
    size_t vstride;  /* the run's events per XU */
    const uint32_t *map;
    size_t mstride;
    uint32_t first;
} bc_col_t;

/* np prev and nc cur XUs with k overlapping values each.
 *
 * Order keys (unique within a side) are not stored per XU: XU x of side s
 * (0 prev, 1 cur) has k1 = urank[lab[s][x]] (BC), or without urank the
 * splitmix draw number x + 1 (prev) or np + x + 1 (cur) of the stream
 * seed (what fz_rand(&seed) would give, drawn for prev then cur:
 * BC-unlabeled), and k2 = base[s][x * stride[s]], or first[s] + x when
 * base[s] is NULL (a run whose XUs come in type order).  Members of a
 * cell are paired in (k1, k2) order. */
typedef struct bc_prob {
    size_t np, nc, k;
    const bc_col_t *col[2];  /* k columns per side */
    const uint32_t *urank;   /* NULL: random order keys from seed */
    const uint32_t *lab[2];
    uint64_t seed;
    const uint32_t *base[2];
    size_t stride[2];
    uint32_t first[2];
    /* optional, per value: prev's non-missing values already sorted
     * (psorted[e] NULL: the grid gathers and sorts them) */
    const double *const *psorted;
    const size_t *npsorted;
    /* out: for each prev XU x that is paired, partner[x * pstride] = its
     * cur XU; the others' entries are not written */
    uint32_t *partner;
    size_t pstride;
    size_t n_pairs;
    uint32_t iterations;
    double dmax;
} bc_prob_t;

/* Scratch for problems of at most maxn XUs per side and kmax values per
 * XU, reused step after step (so the pages are touched once, not once per
 * step): 13 bytes per XU of both sides, and a few that grow with the
 * problem's shape (open cells, ties of long Morton keys).  The Morton sort
 * of up to max(scratch_keys, BC_SCRATCH_KEYS) XUs is the radix sort with
 * scratch (12 bytes an XU), of more in place.  With copy_values the grid
 * also holds each XU's values (8 bytes a value), read once from the runs
 * instead of once per pass.  NULL when out of memory. */
bc_grid_t *bc_grid_create(size_t maxn, size_t kmax, size_t scratch_keys, int copy_values);
void bc_grid_destroy(bc_grid_t *g);
int bc_grid_solve(bc_grid_t *g, bc_prob_t *pb);
/* Tests: sorts of more than n Morton keys go in place (the default limit
 * is BC_SCRATCH_KEYS; it can only be lowered); and room for n open cells
 * to start with (the default 256: a test makes it grow). */
void bc_grid_scratch_limit(bc_grid_t *g, size_t n);
void bc_grid_frames_start(bc_grid_t *g, size_t n);

/* ---- shared by bc_grid.c (values, dmax, Morton order) and bc_cells.c
 * (the pairing) ---------------------------------------------------------- */

/* Up to this many XUs (or more, as bc_grid_create is told) the Morton
 * sort is the stable radix sort with the grid's scratch (12 bytes a key:
 * 3 MB); above, it is in place, which takes about twice as long. */
#define BC_SCRATCH_KEYS (1u << 18)
/* A cell's side with up to this many members is sorted as fz_key_t
 * records (an introsort), a larger one in place by radix. */
#define BC_SMALL_CELL 4096u

struct bc_grid {
    size_t cap, kmax;  /* XUs of both sides, values per XU */
    uint64_t *key;     /* per XU: dmax's sorted values (prev's, then cur's
                          from cap / 2); Morton keys; the stack's order
                          keys */
    uint32_t *row;     /* per XU: dmax's radix scratch (cap / 2 keys);
                          rows in Morton order; the stack's rows; from the
                          end, the rows with a missing value */
    uint8_t *lv;       /* lv[j]: level XU j shares with XU j - 1 */
    uint64_t *skey;    /* the Morton sort's scratch (nscr keys) */
    uint32_t *srow;
    size_t nscr;
    fz_key_t *ck;      /* one side of a small cell */
    uint64_t *frame;   /* open cells (pair_levels) */
    size_t cap_frame;
    uint64_t *grp;     /* ties of Morton keys longer than 64 bits:
                          coordinates and row of each */
    size_t cap_grp;
    uint64_t *coord;   /* one XU's coordinates */
    double *vals;      /* k values per row, or NULL: read from the runs */
    double *mn, *mx;   /* bounds per value */
    uint8_t *whole;    /* per value: all of them integers (counts are) */
};

/* The order key of row r: (k1, k2) of bc_prob_t in one word, which orders
 * as the pair does (k1 < 2^32 with ranks) and is unique within a side (k2
 * is; so are the random draws, a bijection of the row). */
static inline uint64_t bc_order_key(const bc_prob_t *pb, size_t r)
{
    if (!pb->urank) {
        uint64_t s = pb->seed + (uint64_t)r * 0x9e3779b97f4a7c15ull;
        return fz_rand(&s);
    }
    unsigned side = r >= pb->np;
    size_t x = side ? r - pb->np : r;
    uint64_t k2 = pb->base[side] ? pb->base[side][x * pb->stride[side]]
                                 : (uint64_t)pb->first[side] + x;
    return (uint64_t)pb->urank[pb->lab[side][x]] << 32 | k2;
}

/* Hints for order_key(r): far rows' labels and k2 (far), then near rows'
 * ranks, which need the label. */
static inline void bc_prefetch_key(const bc_prob_t *pb, size_t r, int far)
{
    if (!pb->urank)
        return;
    unsigned side = r >= pb->np;
    size_t x = side ? r - pb->np : r;
    if (!far) {
        __builtin_prefetch(&pb->urank[pb->lab[side][x]]);
        return;
    }
    __builtin_prefetch(&pb->lab[side][x]);
    if (pb->base[side])
        __builtin_prefetch(&pb->base[side][x * pb->stride[side]]);
}

/* 1 for a prev row, 2 for a cur row (a cell's side bits). */
static inline unsigned bc_side_bit(const bc_prob_t *pb, uint32_t r)
{
    return r < pb->np ? 1u : 2u;
}

/* Pairs the cell made of entries a .. b - 1 of key[] (order keys) and
 * row[]; the unpaired ones (of one side) are moved to a: returns how
 * many, their side bit in *sides (0 when none). */
size_t bc_pair_cell(bc_grid_t *g, bc_prob_t *pb, size_t a, size_t b, unsigned *sides);
/* Pairs the ne XUs in Morton order (row[], lv[]) level by level; the
 * unpaired ones are left in the first entries of key[] and row[]: returns
 * how many, or OMPF_ENOMEM (negative). */
long bc_pair_levels(bc_grid_t *g, bc_prob_t *pb, size_t ne, unsigned *iterations);

#endif
