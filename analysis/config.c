/* The analysis configuration: grouping, filters, metrics, sort and top. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "ompfuse/file.h"

const char *const adim_names[ADIM_COUNT] = {"construct", "thread", "core",
                                            "numa",      "kind",   "subtree"};

int ompf_analysis_create(ompf_analysis_t **out)
{
    ompf_analysis_t *a = calloc(1, sizeof *a);
    if (!a)
        return OMPF_ENOMEM;
    a->dims[0] = ADIM_CONSTRUCT;
    a->ndims = 1;
    a->depth = 2;
    a->builtins = 1;
    *out = a;
    return 0;
}

void ompf_analysis_destroy(ompf_analysis_t *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nwhere; i++)
        free(a->where[i].text);
    free(a->where);
    ametric_free(&a->user);
    ametric_free(&a->file);
    free(a->sort);
    free(a->top_col);
    free(a);
}

static int dim_parse(const char *s, size_t n)
{
    for (int d = 0; d < ADIM_COUNT; d++)
        if (strlen(adim_names[d]) == n && !strncmp(s, adim_names[d], n))
            return d;
    return -1;
}

int ompf_analysis_set_group(ompf_analysis_t *a, const char *by, unsigned depth,
                            ompf_error_t *err)
{
    int dims[ADIM_COUNT], nd = 0;
    for (const char *s = by;;) {
        size_t n = strcspn(s, ",");
        int d = dim_parse(s, n);
        if (d < 0)
            return ompf_error_set(err, OMPF_EUSAGE,
                                  "--by '%s', position %zu: '%.*s' is not one of construct, "
                                  "thread, core, numa, kind, subtree",
                                  by, (size_t)(s - by) + 1, (int)n, s);
        for (int k = 0; k < nd; k++)
            if (dims[k] == d)
                return ompf_error_set(err, OMPF_EUSAGE, "--by '%s', position %zu: '%s' twice",
                                      by, (size_t)(s - by) + 1, adim_names[d]);
        dims[nd++] = d;
        if (!s[n])
            break;
        s += n + 1;
    }
    memcpy(a->dims, dims, sizeof dims);
    a->ndims = nd;
    a->depth = depth;
    return 0;
}

int ompf_analysis_add_where(ompf_analysis_t *a, const char *cond, ompf_error_t *err)
{
    const char *eq = strchr(cond, '=');
    int d = eq ? dim_parse(cond, (size_t)(eq - cond)) : -1;
    if (d < 0)
        return ompf_error_set(err, OMPF_EUSAGE,
                              "--where '%s', position 1: expected DIM=VALUE with DIM one of "
                              "construct, thread, core, numa, kind, subtree",
                              cond);
    if (!eq[1])
        return ompf_error_set(err, OMPF_EUSAGE, "--where '%s', position %zu: empty value",
                              cond, (size_t)(eq - cond) + 2);
    awhere_t *w = realloc(a->where, (a->nwhere + 1) * sizeof *w);
    if (!w)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    a->where = w;
    w[a->nwhere].dim = d;
    w[a->nwhere].text = strdup(cond);
    if (!w[a->nwhere].text)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    w[a->nwhere].value = w[a->nwhere].text + (eq - cond) + 1;
    a->nwhere++;
    return 0;
}

int ompf_analysis_add_metric(ompf_analysis_t *a, const char *def, ompf_error_t *err)
{
    return ametric_parse_def(&a->user, def, "--metric", 1, err);
}

int ompf_analysis_load_metrics(ompf_analysis_t *a, const char *path, ompf_error_t *err)
{
    char *text;
    int rc = ompf_read_file(path, 1 << 20, &text, NULL);
    if (rc == OMPF_ERANGE)
        return ompf_error_set(err, OMPF_EUSAGE, "metrics file %s: larger than 1 MiB", path);
    if (rc)
        return ompf_error_set(err, OMPF_EIO, "metrics file %s: %s", path, strerror(errno));
    rc = ametric_parse_text(&a->file, text, path, err);
    free(text);
    return rc;
}

void ompf_analysis_use_builtins(ompf_analysis_t *a, int on)
{
    a->builtins = on;
}

int ompf_analysis_set_sort(ompf_analysis_t *a, const char *col)
{
    free(a->sort);
    a->sort = col ? strdup(col) : NULL;
    return col && !a->sort ? OMPF_ENOMEM : 0;
}

void ompf_analysis_set_top(ompf_analysis_t *a, unsigned n, const char *col)
{
    a->top_n = n;
    free(a->top_col);
    a->top_col = col ? strdup(col) : NULL;
}
