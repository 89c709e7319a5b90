/*
 * ompfuse automatic event choice (`--events auto`, docs/events.md): on a
 * machine without a hardware PMU, pick events that vary per execution unit
 * (XU) and are not twins of each other, from short pilot runs of the
 * program itself:
 *   candidates  uprobes at the statement addresses of the source lines of
 *               the program's own functions (libdw line table), a short list of
 *               tracepoints, the software events;
 *   rate pilot  the program with every uprobe candidate counted on every
 *               CPU, in rounds that drop the candidates hit more often than
 *               a whole run affords, until a round completes: exact
 *               totals, so probe costs are known;
 *   XU pilot    the program under the tool with the survivors, twice: per-XU
 *               counts, and what of them holds between runs (by label);
 *   choice      greedy over pairs: fires inside XUs, varies within
 *               constructs, the most dependence within constructs with the
 *               chosen ones (what the random control breaks), no twin
 *               (|Pearson r| above a bound), summed cost within the budget;
 *   check       the chosen set against software events only, timed.
 */
#ifndef OMPFUSE_AUTOEVENTS_H
#define OMPFUSE_AUTOEVENTS_H

#include <stddef.h>
#include <stdio.h>
#include "ompfuse/campaign.h"
#include "ompfuse/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ompf_auto_opts {
    unsigned want;          /* events to choose (default 4) */
    double max_slowdown;    /* probes' estimated cost / runtime (0.10) */
    double min_cv;          /* coefficient of variation across XUs (0.10) */
    double max_corr;        /* |Pearson r| within constructs above it: a twin (0.98) */
    double min_inside;      /* share of the count inside XUs (0.2) */
    const char *work_dir;   /* pilot profiles and manifests; created */
    const char *tool_path;  /* libompfuse.so; NULL: the default */
    const char *const *env; /* extra KEY=VALUE for the program */
    size_t n_env;
    double timeout_s;       /* per pilot run (default 600) */
    FILE *log;              /* progress and the reasons (default stderr) */
    ompf_exit_set_t exit_ok;  /* the program's normal exit codes (zeroed: {0}) */
    struct ompf_uphold *hold; /* holds the pilots' uprobes (ompfuse/uphold.h);
                                 NULL: they go through the uprobe PMU */
} ompf_auto_opts_t;

void ompf_auto_opts_init(ompf_auto_opts_t *o);

/* One candidate and what the pilots found. */
typedef struct ompf_auto_cand {
    char *name;          /* event name as an event list takes it */
    char *where;         /* uprobes: "file.c:LINE function"; else "" */
    int kind;            /* OMPF_AUTO_UPROBE, _TRACEPOINT, _SOFTWARE */
    double total;        /* count over the run (the XU pilot) */
    double inside;       /* share inside XUs, 0..1 */
    double covered;      /* share of the XUs in which it fires */
    double cv;           /* within constructs (see autoevents/auto.c) */
    double cost_s;       /* estimated seconds of probe cost per run */
    int emulated;        /* uprobe on an instruction the kernel emulates */
    int chosen;
    int soft;            /* rejected by a threshold only (the fallback may take it) */
    char why[200];       /* the reason it was chosen or rejected */
} ompf_auto_cand_t;

enum { OMPF_AUTO_UPROBE = 0, OMPF_AUTO_TRACEPOINT = 1, OMPF_AUTO_SOFTWARE = 2 };

typedef struct ompf_auto ompf_auto_t;

/* Runs the pilots of argv (NULL-terminated; argv[0] a path) and chooses.
 * 0, or a negative OMPF_E* with err saying why (no uprobe permission: not
 * root; the program fails; fewer than two usable events). */
int ompf_auto_select(char *const *argv, const ompf_auto_opts_t *o, ompf_auto_t **out,
                     ompf_error_t *err);
void ompf_auto_destroy(ompf_auto_t *a);

size_t ompf_auto_cand_count(const ompf_auto_t *a);
const ompf_auto_cand_t *ompf_auto_cand(const ompf_auto_t *a, size_t i);
/* The chosen events in order of choice. */
size_t ompf_auto_chosen(const ompf_auto_t *a, const char **names, size_t max);
/* Seconds of the program under the tool with software events only, and
 * with the chosen set counted at once (the check: each the best of 3
 * runs, the two kinds alternating). */
double ompf_auto_base_seconds(const ompf_auto_t *a);
double ompf_auto_check_seconds(const ompf_auto_t *a);
/* Prints the choice: each chosen event and why, the rejected briefly, the
 * estimated and the measured slowdown. */
void ompf_auto_print(const ompf_auto_t *a, FILE *f);

/* The chosen list as a file (one event a line, '#' comments with the
 * reasons), so that a resumed campaign uses the same set; temporary name
 * and rename.  load: the events of such a file (free with
 * ompf_auto_free_list). */
int ompf_auto_save(const ompf_auto_t *a, const char *path, ompf_error_t *err);
int ompf_auto_load(const char *path, char ***names, size_t *n, ompf_error_t *err);
void ompf_auto_free_list(char **names, size_t n);

/* Candidate sources (candidates.c).  Uprobes: the statement addresses
 * (is_stmt rows of the line table) inside the functions of the ELF file `binary`
 * (not main nor the C runtime's), as uprobe:BINARY:FUNC+0xOFF; at most max
 * (spread evenly over the lines when there are more).  *n set; the array
 * and its strings are malloc'd (ompf_auto_free_list).  where[] gets
 * "file:line function" per candidate (same ownership); emulated (NULL: not
 * wanted) a malloc'd flag per candidate: 1 when the probed instruction is
 * one x86 uprobes emulate (jmp, jcc, call, nop, push: no single-step, a
 * hit an order of magnitude cheaper). */
int ompf_auto_uprobe_candidates(const char *binary, size_t max, char ***names,
                                char ***where, unsigned char **emulated, size_t *n,
                                ompf_error_t *err);
/* The documented candidate tracepoints and software events. */
size_t ompf_auto_tracepoint_candidates(const char *const **names);
size_t ompf_auto_software_candidates(const char *const **names);

#ifdef __cplusplus
}
#endif
#endif
