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

/* Two placed axes (a, b) of the same XUs: bins 0..n+1 on an n-interval
 * grid, n + 2 for a missing value (or an XU without a grid). */
typedef struct ompf__placed {
    const uint16_t *ba, *bb;
    const double *ca, *cb;
} ompf__placed_t;

/* A pair's histograms while a profile is binned chunk by chunk of XUs:
 * slot 0 all XUs, slot 1 + s the XUs of type slot s.  Counts and
 * coordinate sums of every bin, added in XU order, so the histograms are
 * those of ompf_hist2d_build value for value (same bins, centroids and
 * summation order).  A slot is (side + 1)^2 bins, row pitch side + 1: the
 * last row and column take the XUs with a missing value. */
typedef double ompf__v2d __attribute__((vector_size(16)));
typedef struct ompf__hbin {
    ompf__v2d s; /* coordinate sums (a, b) */
    int64_t n, pad;
} ompf__hbin_t;
typedef struct ompf__hacc {
    size_t side, pitch, stride, nslots; /* stride: bins per slot */
    ompf__hbin_t *bin;
} ompf__hacc_t;

/* Bytes held by an accumulator of nslots slots on an n-interval grid. */
size_t ompf__hacc_bytes(unsigned n, size_t nslots);
int ompf__hacc_init(ompf__hacc_t *a, unsigned n, size_t nslots);
/* Adds XUs i < nxu of `ways` pairs (a[w], all[w]; same grid size) into
 * slot 0; with typed (non-NULL), XU i also into the bins from toff[w][i]
 * (1 + its type slot) x stride, or 0 when it has no type slot (its typed
 * bins are then missing: the trash of slot 0). */
void ompf__hacc_gather(ompf__hacc_t *const *a, const ompf__placed_t *all,
                       const ompf__placed_t *typed,
                       const uint32_t *const *toff, size_t ways, size_t nxu);
/* The histograms (h[slot], nslots of them); xus[slot]: the XUs offered to
 * the slot (binned or left out: all XUs for slot 0, those of the slot's
 * type for the others).  a is freed either way. */
int ompf__hacc_finish(ompf__hacc_t *a, const uint64_t *xus, ompf_hist2d_t *h);
void ompf__hacc_free(ompf__hacc_t *a);

#endif
