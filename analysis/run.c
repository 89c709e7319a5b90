/*
 * ompf_analysis_run: columns (duration_ns, events, metrics), filters, the
 * per-XU metric values, groups and their statistics, the gap rows, top N.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "ompfuse/text.h"

#define NOMEM(err) ompf_error_set(err, OMPF_ENOMEM, "out of memory")

const char *ares_construct_name(const ompf_profile_t *p, uint32_t type)
{
    const ompf_construct_t *c = ompf_construct_get(p, type);
    return c ? c->name : "?";
}

double axu_time(const ompf_profile_t *p, size_t i, const ompf_xu_t *x)
{
    if (x->parts <= 1)
        return (double)(x->end_ns - x->start_ns);
    uint32_t n = 0;
    ompf_part_t one;
    const ompf_part_t *pt = ompf_xu_parts(p, i, &n, &one);
    uint64_t t = 0;
    for (uint32_t k = 0; pt && k < n; k++)
        t += pt[k].end_ns - pt[k].start_ns;
    return (double)t;
}

int ares_value(const ompf_aresult_t *r, size_t c, size_t i, double *v)
{
    const acol_t *col = &r->cols[c];
    if (col->kind == ACOL_TIME) {
        *v = axu_time(r->p, i, ompf_xu_get(r->p, i));
        return AEV_OK;
    }
    if (col->kind == ACOL_EVENT) {
        *v = ompf_xu_values_const(r->p, i)[col->event];
        return ompf_is_missing(*v) || isnan(*v) ? AEV_MISSING : AEV_OK;
    }
    const ompf_xu_t *x = ompf_xu_get(r->p, i);
    size_t nev = ompf_event_count(r->p);
    double st[64], *vars = nev + 2 <= 64 ? st : malloc((nev + 2) * sizeof *vars);
    if (!vars)
        return AEV_MISSING;
    ares_vars(r->p, i, x, ompf_xu_values_const(r->p, i), vars);
    int rc = aexpr_eval(&col->expr, vars, v);
    if (vars != st)
        free(vars);
    return rc;
}

void ares_vars(const ompf_profile_t *p, size_t i, const ompf_xu_t *x, const double *row,
               double *vars)
{
    size_t nev = ompf_event_count(p);
    memcpy(vars, row, nev * sizeof *vars);
    vars[AV_DURATION(nev)] = axu_time(p, i, x);
    vars[AV_ITERATIONS(nev)] = (double)x->iter_count;
}

static const char *short_name(const char *n)
{
    const char *c = strstr(n, "::");
    return c ? c + 2 : n;
}

int ares_find_col(const ompf_aresult_t *r, const char *name)
{
    for (size_t c = 0; c < r->ncols; c++)
        if (!strcmp(r->cols[c].name, name))
            return (int)c;
    int found = -1;
    for (size_t c = 0; c < r->ncols; c++)
        if (r->cols[c].kind == ACOL_EVENT && !strcmp(short_name(r->cols[c].name), name)) {
            if (found >= 0)
                return -1;
            found = (int)c;
        }
    return found;
}

void ares_col_suggest(const ompf_aresult_t *r, const char *name, char *buf, size_t len)
{
    size_t best = 4; /* a typo or two, not another name */
    const char *at = NULL;
    for (size_t c = 0; c < r->ncols; c++)
        for (int sh = 0; sh < 2; sh++) {
            const char *n = sh ? short_name(r->cols[c].name) : r->cols[c].name;
            size_t d = ompf_edit_distance(name, n);
            if (d < best) {
                best = d;
                at = n;
            }
        }
    snprintf(buf, len, "%s%s%s", at ? "; did you mean " : "", at ? at : "", at ? "?" : "");
}

static int is_estimate(const ompf_profile_t *p, uint32_t e)
{
    const char *mode = ompf_meta_get(p, "mode");
    return ompf_event_get(p, e)->status == OMPF_EV_ESTIMATED ||
           (mode && (!strcmp(mode, OMPF_MODE_HEM) || !strcmp(mode, OMPF_MODE_HEM_DELTA)));
}

static int add_note(ompf_aresult_t *r, const char *text)
{
    char **n = realloc(r->metric_notes, (r->n_notes + 1) * sizeof *n);
    if (!n)
        return OMPF_ENOMEM;
    r->metric_notes = n;
    if (!(n[r->n_notes] = strdup(text)))
        return OMPF_ENOMEM;
    r->n_notes++;
    return 0;
}

/* Picks each metric name's first applicable definition: --metric ones
 * must apply, file and built-in ones apply when their events exist. */
static int choose_metrics(const ompf_analysis_t *a, ompf_aresult_t *r, ompf_error_t *err)
{
    ametric_list_t builtin = {0};
    if (a->builtins && ametric_builtins(&builtin))
        return NOMEM(err);
    const ametric_list_t *lists[3] = {&a->user, &a->file, &builtin};
    size_t nev = ompf_event_count(r->p);
    int rc = 0;
    for (int li = 0; li < 3 && !rc; li++) {
        for (size_t i = 0; i < lists[li]->n && !rc; i++) {
            const ametric_def_t *m = &lists[li]->v[i];
            int seen = 0;
            for (size_t c = 0; c < r->ncols; c++)
                seen |= !strcmp(r->cols[c].name, m->name);
            for (size_t j = 0; j < i; j++) /* an earlier definition did not apply */
                seen |= !strcmp(lists[li]->v[j].name, m->name);
            if (seen)
                continue;
            const ametric_def_t *use = NULL;
            for (size_t j = i; j < lists[li]->n && !use; j++) {
                const ametric_def_t *d = &lists[li]->v[j];
                if (strcmp(d->name, m->name))
                    continue;
                int ok = d->user ? 1 : aexpr_applies(d->def, d->expr_off, r->p);
                if (ok < 0 && li == 2)
                    continue; /* cannot happen: the built-in text is fixed */
                if (ok != 0)
                    use = d; /* user: errors reported by the compile below */
            }
            if (!use) {
                if (li == 1) {
                    char note[512];
                    snprintf(note, sizeof note,
                             "metric %s (%s): no definition applies to this profile's events",
                             m->name, m->origin);
                    if (add_note(r, note))
                        rc = NOMEM(err);
                }
                continue;
            }
            acol_t *col = &r->cols[r->ncols];
            memset(col, 0, sizeof *col);
            rc = aexpr_compile(use->def, use->expr_off, r->p, &col->expr, err);
            if (rc) {
                if (strcmp(use->origin, "--metric")) {
                    ompf_error_t e2 = *err;
                    ompf_error_set(err, rc, "%s: %s", use->origin, e2.msg);
                }
                break;
            }
            r->ncols++;
            col->kind = ACOL_METRIC;
            if (!(col->name = strdup(use->name)) || !(col->defn = strdup(use->def)) ||
                !(col->origin = strdup(use->origin))) {
                rc = NOMEM(err);
                break;
            }
            for (int v = 0; v < col->expr.n_vars; v++)
                if (col->expr.vars[v] < nev && is_estimate(r->p, col->expr.vars[v]))
                    col->estimate = 1;
        }
    }
    ametric_free(&builtin);
    return rc;
}

/* ---- filters ----------------------------------------------------------- */

typedef struct afilter {
    int dim;
    int64_t num;          /* thread, core, numa, kind */
    unsigned char *cons;  /* construct: matching construct indices */
    uint32_t node, depth; /* subtree */
} afilter_t;

/* r->canon: constructs printed with one name are one construct here (the
 * copies of a construct in a function inlined into another have two code
 * addresses, two types for fusion, and one source location).  Sorted by
 * name, each run of equal names maps to its lowest index. */
typedef struct named {
    const char *name;
    uint32_t idx;
} named_t;

static int named_cmp(const void *a, const void *b)
{
    const named_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static int canon_constructs(ompf_aresult_t *r, ompf_error_t *err)
{
    size_t n = ompf_construct_count(r->p);
    named_t *order = malloc((n + 1) * sizeof *order);
    r->canon = malloc((n + 1) * sizeof *r->canon);
    if (!order || !r->canon) {
        free(order);
        return NOMEM(err);
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (named_t){ares_construct_name(r->p, (uint32_t)i), (uint32_t)i};
    qsort(order, n, sizeof *order, named_cmp);
    for (size_t i = 0; i < n; i++)
        r->canon[order[i].idx] = i && !strcmp(order[i - 1].name, order[i].name)
                                     ? r->canon[order[i - 1].idx]
                                     : order[i].idx;
    free(order);
    return 0;
}

static int construct_matches(const ompf_profile_t *p, uint32_t c, const char *v)
{
    const ompf_construct_t *k = ompf_construct_get(p, c);
    if (!strcmp(k->name, v) || (k->function && !strcmp(k->function, v)))
        return 1;
    /* its address, MODULE+0xOFFSET, whatever resolution named it */
    if (k->module && *k->module) {
        const char *b = strrchr(k->module, '/');
        char addr[512];
        snprintf(addr, sizeof addr, "%s+0x%llx", b ? b + 1 : k->module,
                 (unsigned long long)k->offset);
        if (!strcmp(addr, v))
            return 1;
    }
    /* a resolved construct matches V on its location, file:line */
    if (!k->file || !*k->file || k->line <= 0)
        return 0;
    char loc[4096];
    int ln = snprintf(loc, sizeof loc, "%s:%d", k->file, (int)k->line);
    size_t lv = strlen(v);
    if (ln < 0 || (size_t)ln >= sizeof loc)
        return 0;
    if (!strcmp(loc, v))
        return 1;
    /* "cg.c:274" matches ".../cg.c:274" */
    return (size_t)ln > lv && !strcmp(loc + ln - lv, v) && loc[(size_t)ln - lv - 1] == '/';
}

static int filter_make(const ompf_profile_t *p, const awhere_t *w, afilter_t *f,
                       ompf_error_t *err)
{
    memset(f, 0, sizeof *f);
    f->dim = w->dim;
    char *end;
    switch (w->dim) {
    case ADIM_CONSTRUCT: {
        size_t n = ompf_construct_count(p);
        f->cons = calloc(n + 1, 1);
        if (!f->cons)
            return NOMEM(err);
        for (size_t c = 0; c < n; c++)
            f->cons[c] = (unsigned char)construct_matches(p, (uint32_t)c, w->value);
        return 0;
    }
    case ADIM_KIND:
        f->num = ompf_xu_kind_parse(w->value);
        if (f->num < 0)
            return ompf_error_set(err, OMPF_EUSAGE,
                                  "--where '%s', position %zu: unknown XU kind '%s'", w->text,
                                  (size_t)(w->value - w->text) + 1, w->value);
        return 0;
    case ADIM_SUBTREE: {
        /* find the node whose dotted label is the value */
        size_t n = ompf_label_count(p);
        char buf[4096];
        f->node = OMPF_NONE32;
        for (size_t i = 0; i < n; i++) {
            size_t l = ompf_label_format(p, (uint32_t)i, buf, sizeof buf);
            if (l < sizeof buf && !strcmp(buf, w->value)) {
                f->node = (uint32_t)i;
                break;
            }
        }
        f->depth = f->node == OMPF_NONE32 ? 0 : ompf_label_depth(p, f->node);
        return 0; /* an absent label matches no XU: reported as such */
    }
    default:
        f->num = strtoll(w->value, &end, 10);
        if (*end)
            return ompf_error_set(err, OMPF_EUSAGE,
                                  "--where '%s', position %zu: '%s' is not a whole number",
                                  w->text, (size_t)(w->value - w->text) + 1, w->value);
        return 0;
    }
}

static int filter_pass(const ompf_profile_t *p, const afilter_t *f, const ompf_xu_t *x)
{
    switch (f->dim) {
    case ADIM_CONSTRUCT: return f->cons[x->type];
    case ADIM_THREAD: return (int64_t)x->thread == f->num;
    case ADIM_CORE: return x->core == f->num;
    case ADIM_NUMA: return x->numa == f->num;
    case ADIM_KIND: return x->kind == f->num;
    default:
        return f->node != OMPF_NONE32 && ompf_label_depth(p, x->label) >= f->depth &&
               aancestor_at(p, x->label, f->depth) == f->node;
    }
}

static int select_xus(const ompf_analysis_t *a, ompf_aresult_t *r, ompf_error_t *err)
{
    size_t n = ompf_xu_count(r->p);
    afilter_t *f = calloc(a->nwhere + 1, sizeof *f);
    size_t *hits = calloc(a->nwhere + 1, sizeof *hits);
    r->sel = malloc((n + 1) * sizeof *r->sel);
    int rc = (!f || !hits || !r->sel) ? NOMEM(err) : 0;
    size_t nf = 0;
    for (; nf < a->nwhere && !rc; nf++)
        rc = filter_make(r->p, &a->where[nf], &f[nf], err);
    for (size_t i = 0; i < n && !rc; i++) {
        const ompf_xu_t *x = ompf_xu_get(r->p, i);
        int pass = 1;
        for (size_t k = 0; k < nf; k++)
            if (filter_pass(r->p, &f[k], x))
                hits[k]++;
            else
                pass = 0;
        if (pass)
            r->sel[r->nsel++] = (uint32_t)i;
    }
    if (!rc && nf && !r->nsel) {
        size_t k = 0;
        while (k + 1 < nf && hits[k])
            k++;
        if (hits[k])
            rc = ompf_error_set(err, OMPF_EUSAGE,
                                "the --where filters match no XU together (each matches some)");
        else
            rc = ompf_error_set(err, OMPF_EUSAGE,
                                "--where '%s', position %zu: matches no XU of %s (empty group)",
                                a->where[k].text,
                                (size_t)(a->where[k].value - a->where[k].text) + 1, r->name);
    }
    for (size_t k = 0; k < a->nwhere && f; k++)
        free(f[k].cons);
    free(f);
    free(hits);
    return rc;
}

/* ---- setup ---------------------------------------------------------------- */

static int make_columns(const ompf_analysis_t *a, ompf_aresult_t *r, ompf_error_t *err)
{
    size_t nev = ompf_event_count(r->p);
    size_t maxm = a->user.n + a->file.n + 64; /* 64: the built-in set */
    r->cols = calloc(1 + nev + maxm, sizeof *r->cols);
    if (!r->cols || !(r->cols[0].name = strdup("duration_ns")))
        return NOMEM(err);
    r->cols[0].kind = ACOL_TIME;
    r->ncols = 1;
    for (size_t e = 0; e < nev; e++) {
        acol_t *c = &r->cols[r->ncols++];
        c->kind = ACOL_EVENT;
        c->event = (uint32_t)e;
        c->estimate = is_estimate(r->p, (uint32_t)e);
        if (!(c->name = strdup(ompf_event_get(r->p, (uint32_t)e)->name)))
            return NOMEM(err);
    }
    return choose_metrics(a, r, err);
}

static void run_span(ompf_aresult_t *r)
{
    size_t n = ompf_xu_count(r->p);
    r->t0 = UINT64_MAX;
    r->t1 = 0;
    for (size_t i = 0; i < n; i++) {
        const ompf_xu_t *x = ompf_xu_get(r->p, i);
        if (x->start_ns < r->t0)
            r->t0 = x->start_ns;
        if (x->end_ns > r->t1)
            r->t1 = x->end_ns;
    }
    if (r->t0 > r->t1)
        r->t0 = r->t1 = 0;
    r->nthreads = ompf_thread_count(r->p);
    if (!r->nthreads) /* imported: no thread table, count the XUs' threads */
        for (size_t i = 0; i < n; i++)
            if (ompf_xu_get(r->p, i)->thread + 1 > r->nthreads)
                r->nthreads = ompf_xu_get(r->p, i)->thread + 1;
    r->thread_time = (double)r->nthreads * (double)(r->t1 - r->t0);
}

int ompf_analysis_run(const ompf_analysis_t *a, const ompf_profile_t *p, const char *name,
                      ompf_aresult_t **out, ompf_error_t *err)
{
    *out = NULL;
    ompf_aresult_t *r = calloc(1, sizeof *r);
    if (!r)
        return NOMEM(err);
    r->p = p;
    r->mode = ompf_meta_get(p, "mode");
    if (!r->mode)
        r->mode = "unknown";
    memcpy(r->dims, a->dims, sizeof r->dims);
    r->ndims = a->ndims;
    r->depth = a->depth;
    r->sort_col = -1;
    r->top_col = -1;
    int rc = (r->name = strdup(name)) ? 0 : NOMEM(err);
    if (!rc)
        rc = make_columns(a, r, err);
    if (!rc)
        rc = select_xus(a, r, err);
    if (!rc)
        rc = canon_constructs(r, err);
    if (!rc) {
        run_span(r);
        for (size_t c = 0; c < r->ncols; c++)
            r->estimates |= r->cols[c].estimate;
        rc = agroups_build(a, r, err);
    }
    if (!rc)
        rc = atop_build(a, r, err);
    if (rc) {
        ompf_aresult_destroy(r);
        return rc;
    }
    *out = r;
    return 0;
}

void ompf_aresult_destroy(ompf_aresult_t *r)
{
    if (!r)
        return;
    for (size_t c = 0; c < r->ncols; c++) {
        free(r->cols[c].name);
        free(r->cols[c].defn);
        free(r->cols[c].origin);
        aexpr_free(&r->cols[c].expr);
    }
    free(r->cols);
    for (size_t g = 0; g < r->ngroups; g++) {
        agroup_t *gr = &r->groups[g];
        free(gr->name);
        free(gr->st);
        free(gr->share);
        free(gr->ratio);
        free(gr->excl_sum);
        free(gr->excl_n);
    }
    free(r->groups);
    for (size_t i = 0; i < r->n_notes; i++)
        free(r->metric_notes[i]);
    free(r->metric_notes);
    free(r->sel);
    free(r->canon);
    free(r->total);
    free(r->gap_missing);
    free(r->top);
    free(r->name);
    free(r);
}
