/* The report's scatter plots: the XUs of a target and of a reference
 * repeat for one event pair.
 *
 * Two things make a plain scatter unreadable on real profiles: one outlier
 * sets a linear axis (a host pause, a HEM estimate far off), and thousands
 * of XUs with the same small counts sit on one pixel.  So each axis spans
 * the 0.5-99.5 % quantiles of the values drawn (points beyond are drawn at
 * the edge and counted in the legend), and the XUs are binned into 3-pixel
 * cells, drawn as one dot per cell whose size and opacity grow with the
 * number of XUs in it (data-n).  Every XU is counted; none is sampled away.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/evaluate.h"
#include "ompfuse/select.h"
#include "ompfuse/text.h"
#include "report_internal.h"

#define CELL 3.0 /* pixels per density cell */

typedef struct series {
    const ompf_profile_t *p;
    int ia, ib;           /* event columns */
    size_t total, without; /* XUs; XUs lacking one of the two values */
    size_t beyond;         /* drawn at the edge */
} series_t;

/* Widens lo/hi (per axis) to the 0.5 and 99.5 % quantiles of the XUs of
 * s that have both values, both axes in one pass; 0 when there are none. */
static int series_range(const series_t *s, double lo[2], double hi[2])
{
    size_t nx = ompf_xu_count(s->p), n = 0;
    double *v = malloc(2 * (nx ? nx : 1) * sizeof *v), *w = v + (nx ? nx : 1);
    if (!v)
        return 0;
    for (size_t i = 0; i < nx; i++) {
        const double *row = ompf_xu_values_const(s->p, i);
        if (!isnan(row[s->ia]) && !isnan(row[s->ib])) {
            v[n] = row[s->ia];
            w[n++] = row[s->ib];
        }
    }
    size_t kl = n ? (size_t)floor(0.005 * (double)(n - 1)) : 0;
    size_t kh = n ? (size_t)ceil(0.995 * (double)(n - 1)) : 0;
    for (int d = 0; d < 2 && n; d++) {
        double *c = d ? w : v;
        ompf_select_k(c, n, kl);
        double l = c[kl];
        ompf_select_k(c, n, kh);
        double h = c[kh];
        lo[d] = l < lo[d] ? l : lo[d];
        hi[d] = h > hi[d] ? h : hi[d];
    }
    free(v);
    return n > 0;
}

void ompf__report_scatter_ref(const ompf_report_group_t *g, size_t pair, double lo[2],
                              double hi[2])
{
    lo[0] = lo[1] = INFINITY;
    hi[0] = hi[1] = -INFINITY;
    ompf_eval_pair_info_t in;
    ompf_eval_pair_info(g->eval, pair, &in);
    if (!in.grid)
        return;
    series_t s = {.p = g->refs[in.repeat_refs[0]]};
    s.ia = ompf_event_find(s.p, ompf_eval_event_name(g->eval, in.ev[0]));
    s.ib = ompf_event_find(s.p, ompf_eval_event_name(g->eval, in.ev[1]));
    if (s.ia >= 0 && s.ib >= 0)
        series_range(&s, lo, hi);
}

static void axes(FILE *f, const double lo[2], const double hi[2], double ml, double mt,
                 double pw, double ph)
{
#define SX(v) (ml + pw * ((v) - lo[0]) / (hi[0] - lo[0]))
#define SY(v) (mt + ph * (1 - ((v) - lo[1]) / (hi[1] - lo[1])))
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
               "fill=\"none\" stroke=\"#000\"/>\n",
            ml, mt, pw, ph);
    for (int d = 0; d < 2; d++) {
        double step = ompf__nice_step((hi[d] - lo[d]) / 4);
        for (double v = ceil(lo[d] / step) * step; v <= hi[d]; v += step) {
            char b[32];
            ompf__fmt_val(b, sizeof b, fabs(v) < step * 1e-9 ? 0 : v);
            if (d == 0)
                fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                           "y2=\"%.1f\" stroke=\"#000\"/><text x=\"%.1f\" "
                           "y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">"
                           "%s</text>\n",
                        SX(v), SX(v), mt + ph, mt + ph + 4, SX(v), mt + ph + 16, b);
            else
                fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                           "y2=\"%.1f\" stroke=\"#000\"/><text x=\"%.1f\" "
                           "y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">"
                           "%s</text>\n",
                        ml - 4, ml, SY(v), SY(v), ml - 6, SY(v) + 4, b);
        }
    }
#undef SX
#undef SY
}

/* One series as density cells: returns the number of cells drawn. */
static size_t draw_series(FILE *f, series_t *s, const char *cls, const char *colour,
                          const double lo[2], const double hi[2], double ml, double mt,
                          double pw, double ph)
{
    size_t ncx = (size_t)ceil(pw / CELL), ncy = (size_t)ceil(ph / CELL);
    uint32_t *cnt = calloc(ncx * ncy, sizeof *cnt);
    if (!cnt)
        return 0;
    size_t nx = ompf_xu_count(s->p);
    s->total = nx;
    for (size_t i = 0; i < nx; i++) {
        const double *row = ompf_xu_values_const(s->p, i);
        double v[2] = {row[s->ia], row[s->ib]};
        if (isnan(v[0]) || isnan(v[1])) {
            s->without++;
            continue;
        }
        int out = 0;
        size_t c[2];
        size_t nc[2] = {ncx, ncy};
        for (int d = 0; d < 2; d++) {
            double u = (v[d] - lo[d]) / (hi[d] - lo[d]);
            if (u < 0 || u > 1) {
                out = 1;
                u = u < 0 ? 0 : 1;
            }
            size_t k = (size_t)(u * (double)nc[d]);
            c[d] = k >= nc[d] ? nc[d] - 1 : k;
        }
        s->beyond += out;
        if (cnt[c[1] * ncx + c[0]] < UINT32_MAX)
            cnt[c[1] * ncx + c[0]]++;
    }
    /* the reference as rings, so that a target dot on the same cell
     * leaves it visible */
    int ring = !strcmp(cls, "reference");
    fprintf(f, "<g class=\"series\" data-series=\"%s\" %s=\"%s\"%s>\n", cls,
            ring ? "stroke" : "fill", colour, ring ? " fill=\"none\"" : "");
    size_t cells = 0;
    for (size_t y = 0; y < ncy; y++)
        for (size_t x = 0; x < ncx; x++) {
            uint32_t n = cnt[y * ncx + x];
            if (!n)
                continue;
            double l2 = log2((double)n);
            double r = 1.6 + 0.7 * l2, op = 0.35 + 0.12 * l2;
            fprintf(f, "<circle data-n=\"%u\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" "
                       "%s-opacity=\"%.2f\"/>\n",
                    n, ml + ((double)x + 0.5) * CELL, mt + ph - ((double)y + 0.5) * CELL,
                    (r > 5 ? 5 : r) + ring * 1.5, ring ? "stroke" : "fill",
                    op > 0.9 ? 0.9 : op);
            cells++;
        }
    fprintf(f, "</g>\n");
    free(cnt);
    return cells;
}

void ompf__report_scatter(FILE *f, const ompf_report_group_t *g, size_t t, size_t pair,
                          int gi, const double ref_lo[2], const double ref_hi[2])
{
    const ompf_eval_t *ev = g->eval;
    ompf_eval_pair_info_t in;
    ompf_eval_pair_info(ev, pair, &in);
    const char *na = ompf_eval_event_name(ev, in.ev[0]);
    const char *nb = ompf_eval_event_name(ev, in.ev[1]);
    series_t s[2];
    memset(s, 0, sizeof s);
    s[0].p = g->refs[in.repeat_refs[0]];
    s[1].p = g->targets[t].profile;
    s[0].ia = ompf_event_find(s[0].p, na);
    s[0].ib = ompf_event_find(s[0].p, nb);
    if (!in.grid || s[0].ia < 0 || s[0].ib < 0)
        return;
    s[1].ia = s[1].p ? ompf_event_find(s[1].p, na) : -1;
    s[1].ib = s[1].p ? ompf_event_find(s[1].p, nb) : -1;
    int have_t = s[1].ia >= 0 && s[1].ib >= 0;
    const ompf_grid_t *gr = in.grid;
    /* Axes: the union of each series' 0.5-99.5 % quantile ranges (the
     * reference's computed once per pair by ompf__report_scatter_ref). */
    double lo[2] = {ref_lo[0], ref_lo[1]}, hi[2] = {ref_hi[0], ref_hi[1]};
    if (have_t)
        series_range(&s[1], lo, hi);
    for (int d = 0; d < 2; d++) {
        if (!(lo[d] <= hi[d]))
            lo[d] = hi[d] = gr->lo[d];
        double pad = (hi[d] - lo[d]) * 0.04;
        if (pad <= 0)
            pad = fabs(lo[d]) > 1 ? fabs(lo[d]) * 0.02 : 0.5;
        lo[d] -= pad;
        hi[d] += pad;
    }
    const double W = 360, H = 340, ml = 58, mr = 12, mt = 26, mb = 78;
    double pw = W - ml - mr, ph = H - mt - mb;
    const char *colour = ompf__target_colour(g->targets[t].name);
    fprintf(f, "<svg class=\"scatter\" data-group=\"%d\" data-target=\"", gi);
    ompf_html_text(f, g->targets[t].name);
    fprintf(f, "\" data-pair=\"");
    ompf_html_text(f, na);
    fputc(',', f);
    ompf_html_text(f, nb);
    fprintf(f, "\" data-x0=\"%.17g\" data-x1=\"%.17g\" data-y0=\"%.17g\" data-y1=\"%.17g\" "
               "data-plot=\"%.0f %.0f %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" xmlns=\"http://www.w3.org/2000/svg\">\n"
               "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n",
            lo[0], hi[0], lo[1], hi[1], ml, mt, pw, ph, W, H, W, H, W, H);
    fprintf(f, "<text x=\"%.1f\" y=\"17\" font-size=\"13\" font-weight=\"bold\" "
               "text-anchor=\"middle\">",
            ml + pw / 2);
    ompf_html_text(f, g->targets[t].name);
    const ompf_eval_result_t *r = g->targets[t].result;
    if (r && r->pairs[pair].evaluated)
        fprintf(f, ": TMD %.3g", r->pairs[pair].tmd);
    fputs("</text>\n", f);
    /* histogram grid: the intervals between the reference bounds that fall
     * inside the axes */
    for (unsigned k = 0; k <= gr->n; k++) {
        double x = gr->lo[0] + gr->width[0] * k, y = gr->lo[1] + gr->width[1] * k;
        if (x > lo[0] && x < hi[0])
            fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n",
                    ml + pw * (x - lo[0]) / (hi[0] - lo[0]),
                    ml + pw * (x - lo[0]) / (hi[0] - lo[0]), mt, mt + ph);
        if (y > lo[1] && y < hi[1])
            fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n",
                    ml, ml + pw, mt + ph * (1 - (y - lo[1]) / (hi[1] - lo[1])),
                    mt + ph * (1 - (y - lo[1]) / (hi[1] - lo[1])));
    }
    /* reference first (grey), target on top (its colour) */
    draw_series(f, &s[0], "reference", "#555", lo, hi, ml, mt, pw, ph);
    if (have_t)
        draw_series(f, &s[1], "target", colour, lo, hi, ml, mt, pw, ph);
    axes(f, lo, hi, ml, mt, pw, ph);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">",
            ml + pw / 2, mt + ph + 31);
    ompf_html_text(f, ompf__short_ev(na));
    fprintf(f, " per XU</text>\n<text x=\"13\" y=\"%.1f\" font-size=\"11\" "
               "text-anchor=\"middle\" transform=\"rotate(-90 13 %.1f)\">",
            mt + ph / 2, mt + ph / 2);
    ompf_html_text(f, ompf__short_ev(nb));
    fputs(" per XU</text>\n", f);
    /* legend: what each colour is and what was not drawn where it lies */
    fprintf(f, "<circle cx=\"12\" cy=\"%.1f\" r=\"4\" fill=\"none\" stroke=\"#555\"/>"
               "<text class=\"legend\" data-series=\"reference\" data-beyond=\"%zu\" "
               "x=\"20\" y=\"%.1f\" font-size=\"11\">reference: %zu XUs, %zu at the edge"
               "</text>\n",
            H - 27, s[0].beyond, H - 23, s[0].total - s[0].without, s[0].beyond);
    if (have_t)
        fprintf(f, "<circle cx=\"12\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/><text "
                   "class=\"legend\" data-series=\"target\" data-beyond=\"%zu\" "
                   "data-without=\"%zu\" x=\"20\" y=\"%.1f\" font-size=\"11\">target: %zu "
                   "XUs, %zu at the edge, %zu without a value</text>\n",
                H - 11, colour, s[1].beyond, s[1].without, H - 7,
                s[1].total - s[1].without, s[1].beyond, s[1].without);
    else
        fprintf(f, "<text x=\"20\" y=\"%.1f\" font-size=\"11\">target lacks these "
                   "events</text>\n",
                H - 7);
    fputs("</svg>\n", f);
}
