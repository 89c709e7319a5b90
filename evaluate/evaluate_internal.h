/* Shared between the files of libompfeval; not a public interface. */
#ifndef OMPF_EVALUATE_INTERNAL_H
#define OMPF_EVALUATE_INTERNAL_H

#include <stddef.h>

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

#endif
