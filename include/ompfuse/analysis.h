/*
 * ompfuse analysis: what a profile says per construct, thread, core, NUMA
 * node, XU kind or task subtree (ompfuse analyze; docs/analysis.md).
 *
 * A configuration (ompf_analysis_t) holds the grouping, the filters and
 * the derived metrics; ompf_analysis_run() applies it to one profile and
 * returns a result (ompf_aresult_t) that the writers print as a table,
 * CSV, JSON or an HTML page.  Missing values (HEM) are never zero: every
 * statistic says how many XUs it left out and why.
 */
#ifndef OMPFUSE_ANALYSIS_H
#define OMPFUSE_ANALYSIS_H

#include <stdio.h>
#include "ompfuse/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ompf_analysis ompf_analysis_t;
typedef struct ompf_aresult ompf_aresult_t;

int ompf_analysis_create(ompf_analysis_t **out);
void ompf_analysis_destroy(ompf_analysis_t *a);

/* Grouping: comma-separated dimensions among construct, thread, core,
 * numa, kind, subtree (e.g. "construct,numa"); depth is the label depth of
 * subtree groups.  Default: "construct". */
int ompf_analysis_set_group(ompf_analysis_t *a, const char *by, unsigned depth,
                            ompf_error_t *err);
/* Filter "DIM=VALUE" (construct=cg.c:274, thread=1, core=0, numa=0,
 * kind=task, subtree=0.1.2); several filters must all hold. */
int ompf_analysis_add_where(ompf_analysis_t *a, const char *cond,
                            ompf_error_t *err);
/* A derived metric "NAME=EXPR".  Its expression is checked against each
 * profile's events when the analysis runs. */
int ompf_analysis_add_metric(ompf_analysis_t *a, const char *def,
                             ompf_error_t *err);
/* A metrics file: "NAME = EXPR" per line, '#' comments; a name defined
 * several times applies its first definition whose events the profile
 * has (docs/analysis.md).  These extend the built-in set. */
int ompf_analysis_load_metrics(ompf_analysis_t *a, const char *path,
                               ompf_error_t *err);
/* 0: no built-in metrics. */
void ompf_analysis_use_builtins(ompf_analysis_t *a, int on);
/* Groups sorted by column COL (event, metric, duration_ns, xus, name),
 * descending unless it ends in ":asc".  Checked at run time. */
int ompf_analysis_set_sort(ompf_analysis_t *a, const char *col);
/* Top n XUs by column col (NULL: the sort column, else duration_ns). */
void ompf_analysis_set_top(ompf_analysis_t *a, unsigned n, const char *col);

/* Runs the analysis on p (p must outlive the result; name: shown in outputs, usually the path).
 * Errors (unknown event or bad syntax in a metric, an unknown column, a
 * filter matching no XU) set err with the expression and the position
 * and return OMPF_EUSAGE. */
int ompf_analysis_run(const ompf_analysis_t *a, const ompf_profile_t *p,
                      const char *name, ompf_aresult_t **out,
                      ompf_error_t *err);
void ompf_aresult_destroy(ompf_aresult_t *r);

/* Writers.  first: 1 for the first result of a series (CSV header,
 * JSON opening); ompf_aresult_json_end closes the JSON document. */
int ompf_aresult_write_table(const ompf_aresult_t *r, FILE *f);
int ompf_aresult_write_csv(const ompf_aresult_t *r, FILE *f, int first);
int ompf_aresult_write_top_csv(const ompf_aresult_t *r, FILE *f, int first);
int ompf_aresult_write_json(const ompf_aresult_t *r, FILE *f, int first);
void ompf_aresult_json_end(FILE *f, int any);

/* The analysis page: self-contained HTML (inline SVG, no script).
 * colour: column colouring the timeline and the distributions (NULL: the
 * first metric, else the first event, else duration_ns); sx, sy: the
 * scatter plots' columns (NULL: defaults).  Unknown columns: OMPF_EUSAGE. */
typedef struct ompf_page_opts {
    const char *colour, *sx, *sy;
    unsigned width; /* timeline pixels (0: 1200) */
} ompf_page_opts_t;
int ompf_aresult_write_html(const ompf_aresult_t *r, const ompf_page_opts_t *o,
                            FILE *f, ompf_error_t *err);

/* The default analysis page of one profile file, for callers such as a
 * campaign that link it from their own report: reads profile_path,
 * resolves its constructs where the modules exist, groups by construct
 * with the built-in metrics, and writes html_path atomically.  0, or a
 * negative code with err naming the file and the problem. */
int ompf_analysis_page(const char *profile_path, const char *html_path, ompf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
