/* Helpers shared by the report's files: the fixed colour of each target
 * name, short event names, number formats and round axis steps. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "ompfuse/evaluate.h"
#include "ompfuse/text.h"
#include "report_internal.h"

/* Short event name for axes: drop a "pmu::" prefix. */
const char *ompf__short_ev(const char *s)
{
    const char *c = strstr(s, "::");
    return c ? c + 2 : s;
}

void ompf__fmt_val(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "n/a");
    else if (v != 0 && (fabs(v) >= 1e5 || fabs(v) < 1e-2))
        snprintf(buf, n, "%.2e", v);
    else
        snprintf(buf, n, "%.3g", v);
}

/* A round step (1, 2 or 5 times a power of ten) near x. */
double ompf__nice_step(double x)
{
    if (!(x > 0))
        return 1;
    double p = pow(10, floor(log10(x))), m = x / p;
    return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
}


static const struct {
    const char *name, *colour;
} fixed_colours[] = {
    {"ctc", "#1f77b4"},         {"lgl", "#ff7f0e"},
    {"bc", "#2ca02c"},          {"bc-unlabeled", "#98df8a"},
    {"random", "#9467bd"},      {"hem", "#8c564b"},
    {"hem-delta", "#e377c2"},   {"hem-cleaned", "#17becf"},
    {"hem-delta-cleaned", "#bcbd22"}, {"reference", "#555555"},
};

static const char *const other_colours[] = {"#7f7f7f", "#393b79", "#637939", "#8c6d31",
                                            "#843c39", "#7b4173", "#3182bd", "#e6550d",
                                            "#31a354", "#d62728"};

const char *ompf__target_colour(const char *name)
{
    if (!name)
        name = "";
    size_t len = strcspn(name, " "); /* "lgl (fused-lgl.ompf)" is lgl */
    for (size_t i = 0; i < sizeof fixed_colours / sizeof fixed_colours[0]; i++)
        if (strlen(fixed_colours[i].name) == len && !strncmp(fixed_colours[i].name, name, len))
            return fixed_colours[i].colour;
    uint32_t h = 2166136261u; /* FNV-1a over the whole name */
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 16777619u;
    return other_colours[h % (sizeof other_colours / sizeof other_colours[0])];
}
