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

/* One XU into bin (ka, kb) of a slot; a missing value (bin `side`) lands
 * in the slot's trash row or column, which ompf__hacc_finish skips, so no
 * branch.  The two coordinate sums are one vector add (each lane is the
 * scalar add), and the count sits in the same cache line.  No running
 * totals: they would make every XU wait for the previous one's store. */
static inline __attribute__((always_inline)) void
acc_xu(ompf__hbin_t *h, size_t pitch, uint16_t ka, uint16_t kb, double ca,
       double cb)
{
    ompf__hbin_t *x = h + (size_t)ka * pitch + kb;
    x->s += (ompf__v2d){ca, cb};
    x->n++;
}

size_t ompf__hacc_bytes(unsigned n, size_t nslots)
{
    size_t pitch = (size_t)n + 3;
    return nslots * pitch * pitch * sizeof(ompf__hbin_t);
}

int ompf__hacc_init(ompf__hacc_t *a, unsigned n, size_t nslots)
{
    memset(a, 0, sizeof *a);
    a->side = (size_t)n + 2;
    a->pitch = a->side + 1;
    a->stride = a->pitch * a->pitch;
    a->nslots = nslots;
    /* whole cache lines: a bin never straddles two */
    size_t bytes = ompf__hacc_bytes(n, nslots);
    bytes = (bytes + 63) / 64 * 64;
    a->bin = aligned_alloc(64, bytes);
    if (!a->bin)
        return OMPF_ENOMEM;
    memset(a->bin, 0, bytes);
    return 0;
}

/* Four pairs gathered in one loop: when they share their first axis (most
 * groups: pairs come event by event), its placed values are loaded once
 * per XU for the four.  Every pointer is a local copy, so that the stores
 * into the bins cannot alias them (the compiler would reload them per
 * XU).  The typed slots are a second loop over the same XUs (measured
 * faster than one loop doing both). */
#define G_LOCALS(w)                                                        \
    ompf__hbin_t *h##w = a[w]->bin;                                        \
    const uint16_t *ba##w = p[w].ba, *bb##w = p[w].bb;                     \
    const double *ca##w = p[w].ca, *cb##w = p[w].cb;                       \
    const uint32_t *to##w = to ? to[w] : NULL
/* XU i of pair w; with `shared`, the first axis's bin and coordinate are
 * pair 0's (loaded once for the four). */
#define G_ADD(w)                                                           \
    acc_xu(h##w + (to ? to##w[i] : 0), pitch, shared ? ba0[i] : ba##w[i],  \
           bb##w[i], shared ? ca0[i] : ca##w[i], cb##w[i])

/* Four pairs' XUs p into their bins from offset to[w][i], or 0 when to is
 * NULL; to and shared are constants once inlined. */
static inline __attribute__((always_inline)) void
gather4(ompf__hacc_t *const *a, const ompf__placed_t *p,
        const uint32_t *const *to, int shared, size_t nxu)
{
    size_t pitch = a[0]->pitch;
    G_LOCALS(0);
    G_LOCALS(1);
    G_LOCALS(2);
    G_LOCALS(3);
    for (size_t i = 0; i < nxu; i++) {
        G_ADD(0);
        G_ADD(1);
        G_ADD(2);
        G_ADD(3);
    }
}

/* Whether the four pairs' first axes are one (consecutive pairs of one
 * event: (a, b), (a, b + 1), ...). */
static int first_shared(const ompf__placed_t *p)
{
    for (int w = 1; w < 4; w++)
        if (p[w].ba != p[0].ba || p[w].ca != p[0].ca)
            return 0;
    return 1;
}

/* Four pairs, with the variant of gather4 that fits them. */
static void gather4_run(ompf__hacc_t *const *a, const ompf__placed_t *p,
                        const uint32_t *const *to, size_t nxu)
{
    int shared = first_shared(p);
    if (to && shared)
        gather4(a, p, to, 1, nxu);
    else if (to)
        gather4(a, p, to, 0, nxu);
    else if (shared)
        gather4(a, p, NULL, 1, nxu);
    else
        gather4(a, p, NULL, 0, nxu);
}

static void gather1(ompf__hacc_t *a, const ompf__placed_t *p,
                    const uint32_t *to, size_t nxu)
{
    ompf__hbin_t *h = a->bin;
    for (size_t i = 0; i < nxu; i++)
        acc_xu(h + (to ? to[i] : 0), a->pitch, p->ba[i], p->bb[i], p->ca[i],
               p->cb[i]);
}

void ompf__hacc_gather(ompf__hacc_t *const *a, const ompf__placed_t *all,
                       const ompf__placed_t *typed,
                       const uint32_t *const *toff, size_t ways, size_t nxu)
{
    if (ways == 4) {
        gather4_run(a, all, NULL, nxu);
        if (typed)
            gather4_run(a, typed, toff, nxu);
        return;
    }
    for (size_t w = 0; w < ways; w++) {
        gather1(a[w], &all[w], NULL, nxu);
        if (typed)
            gather1(a[w], &typed[w], toff[w], nxu);
    }
}

int ompf__hacc_finish(ompf__hacc_t *a, const uint64_t *xus, ompf_hist2d_t *h)
{
    int rc = 0;
    size_t nb = a->side * a->side;
    int64_t *cnt = malloc(nb * sizeof *cnt);
    double *sum = malloc(2 * nb * sizeof *sum);
    if (!cnt || !sum)
        rc = OMPF_ENOMEM;
    for (size_t s = 0; s < a->nslots; s++) {
        memset(&h[s], 0, sizeof h[s]);
        if (rc)
            continue;
        /* the real bins, in the order ompf_hist2d_build has them */
        const ompf__hbin_t *b = a->bin + s * a->stride;
        for (size_t ka = 0; ka < a->side; ka++)
            for (size_t kb = 0; kb < a->side; kb++) {
                const ompf__hbin_t *x = &b[ka * a->pitch + kb];
                size_t k = ka * a->side + kb;
                cnt[k] = x->n;
                sum[2 * k] = x->s[0];
                sum[2 * k + 1] = x->s[1];
                h[s].total += x->n;
            }
        h[s].left_out = xus[s] - (uint64_t)h[s].total;
        rc = compact(cnt, sum, nb, &h[s]);
    }
    free(cnt);
    free(sum);
    ompf__hacc_free(a);
    return rc;
}

void ompf__hacc_free(ompf__hacc_t *a)
{
    free(a->bin);
    memset(a, 0, sizeof *a);
}
