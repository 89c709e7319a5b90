/* Shared between the files of libompfeval; not a public interface. */
#ifndef OMPF_EVALUATE_INTERNAL_H
#define OMPF_EVALUATE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ompfuse/evaluate.h"
#include "ompfuse/progress.h"

/* Ranks of x (ties: average rank), 1-based. */
int ompf__ranks(const double *x, size_t n, double *rank);
/* Pearson correlation; 0 when a variable is constant, NaN for n < 2. */
double ompf__pearson(const double *x, const double *y, size_t n);

/* Runs fn(ctx, i, thread) for i < n on up to `threads` threads (0: online
 * CPUs); thread < threads.  Stops at the first non-zero return, which it
 * returns.  progress (may be NULL): advanced by one per item done. */
typedef int (*ompf__work_fn)(void *ctx, size_t i, size_t thread);
int ompf__parallel_for(size_t n, unsigned threads, ompf__work_fn fn,
                       void *ctx, ompf_progress_t *progress);
unsigned ompf__default_threads(void);

/* ---- binning once per XU (hist.c) ---------------------------------------
 * An axis is one event on one dimension of a grid.  Its values are placed
 * once per XU (bin and coordinate), and every pair's histogram is then a
 * gather of two placed axes, not a recomputation per pair. */

/* Bin of a missing value. */
#define OMPF__NOBIN UINT16_MAX

/* Bin and coordinate of v on axis d of g, exactly as ompf_hist2d_build
 * places it. */
static inline unsigned ompf__place(const ompf_grid_t *g, int d, double v,
                                   double *coord)
{
    double c = (v - g->lo[d]) / g->width[d];
    *coord = c;
    if (v < g->lo[d])
        return 0;
    if (v > g->hi[d])
        return g->n + 1;
    /* 0 <= c <= n here: truncation is floor; max -> bin n */
    return c >= (double)g->n ? g->n : (unsigned)(c > 0 ? c : 0) + 1;
}

/* Places row[i][col] (i < nxu) on axis 0 of g (missing: OMPF__NOBIN).
 * With grids (per type), XU i is placed on grids[type[i]] instead; XUs of
 * no type (OMPF_NONE32) or of a type whose grid is NULL get OMPF__NOBIN. */
void ompf__axis_place(const ompf_grid_t *g, const ompf_grid_t *const *grids,
                      const uint32_t *type, const double *const *row,
                      size_t col, size_t nxu, uint16_t *bin, double *coord);

/* Two placed axes (a, b) of the same XUs. */
typedef struct ompf__placed {
    const uint16_t *ba, *bb;
    const double *ca, *cb;
} ompf__placed_t;

/* A pair's histograms while a profile is binned chunk by chunk of XUs:
 * slot 0 all XUs, slot 1 + s the XUs of type slot s.  Counts and
 * coordinate sums of every bin, added in XU order, so the histograms are
 * those of ompf_hist2d_build value for value (same bins, centroids and
 * summation order). */
typedef struct ompf__hacc {
    size_t side, nb, nslots;
    int64_t *cnt;
    double *sum;
} ompf__hacc_t;

/* Bytes held by an accumulator of nslots slots on an n-interval grid. */
size_t ompf__hacc_bytes(unsigned n, size_t nslots);
int ompf__hacc_init(ompf__hacc_t *a, unsigned n, size_t nslots);
/* Adds XUs i < nxu: all into slot 0; with typed (non-NULL), XU i also
 * into slot 1 + slot[type[i]] unless its type is OMPF_NONE32 or that slot
 * OMPF_NONE32. */
void ompf__hacc_add(ompf__hacc_t *a, const ompf__placed_t *all,
                    const ompf__placed_t *typed, size_t nxu,
                    const uint32_t *type, const uint32_t *slot);
/* ompf__hacc_add of four pairs without types, and of two pairs with types
 * (same grid size), in one loop: XUs falling in the same bin make a chain
 * of dependent adds per pair, and the pairs' chains overlap. */
void ompf__hacc_add4(ompf__hacc_t *const *a, const ompf__placed_t *p,
                     size_t nxu);
void ompf__hacc_add2t(ompf__hacc_t *const *a, const ompf__placed_t *all,
                      const ompf__placed_t *typed, size_t nxu,
                      const uint32_t *type, const uint32_t *const *slot);
/* The histograms (h[slot], nslots of them); xus[slot]: the XUs offered to
 * the slot (binned or left out: all XUs for slot 0, those of the slot's
 * type for the others).  a is freed either way. */
int ompf__hacc_finish(ompf__hacc_t *a, const uint64_t *xus, ompf_hist2d_t *h);
void ompf__hacc_free(ompf__hacc_t *a);

#endif
