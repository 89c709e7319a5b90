/*
 * ompfuse fusion: merges N profiles of one program, each with its own event
 * set, into one fused profile in which every XU has a value for every event
 * (docs/semantics.md, Fusion; TACO 2017 §3; IWOMP 2017 §3).
 *
 * Strategies: CTC (chronological per type), LGL (label join), BC and
 * BC-unlabeled (behaviour clustering on overlapping events), and a seeded
 * random pairing as a control.  The result records full provenance: one
 * source per input run, per fused XU the source XU id of every run, per
 * event the run that provided its values.  Unmatched XUs are counted per
 * type and run in the report (they are not part of the fused profile).
 *
 * Typical use:
 *   ompf_fuse_opts_t o;
 *   ompf_fuse_opts_init(&o);
 *   o.strategy = OMPF_FUSE_LGL;
 *   rc = ompf_fuse(inputs, paths, n, &o, &out, &rep, &err);
 *   ompf_fuse_report_print(rep, stdout);
 */
#ifndef OMPFUSE_FUSION_H
#define OMPFUSE_FUSION_H

#include <stdio.h>
#include "ompfuse/profile.h"
#include "ompfuse/progress.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ompf_fuse_strategy {
    OMPF_FUSE_CTC = 0,
    OMPF_FUSE_LGL = 1,
    OMPF_FUSE_BC = 2,
    OMPF_FUSE_BC_UNLABELED = 3,
    OMPF_FUSE_RANDOM = 4,
    OMPF_FUSE_STRATEGY_COUNT
} ompf_fuse_strategy_t;

/* "ctc", "lgl", "bc", "bc-unlabeled", "random" and the inverse (-1 when
 * unknown). */
const char *ompf_fuse_strategy_name(ompf_fuse_strategy_t s);
int ompf_fuse_strategy_parse(const char *s);

typedef struct ompf_fuse_opts {
    int strategy;      /* ompf_fuse_strategy_t */
    uint64_t seed;     /* random, bc-unlabeled (default 1) */
    int order_given;   /* BC: 1 = use the inputs' order and refuse when it is
                          not valid; 0 (default) = keep it when valid, else
                          find a valid order */
    int force;         /* combine despite different program/argv/team_size,
                          duplicated run ids or the same file given twice
                          (recorded in "forced" / "forced_checks") */
    int strict;        /* refuse inputs from different cpu_model */
    ompf_progress_t *progress; /* optional (NULL: none): advanced by the
                          input XUs paired, then by those written to the
                          result; total 2 x the input XUs */
} ompf_fuse_opts_t;

void ompf_fuse_opts_init(ompf_fuse_opts_t *o);

/* Per construct type of the result. */
typedef struct ompf_fuse_type_stats {
    const char *name;     /* construct display name */
    const char *key;      /* cross-run identity (ompf_construct_key) */
    uint64_t fused;       /* XUs of this type in the result */
    const uint64_t *in;   /* per input (given order): XUs of this type;
                             unmatched XUs of input r = in[r] - fused */
    uint64_t label_dups;  /* LGL: (run, label) groups with more than one XU */
    uint32_t iterations;  /* BC: grid iterations, summed over all steps */
} ompf_fuse_type_stats_t;

typedef struct ompf_fuse_report ompf_fuse_report_t;

size_t ompf_fuse_report_n_inputs(const ompf_fuse_report_t *r);
size_t ompf_fuse_report_n_types(const ompf_fuse_report_t *r);
const ompf_fuse_type_stats_t *
ompf_fuse_report_type(const ompf_fuse_report_t *r, size_t i);
/* Index of the stats of the type with this key, or -1. */
int ompf_fuse_report_find_type(const ompf_fuse_report_t *r, const char *key);
/* Order in which the inputs were combined (BC: a valid order; others: the
 * given order): order[k] = input index. */
const uint32_t *ompf_fuse_report_order(const ompf_fuse_report_t *r);
/* Totals over all types. */
uint64_t ompf_fuse_report_fused(const ompf_fuse_report_t *r);
uint64_t ompf_fuse_report_unmatched(const ompf_fuse_report_t *r,
                                    size_t input);
uint32_t ompf_fuse_report_iterations(const ompf_fuse_report_t *r);
/* Warnings and notes (already-fused input, forced checks, label
 * duplicates, events nobody measured, ...), one sentence each. */
size_t ompf_fuse_report_n_notes(const ompf_fuse_report_t *r);
const char *ompf_fuse_report_note(const ompf_fuse_report_t *r, size_t i);
/* The short human summary printed by `ompfuse combine`. */
void ompf_fuse_report_print(const ompf_fuse_report_t *r, FILE *f);
void ompf_fuse_report_destroy(ompf_fuse_report_t *r);

/* Fuses inputs[0..n-1].  paths (may be NULL, or hold NULLs) name the inputs
 * in messages and in the result's sources.  On success *out is the fused
 * profile and *report (if report is non-NULL) its report; when the inputs
 * cannot be combined returns OMPF_EMISMATCH (or OMPF_EINVAL for fewer than
 * two inputs) with err naming the input, the problem and the remedy, and
 * *report (if non-NULL) may still hold the notes gathered so far (or NULL).
 * The inputs are not modified.  The same inputs and options give the same
 * result, byte for byte once written. */
int ompf_fuse(const ompf_profile_t *const *inputs, const char *const *paths,
              size_t n, const ompf_fuse_opts_t *opts, ompf_profile_t **out,
              ompf_fuse_report_t **report, ompf_error_t *err);

/* The same, written straight to out_path (ompf_profile_write_feed: a
 * temporary name, then renamed): the fused XUs are produced chunk by chunk
 * and never all held in memory.  The file is byte for byte the one
 * ompf_profile_write would write from ompf_fuse's result.  Errors as
 * ompf_fuse, plus the output's I/O errors (err names the path). */
int ompf_fuse_write(const ompf_profile_t *const *inputs,
                    const char *const *paths, size_t n,
                    const ompf_fuse_opts_t *opts, const char *out_path,
                    ompf_fuse_report_t **report, ompf_error_t *err);

/* ompf_fuse_write for a caller that holds its inputs only to fuse them
 * (combine): the same file, but once the strategy has matched the XUs,
 * every lean input other than the base run (report's order[0], whose
 * records the fused XUs take) and not packed drops its start and end
 * times, as by ompf_profile_lean_narrow(input, OMPF_LEAN).  That is 16
 * bytes an XU of those runs less while the output is built. */
int ompf_fuse_write_release(ompf_profile_t *const *inputs,
                            const char *const *paths, size_t n,
                            const ompf_fuse_opts_t *opts, const char *out_path,
                            ompf_fuse_report_t **report, ompf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
