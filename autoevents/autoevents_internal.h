/* Private to libompfauto: the state of a choice (auto.c runs the pilots,
 * choose.c chooses, report.c prints and saves) and the rate pilot
 * (ratepilot.c). */
#ifndef OMPF_AUTOEVENTS_INTERNAL_H
#define OMPF_AUTOEVENTS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "ompfuse/autoevents.h"

#define UPROBE_COST 15e-6    /* s per hit when not measured (docs/events.md) */
#define EMULATED_COST 3e-6   /* the same on an emulated instruction (benchmarks/event-cost) */
#define TRACEPOINT_COST 250e-9 /* s per hit (benchmarks/event-cost) */
/* s per uprobe and thread to open and close its event (benchmarks/
 * events-sources): held in tracefs by the campaign, or through the uprobe
 * PMU (a trace event made and unregistered per thread, RCU grace periods) */
#define UPROBE_FIXED_HELD 150e-6
#define UPROBE_FIXED_PMU 0.1
#define BASE_EVENT "perf::TASK-CLOCK"
#define MIN_COVERED 0.01     /* share of the XUs an event must fire in */
#define MIN_DEPENDENCE 0.001 /* weighted share of XUs random pairing must move */
#define CHECK_RUNS 3 /* check: runs with the chosen set, and base runs, alternating */

struct ompf_auto {
    ompf_auto_cand_t *c;
    size_t n;
    size_t *order; /* chosen, in order of choice */
    size_t nchosen;
    double base_s, check_s, plain_s, uprobe_cost, emu_cost, est_s;
    double uprobe_fixed; /* UPROBE_FIXED_HELD or _PMU */
    double base_cpu, check_cpu; /* perf::TASK-CLOCK over the threads, s */
    int uprobe_cost_measured, tracefs;
    size_t xus, ntypes;
    uint32_t *xtype;     /* per XU of the XU pilot: its construct */
    unsigned char **bin; /* per candidate and XU: EPD's interval (NULL: none) */
    double *lo, *hi;     /* per candidate: the bounds of those intervals */
    uint32_t *match;     /* per XU: the XU of its label in the second run, or
                            UINT32_MAX; NULL: no second run */
    unsigned char **bin2; /* per candidate and XU: its interval in that run */
};

/* Sets c->why unless a reason is there already (the first one is shown). */
void ompf__auto_reject(ompf_auto_cand_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Per-candidate statistics from the XU pilot's profile p; vals[i] gets the
 * residuals of candidate i (malloc'd; NULL for rejected ones). */
int ompf__auto_xu_stats(ompf_auto_t *a, const ompf_profile_t *p, double **vals);
/* The statistics from values per XU (vals[i]: candidate i's, or NULL; each
 * becomes its residuals) and each XU's construct (< ntypes).  The tests
 * call it with synthetic values. */
int ompf__auto_stats(ompf_auto_t *a, size_t nx, const uint32_t *type, size_t ntypes,
                     double **vals);
/* EPD's interval of v: one of 10 equal ones over [lo, hi]. */
unsigned char ompf__auto_bin(double v, double lo, double hi);
/* Matches the XU pilot's second run p2 to the first p1 by label and bins
 * its values (after ompf__auto_stats on p1), so that dependence is
 * measured between runs (cross.c). */
int ompf__auto_cross(ompf_auto_t *a, const ompf_profile_t *p1, const ompf_profile_t *p2);
/* Share of the XUs that random pairing within constructs moves to another
 * cell of the joint histogram of candidates i and j (0..1). */
double ompf__auto_dependence(const ompf_auto_t *a, size_t i, size_t j);
/* Share of the XUs whose cell of the pair's joint histogram differs
 * between the two XU-pilot runs (0 without a second run). */
double ompf__auto_repeat_noise(const ompf_auto_t *a, size_t i, size_t j);
/* The probes' budget is o->max_slowdown of this (choose.c). */
double ompf__auto_budget_ref(const ompf_auto_t *a);
/* The greedy choice (strict: o's thresholds; else the fallback). */
int ompf__auto_choose(ompf_auto_t *a, double **vals, const ompf_auto_opts_t *o, int strict);

typedef struct ompf_auto_round {
    double *count;   /* per candidate, whole process */
    int *usable;     /* the candidate opened and was read */
    double seconds;  /* wall time of the round */
    double cpu;      /* CPU time of the program (user + system), s */
    int killed;      /* stopped at the budget */
    int failed;      /* the program exited non-zero or by a signal */
    int status;      /* waitpid's */
} ompf_auto_round_t;

double ompf_cmpi_now(void); /* monotonic seconds (campaign/campaign.c) */
/* Runs argv once with names counted (n may be 0: a plain timing run).
 * 0 (r filled, even when the program failed: r->failed), OMPF_EPERM when
 * the counters may not be opened (err says to run as root). */
int ompf_auto_rate_round(char *const *argv, const char *const *env, size_t nenv,
                         const ompf_exit_set_t *exit_ok, char *const *names, size_t n,
                         double budget_s, ompf_auto_round_t *r, ompf_error_t *err);
void ompf_auto_round_free(ompf_auto_round_t *r);
/* The verdicts of one rate-pilot round on the candidates idx[0..na)
 * (ratepilot.c); returns how many it dropped as too hot or unusable. */
size_t ompf__auto_rate_verdicts(ompf_auto_t *a, const size_t *idx, size_t na,
                                const ompf_auto_round_t *r, double plain, double max_slowdown);
/* CPU seconds per uprobe hit now: n calls of a probed function of this
 * process against n without the probe (emulated: its first instruction a
 * nop, which the kernel emulates); 0 when it cannot be measured. */
double ompf_auto_hit_cost(size_t n, int emulated);
/* What a hit of candidate c costs (its kind and instruction). */
double ompf__auto_cost_of(const ompf_auto_t *a, const ompf_auto_cand_t *c);
/* 1 when x86 uprobes emulate the instruction at b[0..n) (candidates.c). */
int ompf__auto_emulated(const unsigned char *b, size_t n);

#endif
