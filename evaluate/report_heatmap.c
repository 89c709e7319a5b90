/* The report's heatmaps: calibrated TMD per event pair, one per target,
 * with the shared colour legend. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/evaluate.h"
#include "ompfuse/text.h"
#include "report_internal.h"

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

void ompf__report_heat_legend(FILE *f)
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

void ompf__report_heatmap(FILE *f, const ompf_report_group_t *g, size_t t, int gi)
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

