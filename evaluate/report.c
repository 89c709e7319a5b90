/*
 * Self-contained HTML report: inline SVG only (no script, no external
 * resource), so it opens anywhere, offline.  Per group (benchmark):
 *   1. EPD per target as bars with the calibration line at 1.0
 *      (papers' Fig. 3 / Fig. 11),
 *   2. heatmaps of calibrated TMD per event pair, one per target,
 *   3. scatter plots of the XUs of each target against a reference repeat
 *      for one event pair (papers' Fig. 6 / Fig. 15).
 * Every SVG carries data-series attributes so that tests can check what is
 * drawn without rendering.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/evaluate.h"
#include "ompfuse/text.h"
#include "report_internal.h"

/* Pair whose TMD differs most between targets (largest max/min ratio over
 * the targets that evaluated it); falls back to the first evaluable. */
static size_t auto_pair(const ompf_report_group_t *g)
{
    size_t np = ompf_eval_pair_count(g->eval), best = SIZE_MAX;
    double bestv = -1;
    for (size_t i = 0; i < np; i++) {
        ompf_eval_pair_info_t in;
        ompf_eval_pair_info(g->eval, i, &in);
        if (in.problem)
            continue;
        if (best == SIZE_MAX)
            best = i;
        double lo = INFINITY, hi = 0;
        for (size_t t = 0; t < g->ntargets; t++) {
            const ompf_eval_result_t *r = g->targets[t].result;
            if (!r || !r->pairs[i].evaluated)
                continue;
            double v = r->pairs[i].tmd;
            if (v < lo)
                lo = v;
            if (v > hi)
                hi = v;
        }
        if (lo > 0 && lo < INFINITY && hi / lo > bestv) {
            bestv = hi / lo;
            best = i;
        }
    }
    return best;
}

/* The file name without its directory: the full path is in the cell's
 * title, so the table stays narrow. */
static const char *base_name(const char *p)
{
    if (!p)
        return "";
    const char *s = strrchr(p, '/');
    return s && s[1] ? s + 1 : p;
}

static void summary_table(FILE *f, const ompf_report_group_t *g)
{
    int ce = 0;
    for (size_t t = 0; t < g->ntargets; t++)
        if (g->targets[t].result && !isnan(g->targets[t].result->correlation_error))
            ce = 1;
    fputs("<table><tr><th>target</th><th class=\"file\">file</th><th>EPD</th><th>pairs "
          "evaluated</th>",
          f);
    if (ce)
        fputs("<th>Correlation Error</th>", f);
    fputs("<th>max XUs left out (missing values)</th><th>calibration floor "
          "hits</th><th>worst pairs (TMD)</th></tr>\n",
          f);
    for (size_t t = 0; t < g->ntargets; t++) {
        const ompf_report_target_t *tg = &g->targets[t];
        const ompf_eval_result_t *r = tg->result;
        char b[32];
        fputs("<tr><td title=\"", f);
        ompf_html_text(f, tg->path ? tg->path : "");
        fprintf(f, "\"><span class=\"sw\" style=\"background:%s\">"
                   "</span>",
                ompf__target_colour(g->targets[t].name));
        ompf_html_text(f, tg->name);
        fputs("</td><td class=\"file\" title=\"", f);
        ompf_html_text(f, tg->path ? tg->path : "");
        fputs("\">", f);
        ompf_html_text(f, base_name(tg->path));
        fputs("</td>", f);
        if (!r) {
            fprintf(f, "<td colspan=\"%d\">not evaluated: ", ce ? 6 : 5);
            ompf_html_text(f, tg->error ? tg->error : "");
            fputs("</td></tr>\n", f);
            continue;
        }
        ompf__fmt_val(b, sizeof b, r->epd);
        fprintf(f, "<td class=\"num\">%s</td><td class=\"num\">%zu / %zu</td>",
                b, r->pairs_evaluated, r->pairs_total);
        if (ce) {
            ompf__fmt_val(b, sizeof b, r->correlation_error);
            fprintf(f, "<td class=\"num\">%s</td>", b);
        }
        fprintf(f, "<td class=\"num\">%llu</td><td class=\"num\">%zu</td><td class=\"pairs\">",
                (unsigned long long)r->left_out_max, r->calibration_floor_hits);
        size_t idx[3];
        size_t n = ompf_eval_worst_pairs(r, idx, 3);
        for (size_t k = 0; k < n; k++) {
            ompf_eval_pair_info_t in;
            ompf_eval_pair_info(g->eval, idx[k], &in);
            if (k)
                fputs("; ", f);
            ompf_html_text(f, ompf__short_ev(ompf_eval_event_name(g->eval, in.ev[0])));
            fputs(" / ", f);
            ompf_html_text(f, ompf__short_ev(ompf_eval_event_name(g->eval, in.ev[1])));
            ompf__fmt_val(b, sizeof b, r->pairs[idx[k]].tmd);
            fprintf(f, " (%s)", b);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* --per-type: the TMD of each construct in each target's worst pairs,
 * constructs named by their key as in every other output. */
static void type_table(FILE *f, const ompf_report_group_t *g)
{
    fputs("<h3>TMD per construct (worst pairs)</h3>\n<table><tr><th>target"
          "</th><th>event pair</th><th>construct</th><th>reference XUs</th>"
          "<th>TMD</th></tr>\n",
          f);
    for (size_t t = 0; t < g->ntargets; t++) {
        const ompf_eval_result_t *r = g->targets[t].result;
        size_t idx[3];
        size_t n = r ? ompf_eval_worst_pairs(r, idx, 3) : 0;
        for (size_t k = 0; k < n; k++) {
            const ompf_eval_pair_result_t *pr = &r->pairs[idx[k]];
            ompf_eval_pair_info_t in;
            ompf_eval_pair_info(g->eval, idx[k], &in);
            for (size_t y = 0; y < pr->ntypes; y++) {
                char b[32];
                fputs("<tr><td>", f);
                ompf_html_text(f, g->targets[t].name);
                fputs("</td><td>", f);
                ompf_html_text(f, ompf__short_ev(ompf_eval_event_name(g->eval, in.ev[0])));
                fputs(" / ", f);
                ompf_html_text(f, ompf__short_ev(ompf_eval_event_name(g->eval, in.ev[1])));
                fputs("</td><td class=\"construct\">", f);
                ompf_html_text(f, pr->types[y].type);
                ompf__fmt_val(b, sizeof b, pr->types[y].tmd);
                fprintf(f, "</td><td class=\"num\">%.0f</td><td class=\"num\">"
                           "%s</td></tr>\n",
                        pr->types[y].weight, b);
            }
        }
    }
    fputs("</table>\n", f);
}

/* Contents: each group and its plots.  The campaign adds its own
 * sections' entries at the marker. */
static void toc(FILE *f, const ompf_report_group_t *groups, size_t n)
{
    fputs("<nav class=\"toc\"><b>Contents</b><ul>\n" OMPF_REPORT_TOC_MARK "\n", f);
    for (size_t gi = 0; gi < n; gi++) {
        fprintf(f, "<li><a href=\"#g%zu\">", gi);
        ompf_html_text(f, groups[gi].name);
        fputs("</a>", f);
        if (groups[gi].eval)
            fprintf(f, ": <a href=\"#g%zu-epd\">EPD</a> &middot; <a href=\"#g%zu-tmd\">TMD "
                       "per pair</a> &middot; <a href=\"#g%zu-xus\">XUs</a>",
                    gi, gi, gi);
        fputs("</li>\n", f);
    }
    fputs("</ul></nav>\n", f);
}

static void meta_row(FILE *f, const char *key, const char *value)
{
    if (!value || !*value)
        return;
    fputs("<dt>", f);
    ompf_html_text(f, key);
    fputs("</dt><dd>", f);
    ompf_html_text(f, value);
    fputs("</dd>\n", f);
}

/* What was run, where and when: from the reference profiles' metadata
 * (the first one's; dates as the range over all). */
static void run_metadata(FILE *f, const ompf_report_group_t *g)
{
    if (!g->nrefs || !g->refs || !g->refs[0])
        return;
    const ompf_profile_t *p = g->refs[0];
    const char *first = NULL, *last = NULL;
    for (size_t r = 0; r < g->nrefs; r++) {
        const char *d = g->refs[r] ? ompf_meta_get(g->refs[r], "start_time") : NULL;
        if (!d)
            continue;
        if (!first || strcmp(d, first) < 0)
            first = d;
        if (!last || strcmp(d, last) > 0)
            last = d;
    }
    char dates[128] = "", machine[512] = "", threads[32] = "";
    if (first)
        snprintf(dates, sizeof dates, "%s%s%s", first, strcmp(first, last) ? " to " : "",
                 strcmp(first, last) ? last : "");
    const char *host = ompf_meta_get(p, "hostname"), *cpu = ompf_meta_get(p, "cpu_model"),
               *kern = ompf_meta_get(p, "kernel");
    snprintf(machine, sizeof machine, "%s%s%s%s%s", host ? host : "",
             host && (cpu || kern) ? ": " : "", cpu ? cpu : "", cpu && kern ? ", " : "",
             kern ? kern : "");
    const char *ts = ompf_meta_get(p, "team_size");
    if (ts)
        snprintf(threads, sizeof threads, "%s", ts);
    else
        snprintf(threads, sizeof threads, "%zu", ompf_thread_count(p));
    fputs("<dl class=\"run\">\n", f);
    meta_row(f, "program", ompf_meta_get(p, "program"));
    meta_row(f, "arguments", ompf_meta_get(p, "argv"));
    meta_row(f, "threads", threads);
    if (g->eval) {
        fputs("<dt>events</dt><dd>", f);
        size_t ne = ompf_eval_event_count(g->eval);
        for (size_t e = 0; e < ne; e++) {
            if (e)
                fputs(", ", f);
            ompf_html_text(f, ompf_eval_event_name(g->eval, e));
        }
        fputs("</dd>\n", f);
    }
    meta_row(f, "machine", machine);
    meta_row(f, "OpenMP runtime", ompf_meta_get(p, "omp_runtime"));
    meta_row(f, "references run", dates);
    fputs("</dl>\n", f);
}

int ompf_report_write(FILE *f, const char *title,
                      const ompf_report_group_t *groups, size_t ngroups,
                      ompf_error_t *err)
{
    if (!f || (!groups && ngroups))
        return ompf_error_set(err, OMPF_EINVAL, "nothing to report");
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "\n<title>",
          f);
    ompf_html_text(f, title ? title : "ompfuse report");
    fputs("</title>\n<style>\n"
          "body{font-family:sans-serif;margin:16px;color:#222;max-width:1160px}\n"
          "h1{font-size:22px} h2{font-size:19px;border-bottom:1px solid #ccc;"
          "padding-bottom:4px;margin-top:32px} h3{font-size:16px}\n"
          "table{border-collapse:collapse;font-size:13px;margin:8px 0}\n"
          "td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}\n"
          "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
          "td.pairs{font-size:12px;color:#444}\n"
          "td.file{white-space:nowrap}\n"
          "@media (max-width:900px){th.file,td.file{display:none}}\n"
          ".wide{overflow-x:auto;max-width:100%}\n"
          "svg{max-width:100%;height:auto}\n"
          ".sw{display:inline-block;width:10px;height:10px;margin-right:6px}\n"
          ".multi{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-start}\n"
          "figure{margin:8px 0} figcaption{font-size:12px;color:#555;"
          "max-width:1000px}\n"
          "p.note{font-size:13px;color:#444}\n"
          "nav.toc{font-size:14px;background:#f6f6f6;border:1px solid #ddd;"
          "padding:6px 14px;display:inline-block}\n"
          "nav.toc ul{margin:4px 0;padding-left:18px}\n"
          "dl.run{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;"
          "font-size:13px;margin:6px 0}\n"
          "dl.run dt{color:#555} dl.run dd{margin:0;overflow-wrap:anywhere}\n"
          "</style></head><body>\n<h1>",
          f);
    ompf_html_text(f, title ? title : "ompfuse report");
    fputs("</h1>\n<p class=\"note\">EPD and TMD as defined in "
          "docs/evaluation.md (TACO 2017 §4): per event pair, the exact Earth "
          "Mover's Distance between 2-D histograms of XU counts, calibrated by "
          "the median distance between reference repeats.</p>\n",
          f);
    toc(f, groups, ngroups);
    for (size_t gi = 0; gi < ngroups; gi++) {
        const ompf_report_group_t *g = &groups[gi];
        const ompf_eval_t *ev = g->eval;
        fprintf(f, "<section class=\"group\" id=\"g%zu\" data-group=\"%zu\"><h2>", gi,
                gi);
        ompf_html_text(f, g->name);
        fputs("</h2>\n", f);
        run_metadata(f, g);
        if (!ev) {
            fputs("<p class=\"note\">No evaluation: ", f);
            ompf_html_text(f, g->error ? g->error : "the references could not be used");
            fputs("</p></section>\n", f);
            continue;
        }
        size_t np = ompf_eval_pair_count(ev), bad = 0;
        for (size_t i = 0; i < np; i++) {
            ompf_eval_pair_info_t in;
            ompf_eval_pair_info(ev, i, &in);
            bad += in.problem != NULL;
        }
        fprintf(f, "<p class=\"note\">%zu reference profiles, %zu events, "
                   "%zu event pairs%s, %u intervals per event (+2 outer "
                   "bins)%s.</p>\n",
                g->nrefs, ompf_eval_event_count(ev), np,
                bad ? " (some cannot be evaluated from the references)" : "",
                g->bins, g->per_type ? ", TMD per construct" : "");
        fprintf(f, "<div class=\"wide\">");
        summary_table(f, g);
        fprintf(f, "</div>\n");
        if (g->per_type) {
            fprintf(f, "<div class=\"wide\">");
            type_table(f, g);
            fprintf(f, "</div>\n");
        }
        fprintf(f, "<h3 id=\"g%zu-epd\">EPD per target</h3>\n", gi);
        ompf__report_bars(f, g, (int)gi);
        fprintf(f, "<h3 id=\"g%zu-tmd\">Calibrated TMD per event pair</h3>\n", gi);
        ompf__report_heat_legend(f);
        fputs("<div class=\"multi\">\n", f);
        for (size_t t = 0; t < g->ntargets; t++)
            if (g->targets[t].result)
                ompf__report_heatmap(f, g, t, (int)gi);
        fputs("</div>\n", f);
        size_t ne = ompf_eval_event_count(ev);
        if (ne > 12) {
            fputs("<p class=\"note\">Event numbers: ", f);
            for (size_t e = 0; e < ne; e++) {
                fprintf(f, "%s%zu&nbsp;=&nbsp;", e ? ", " : "", e);
                ompf_html_text(f, ompf__short_ev(ompf_eval_event_name(ev, e)));
            }
            fputs("</p>\n", f);
        }
        size_t pair = g->scatter_pair >= 0 ? (size_t)g->scatter_pair
                                           : auto_pair(g);
        if (pair < np) {
            ompf_eval_pair_info_t in;
            ompf_eval_pair_info(ev, pair, &in);
            fprintf(f, "<h3 id=\"g%zu-xus\">XUs of each target and a reference run: ", gi);
            ompf_html_text(f, ompf_eval_event_name(ev, in.ev[0]));
            fputs(" vs ", f);
            ompf_html_text(f, ompf_eval_event_name(ev, in.ev[1]));
            fputs("</h3>\n<p class=\"note\">Each dot is a 3-pixel cell of XUs, "
                  "larger and darker the more XUs it holds; the axes span the "
                  "0.5-99.5 % quantiles of the values shown, and XUs beyond "
                  "them are drawn at the edge and counted in the legend. Grey "
                  "lines: the histogram intervals between the reference bounds.",
                  f);
            if (g->scatter_pair < 0)
                fputs(" Pair chosen as the one whose TMD differs most "
                      "between targets (--pair to choose).",
                      f);
            fputs("</p>\n<div class=\"multi\">\n", f);
            double rlo[2], rhi[2];
            ompf__report_scatter_ref(g, pair, rlo, rhi);
            for (size_t t = 0; t < g->ntargets; t++)
                ompf__report_scatter(f, g, t, pair, (int)gi, rlo, rhi);
            fputs("</div>\n", f);
        }
        fputs("</section>\n", f);
    }
    fputs("</body></html>\n", f);
    return ferror(f) ? ompf_error_set(err, OMPF_EIO, "writing the report failed: %s",
                                      strerror(errno))
                     : 0;
}
