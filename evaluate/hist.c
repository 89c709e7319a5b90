/* TMD histograms: (n+2)^2 bins, reduced to the non-empty ones with the
 * centroid of their XUs in interval units (docs/semantics.md,
 * Evaluation). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evaluate_internal.h"
#include "ompfuse/evaluate.h"

void ompf_grid_init(ompf_grid_t *g, unsigned n, double lo_a, double hi_a,
                    double lo_b, double hi_b)
{
    g->n = n ? n : 10;
    g->lo[0] = lo_a;
    g->hi[0] = hi_a;
    g->lo[1] = lo_b;
    g->hi[1] = hi_b;
    for (int d = 0; d < 2; d++) {
        double w = (g->hi[d] - g->lo[d]) / g->n;
        /* Zero-width range (an event constant in every repeat): 1 count. */
        g->width[d] = w > 0 ? w : 1.0;
    }
}

double ompf_grid_coord(const ompf_grid_t *g, int d, double v)
{
    return (v - g->lo[d]) / g->width[d];
}

unsigned ompf_grid_bin(const ompf_grid_t *g, int d, double v)
{
    if (v < g->lo[d])
        return 0;
    if (v > g->hi[d])
        return g->n + 1;
    double k = floor((v - g->lo[d]) / g->width[d]);
    /* v == hi (and round-off just below it) belongs to the last inner bin */
    if (k >= g->n)
        k = g->n - 1;
    if (k < 0)
        k = 0;
    return (unsigned)k + 1;
}

void ompf_hist2d_free(ompf_hist2d_t *h)
{
    if (!h)
        return;
    free(h->count);
    free(h->pos);
    memset(h, 0, sizeof *h);
}

/* Reduces counts and coordinate sums of nb bins to the non-empty bins. */
static int compact(const int64_t *cnt, const double *sum, size_t nb,
                   ompf_hist2d_t *h)
{
    size_t used = 0;
    for (size_t k = 0; k < nb; k++)
        used += cnt[k] > 0;
    h->count = malloc((used ? used : 1) * sizeof *h->count);
    h->pos = malloc((used ? used : 1) * 2 * sizeof *h->pos);
    if (!h->count || !h->pos) {
        ompf_hist2d_free(h);
        return OMPF_ENOMEM;
    }
    for (size_t k = 0; k < nb; k++) {
        if (!cnt[k])
            continue;
        h->count[h->nbins] = cnt[k];
        h->pos[2 * h->nbins] = sum[2 * k] / (double)cnt[k];
        h->pos[2 * h->nbins + 1] = sum[2 * k + 1] / (double)cnt[k];
        h->nbins++;
    }
    return 0;
}

int ompf_hist2d_build(const ompf_grid_t *g, const double *va,
                      const double *vb, size_t nxu, const uint32_t *type,
                      uint32_t want_type, ompf_hist2d_t *h)
{
    memset(h, 0, sizeof *h);
    size_t side = g->n + 2, nb = side * side;
    int64_t *cnt = calloc(nb, sizeof *cnt);
    double *sum = calloc(2 * nb, sizeof *sum);
    if (!cnt || !sum) {
        free(cnt);
        free(sum);
        return OMPF_ENOMEM;
    }
    for (size_t i = 0; i < nxu; i++) {
        if (type && type[i] != want_type)
            continue;
        double a = va[i], b = vb[i];
        if (isnan(a) || isnan(b)) {
            h->left_out++;
            continue;
        }
        double ca, cb;
        size_t k = ompf__place(g, 0, a, &ca) * side + ompf__place(g, 1, b, &cb);
        cnt[k]++;
        sum[2 * k] += ca;
        sum[2 * k + 1] += cb;
        h->total++;
    }
    int rc = compact(cnt, sum, nb, h);
    free(cnt);
    free(sum);
    return rc;
}

void ompf__axis_place(const ompf_grid_t *g, const ompf_grid_t *const *grids,
                      const uint32_t *type, const double *const *row,
                      size_t col, size_t nxu, uint16_t *bin, double *coord)
{
    for (size_t i = 0; i < nxu; i++) {
        const ompf_grid_t *gi = g;
        if (grids)
            gi = type[i] == OMPF_NONE32 ? NULL : grids[type[i]];
        double v = row[i][col];
        if (!gi || isnan(v)) {
            bin[i] = OMPF__NOBIN;
            coord[i] = 0;
            continue;
        }
        bin[i] = (uint16_t)ompf__place(gi, 0, v, &coord[i]);
    }
}

/* One XU into the bins from `base` of an accumulator; a missing value
 * (OMPF__NOBIN) leaves it out.  No running totals: they would make every
 * XU wait for the previous one's store; ompf__hacc_finish counts them. */
static inline void acc_xu(int64_t *cnt, double *sum, size_t side,
                          size_t base, uint16_t ka, uint16_t kb, double ca,
                          double cb)
{
    if (ka == OMPF__NOBIN || kb == OMPF__NOBIN)
        return;
    size_t k = base + (size_t)ka * side + kb;
    cnt[k]++;
    sum[2 * k] += ca;
    sum[2 * k + 1] += cb;
}

size_t ompf__hacc_bytes(unsigned n, size_t nslots)
{
    size_t side = (size_t)n + 2;
    return nslots * side * side * (sizeof(int64_t) + 2 * sizeof(double));
}

int ompf__hacc_init(ompf__hacc_t *a, unsigned n, size_t nslots)
{
    memset(a, 0, sizeof *a);
    a->side = (size_t)n + 2;
    a->nb = a->side * a->side;
    a->nslots = nslots;
    a->cnt = calloc(nslots * a->nb, sizeof *a->cnt);
    a->sum = calloc(2 * nslots * a->nb, sizeof *a->sum);
    if (!a->cnt || !a->sum) {
        ompf__hacc_free(a);
        return OMPF_ENOMEM;
    }
    return 0;
}

/* XU i's type slot (bins from 1 + slot) or 0 when it has none. */
static inline size_t type_slot(const uint32_t *type, const uint32_t *slot,
                               size_t i)
{
    if (type[i] == OMPF_NONE32 || slot[type[i]] == OMPF_NONE32)
        return 0;
    return 1 + (size_t)slot[type[i]];
}

void ompf__hacc_add(ompf__hacc_t *a, const ompf__placed_t *all,
                    const ompf__placed_t *typed, size_t nxu,
                    const uint32_t *type, const uint32_t *slot)
{
    int64_t *cnt = a->cnt;
    double *sum = a->sum;
    size_t side = a->side, nb = a->nb;
    for (size_t i = 0; i < nxu; i++) {
        acc_xu(cnt, sum, side, 0, all->ba[i], all->bb[i], all->ca[i],
               all->cb[i]);
        size_t s = typed ? type_slot(type, slot, i) : 0;
        if (s)
            acc_xu(cnt, sum, side, s * nb, typed->ba[i], typed->bb[i],
                   typed->ca[i], typed->cb[i]);
    }
}

void ompf__hacc_add4(ompf__hacc_t *const *a, const ompf__placed_t *p,
                     size_t nxu)
{
    size_t side = a[0]->side;
    int64_t *c0 = a[0]->cnt, *c1 = a[1]->cnt, *c2 = a[2]->cnt,
            *c3 = a[3]->cnt;
    double *s0 = a[0]->sum, *s1 = a[1]->sum, *s2 = a[2]->sum,
           *s3 = a[3]->sum;
    for (size_t i = 0; i < nxu; i++) {
        acc_xu(c0, s0, side, 0, p[0].ba[i], p[0].bb[i], p[0].ca[i],
               p[0].cb[i]);
        acc_xu(c1, s1, side, 0, p[1].ba[i], p[1].bb[i], p[1].ca[i],
               p[1].cb[i]);
        acc_xu(c2, s2, side, 0, p[2].ba[i], p[2].bb[i], p[2].ca[i],
               p[2].cb[i]);
        acc_xu(c3, s3, side, 0, p[3].ba[i], p[3].bb[i], p[3].ca[i],
               p[3].cb[i]);
    }
}

void ompf__hacc_add2t(ompf__hacc_t *const *a, const ompf__placed_t *all,
                      const ompf__placed_t *typed, size_t nxu,
                      const uint32_t *type, const uint32_t *const *slot)
{
    size_t side = a[0]->side, nb = a[0]->nb;
    int64_t *c0 = a[0]->cnt, *c1 = a[1]->cnt;
    double *s0 = a[0]->sum, *s1 = a[1]->sum;
    for (size_t i = 0; i < nxu; i++) {
        acc_xu(c0, s0, side, 0, all[0].ba[i], all[0].bb[i], all[0].ca[i],
               all[0].cb[i]);
        acc_xu(c1, s1, side, 0, all[1].ba[i], all[1].bb[i], all[1].ca[i],
               all[1].cb[i]);
        size_t t0 = type_slot(type, slot[0], i);
        size_t t1 = type_slot(type, slot[1], i);
        if (t0)
            acc_xu(c0, s0, side, t0 * nb, typed[0].ba[i], typed[0].bb[i],
                   typed[0].ca[i], typed[0].cb[i]);
        if (t1)
            acc_xu(c1, s1, side, t1 * nb, typed[1].ba[i], typed[1].bb[i],
                   typed[1].ca[i], typed[1].cb[i]);
    }
}

int ompf__hacc_finish(ompf__hacc_t *a, const uint64_t *xus, ompf_hist2d_t *h)
{
    int rc = 0;
    for (size_t s = 0; s < a->nslots; s++) {
        const int64_t *cnt = a->cnt + s * a->nb;
        memset(&h[s], 0, sizeof h[s]);
        for (size_t k = 0; k < a->nb; k++)
            h[s].total += cnt[k];
        h[s].left_out = xus[s] - (uint64_t)h[s].total;
        if (!rc)
            rc = compact(cnt, a->sum + 2 * s * a->nb, a->nb, &h[s]);
    }
    ompf__hacc_free(a);
    return rc;
}

void ompf__hacc_free(ompf__hacc_t *a)
{
    free(a->cnt);
    free(a->sum);
    memset(a, 0, sizeof *a);
}
