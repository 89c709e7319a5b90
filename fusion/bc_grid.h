/* The grid of Behaviour Clustering (bc_grid.c), used by bc.c: one
 * side-pair problem per type and step.  Internal, not installed. */
#ifndef OMPF_FUSION_BC_GRID_H
#define OMPF_FUSION_BC_GRID_H

#include <string.h>

#include "fz.h"

typedef struct bc_grid bc_grid_t;

/* np prev and nc cur XUs with k overlapping values each, written by the
 * caller into the grid's rows (bc_grid_rows) before bc_grid_solve, which
 * writes the pairs.
 *
 * Order keys (unique within a side) are not stored per XU: XU i of side s
 * (0 prev, 1 cur) has k1 = rank[s][i], or without ranks the splitmix
 * draw number i + 1 (prev) or np + i + 1 (cur) of the stream seed (what
 * fz_rand(&seed) would give, drawn for prev then cur), and
 * k2 = base[s][i * stride[s]]. */
typedef struct bc_prob {
    size_t np, nc, k;
    const uint32_t *rank[2];   /* NULL: random order keys from seed */
    uint64_t seed;
    /* XU x of a side: base[side][x * stride[side]], or first[side] + x
     * when base[side] is NULL (a run whose XUs come in type order) */
    const uint32_t *base[2];
    size_t stride[2];
    uint32_t first[2];
    /* optional, per value: prev's non-missing values already sorted
     * (psorted[e] NULL: the grid gathers and sorts them) */
    const double *const *psorted;
    const size_t *npsorted;
    /* out: the pairs (prev index, cur index), in the grid's memory: valid
     * until the next bc_grid_solve */
    const uint32_t *pair_p, *pair_c;
    size_t n_pairs;
    uint32_t iterations;
    double dmax;
} bc_prob_t;

/* The XUs' values, row after row (prev's np rows, then cur's nc), BC_ROW(k)
 * slots a row (the last is the grid's), each value stored with
 * bc_put; NaN = missing.  Valid until the next bc_grid_solve. */
#define BC_ROW(k) ((k) + 1)
uint64_t *bc_grid_rows(bc_grid_t *g);
/* maxn entries of the grid's memory that are free from the end of one
 * bc_grid_solve to the start of the next (the caller's scratch then). */
uint32_t *bc_grid_spare(bc_grid_t *g);

static inline void bc_put(uint64_t *slot, double v)
{
    memcpy(slot, &v, sizeof v);
}

static inline double bc_get(const uint64_t *slot)
{
    double v;
    memcpy(&v, slot, sizeof v);
    return v;
}

/* Scratch for problems of at most maxn XUs per side and kmax values per
 * XU, reused step after step (so the pages are touched once, not once per
 * step).  NULL when out of memory. */
bc_grid_t *bc_grid_create(size_t maxn, size_t kmax);
void bc_grid_destroy(bc_grid_t *g);
int bc_grid_solve(bc_grid_t *g, bc_prob_t *pb);

#endif
