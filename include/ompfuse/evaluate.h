/*
 * ompfuse evaluation: Execution Profile Dissimilarity (EPD) and Correlation
 * Error of a target profile against reference runs (docs/semantics.md,
 * Evaluation; TACO paper §4).
 * Definitions and every choice the papers leave open: docs/evaluation.md.
 *
 *   ompf_eval_create()  reads the references once: event pairs, their
 *                       repeats, histogram bounds, calibration TMDs;
 *   ompf_eval_target()  evaluates one target against them (all pairs, in
 *                       parallel); any number of targets per ompf_eval_t.
 *
 * The EMD solver is exact (network simplex on integer masses) and usable on
 * its own.
 */
#ifndef OMPFUSE_EVALUATE_H
#define OMPFUSE_EVALUATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ompfuse/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- exact EMD --------------------------------------------------------- */

typedef struct ompf_emd_ws ompf_emd_ws_t; /* reusable workspace, 1/thread */
typedef struct ompf_emd_stats {
    uint64_t pivots, degenerate_pivots;
} ompf_emd_stats_t;

int ompf_emd_ws_create(ompf_emd_ws_t **out);
void ompf_emd_ws_destroy(ompf_emd_ws_t *w);

/* Balanced transportation problem: m supplies a[i] > 0 and n demands
 * b[j] > 0, integers with equal sums <= 2^53; cost is m x n row-major,
 * finite and >= 0.  *out = min sum f_ij cost_ij / sum a (the cost with both
 * masses normalised to 1).  row_key (may be NULL) orders the sources for
 * the starting solution only (speed, never the result).  OMPF_ERANGE if the
 * pivot limit is hit (never observed; a safety net). */
int ompf_emd_transport(ompf_emd_ws_t *w, size_t m, const int64_t *a,
                       size_t n, const int64_t *b, const double *cost,
                       const double *row_key, double *out,
                       ompf_emd_stats_t *stats);

/* EMD between two 2-D histograms given as non-empty bins: counts ca[m]
 * (any positive total) at points pa[2m], counts cb[n] at pb[2n]; bin
 * weights are count / total of their histogram; ground distance Euclidean.
 * Requires lcm(total_a, total_b) <= 2^53 (OMPF_ERANGE otherwise). */
int ompf_emd_2d(ompf_emd_ws_t *w, size_t m, const int64_t *ca,
                const double *pa, size_t n, const int64_t *cb,
                const double *pb, double *out, ompf_emd_stats_t *stats);

/* ---- statistics helpers ------------------------------------------------ */

/* Median; an even count gives the mean of the two middle values.  Sorts v
 * in place.  NaN for n == 0. */
double ompf_median(double *v, size_t n);

/* Spearman's rank correlation with tied values given their average rank;
 * 0 when either variable is constant (no monotonic association), NaN for
 * n < 2. */
double ompf_spearman(const double *x, const double *y, size_t n);

/* ---- TMD histograms ---------------------------------------------------- */

/* Binning of one event pair: n intervals per event between the reference
 * bounds plus one outer bin each side ((n+2)^2 bins). */
typedef struct ompf_grid {
    unsigned n;
    double lo[2], hi[2], width[2]; /* width = (hi-lo)/n, or 1 if hi == lo */
} ompf_grid_t;

void ompf_grid_init(ompf_grid_t *g, unsigned n, double lo_a, double hi_a,
                    double lo_b, double hi_b);
/* Position of value v on axis d in interval units from lo (negative below
 * the range, > n above it). */
double ompf_grid_coord(const ompf_grid_t *g, int d, double v);
/* Bin index on axis d: 0 below, 1..n inside (v == hi in bin n), n+1 above. */
unsigned ompf_grid_bin(const ompf_grid_t *g, int d, double v);

/* A histogram reduced to its non-empty bins. */
typedef struct ompf_hist2d {
    size_t nbins;
    int64_t *count;    /* XUs per bin */
    double *pos;       /* centroid per bin (2 per bin), interval units */
    int64_t total;     /* XUs binned (weights are count / total) */
    uint64_t left_out; /* XUs left out: a value of the pair missing */
} ompf_hist2d_t;

/* Bins the XUs i < nxu (only those with type[i] == want_type when type is
 * non-NULL) with values va[i], vb[i]; missing values are left out and
 * counted. */
int ompf_hist2d_build(const ompf_grid_t *g, const double *va,
                      const double *vb, size_t nxu, const uint32_t *type,
                      uint32_t want_type, ompf_hist2d_t *h);
void ompf_hist2d_free(ompf_hist2d_t *h);

/* ---- EPD --------------------------------------------------------------- */

typedef struct ompf_eval_opts {
    unsigned bins;         /* intervals per event (default 10) */
    int per_type;          /* TMD per construct, weighted geometric mean */
    int allow_partial;     /* evaluate what can be, list the rest */
    int correlation_error; /* also Spearman-based Correlation Error */
    int check_program;     /* refuse profiles of another program (default 1) */
    unsigned threads;      /* worker threads (0: online CPUs) */
    int progress;          /* progress lines on stderr (include/ompfuse/
                              progress.h: ompf_progress_wanted) */
    int spearman;          /* Spearman per pair even without
                              correlation_error (for the CSV) */
} ompf_eval_opts_t;

void ompf_eval_opts_default(ompf_eval_opts_t *o);

typedef struct ompf_eval ompf_eval_t;

/* refs: the reference profiles (kept by pointer; must outlive the
 * evaluation), names: how messages call them (file names).  Fails with
 * OMPF_EMISMATCH (references of different programs, a pair with fewer than
 * 2 repeats unless allow_partial) or OMPF_EINVAL (no pair at all). */
int ompf_eval_create(const ompf_profile_t *const *refs,
                     const char *const *names, size_t nrefs,
                     const ompf_eval_opts_t *opts, ompf_eval_t **out,
                     ompf_error_t *err);
void ompf_eval_destroy(ompf_eval_t *ev);
/* The same in steps, references one at a time (ompfuse evaluate):
 * ompf_eval_begin, ompf_eval_add_reference per reference (in order), then
 * ompf_eval_finish; on an error the caller destroys the evaluation.  With
 * copy, the evaluation keeps its own copy of what it needs of the profile
 * (the values of its counted events and each XU's construct) and the
 * caller may destroy the profile at once, so that the references cost
 * their values only, not whole profiles held together; without copy, p
 * must outlive ompf_eval_finish.  A reference of another program than the
 * first is refused by ompf_eval_add_reference. */
int ompf_eval_begin(const ompf_eval_opts_t *opts, ompf_eval_t **out,
                    ompf_error_t *err);
int ompf_eval_add_reference(ompf_eval_t *ev, const ompf_profile_t *p,
                            const char *name, int copy, ompf_error_t *err);
int ompf_eval_finish(ompf_eval_t *ev, ompf_error_t *err);

/* Events (by name, order of first appearance in the references) and pairs. */
size_t ompf_eval_event_count(const ompf_eval_t *ev);
const char *ompf_eval_event_name(const ompf_eval_t *ev, size_t i);
size_t ompf_eval_pair_count(const ompf_eval_t *ev);
/* Pair i: its events (indices above), repeats (indices into refs), grid
 * (all XUs; NULL if the pair cannot be evaluated) and calibration. */
typedef struct ompf_eval_pair_info {
    uint32_t ev[2];
    size_t repeats;
    const size_t *repeat_refs;
    const ompf_grid_t *grid; /* bounds over all XUs of the repeats */
    double calibration;      /* all XUs together (also with per_type) */
    int calibration_floor;   /* 1 when the floor 1/|XUs| was used */
    const char *problem;     /* NULL, or why the pair cannot be evaluated */
} ompf_eval_pair_info_t;
int ompf_eval_pair_info(const ompf_eval_t *ev, size_t i,
                        ompf_eval_pair_info_t *info);
/* Pairs left out when the references were read (fewer than 2 repeats),
 * as "A,B: reason" lines; NULL when none. */
const char *ompf_eval_reference_notes(const ompf_eval_t *ev);

/* Per construct result of one pair (per_type). */
typedef struct ompf_eval_type_result {
    const char *type;       /* the construct key (ompf_construct_name) */
    double weight;          /* reference XUs of this type (pair's repeats) */
    double calibration;
    int calibration_floor;
    double tmd;             /* NaN when not evaluated */
    int tmd_floor;          /* 1 when the target floor 1/|XUs| was used */
    uint64_t left_out;
    uint64_t binned;        /* target XUs of this type in the histogram */
    double *uncalibrated;   /* TMD of this type to each repeat; NULL when
                               not evaluated */
    const char *problem;    /* NULL or why it was not evaluated */
} ompf_eval_type_result_t;

typedef struct ompf_eval_pair_result {
    size_t pair;            /* index of the pair in the evaluation */
    int evaluated;          /* 0: see problem */
    const char *problem;
    size_t repeats;
    double *uncalibrated;   /* TMD to each repeat (all XUs together) */
    double calibration;
    int calibration_floor;
    double tmd;             /* calibrated TMD used for EPD */
    int tmd_floor;          /* 1 when the median uncalibrated TMD was
                               raised to 1/|XUs| (not in the papers; see
                               docs/evaluation.md) */
    uint64_t left_out;      /* target XUs missing a value of the pair */
    uint64_t binned;        /* target XUs in the histogram */
    double spearman_target, spearman_reference; /* NaN unless requested
                                                   (correlation_error or
                                                   spearman) */
    size_t ntypes;
    ompf_eval_type_result_t *types;
} ompf_eval_pair_result_t;

typedef struct ompf_eval_result {
    char *target;           /* name given */
    double epd;             /* NaN when no pair could be evaluated */
    size_t pairs_total, pairs_evaluated;
    size_t calibration_floor_hits;
    size_t tmd_floor_hits;  /* evaluated pairs (and types) whose target
                               TMD was floored */
    uint64_t left_out_max;  /* largest left-out count over pairs */
    double correlation_error; /* NaN unless requested */
    ompf_eval_pair_result_t *pairs; /* pairs_total entries */
} ompf_eval_result_t;

/* Evaluates target.  Without allow_partial, a pair that cannot be
 * evaluated (the target lacks an event, a type, has no value) is an error
 * (OMPF_EMISMATCH) naming it; with it, it is listed in the result. */
int ompf_eval_target(ompf_eval_t *ev, const ompf_profile_t *target,
                     const char *name, ompf_eval_result_t **out,
                     ompf_error_t *err);
void ompf_eval_result_free(ompf_eval_result_t *r);

/* Indices of the result's evaluated pairs sorted by decreasing TMD. */
size_t ompf_eval_worst_pairs(const ompf_eval_result_t *r, size_t *idx,
                             size_t max);

/* CSV: header then one row per (target, pair) [and type with per_type]. */
int ompf_eval_csv_header(const ompf_eval_t *ev, FILE *out);
int ompf_eval_csv_rows(const ompf_eval_t *ev, const ompf_eval_result_t *r,
                       FILE *out);

/* Checks that two profiles come from the same program and arguments
 * (metadata "program", "argv"); 0 or OMPF_EMISMATCH with a message. */
int ompf_eval_same_program(const ompf_profile_t *a, const char *name_a,
                           const ompf_profile_t *b, const char *name_b,
                           ompf_error_t *err);

/* ---- inputs of the evaluate/report commands ---------------------------- */

typedef struct ompf_input {
    char *path;
    char *name; /* display name (targets); NULL until ompf_inputs_name */
    ompf_profile_t *profile;
} ompf_input_t;

typedef struct ompf_inputs {
    size_t n, cap;
    ompf_input_t *v;
    /* Optional: each profile, once loaded and selected, is handed to take
     * (which keeps what it needs of it) and destroyed at once, so that
     * the profiles are never all in memory; the entry's profile is then
     * NULL.  A non-zero return is the loading's error. */
    int (*take)(void *ctx, const ompf_input_t *in, const ompf_profile_t *p,
                ompf_error_t *err);
    void *take_ctx;
    /* Optional: OMPF_LEAN flags (profile.h, "Lean profiles") to read .ompf
     * files with, for a consumer that reads XUs only through the views
     * and values (evaluate); 0: in full. */
    unsigned lean;
} ompf_inputs_t;

/* Loads arg: a profile file, a CSV file (imported; program unknown), a
 * directory (its *.ompf files in name order) or, with allow_name,
 * NAME=PATH.  A truncated profile is used with a warning on stderr
 * prefixed by prog. */
int ompf_inputs_add(ompf_inputs_t *in, const char *arg, int allow_name,
                    const char *prog, ompf_error_t *err);
/* Reference selection.  A reference run has metadata mode "reference";
 * imported profiles (mode "imported") and profiles without a mode are
 * taken too (their origin is unknown).  1 when mode may be a reference. */
int ompf_mode_is_reference(const char *mode);

/* Like ompf_inputs_add without names, for references: from a directory
 * only the profiles ompf_mode_is_reference accepts are taken, the others
 * are counted in *skipped (may be NULL) and described in note (a
 * sentence, "" when none skipped; note may be NULL); a file named
 * explicitly whose mode is not a reference's (fused, hem, run, ...) is
 * refused with OMPF_EMISMATCH naming it.  any_mode: take every profile. */
int ompf_inputs_add_references(ompf_inputs_t *in, const char *arg,
                               int any_mode, const char *prog,
                               size_t *skipped, char *note, size_t note_len,
                               ompf_error_t *err);
/* Display names: NAME= if given, else metadata "strategy" of fused
 * profiles, "mode" of HEM profiles (hem, hem-delta, hem-*), else the file
 * name without .ompf; duplicates get " (file)" appended. */
int ompf_inputs_name(ompf_inputs_t *in);
void ompf_inputs_free(ompf_inputs_t *in);

/* ---- HTML report ------------------------------------------------------- */

typedef struct ompf_report_target {
    const char *name;
    const char *path;                 /* file, shown in the table */
    const ompf_profile_t *profile;
    const ompf_eval_result_t *result; /* NULL: not evaluated, see error */
    const char *error;
} ompf_report_target_t;

typedef struct ompf_report_group {
    const char *name;            /* section title (benchmark) */
    const ompf_eval_t *eval;     /* NULL: references unusable, see error */
    const char *error;
    const ompf_profile_t *const *refs;
    size_t nrefs;
    const ompf_report_target_t *targets;
    size_t ntargets;
    unsigned bins;
    int per_type;
    int scatter_pair;            /* pair for the scatter plots; -1: auto */
} ompf_report_group_t;

/* The table of contents holds this comment where a caller adding sections
 * before the groups (the campaign's verdicts) puts its entries. */
#define OMPF_REPORT_TOC_MARK "<!--ompfuse:toc-extra-->"

/* One self-contained HTML document (inline SVG, no scripts, no network). */
int ompf_report_write(FILE *out, const char *title,
                      const ompf_report_group_t *groups, size_t ngroups,
                      ompf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
