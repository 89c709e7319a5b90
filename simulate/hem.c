/* Simulated hardware event multiplexing: which events run in which period,
 * what the counters read at given times on a thread whose event rates are
 * piecewise constant, and the per-XU estimates libompfhem makes of them. */
#include <math.h>
#include <stdlib.h>

#include "ompfuse/hem.h"
#include "sim_internal.h"

static uint32_t gcd32(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int sim_mux_init(sim_mux_t *x, uint32_t n_events, uint32_t slots, uint32_t step,
                 double period_ns, double phase_ns)
{
    if (!x || n_events == 0 || slots == 0 || !(period_ns > 0))
        return OMPF_EINVAL;
    x->n_events = n_events;
    x->slots = slots < n_events ? slots : n_events;
    x->step = step % n_events;
    /* The schedule repeats after E/gcd(step, E) periods. */
    x->cycle = x->step ? n_events / gcd32(x->step, n_events) : 1;
    x->period = period_ns;
    x->phase = phase_ns;
    x->prefix = malloc((size_t)n_events * (x->cycle + 1) * sizeof *x->prefix);
    if (!x->prefix)
        return OMPF_ENOMEM;
    for (uint32_t e = 0; e < n_events; e++) {
        uint32_t *p = x->prefix + (size_t)e * (x->cycle + 1);
        p[0] = 0;
        for (uint32_t j = 0; j < x->cycle; j++)
            p[j + 1] = p[j] + (uint32_t)sim_mux_running(x, e, j);
    }
    return 0;
}

void sim_mux_free(sim_mux_t *x)
{
    if (x) {
        free(x->prefix);
        x->prefix = NULL;
    }
}

int sim_mux_running(const sim_mux_t *x, uint32_t e, uint64_t k)
{
    uint64_t first = ((k % x->cycle) * x->step) % x->n_events;
    uint64_t off = (e + x->n_events - first) % x->n_events;
    return off < x->slots;
}

/* Running time of e over [0, u] of the periodic schedule (u >= 0). */
static double run_abs(const sim_mux_t *x, uint32_t e, double u)
{
    if (x->slots >= x->n_events)
        return u;
    double kd = floor(u / x->period);
    uint64_t k = (uint64_t)kd;
    const uint32_t *p = x->prefix + (size_t)e * (x->cycle + 1);
    uint64_t full = k / x->cycle, j = k % x->cycle;
    double v = ((double)full * p[x->cycle] + p[j]) * x->period;
    if (sim_mux_running(x, e, k))
        v += u - kd * x->period;
    return v;
}

double sim_mux_running_time(const sim_mux_t *x, uint32_t e, double t)
{
    return run_abs(x, e, t + x->phase) - run_abs(x, e, x->phase);
}

int sim_mux_read(const sim_mux_t *x, const sim_seg_t *segs, size_t n_segs,
                 const double *times, size_t n_times, double *raw, double *running)
{
    uint32_t E = x->n_events;
    for (uint32_t e = 0; e < E; e++) {
        double acc = 0, cur = 0, r_cur = 0;
        size_t s = 0;
        for (size_t i = 0; i < n_times; i++) {
            double t = times[i];
            while (cur < t && s < n_segs) {
                double b = segs[s].end < t ? segs[s].end : t;
                if (b > cur) {
                    double r_b = sim_mux_running_time(x, e, b);
                    acc += segs[s].rate[e] * (r_b - r_cur);
                    r_cur = r_b;
                    cur = b;
                }
                if (b >= segs[s].end)
                    s++;
            }
            /* Hardware counts are integers; the tiny offset absorbs
             * rounding in the sum of products. */
            raw[i * E + e] = floor(acc + 1e-6);
            running[i * E + e] = sim_mux_running_time(x, e, t);
        }
    }
    return 0;
}

/* The kernel reports integer counts and nanoseconds. */
static ompf_hem_reading_t reading(double value, double enabled, double running)
{
    ompf_hem_reading_t r = {(uint64_t)value, (uint64_t)llround(enabled),
                            (uint64_t)llround(running)};
    return r;
}

void sim_hem_estimate(const double *raw, const double *times, const double *running,
                      size_t stride, size_t n_xus, int delta, double *est, double *total)
{
    for (size_t j = 0; j < n_xus; j++) {
        size_t r0 = 2 * j, r1 = r0 + 1;
        ompf_hem_reading_t a = reading(raw[r0 * stride], times[r0], running[r0 * stride]);
        ompf_hem_reading_t b = reading(raw[r1 * stride], times[r1], running[r1 * stride]);
        est[j] = delta ? ompf_hem_delta(&a, &b) : ompf_hem_cumulative(&a, &b);
    }
    size_t re = 2 * n_xus;
    ompf_hem_reading_t z = reading(raw[re * stride], times[re], running[re * stride]);
    *total = ompf_hem_scaled(&z);
}
