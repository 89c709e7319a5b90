/*
 * ompfuse planning (docs/semantics.md, Planning): which runs to make so that
 * every requested event is counted for fusion (LGL/CTC: disjoint sets; BC: an
 * overlapping chain), every pair of events is covered by simultaneous
 * reference runs (EPD), and, if asked, multiplexed HEM runs for comparison.
 * A plan is a small text file a person can read and edit:
 *
 *     # comment
 *     <role> <repeat> <event,event,...> [key=value ...]
 *
 * roles: lgl, ctc, bc, run (fusion runs; OMPFUSE_MODE=run), reference,
 * hem, hem-delta; repeat >= 1 is how many times the line is executed;
 * events are libpfm4 names or "all" (every event named elsewhere in the
 * plan).  Options after the events become OMPFUSE_<KEY> variables of the
 * run (period_us is OMPFUSE_MUX_PERIOD_US).  "# slots: N" records the
 * counter limit the plan was made for; "# group: NAME" comments are kept.
 *
 * Compatibility of a set is decided by an oracle: on a real machine
 * ompf_plan_probe_compat() opens the set as one perf_event group
 * (docs/semantics.md, Planning); tests and what-if planning pass their own
 * callback.
 */
#ifndef OMPFUSE_PLAN_H
#define OMPFUSE_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "ompfuse/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- roles ------------------------------------------------------------- */

typedef enum ompf_plan_role {
    OMPF_ROLE_LGL = 0,       /* disjoint set for LGL / CTC / random */
    OMPF_ROLE_CTC = 1,       /* same as lgl, named for CTC */
    OMPF_ROLE_BC = 2,        /* overlapping chain set for BC */
    OMPF_ROLE_RUN = 3,       /* generic fusion run (simulator plans) */
    OMPF_ROLE_REFERENCE = 4, /* simultaneous reference run (EPD) */
    OMPF_ROLE_HEM = 5,       /* multiplexed, cumulative scaling */
    OMPF_ROLE_HEM_DELTA = 6, /* multiplexed, delta scaling */
    OMPF_ROLE_COUNT
} ompf_plan_role_t;

const char *ompf_plan_role_name(int role);   /* "lgl", ...; NULL if bad */
int ompf_plan_role_parse(const char *s);     /* -1 when unknown */
/* OMPFUSE_MODE value of a role: "run", "reference", "hem", "hem-delta". */
const char *ompf_plan_role_mode(int role);

/* ---- the plan ---------------------------------------------------------- */

typedef struct ompf_plan_run {
    int role;           /* ompf_plan_role_t */
    uint32_t repeat;    /* >= 1 */
    size_t n_events;
    char **events;      /* libpfm4 names ("all" already expanded) */
    size_t n_opts;
    char **opts;        /* "key=value" */
    unsigned src_line;  /* line in the file it was read from, 0 if built */
} ompf_plan_run_t;

typedef struct ompf_plan ompf_plan_t;

int ompf_plan_create(ompf_plan_t **out);
void ompf_plan_destroy(ompf_plan_t *p);

/* Appends a run line (strings copied).  opts may be NULL. */
int ompf_plan_add(ompf_plan_t *p, int role, uint32_t repeat,
                  const char *const *events, size_t n,
                  const char *const *opts, size_t n_opts);
/* Appends a comment line (text without the leading "# "). */
int ompf_plan_comment(ompf_plan_t *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends every line (comments and runs) of src to dst. */
int ompf_plan_append(ompf_plan_t *dst, const ompf_plan_t *src);

size_t ompf_plan_count(const ompf_plan_t *p); /* run lines */
const ompf_plan_run_t *ompf_plan_get(const ompf_plan_t *p, size_t i);
/* Runs once repeats are expanded (optionally only of one role; -1: all). */
size_t ompf_plan_total_runs(const ompf_plan_t *p, int role);
/* Distinct events of the plan in order of first appearance. */
size_t ompf_plan_event_count(const ompf_plan_t *p);
const char *ompf_plan_event(const ompf_plan_t *p, size_t i);
/* Counter limit recorded by "# slots: N" (0 when absent). */
unsigned ompf_plan_slots(const ompf_plan_t *p);
void ompf_plan_set_slots(ompf_plan_t *p, unsigned slots);

/* Text format.  Parse errors name origin:line, the problem and the fix. */
int ompf_plan_parse(const char *text, const char *origin, ompf_plan_t **out,
                    ompf_error_t *err);
int ompf_plan_load(const char *path, ompf_plan_t **out, ompf_error_t *err);
int ompf_plan_write(const ompf_plan_t *p, FILE *f);
/* Writes to "<path>.tmp.<pid>" and renames; "-" is stdout. */
int ompf_plan_save(const ompf_plan_t *p, const char *path, ompf_error_t *err);

/* ---- compatibility ----------------------------------------------------- */

/* Returns 1 when the n events can be counted together in one run, 0 when
 * not (why, if non-NULL, receives a sentence). */
typedef int (*ompf_plan_compat_fn)(const char *const *events, size_t n,
                                   void *ctx, char *why, size_t whylen);

/* The real oracle: ctx is NULL; opens the set as one group on the calling
 * thread and requires time_running == time_enabled > 0 (ompf_cnt_probe).
 * The slot limit is checked by the planners, not here. */
int ompf_plan_probe_compat(const char *const *events, size_t n, void *ctx,
                           char *why, size_t whylen);
/* How many of the events count together: a set grown greedily in list
 * order (an event joins when the set with it is compatible) up to max.
 * Below both max and n, it is the counter limit the PMU really has, which
 * libpfm4's table cannot know (counters taken by the NMI watchdog or a
 * hypervisor, or a limit set for a test).  compat NULL: the real oracle. */
size_t ompf_plan_measure_slots(const char *const *events, size_t n,
                               unsigned max, ompf_plan_compat_fn compat,
                               void *ctx);
/* Everything compatible (what-if planning, --assume-compatible). */
int ompf_plan_assume_compat(const char *const *events, size_t n, void *ctx,
                            char *why, size_t whylen);

/* ---- planners ------------------------------------------------------------ */

typedef struct ompf_plan_opts {
    unsigned slots;          /* counter limit (>= 1) */
    int for_lgl, for_bc;     /* which fusion runs to plan */
    unsigned references;     /* repeats of each reference set; 0 = none */
    int hem;                 /* add "hem" and "hem-delta" runs */
    unsigned hem_repeats;    /* repeats of each HEM line (default 1) */
    unsigned bc_overlap;     /* events shared with predecessors (def. 1) */
    ompf_plan_compat_fn compat; /* NULL: ompf_plan_probe_compat */
    void *compat_ctx;
    /* BC overlap choice: n x n matrix of |correlation| between the events
     * (row-major, NaN = unknown), or NULL for the default anchor
     * (cycles/instructions where given, else perf::TASK-CLOCK). */
    const double *corr;
} ompf_plan_opts_t;

void ompf_plan_opts_init(ompf_plan_opts_t *o);

typedef struct ompf_plan_stats {
    size_t lgl_sets, bc_sets, ref_sets;
    size_t pairs;          /* event pairs to cover */
    size_t pairs_uncoverable; /* pairs no compatible set can hold */
    size_t ref_runs;       /* ref_sets * references */
    size_t naive_ref_sets; /* one set per pair */
    size_t oracle_calls;
} ompf_plan_stats_t;

/* Builds a whole plan for events[0..n-1] (duplicates refused).  Each event
 * must be compatible on its own; errors name the event and the reason. */
int ompf_plan_build(const char *const *events, size_t n,
                    const ompf_plan_opts_t *o, ompf_plan_t **out,
                    ompf_plan_stats_t *st, ompf_error_t *err);

/* The three planners, appending to p (stats may be NULL). */
int ompf_plan_disjoint(ompf_plan_t *p, int role, const char *const *events,
                       size_t n, const ompf_plan_opts_t *o,
                       ompf_plan_stats_t *st, ompf_error_t *err);
int ompf_plan_chain(ompf_plan_t *p, const char *const *events, size_t n,
                    const ompf_plan_opts_t *o, ompf_plan_stats_t *st,
                    ompf_error_t *err);
int ompf_plan_pairs(ompf_plan_t *p, const char *const *events, size_t n,
                    const ompf_plan_opts_t *o, ompf_plan_stats_t *st,
                    ompf_error_t *err);

/* Checks of a finished plan (tests, `ompfuse plan` self-check): 0 when
 * every reference/chain condition holds, else OMPF_EINVAL naming it. */
int ompf_plan_check_pairs(const ompf_plan_t *p, unsigned slots,
                          ompf_error_t *err);
int ompf_plan_check_chain(const ompf_plan_t *p, ompf_error_t *err);

/* |Spearman| between every pair of the n events from pilot profiles (any
 * profile with both events; averaged over such profiles, over XUs with
 * both values present).  out: n x n, NaN where no profile has both. */
int ompf_plan_correlation(const ompf_profile_t *const *profiles,
                          size_t nprof, const char *const *events, size_t n,
                          double *out);

/* ---- the event catalog (libpfm4) -------------------------------------- */

typedef struct ompf_pmu_desc {
    char name[64];        /* libpfm4 PMU name ("perf", "amd64_fam19h_zen3") */
    char desc[128];
    int pfm_type;         /* pfm_pmu_type_t */
    int num_cntrs, num_fixed_cntrs;
    int nevents;
    int kernel_present;   /* the kernel exposes a PMU for it (hardware
                             PMUs: /sys/bus/event_source/devices/cpu...);
                             always 1 for the generic perf PMU */
} ompf_pmu_desc_t;

typedef struct ompf_event_desc {
    char *name;    /* "pmu::EVENT" */
    char *desc;
    char *equiv;   /* alias target or NULL */
    size_t pmu;    /* index into the catalog's PMUs */
    int software;  /* PERF_TYPE_SOFTWARE: counts without a hardware PMU */
    size_t n_umasks;
    char **umasks; /* umask/modifier names */
} ompf_event_desc_t;

typedef struct ompf_catalog ompf_catalog_t;

int ompf_catalog_load(ompf_catalog_t **out, ompf_error_t *err);
void ompf_catalog_destroy(ompf_catalog_t *c);
size_t ompf_catalog_pmu_count(const ompf_catalog_t *c);
const ompf_pmu_desc_t *ompf_catalog_pmu(const ompf_catalog_t *c, size_t i);
size_t ompf_catalog_event_count(const ompf_catalog_t *c);
const ompf_event_desc_t *ompf_catalog_event(const ompf_catalog_t *c,
                                            size_t i);
/* 1 when the kernel exposes a hardware (CPU) PMU. */
int ompf_catalog_has_hw_pmu(const ompf_catalog_t *c);
/* General counters of the CPU PMU present in the kernel (0 if none). */
int ompf_catalog_hw_counters(const ompf_catalog_t *c);

/* Closest valid names to a mistyped one (edit distance), at most max,
 * written to buf as "A, B or C".  Returns how many were found. */
size_t ompf_catalog_suggest(const ompf_catalog_t *c, const char *name,
                            size_t max, char *buf, size_t len);

/* Checks that every name is a libpfm4 event this machine can encode; on
 * an unknown name fails with OMPF_ENOTFOUND and a message suggesting the
 * closest valid names. */
int ompf_plan_check_names(const char *const *events, size_t n,
                          ompf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
