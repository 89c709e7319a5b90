/* TMD histograms: (n+2)^2 bins, reduced to the non-empty ones with the
 * centroid of their XUs in interval units (SPEC §7). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    /* Hot loop (10^5 XUs x pairs x profiles): one division per value,
     * the bin derived from the coordinate exactly as ompf_grid_bin does. */
    const double lo0 = g->lo[0], lo1 = g->lo[1], hi0 = g->hi[0], hi1 = g->hi[1];
    const double w0 = g->width[0], w1 = g->width[1];
    const double nn = (double)g->n;
    for (size_t i = 0; i < nxu; i++) {
        if (type && type[i] != want_type)
            continue;
        double a = va[i], b = vb[i];
        if (isnan(a) || isnan(b)) {
            h->left_out++;
            continue;
        }
        double ca = (a - lo0) / w0, cb = (b - lo1) / w1;
        size_t ka, kb;
        if (a < lo0)
            ka = 0;
        else if (a > hi0)
            ka = g->n + 1;
        else /* 0 <= ca <= n here: truncation is floor; max -> bin n */
            ka = ca >= nn ? g->n : (size_t)(ca > 0 ? ca : 0) + 1;
        if (b < lo1)
            kb = 0;
        else if (b > hi1)
            kb = g->n + 1;
        else
            kb = cb >= nn ? g->n : (size_t)(cb > 0 ? cb : 0) + 1;
        size_t k = ka * side + kb;
        cnt[k]++;
        sum[2 * k] += ca;
        sum[2 * k + 1] += cb;
        h->total++;
    }
    size_t used = 0;
    for (size_t k = 0; k < nb; k++)
        used += cnt[k] > 0;
    h->count = malloc((used ? used : 1) * sizeof *h->count);
    h->pos = malloc((used ? used : 1) * 2 * sizeof *h->pos);
    if (!h->count || !h->pos) {
        free(cnt);
        free(sum);
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
    free(cnt);
    free(sum);
    return 0;
}
