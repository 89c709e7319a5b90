/* The grid of Behaviour Clustering (bc_grid.c), used by bc.c: one
 * side-pair problem per type and step.  Internal, not installed. */
#ifndef OMPF_FUSION_BC_GRID_H
#define OMPF_FUSION_BC_GRID_H

#include "fz.h"

/* np prev and nc cur XUs with k overlapping values each (row-major, NaN =
 * missing) and order keys (k1, k2: unique within a side; idx unused);
 * bc_grid_solve writes the pairs. */
typedef struct bc_prob {
    size_t np, nc, k;
    const double *P, *C;
    const fz_key_t *pkey, *ckey;
    /* optional, per value: prev's non-missing values already sorted
     * (psorted[e] NULL: the grid gathers and sorts them) */
    const double *const *psorted;
    const size_t *npsorted;
    uint32_t *pair_p, *pair_c; /* out: min(np, nc) capacity */
    size_t n_pairs;
    uint32_t iterations;
    double dmax;
} bc_prob_t;

/* Scratch for problems of at most maxn XUs per side and kmax values per
 * XU, reused step after step (so the pages are touched once, not once per
 * step).  NULL when out of memory. */
typedef struct bc_grid bc_grid_t;
bc_grid_t *bc_grid_create(size_t maxn, size_t kmax);
void bc_grid_destroy(bc_grid_t *g);
int bc_grid_solve(bc_grid_t *g, bc_prob_t *pb);

#endif
