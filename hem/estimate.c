/*
 * HEM estimators (docs/semantics.md, Counters).  hem: cumulative scaling as
 * perf stat and PAPI apply it to running totals, differenced at XU boundaries.
 * hem-delta: scaling of the interval itself.
 */
#include "ompfuse/hem.h"

double ompf_hem_scaled(const ompf_hem_reading_t *r)
{
    if (r->running == 0)
        return 0.0;
    if (r->running == r->enabled)
        return (double)r->value;
    return (double)r->value * ((double)r->enabled / (double)r->running);
}

double ompf_hem_cumulative(const ompf_hem_reading_t *start,
                           const ompf_hem_reading_t *end)
{
    return ompf_hem_scaled(end) - ompf_hem_scaled(start);
}

static double delta_scale(uint64_t dv, uint64_t de, uint64_t dr)
{
    if (dr == 0)
        return OMPF_MISSING;
    if (dr == de)
        return (double)dv;
    return (double)dv * ((double)de / (double)dr);
}

double ompf_hem_delta(const ompf_hem_reading_t *start,
                      const ompf_hem_reading_t *end)
{
    return delta_scale(end->value - start->value,
                       end->enabled - start->enabled,
                       end->running - start->running);
}

void ompf_hem_acc_reset(ompf_hem_acc_t *a)
{
    a->hem = 0.0;
    a->dvalue = a->denabled = a->drunning = 0;
}

void ompf_hem_acc_add(ompf_hem_acc_t *a, const ompf_hem_reading_t *start,
                      const ompf_hem_reading_t *end)
{
    a->hem += ompf_hem_cumulative(start, end);
    a->dvalue += end->value - start->value;
    a->denabled += end->enabled - start->enabled;
    a->drunning += end->running - start->running;
}

double ompf_hem_acc_hem(const ompf_hem_acc_t *a)
{
    return a->hem;
}

double ompf_hem_acc_delta(const ompf_hem_acc_t *a)
{
    return delta_scale(a->dvalue, a->denabled, a->drunning);
}

void ompf_hem_charge(size_t n, ompf_hem_reading_t *prev, const uint64_t *value,
                     const uint64_t *enabled, const uint64_t *running,
                     ompf_hem_acc_t *acc)
{
    for (size_t i = 0; i < n; i++) {
        ompf_hem_reading_t now = {value[i], enabled[i], running[i]};
        if (acc)
            ompf_hem_acc_add(&acc[i], &prev[i], &now);
        prev[i] = now;
    }
}
