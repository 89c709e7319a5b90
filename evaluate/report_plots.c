/* The report's SVG plots (report.c writes the page around them): EPD bars
 * per target, TMD heatmaps per event pair, scatter plots of XUs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/evaluate.h"
#include "ompfuse/text.h"
#include "report_internal.h"

/* A round step (1, 2 or 5 times a power of ten) near x. */
static double nice_step(double x)
{
    if (!(x > 0))
        return 1;
    double p = pow(10, floor(log10(x))), m = x / p;
    return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
}

/* ---- 1. EPD bars --------------------------------------------------------- */

/* Whiskers: the EPD taken with the closest and with the farthest reference
 * repeat of each pair instead of the median (the papers' "maximum
 * variation across the reference repetitions").  Not with per_type, where
 * the pair TMD combines types. */
static void epd_spread(const ompf_report_group_t *g,
                       const ompf_eval_result_t *r, double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (!r || g->per_type || !r->pairs_evaluated)
        return;
    double sl = 0, sh = 0;
    size_t n = 0;
    int zero = 0;
    for (size_t i = 0; i < r->pairs_total; i++) {
        const ompf_eval_pair_result_t *p = &r->pairs[i];
        if (!p->evaluated || !p->uncalibrated || !p->repeats)
            continue;
        double mn = INFINITY, mx = 0;
        for (size_t k = 0; k < p->repeats; k++) {
            if (p->uncalibrated[k] < mn)
                mn = p->uncalibrated[k];
            if (p->uncalibrated[k] > mx)
                mx = p->uncalibrated[k];
        }
        if (mn <= 0)
            zero = 1;
        else
            sl += log(mn / p->calibration);
        sh += mx > 0 ? log(mx / p->calibration) : 0;
        n++;
    }
    if (!n)
        return;
    *lo = zero ? 0 : exp(sl / (double)n);
    *hi = exp(sh / (double)n);
}

void ompf__epd_bars(FILE *f, const ompf_report_group_t *g, int gi)
{
    const double W = 1100, H = 400, ml = 80, mr = 170, mt = 30, mb = 90;
    double pw = W - ml - mr, ph = H - mt - mb;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t t = 0; t < g->ntargets; t++) {
        double e = g->targets[t].result ? g->targets[t].result->epd : NAN;
        if (isnan(e))
            continue;
        double wl, wh;
        epd_spread(g, g->targets[t].result, &wl, &wh);
        if (e > 0 && e < lo)
            lo = e;
        if (wl > 0 && wl < lo)
            lo = wl;
        if (e > hi)
            hi = e;
        if (wh > hi)
            hi = wh;
    }
    if (!(lo < INFINITY))
        lo = 1;
    if (!(hi > -INFINITY))
        hi = 1;
    if (lo > 1)
        lo = 1;
    if (hi < 1)
        hi = 1;
    /* log axis when the values span more than ~1 decade */
    int logy = hi / lo > 8;
    double y0, y1;
    if (logy) {
        y0 = pow(10, floor(log10(lo * 0.9)));
        y1 = pow(10, ceil(log10(hi * 1.1)));
    } else {
        y0 = 0;
        double step = hi * 1.15 > 5 ? 1 : hi * 1.15 > 2 ? 0.5 : 0.25;
        y1 = ceil(hi * 1.15 / step) * step;
    }
#define YPOS(v) (logy ? mt + ph * (1 - (log10(v) - log10(y0)) / (log10(y1) - log10(y0))) \
                      : mt + ph * (1 - ((v) - y0) / (y1 - y0)))
    fprintf(f,
            "<figure><svg class=\"epd-bars\" data-group=\"%d\" "
            "data-series=\"epd\" data-scale=\"%s\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">\n",
            gi, logy ? "log" : "linear", W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
               "fill=\"white\"/>\n", W, H);
    /* grid and y ticks */
    if (logy) {
        for (double d = y0; d <= y1 * 1.0001; d *= 10) {
            for (int m = 1; m < 10; m++) {
                double v = d * m;
                if (v > y1 * 1.0001)
                    break;
                double y = YPOS(v);
                fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                           "y2=\"%.1f\" stroke=\"%s\"/>\n",
                        ml, ml + pw, y, y, m == 1 ? "#ccc" : "#eee");
                if (m == 1 || ((m == 2 || m == 5) && y1 / y0 <= 1000)) {
                    char b[32];
                    ompf__fmt_val(b, sizeof b, v);
                    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
                               "text-anchor=\"end\">%s</text>\n",
                            ml - 6, y + 4, b);
                }
            }
        }
    } else {
        double step = (y1 - y0) > 5 ? 1 : (y1 - y0) > 2 ? 0.5 : 0.25;
        if (y1 - y0 > 12)
            step = ceil((y1 - y0) / 10);
        for (double v = y0; v <= y1 + 1e-9; v += step) {
            double y = YPOS(v);
            fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                       "stroke=\"#ddd\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
                       "font-size=\"12\" text-anchor=\"end\">%g</text>\n",
                    ml, ml + pw, y, y, ml - 6, y + 4, v);
        }
    }
    /* bars */
    size_t n = g->ntargets ? g->ntargets : 1;
    double slot = pw / (double)n, bw = slot * 0.6;
    if (bw > 90)
        bw = 90;
    for (size_t t = 0; t < g->ntargets; t++) {
        const ompf_report_target_t *tg = &g->targets[t];
        double e = tg->result ? tg->result->epd : NAN;
        double x = ml + slot * ((double)t + 0.5);
        char b[32];
        ompf__fmt_val(b, sizeof b, e);
        if (!isnan(e)) {
            double v = e;
            if (logy && v < y0)
                v = y0;
            double y = YPOS(v), ybase = mt + ph;
            fprintf(f, "<rect class=\"bar\" data-target=\"");
            ompf_html_text(f, tg->name);
            fprintf(f, "\" data-value=\"%.17g\" x=\"%.1f\" y=\"%.1f\" "
                       "width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                       "<title>",
                    e, x - bw / 2, y, bw, ybase - y > 0 ? ybase - y : 0,
                    ompf__palette[t % OMPF__NPAL]);
            ompf_html_text(f, tg->name);
            fprintf(f, ": EPD %s</title></rect>\n", b);
            double wl, wh;
            epd_spread(g, tg->result, &wl, &wh);
            if (!isnan(wl) && !isnan(wh)) {
                double yl = YPOS(logy && wl < y0 ? y0 : wl), yh = YPOS(wh);
                fprintf(f, "<g class=\"whisker\" data-lo=\"%.17g\" "
                           "data-hi=\"%.17g\" stroke=\"#222\">"
                           "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                           "y2=\"%.1f\"/><line x1=\"%.1f\" x2=\"%.1f\" "
                           "y1=\"%.1f\" y2=\"%.1f\"/><line x1=\"%.1f\" "
                           "x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/></g>\n",
                        wl, wh, x, x, yl, yh, x - 6, x + 6, yl, yl, x - 6,
                        x + 6, yh, yh);
            }
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
                       "text-anchor=\"start\">%s</text>\n",
                    x + bw / 2 + 3, y + 12 < mt + ph - 2 ? y + 12 : mt + ph - 2,
                    b);
        } else {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
                       "text-anchor=\"middle\">n/a</text>\n",
                    x, mt + ph - 5);
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" "
                   "text-anchor=\"end\" transform=\"rotate(-35 %.1f %.1f)\">",
                x + 4, mt + ph + 16, x + 4, mt + ph + 16);
        ompf_html_text(f, tg->name);
        fputs("</text>\n", f);
    }
    /* calibration line at 1.0 */
    double yc = YPOS(1.0);
    fprintf(f, "<line class=\"calibration\" data-value=\"1\" x1=\"%.1f\" "
               "x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" "
               "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
            ml, ml + pw, yc, yc);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">"
               "<tspan x=\"%.1f\">calibration = 1.0</tspan><tspan x=\"%.1f\" "
               "dy=\"15\">(reference vs reference)</tspan></text>\n",
            ml + pw + 8, yc - 2, ml + pw + 8, ml + pw + 8);
    /* axes */
    fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
               "stroke=\"#000\"/>\n<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
               "y2=\"%.1f\" stroke=\"#000\"/>\n",
            ml, ml, mt, mt + ph, ml, ml + pw, mt + ph, mt + ph);
    fprintf(f, "<text x=\"20\" y=\"%.1f\" font-size=\"13\" "
               "text-anchor=\"middle\" transform=\"rotate(-90 20 %.1f)\">"
               "EPD%s, lower is better</text>\n",
            mt + ph / 2, mt + ph / 2, logy ? " (log scale)" : "");
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" "
               "text-anchor=\"middle\">target profile</text>\n",
            ml + pw / 2, H - 10);
    fputs("</svg><figcaption>Execution Profile Dissimilarity per target: "
          "geometric mean over event pairs of the calibrated TMD (median "
          "over the reference repeats). The dashed line is the calibration: "
          "a profile at 1.0 is as close to the references as two reference "
          "runs are to each other.",
          f);
    if (!g->per_type)
        fputs(" Whiskers: the same mean with the closest and with the "
              "farthest repeat of each pair instead of the median.",
              f);
    fputs("</figcaption></figure>\n", f);
#undef YPOS
}

/* ---- 2. heatmaps ---------------------------------------------------------- */

/* Diverging colour of log10(tmd) in [-1, 2]: blue below 1, white at 1,
 * red above. */
static void tmd_colour(double tmd, char *buf, size_t n)
{
    if (isnan(tmd)) {
        snprintf(buf, n, "#bbbbbb");
        return;
    }
    double l = tmd > 0 ? log10(tmd) : -1;
    int r, g, b;
    if (l < 0) {
        double t = l < -1 ? 1 : -l;
        r = (int)(255 - t * (255 - 33));
        g = (int)(255 - t * (255 - 102));
        b = (int)(255 - t * (255 - 172));
    } else {
        double t = l > 2 ? 1 : l / 2;
        r = (int)(255 - t * (255 - 178));
        g = (int)(255 - t * (255 - 24));
        b = (int)(255 - t * (255 - 43));
    }
    snprintf(buf, n, "#%02x%02x%02x", r, g, b);
}

void ompf__heat_legend(FILE *f)
{
    const double W = 420, H = 56;
    fprintf(f, "<svg class=\"tmd-legend\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" xmlns=\"http://www.w3.org/2000/svg\">"
               "\n",
            W, H, W, H);
    for (int i = 0; i < 60; i++) {
        double l = -1 + 3.0 * i / 59.0;
        char c[16];
        tmd_colour(pow(10, l), c, sizeof c);
        fprintf(f, "<rect x=\"%.1f\" y=\"6\" width=\"6\" height=\"16\" "
                   "fill=\"%s\"/>\n",
                20 + i * 6.0, c);
    }
    static const double ticks[] = {0.1, 1, 10, 100};
    for (int k = 0; k < 4; k++) {
        double x = 20 + (log10(ticks[k]) + 1) / 3 * 360;
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"22\" y2=\"27\" "
                   "stroke=\"#000\"/><text x=\"%.1f\" y=\"39\" font-size=\"11\" "
                   "text-anchor=\"middle\">%g%s</text>\n",
                x, x, x, ticks[k], k == 3 ? "+" : "");
    }
    fprintf(f, "<text x=\"210\" y=\"53\" font-size=\"11\" "
               "text-anchor=\"middle\">calibrated TMD (log scale; grey: not "
               "evaluated)</text>\n</svg>\n");
}

void ompf__heatmap(FILE *f, const ompf_report_group_t *g, size_t t, int gi)
{
    const ompf_eval_t *ev = g->eval;
    size_t ne = ompf_eval_event_count(ev), np = ompf_eval_pair_count(ev);
    const ompf_eval_result_t *r = g->targets[t].result;
    int names = ne <= 12;
    double cell = ne <= 12 ? 26 : ne <= 24 ? 12 : ne <= 40 ? 9 : 360.0 / (double)ne;
    double ml = names ? 120 : 34, mt = 28;
    double W = ml + cell * (double)ne + 16;
    double H = mt + cell * (double)ne + (names ? 100 : 40);
    /* the title (target name and EPD) must fit: ~7.6 px per character of
     * 13 px bold; centred over the matrix unless that would clip it */
    char epd[48] = "";
    if (r && !isnan(r->epd))
        snprintf(epd, sizeof epd, " (EPD %.3g)", r->epd);
    double tw = 7.6 * (double)(strlen(g->targets[t].name) + strlen(epd));
    if (W < tw + 20)
        W = tw + 20;
    double tx = ml + cell * (double)ne / 2;
    if (tx + tw / 2 > W - 8)
        tx = W - 8 - tw / 2;
    if (tx - tw / 2 < 8)
        tx = 8 + tw / 2;
    fprintf(f, "<svg class=\"heatmap\" data-group=\"%d\" data-target=\"", gi);
    ompf_html_text(f, g->targets[t].name);
    fprintf(f, "\" data-series=\"tmd\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" xmlns=\"http://www.w3.org/2000/svg\">"
               "\n<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
               "fill=\"white\"/>\n",
            W, H, W, H, W, H);
    fprintf(f, "<text x=\"%.1f\" y=\"16\" font-size=\"13\" "
               "font-weight=\"bold\" text-anchor=\"middle\">",
            tx);
    ompf_html_text(f, g->targets[t].name);
    fprintf(f, "%s</text>\n", epd);
    for (size_t i = 0; i < np; i++) {
        ompf_eval_pair_info_t in;
        ompf_eval_pair_info(ev, i, &in);
        /* lower triangle: row = second event, column = first */
        double x = ml + cell * in.ev[0], y = mt + cell * in.ev[1];
        double v = r && r->pairs[i].evaluated ? r->pairs[i].tmd : NAN;
        char c[16], b[32];
        tmd_colour(v, c, sizeof c);
        ompf__fmt_val(b, sizeof b, v);
        fprintf(f, "<rect class=\"cell\" data-a=\"%u\" data-b=\"%u\" "
                   "data-value=\"%.17g\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                   "height=\"%.1f\" fill=\"%s\"><title>",
                in.ev[0], in.ev[1], v, x, y, cell, cell, c);
        ompf_html_text(f, ompf_eval_event_name(ev, in.ev[0]));
        fputs(" / ", f);
        ompf_html_text(f, ompf_eval_event_name(ev, in.ev[1]));
        fprintf(f, ": TMD %s</title></rect>\n", b);
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
               "fill=\"none\" stroke=\"#888\"/>\n",
            ml, mt, cell * (double)ne, cell * (double)ne);
    for (size_t e = 0; e < ne; e++) {
        double c = (double)e + 0.5;
        if (names) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                       "text-anchor=\"end\">",
                    ml - 4, mt + cell * c + 4);
            ompf_html_text(f, ompf__short_ev(ompf_eval_event_name(ev, e)));
            fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                       "text-anchor=\"end\" transform=\"rotate(-60 %.1f "
                       "%.1f)\">",
                    ml + cell * c + 3, mt + cell * (double)ne + 10,
                    ml + cell * c + 3, mt + cell * (double)ne + 10);
            ompf_html_text(f, ompf__short_ev(ompf_eval_event_name(ev, e)));
            fputs("</text>\n", f);
        } else if (e % 5 == 0) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" "
                       "text-anchor=\"end\">%zu</text>\n<text x=\"%.1f\" "
                       "y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%zu"
                       "</text>\n",
                    ml - 3, mt + cell * c + 3, e, ml + cell * c,
                    mt + cell * (double)ne + 11, e);
        }
    }
    if (!names)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                   "text-anchor=\"middle\">event number (rows: second event "
                   "of the pair)</text>\n",
                ml + cell * (double)ne / 2, mt + cell * (double)ne + 28);
    fputs("</svg>\n", f);
}

/* ---- 3. scatter ----------------------------------------------------------- */

static int event_values(const ompf_profile_t *p, const char *name, int *idx)
{
    *idx = ompf_event_find(p, name);
    return *idx >= 0;
}

void ompf__scatter(FILE *f, const ompf_report_group_t *g, size_t t,
                    size_t pair, int gi)
{
    const ompf_eval_t *ev = g->eval;
    ompf_eval_pair_info_t in;
    ompf_eval_pair_info(ev, pair, &in);
    const char *na = ompf_eval_event_name(ev, in.ev[0]);
    const char *nb = ompf_eval_event_name(ev, in.ev[1]);
    const ompf_profile_t *ref = g->refs[in.repeat_refs[0]];
    const ompf_profile_t *tp = g->targets[t].profile;
    int ra, rb, ta, tb;
    if (!in.grid || !event_values(ref, na, &ra) || !event_values(ref, nb, &rb))
        return;
    int have_t = event_values(tp, na, &ta) && event_values(tp, nb, &tb);
    const ompf_grid_t *gr = in.grid;
    /* Axis range: the reference bounds plus the outer bins' content,
     * clipped to 3 range widths beyond so outliers do not squash it. */
    double lo[2], hi[2];
    for (int d = 0; d < 2; d++) {
        double w = gr->width[d] * gr->n;
        lo[d] = gr->lo[d];
        hi[d] = gr->lo[d] + w;
    }
    const ompf_profile_t *ps[2] = {ref, have_t ? tp : NULL};
    int ia[2] = {ra, have_t ? ta : -1}, ib[2] = {rb, have_t ? tb : -1};
    for (int s = 0; s < 2; s++) {
        if (!ps[s])
            continue;
        size_t nx = ompf_xu_count(ps[s]);
        for (size_t i = 0; i < nx; i++) {
            const double *row = ompf_xu_values_const(ps[s], i);
            double v[2] = {row[ia[s]], row[ib[s]]};
            for (int d = 0; d < 2; d++) {
                if (isnan(v[d]))
                    continue;
                double w = gr->width[d] * gr->n;
                double c = v[d] < gr->lo[d] - 3 * w ? gr->lo[d] - 3 * w
                         : v[d] > gr->lo[d] + 4 * w ? gr->lo[d] + 4 * w : v[d];
                if (c < lo[d])
                    lo[d] = c;
                if (c > hi[d])
                    hi[d] = c;
            }
        }
    }
    for (int d = 0; d < 2; d++) {
        double pad = (hi[d] - lo[d]) * 0.04;
        if (pad <= 0)
            pad = 0.5;
        lo[d] -= pad;
        hi[d] += pad;
    }
    const double W = 520, H = 450, ml = 80, mr = 30, mt = 30, mb = 86;
    double pw = W - ml - mr, ph = H - mt - mb;
#define SX(v) (ml + pw * ((v) - lo[0]) / (hi[0] - lo[0]))
#define SY(v) (mt + ph * (1 - ((v) - lo[1]) / (hi[1] - lo[1])))
    fprintf(f, "<svg class=\"scatter\" data-group=\"%d\" data-target=\"", gi);
    ompf_html_text(f, g->targets[t].name);
    fprintf(f, "\" data-pair=\"");
    ompf_html_text(f, na);
    fputc(',', f);
    ompf_html_text(f, nb);
    fprintf(f, "\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "xmlns=\"http://www.w3.org/2000/svg\">\n<rect x=\"0\" y=\"0\" "
               "width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n",
            W, H, W, H, W, H);
    fprintf(f, "<text x=\"%.1f\" y=\"18\" font-size=\"13\" font-weight=\"bold\" "
               "text-anchor=\"middle\">",
            ml + pw / 2);
    ompf_html_text(f, g->targets[t].name);
    const ompf_eval_result_t *r = g->targets[t].result;
    if (r && r->pairs[pair].evaluated)
        fprintf(f, ": TMD %.3g", r->pairs[pair].tmd);
    fputs("</text>\n", f);
    /* histogram grid: the n intervals between the reference bounds */
    for (unsigned k = 0; k <= gr->n; k++) {
        double x = gr->lo[0] + gr->width[0] * k, y = gr->lo[1] + gr->width[1] * k;
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                   "stroke=\"#ddd\"/>\n<line x1=\"%.1f\" x2=\"%.1f\" "
                   "y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                SX(x), SX(x), mt, mt + ph, ml, ml + pw, SY(y), SY(y));
    }
    /* reference first (grey), target on top (colour); at most ~1500
     * points each, every k-th XU, so large profiles stay light */
    size_t shown[2] = {0, 0}, without[2] = {0, 0}, total[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
        if (!ps[s])
            continue;
        size_t nx = ompf_xu_count(ps[s]), step = nx > 1500 ? nx / 1500 + 1 : 1;
        size_t drawn = 0;
        total[s] = nx;
        for (size_t i = 0; i < nx; i++) {
            const double *row = ompf_xu_values_const(ps[s], i);
            without[s] += isnan(row[ia[s]]) || isnan(row[ib[s]]);
        }
        fprintf(f, "<g class=\"series\" data-series=\"%s\" fill=\"%s\" "
                   "fill-opacity=\"%s\">\n",
                s ? "target" : "reference", s ? ompf__palette[t % OMPF__NPAL] : "#555",
                s ? "0.55" : "0.35");
        for (size_t i = 0; i < nx; i += step) {
            const double *row = ompf_xu_values_const(ps[s], i);
            double a = row[ia[s]], b = row[ib[s]];
            if (isnan(a) || isnan(b))
                continue;
            if (a < lo[0]) a = lo[0];
            if (a > hi[0]) a = hi[0];
            if (b < lo[1]) b = lo[1];
            if (b > hi[1]) b = hi[1];
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\"/>\n", SX(a),
                    SY(b));
            drawn++;
        }
        fprintf(f, "</g><!-- %zu points -->\n", drawn);
        shown[s] = drawn;
    }
    /* axes with round ticks over the drawn range */
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
               "fill=\"none\" stroke=\"#000\"/>\n",
            ml, mt, pw, ph);
    for (int d = 0; d < 2; d++) {
        double step = nice_step((hi[d] - lo[d]) / 4);
        for (double v = ceil(lo[d] / step) * step; v <= hi[d]; v += step) {
            char b[32];
            ompf__fmt_val(b, sizeof b, fabs(v) < step * 1e-9 ? 0 : v);
            if (d == 0)
                fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                           "y2=\"%.1f\" stroke=\"#000\"/><text x=\"%.1f\" "
                           "y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">"
                           "%s</text>\n",
                        SX(v), SX(v), mt + ph, mt + ph + 4, SX(v),
                        mt + ph + 16, b);
            else
                fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                           "y2=\"%.1f\" stroke=\"#000\"/><text x=\"%.1f\" "
                           "y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">"
                           "%s</text>\n",
                        ml - 4, ml, SY(v), SY(v), ml - 6, SY(v) + 4, b);
        }
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
               "text-anchor=\"middle\">",
            ml + pw / 2, mt + ph + 32);
    ompf_html_text(f, na);
    fprintf(f, " (count per XU)</text>\n<text x=\"16\" y=\"%.1f\" "
               "font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 "
               "16 %.1f)\">",
            mt + ph / 2, mt + ph / 2);
    ompf_html_text(f, nb);
    fputs(" (count per XU)</text>\n", f);
    /* legend */
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#555\" "
               "fill-opacity=\"0.5\"/><text x=\"%.1f\" y=\"%.1f\" "
               "font-size=\"11\">reference repeat 1 (%zu of %zu XUs)</text>\n",
            ml - 60, H - 30, ml - 52, H - 26, shown[0], total[0]);
    if (have_t)
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">target "
                   "(%zu of %zu XUs; %zu lack a value)</text>\n",
                ml - 60, H - 12, ompf__palette[t % OMPF__NPAL], ml - 52, H - 8, shown[1],
                total[1], without[1]);
    else
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">target "
                   "lacks these events</text>\n",
                ml - 60, H - 8);
    fputs("</svg>\n", f);
#undef SX
#undef SY
}

