/* Shared by the files of libompfsim only. */
#ifndef OMPF_SIM_INTERNAL_H
#define OMPF_SIM_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include "ompfuse/simulate.h"

/* ---- random numbers: splitmix64 to derive independent streams from
 * (seed, purpose, index), xoshiro256** inside a stream.  Counter-based
 * derivation keeps runs independent of the order they are simulated in. */
typedef struct sim_rng {
    uint64_t s[4];
} sim_rng_t;

static inline uint64_t sim_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void sim_rng_init(sim_rng_t *r, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t x = sim_mix64(a) ^ sim_mix64(sim_mix64(b) + 0x51ull) ^
                 sim_mix64(sim_mix64(sim_mix64(c) + 0x77ull));
    for (int i = 0; i < 4; i++) {
        x = sim_mix64(x + (uint64_t)i);
        r->s[i] = x;
    }
}

static inline uint64_t sim_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t sim_next(sim_rng_t *r)
{
    uint64_t *s = r->s;
    uint64_t res = sim_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = sim_rotl(s[3], 45);
    return res;
}

/* Uniform in [0, 1). */
static inline double sim_uniform(sim_rng_t *r)
{
    return (double)(sim_next(r) >> 11) * 0x1.0p-53;
}

/* Standard normal (Box-Muller; one value per call keeps streams simple). */
static inline double sim_normal(sim_rng_t *r)
{
    double u1 = sim_uniform(r), u2 = sim_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static inline uint32_t sim_below(sim_rng_t *r, uint32_t n)
{
    return (uint32_t)(sim_uniform(r) * (double)n) % (n ? n : 1);
}

/* Stream purposes. */
enum {
    SIM_S_EVENTS = 1, SIM_S_TYPES, SIM_S_XU, SIM_S_ORDER, SIM_S_RUNXU,
    SIM_S_RUN, SIM_S_PHASE, SIM_S_RUNID, SIM_S_PILOT
};

/* ---- the model --------------------------------------------------------- */

/* Parameters, one field per key (model.c has the table). */
typedef struct sim_params {
    char name[64];
    double model_seed;
    double types, xus, type_skew, threads, numa_nodes;
    double events, dup_events, weak_events;
    double modes, work_min, work_max, mode_gap, mode_sigma, xu_sigma;
    double run_sigma, run_global_sigma, alt_share, alt_mem, alt_latency;
    double event_noise, dup_noise, weak_noise;
    double ghz, gap_mean_ns, init_us, gap_jitter, order_jitter, thread_shuffle;
    double pmu_slots, mux_period_us, mux_step, phases, phase_sigma;
} sim_params_t;

/* Event kinds. */
enum { SIM_EV_FORMULA = 0, SIM_EV_DUP = 1, SIM_EV_WEAK = 2 };

typedef struct sim_event {
    char name[64]; /* full name, "sim::E00_cycles" */
    int kind;
    uint32_t source;                 /* SIM_EV_DUP: event duplicated */
    double scale;                    /* multiplies the formula */
    double a_mem, a_br, a_lat, a_cpi; /* exponents of m, b, r, cpi */
    double a_work;                   /* exponent of w (1 for counting) */
    double noise;                    /* lognormal sigma per XU and run */
} sim_event_t;

struct ompf_sim_model {
    sim_params_t p;
    uint32_t n_events;
    sim_event_t *ev; /* built by sim_model_build() */
};

int sim_model_build(ompf_sim_model_t *m, ompf_error_t *err);

/* Latents of one XU in one run: work (instructions), memory intensity
 * (L1 misses per 1000 instructions), branch intensity (branches per
 * instruction), latency factor (1 = local, warm). */
typedef struct sim_latent {
    double w, m, b, r;
} sim_latent_t;

double sim_cpi(const sim_latent_t *l);
/* Noise-free value of event e for latents l (dups: of their source). */
double sim_event_value(const ompf_sim_model_t *m, uint32_t e,
                       const sim_latent_t *l);

/* ---- multiplexing (hem.c) ---------------------------------------------- */

/* Round-robin schedule: in period k, events (k*step + j) mod E, j < N,
 * run.  Periods start at time -phase (ns) on each thread. */
typedef struct sim_mux {
    uint32_t n_events, slots, step, cycle;
    double period, phase;
    uint32_t *prefix; /* n_events x (cycle + 1): running periods before j */
} sim_mux_t;

int sim_mux_init(sim_mux_t *x, uint32_t n_events, uint32_t slots,
                 uint32_t step, double period_ns, double phase_ns);
void sim_mux_free(sim_mux_t *x);
int sim_mux_running(const sim_mux_t *x, uint32_t e, uint64_t k);
/* Running time of event e over [0, t] of the thread. */
double sim_mux_running_time(const sim_mux_t *x, uint32_t e, double t);

/* A thread's timeline as piecewise-constant event rates. */
typedef struct sim_seg {
    double start, end;  /* ns */
    const double *rate; /* n_events rates (counts per ns) */
} sim_seg_t;

/* Reads the multiplexed counters at the given times (ascending, within the
 * segments; the segments cover [0, end] without holes) and returns for
 * each read and event the raw count (floored), the running time; the
 * enabled time is the read time. */
int sim_mux_read(const sim_mux_t *x, const sim_seg_t *segs, size_t n_segs,
                 const double *times, size_t n_times, double *raw,
                 double *running);

/* Per-XU HEM estimates of one event on one thread from its counter reads
 * (raw counts, read times = enabled, running times; reads 2j and 2j+1 are
 * XU j's start and end, the last read the thread's end), with the
 * estimators of libompfhem (ompf_hem_cumulative / ompf_hem_delta on the
 * integer readings the kernel would report).  est[j] receives XU j's
 * estimate; *total the scaled thread total.  stride: distance between
 * consecutive reads of this event in raw and running. */
void sim_hem_estimate(const double *raw, const double *times, const double *running,
                      size_t stride, size_t n_xus, int delta, double *est,
                      double *total);

/* text.c */
char *sim_trim(char *s);
/* Reads a whole text file of at most max bytes into *out (free it). */
int sim_read_text(const char *path, const char *what, size_t max,
                  char **out, ompf_error_t *err);

#endif
