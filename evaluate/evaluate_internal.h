/* Shared between the files of libompfeval; not a public interface. */
#ifndef OMPF_EVALUATE_INTERNAL_H
#define OMPF_EVALUATE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ompfuse/evaluate.h"

/* Ranks of x (ties: average rank), 1-based. */
int ompf__ranks(const double *x, size_t n, double *rank);
/* Pearson correlation; 0 when a variable is constant, NaN for n < 2. */
double ompf__pearson(const double *x, const double *y, size_t n);

/* Runs fn(ctx, i, thread) for i < n on up to `threads` threads (0: online
 * CPUs); thread < threads.  Stops at the first non-zero return, which it
 * returns.  progress: "\r<label>: done/n pairs" on stderr. */
typedef int (*ompf__work_fn)(void *ctx, size_t i, size_t thread);
int ompf__parallel_for(size_t n, unsigned threads, ompf__work_fn fn,
                       void *ctx, const char *label, int progress);
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

/* Places v[i < nxu] on axis 0 of g (missing: OMPF__NOBIN).  With grids
 * (per type), XU i is placed on grids[type[i]] instead; XUs of no type
 * (OMPF_NONE32) or of a type whose grid is NULL get OMPF__NOBIN. */
void ompf__axis_place(const ompf_grid_t *g, const ompf_grid_t *const *grids,
                      const uint32_t *type, const double *v, size_t nxu,
                      uint16_t *bin, double *coord);

/* Histograms of placed axes (a, b): with type NULL, all XUs into h[0];
 * otherwise XU i into h[slot[type[i]]] (skipped when its type is
 * OMPF_NONE32 or the slot OMPF_NONE32), all slots in one pass over the
 * XUs.  Same bins, centroids and summation order as ompf_hist2d_build. */
int ompf__hist2d_placed(unsigned n, const uint16_t *ba, const double *ca,
                        const uint16_t *bb, const double *cb, size_t nxu,
                        const uint32_t *type, const uint32_t *slot,
                        size_t nslots, ompf_hist2d_t *h);

/* Both at once (per type): the all-XU histogram of the axes `all` into
 * *hall and the types' histograms of the per-type axes `typed`, in one
 * pass over the XUs. */
typedef struct ompf__placed {
    const uint16_t *ba, *bb;
    const double *ca, *cb;
} ompf__placed_t;
int ompf__hist2d_placed_all_types(unsigned n, const ompf__placed_t *all,
                                  const ompf__placed_t *typed, size_t nxu,
                                  const uint32_t *type, const uint32_t *slot,
                                  size_t nslots, ompf_hist2d_t *hall,
                                  ompf_hist2d_t *h);

#endif
