/*
 * ompfuse campaigns: executing every run of a plan with the OMPT tool,
 * a manifest of what ran, resuming an interrupted campaign, progress.
 *
 * Each planned run of line L (1-based among the plan's run lines), repeat
 * r, is executed as the unmodified program with
 *   OMP_TOOL_LIBRARIES=<tool>  OMPFUSE_EVENTS=<events>
 *   OMPFUSE_OUTPUT=<dir>/<role>-<L>-r<r>.ompf  OMPFUSE_MODE=<mode>
 *   OMPFUSE_ROLE=<role>  OMPFUSE_PMU_SLOTS (from the environment, else the
 *   plan's "# slots: N")  OMPFUSE_<KEY>=<value> for the line's options
 * and its result recorded in <dir>/manifest.tsv.  A run whose profile is
 * already complete and valid (ompf_profile_read() == 0, the planned events
 * present and counted) is not run again.
 */
#ifndef OMPFUSE_CAMPAIGN_H
#define OMPFUSE_CAMPAIGN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "ompfuse/plan.h"
#include "ompfuse/profile.h"
#include "ompfuse/uphold.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ompf_run_status {
    OMPF_RUN_PENDING = 0,
    OMPF_RUN_OK = 1,
    OMPF_RUN_FAILED = 2,      /* exit code, signal or unusable profile */
    OMPF_RUN_TIMEOUT = 3,     /* killed after opts.timeout_s */
    OMPF_RUN_SKIPPED = 4,     /* role not selected (--roles) */
    OMPF_RUN_INTERRUPTED = 5, /* the campaign was interrupted meanwhile */
    OMPF_RUN_STATUS_COUNT
} ompf_run_status_t;

const char *ompf_run_status_name(int s); /* "ok", "failed", ... */

/* The program's normal exit codes (--exit-code): a set of 0-255.  The
 * zeroed set is the default, {0}. */
typedef struct ompf_exit_set {
    uint64_t bits[4];
} ompf_exit_set_t;

/* "0", "0,3", "1-9,20" or "any": 0, or OMPF_EINVAL (s unchanged). */
int ompf_exit_set_parse(const char *text, ompf_exit_set_t *s);
int ompf_exit_set_has(const ompf_exit_set_t *s, int code); /* s NULL: {0} */
int ompf_exit_set_is_default(const ompf_exit_set_t *s);    /* {0} */
/* "0,3", "1-9", "any" (as parse reads it back). */
void ompf_exit_set_format(const ompf_exit_set_t *s, char *buf, size_t n);
/* "if CODE is how it normally ends, give --exit-code LIST (...)": the
 * codes given so far and CODE. */
void ompf_exit_set_hint(const ompf_exit_set_t *given, int code, char *buf, size_t n);

typedef struct ompf_campaign_opts {
    const char *out_dir;   /* created if missing */
    unsigned jobs;         /* runs at a time (default 1) */
    double timeout_s;      /* kill a run after this long; 0 = never */
    const char *roles;     /* comma-separated roles to run; NULL = all */
    const char *tool_path; /* libompfuse.so (NULL: OMPFUSE_TOOL or the
                              default next to the ompfuse binary) */
    int check_plain;       /* run the program once without the tool first
                              and refuse to start if it fails (default 1) */
    ompf_exit_set_t exit_ok; /* the program's normal exit codes (zeroed:
                              {0}): a run that exits with another failed */
    int progress;          /* -1 auto (terminal: \r updates), 0 plain
                              lines, 1 force \r updates; -2 silent */
    FILE *log;             /* messages and progress (default stderr) */
    const char *const *env; /* extra "KEY=VALUE" for every run (and the
                               plain run), e.g. OMP_SCHEDULE */
    size_t n_env;
    unsigned slots;        /* the runs' OMPFUSE_PMU_SLOTS; 0: the
                              environment's, else the plan's */
    /* Slurm launcher (ompf_campaign_execute_slurm) */
    const char *partition;     /* sbatch -p; NULL: the cluster's default */
    unsigned max_parallel;     /* array throttle %K; 0: no limit */
    const char *const *sbatch_args; /* passed to every sbatch */
    size_t n_sbatch_args;
    double poll_s;             /* squeue interval while waiting (default 2) */
    int no_wait;               /* submit and return */
    int cancel;                /* scancel what is queued, then collect */
    int no_lock;               /* do not lock out_dir (a Slurm array task:
                                  its submitter holds the lock) */
    ompf_uphold_t *hold;       /* local launcher: defines and holds the runs'
                                  uprobes before they start (ompfuse/uphold.h);
                                  NULL: runs open them through the uprobe PMU */
    int hold_own_only;         /* with hold and jobs 1: each run has only its
                                  own uprobes held while it runs (timed pilots:
                                  a held probe makes every run of its binary
                                  trap, counted or not) */
} ompf_campaign_opts_t;

void ompf_campaign_opts_init(ompf_campaign_opts_t *o);

typedef struct ompf_campaign_run {
    size_t index;      /* 1-based, plan order with repeats expanded */
    size_t line;       /* 1-based index of the plan's run line */
    int role;          /* ompf_plan_role_t */
    uint32_t repeat;   /* 1..repeat of the line */
    char *events;      /* comma-separated */
    char *name;        /* "<role>-<line>-r<repeat>" */
    char *profile;     /* <out_dir>/<name>.ompf */
    int status;        /* ompf_run_status_t */
    int exit_code;     /* -1 when killed by a signal or not run */
    int signal;        /* terminating signal, 0 if none */
    double seconds;
    int resumed;       /* a valid profile from an earlier attempt was kept */
    char node[64];     /* the host it ran on (Slurm launcher; "" locally) */
    char note[512];    /* why it failed, stderr tail, ... */
} ompf_campaign_run_t;

typedef struct ompf_campaign ompf_campaign_t;

/* argv: the program and its arguments (NULL-terminated).  Unless
 * opts.no_lock, locks out_dir (ompf_dirlock_acquire) until destroy; a
 * directory another campaign holds gives OMPF_EPERM and err names it. */
int ompf_campaign_create(const ompf_plan_t *plan, char *const *argv,
                         const ompf_campaign_opts_t *o,
                         ompf_campaign_t **out, ompf_error_t *err);
void ompf_campaign_destroy(ompf_campaign_t *c);

/* The result of execute when the campaign ran to its end but some selected
 * runs failed, timed out or are missing: a negative result, not an error
 * of the campaign (err says how many; the others were still run). */
#define OMPF_CAMPAIGN_INCOMPLETE 1

/* Executes the pending runs.  Returns 0 when every selected run is ok,
 * OMPF_CAMPAIGN_INCOMPLETE when some are not, OMPF_EINVAL/OMPF_EUNSUPP
 * when the campaign could not start (the program fails without the tool,
 * the tool is missing: err says why), OMPF_EPERM when interrupted by
 * SIGINT/SIGTERM (the manifest is written), OMPF_EIO when the campaign's
 * own files (manifest) cannot be written: err names the file and the
 * reason, and no further run is started.
 *
 * Every run is a process group of its own, led by a small guard process
 * that waits for the program: the guard dies with the campaign
 * (PR_SET_PDEATHSIG) and then kills its whole group, so no run outlives a
 * campaign, even one killed by SIGKILL.  Before starting, processes of an
 * earlier campaign on this directory that escaped their group (found by
 * their OMPFUSE_OUTPUT) are killed; a run with one that cannot be killed is
 * not run again but recorded as failed. */
int ompf_campaign_execute(ompf_campaign_t *c, ompf_error_t *err);

/* The Slurm launcher (docs/cluster.md): collects what earlier submissions
 * of this campaign (DIR/slurm/) finished, then submits every run that is
 * neither complete nor still queued as one job array (`sbatch --array`,
 * one --exclusive node per run; the plain run first, as its own job the
 * array depends on) and, unless opts.no_wait, waits with progress.  The
 * array tasks run `ompfuse run --slurm-task I --resume DIR`, i.e.
 * ompf_campaign_slurm_task().  Same return codes as execute;
 * OMPF_CAMPAIGN_INCOMPLETE also when a submitted run never started or was
 * cancelled; OMPF_EIO when squeue or sbatch fail. */
int ompf_campaign_execute_slurm(ompf_campaign_t *c, const char *ompfuse_exe,
                                ompf_error_t *err);
/* Inside array task I (1..runs; 0 = the plain run without the tool):
 * executes exactly that run with the local launcher's code and leaves
 * DIR/slurm/tasks/I.start and I.done.  0 when the run is ok. */
int ompf_campaign_slurm_task(ompf_campaign_t *c, size_t index,
                             ompf_error_t *err);

/* Whether the runs already in the campaign's directory are this
 * campaign's (campaign/same.c): 0, or OMPF_EMISMATCH with err naming the
 * profile or the variables and what to do.  check_plan: every profile
 * there of the plan it was made with (DIR/plan.txt) is a run of this
 * plan with the same events.  check_env: the OpenMP environment (OMP_*,
 * KMP_*; ompf_omp_env) the runs get equals DIR/run.env's when any
 * profile is there, and DIR/run.env records it otherwise. */
int ompf_campaign_check_plan(const ompf_campaign_t *c, ompf_error_t *err);
int ompf_campaign_check_env(const ompf_campaign_t *c, ompf_error_t *err);
/* 1 when a profile of any planned run is already in the directory. */
int ompf_campaign_has_profiles(const ompf_campaign_t *c);

/* DIR/run.args: the command that made a campaign, for `--resume DIR`.
 * save: the working directory and argv[0..argc-1].  load: *cwd and a
 * NULL-terminated *argv (*argc entries); free both with free_args. */
int ompf_campaign_save_args(const char *dir, int argc, char *const *argv,
                            ompf_error_t *err);
int ompf_campaign_load_args(const char *dir, char **cwd, int *argc,
                            char ***argv, ompf_error_t *err);
void ompf_campaign_free_args(char *cwd, char **argv);

/* The lock on a campaign's output directory: DIR/.ompfuse-lock, flock(2)
 * plus the holder's "pid<TAB>host<TAB>time" (campaign/lock.c says what
 * happens on NFS).  OMPF_EPERM when another live campaign holds it (err
 * names its pid and host); a lock left by a dead campaign is taken over
 * with a note on log (may be NULL).  release removes the file. */
typedef struct ompf_dirlock ompf_dirlock_t;
int ompf_dirlock_acquire(const char *dir, FILE *log, ompf_dirlock_t **out,
                         ompf_error_t *err);
void ompf_dirlock_release(ompf_dirlock_t *l);

size_t ompf_campaign_run_count(const ompf_campaign_t *c);
const ompf_campaign_run_t *ompf_campaign_run_get(const ompf_campaign_t *c,
                                                 size_t i);
/* Counts of runs per status after execute. */
size_t ompf_campaign_count_status(const ompf_campaign_t *c, int status);
/* The tool path used, and whether the libgomp route was applied. */
const char *ompf_campaign_tool(const ompf_campaign_t *c);
int ompf_campaign_libgomp_route(const ompf_campaign_t *c);

/* Default tool: $OMPFUSE_TOOL, else <dir of /proc/self/exe>/../lib/
 * libompfuse.so, else fallback (may be NULL).  Writes into buf. */
int ompf_campaign_default_tool(const char *fallback, char *buf, size_t len);

/* ELF DT_NEEDED check: 1 when the ELF file at path needs a library whose
 * name starts with lib (e.g. "libgomp.so"), 0 when not, negative when the
 * file is not a readable ELF file. */
int ompf_elf_needs(const char *path, const char *lib);
/* Resolves a program name like execvp does (PATH search when it has no
 * '/'); 0 and the path in buf, or OMPF_ENOTFOUND. */
int ompf_find_program(const char *name, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
