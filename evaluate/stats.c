/* Median and Spearman's rank correlation (ties get their average rank). */
#include <math.h>
#include <stdlib.h>

#include "ompfuse/evaluate.h"
#include "evaluate_internal.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ompf_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
    double v;
    size_t i;
} vi_t;

static int cmp_vi(const void *a, const void *b)
{
    const vi_t *x = a, *y = b;
    if (x->v != y->v)
        return (x->v > y->v) - (x->v < y->v);
    return (x->i > y->i) - (x->i < y->i);
}

int ompf__ranks(const double *x, size_t n, double *rank)
{
    vi_t *t = malloc((n ? n : 1) * sizeof *t);
    if (!t)
        return OMPF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        t[i].v = x[i];
        t[i].i = i;
    }
    qsort(t, n, sizeof *t, cmp_vi);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && t[j].v == t[i].v)
            j++;
        /* ranks i+1 .. j, averaged */
        double r = 0.5 * ((double)(i + 1) + (double)j);
        for (size_t k = i; k < j; k++)
            rank[t[k].i] = r;
        i = j;
    }
    free(t);
    return 0;
}

double ompf__pearson(const double *x, const double *y, size_t n)
{
    if (n < 2)
        return NAN;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - mx, dy = y[i] - my;
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if (sxx == 0 || syy == 0)
        return 0.0; /* a constant variable has no monotonic association */
    double r = sxy / sqrt(sxx * syy);
    return r > 1 ? 1 : r < -1 ? -1 : r;
}

double ompf_spearman(const double *x, const double *y, size_t n)
{
    if (n < 2)
        return NAN;
    double *r = malloc(2 * n * sizeof *r);
    if (!r)
        return NAN;
    double rho = NAN;
    if (!ompf__ranks(x, n, r) && !ompf__ranks(y, n, r + n))
        rho = ompf__pearson(r, r + n, n);
    free(r);
    return rho;
}
