/* The local launcher: runs at most opts.jobs children at a time on this
 * machine. */
#include "campaign_int.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct child {
    pid_t pid;
    size_t run;  /* index into runs, (size_t)-1 for the plain run */
    double t0;
} child_t;


int ompf_campaign_execute(ompf_campaign_t *c, ompf_error_t *err)
{
    if (!c)
        return ompf_error_set(err, OMPF_EINVAL, "no campaign");
    size_t todo = 0, kept = 0;
    unsigned char *busy = calloc(c->n + 1, 1);
    if (!busy)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    size_t nbusy = ompf_cmpi_leftovers(c, busy);
    ompf_cmpi_scan(c, busy, &kept, &todo);
    if (c->o.progress != -2)
        fprintf(c->o.log, ", %u at a time%s\n", c->o.jobs,
                c->o.jobs > 1 ? " (concurrent runs compete for cores and "
                                "perturb each other's counts)"
                              : "");
    for (size_t i = 0; i < c->n; i++)
        if (busy[i] && c->runs[i].status == OMPF_RUN_PENDING) {
            c->runs[i].status = OMPF_RUN_FAILED;
            if (c->o.progress != -2)
                fprintf(c->o.log, "ompfuse: %s not run: %s\n", c->runs[i].name,
                        c->runs[i].note);
        }
    free(busy);
    int rc = ompf_cmpi_write_manifest(c, err);
    if (rc)
        return rc;
    if (todo == 0)
        return nbusy ? ompf_error_set(err, OMPF_CAMPAIGN_INCOMPLETE,
                                      "%zu run%s of an earlier campaign in %s %s still "
                                      "running (see the notes above)",
                                      nbusy, nbusy == 1 ? "" : "s", c->dir,
                                      nbusy == 1 ? "is" : "are")
                     : 0;

    /* before any run: a probe defined while runs have it open through the
     * uprobe PMU would not make their closes cheaper */
    for (size_t i = 0; c->o.hold && !c->o.hold_own_only && i < c->n; i++)
        if (c->runs[i].status == OMPF_RUN_PENDING &&
            ompf_uphold_add_list(c->o.hold, c->runs[i].events) == OMPF_ENOMEM)
            return ompf_error_set(err, OMPF_ENOMEM, "out of memory");

    ompf_cmpi_sigs_t sigs;
    ompf_cmpi_catch_signals(&sigs);

    if (c->o.check_plain && !c->plain_done) {
        rc = ompf_cmpi_plain_run(c, err);
        if (rc) {
            ompf_cmpi_restore_signals(&sigs);
            return rc;
        }
        c->plain_done = 1;
    }

    ompf_cmpi_progress_t pg;
    ompf_cmpi_progress_init(c, &pg, kept + todo, kept, c->o.jobs);
    child_t *kids = calloc(c->o.jobs, sizeof *kids);
    if (!kids) {
        ompf_cmpi_restore_signals(&sigs);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    /* Execution order: repeat 1 of every line, then repeat 2, ...: slow
     * drifts of the machine (other load, frequency, memory state) then
     * touch the repeats of a reference set and the fusion runs alike,
     * instead of making back-to-back repeats look closer to each other
     * than to anything else (which would make the EPD calibration too
     * optimistic).  Files and the manifest keep plan order. */
    size_t *order = malloc((c->n ? c->n : 1) * sizeof *order);
    if (!order) {
        free(kids);
        ompf_cmpi_restore_signals(&sigs);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < c->n; i++)
        order[i] = i;
    for (size_t i = 1; i < c->n; i++) /* stable insertion sort by repeat */
        for (size_t j = i; j > 0 && c->runs[order[j]].repeat < c->runs[order[j - 1]].repeat; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t running = 0, next = 0;
    double last_tick = 0;
    ompf_error_t io; /* the first failed write of the manifest */
    memset(&io, 0, sizeof io);
    int io_rc = 0;
    for (;;) {
        /* a manifest that cannot be written stops the campaign: it could
         * not record what it runs (and a full disk fails every run) */
        while (!ompf_cmpi_interrupted && !io_rc && running < c->o.jobs) {
            while (next < c->n && c->runs[order[next]].status != OMPF_RUN_PENDING)
                next++;
            if (next >= c->n)
                break;
            size_t ri = order[next];
            ompf_campaign_run_t *r = &c->runs[ri];
            char out[PATH_MAX + 64], errp[PATH_MAX + 64];
            ompf_cmpi_run_paths(c, r->name, out, errp, sizeof out);
            unlink(r->profile);
            ompf_cmpi_remove_stale(r->profile);
            size_t slot = 0;
            while (kids[slot].pid)
                slot++;
            if (c->o.hold && c->o.hold_own_only && c->o.jobs == 1)
                ompf_uphold_only(c->o.hold, r->events);
            kids[slot].t0 = ompf_cmpi_now();
            kids[slot].run = ri;
            kids[slot].pid = ompf_cmpi_spawn(c, r, c->line[ri], out, errp);
            if (kids[slot].pid < 0) {
                kids[slot].pid = 0;
                r->status = OMPF_RUN_FAILED;
                snprintf(r->note, sizeof r->note, "fork failed: %s",
                         strerror(errno));
                pg.done++;
                ompf_cmpi_progress_line(c, &pg, r);
                next++;
                continue;
            }
            running++;
            next++;
        }
        if (running == 0)
            break;
        if (ompf_cmpi_interrupted) {
            for (size_t s = 0; s < c->o.jobs; s++)
                if (kids[s].pid) {
                    kill(-kids[s].pid, SIGKILL);
                    kill(kids[s].pid, SIGKILL);
                    int st;
                    ompf_cmpi_reap(kids[s].pid, &st, 1);
                    ompf_campaign_run_t *r = &c->runs[kids[s].run];
                    char out[PATH_MAX + 64], errp[PATH_MAX + 64];
                    r->status = OMPF_RUN_INTERRUPTED;
                    unlink(r->profile);
                    ompf_cmpi_run_paths(c, r->name, out, errp, sizeof out);
                    unlink(out);
                    unlink(errp);
                    kids[s].pid = 0;
                }
            running = 0;
            break;
        }
        int progressed = 0;
        for (size_t s = 0; s < c->o.jobs; s++) {
            if (!kids[s].pid)
                continue;
            int st = 0;
            pid_t w = ompf_cmpi_reap(kids[s].pid, &st, 0);
            int timed_out = 0;
            if (w == 0 && c->o.timeout_s > 0 &&
                ompf_cmpi_now() - kids[s].t0 > c->o.timeout_s) {
                kill(-kids[s].pid, SIGKILL);
                kill(kids[s].pid, SIGKILL);
                w = ompf_cmpi_reap(kids[s].pid, &st, 1);
                timed_out = 1;
            }
            if (w != kids[s].pid)
                continue;
            double secs = ompf_cmpi_now() - kids[s].t0;
            ompf_campaign_run_t *r = &c->runs[kids[s].run];
            ompf_cmpi_finish_run(c, r, st, timed_out, secs);
            kids[s].pid = 0;
            running--;
            pg.done++;
            pg.finished_here++;
            pg.busy += secs;
            ompf_cmpi_progress_line(c, &pg, r);
            if (!io_rc)
                io_rc = ompf_cmpi_write_manifest(c, &io);
            progressed = 1;
        }
        if (!progressed) {
            double t = ompf_cmpi_now();
            if (t - last_tick > 0.5) {
                char what[96] = "";
                for (size_t s = 0; s < c->o.jobs && !what[0]; s++)
                    if (kids[s].pid)
                        snprintf(what, sizeof what, "running %s",
                                 c->runs[kids[s].run].name);
                ompf_cmpi_progress_tick(c, &pg, what);
                last_tick = t;
            }
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    free(kids);
    free(order);
    ompf_cmpi_progress_end(c, &pg);
    if (!io_rc)
        io_rc = ompf_cmpi_write_manifest(c, &io);
    ompf_cmpi_restore_signals(&sigs);
    size_t ok = ompf_campaign_count_status(c, OMPF_RUN_OK);
    size_t bad = ompf_campaign_count_status(c, OMPF_RUN_FAILED) +
                 ompf_campaign_count_status(c, OMPF_RUN_TIMEOUT);
    size_t left = ompf_campaign_count_status(c, OMPF_RUN_PENDING);
    if (c->o.progress != -2) {
        char notrun[64] = "";
        if (left)
            snprintf(notrun, sizeof notrun, ", %zu not run", left);
        fprintf(c->o.log, "ompfuse: %zu ok, %zu failed%s, in %.1f s; manifest %s/manifest.tsv\n",
                ok, bad, notrun, ompf_cmpi_now() - pg.t0, c->dir);
    }
    if (io_rc) {
        ompf_cmpi_interrupted = 0;
        return ompf_error_set(err, io_rc, "%s; %zu run%s not started", io.msg, left,
                              left == 1 ? "" : "s");
    }
    if (ompf_cmpi_interrupted) {
        ompf_cmpi_interrupted = 0;
        return ompf_error_set(err, OMPF_EPERM,
                              "interrupted; the manifest is written and "
                              "running the same command again resumes");
    }
    if (bad) {
        rc = ompf_error_set(err, OMPF_CAMPAIGN_INCOMPLETE,
                            "%zu of %zu runs failed (see %s/manifest.tsv and "
                            "the .stderr files there); `ompfuse run --resume "
                            "%s` (or the same command again) retries them",
                            bad, c->n - ompf_campaign_count_status(c, OMPF_RUN_SKIPPED),
                            c->dir, c->dir);
    }
    return rc;
}

