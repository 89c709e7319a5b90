/* Internals shared by the launchers (campaign/): the campaign record and
 * the steps both launchers take, so that local and Slurm runs get the same
 * environment, file names, validity rule, manifest and resume logic. */
#ifndef OMPF_CAMPAIGN_INT_H
#define OMPF_CAMPAIGN_INT_H

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

#include "ompfuse/campaign.h"
#include "ompfuse/file.h"

struct ompf_campaign {
    ompf_campaign_opts_t o;
    char *dir;
    char **argv;
    char program[PATH_MAX];
    char tool[PATH_MAX];
    char route_dir[PATH_MAX]; /* libgomp -> libomp directory, "" if none */
    unsigned slots;
    const ompf_plan_t *plan;
    size_t n;
    ompf_campaign_run_t *runs;
    /* per run: the plan line's options */
    const ompf_plan_run_t **line;
    /* per run: a HEM run of hardware events, left to the kernel */
    unsigned char *kernel_hem;
    int plain_done;
    ompf_dirlock_t *lock; /* NULL with opts.no_lock */
};

double ompf_cmpi_now(void);
int ompf_cmpi_mkdir_p(const char *dir);
/* This machine's name (for markers and the manifest). */
void ompf_cmpi_hostname(char *buf, size_t len);

/* ---- manifest.c ---- */
int ompf_cmpi_profile_valid(const ompf_campaign_run_t *r,
                            const ompf_plan_run_t *line, char *note,
                            size_t len);
/* 0, or OMPF_EIO and err naming the file and the reason. */
int ompf_cmpi_write_manifest(const ompf_campaign_t *c, ompf_error_t *err);
void ompf_cmpi_read_manifest(ompf_campaign_t *c);
/* The resume rule: runs whose profile is complete and valid become ok
 * (kept); the profiles of the other selected runs are removed and the runs
 * become pending (todo); live[i] (may be NULL): run i is still queued or
 * running elsewhere, so its files are left alone.  Prints the start of the
 * "N runs planned" line (the launcher ends it). */
void ompf_cmpi_scan(ompf_campaign_t *c, const unsigned char *live,
                    size_t *kept, size_t *todo);

/* ---- child.c ---- */
extern volatile sig_atomic_t ompf_cmpi_interrupted;
typedef struct ompf_cmpi_sigs {
    struct sigaction old_int, old_term;
} ompf_cmpi_sigs_t;
void ompf_cmpi_catch_signals(ompf_cmpi_sigs_t *s);
void ompf_cmpi_restore_signals(const ompf_cmpi_sigs_t *s);
pid_t ompf_cmpi_spawn(const ompf_campaign_t *c, const ompf_campaign_run_t *r,
                      const ompf_plan_run_t *line, const char *out_path,
                      const char *err_path);
/* Waits for pid, killing its process group after the campaign's timeout or
 * on SIGINT/SIGTERM; *timed_out says which. */
void ompf_cmpi_wait_child(const ompf_campaign_t *c, pid_t pid, double t0,
                          int *status, int *timed_out);
void ompf_cmpi_tail(const char *path, char *buf, size_t len, int lines);
void ompf_cmpi_remove_stale(const char *profile);
/* Waits for the run's guard (pid), kills what is left of its process
 * group, then reaps it: *status as waitpid's.  block: 0 returns 0 at once
 * when it has not ended (else pid). */
pid_t ompf_cmpi_reap(pid_t pid, int *status, int block);

/* ---- leftover.c ---- */
/* Processes of earlier campaigns on c's directory still running on this
 * host (their OMPFUSE_OUTPUT names one of its profiles): killed, unless
 * they belong to a Slurm job; busy[i] (n runs) set for a run whose process
 * is still alive after that.  Notes go to the log.  Returns the number of
 * busy runs. */
size_t ompf_cmpi_leftovers(ompf_campaign_t *c, unsigned char *busy);
void ompf_cmpi_run_paths(const ompf_campaign_t *c, const char *name,
                         char *out, char *err, size_t len);
void ompf_cmpi_finish_run(ompf_campaign_t *c, ompf_campaign_run_t *r, int st,
                          int timed_out, double secs);
int ompf_cmpi_plain_run(ompf_campaign_t *c, ompf_error_t *err);

/* ---- progress.c ---- */
typedef struct ompf_cmpi_progress {
    int tty;
    size_t total, done;
    double t0, busy; /* busy: seconds of runs finished in this session */
    size_t finished_here;
    int line_open;
    unsigned parallel; /* runs at a time, for the ETA */
} ompf_cmpi_progress_t;
void ompf_cmpi_progress_init(const ompf_campaign_t *c,
                             ompf_cmpi_progress_t *pg, size_t total,
                             size_t done, unsigned parallel);
void ompf_cmpi_progress_tick(const ompf_campaign_t *c,
                             ompf_cmpi_progress_t *pg, const char *running);
void ompf_cmpi_progress_line(const ompf_campaign_t *c,
                             ompf_cmpi_progress_t *pg,
                             const ompf_campaign_run_t *r);
void ompf_cmpi_progress_end(const ompf_campaign_t *c,
                            ompf_cmpi_progress_t *pg);

/* ---- slurm_markers.c: the files array tasks leave in DIR/slurm/tasks/ ----
 * I.start: "<array job>\t<job>\t<node>\t<cpu model>\t<unix time>"
 * I.done:  "<status>\t<exit>\t<signal>\t<seconds>\t<node>\t<note>"
 * (written to a temporary name and renamed: a reader never sees half). */
typedef struct ompf_cmpi_done {
    int status; /* ompf_run_status_t */
    int exit_code, signal;
    double seconds;
    char node[64];
    char note[512];
} ompf_cmpi_done_t;
void ompf_cmpi_marker_path(const ompf_campaign_t *c, size_t index,
                           const char *kind, char *buf, size_t len);
int ompf_cmpi_write_file(const char *path, const char *text);
/* 0 and the start marker's node when task index started. */
int ompf_cmpi_read_start(const ompf_campaign_t *c, size_t index, char *node,
                         size_t len);
int ompf_cmpi_read_done(const ompf_campaign_t *c, size_t index,
                        ompf_cmpi_done_t *d);
void ompf_cmpi_clear_markers(const ompf_campaign_t *c, size_t index);
/* "ompfuse-<8 hex digits>": one name per campaign directory. */
void ompf_cmpi_job_name(const ompf_campaign_t *c, char *buf, size_t len);

#endif
