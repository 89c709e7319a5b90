/* The report's EPD bar chart: one bar per target on a log axis, the
 * calibration line at 1.0 and whiskers over the reference repeats. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/evaluate.h"
#include "ompfuse/text.h"
#include "report_internal.h"

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

void ompf__report_bars(FILE *f, const ompf_report_group_t *g, int gi)
{
    const double W = 760, H = 360, ml = 70, mr = 172, mt = 24, mb = 90;
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
    /* Always a log axis: EPD is a ratio to the calibration (1.0), so
     * 0.5 and 2 are equally far from it; one convention in every report. */
    double y0 = pow(10, floor(log10(lo * 0.9))), y1 = pow(10, ceil(log10(hi * 1.1)));
#define YPOS(v) (mt + ph * (1 - (log10(v) - log10(y0)) / (log10(y1) - log10(y0))))
    fprintf(f,
            "<figure><svg class=\"epd-bars\" data-group=\"%d\" "
            "data-series=\"epd\" data-scale=\"%s\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">\n",
            gi, "log", W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
               "fill=\"white\"/>\n", W, H);
    /* grid and y ticks */
    {
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
            if (v < y0)
                v = y0;
            double y = YPOS(v), ybase = mt + ph;
            fprintf(f, "<rect class=\"bar\" data-target=\"");
            ompf_html_text(f, tg->name);
            fprintf(f, "\" data-value=\"%.17g\" x=\"%.1f\" y=\"%.1f\" "
                       "width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                       "<title>",
                    e, x - bw / 2, y, bw, ybase - y > 0 ? ybase - y : 0,
                    ompf__target_colour(g->targets[t].name));
            ompf_html_text(f, tg->name);
            fprintf(f, ": EPD %s</title></rect>\n", b);
            double wl, wh, top = y; /* the value goes above bar and whisker */
            epd_spread(g, tg->result, &wl, &wh);
            if (!isnan(wl) && !isnan(wh)) {
                double yl = YPOS(wl < y0 ? y0 : wl), yh = YPOS(wh);
                if (yh < top)
                    top = yh;
                fprintf(f, "<g class=\"whisker\" data-lo=\"%.17g\" "
                           "data-hi=\"%.17g\" stroke=\"#222\">"
                           "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                           "y2=\"%.1f\"/><line x1=\"%.1f\" x2=\"%.1f\" "
                           "y1=\"%.1f\" y2=\"%.1f\"/><line x1=\"%.1f\" "
                           "x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/></g>\n",
                        wl, wh, x, x, yl, yh, x - 6, x + 6, yl, yl, x - 6,
                        x + 6, yh, yh);
            }
            fprintf(f, "<text class=\"value\" x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
                       "text-anchor=\"middle\">%s</text>\n",
                    x, top - 4 > 10 ? top - 4 : 10, b);
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
            mt + ph / 2, mt + ph / 2, " (log scale)");
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

