/* The k-th smallest of an array by selection (include/ompfuse/select.h). */
#include <math.h>
#include <stddef.h>

#include "ompfuse/select.h"

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Places the k-th smallest of v[left..right] at v[k], smaller ones before
 * and larger ones after: Floyd and Rivest's SELECT (CACM 18(3), 1975),
 * which first narrows the range around k on a sample and so needs about
 * n + min(k, n - k) comparisons, against ~3n for a plain quickselect. */
static void fr_select(double *v, ptrdiff_t left, ptrdiff_t right, ptrdiff_t k)
{
    while (right > left) {
        if (right - left > 600) {
            double n = (double)(right - left + 1), i = (double)(k - left + 1);
            double z = log(n), s = 0.5 * exp(2 * z / 3);
            double sd = 0.5 * sqrt(z * s * (n - s) / n) * (i - n / 2 < 0 ? -1 : 1);
            ptrdiff_t nl = (ptrdiff_t)((double)k - i * s / n + sd);
            ptrdiff_t nr = (ptrdiff_t)((double)k + (n - i) * s / n + sd);
            fr_select(v, nl > left ? nl : left, nr < right ? nr : right, k);
        }
        double t = v[k];
        ptrdiff_t i = left, j = right;
        swap(&v[left], &v[k]);
        if (v[right] > t)
            swap(&v[right], &v[left]);
        while (i < j) {
            swap(&v[i], &v[j]);
            i++;
            j--;
            while (v[i] < t)
                i++;
            while (v[j] > t)
                j--;
        }
        if (v[left] == t) {
            swap(&v[left], &v[j]);
        } else {
            j++;
            swap(&v[j], &v[right]);
        }
        if (j <= k)
            left = j + 1;
        if (k <= j)
            right = j - 1;
    }
}

void ompf_select_k(double *v, size_t n, size_t k)
{
    fr_select(v, 0, (ptrdiff_t)n - 1, (ptrdiff_t)k);
}

