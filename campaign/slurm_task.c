/* Inside a Slurm array task: execute exactly one planned run with the local
 * launcher's code (same environment, files, timeout and validity rule) and
 * leave the start and done markers the collector reads. */
#include "campaign_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void write_start(const ompf_campaign_t *c, size_t index,
                        const char *node)
{
    char path[PATH_MAX + 64], cpu[256], text[1024];
    const char *array = getenv("SLURM_ARRAY_JOB_ID");
    const char *job = getenv("SLURM_JOB_ID");
    ompf_cpu_model(cpu, sizeof cpu);
    snprintf(text, sizeof text, "%s\t%s\t%s\t%s\t%ld\n",
             array && *array ? array : "-", job && *job ? job : "-", node,
             cpu, (long)time(NULL));
    ompf_cmpi_marker_path(c, index, "start", path, sizeof path);
    ompf_cmpi_write_file(path, text);
}

static void write_done(const ompf_campaign_t *c, size_t index, int status,
                       int exit_code, int sig, double secs, const char *node,
                       const char *note)
{
    char path[PATH_MAX + 64], text[1024], clean[512];
    /* one line: tabs and newlines of the note would break the fields */
    snprintf(clean, sizeof clean, "%s", note);
    for (char *p = clean; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r')
            *p = ' ';
    snprintf(text, sizeof text, "%s\t%d\t%d\t%.3f\t%s\t%s\n",
             ompf_run_status_name(status), exit_code, sig, secs, node, clean);
    ompf_cmpi_marker_path(c, index, "done", path, sizeof path);
    ompf_cmpi_write_file(path, text);
}

int ompf_campaign_slurm_task(ompf_campaign_t *c, size_t index,
                             ompf_error_t *err)
{
    if (!c || index > c->n)
        return ompf_error_set(err, OMPF_EINVAL,
                              "array task %zu: the campaign in %s has only "
                              "%zu runs; was its plan changed after "
                              "submission?",
                              index, c ? c->dir : "?", c ? c->n : 0);
    char tasks[PATH_MAX + 16], node[64];
    snprintf(tasks, sizeof tasks, "%s/slurm/tasks", c->dir);
    if (ompf_cmpi_mkdir_p(tasks) != 0)
        return ompf_error_set(err, OMPF_EIO,
                              "cannot create %s: %s (is the campaign "
                              "directory on a filesystem this node shares?)",
                              tasks, strerror(errno));
    ompf_cmpi_hostname(node, sizeof node);
    write_start(c, index, node);
    ompf_cmpi_sigs_t sigs;
    ompf_cmpi_catch_signals(&sigs);
    int rc;
    if (index == 0) {
        double t0 = ompf_cmpi_now();
        rc = ompf_cmpi_plain_run(c, err);
        write_done(c, 0,
                   rc == 0 ? OMPF_RUN_OK
                   : ompf_cmpi_interrupted ? OMPF_RUN_INTERRUPTED
                                           : OMPF_RUN_FAILED,
                   -1, 0, ompf_cmpi_now() - t0, node, rc ? err->msg : "");
        ompf_cmpi_restore_signals(&sigs);
        return rc;
    }
    ompf_campaign_run_t *r = &c->runs[index - 1];
    snprintf(r->node, sizeof r->node, "%s", node);
    char note[512];
    if (access(r->profile, F_OK) == 0 &&
        ompf_cmpi_profile_valid(r, c->line[index - 1], note, sizeof note) == 0) {
        /* finished by an earlier task between a collector's look and this
         * resubmission: never run twice */
        r->status = OMPF_RUN_OK;
        snprintf(r->note, sizeof r->note, "already complete");
    } else {
        char out[PATH_MAX + 64], errp[PATH_MAX + 64];
        ompf_cmpi_run_paths(c, r->name, out, errp, sizeof out);
        unlink(r->profile);
        ompf_cmpi_remove_stale(r->profile);
        double t0 = ompf_cmpi_now();
        pid_t pid = ompf_cmpi_spawn(c, r, c->line[index - 1], out, errp);
        if (pid < 0) {
            r->status = OMPF_RUN_FAILED;
            snprintf(r->note, sizeof r->note, "fork failed: %s",
                     strerror(errno));
        } else {
            int st = 0, timed_out = 0;
            ompf_cmpi_wait_child(c, pid, t0, &st, &timed_out);
            if (ompf_cmpi_interrupted) {
                r->status = OMPF_RUN_INTERRUPTED;
                r->seconds = ompf_cmpi_now() - t0;
                snprintf(r->note, sizeof r->note,
                         "the array task was cancelled while running");
                unlink(r->profile);
                ompf_cmpi_remove_stale(r->profile);
            } else {
                ompf_cmpi_finish_run(c, r, st, timed_out, ompf_cmpi_now() - t0);
            }
        }
    }
    write_done(c, index, r->status, r->exit_code, r->signal, r->seconds, node,
               r->note);
    ompf_cmpi_restore_signals(&sigs);
    if (r->status == OMPF_RUN_OK)
        return 0;
    return ompf_error_set(err, OMPF_CAMPAIGN_INCOMPLETE, "run %s %s: %s", r->name,
                          ompf_run_status_name(r->status), r->note);
}
