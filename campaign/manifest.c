/* The manifest (DIR/manifest.tsv) and the rule deciding that a run is
 * done: a complete profile holding every planned event, counted. */
#include "campaign_int.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ompfuse/file.h"

/* ---- validity of a profile --------------------------------------------- */

/* 0 when path holds a complete profile with every planned event present
 * and usable; otherwise a note says why. */
int ompf_cmpi_profile_valid(const ompf_campaign_run_t *r,
                         const ompf_plan_run_t *line, char *note, size_t len)
{
    ompf_profile_t *p = NULL;
    ompf_read_info_t info;
    ompf_error_t e;
    memset(&info, 0, sizeof info);
    memset(&e, 0, sizeof e);
    int rc = ompf_profile_read(r->profile, &p, &info, &e);
    if (rc != 0) {
        if (rc == OMPF_ETRUNC)
            snprintf(note, len, "profile %s is truncated (%s)", r->profile,
                     info.note);
        else
            snprintf(note, len, "%.400s", e.msg[0] ? e.msg : ompf_strerror(rc));
        ompf_profile_destroy(p);
        return rc ? rc : OMPF_EFORMAT;
    }
    int hem = r->role == OMPF_ROLE_HEM || r->role == OMPF_ROLE_HEM_DELTA;
    rc = 0;
    for (size_t i = 0; i < line->n_events && rc == 0; i++) {
        int idx = ompf_event_find(p, line->events[i]);
        if (idx < 0) {
            snprintf(note, len, "profile %s lacks the planned event %s",
                     r->profile, line->events[i]);
            rc = OMPF_EMISMATCH;
            break;
        }
        const ompf_event_t *ev = ompf_event_get(p, (uint32_t)idx);
        int ok = ev->status == OMPF_EV_COUNTED ||
                 (hem && ev->status == OMPF_EV_ESTIMATED);
        if (!ok) {
            snprintf(note, len, "event %s was %s in this run%s%s",
                     line->events[i], ompf_event_status_name(ev->status),
                     ev->reason ? ": " : "", ev->reason ? ev->reason : "");
            rc = OMPF_EMISMATCH;
        }
    }
    ompf_profile_destroy(p);
    return rc;
}

/* ---- manifest ------------------------------------------------------------ */

int ompf_cmpi_write_manifest(const ompf_campaign_t *c, ompf_error_t *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/manifest.tsv", c->dir);
    ompf_outfile_t *o;
    FILE *f;
    int rc = ompf_outfile_open(path, &o, &f, err);
    if (rc)
        return rc;
    fprintf(f, "# ompfuse run manifest; program:");
    for (size_t i = 0; c->argv[i]; i++)
        fprintf(f, " %s", c->argv[i]);
    fprintf(f, "\n# index\trole\trepeat\tevents\tstatus\texit\tseconds\tprofile\tnode\n");
    for (size_t i = 0; i < c->n; i++) {
        const ompf_campaign_run_t *r = &c->runs[i];
        char ex[32];
        if (r->signal)
            snprintf(ex, sizeof ex, "sig%d", r->signal);
        else if (r->exit_code >= 0)
            snprintf(ex, sizeof ex, "%d", r->exit_code);
        else
            snprintf(ex, sizeof ex, "-");
        const char *base = strrchr(r->profile, '/');
        fprintf(f, "%zu\t%s\t%u\t%s\t%s\t%s\t%.3f\t%s\t%s\n", r->index,
                ompf_plan_role_name(r->role), r->repeat, r->events,
                ompf_run_status_name(r->status), ex, r->seconds,
                base ? base + 1 : r->profile, r->node[0] ? r->node : "-");
    }
    return ompf_outfile_commit(o, err);
}

/* Seconds, exit codes and nodes of runs kept from an earlier attempt. */
void ompf_cmpi_read_manifest(ompf_campaign_t *c)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/manifest.tsv", c->dir);
    FILE *f = NULL;
    if (ompf_fopen_input(path, "manifest", &f, NULL))
        return;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        char *field[9];
        size_t nf = 0;
        char *save = NULL;
        for (char *t = strtok_r(line, "\t\n", &save); t && nf < 9;
             t = strtok_r(NULL, "\t\n", &save))
            field[nf++] = t;
        if (nf < 8)
            continue;
        for (size_t i = 0; i < c->n; i++) {
            const char *base = strrchr(c->runs[i].profile, '/');
            if (!strcmp(base ? base + 1 : c->runs[i].profile, field[7]) &&
                !strcmp(c->runs[i].events, field[3])) {
                c->runs[i].seconds = atof(field[6]);
                if (isdigit((unsigned char)field[5][0]))
                    c->runs[i].exit_code = atoi(field[5]);
                if (nf > 8 && strcmp(field[8], "-"))
                    snprintf(c->runs[i].node, sizeof c->runs[i].node, "%s",
                             field[8]);
            }
        }
    }
    fclose(f);
}

void ompf_cmpi_scan(ompf_campaign_t *c, const unsigned char *live,
                    size_t *kept_out, size_t *todo_out)
{
    ompf_cmpi_read_manifest(c);
    size_t todo = 0, kept = 0, busy = 0;
    for (size_t i = 0; i < c->n; i++) {
        ompf_campaign_run_t *r = &c->runs[i];
        char note[512];
        int selected = r->status != OMPF_RUN_SKIPPED;
        if (access(r->profile, F_OK) == 0) {
            /* a run of an unselected role done earlier still counts as done */
            if (ompf_cmpi_profile_valid(r, c->line[i], note, sizeof note) == 0) {
                r->status = OMPF_RUN_OK;
                r->resumed = 1;
                kept++;
                continue;
            }
            /* truncated or unusable: it is run again, unless it is still
             * running elsewhere (a live Slurm task is never touched) */
            if (selected && !(live && live[i]))
                unlink(r->profile);
        }
        if (!selected)
            continue;
        r->status = OMPF_RUN_PENDING;
        if (live && live[i])
            busy++;
        else
            todo++;
    }
    if (c->o.progress != -2) {
        fprintf(c->o.log, "ompfuse: %zu run%s planned", c->n, c->n == 1 ? "" : "s");
        if (kept)
            fprintf(c->o.log, ", %zu already complete (kept)", kept);
        if (busy)
            fprintf(c->o.log, ", %zu still queued or running", busy);
        if (c->n - kept - todo - busy)
            fprintf(c->o.log, ", %zu not selected", c->n - kept - todo - busy);
        fprintf(c->o.log, ", %zu to run", todo);
    }
    *kept_out = kept;
    *todo_out = todo;
}
