/* Small static k-d tree for k-nearest-neighbour queries (internal to
 * libompfhem; used by clean.c). */
#ifndef OMPF_HEM_KDTREE_H
#define OMPF_HEM_KDTREE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ompf_kd ompf_kd_t;

/* Builds a tree over n rows of `stride` doubles (row-major, copied), of
 * which the first dim are the point's coordinates and the rest a payload
 * kept next to it (so that reading neighbours' values stays in cache),
 * with one id each.  Returns NULL when out of memory. */
ompf_kd_t *ompf_kd_build(const double *rows, const uint32_t *ids, size_t n,
                         unsigned dim, unsigned stride);
/* Row of the point at position pos (as returned by ompf_kd_knn). */
const double *ompf_kd_row(const ompf_kd_t *t, uint32_t pos);
void ompf_kd_free(ompf_kd_t *t);
size_t ompf_kd_size(const ompf_kd_t *t);

/* The k nearest points to q (squared Euclidean distance).  Writes up to k
 * (distance, position) pairs in ascending distance and returns how many;
 * ompf_kd_id() and ompf_kd_row() map a position to the point.  Among
 * points tied at the k-th distance, which are returned depends on the
 * tree (deterministic for the same input), not on the ids. */
size_t ompf_kd_knn(const ompf_kd_t *t, const double *q, size_t k,
                   double *dist2, uint32_t *pos);
uint32_t ompf_kd_id(const ompf_kd_t *t, uint32_t pos);

#endif
