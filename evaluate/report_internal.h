/* Internal to the HTML report (report*.c): its plots and shared helpers. */
#ifndef OMPF_REPORT_INTERNAL_H
#define OMPF_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "ompfuse/evaluate.h"

/* The colour of a target by its name, the same in every report: each
 * strategy and HEM variant has its own ("lgl", "bc", "hem-delta", ...;
 * a " (file)" suffix is ignored); other names get one of a second set of
 * colours chosen by a hash of the name, never by position. */
const char *ompf__target_colour(const char *name);
const char *ompf__short_ev(const char *s);
void ompf__fmt_val(char *buf, size_t n, double v);
double ompf__nice_step(double x);

void ompf__report_bars(FILE *f, const ompf_report_group_t *g, int gi);
void ompf__report_heat_legend(FILE *f);
void ompf__report_heatmap(FILE *f, const ompf_report_group_t *g, size_t t, int gi);
/* The 0.5-99.5 % quantile ranges of the pair's reference series, shared
 * by the scatter plots of every target (+-INFINITY when it has no XUs). */
void ompf__report_scatter_ref(const ompf_report_group_t *g, size_t pair, double lo[2],
                              double hi[2]);
void ompf__report_scatter(FILE *f, const ompf_report_group_t *g, size_t t, size_t pair,
                          int gi, const double ref_lo[2], const double ref_hi[2]);

#endif
