/* Pilot correlations for the BC overlap choice: |Spearman| per event pair. */
#include "ompfuse/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct keyed {
    double v;
    size_t i;
} keyed_t;

static int cmp_keyed(const void *a, const void *b)
{
    double x = ((const keyed_t *)a)->v, y = ((const keyed_t *)b)->v;
    return (x > y) - (x < y);
}

/* Average ranks of ties, written to rank[]. */
static void ranks(const double *v, size_t n, keyed_t *tmp, double *rank)
{
    for (size_t i = 0; i < n; i++) {
        tmp[i].v = v[i];
        tmp[i].i = i;
    }
    qsort(tmp, n, sizeof *tmp, cmp_keyed);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && tmp[j + 1].v == tmp[i].v)
            j++;
        double r = (double)(i + j) / 2.0 + 1.0;
        for (size_t k = i; k <= j; k++)
            rank[tmp[k].i] = r;
        i = j + 1;
    }
}

/* Pearson correlation of the ranks; 0 when either side is constant. */
static double spearman(const double *x, const double *y, size_t n,
                       keyed_t *tmp, double *rx, double *ry)
{
    ranks(x, n, tmp, rx);
    ranks(y, n, tmp, ry);
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += rx[i];
        my += ry[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    if (sxx <= 0 || syy <= 0)
        return 0.0;
    return sxy / sqrt(sxx * syy);
}

int ompf_plan_correlation(const ompf_profile_t *const *profiles,
                          size_t nprof, const char *const *events, size_t n,
                          double *out)
{
    if (!out || (n && !events) || (nprof && !profiles))
        return OMPF_EINVAL;
    double *sum = calloc(n * n + 1, sizeof *sum);
    size_t *cnt = calloc(n * n + 1, sizeof *cnt);
    if (!sum || !cnt) {
        free(sum);
        free(cnt);
        return OMPF_ENOMEM;
    }
    int rc = 0;
    for (size_t p = 0; p < nprof && rc == 0; p++) {
        const ompf_profile_t *pr = profiles[p];
        size_t nx = ompf_xu_count(pr);
        if (nx < 2)
            continue;
        double *x = malloc(nx * sizeof *x), *y = malloc(nx * sizeof *y);
        double *rx = malloc(nx * sizeof *rx), *ry = malloc(nx * sizeof *ry);
        keyed_t *tmp = malloc(nx * sizeof *tmp);
        if (!x || !y || !rx || !ry || !tmp)
            rc = OMPF_ENOMEM;
        for (size_t a = 0; a < n && rc == 0; a++) {
            int ia = ompf_event_find(pr, events[a]);
            if (ia < 0)
                continue;
            for (size_t b = a + 1; b < n; b++) {
                int ib = ompf_event_find(pr, events[b]);
                if (ib < 0)
                    continue;
                size_t m = 0;
                for (size_t k = 0; k < nx; k++) {
                    const double *v = ompf_xu_values_const(pr, k);
                    if (ompf_is_missing(v[ia]) || ompf_is_missing(v[ib]))
                        continue;
                    x[m] = v[ia];
                    y[m] = v[ib];
                    m++;
                }
                if (m < 2)
                    continue;
                double r = fabs(spearman(x, y, m, tmp, rx, ry));
                sum[a * n + b] += r;
                cnt[a * n + b]++;
            }
        }
        free(x);
        free(y);
        free(rx);
        free(ry);
        free(tmp);
    }
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++) {
            size_t i = a < b ? a * n + b : b * n + a;
            out[a * n + b] = a == b ? 1.0 : cnt[i] ? sum[i] / (double)cnt[i] : NAN;
        }
    free(sum);
    free(cnt);
    return rc;
}
