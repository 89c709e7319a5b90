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
void ompf__report_scatter(FILE *f, const ompf_report_group_t *g, size_t t, size_t pair,
                          int gi);

#endif
