/* libompfbench, the benchmark campaign behind `ompfuse campaign`: after a
 * benchmark's runs, steps.c fuses (every strategy), cleans the HEM
 * profiles and evaluates them (this binary's subcommands as children);
 * results.c turns the results into the table, the verdicts, epd.tsv, the
 * analysis pages and report.html.  cli/cmd_campaign.c parses the options,
 * plans and runs each benchmark, and calls these. */
#ifndef OMPF_BENCH_H
#define OMPF_BENCH_H

#include <limits.h>
#include <stdio.h>

#include "ompfuse/campaign.h"
#include "ompfuse/plan.h"

#define PROG "ompfuse campaign"
#define MAX_ARGS 64

/* Targets of the evaluation, in table order. */
enum { T_CTC, T_LGL, T_BC, T_BCU, T_RANDOM, T_HEM, T_HEMD, T_HEMC, T_HEMDC, N_T };
static const char *const tname[N_T] = {"ctc", "lgl", "bc", "bc-unlabeled", "random",
                                       "hem", "hem-delta", "hem-cleaned",
                                       "hem-delta-cleaned"};

typedef struct result {
    char name[64];
    double epd[N_T];     /* NaN: not available */
    char problem[N_T][160];
    size_t runs_ok, runs_failed;
    size_t runs_kept; /* of runs_ok: kept from an earlier campaign in the directory */
    double seconds;
    char dir[PATH_MAX];
    char refs_glob[PATH_MAX];
    char *refs[256];
    size_t nrefs;
    char target_path[N_T][PATH_MAX];
    int target_ok[N_T];
    char note[512];
    int interrupted; /* Ctrl-C: stop the whole campaign */
    int error;       /* could not run or write its files: stop, exit 2 */
    int step_failed; /* a planning, combine, clean or evaluate step failed */
    int io_error;    /* a step or file failed on an I/O error: exit 2 */
    unsigned long long left_out[N_T]; /* most XUs left out of one pair */
    unsigned floor_pairs;             /* pairs calibrated at the floor */
    char analysis[96];  /* "BENCH/analysis.html" (relative to --out), or "" */
    int analysis_of;    /* the fused profile it analyses (a target) */
} result_t;

/* The campaign's settings, from its options (cli/cmd_campaign.c). */
typedef struct settings {
    const char *out;
    char **events;
    size_t nevents;
    unsigned slots, repeats, threads, jobs;
    unsigned auto_want; /* --events auto[:N]: chosen per benchmark */
    ompf_uphold_t *hold; /* holds the runs' uprobes (NULL: none) */
    double timeout;
    ompf_exit_set_t exit_ok; /* the program's normal exit codes (-- PROGRAM) */
    /* --events auto: chooses a program's events (cli/events_auto.c) */
    int (*choose_events)(const char *prog, char *const *argv, const char *dir, unsigned want,
                         unsigned slots, const char *const *env, size_t nenv,
                         const ompf_exit_set_t *exit_ok, char ***events, size_t *n);
} settings_t;

/* ---- settings_file.c ---- */
/* OUT/campaign.txt: written when absent; when present and made with other
 * settings (events as given, slots, repeats, threads; the program, its
 * arguments, working directory and exit codes, or the benchmarks),
 * OMPF_EMISMATCH naming the first difference.  --jobs and --timeout are
 * not settings. */
int ompf_cmpc_check_settings(const char *out, const settings_t *s, const char *events,
                             const char *benches, char *const *custom, ompf_error_t *err);

/* ---- driver.c ---- */
/* One benchmark: plan (choosing its events first with --events auto), run,
 * then the steps of steps.c; fills res. */
void ompf_cmpc_do_bench(const char *name, char *const *argv, const char *schedule,
                        const settings_t *s, result_t *res);

double ompf_cmpi_now(void); /* monotonic seconds (campaign/campaign.c) */

/* ---- results.c ---- */
/* The analysis page (ompfuse analyze --html) of each benchmark's best
 * fused profile: the fusion strategy with the lowest EPD, else LGL.
 * Written to RES.dir/analysis.html; res[i].analysis names it.  *io is set
 * when a page could not be written. */
void ompf_cmpc_write_analyses(result_t *res, size_t n, int *io);

/* ---- steps.c ---- */
/* Runs this binary with args (args[0] = subcommand); the child dies with
 * the campaign.  Its stderr (and its stdout when out is NULL) goes to
 * log_path, created only when something is written, and its last
 * non-empty line into why; with out, its stdout is returned in *out
 * (malloc'd, NUL-terminated).  Both arrive through pipes, so they are
 * known even when no file can be written (a full disk).  Returns the exit
 * code, or -1 when it could not run or died of a signal. */
int ompf_cmpc_run_self(char *const *args, const char *log_path, char *why, size_t whylen,
                       char **out);
/* A failed step is an error of the campaign (exit 2), not a negative
 * result: it exited 2 or its message names a filesystem error. */
int ompf_cmpc_step_io_error(int x, const char *why);
/* 1 when p is a file holding something. */
int ompf_cmpc_file_nonempty(const char *p);
/* Profiles of the ok runs of one role. */
size_t ompf_cmpc_runs_of(const ompf_campaign_t *c, int role, const char **out, size_t max);
/* After the runs of benchmark name: combine, clean, evaluate (full: the
 * plan that was run); fills res. */
void ompf_cmpc_fuse_and_evaluate(result_t *res, const ompf_campaign_t *c,
                                 const ompf_plan_t *full, const char *name);

/* ---- results.c ---- */
void ompf_cmpc_print_table(FILE *f, const result_t *res, size_t n);
/* DIR/epd.tsv; 0 or err names the file and the reason. */
int ompf_cmpc_write_tsv(const char *path, const result_t *res, size_t n, ompf_error_t *err);
/* DIR/report.html: all benchmarks as groups of one `ompfuse report`, the
 * verdicts inserted; when that fails, a page with the table and verdicts.
 * *wrote: report.html holds one of them; *failed: `ompfuse report`
 * failed; *io: an I/O error (in that step or in writing the page). */
void ompf_cmpc_write_report(const result_t *res, size_t nres, const char *html,
                            const char *log, int *wrote, int *io, int *failed);
/* --summarize DIR: exit status. */
int ompf_cmpc_summarize(const char *dir);

#endif
