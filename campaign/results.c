/* ompfuse campaign: what it shows and writes at the end, the EPD table
 * and verdict lines (stdout), DIR/epd.tsv and DIR/report.html, and
 * --summarize DIR (the table again from epd.tsv). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ompfuse/analysis.h"
#include "ompfuse/file.h"
#include "ompfuse/evaluate.h"
#include "ompfuse/text.h"

/* ---- verdicts ---------------------------------------------------------
 * The headline of the experiment: on every benchmark the EPD of LGL and of
 * BC is below that of every HEM variant (hem, hem-delta and both cleaned
 * profiles).  Numbers are compared as printed (3 decimals), so a line never
 * says that 1.844 beats 1.844: equal printed values are a tie, and a tie is
 * not a win. */
enum { V_WIN = 1, V_LOSS = 0, V_NONE = -1 };

static double rounded3(double v) { return round(v * 1000.0) / 1000.0; }

/* Writes "NAME: ..." into buf; returns V_WIN, V_LOSS or V_NONE (an EPD
 * needed for the verdict is missing).  problem[t] (may be NULL) says why a
 * number is missing. */
static int verdict_line(const char *name, const double *epd, const char (*problem)[160],
                        char *buf, size_t len)
{
    static const int fus[2] = {T_LGL, T_BC};
    static const char *const fname[2] = {"LGL", "BC"};
    int best = -1, nhem = 0;
    for (int t = T_HEM; t <= T_HEMDC; t++)
        if (!isnan(epd[t])) {
            nhem++;
            if (best < 0 || epd[t] < epd[best])
                best = t;
        }
    size_t k = 0;
#define ADD(...)                                                                            \
    do {                                                                                    \
        int w_ = snprintf(buf + k, k < len ? len - k : 0, __VA_ARGS__);                     \
        if (w_ > 0)                                                                         \
            k += (size_t)w_;                                                                \
    } while (0)
    ADD("%s: ", name);
    int missing = 0, wins = 0;
    for (int i = 0; i < 2; i++)
        missing |= isnan(epd[fus[i]]);
    if (best < 0 || missing) {
        int first = 1;
        for (int i = 0; i < 2; i++)
            if (isnan(epd[fus[i]])) {
                ADD("%s%s has no EPD (%s)", first ? "" : "; ", fname[i],
                    problem && problem[fus[i]][0] ? problem[fus[i]] : "not produced");
                first = 0;
            }
        if (best < 0)
            ADD("%sno HEM variant has an EPD", first ? "" : "; ");
        ADD(": no verdict");
        return V_NONE;
    }
    double h = rounded3(epd[best]);
    for (int i = 0; i < 2; i++)
        wins += rounded3(epd[fus[i]]) < h;
    if (wins == 2) {
        ADD("LGL %.3f, BC %.3f < best HEM variant %s %.3f: fusion wins", epd[T_LGL], epd[T_BC],
            tname[best], epd[best]);
    } else {
        for (int i = 0; i < 2; i++) {
            double v = rounded3(epd[fus[i]]);
            if (i)
                ADD("; ");
            if (v < h)
                ADD("%s %.3f < best HEM variant %s %.3f", fname[i], epd[fus[i]], tname[best],
                    epd[best]);
            else if (v == h)
                ADD("%s ties %s (%.3f vs %.3f), not below it", fname[i], tname[best],
                    epd[fus[i]], epd[best]);
            else
                ADD("%s does NOT beat %s (%.3f vs %.3f)", fname[i], tname[best], epd[fus[i]],
                    epd[best]);
        }
        ADD(": fusion does NOT win here");
    }
    if (nhem < T_HEMDC - T_HEM + 1)
        ADD(" (only %d of %d HEM variants have an EPD)", nhem, T_HEMDC - T_HEM + 1);
#undef ADD
    return wins == 2 ? V_WIN : V_LOSS;
}

/* The verdict line of one benchmark, or why it has none. */
static int bench_verdict(const result_t *r, char *line, size_t len)
{
    if (r->note[0]) {
        snprintf(line, len, "%s: not completed: %.500s: no verdict", r->name,
                 r->note);
        return V_NONE;
    }
    return verdict_line(r->name, r->epd, r->problem, line, len);
}

/* The random pairing is the control (docs/semantics.md, Fusion: what
 * meaningless fusion scores).  Where it scores about as well as LGL
 * (within 10 %), the histograms do not see which XU is which: most XUs
 * share one bin (the bounds are set by a few outliers) and the verdict
 * rests on a handful of XUs and on noise.  Said next to the verdict, never
 * instead of it. */
static int power_note(const result_t *r, char *buf, size_t len)
{
    if (isnan(r->epd[T_RANDOM]) || isnan(r->epd[T_LGL]) ||
        !(r->epd[T_RANDOM] < 1.1 * r->epd[T_LGL]))
        return 0;
    snprintf(buf, len, "%s: the random-pairing control scores like LGL (%.3f vs %.3f): "
                       "EPD cannot tell matched from random XUs on this benchmark, so its "
                       "verdict rests on few XUs and on run-to-run noise",
             r->name, r->epd[T_RANDOM], r->epd[T_LGL]);
    return 1;
}

/* "headline: fusion wins on W of N benchmarks (not on A; no verdict on
 * B)": a benchmark without a verdict (not run, no EPD) is not one fusion
 * lost, so the two are named apart. */
static void headline(const result_t *res, size_t n, char *buf, size_t len)
{
    size_t won = 0;
    char lost[512] = "", none[512] = "", line[1024];
    for (size_t i = 0; i < n; i++) {
        int v = bench_verdict(&res[i], line, sizeof line);
        if (v == V_WIN) {
            won++;
            continue;
        }
        char *to = v == V_LOSS ? lost : none;
        size_t l = strlen(to);
        snprintf(to + l, sizeof lost - l, "%s%s", l ? ", " : "", res[i].name);
    }
    snprintf(buf, len, "headline: fusion wins on %zu of %zu benchmarks%s%s%s%s%s%s%s", won, n,
             lost[0] || none[0] ? " (" : "", lost[0] ? "not on " : "", lost,
             lost[0] && none[0] ? "; " : "", none[0] ? "no verdict on " : "", none,
             lost[0] || none[0] ? ")" : "");
}

void ompf_cmpc_print_table(FILE *f, const result_t *res, size_t n)
{
    fprintf(f, "\nEPD (1.0 = as close as two reference runs; lower is better)\n");
    int nw = 12; /* name column: the longest benchmark name */
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(res[i].name) > nw)
            nw = (int)strlen(res[i].name);
    fprintf(f, "%-*s", nw, "benchmark");
    for (int t = 0; t < N_T; t++)
        fprintf(f, " %*s", t == T_HEMDC ? 17 : t == T_BCU ? 12 : 11, tname[t]);
    fprintf(f, "\n");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%-*s", nw, res[i].name);
        for (int t = 0; t < N_T; t++) {
            int w = t == T_HEMDC ? 17 : t == T_BCU ? 12 : 11;
            if (isnan(res[i].epd[t]))
                fprintf(f, " %*s", w, "-");
            else
                fprintf(f, " %*.3f", w, res[i].epd[t]);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\nVerdicts (fusion wins where LGL and BC are below every HEM variant: hem, "
               "hem-delta, hem-cleaned, hem-delta-cleaned)\n");
    for (size_t i = 0; i < n; i++) {
        char line[1024];
        bench_verdict(&res[i], line, sizeof line);
        fprintf(f, "%s\n", line);
    }
    char head[1200];
    headline(res, n, head, sizeof head);
    fprintf(f, "%s\n", head);
    /* What the numbers rest on: XUs a target leaves out of a pair's
     * histogram (missing values) and pairs whose references agree so
     * exactly that the calibration floor was used. */
    for (size_t i = 0; i < n; i++) {
        for (int t = 0; t < N_T; t++)
            if (!isnan(res[i].epd[t]) && res[i].left_out[t])
                fprintf(f, "note: %s %s: up to %llu XU%s of a pair left out (missing values); "
                           "its EPD describes only the XUs that have both values\n",
                        res[i].name, tname[t], res[i].left_out[t],
                        res[i].left_out[t] == 1 ? "" : "s");
        char pn[512];
        if (power_note(&res[i], pn, sizeof pn))
            fprintf(f, "note: %s\n", pn);
        if (res[i].floor_pairs)
            fprintf(f, "note: %s: calibration floor (1/|XUs|) used on %u pair%s: the "
                       "references agree exactly there, so any difference scores above 1\n",
                    res[i].name, res[i].floor_pairs, res[i].floor_pairs == 1 ? "" : "s");
    }
    int any = 0;
    for (size_t i = 0; i < n; i++)
        if (res[i].runs_ok || res[i].runs_failed)
            any = 1;
    if (!any)
        return;
    fprintf(f, "\nruns:");
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s %s %zu ok", i ? ";" : "", res[i].name, res[i].runs_ok);
        if (res[i].runs_kept)
            fprintf(f, " (%zu kept)", res[i].runs_kept);
        fprintf(f, ", %zu failed, %.0f s", res[i].runs_failed, res[i].seconds);
        kept += res[i].runs_kept;
    }
    fprintf(f, "\n");
    if (kept)
        fprintf(f, "    (kept: complete runs found in the output directory from an earlier "
                   "campaign were not run again; remove it, or give another --out, to "
                   "measure anew)\n");
    for (size_t i = 0; i < n; i++)
        for (int t = 0; t < N_T; t++)
            if (isnan(res[i].epd[t]) && res[i].problem[t][0])
                fprintf(f, "    %s %s: %s\n", res[i].name, tname[t], res[i].problem[t]);
}

/* The verdicts as an HTML section (the report shows what stdout says). */
static void html_verdicts(FILE *f, const result_t *res, size_t n)
{
    fprintf(f, "<section id=\"verdicts\"><h2>Verdicts</h2>\n<p class=\"note\">EPD of every "
               "strategy (1.0 = as close as two reference runs; lower is better). Fusion "
               "wins on a benchmark where LGL and BC are below every HEM variant (hem, "
               "hem-delta, hem-cleaned, hem-delta-cleaned), compared as printed.</p>\n"
               "<table class=\"epd\"><tr><th>benchmark</th>");
    for (int t = 0; t < N_T; t++)
        fprintf(f, "<th>%s</th>", tname[t]);
    fprintf(f, "</tr>\n");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<tr data-benchmark=\"");
        ompf_html_text(f, res[i].name);
        fprintf(f, "\"><td>");
        ompf_html_text(f, res[i].name);
        fprintf(f, "</td>");
        for (int t = 0; t < N_T; t++) {
            if (isnan(res[i].epd[t]))
                fprintf(f, "<td class=\"num\" data-target=\"%s\">-</td>", tname[t]);
            else
                fprintf(f, "<td class=\"num\" data-target=\"%s\" data-epd=\"%.6g\">%.3f</td>",
                        tname[t], res[i].epd[t], res[i].epd[t]);
        }
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n<ul class=\"verdicts\">\n");
    for (size_t i = 0; i < n; i++) {
        char line[1024];
        int v = bench_verdict(&res[i], line, sizeof line);
        fprintf(f, "<li class=\"verdict\" data-verdict=\"%s\"%s>",
                v == V_WIN ? "win" : v == V_LOSS ? "loss" : "none",
                v == V_WIN ? "" : " style=\"color:#a00\"");
        ompf_html_text(f, line);
        fprintf(f, "</li>\n");
    }
    char head[1200];
    headline(res, n, head, sizeof head);
    fprintf(f, "</ul>\n<p class=\"headline\">");
    ompf_html_text(f, head);
    fprintf(f, "</p>\n");
    for (size_t i = 0; i < n; i++) {
        for (int t = 0; t < N_T; t++)
            if (!isnan(res[i].epd[t]) && res[i].left_out[t]) {
                fprintf(f, "<p class=\"note\">");
                ompf_html_text(f, res[i].name);
                fprintf(f, " %s: up to %llu XU%s of a pair left out (missing values); its EPD "
                           "describes only the XUs that have both values.</p>\n",
                        tname[t], res[i].left_out[t], res[i].left_out[t] == 1 ? "" : "s");
            }
        char pn[512];
        if (power_note(&res[i], pn, sizeof pn)) {
            fprintf(f, "<p class=\"note\">");
            ompf_html_text(f, pn);
            fprintf(f, ".</p>\n");
        }
        if (res[i].floor_pairs) {
            fprintf(f, "<p class=\"note\">");
            ompf_html_text(f, res[i].name);
            fprintf(f, ": calibration floor (1/|XUs|) used on %u pair%s: the references agree "
                       "exactly there, so any difference scores above 1.</p>\n",
                    res[i].floor_pairs, res[i].floor_pairs == 1 ? "" : "s");
        }
    }
    fprintf(f, "</section>\n");
}

void ompf_cmpc_write_analyses(result_t *res, size_t n, int *io)
{
    static const int fusion[] = {T_LGL, T_BC, T_CTC, T_BCU};
    for (size_t i = 0; i < n; i++) {
        result_t *r = &res[i];
        int best = -1;
        for (size_t k = 0; k < sizeof fusion / sizeof *fusion; k++) {
            int t = fusion[k];
            if (r->target_ok[t] && !isnan(r->epd[t]) && (best < 0 || r->epd[t] < r->epd[best]))
                best = t;
        }
        if (best < 0 && r->target_ok[T_LGL])
            best = T_LGL;
        r->analysis[0] = '\0';
        if (best < 0)
            continue;
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%.4000s/analysis.html", r->dir);
        ompf_error_t err;
        memset(&err, 0, sizeof err);
        if (ompf_analysis_page(r->target_path[best], path, &err)) {
            fprintf(stderr, PROG ": %s: the analysis page of %s: %s\n", r->name,
                    r->target_path[best], err.msg);
            *io |= err.code == OMPF_EIO;
            continue;
        }
        snprintf(r->analysis, sizeof r->analysis, "%.63s/analysis.html", r->name);
        r->analysis_of = best;
    }
}

static int has_analyses(const result_t *res, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (res[i].analysis[0])
            return 1;
    return 0;
}

/* Links to the analysis pages, below the verdicts. */
static void html_analyses(FILE *f, const result_t *res, size_t n)
{
    if (!has_analyses(res, n))
        return;
    fprintf(f, "<section id=\"analyses\"><h2>What the fused profiles say</h2>\n<p>Per "
               "construct, thread and XU: counts, distributions, derived metrics and a "
               "per-thread timeline of each benchmark's best fused profile "
               "(<code>ompfuse analyze --html</code>).</p>\n<ul>\n");
    for (size_t i = 0; i < n; i++) {
        if (!res[i].analysis[0])
            continue;
        fprintf(f, "<li class=\"analysis\"><a href=\"");
        ompf_html_text(f, res[i].analysis);
        fprintf(f, "\">");
        ompf_html_text(f, res[i].name);
        fprintf(f, "</a>: fused-%s.ompf", tname[res[i].analysis_of]);
        if (!isnan(res[i].epd[res[i].analysis_of]))
            fprintf(f, " (EPD %.3f)", res[i].epd[res[i].analysis_of]);
        fprintf(f, "</li>\n");
    }
    fprintf(f, "</ul></section>\n");
}

/* Puts the verdict section into the report `ompfuse report` wrote, before
 * the first benchmark's section; written to a new file and renamed.  0, or
 * err names the file and the reason. */
static int insert_verdicts(const char *path, const result_t *res, size_t n, ompf_error_t *err)
{
    char *doc;
    size_t len;
    if (ompf_read_file(path, (size_t)1 << 30, &doc, &len) != 0)
        return ompf_error_set(err, OMPF_EIO, "cannot read %s: %s", path, strerror(errno));
    char *at = strstr(doc, "<section class=\"group\"");
    if (!at)
        at = strstr(doc, "</body>");
    if (!at)
        at = doc + len;
    ompf_outfile_t *o;
    FILE *f;
    int rc = ompf_outfile_open(path, &o, &f, err);
    if (rc) {
        free(doc);
        return rc;
    }
    /* the contents list gains the sections put in before the groups */
    char *mark = strstr(doc, OMPF_REPORT_TOC_MARK);
    if (mark && mark < at) {
        fwrite(doc, 1, (size_t)(mark - doc), f);
        fputs("<li><a href=\"#verdicts\">Verdicts</a></li>\n", f);
        if (has_analyses(res, n))
            fputs("<li><a href=\"#analyses\">What the fused profiles say</a></li>\n", f);
        fwrite(mark, 1, (size_t)(at - mark), f);
    } else {
        fwrite(doc, 1, (size_t)(at - doc), f);
    }
    html_verdicts(f, res, n);
    html_analyses(f, res, n);
    fputs(at, f);
    free(doc);
    return ompf_outfile_commit(o, err);
}

int ompf_cmpc_write_tsv(const char *path, const result_t *res, size_t n, ompf_error_t *err)
{
    ompf_outfile_t *o;
    FILE *f;
    int rc = ompf_outfile_open(path, &o, &f, err);
    if (rc)
        return rc;
    fprintf(f, "benchmark");
    for (int t = 0; t < N_T; t++)
        fprintf(f, "\t%s", tname[t]);
    fprintf(f, "\n");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s", res[i].name);
        for (int t = 0; t < N_T; t++)
            if (isnan(res[i].epd[t]))
                fprintf(f, "\t-");
            else
                fprintf(f, "\t%.10g", res[i].epd[t]);
        fprintf(f, "\n");
    }
    return ompf_outfile_commit(o, err);
}

/* When `ompfuse report` cannot write the report: the numbers, honestly. */
static int write_fallback_html(const char *path, const result_t *res, size_t n,
                               const char *why, ompf_error_t *err)
{
    ompf_outfile_t *o;
    FILE *f;
    int rc = ompf_outfile_open(path, &o, &f, err);
    if (rc)
        return rc;
    fprintf(f, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ompfuse campaign"
               "</title><style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px;"
               "text-align:right}td:first-child{text-align:left}.bad{color:#a00}</style>"
               "</head><body><h1>ompfuse campaign</h1>\n<p class=\"bad\">The detailed report "
               "(<code>ompfuse report</code>) could not be written: ");
    ompf_html_text(f, why);
    fprintf(f, ". This page has the EPD table and the verdicts only.</p>\n");
    html_verdicts(f, res, n);
    html_analyses(f, res, n);
    fprintf(f, "</body></html>\n");
    return ompf_outfile_commit(o, err);
}

void ompf_cmpc_write_report(const result_t *res, size_t nres, const char *html,
                            const char *log, int *wrote, int *io, int *failed)
{
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    size_t cap = 16;
    for (size_t i = 0; i < nres; i++)
        cap += res[i].nrefs + N_T + 6;
    char **args = calloc(cap, sizeof *args);
    char (*named)[PATH_MAX + 32] = calloc(nres * N_T, sizeof *named);
    size_t k = 0, groups = 0;
    if (args && named) {
        args[k++] = "report";
        args[k++] = "-q";
        args[k++] = "--allow-partial";
        args[k++] = "--title";
        args[k++] = "ompfuse campaign";
        args[k++] = "-o";
        args[k++] = (char *)html;
        for (size_t i = 0; i < nres; i++) {
            if (res[i].nrefs < 2)
                continue;
            args[k++] = "--group";
            args[k++] = (char *)res[i].name;
            args[k++] = "-r";
            for (size_t r = 0; r < res[i].nrefs; r++)
                args[k++] = res[i].refs[r];
            args[k++] = "--";
            for (int t = 0; t < N_T; t++)
                if (res[i].target_ok[t]) {
                    snprintf(named[i * N_T + t], sizeof named[0], "%s=%s", tname[t],
                             res[i].target_path[t]);
                    args[k++] = named[i * N_T + t];
                }
            groups++;
        }
        args[k] = NULL;
    }
    char why[400] = "";
    int x = -1;
    if (groups) {
        fprintf(stderr, "\n" PROG ": writing the report...\n");
        x = ompf_cmpc_run_self(args, log, why, sizeof why, NULL);
    } else {
        snprintf(why, sizeof why, "no benchmark has usable reference runs");
    }
    free(args);
    free(named);
    if (x == 0 && ompf_cmpc_file_nonempty(html)) {
        *wrote = 1; /* without the verdicts if inserting them fails */
        if (insert_verdicts(html, res, nres, &err)) {
            fprintf(stderr, PROG ": could not add the verdicts to %s: %s\n", html, err.msg);
            *io = 1;
        }
        return;
    }
    *failed = 1;
    *io |= groups && ompf_cmpc_step_io_error(x, why);
    fprintf(stderr, PROG ": ompfuse report could not write %s: %s\n", html,
            why[0] ? why : "no message");
    if (write_fallback_html(html, res, nres, why[0] ? why : "ompfuse report failed", &err)) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        *io = 1;
    } else {
        *wrote = 1;
        fprintf(stderr, PROG ": wrote the EPD table and verdicts to %s instead\n", html);
    }
}

/* --summarize DIR: the table and verdicts of a finished campaign, from
 * DIR/epd.tsv, without running anything. */
int ompf_cmpc_summarize(const char *dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/epd.tsv", dir);
    FILE *f = NULL;
    ompf_error_t oerr;
    if (ompf_fopen_input(path, "campaign's epd.tsv", &f, &oerr)) {
        fprintf(stderr, PROG ": %s (give the --out DIR of a campaign)\n", oerr.msg);
        return 2;
    }
    char line[4096];
    int col[N_T + 1]; /* tsv column -> target */
    size_t ncol = 0, n = 0, cap = 0;
    result_t *res = NULL;
    int rc = 0;
    if (!fgets(line, sizeof line, f) || strncmp(line, "benchmark\t", 10)) {
        fprintf(stderr, PROG ": %s: not an EPD table (first line must start with "
                        "'benchmark<TAB>')\n", path);
        fclose(f);
        return 2;
    }
    for (char *tok = strtok(line + 10, "\t\r\n"); tok && ncol <= N_T; tok = strtok(NULL, "\t\r\n")) {
        col[ncol] = -1;
        for (int t = 0; t < N_T; t++)
            if (!strcmp(tok, tname[t]))
                col[ncol] = t;
        ncol++;
    }
    while (fgets(line, sizeof line, f)) {
        char *name = strtok(line, "\t\r\n");
        if (!name)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            result_t *r = realloc(res, cap * sizeof *res);
            if (!r) {
                rc = 1;
                break;
            }
            res = r;
        }
        result_t *r = &res[n++];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", name);
        for (int t = 0; t < N_T; t++) {
            r->epd[t] = NAN;
            snprintf(r->problem[t], sizeof r->problem[t], "not in %s", "epd.tsv");
        }
        for (size_t c = 0; c < ncol; c++) {
            char *v = strtok(NULL, "\t\r\n");
            if (!v)
                break;
            char *end;
            double x = strtod(v, &end);
            if (col[c] < 0)
                continue;
            if (end != v && !*end && x >= 0) {
                r->epd[col[c]] = x;
                r->problem[col[c]][0] = '\0';
            } else {
                snprintf(r->problem[col[c]], sizeof r->problem[0], "no EPD in epd.tsv");
            }
        }
    }
    fclose(f);
    if (rc == 0)
        ompf_cmpc_print_table(stdout, res, n);
    free(res);
    return rc;
}
