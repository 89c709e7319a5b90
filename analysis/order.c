/* Order of the groups (--sort) and the top N XUs (--top, --top-by).
 * qsort has no context argument in C11, hence the file-scope comparison
 * state; an analysis runs in one thread at a time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

#define NOMEM(err) ompf_error_set(err, OMPF_ENOMEM, "out of memory")

static const ompf_aresult_t *sort_r;
static int sort_desc = 1, sort_col;
static int group_cmp(const void *a, const void *b)
{
    const agroup_t *x = a, *y = b;
    double u, v;
    if (sort_col == -2) /* xus */
        u = (double)x->xus, v = (double)y->xus;
    else if (sort_col == -3) /* name: alphabetical */
        return strcmp(x->name, y->name);
    else if (sort_r->cols[sort_col].kind == ACOL_METRIC)
        u = x->ratio[sort_col], v = y->ratio[sort_col];
    else
        u = x->st[sort_col].sum, v = y->st[sort_col].sum;
    if (isnan(u) || isnan(v)) /* missing last */
        return isnan(u) - isnan(v);
    return u == v ? 0 : ((u < v) == (sort_desc > 0) ? 1 : -1);
}

int agroups_sort(const ompf_analysis_t *a, ompf_aresult_t *r, size_t ng, ompf_error_t *err)
{
    char col[512];
    snprintf(col, sizeof col, "%s", a->sort ? a->sort : "duration_ns");
    sort_desc = 1;
    size_t l = strlen(col);
    if (l > 4 && !strcmp(col + l - 4, ":asc")) {
        col[l - 4] = 0;
        sort_desc = -1;
    }
    if (!strcmp(col, "xus"))
        sort_col = -2;
    else if (!strcmp(col, "name"))
        sort_col = -3;
    else if ((sort_col = ares_find_col(r, col)) < 0) {
        char sug[300];
        ares_col_suggest(r, col, sug, sizeof sug);
        return ompf_error_set(err, OMPF_EUSAGE,
                              "--sort '%s', position 1: no column '%s' in %s (xus, name, "
                              "duration_ns, an event or a metric)%s",
                              a->sort, col, r->name, sug);
    }
    r->sort_col = sort_col;
    sort_r = r;
    qsort(r->groups, ng, sizeof *r->groups, group_cmp);
    return 0;
}

static const double *top_vals;
static int top_cmp(const void *a, const void *b)
{
    double u = top_vals[*(const uint32_t *)a], v = top_vals[*(const uint32_t *)b];
    if (u != v)
        return u < v ? 1 : -1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

int atop_build(const ompf_analysis_t *a, ompf_aresult_t *r, ompf_error_t *err)
{
    if (!a->top_n)
        return 0;
    int c = 0;
    const char *name = a->top_col ? a->top_col : NULL;
    if (name) {
        if ((c = ares_find_col(r, name)) < 0) {
            char sug[300];
            ares_col_suggest(r, name, sug, sizeof sug);
            return ompf_error_set(err, OMPF_EUSAGE,
                                  "--top-by '%s', position 1: no such column in %s (duration_ns, "
                                  "an event or a metric)%s",
                                  name, r->name, sug);
        }
    } else if (r->sort_col >= 0)
        c = r->sort_col;
    r->top_col = c;
    size_t n = ompf_xu_count(r->p), m = 0;
    double *vals = malloc((n + 1) * sizeof *vals);
    r->top = malloc((r->nsel + 1) * sizeof *r->top);
    if (!vals || !r->top) {
        free(vals);
        return NOMEM(err);
    }
    for (size_t s = 0; s < r->nsel; s++) {
        double v;
        if (ares_value(r, (size_t)c, r->sel[s], &v) == AEV_OK) {
            vals[r->sel[s]] = v;
            r->top[m++] = r->sel[s];
        }
    }
    top_vals = vals;
    qsort(r->top, m, sizeof *r->top, top_cmp);
    r->ntop = m < a->top_n ? m : a->top_n;
    free(vals);
    return 0;
}
