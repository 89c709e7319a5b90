/*
 * Static k-d tree, implicit layout: the points of a node's range
 * [lo, hi) are partitioned around mid = (lo + hi) / 2 on the dimension of
 * largest spread, recursively; leaves of up to LEAF points are scanned.
 * Three-way partitioning keeps profiles with many equal values (counts of
 * zero page faults, say) at O(n log n).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kdtree.h"

#define LEAF 8

struct ompf_kd {
    size_t n;
    unsigned dim, stride;
    double *pts;
    uint32_t *ids;
    uint8_t *sdim; /* split dimension at each mid */
};

static void swap_pt(ompf_kd_t *t, size_t a, size_t b)
{
    if (a == b)
        return;
    double *pa = t->pts + a * t->stride, *pb = t->pts + b * t->stride;
    for (unsigned d = 0; d < t->stride; d++) {
        double x = pa[d];
        pa[d] = pb[d];
        pb[d] = x;
    }
    uint32_t i = t->ids[a];
    t->ids[a] = t->ids[b];
    t->ids[b] = i;
}

static double coord(const ompf_kd_t *t, size_t i, unsigned d)
{
    return t->pts[i * t->stride + d];
}

/* Puts the element of rank k (within [lo, hi)) on dimension d at k. */
static void select_k(ompf_kd_t *t, size_t lo, size_t hi, size_t k, unsigned d)
{
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        /* median of three as pivot */
        double a = coord(t, lo, d), b = coord(t, mid, d), c = coord(t, hi - 1, d);
        double pv = (a < b) ? ((b < c) ? b : (a < c ? c : a))
                            : ((a < c) ? a : (b < c ? c : b));
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            double x = coord(t, i, d);
            if (x < pv)
                swap_pt(t, lt++, i++);
            else if (x > pv)
                swap_pt(t, i, --gt);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return;
    }
}

static void build(ompf_kd_t *t, size_t lo, size_t hi)
{
    if (hi - lo <= LEAF)
        return;
    unsigned best = 0;
    double spread = -1.0;
    for (unsigned d = 0; d < t->dim; d++) {
        double mn = INFINITY, mx = -INFINITY;
        for (size_t i = lo; i < hi; i++) {
            double x = coord(t, i, d);
            if (x < mn)
                mn = x;
            if (x > mx)
                mx = x;
        }
        if (mx - mn > spread) {
            spread = mx - mn;
            best = d;
        }
    }
    size_t mid = lo + (hi - lo) / 2;
    select_k(t, lo, hi, mid, best);
    t->sdim[mid] = (uint8_t)best;
    build(t, lo, mid);
    build(t, mid + 1, hi);
}

ompf_kd_t *ompf_kd_build(const double *pts, const uint32_t *ids, size_t n,
                         unsigned dim, unsigned stride)
{
    if (dim == 0 || dim > 255 || stride < dim)
        return NULL;
    ompf_kd_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->n = n;
    t->dim = dim;
    t->stride = stride;
    t->pts = malloc((n ? n : 1) * stride * sizeof(double));
    t->ids = malloc((n ? n : 1) * sizeof(uint32_t));
    t->sdim = calloc(n ? n : 1, 1);
    if (!t->pts || !t->ids || !t->sdim) {
        ompf_kd_free(t);
        return NULL;
    }
    if (n) {
        memcpy(t->pts, pts, n * stride * sizeof(double));
        memcpy(t->ids, ids, n * sizeof(uint32_t));
    }
    build(t, 0, n);
    return t;
}

void ompf_kd_free(ompf_kd_t *t)
{
    if (!t)
        return;
    free(t->pts);
    free(t->ids);
    free(t->sdim);
    free(t);
}

size_t ompf_kd_size(const ompf_kd_t *t)
{
    return t ? t->n : 0;
}

typedef struct {
    size_t k, have;
    double *d;
    uint32_t *id;
} heap_t; /* sorted insertion list: k is small */

static int worse(double da, uint32_t ia, double db, uint32_t ib)
{
    return da > db || (da == db && ia > ib);
}

static void offer(heap_t *h, double d, uint32_t id)
{
    if (h->have == h->k && !worse(h->d[h->have - 1], h->id[h->have - 1], d, id))
        return;
    size_t i = h->have < h->k ? h->have++ : h->k - 1;
    while (i > 0 && worse(h->d[i - 1], h->id[i - 1], d, id)) {
        h->d[i] = h->d[i - 1];
        h->id[i] = h->id[i - 1];
        i--;
    }
    h->d[i] = d;
    h->id[i] = id;
}

static double dist2(const ompf_kd_t *t, size_t i, const double *q)
{
    const double *p = t->pts + i * t->stride;
    double s = 0.0;
    for (unsigned d = 0; d < t->dim; d++) {
        double x = p[d] - q[d];
        s += x * x;
    }
    return s;
}

static void search(const ompf_kd_t *t, size_t lo, size_t hi, const double *q,
                   heap_t *h)
{
    if (hi - lo <= LEAF) {
        for (size_t i = lo; i < hi; i++)
            offer(h, dist2(t, i, q), (uint32_t)i);
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    unsigned d = t->sdim[mid];
    double diff = q[d] - coord(t, mid, d);
    offer(h, dist2(t, mid, q), (uint32_t)mid);
    /* The far side is visited only if it can hold a strictly nearer
     * point: among points at exactly the k-th distance, the ones found
     * first are kept.  (Visiting ties too would make a query O(n) when
     * many XUs share the same values, e.g. zero page faults.) */
    if (diff < 0) {
        search(t, lo, mid, q, h);
        if (h->have < h->k || diff * diff < h->d[h->have - 1])
            search(t, mid + 1, hi, q, h);
    } else {
        search(t, mid + 1, hi, q, h);
        if (h->have < h->k || diff * diff < h->d[h->have - 1])
            search(t, lo, mid, q, h);
    }
}

const double *ompf_kd_row(const ompf_kd_t *t, uint32_t pos)
{
    return t->pts + (size_t)pos * t->stride;
}

uint32_t ompf_kd_id(const ompf_kd_t *t, uint32_t pos)
{
    return t->ids[pos];
}

size_t ompf_kd_knn(const ompf_kd_t *t, const double *q, size_t k,
                   double *dist2_out, uint32_t *pos)
{
    if (!t || k == 0 || t->n == 0)
        return 0;
    heap_t h = {k, 0, dist2_out, pos};
    search(t, 0, t->n, q, &h);
    return h.have;
}
