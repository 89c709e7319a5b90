/* Shared between the report's page (report.c) and its plots
 * (report_plots.c).  Not a public interface. */
#ifndef OMPF_REPORT_INTERNAL_H
#define OMPF_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "ompfuse/evaluate.h"

/* Colours of the targets, by position. */
#define OMPF__NPAL 10
extern const char *const ompf__palette[OMPF__NPAL];

/* Short event name for axes: drop a "pmu::" prefix. */
const char *ompf__short_ev(const char *s);
void ompf__fmt_val(char *buf, size_t n, double v);

void ompf__epd_bars(FILE *f, const ompf_report_group_t *g, int gi);
void ompf__heat_legend(FILE *f);
void ompf__heatmap(FILE *f, const ompf_report_group_t *g, size_t t, int gi);
void ompf__scatter(FILE *f, const ompf_report_group_t *g, size_t t,
                   size_t pair, int gi);

#endif
