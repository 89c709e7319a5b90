/* The Slurm launcher: collect what earlier submissions finished, submit the
 * rest as one job array, wait with progress (docs/cluster.md).  Only this
 * process writes the manifest; array tasks leave marker files.  One file
 * over 600 lines: submission, collection and waiting share the job's state
 * machine (slurm_task.c and slurm_markers.c hold the parts that do not). */
#include "campaign_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 96

/* Reads fd to its end; keeps what fits into buf (NUL-terminated). */
static void read_all(int fd, char *buf, size_t len)
{
    size_t n = 0;
    char sink[4096];
    for (;;) {
        int room = n + 1 < len;
        ssize_t k = read(fd, room ? buf + n : sink,
                         room ? len - n - 1 : sizeof sink);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        if (room)
            n += (size_t)k;
    }
    buf[n] = '\0';
}

/* Runs argv (PATH search), stdout into out, stderr into errb; returns the
 * exit status, or -1 when it could not run. */
static int run_capture(char *const *argv, char *out, size_t olen, char *errb,
                       size_t elen)
{
    int po[2], pe[2];
    out[0] = errb[0] = '\0';
    if (pipe(po) != 0)
        return -1;
    if (pipe(pe) != 0) {
        close(po[0]);
        close(po[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        return -1;
    }
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        if (in >= 0)
            dup2(in, 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]), close(pe[0]);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s", argv[0], strerror(errno));
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    /* stdout first, then stderr: fine while stderr fits the pipe buffer,
     * as squeue's, sbatch's and scancel's messages do */
    read_all(po[0], out, olen);
    read_all(pe[0], errb, elen);
    errb[strcspn(errb, "\n")] = '\0';
    close(po[0]);
    close(pe[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- what Slurm still holds ----------------------------------------------- */

typedef struct sq {
    unsigned char *live; /* per run: queued or running */
    int check_live;      /* the plain-run job */
    size_t running, queued;
} sq_t;

/* squeue by job name (not -j: a job that left the queue makes -j fail
 * exactly like a real error).  0, or an error when squeue cannot answer:
 * then nothing may be resubmitted. */
static int squeue_live(const ompf_campaign_t *c, sq_t *q, ompf_error_t *err)
{
    char name[64], names[160];
    ompf_cmpi_job_name(c, name, sizeof name);
    snprintf(names, sizeof names, "%s,%s-check", name, name);
    char *argv[] = {"squeue", "-h", "-r", "-n", names, "-o", "%j|%K|%T",
                    NULL};
    size_t olen = 64 + c->n * 64;
    char *out = malloc(olen), errb[512];
    if (!out)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    int st = run_capture(argv, out, olen, errb, sizeof errb);
    if (st != 0) {
        free(out);
        return ompf_error_set(err, OMPF_EIO,
                              "cannot ask Slurm which runs are still queued "
                              "(squeue %s%s%s); nothing was submitted; try "
                              "again (is slurmctld reachable, SLURM_CONF "
                              "right?)",
                              st < 0 ? "could not run" : "failed",
                              errb[0] ? ": " : "", errb);
    }
    memset(q->live, 0, c->n);
    q->check_live = 0;
    q->running = q->queued = 0;
    for (char *save = NULL, *l = strtok_r(out, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save)) {
        char *b1 = strchr(l, '|'), *b2 = b1 ? strchr(b1 + 1, '|') : NULL;
        if (!b2)
            continue;
        *b1 = *b2 = '\0';
        const char *state = b2 + 1;
        /* squeue lists queued and running jobs (and those finishing) */
        int run = !strcmp(state, "RUNNING") || !strcmp(state, "COMPLETING") ||
                  !strcmp(state, "CONFIGURING");
        if (strcmp(l, name) != 0) {
            q->check_live = 1;
            continue;
        }
        char *end;
        unsigned long i = strtoul(b1 + 1, &end, 10);
        if (*end || i == 0 || i > c->n)
            continue;
        if (!q->live[i - 1]) {
            q->live[i - 1] = 1;
            if (run)
                q->running++;
            else
                q->queued++;
        }
    }
    free(out);
    return 0;
}

/* ---- submission ----------------------------------------------------------- */

/* "1-3,5,9-10" (+ "%K") from the runs marked in sel. */
static char *index_list(const ompf_campaign_t *c, const unsigned char *sel,
                        unsigned throttle)
{
    size_t cap = 32 + c->n * 24;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t used = 0;
    s[0] = '\0';
    for (size_t i = 0; i < c->n; i++) {
        if (!sel[i])
            continue;
        size_t j = i;
        while (j + 1 < c->n && sel[j + 1])
            j++;
        used += (size_t)snprintf(s + used, cap - used, "%s%zu", used ? "," : "",
                                 i + 1);
        if (j > i)
            used += (size_t)snprintf(s + used, cap - used, "-%zu", j + 1);
        i = j;
    }
    if (throttle)
        snprintf(s + used, cap - used, "%%%u", throttle);
    return s;
}

static int write_script(const ompf_campaign_t *c, const char *exe,
                        char *path, size_t len, ompf_error_t *err)
{
    snprintf(path, len, "%s/slurm/array.sh", c->dir);
    char dir[PATH_MAX];
    if (!realpath(c->dir, dir))
        snprintf(dir, sizeof dir, "%s", c->dir);
    if (strchr(dir, '\'') || strchr(exe, '\''))
        return ompf_error_set(err, OMPF_EINVAL,
                              "the campaign directory %s or ompfuse's path %s "
                              "contains a quote; use another directory",
                              dir, exe);
    char text[3 * PATH_MAX];
    snprintf(text, sizeof text,
             "#!/bin/sh\n"
             "# ompfuse campaign %s: array task I executes planned run I\n"
             "# (task 0, a job of its own: the program without the tool).\n"
             "exec '%s' run --slurm-task \"${SLURM_ARRAY_TASK_ID:-0}\" "
             "--resume '%s'\n",
             dir, exe, dir);
    if (ompf_cmpi_write_file(path, text) != 0)
        return ompf_error_set(err, OMPF_EIO, "cannot write %s: %s", path,
                              strerror(errno));
    chmod(path, 0755);
    return 0;
}

/* sbatch; the job id into *job.  array: "--array=..." or NULL (the plain
 * run); dep: the job the array waits for, 0 if none. */
static int sbatch(const ompf_campaign_t *c, const char *script,
                  const char *array, long dep, long *job, ompf_error_t *err)
{
    char name[64], jname[80], logs[PATH_MAX + 64], part[256], tl[64],
        depo[64];
    ompf_cmpi_job_name(c, name, sizeof name);
    snprintf(jname, sizeof jname, "%s%s", name, array ? "" : "-check");
    snprintf(logs, sizeof logs, "%s/slurm/logs/%s", c->dir,
             array ? "%A_%a.out" : "check-%j.out");
    char *argv[MAX_ARGS];
    size_t n = 0;
    argv[n++] = "sbatch";
    argv[n++] = "--parsable";
    argv[n++] = "--exclusive"; /* no other job shares the node's PMU */
    argv[n++] = "--nodes=1";
    argv[n++] = "-J";
    argv[n++] = jname;
    argv[n++] = "-o";
    argv[n++] = logs;
    if (c->o.partition) {
        snprintf(part, sizeof part, "--partition=%s", c->o.partition);
        argv[n++] = part;
    }
    if (c->o.timeout_s > 0) {
        /* the run records its own timeout; Slurm must not kill it first */
        long min = (long)((c->o.timeout_s * 1.2 + 60.0) / 60.0 + 0.999);
        snprintf(tl, sizeof tl, "--time=%ld", min);
        argv[n++] = tl;
    }
    for (size_t i = 0; i < c->o.n_sbatch_args && n < MAX_ARGS - 6; i++)
        argv[n++] = (char *)c->o.sbatch_args[i];
    char *arr = NULL;
    if (array) {
        arr = malloc(strlen(array) + 16);
        if (!arr)
            return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        sprintf(arr, "--array=%s", array);
        argv[n++] = arr;
    }
    if (dep) {
        snprintf(depo, sizeof depo, "--dependency=afterok:%ld", dep);
        argv[n++] = depo;
        argv[n++] = "--kill-on-invalid-dep=yes";
    }
    argv[n++] = (char *)script;
    argv[n] = NULL;
    char out[256], errb[1024];
    int st = run_capture(argv, out, sizeof out, errb, sizeof errb);
    free(arr);
    char *end;
    *job = strtol(out, &end, 10);
    if (st != 0 || *job <= 0)
        return ompf_error_set(err, OMPF_EIO,
                              "sbatch %s: %s%s", st < 0 ? "could not run"
                                                        : "refused the job",
                              errb[0] ? errb : "no job id printed",
                              st < 0 ? " (is Slurm installed, sbatch on "
                                       "PATH?)"
                              : c->n >= 1001
                                  ? " (this campaign has array indices above "
                                    "1000: clusters refuse indices from their "
                                    "MaxArraySize on, 1001 by default; split "
                                    "the plan with --roles, or ask for a "
                                    "larger MaxArraySize)"
                                  : "");
    return 0;
}

static void log_job(const ompf_campaign_t *c, long job, const char *kind,
                    const char *indices)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/slurm/jobs.tsv", c->dir);
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "%ld\t%s\t%s\t%ld\n", job, kind, indices, (long)time(NULL));
    fclose(f);
}

/* ---- collecting ------------------------------------------------------------ */

/* Reads run i's done marker into the run; 1 when it was there. */
static int collect_done(ompf_campaign_t *c, size_t i)
{
    ompf_cmpi_done_t d;
    if (ompf_cmpi_read_done(c, i + 1, &d) != 0)
        return 0;
    ompf_campaign_run_t *r = &c->runs[i];
    r->status = d.status;
    r->exit_code = d.exit_code;
    r->signal = d.signal;
    r->seconds = d.seconds;
    snprintf(r->node, sizeof r->node, "%s", d.node);
    snprintf(r->note, sizeof r->note, "%s", d.note);
    char note[512];
    if (r->status == OMPF_RUN_OK &&
        ompf_cmpi_profile_valid(r, c->line[i], note, sizeof note) != 0) {
        r->status = OMPF_RUN_FAILED;
        snprintf(r->note, sizeof r->note,
                 "the array task on %s reported success but here %.300s: is "
                 "the campaign directory on a filesystem shared with the "
                 "compute nodes?",
                 d.node, note);
    }
    return 1;
}

/* A submitted run that left the queue without a done marker. */
static void collect_gone(ompf_campaign_t *c, size_t i)
{
    ompf_campaign_run_t *r = &c->runs[i];
    char node[64];
    if (ompf_cmpi_read_start(c, i + 1, node, sizeof node) == 0) {
        r->status = OMPF_RUN_INTERRUPTED;
        snprintf(r->node, sizeof r->node, "%s", node);
        snprintf(r->note, sizeof r->note,
                 "started on %s but ended without a result (cancelled, time "
                 "limit or node failure); `ompfuse run --resume %s` runs it "
                 "again",
                 node, c->dir);
    } else {
        r->status = OMPF_RUN_PENDING;
        snprintf(r->note, sizeof r->note,
                 "never started (cancelled while queued, or the job it "
                 "depended on failed); `ompfuse run --resume %s` submits it",
                 c->dir);
    }
}

/* The plain run's verdict: 1 ok, 0 not known yet, negative: failed (err). */
static int check_verdict(ompf_campaign_t *c, const sq_t *q, ompf_error_t *err)
{
    ompf_cmpi_done_t d;
    if (ompf_cmpi_read_done(c, 0, &d) == 0) {
        if (d.status == OMPF_RUN_OK)
            return 1;
        ompf_error_set(err, OMPF_EINVAL, "on %s: %s", d.node, d.note);
        return -1;
    }
    if (q->check_live)
        return 0;
    char node[64];
    if (ompf_cmpi_read_start(c, 0, node, sizeof node) == 0)
        ompf_error_set(err, OMPF_EINVAL,
                       "the plain run (the program without the tool) started "
                       "on %s but ended without a result; see %s/slurm/logs/",
                       node, c->dir);
    else
        ompf_error_set(err, OMPF_EINVAL,
                       "the plain-run job left the queue without writing "
                       "%s/slurm/tasks/0.start: the compute node cannot see "
                       "the campaign directory (it must be on a filesystem "
                       "shared at the same path) or the job was cancelled; "
                       "see %s/slurm/logs/",
                       c->dir, c->dir);
    return -1;
}

static void cancel_all(const ompf_campaign_t *c)
{
    char name[64], opt[96], out[256], errb[256];
    ompf_cmpi_job_name(c, name, sizeof name);
    /* scancel --name takes one name: the array, then the plain-run job */
    for (int k = 0; k < 2; k++) {
        snprintf(opt, sizeof opt, "--name=%s%s", name, k ? "-check" : "");
        char *argv[] = {"scancel", opt, NULL};
        run_capture(argv, out, sizeof out, errb, sizeof errb);
    }
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* ---- the launcher ----------------------------------------------------------- */

typedef struct wait_state {
    unsigned char *watch; /* runs submitted now or found live */
    unsigned char *final; /* their result is known */
    long check_job;       /* 0: no plain run in this submission */
} wait_state_t;

static int wait_for(ompf_campaign_t *c, sq_t *q, wait_state_t *w,
                    ompf_cmpi_progress_t *pg, ompf_error_t *err)
{
    double poll = c->o.poll_s > 0 ? c->o.poll_s : 2.0;
    int check_ok = w->check_job == 0, failures = 0, quiet_round = 0;
    for (;;) {
        if (ompf_cmpi_interrupted) {
            ompf_cmpi_progress_end(c, pg);
            return ompf_error_set(err, OMPF_EPERM,
                                  "detached: the runs stay queued on the "
                                  "cluster; `ompfuse run --resume %s` "
                                  "collects them later (add --cancel to "
                                  "cancel them)",
                                  c->dir);
        }
        ompf_error_t qe;
        memset(&qe, 0, sizeof qe);
        if (squeue_live(c, q, &qe) != 0) {
            /* a transient failure while waiting is not a verdict */
            if (++failures == 10) {
                ompf_cmpi_progress_end(c, pg);
                return ompf_error_set(err, OMPF_EIO, "%s", qe.msg);
            }
            sleep_s(poll);
            continue;
        }
        failures = 0;
        if (!check_ok) {
            int v = check_verdict(c, q, err);
            if (v < 0) {
                cancel_all(c);
                ompf_cmpi_progress_end(c, pg);
                fprintf(c->o.log, "ompfuse: the program fails without the "
                                  "tool; the array was cancelled\n");
                return OMPF_EINVAL;
            }
            if (v > 0) {
                check_ok = 1;
                if (c->o.progress != -2) {
                    ompf_cmpi_progress_end(c, pg);
                    fprintf(c->o.log, "ompfuse: plain run ok\n");
                }
            }
        }
        size_t live = 0;
        for (size_t i = 0; i < c->n; i++) {
            if (!w->watch[i] || w->final[i])
                continue;
            if (collect_done(c, i)) {
                w->final[i] = 1;
                pg->done++;
                pg->finished_here++;
                pg->busy += c->runs[i].seconds;
                ompf_cmpi_progress_line(c, pg, &c->runs[i]);
                /* a failure here is reported by the final write */
                ompf_cmpi_write_manifest(c, NULL);
            } else if (q->live[i]) {
                live++;
            }
        }
        if (live == 0 && (check_ok || !q->check_live)) {
            /* markers are written before a task leaves the queue: one more
             * look after the queue emptied sees them all */
            if (quiet_round++)
                break;
            continue;
        }
        quiet_round = 0;
        char what[96];
        snprintf(what, sizeof what, "%zu running, %zu queued", q->running,
                 q->queued + (size_t)(q->check_live && !check_ok));
        ompf_cmpi_progress_tick(c, pg, what);
        sleep_s(poll);
    }
    for (size_t i = 0; i < c->n; i++)
        if (w->watch[i] && !w->final[i]) {
            collect_gone(c, i);
            pg->done++;
            ompf_cmpi_progress_line(c, pg, &c->runs[i]);
        }
    ompf_cmpi_progress_end(c, pg);
    return 0;
}

int ompf_campaign_execute_slurm(ompf_campaign_t *c, const char *exe,
                                ompf_error_t *err)
{
    if (!c || !exe)
        return ompf_error_set(err, OMPF_EINVAL, "no campaign");
    char sub[PATH_MAX + 32];
    snprintf(sub, sizeof sub, "%s/slurm/tasks", c->dir);
    if (ompf_cmpi_mkdir_p(sub) != 0)
        return ompf_error_set(err, OMPF_EIO, "cannot create %s: %s", sub,
                              strerror(errno));
    snprintf(sub, sizeof sub, "%s/slurm/logs", c->dir);
    if (ompf_cmpi_mkdir_p(sub) != 0)
        return ompf_error_set(err, OMPF_EIO, "cannot create %s: %s", sub,
                              strerror(errno));
    sq_t q;
    memset(&q, 0, sizeof q);
    wait_state_t w;
    memset(&w, 0, sizeof w);
    q.live = calloc(c->n + 1, 1);
    w.watch = calloc(c->n + 1, 1);
    w.final = calloc(c->n + 1, 1);
    unsigned char *sel = calloc(c->n + 1, 1);
    int rc = 0;
    char *list = NULL;
    if (!q.live || !w.watch || !w.final || !sel) {
        rc = ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        goto out;
    }
    ompf_cmpi_sigs_t sigs;
    ompf_cmpi_catch_signals(&sigs);
    if (c->o.cancel) {
        cancel_all(c);
        if (c->o.progress != -2)
            fprintf(c->o.log, "ompfuse: cancelled the campaign's queued and "
                              "running array tasks\n");
        /* wait for them to leave the queue before deciding anything */
        for (int k = 0; k < 600; k++) {
            if ((rc = squeue_live(c, &q, err)) != 0)
                goto out_sig;
            if (!q.running && !q.queued && !q.check_live)
                break;
            sleep_s(0.2);
        }
    }
    /* collect: complete profiles are ok; live runs are left alone */
    if ((rc = squeue_live(c, &q, err)) != 0)
        goto out_sig;
    size_t kept = 0, todo = 0;
    ompf_cmpi_scan(c, q.live, &kept, &todo);
    size_t resub = 0;
    for (size_t i = 0; i < c->n; i++) {
        ompf_campaign_run_t *r = &c->runs[i];
        if (r->status != OMPF_RUN_PENDING)
            continue;
        if (q.live[i]) {
            w.watch[i] = 1; /* submitted earlier, still queued or running */
            continue;
        }
        ompf_cmpi_done_t d;
        if (ompf_cmpi_read_done(c, i + 1, &d) == 0 ||
            ompf_cmpi_read_start(c, i + 1, d.node, sizeof d.node) == 0)
            resub++;
        if (c->o.cancel) {
            /* --cancel collects only: what did not finish stays to do */
            if (!collect_done(c, i))
                collect_gone(c, i);
            continue;
        }
        char out[PATH_MAX + 64], errp[PATH_MAX + 64];
        ompf_cmpi_run_paths(c, r->name, out, errp, sizeof out);
        unlink(out);
        unlink(errp);
        ompf_cmpi_remove_stale(r->profile);
        ompf_cmpi_clear_markers(c, i + 1);
        r->node[0] = '\0';
        sel[i] = 1;
        w.watch[i] = 1;
    }
    if (c->o.progress != -2) {
        if (c->o.cancel)
            fprintf(c->o.log, " (after --cancel: nothing is submitted)\n");
        else if (resub)
            fprintf(c->o.log, " (through Slurm, one node per run; %zu of "
                              "them ran before without success)\n", resub);
        else
            fprintf(c->o.log, " (through Slurm, one node per run)\n");
        if (c->o.cancel) {
            ompf_cmpi_progress_t pg;
            ompf_cmpi_progress_init(c, &pg, c->n, 0, 1);
            pg.tty = 0; /* one line per run that is not complete */
            for (size_t i = 0; i < c->n; i++) {
                pg.done++;
                if (c->runs[i].status != OMPF_RUN_OK &&
                    c->runs[i].status != OMPF_RUN_SKIPPED)
                    ompf_cmpi_progress_line(c, &pg, &c->runs[i]);
            }
        }
    }
    size_t nsel = 0;
    for (size_t i = 0; i < c->n; i++)
        nsel += sel[i];
    if (nsel) {
        char script[PATH_MAX + 32];
        if ((rc = write_script(c, exe, script, sizeof script, err)) != 0)
            goto out_sig;
        ompf_cmpi_done_t d;
        int check_done = ompf_cmpi_read_done(c, 0, &d) == 0 &&
                         d.status == OMPF_RUN_OK;
        if (c->o.check_plain && !check_done) {
            ompf_cmpi_clear_markers(c, 0);
            if ((rc = sbatch(c, script, NULL, 0, &w.check_job, err)) != 0)
                goto out_sig;
            log_job(c, w.check_job, "plain", "0");
        }
        list = index_list(c, sel, c->o.max_parallel);
        long job = 0;
        if (!list) {
            rc = ompf_error_set(err, OMPF_ENOMEM, "out of memory");
            goto out_sig;
        }
        if ((rc = sbatch(c, script, list, w.check_job, &job, err)) != 0) {
            if (w.check_job)
                cancel_all(c);
            goto out_sig;
        }
        log_job(c, job, "array", list);
        if (c->o.progress != -2 && w.check_job)
            fprintf(c->o.log, "ompfuse: submitted job %ld: the program once "
                              "without the tool\n",
                    w.check_job);
        if (c->o.progress != -2)
            fprintf(c->o.log, "ompfuse: submitted job array %ld: %zu run%s "
                              "(indices %s)%s\n",
                    job, nsel, nsel == 1 ? "" : "s", list,
                    w.check_job ? ", starting when that job succeeds" : "");
    }
    if ((rc = ompf_cmpi_write_manifest(c, err)) != 0)
        goto out_sig;
    if (c->o.no_wait || c->o.cancel) {
        size_t live = 0;
        for (size_t i = 0; i < c->n; i++)
            live += w.watch[i];
        if (c->o.progress != -2 && c->o.no_wait)
            fprintf(c->o.log, "ompfuse: not waiting; %zu run%s queued; "
                              "`ompfuse run --resume %s` collects them\n",
                    live, live == 1 ? "" : "s", c->dir);
        if (c->o.no_wait)
            goto out_sig;
    } else {
        size_t watched = 0;
        for (size_t i = 0; i < c->n; i++)
            watched += w.watch[i];
        ompf_cmpi_progress_t pg;
        ompf_cmpi_progress_init(c, &pg, kept + watched, kept,
                                c->o.max_parallel ? c->o.max_parallel : 1);
        double t0 = ompf_cmpi_now();
        if (watched || w.check_job)
            rc = wait_for(c, &q, &w, &pg, err);
        int mrc = ompf_cmpi_write_manifest(c, rc ? NULL : err);
        if (!rc)
            rc = mrc;
        if (rc)
            goto out_sig;
        if (c->o.progress != -2 && (watched || w.check_job))
            fprintf(c->o.log, "ompfuse: waited %.1f s\n", ompf_cmpi_now() - t0);
    }
    size_t ok = ompf_campaign_count_status(c, OMPF_RUN_OK);
    size_t sel_total = 0;
    for (size_t i = 0; i < c->n; i++)
        sel_total += c->runs[i].status != OMPF_RUN_SKIPPED;
    size_t bad = sel_total - ok;
    if (c->o.progress != -2)
        fprintf(c->o.log, "ompfuse: %zu ok, %zu not ok; manifest %s/manifest.tsv\n",
                ok, bad, c->dir);
    if (bad)
        rc = ompf_error_set(err, OMPF_CAMPAIGN_INCOMPLETE,
                            "%zu of %zu runs are not complete (see %s/manifest.tsv "
                            "and the .stderr files there); `ompfuse run --resume "
                            "%s` resubmits them",
                            bad, sel_total, c->dir, c->dir);
out_sig:
    ompf_cmpi_restore_signals(&sigs);
out:
    free(list);
    free(q.live);
    free(w.watch);
    free(w.final);
    free(sel);
    return rc;
}
