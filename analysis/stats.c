/* Per-group statistics: sum, mean, median, p5/p95 (linear interpolation,
 * numpy's default) and coefficient of variation, with quantiles by
 * selection (O(n)) rather than sorting, since 10^6-XU groups are usual. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "analysis_internal.h"
#include "ompfuse/select.h"

double astats_quantile(double *v, size_t n, double q)
{
    if (!n)
        return NAN;
    double h = (double)(n - 1) * q;
    size_t k = (size_t)floor(h);
    ompf_select_k(v, n, k);
    double a = v[k];
    if (k + 1 >= n || h == (double)k)
        return a;
    double b = v[k + 1];
    for (size_t i = k + 2; i < n; i++)
        if (v[i] < b)
            b = v[i];
    return a + (b - a) * (h - (double)k);
}

/* Linear interpolation at h between v[k] and the next larger value,
 * which is the smallest of v[lo..hi) (the part above k). */
static double interp(const double *v, size_t k, double h, size_t lo, size_t hi)
{
    if (h == (double)k || lo >= hi)
        return v[k];
    double b = v[lo];
    for (size_t i = lo + 1; i < hi; i++)
        if (v[i] < b)
            b = v[i];
    return v[k] + (b - v[k]) * (h - (double)k);
}

/* The value of rank k (0-based) from counts of the integers lo, lo+1, ... */
static double rank_value(const size_t *cnt, double lo, size_t k)
{
    size_t c = 0, i = 0;
    while (c + cnt[i] <= k)
        c += cnt[i++];
    return lo + (double)i;
}

/* Quantiles of integer values in a small range by counting: one pass,
 * no selection (event counts such as page faults or context switches). */
static int counted_quantiles(const double *v, size_t n, double lo, double hi, astats_t *s)
{
    size_t range = (size_t)(hi - lo) + 1;
    size_t *cnt = calloc(range, sizeof *cnt);
    if (!cnt)
        return -1;
    for (size_t i = 0; i < n; i++)
        cnt[(size_t)(v[i] - lo)]++;
    const double q[3] = {0.05, 0.5, 0.95};
    double *out[3] = {&s->p5, &s->median, &s->p95};
    for (int j = 0; j < 3; j++) {
        double h = (double)(n - 1) * q[j];
        size_t k = (size_t)h;
        double a = rank_value(cnt, lo, k);
        double b = k + 1 < n ? rank_value(cnt, lo, k + 1) : a;
        *out[j] = h == (double)k ? a : a + (b - a) * (h - (double)k);
    }
    free(cnt);
    return 0;
}

void astats_compute(double *v, size_t n, astats_t *s)
{
    s->n = n;
    if (!n) {
        s->sum = s->mean = s->median = s->p5 = s->p95 = s->cv = NAN;
        return;
    }
    double sum = 0, lo = v[0], hi = v[0];
    int integral = 1;
    for (size_t i = 0; i < n; i++) {
        sum += v[i];
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
        integral &= v[i] == floor(v[i]);
    }
    double mean = sum / (double)n, ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    s->sum = sum;
    s->mean = mean;
    /* population standard deviation over the mean; undefined at mean 0 */
    s->cv = mean != 0 ? sqrt(ss / (double)n) / fabs(mean) : NAN;
    if (integral && hi - lo < 4096 && counted_quantiles(v, n, lo, hi, s) == 0)
        return;
    /* The median first, then p5 in the part below it and p95 in the part
     * above: each later selection works on about half of the values. */
    double h50 = (double)(n - 1) * 0.5, h5 = (double)(n - 1) * 0.05,
           h95 = (double)(n - 1) * 0.95;
    size_t k50 = (size_t)h50, k5 = (size_t)h5, k95 = (size_t)h95;
    ompf_select_k(v, n, k50);
    s->median = interp(v, k50, h50, k50 + 1, n);
    if (k5 < k50) {
        ompf_select_k(v, k50, k5);
        s->p5 = interp(v, k5, h5, k5 + 1, k50 + 1);
    } else {
        s->p5 = interp(v, k5, h5, k50 + 1, n);
    }
    if (k95 > k50)
        ompf_select_k(v + k50 + 1, n - k50 - 1, k95 - k50 - 1);
    s->p95 = interp(v, k95, h95, k95 + 1, n);
}
