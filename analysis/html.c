/*
 * The analysis page: one self-contained HTML file, inline SVG, no script.
 * Every plot is aggregated in C to a fixed resolution so that the page
 * stays small and quick at 10^6 XUs: the timeline to one cell per pixel
 * and thread, distributions to 60 bins, scatter plots to a 48 x 48
 * density grid.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "ompfuse/text.h"

/* viridis, 8 stops */
static const int palette[8][3] = {{68, 1, 84},    {70, 50, 126},  {54, 92, 141},
                                  {39, 127, 142}, {31, 161, 135}, {74, 193, 109},
                                  {160, 218, 57}, {253, 231, 37}};

static void colour(double t, char *buf, size_t len)
{
    if (t < 0)
        t = 0;
    if (t > 1)
        t = 1;
    double x = t * 7;
    int i = (int)x;
    if (i > 6)
        i = 6;
    double f = x - i;
    int c[3];
    for (int k = 0; k < 3; k++)
        c[k] = (int)lround(palette[i][k] + f * (palette[i + 1][k] - palette[i][k]));
    snprintf(buf, len, "#%02x%02x%02x", c[0], c[1], c[2]);
}

/* A column's name, with "*" when its values are HEM estimates. */
static void col_name(FILE *f, const ompf_aresult_t *r, size_t c)
{
    ompf_html_text(f, r->cols[c].name);
    if (r->cols[c].estimate)
        fputs("* (HEM estimate)", f);
}

/* An axis: linear on [lo, hi], or log10 when the values are positive and
 * span more than two decades; values beyond the 1st/99th percentile are
 * clipped to the edge (and counted). */
typedef struct axis {
    double lo, hi;
    int log;
} axis_t;

static axis_t axis_make(const ompf_aresult_t *r, size_t c, const uint32_t *idx, size_t n)
{
    axis_t a = {0, 1, 0};
    double *v = malloc((n + 1) * sizeof *v);
    if (!v)
        return a;
    size_t m = 0, pos = 0;
    for (size_t k = 0; k < n; k++) {
        double x;
        if (ares_value(r, c, idx[k], &x) == AEV_OK && isfinite(x)) {
            v[m++] = x;
            pos += x > 0;
        }
    }
    if (m) {
        double lo = astats_quantile(v, m, 0.0), hi = astats_quantile(v, m, 1.0);
        if (pos == m && hi / lo > 100) {
            a.log = 1;
            a.lo = log10(lo);
            a.hi = log10(hi);
        } else {
            a.lo = astats_quantile(v, m, 0.01);
            a.hi = astats_quantile(v, m, 0.99);
        }
        if (!(a.hi > a.lo))
            a.hi = a.lo + 1;
    }
    free(v);
    return a;
}

/* Position in [0, 1] (clipped); -1 when not placeable (<= 0 on a log axis). */
static double axis_pos(const axis_t *a, double x)
{
    if (a->log) {
        if (!(x > 0))
            return -1;
        x = log10(x);
    }
    double t = (x - a->lo) / (a->hi - a->lo);
    return t < 0 ? 0 : t > 1 ? 1 : t;
}

static void axis_label(const axis_t *a, double t, char *buf, size_t len)
{
    double x = a->lo + t * (a->hi - a->lo);
    afmt(buf, len, a->log ? pow(10, x) : x);
}

/* ---- the table ------------------------------------------------------------ */

static void page_table(const ompf_aresult_t *r, FILE *f)
{
    size_t nev = ompf_event_count(r->p);
    char num[64];
    fputs("<table class=\"groups\"><thead><tr><th>group</th><th>XUs</th><th>time %</th>", f);
    for (size_t c = 1; c < r->ncols; c++) {
        fputs("<th>", f);
        ompf_html_text(f, r->cols[c].name);
        fputs(r->cols[c].estimate ? "*" : "", f);  /* the legend below says what * is */
        fputs(c <= nev ? " (sum, share)" : " (ratio; median, n, missing, zero-den)", f);
        fputs("</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    for (size_t g = 0; g < r->ngroups; g++) {
        const agroup_t *gr = &r->groups[g];
        fprintf(f, "<tr%s><td>", gr->gap ? " class=\"gap\"" : "");
        ompf_html_text(f, gr->name);
        fputs("</td><td class=\"num\">", f);
        if (!gr->gap)
            fprintf(f, "%zu", gr->xus);
        fputs("</td><td class=\"num\">", f);
        if (isnan(gr->share[0]))
            fputs("-", f);
        else
            fprintf(f, "%.2f", 100 * gr->share[0]);
        fputs("</td>", f);
        for (size_t c = 1; c < r->ncols; c++) {
            const astats_t *st = &gr->st[c];
            fputs("<td class=\"num\">", f);
            if (c <= nev) {
                afmt(num, sizeof num, st->sum);
                fputs(num, f);
                if (!isnan(gr->share[c]))
                    fprintf(f, " (%.2f %%)", 100 * gr->share[c]);
                if (st->missing)
                    fprintf(f, " <span class=\"miss\">%zu missing</span>", st->missing);
            } else if (!gr->gap) {
                afmt(num, sizeof num, gr->ratio[c]);
                fputs(num, f);
                afmt(num, sizeof num, st->median);
                fprintf(f, "; %s, %zu", num, st->n);
                if (st->missing || st->zero_den)
                    fprintf(f, " <span class=\"miss\">%zu missing, %zu zero-den</span>",
                            st->missing, st->zero_den);
            }
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
}

/* ---- the timeline --------------------------------------------------------- */

static int page_timeline(const ompf_aresult_t *r, size_t cc, unsigned W, FILE *f)
{
    size_t nth = r->nthreads ? r->nthreads : 1;
    double span = (double)(r->t1 - r->t0);
    if (span <= 0)
        span = 1;
    double pxw = span / W;
    /* per lane and pixel: busy ns, value x overlap, overlap with a value;
     * interiors go through difference arrays so that a long XU costs O(1) */
    size_t cells = nth * (W + 1);
    double *busy = calloc(cells, sizeof *busy), *wv = calloc(cells, sizeof *wv),
           *wt = calloc(cells, sizeof *wt), *dbusy = calloc(cells, sizeof *dbusy),
           *dwv = calloc(cells, sizeof *dwv), *dwt = calloc(cells, sizeof *dwt);
    int rc = (!busy || !wv || !wt || !dbusy || !dwv || !dwt) ? OMPF_ENOMEM : 0;
    axis_t ax = axis_make(r, cc, r->sel, r->nsel);
    for (size_t s = 0; s < r->nsel && !rc; s++) {
        double v, t = -1;
        if (ares_value(r, cc, r->sel[s], &v) == AEV_OK)
            t = axis_pos(&ax, v);
        /* each part where and when it ran (profile.h, "Parts") */
        uint32_t np;
        ompf_part_t one;
        const ompf_part_t *pts = ompf_xu_parts(r->p, r->sel[s], &np, &one);
        for (uint32_t k = 0; k < np; k++) {
            const ompf_part_t *x = &pts[k];
            if (x->thread >= nth)
                continue;
            double a = (double)(x->start_ns - r->t0) / pxw, b = (double)(x->end_ns - r->t0) / pxw;
            size_t ia = (size_t)a, ib = (size_t)b;
            if (ia >= W)
                ia = W - 1;
            if (ib >= W)
                ib = W - 1;
            double *B = busy + x->thread * (W + 1), *V = wv + x->thread * (W + 1),
                   *T = wt + x->thread * (W + 1);
            if (ia == ib) {
                double o = (b - a) * pxw;
                B[ia] += o;
                if (t >= 0)
                    V[ia] += t * o, T[ia] += o;
                continue;
            }
            double oa = ((double)(ia + 1) - a) * pxw, ob = (b - (double)ib) * pxw;
            B[ia] += oa;
            B[ib] += ob;
            if (t >= 0) {
                V[ia] += t * oa, T[ia] += oa;
                V[ib] += t * ob, T[ib] += ob;
            }
            if (ib > ia + 1) {
                double *dB = dbusy + x->thread * (W + 1), *dV = dwv + x->thread * (W + 1),
                       *dT = dwt + x->thread * (W + 1);
                dB[ia + 1] += pxw, dB[ib] -= pxw;
                if (t >= 0)
                    dV[ia + 1] += t * pxw, dV[ib] -= t * pxw, dT[ia + 1] += pxw, dT[ib] -= pxw;
            }
        }
    }
    const unsigned lane = nth > 64 ? 6 : 18, left = 80;
    unsigned h = (unsigned)nth * (lane + 2) + 30;
    if (!rc) {
        fprintf(f,
                "<figure><svg class=\"timeline\" width=\"%u\" height=\"%u\" "
                "xmlns=\"http://www.w3.org/2000/svg\" font-size=\"11\">\n",
                W + left + 10, h);
        for (size_t t = 0; t < nth; t++) {
            double *B = busy + t * (W + 1), *V = wv + t * (W + 1), *T = wt + t * (W + 1);
            double *dB = dbusy + t * (W + 1), *dV = dwv + t * (W + 1), *dT = dwt + t * (W + 1);
            double cb = 0, cv = 0, ct = 0;
            unsigned y = (unsigned)t * (lane + 2) + 4;
            fprintf(f,
                    "<g class=\"lane\" data-thread=\"%zu\"><text x=\"0\" y=\"%u\">thread "
                    "%zu</text><rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" "
                    "fill=\"#eee\"/>",
                    t, y + lane - 5, t, left, y, W, lane);
            /* run-length: adjacent pixels with the same colour and opacity */
            char prev[16] = "", cur[16];
            int prev_op = -1;
            unsigned run0 = 0;
            for (unsigned px = 0; px <= W; px++) {
                int op = -1;
                if (px < W) {
                    cb += dB[px], cv += dV[px], ct += dT[px];
                    double bsy = (B[px] + cb) / pxw, tw = T[px] + ct;
                    if (bsy > 0.02) {
                        op = bsy >= 0.875 ? 4 : bsy >= 0.625 ? 3 : bsy >= 0.375 ? 2 : 1;
                        if (tw > 0)
                            colour(floor((V[px] + cv) / tw * 15.999) / 15, cur, sizeof cur);
                        else
                            snprintf(cur, sizeof cur, "#999999");
                    }
                }
                if (op != prev_op || (op >= 0 && strcmp(cur, prev))) {
                    if (prev_op >= 0)
                        fprintf(f,
                                "<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" "
                                "fill=\"%s\" fill-opacity=\"%.2f\"/>",
                                left + run0, y, px - run0, lane, prev, prev_op / 4.0);
                    run0 = px;
                    prev_op = op;
                    if (op >= 0)
                        memcpy(prev, cur, sizeof prev);
                }
            }
            fputs("</g>\n", f);
        }
        char lo[64], hi[64];
        axis_label(&ax, 0, lo, sizeof lo);
        axis_label(&ax, 1, hi, sizeof hi);
        /* colour legend: 16 steps from lo to hi */
        unsigned lx = left + W - 16 * 12 - 120;
        fprintf(f, "<g class=\"legend\"><text x=\"%u\" y=\"%u\" text-anchor=\"end\">%s</text>",
                lx - 4, h - 4, lo);
        for (int k = 0; k < 16; k++) {
            char col[16];
            colour(k / 15.0, col, sizeof col);
            fprintf(f, "<rect x=\"%u\" y=\"%u\" width=\"12\" height=\"10\" fill=\"%s\"/>",
                    lx + 12 * (unsigned)k, h - 13, col);
        }
        fprintf(f, "<text x=\"%u\" y=\"%u\">%s</text></g>", lx + 16 * 12 + 4, h - 4, hi);
        fprintf(f,
                "<text x=\"%u\" y=\"%u\">0 s</text><text x=\"%u\" y=\"%u\" "
                "text-anchor=\"end\">%.6f s</text></svg>\n<figcaption>One lane per thread, "
                "%u pixels for %.6f s (%.3g us per pixel).  Colour: ",
                left, h - 4, left + W, h - 4, span * 1e-9, W, span * 1e-9, pxw * 1e-3);
        col_name(f, r, cc);
        fprintf(f,
                " per XU (overlap-weighted mean in a pixel), %s scale %s to %s, dark to "
                "yellow; grey: values missing; opacity: busy fraction of the pixel; the "
                "light background is the gap.</figcaption></figure>\n",
                ax.log ? "log" : "linear (1st-99th percentile)", lo, hi);
    }
    free(busy), free(wv), free(wt), free(dbusy), free(dwv), free(dwt);
    return rc;
}

/* ---- distributions and scatter plots per construct ------------------------ */

/* XU indices of the selection grouped by construct, largest first. */
typedef struct cgroup {
    uint32_t type;
    size_t n;
    uint32_t *idx;
} cgroup_t;

static int cg_cmp(const void *a, const void *b)
{
    const cgroup_t *x = a, *y = b;
    return x->n != y->n ? (x->n < y->n ? 1 : -1) : (x->type < y->type ? -1 : 1);
}

static cgroup_t *by_construct(const ompf_aresult_t *r, size_t *ncg, uint32_t **store)
{
    size_t nc = ompf_construct_count(r->p);
    cgroup_t *g = calloc(nc + 1, sizeof *g);
    *store = malloc((r->nsel + 1) * sizeof **store);
    if (!g || !*store) {
        free(g);
        free(*store);
        return NULL;
    }
    for (size_t s = 0; s < r->nsel; s++)
        g[r->canon[ompf_xu_get(r->p, r->sel[s])->type]].n++;
    size_t off = 0;
    for (size_t c = 0; c < nc; c++) {
        g[c].type = (uint32_t)c;
        g[c].idx = *store + off;
        off += g[c].n;
        g[c].n = 0;
    }
    for (size_t s = 0; s < r->nsel; s++) {
        cgroup_t *x = &g[r->canon[ompf_xu_get(r->p, r->sel[s])->type]];
        x->idx[x->n++] = r->sel[s];
    }
    qsort(g, nc, sizeof *g, cg_cmp);
    *ncg = nc;
    while (*ncg && !g[*ncg - 1].n)
        (*ncg)--;
    return g;
}

static void page_distributions(const ompf_aresult_t *r, size_t cc, const cgroup_t *g,
                               size_t ng, FILE *f)
{
    enum { BINS = 60, BW = 12, ROW = 16, LEFT = 300 };
    if (ng > 30)
        ng = 30;
    axis_t ax = axis_make(r, cc, r->sel, r->nsel);
    unsigned h = (unsigned)ng * ROW + 24;
    fprintf(f, "<figure><svg class=\"dist\" width=\"%d\" height=\"%u\" font-size=\"11\" "
               "xmlns=\"http://www.w3.org/2000/svg\">\n", LEFT + BINS * BW + 10, h);
    for (size_t k = 0; k < ng; k++) {
        size_t hist[BINS] = {0}, maxc = 0, off = 0;
        for (size_t i = 0; i < g[k].n; i++) {
            double v;
            if (ares_value(r, cc, g[k].idx[i], &v) != AEV_OK)
                continue;
            double t = axis_pos(&ax, v);
            if (t < 0) {
                off++;
                continue;
            }
            size_t b = (size_t)(t * (BINS - 1e-9));
            if (++hist[b] > maxc)
                maxc = hist[b];
        }
        unsigned y = (unsigned)k * ROW + 2;
        /* the label must end before the bars (LEFT px at about 6 px a
         * character): a long name keeps its end, the whole one is the
         * row's tooltip */
        char label[4400];
        snprintf(label, sizeof label, "%s (%zu%s)", ares_construct_name(r->p, g[k].type),
                 g[k].n, off ? ", some <= 0 not shown" : "");
        size_t len = strlen(label), fit = (LEFT - 12) / 6;
        fprintf(f, "<g class=\"drow\"><title>");
        ompf_html_text(f, label);
        fprintf(f, "</title><text x=\"0\" y=\"%u\">", y + 11);
        if (len > fit) {
            const char *tail = label + len - (fit - 1);
            while ((*tail & 0xC0) == 0x80) /* not inside a UTF-8 character */
                tail++;
            fputs("\xe2\x80\xa6", f); /* ... */
            ompf_html_text(f, tail);
        } else {
            ompf_html_text(f, label);
        }
        fputs("</text>", f);
        for (int b = 0; b < BINS; b++)
            if (hist[b])
                fprintf(f, "<rect x=\"%d\" y=\"%u\" width=\"%d\" height=\"%d\" fill=\"#1f77b4\" "
                           "fill-opacity=\"%.2f\"/>",
                        LEFT + b * BW, y, BW, ROW - 3,
                        0.15 + 0.85 * sqrt((double)hist[b] / (double)maxc));
        fputs("</g>\n", f);
    }
    char lo[64], hi[64];
    axis_label(&ax, 0, lo, sizeof lo);
    axis_label(&ax, 1, hi, sizeof hi);
    fprintf(f, "<text x=\"%d\" y=\"%u\">%s</text><text x=\"%d\" y=\"%u\" text-anchor=\"end\">"
               "%s</text></svg><figcaption>Distribution of ",
            LEFT, h - 4, lo, LEFT + BINS * BW, h - 4, hi);
    col_name(f, r, cc);
    fprintf(f, " per XU and construct (%d bins, %s axis; darker: more XUs, square-root "
               "scale).</figcaption></figure>\n",
            BINS, ax.log ? "log" : "linear, clipped at the 1st and 99th percentiles");
}

static void page_scatter(const ompf_aresult_t *r, size_t sx, size_t sy, const cgroup_t *g,
                         size_t ng, FILE *f)
{
    enum { N = 48, CELL = 5, PAD = 40 };
    if (ng > 6)
        ng = 6;
    fputs("<div class=\"multi\">\n", f);
    for (size_t k = 0; k < ng; k++) {
        axis_t ax = axis_make(r, sx, g[k].idx, g[k].n), ay = axis_make(r, sy, g[k].idx, g[k].n);
        static size_t grid[N][N];
        memset(grid, 0, sizeof grid);
        size_t maxc = 0, used = 0, skipped = 0;
        for (size_t i = 0; i < g[k].n; i++) {
            double x, y;
            if (ares_value(r, sx, g[k].idx[i], &x) != AEV_OK ||
                ares_value(r, sy, g[k].idx[i], &y) != AEV_OK) {
                skipped++;
                continue;
            }
            double tx = axis_pos(&ax, x), ty = axis_pos(&ay, y);
            if (tx < 0 || ty < 0) {
                skipped++;
                continue;
            }
            size_t bx = (size_t)(tx * (N - 1e-9)), by = (size_t)(ty * (N - 1e-9));
            used++;
            if (++grid[by][bx] > maxc)
                maxc = grid[by][bx];
        }
        fprintf(f, "<figure style=\"width:%dpx\"><svg class=\"scatter\" width=\"%d\" "
                   "height=\"%d\" font-size=\"10\" xmlns=\"http://www.w3.org/2000/svg\">"
                   "<rect x=\"%d\" y=\"4\" width=\"%d\" height=\"%d\" fill=\"none\" "
                   "stroke=\"#999\"/>",
                N * CELL + PAD + 10, N * CELL + PAD + 10, N * CELL + PAD + 14, PAD, N * CELL,
                N * CELL);
        for (int by = 0; by < N; by++)
            for (int bx = 0; bx < N; bx++)
                if (grid[by][bx]) {
                    char col[16];
                    colour(log1p((double)grid[by][bx]) / log1p((double)maxc), col, sizeof col);
                    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>",
                            PAD + bx * CELL, 4 + (N - 1 - by) * CELL, CELL, CELL, col);
                }
        char a[64], b[64];
        axis_label(&ax, 0, a, sizeof a);
        axis_label(&ax, 1, b, sizeof b);
        fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text><text x=\"%d\" y=\"%d\" "
                   "text-anchor=\"end\">%s</text>",
                PAD, N * CELL + 16, a, PAD + N * CELL, N * CELL + 16, b);
        axis_label(&ay, 0, a, sizeof a);
        axis_label(&ay, 1, b, sizeof b);
        fprintf(f, "<text x=\"0\" y=\"%d\">%s</text><text x=\"0\" y=\"14\">%s</text>", N * CELL,
                a, b);
        /* axis titles: what is plotted, on the plot itself */
        fprintf(f, "<text class=\"xtitle\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", PAD + N * CELL / 2,
                N * CELL + 30);
        col_name(f, r, sx);
        fprintf(f, "%s</text><text class=\"ytitle\" transform=\"translate(12,%d) rotate(-90)\" "
                   "text-anchor=\"middle\">", ax.log ? " (log)" : "", 4 + N * CELL / 2);
        col_name(f, r, sy);
        fprintf(f, "%s</text></svg><figcaption>", ay.log ? " (log)" : "");
        ompf_html_text(f, ares_construct_name(r->p, g[k].type));
        fprintf(f, ": %zu XUs (%zu without both values); x %s, y %s</figcaption></figure>\n",
                used, skipped, ax.log ? "log" : "clipped 1-99 %", ay.log ? "log" : "clipped 1-99 %");
    }
    fputs("</div>\n<p class=\"note\">Density of XUs on a 48 x 48 grid (colour: log of the count); "
          "x: ", f);
    col_name(f, r, sx);
    fputs(", y: ", f);
    col_name(f, r, sy);
    fputs(".  Values beyond the clip are drawn on the edge.</p>\n", f);
}

/* The column named name (dflt when NULL); -1 with err set when none. */
static int pick(const ompf_aresult_t *r, const char *name, const char *what, int dflt,
                ompf_error_t *err)
{
    if (!name)
        return dflt;
    int c = ares_find_col(r, name);
    if (c < 0) {
        char sug[300];
        ares_col_suggest(r, name, sug, sizeof sug);
        ompf_error_set(err, OMPF_EUSAGE,
                       "%s '%s', position 1: no such column in %s (duration_ns, an event or a "
                       "metric)%s",
                       what, name, r->name, sug);
    }
    return c;
}

int ompf_aresult_write_html(const ompf_aresult_t *r, const ompf_page_opts_t *o, FILE *f,
                            ompf_error_t *err)
{
    size_t nev = ompf_event_count(r->p);
    int dcol = r->ncols > 1 + nev ? (int)(1 + nev) : nev ? 1 : 0;
    int cc = pick(r, o->colour, "--colour", dcol, err);
    int sx = pick(r, o->sx, "--scatter", nev >= 2 ? 1 : 0, err);
    /* default y: the first derived metric (a ratio of events, the reason
       to fuse), else the second event */
    int sy = pick(r, o->sy, "--scatter",
                  r->ncols > 1 + nev ? (int)(1 + nev) : nev >= 2 ? 2 : nev ? 1 : 0, err);
    if (cc < 0 || sx < 0 || sy < 0)
        return OMPF_EUSAGE;
    unsigned W = o->width ? o->width : 1200;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>ompfuse "
          "analyze: ", f);
    ompf_html_text(f, r->name);
    fputs("</title>\n<style>\n"
          "body{font-family:sans-serif;margin:20px;color:#222}\n"
          "h1{font-size:22px} h2{font-size:19px;border-bottom:1px solid #ccc;"
          "padding-bottom:4px;margin-top:30px}\n"
          "table{border-collapse:collapse;font-size:13px;margin:8px 0}\n"
          "td,th{border:1px solid #ccc;padding:3px 7px;text-align:left}\n"
          "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
          "tr.gap{color:#777} .miss{color:#b00;font-size:11px}\n"
          ".multi{display:flex;flex-wrap:wrap;gap:10px}\n"
          "figure{margin:8px 0} figcaption{font-size:12px;color:#555;max-width:1100px}\n"
          "p.note{font-size:13px;color:#444}\n</style></head><body>\n<h1>ompfuse analyze: ", f);
    ompf_html_text(f, r->name);
    fprintf(f, "</h1>\n<p class=\"note\">mode %s, %zu XUs (%zu selected), %zu threads, wall "
               "%.6f s.  Shares are of the run's total including the threads' gap buckets.%s</p>\n",
            r->mode, ompf_xu_count(r->p), r->nsel, r->nthreads, (double)(r->t1 - r->t0) * 1e-9,
            r->estimates ? "  * marks HEM estimates." : "");
    for (size_t i = 0; i < r->n_notes; i++) {
        fputs("<p class=\"note\">", f);
        ompf_html_text(f, r->metric_notes[i]);
        fputs("</p>\n", f);
    }
    fputs("<h2>Groups</h2>\n", f);
    page_table(r, f);
    for (size_t c = 1 + nev; c < r->ncols; c++) {
        fputs("<p class=\"note\">", f);
        ompf_html_text(f, r->cols[c].defn);
        fputs(" (", f);
        ompf_html_text(f, r->cols[c].origin);
        fputs(")</p>\n", f);
    }
    fputs("<h2>Timeline</h2>\n", f);
    if (page_timeline(r, (size_t)cc, W, f))
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    size_t ng = 0;
    uint32_t *store = NULL;
    cgroup_t *g = by_construct(r, &ng, &store);
    if (!g)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    fputs("<h2>Distributions per construct</h2>\n", f);
    page_distributions(r, (size_t)cc, g, ng, f);
    fputs("<h2>Scatter plots per construct</h2>\n", f);
    page_scatter(r, (size_t)sx, (size_t)sy, g, ng, f);
    fputs("</body></html>\n", f);
    free(g);
    free(store);
    return ferror(f) ? ompf_error_set(err, OMPF_EIO, "writing the page failed") : 0;
}
