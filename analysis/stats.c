/* Per-group statistics: sum, mean, median, p5/p95 (linear interpolation,
 * numpy's default) and coefficient of variation, with quantiles by
 * selection (O(n)) rather than sorting, since 10^6-XU groups are usual. */
#include <math.h>
#include <stddef.h>

#include "analysis_internal.h"

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Places the k-th smallest of v[0..n) at v[k], smaller ones before it
 * and larger ones after (Wirth's selection). */
static void select_k(double *v, size_t n, size_t k)
{
    ptrdiff_t l = 0, r = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
    while (l < r) {
        double x = v[kk];
        ptrdiff_t i = l, j = r;
        do {
            while (v[i] < x)
                i++;
            while (x < v[j])
                j--;
            if (i <= j) {
                swap(&v[i], &v[j]);
                i++;
                j--;
            }
        } while (i <= j);
        if (j < kk)
            l = i;
        if (kk < i)
            r = j;
    }
}

double astats_quantile(double *v, size_t n, double q)
{
    if (!n)
        return NAN;
    double h = (double)(n - 1) * q;
    size_t k = (size_t)floor(h);
    select_k(v, n, k);
    double a = v[k];
    if (k + 1 >= n || h == (double)k)
        return a;
    double b = v[k + 1];
    for (size_t i = k + 2; i < n; i++)
        if (v[i] < b)
            b = v[i];
    return a + (b - a) * (h - (double)k);
}

void astats_compute(double *v, size_t n, astats_t *s)
{
    s->n = n;
    if (!n) {
        s->sum = s->mean = s->median = s->p5 = s->p95 = s->cv = NAN;
        return;
    }
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    double mean = sum / (double)n, ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    s->sum = sum;
    s->mean = mean;
    /* population standard deviation over the mean; undefined at mean 0 */
    s->cv = mean != 0 ? sqrt(ss / (double)n) / fabs(mean) : NAN;
    s->p5 = astats_quantile(v, n, 0.05);
    s->median = astats_quantile(v, n, 0.5);
    s->p95 = astats_quantile(v, n, 0.95);
}
