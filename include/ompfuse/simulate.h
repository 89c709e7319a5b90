/*
 * ompfuse simulator: synthetic OpenMP-like executions with a known ground
 * truth (docs/simulator.md).
 *
 * A model describes a program (XU types, counts, latent work
 * characteristics, E events as noisy functions of the latents) and a
 * machine (run-to-run variability, threads, PMU slots, multiplexing
 * period).  A plan lists runs (role, repeat, events) in the campaign plan
 * text format.  Executing a run gives an ordinary profile as the real tool
 * would record it (mode run, reference, hem or hem-delta) and appends the
 * true values of every event for every XU of that run to a truth profile.
 *
 * Randomness: the program (XU latents, event definitions) depends only on
 * the model (key model_seed); everything that differs between runs depends
 * on the simulation seed and the run number.  Same model, seed and run
 * number give the same run, bit for bit.
 */
#ifndef OMPFUSE_SIMULATE_H
#define OMPFUSE_SIMULATE_H

#include <stdint.h>
#include <stdio.h>
#include "ompfuse/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- models ------------------------------------------------------------ */

typedef struct ompf_sim_model ompf_sim_model_t;

/* NULL-terminated list of built-in model names ("zero", "low", "high"). */
const char *const *ompf_sim_builtin_names(void);
/* One-line description of a built-in model (NULL when unknown). */
const char *ompf_sim_builtin_summary(const char *name);

/* spec: "builtin:NAME" or the path of a model file (key = value lines). */
int ompf_sim_model_load(const char *spec, ompf_sim_model_t **out,
                        ompf_error_t *err);
/* Parses model text; origin names it in messages ("file.txt"). */
int ompf_sim_model_parse(const char *text, const char *origin,
                         ompf_sim_model_t **out, ompf_error_t *err);
/* Overrides one parameter (same keys as the file). */
int ompf_sim_model_set(ompf_sim_model_t *m, const char *key,
                       const char *value, ompf_error_t *err);
void ompf_sim_model_destroy(ompf_sim_model_t *m);
/* Writes every parameter as "key = value" lines (loadable again). */
int ompf_sim_model_write(const ompf_sim_model_t *m, FILE *f);
const char *ompf_sim_model_name(const ompf_sim_model_t *m);
uint32_t ompf_sim_model_event_count(const ompf_sim_model_t *m);
uint32_t ompf_sim_model_xu_count(const ompf_sim_model_t *m);
uint32_t ompf_sim_model_slots(const ompf_sim_model_t *m);
/* Name of event i ("sim::E00_cycles"); writes into buf like snprintf. */
size_t ompf_sim_event_name(const ompf_sim_model_t *m, uint32_t i, char *buf,
                           size_t len);
/* Event index from a name: full ("sim::E02_l1_dcm"), short ("E02_l1_dcm",
 * "E02") or positional ("ev2", "e2").  Returns -1 when unknown. */
int ompf_sim_event_find(const ompf_sim_model_t *m, const char *name);

/* ---- plans ------------------------------------------------------------- */

typedef enum ompf_sim_role {
    OMPF_SIM_RUN = 0,       /* one event set, fused later */
    OMPF_SIM_REFERENCE = 1, /* simultaneous reference run (EPD) */
    OMPF_SIM_HEM = 2,       /* multiplexed, cumulative scaling */
    OMPF_SIM_HEM_DELTA = 3, /* multiplexed, delta scaling */
    OMPF_SIM_ROLE_COUNT
} ompf_sim_role_t;

const char *ompf_sim_role_name(int role); /* "run", ... */
int ompf_sim_role_parse(const char *s);   /* -1 when unknown */

typedef struct ompf_sim_plan_line {
    int role;            /* ompf_sim_role_t */
    uint32_t repeat;     /* >= 1 */
    uint32_t n_events;
    uint32_t *events;    /* model event indices, in the order given */
    char group[32];      /* run lines: the last "# group: NAME" line, or "";
                            other roles: "" (files named by role) */
} ompf_sim_plan_line_t;

typedef struct ompf_sim_plan ompf_sim_plan_t;

/* Plan text: "<role> <repeat> <events>" per line, events comma-separated
 * or "all"; '#' starts a comment; "# group: NAME" names the fusion runs
 * ("run" lines) that follow in output file names; reference and HEM runs
 * are always named by their role.  Events are resolved against the
 * model; run/reference lines may not exceed the model's pmu_slots. */
int ompf_sim_plan_parse(const char *text, const char *origin,
                        const ompf_sim_model_t *m, ompf_sim_plan_t **out,
                        ompf_error_t *err);
int ompf_sim_plan_load(const char *path, const ompf_sim_model_t *m,
                       ompf_sim_plan_t **out, ompf_error_t *err);

/* Automatic plan for a model's events with `slots` counters:
 *   group lgl: disjoint sets (first-fit), role run;
 *   group bc: a chain of sets, each overlapping its predecessors by
 *     max(1, (slots+1)/3) events chosen as the most correlated (on a pilot
 *     run of the model) with the new events, role run;
 *   role reference (no group): every pair of events in some set, each
 *     set `ref_repeats` times;
 *   "hem 1 all" and "hem-delta 1 all" (no group).
 * hem_repeats (>= 0) repeats the HEM lines. */
int ompf_sim_plan_auto(const ompf_sim_model_t *m, uint32_t slots,
                       uint32_t ref_repeats, uint32_t hem_repeats,
                       ompf_sim_plan_t **out, ompf_error_t *err);
size_t ompf_sim_plan_count(const ompf_sim_plan_t *p);
const ompf_sim_plan_line_t *ompf_sim_plan_get(const ompf_sim_plan_t *p,
                                              size_t i);
/* Number of runs once repeats are expanded. */
size_t ompf_sim_plan_runs(const ompf_sim_plan_t *p);
/* Writes the plan in its text format (events by full name). */
int ompf_sim_plan_write(const ompf_sim_plan_t *p, const ompf_sim_model_t *m,
                        FILE *f);
void ompf_sim_plan_destroy(ompf_sim_plan_t *p);

/* ---- executing runs ---------------------------------------------------- */

typedef struct ompf_sim ompf_sim_t;

/* Builds the program of model m (kept by reference: m must outlive sim). */
int ompf_sim_create(const ompf_sim_model_t *m, uint64_t seed,
                    ompf_sim_t **out, ompf_error_t *err);
void ompf_sim_destroy(ompf_sim_t *s);

/* An empty truth profile for this simulation (mode "truth", all events). */
int ompf_sim_truth_create(const ompf_sim_t *s, ompf_profile_t **out,
                          ompf_error_t *err);

/* Simulates run number run_no (its randomness depends on seed and run_no
 * only) with the given role and events; *profile receives the profile the
 * real tool would write.  When truth is non-NULL, the run's XUs with every
 * event are appended to it: truth XU id = (truth run index << 32) | XU id
 * in the run; the truth's metadata "truth_runs" lists the run ids (hex, in
 * order) and "truth_run.<k>" = "<run id> <mode> <file>" names them. */
int ompf_sim_execute(ompf_sim_t *s, uint32_t run_no, int role,
                     const uint32_t *events, uint32_t n_events,
                     ompf_profile_t **profile, ompf_profile_t *truth,
                     ompf_error_t *err);

/* Records the file name of the truth's last appended run (metadata). */
int ompf_sim_truth_set_file(ompf_profile_t *truth, const char *file);

/* Executes a whole plan in memory (tests, benchmarks): runs[i] for the
 * expanded runs in plan order (run_no = i); lines[i] is its plan line
 * (points into plan, which must outlive the output). */
typedef struct ompf_sim_output {
    size_t n_runs;
    ompf_profile_t **runs;
    const ompf_sim_plan_line_t **lines; /* plan line of each run */
    ompf_profile_t *truth;              /* NULL when not requested */
} ompf_sim_output_t;

#define OMPF_SIM_TRUTH_NONE 0
#define OMPF_SIM_TRUTH_ALL 1
#define OMPF_SIM_TRUTH_NO_REFERENCES 2 /* reference runs left out (smaller) */
int ompf_sim_generate(const ompf_sim_model_t *m, const ompf_sim_plan_t *plan,
                      uint64_t seed, int truth_mode, ompf_sim_output_t *out,
                      ompf_error_t *err);
void ompf_sim_output_free(ompf_sim_output_t *out);

/* Runs in a truth profile, and run k of it as a profile of its own (mode
 * run, every event, the run's id, XU ids and threads): what a machine with
 * a counter for every event would have recorded (the ideal fusion). */
size_t ompf_sim_truth_run_count(const ompf_profile_t *truth);
int ompf_sim_truth_extract(const ompf_profile_t *truth, size_t k,
                           ompf_profile_t **out, ompf_error_t *err);

/* ---- size of the output ------------------------------------------------ */

/* What `ompfuse simulate` would write for a plan: bytes of the run files
 * and of the truth (truth_mode OMPF_SIM_TRUTH_*), measured on serialised
 * probe runs and extrapolated in the number of events (within ~10 %; the
 * format compresses).  When a generous upper bound is <= limit, no probe
 * runs: bytes is that bound and bound_only is 1. */
typedef struct ompf_sim_estimate {
    uint64_t bytes;       /* run_bytes + truth_bytes, or the bound */
    uint64_t run_bytes, truth_bytes;
    uint64_t files;       /* profiles written (runs, truth) */
    int bound_only;
} ompf_sim_estimate_t;
int ompf_sim_estimate(const ompf_sim_model_t *m, const ompf_sim_plan_t *plan,
                      uint64_t seed, int truth_mode, uint64_t limit,
                      ompf_sim_estimate_t *out, ompf_error_t *err);

/* ---- per-XU error against the truth ------------------------------------ */

/* Per-XU error of a target profile (fused, or one simulated run such as a
 * HEM profile): for each XU, the base XU is the XU of the run that
 * provided the first event set (fused: the source of event 0's values, or
 * source 0; otherwise the target's own run); its error is the median over
 * the target's events of |value - true value of the base XU| / max(|true
 * value|, 1).  A missing value counts as error 1.  XUs whose base XU is
 * not in the truth are counted as unmatched and not scored. */
typedef struct ompf_sim_score {
    uint64_t xus;       /* XUs of the target */
    uint64_t scored;    /* XUs with a base XU in the truth */
    uint64_t unmatched; /* XUs without */
    uint64_t missing;   /* missing values seen (scored XUs) */
    uint32_t events;    /* target events found in the truth */
    double median;      /* median per-XU error */
    double mean;
    double p90;         /* 90th percentile (nearest rank) */
    double worst;       /* largest error of a single value (any XU, event) */
} ompf_sim_score_t;

int ompf_sim_score(const ompf_profile_t *target, const ompf_profile_t *truth,
                   ompf_sim_score_t *out, ompf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
