/* Selection: quantiles of 10^6-10^7 values in O(n) rather than by
 * sorting (the analysis' statistics, the report's scatter axes). */
#ifndef OMPF_SELECT_H
#define OMPF_SELECT_H

#include <stddef.h>

/* Places the k-th smallest of v[0..n) (k < n) at v[k], smaller values
 * before it and larger ones after. */
void ompf_select_k(double *v, size_t n, size_t k);

#endif
