/*
 * Text outputs of an analysis: the aligned table (like perf report
 * --stdio: '#' header lines, the group name last), tidy CSV (one row per
 * group and column) and JSON (docs/analysis.md has the schemas).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "ompfuse/csv.h"
#include "ompfuse/text.h"

void afmt(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if ((v == floor(v) && fabs(v) < 1e15) || (fabs(v) >= 1e4 && fabs(v) < 1e15))
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.4g", v);
}

/* Full precision for machine-read outputs; empty when missing. */
static void xfmt(char *buf, size_t len, double v, const char *missing)
{
    if (isnan(v))
        snprintf(buf, len, "%s", missing);
    else if (isinf(v))
        snprintf(buf, len, "%s", missing[0] ? "null" : (v > 0 ? "inf" : "-inf"));
    else if (v == floor(v) && fabs(v) < 9e15)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.17g", v);
}

static void pct(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2f%%", 100 * v);
}

/* ---- aligned table ------------------------------------------------------ */

typedef struct table {
    char **cell;
    size_t rows, cols, cap;
} table_t;

static void tput(table_t *t, size_t row, size_t col, const char *s)
{
    if (row >= t->rows)
        t->rows = row + 1;
    size_t need = (row + 1) * t->cols;
    if (need > t->cap) {
        size_t nc = need * 2;
        char **c = realloc(t->cell, nc * sizeof *c);
        if (!c)
            return;
        memset(c + t->cap, 0, (nc - t->cap) * sizeof *c);
        t->cell = c;
        t->cap = nc;
    }
    free(t->cell[row * t->cols + col]);
    t->cell[row * t->cols + col] = strdup(s);
}

static void tprint(table_t *t, FILE *f)
{
    size_t *w = calloc(t->cols, sizeof *w);
    if (!w)
        return;
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < t->cols; c++) {
            const char *s = t->cell[r * t->cols + c];
            if (s && strlen(s) > w[c])
                w[c] = strlen(s);
        }
    for (size_t r = 0; r < t->rows; r++) {
        fputs(r == 0 ? "# " : "  ", f);
        for (size_t c = 0; c < t->cols; c++) {
            const char *s = t->cell[r * t->cols + c];
            if (c + 1 == t->cols) /* the name: left-aligned, last */
                fprintf(f, "%s", s ? s : "");
            else
                fprintf(f, "%*s  ", (int)w[c], s ? s : "");
        }
        fputc('\n', f);
    }
    for (size_t i = 0; i < t->rows * t->cols; i++)
        free(t->cell[i]);
    free(t->cell);
    free(w);
    t->cell = NULL;
    t->rows = t->cap = 0;
}

static int has_subtree(const ompf_aresult_t *r)
{
    for (int d = 0; d < r->ndims; d++)
        if (r->dims[d] == ADIM_SUBTREE)
            return 1;
    return 0;
}

static void col_title(const ompf_aresult_t *r, size_t c, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", r->cols[c].name, r->cols[c].estimate ? "*" : "");
}

static void by_text(const ompf_aresult_t *r, char *buf, size_t len)
{
    size_t l = 0;
    for (int d = 0; d < r->ndims && l < len; d++)
        l += (size_t)snprintf(buf + l, len - l, "%s%s", d ? "," : "", adim_names[r->dims[d]]);
    if (has_subtree(r) && l < len)
        snprintf(buf + l, len - l, " (depth %u)", r->depth);
}

int ompf_aresult_write_table(const ompf_aresult_t *r, FILE *f)
{
    char by[256], num[64], title[512];
    by_text(r, by, sizeof by);
    int sub = has_subtree(r);
    fprintf(f, "# profile %s: mode %s, %zu XUs (%zu selected), %zu threads, wall %.6f s\n",
            r->name, r->mode, ompf_xu_count(r->p), r->nsel, r->nthreads,
            (double)(r->t1 - r->t0) * 1e-9);
    fprintf(f, "# grouped by %s; shares are of the run's total including the gap", by);
    fprintf(f, r->estimates ? "; * marks HEM estimates\n" : "\n");
    for (size_t i = 0; i < r->n_notes; i++)
        fprintf(f, "# note: %s\n", r->metric_notes[i]);
    for (size_t c = 1; c < r->ncols; c++)
        if (r->cols[c].kind == ACOL_METRIC)
            fprintf(f, "# metric %s (%s)\n", r->cols[c].defn, r->cols[c].origin);
    fputs("#\n", f);

    size_t nev = ompf_event_count(r->p);
    table_t t = {0};
    t.cols = 2 + (size_t)sub + 1 + 2 * nev * 1 + (size_t)sub * nev + (r->ncols - 1 - nev) + 1;
    size_t k = 0;
    tput(&t, 0, k++, "XUs");
    if (sub)
        tput(&t, 0, k++, "excl.XUs");
    tput(&t, 0, k++, "time");
    tput(&t, 0, k++, "time%");
    for (size_t c = 1; c <= nev; c++) {
        col_title(r, c, title, sizeof title);
        tput(&t, 0, k++, title);
        tput(&t, 0, k++, "share");
        if (sub) {
            snprintf(num, sizeof num, "excl");
            tput(&t, 0, k++, num);
        }
    }
    for (size_t c = 1 + nev; c < r->ncols; c++) {
        col_title(r, c, title, sizeof title);
        tput(&t, 0, k++, title);
    }
    tput(&t, 0, k++, by);
    for (size_t g = 0; g < r->ngroups; g++) {
        const agroup_t *gr = &r->groups[g];
        k = 0;
        snprintf(num, sizeof num, "%zu", gr->xus);
        tput(&t, g + 1, k++, gr->gap ? "" : num);
        if (sub) {
            snprintf(num, sizeof num, "%zu", gr->excl_xus);
            tput(&t, g + 1, k++, gr->gap ? "" : num);
        }
        afmt(num, sizeof num, gr->st[0].sum);
        tput(&t, g + 1, k++, num);
        pct(num, sizeof num, gr->share[0]);
        tput(&t, g + 1, k++, num);
        for (size_t c = 1; c <= nev; c++) {
            afmt(num, sizeof num, gr->st[c].sum);
            tput(&t, g + 1, k++, num);
            pct(num, sizeof num, gr->share[c]);
            tput(&t, g + 1, k++, num);
            if (sub) {
                afmt(num, sizeof num, gr->gap || !gr->excl_n[c] ? NAN : gr->excl_sum[c]);
                tput(&t, g + 1, k++, num);
            }
        }
        for (size_t c = 1 + nev; c < r->ncols; c++) {
            afmt(num, sizeof num, gr->ratio[c]);
            tput(&t, g + 1, k++, num);
        }
        tput(&t, g + 1, k++, gr->name);
    }
    tprint(&t, f);

    /* distributions over the XUs of each group */
    for (size_t c = 0; c < r->ncols; c++) {
        int metric = r->cols[c].kind == ACOL_METRIC;
        col_title(r, c, title, sizeof title);
        fprintf(f, "\n# %s per XU%s\n", title,
                metric ? " (ratio = the expression on the group's sums)" : "");
        t.cols = 7 + (size_t)metric * 2 + 1;
        const char *head[] = {"n", "missing", "zero-den", "ratio", "mean", "median",
                              "p5", "p95", "cv"};
        k = 0;
        for (size_t h = 0; h < 9; h++)
            if (metric || (h != 2 && h != 3))
                tput(&t, 0, k++, head[h]);
        tput(&t, 0, k++, by);
        size_t row = 1;
        for (size_t g = 0; g < r->ngroups; g++) {
            const agroup_t *gr = &r->groups[g];
            const astats_t *st = &gr->st[c];
            if (gr->gap)
                continue;
            double v[9] = {(double)st->n, (double)st->missing, (double)st->zero_den,
                           gr->ratio[c], st->mean, st->median, st->p5, st->p95, st->cv};
            k = 0;
            for (size_t h = 0; h < 9; h++) {
                if (!metric && (h == 2 || h == 3))
                    continue;
                afmt(num, sizeof num, v[h]);
                tput(&t, row, k++, num);
            }
            tput(&t, row++, k++, gr->name);
        }
        tprint(&t, f);
    }

    if (r->ntop) {
        fprintf(f, "\n# top %zu XUs by %s\n", r->ntop, r->cols[r->top_col].name);
        t.cols = 8 + r->ncols;
        const char *head[] = {"rank", "xu", "thread", "cpu", "start_ns", "label", "kind"};
        for (k = 0; k < 7; k++)
            tput(&t, 0, k, head[k]);
        for (size_t c = 0; c < r->ncols; c++) {
            col_title(r, c, title, sizeof title);
            tput(&t, 0, k++, title);
        }
        tput(&t, 0, k, "construct");
        for (size_t i = 0; i < r->ntop; i++) {
            const ompf_xu_t *x = ompf_xu_get(r->p, r->top[i]);
            char lab[1024];
            ompf_label_format(r->p, x->label, lab, sizeof lab);
            k = 0;
            snprintf(num, sizeof num, "%zu", i + 1);
            tput(&t, i + 1, k++, num);
            snprintf(num, sizeof num, "%llu", (unsigned long long)x->id);
            tput(&t, i + 1, k++, num);
            snprintf(num, sizeof num, "%u", x->thread);
            tput(&t, i + 1, k++, num);
            snprintf(num, sizeof num, "%d", x->cpu);
            tput(&t, i + 1, k++, num);
            snprintf(num, sizeof num, "%llu", (unsigned long long)x->start_ns);
            tput(&t, i + 1, k++, num);
            tput(&t, i + 1, k++, lab);
            tput(&t, i + 1, k++, ompf_xu_kind_name((ompf_xu_kind_t)x->kind));
            for (size_t c = 0; c < r->ncols; c++) {
                double v;
                int s = ares_value(r, c, r->top[i], &v);
                if (s == AEV_OK)
                    afmt(num, sizeof num, v);
                else
                    snprintf(num, sizeof num, s == AEV_MISSING ? "missing" : "zero-den");
                tput(&t, i + 1, k++, num);
            }
            tput(&t, i + 1, k, ares_construct_name(r->p, x->type));
        }
        tprint(&t, f);
    }
    fputc('\n', f);
    return ferror(f) ? OMPF_EIO : 0;
}

/* ---- CSV ------------------------------------------------------------------ */

static const char *kind_name(acol_kind_t k)
{
    return k == ACOL_TIME ? "time" : k == ACOL_EVENT ? "event" : "metric";
}

/* The dimension's value as text ("" when not grouped by it). */
static void dim_text(const ompf_aresult_t *r, const agroup_t *g, int dim, char *buf,
                     size_t len)
{
    buf[0] = 0;
    int used = 0;
    for (int d = 0; d < r->ndims; d++)
        used |= r->dims[d] == dim;
    if (!used || g->gap) {
        if (g->gap && dim == ADIM_THREAD && strstr(g->name, "thread"))
            snprintf(buf, len, "%lld", (long long)g->key[dim]);
        return;
    }
    int64_t v = g->key[dim];
    if (dim == ADIM_CONSTRUCT)
        snprintf(buf, len, "%s", ares_construct_name(r->p, (uint32_t)v));
    else if (dim == ADIM_KIND)
        snprintf(buf, len, "%s", ompf_xu_kind_name((ompf_xu_kind_t)v));
    else if (dim == ADIM_SUBTREE)
        ompf_label_format(r->p, (uint32_t)v, buf, len);
    else
        snprintf(buf, len, "%lld", (long long)v);
}

int ompf_aresult_write_csv(const ompf_aresult_t *r, FILE *f, int first)
{
    if (first) {
        fputs("profile,group,gap", f);
        for (int d = 0; d < ADIM_COUNT; d++)
            fprintf(f, ",%s", adim_names[d]);
        fputs(",xus,excl_xus,column,column_kind,estimate,n,missing,zero_den,sum,mean,"
              "median,p5,p95,cv,share,ratio,excl_sum\n",
              f);
    }
    char buf[4096];
    int sub = has_subtree(r);
    for (size_t g = 0; g < r->ngroups; g++) {
        const agroup_t *gr = &r->groups[g];
        for (size_t c = 0; c < r->ncols; c++) {
            const astats_t *st = &gr->st[c];
            if (gr->gap && r->cols[c].kind == ACOL_METRIC)
                continue;
            ompf_csv_field(f, r->name);
            fputc(',', f);
            ompf_csv_field(f, gr->name);
            fprintf(f, ",%d", gr->gap);
            for (int d = 0; d < ADIM_COUNT; d++) {
                dim_text(r, gr, d, buf, sizeof buf);
                fputc(',', f);
                ompf_csv_field(f, buf);
            }
            if (gr->gap)
                fputs(",,", f);
            else if (sub)
                fprintf(f, ",%zu,%zu", gr->xus, gr->excl_xus);
            else
                fprintf(f, ",%zu,", gr->xus);
            fputc(',', f);
            ompf_csv_field(f, r->cols[c].name);
            fprintf(f, ",%s,%d,%zu,%zu,%zu", kind_name(r->cols[c].kind), r->cols[c].estimate,
                    st->n, st->missing, st->zero_den);
            double v[] = {st->sum, st->mean, st->median, st->p5, st->p95, st->cv,
                          gr->share[c], gr->ratio[c],
                          sub && !gr->gap && gr->excl_n[c] ? gr->excl_sum[c] : NAN};
            for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
                xfmt(buf, sizeof buf, v[i], "");
                fprintf(f, ",%s", buf);
            }
            fputc('\n', f);
        }
    }
    return ferror(f) ? OMPF_EIO : 0;
}

int ompf_aresult_write_top_csv(const ompf_aresult_t *r, FILE *f, int first)
{
    char buf[4096];
    if (first) {
        fputs("profile,rank,by,xu,label,construct,kind,thread,cpu,core,numa,start_ns,"
              "duration_ns", f);
        for (size_t c = 1; c < r->ncols; c++) {
            fputc(',', f);
            ompf_csv_field(f, r->cols[c].name);
        }
        fputc('\n', f);
    }
    for (size_t i = 0; i < r->ntop; i++) {
        const ompf_xu_t *x = ompf_xu_get(r->p, r->top[i]);
        ompf_csv_field(f, r->name);
        fprintf(f, ",%zu,", i + 1);
        ompf_csv_field(f, r->cols[r->top_col].name);
        ompf_label_format(r->p, x->label, buf, sizeof buf);
        fprintf(f, ",%llu,%s,", (unsigned long long)x->id, buf);
        ompf_csv_field(f, ares_construct_name(r->p, x->type));
        fprintf(f, ",%s,%u,%d,%d,%d,%llu,%llu", ompf_xu_kind_name((ompf_xu_kind_t)x->kind),
                x->thread, x->cpu, x->core, x->numa, (unsigned long long)x->start_ns,
                (unsigned long long)axu_time(r->p, r->top[i], x));
        for (size_t c = 1; c < r->ncols; c++) {
            double v;
            int s = ares_value(r, c, r->top[i], &v);
            xfmt(buf, sizeof buf, s == AEV_OK ? v : NAN, "");
            fprintf(f, ",%s", buf);
        }
        fputc('\n', f);
    }
    return ferror(f) ? OMPF_EIO : 0;
}

/* ---- JSON ----------------------------------------------------------------- */

static void json_num(FILE *f, const char *key, double v)
{
    char buf[64];
    xfmt(buf, sizeof buf, v, "null");
    fprintf(f, "\"%s\":%s", key, buf);
}

static void json_stats(FILE *f, const ompf_aresult_t *r, const agroup_t *g, size_t c)
{
    const astats_t *st = &g->st[c];
    fprintf(f, "{\"n\":%zu,\"missing\":%zu,\"zero_den\":%zu,", st->n, st->missing,
            st->zero_den);
    const char *key[] = {"sum", "mean", "median", "p5", "p95", "cv", "share", "ratio"};
    double v[] = {st->sum, st->mean, st->median, st->p5, st->p95, st->cv, g->share[c],
                  g->ratio[c]};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        if (i)
            fputc(',', f);
        json_num(f, key[i], v[i]);
    }
    if (has_subtree(r) && !g->gap) {
        fputc(',', f);
        json_num(f, "excl_sum", g->excl_n[c] ? g->excl_sum[c] : NAN);
    }
    fputc('}', f);
}

int ompf_aresult_write_json(const ompf_aresult_t *r, FILE *f, int first)
{
    char buf[4096];
    fputs(first ? "{\"schema\":\"ompfuse-analysis-1\",\"profiles\":[\n" : ",\n", f);
    fputs("{\"profile\":", f);
    ompf_json_string(f, r->name);
    fputs(",\"mode\":", f);
    ompf_json_string(f, r->mode);
    fprintf(f, ",\"xus\":%zu,\"selected\":%zu,\"threads\":%zu,\"wall_ns\":%llu,\"group_by\":[",
            ompf_xu_count(r->p), r->nsel, r->nthreads, (unsigned long long)(r->t1 - r->t0));
    for (int d = 0; d < r->ndims; d++)
        fprintf(f, "%s\"%s\"", d ? "," : "", adim_names[r->dims[d]]);
    fprintf(f, "],\"depth\":%u,\"columns\":[", r->depth);
    for (size_t c = 0; c < r->ncols; c++) {
        fputs(c ? ",{\"name\":" : "{\"name\":", f);
        ompf_json_string(f, r->cols[c].name);
        fprintf(f, ",\"kind\":\"%s\",\"estimate\":%s", kind_name(r->cols[c].kind),
                r->cols[c].estimate ? "true" : "false");
        if (r->cols[c].kind == ACOL_METRIC) {
            fputs(",\"definition\":", f);
            ompf_json_string(f, r->cols[c].defn);
            fputs(",\"origin\":", f);
            ompf_json_string(f, r->cols[c].origin);
        }
        fputc('}', f);
    }
    fputs("],\"notes\":[", f);
    for (size_t i = 0; i < r->n_notes; i++) {
        if (i)
            fputc(',', f);
        ompf_json_string(f, r->metric_notes[i]);
    }
    fputs("],\"groups\":[", f);
    for (size_t g = 0; g < r->ngroups; g++) {
        const agroup_t *gr = &r->groups[g];
        fputs(g ? ",\n{\"name\":" : "\n{\"name\":", f);
        ompf_json_string(f, gr->name);
        fprintf(f, ",\"gap\":%s,\"key\":{", gr->gap ? "true" : "false");
        int any = 0;
        for (int d = 0; d < ADIM_COUNT; d++) {
            dim_text(r, gr, d, buf, sizeof buf);
            if (!buf[0])
                continue;
            fprintf(f, "%s\"%s\":", any++ ? "," : "", adim_names[d]);
            ompf_json_string(f, buf);
        }
        fprintf(f, "},\"xus\":%zu", gr->xus);
        if (has_subtree(r))
            fprintf(f, ",\"excl_xus\":%zu", gr->excl_xus);
        fputs(",\"columns\":{", f);
        int nc = 0;
        for (size_t c = 0; c < r->ncols; c++) {
            if (gr->gap && r->cols[c].kind == ACOL_METRIC)
                continue;
            fputs(nc++ ? "," : "", f);
            ompf_json_string(f, r->cols[c].name);
            fputc(':', f);
            json_stats(f, r, gr, c);
        }
        fputs("}}", f);
    }
    fputs("],\"top\":[", f);
    for (size_t i = 0; i < r->ntop; i++) {
        const ompf_xu_t *x = ompf_xu_get(r->p, r->top[i]);
        ompf_label_format(r->p, x->label, buf, sizeof buf);
        fprintf(f, "%s\n{\"rank\":%zu,\"xu\":%llu,\"label\":\"%s\",\"construct\":", i ? "," : "",
                i + 1, (unsigned long long)x->id, buf);
        ompf_json_string(f, ares_construct_name(r->p, x->type));
        fprintf(f, ",\"kind\":\"%s\",\"thread\":%u,\"cpu\":%d,\"start_ns\":%llu,\"values\":{",
                ompf_xu_kind_name((ompf_xu_kind_t)x->kind), x->thread, x->cpu,
                (unsigned long long)x->start_ns);
        for (size_t c = 0; c < r->ncols; c++) {
            double v;
            int s = ares_value(r, c, r->top[i], &v);
            fputs(c ? "," : "", f);
            ompf_json_string(f, r->cols[c].name);
            fputc(':', f);
            xfmt(buf, sizeof buf, s == AEV_OK ? v : NAN, "null");
            fputs(buf, f);
        }
        fputs("}}", f);
    }
    fprintf(f, "]");
    if (r->ntop) {
        fputs(",\"top_by\":", f);
        ompf_json_string(f, r->cols[r->top_col].name);
    }
    fputs("}", f);
    return ferror(f) ? OMPF_EIO : 0;
}

void ompf_aresult_json_end(FILE *f, int any)
{
    fputs(any ? "\n]}\n" : "{\"schema\":\"ompfuse-analysis-1\",\"profiles\":[]}\n", f);
}
