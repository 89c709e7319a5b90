/* What `--events auto` shows and keeps: the accessors, the report of the
 * choice (also the comments of DIR/events-auto.txt), saving and loading. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoevents_internal.h"
#include "ompfuse/file.h"

size_t ompf_auto_cand_count(const ompf_auto_t *a) { return a->n; }
const ompf_auto_cand_t *ompf_auto_cand(const ompf_auto_t *a, size_t i) { return &a->c[i]; }
double ompf_auto_base_seconds(const ompf_auto_t *a) { return a->base_s; }
double ompf_auto_check_seconds(const ompf_auto_t *a) { return a->check_s; }

size_t ompf_auto_chosen(const ompf_auto_t *a, const char **names, size_t max)
{
    for (size_t k = 0; k < a->nchosen && k < max; k++)
        names[k] = a->c[a->order[k]].name;
    return a->nchosen;
}

static const char *kind_name(int k)
{
    return k == OMPF_AUTO_UPROBE ? "uprobe" : k == OMPF_AUTO_TRACEPOINT ? "tracepoint"
                                                                        : "software";
}

/* The report, as '#'-prefixed lines when hash (the saved file). */
static void print(const ompf_auto_t *a, FILE *f, const char *pre)
{
    fprintf(f, "%sauto: program %.2f s without the tool, %.2f s under the tool (software "
               "events); a uprobe hit costs %.1f us (%s), %.1f us on an instruction the "
               "kernel emulates; opening and closing one per thread %s\n", pre, a->plain_s,
            a->base_s, 1e6 * a->uprobe_cost,
            a->uprobe_cost_measured ? "measured now" : "the documented figure",
            1e6 * a->emu_cost,
            a->uprobe_fixed < 1e-3 ? "~0.15 ms (held in tracefs)"
                                   : "~0.1 s (uprobe PMU: not held, see docs/events.md)");
    fprintf(f, "%schosen (%zu):\n", pre, a->nchosen);
    for (size_t k = 0; k < a->nchosen; k++) {
        const ompf_auto_cand_t *c = &a->c[a->order[k]];
        fprintf(f, "%s  %-10s %s%s%s%s\n%s             %s\n", pre, kind_name(c->kind), c->name,
                c->where[0] ? " (" : "", c->where, c->where[0] ? ")" : "", pre, c->why);
    }
    if (ompf__auto_budget_ref(a) > 0)
        fprintf(f, "%sestimated probe cost %.3f s = %.1f%% of the run's %s%s", pre, a->est_s,
                100 * a->est_s / ompf__auto_budget_ref(a), a->base_cpu > 0 ? "CPU time" : "time",
                a->check_s > 0 ? "; " : "\n");
    if (a->check_s > 0)
        fprintf(f, "measured: %.2f s with the chosen set vs %.2f s = %+.1f%% slowdown "
                   "(wall, best of %d alternating)", a->check_s, a->base_s,
                100 * (a->check_s / a->base_s - 1), CHECK_RUNS);
    if (a->check_s > 0 && a->base_cpu > 0 && a->check_cpu > 0)
        fprintf(f, ", CPU time %.2f s vs %.2f s = %+.1f%% (task-clock)", a->check_cpu,
                a->base_cpu, 100 * (a->check_cpu / a->base_cpu - 1));
    if (a->check_s > 0)
        fprintf(f, "\n");
    fprintf(f, "%srejected (%zu):\n", pre, a->n - a->nchosen);
    for (size_t i = 0; i < a->n; i++) {
        const ompf_auto_cand_t *c = &a->c[i];
        if (c->chosen)
            continue;
        fprintf(f, "%s  %s%s%s%s: %s\n", pre, c->name, c->where[0] ? " (" : "", c->where,
                c->where[0] ? ")" : "", c->why[0] ? c->why : "not examined");
    }
}

void ompf_auto_print(const ompf_auto_t *a, FILE *f)
{
    print(a, f, "");
}

int ompf_auto_save(const ompf_auto_t *a, const char *path, ompf_error_t *err)
{
    ompf_outfile_t *of;
    FILE *f;
    int rc = ompf_outfile_open(path, &of, &f, err);
    if (rc)
        return rc;
    fprintf(f, "# ompfuse --events auto: the chosen events, one a line; the rest are the "
               "reasons\n");
    for (size_t k = 0; k < a->nchosen; k++)
        fprintf(f, "%s\n", a->c[a->order[k]].name);
    print(a, f, "# ");
    return ompf_outfile_commit(of, err);
}

int ompf_auto_load(const char *path, char ***names, size_t *n, ompf_error_t *err)
{
    *names = NULL;
    *n = 0;
    FILE *f = NULL;
    if (ompf_fopen_input(path, "the saved event choice", &f, NULL)) /* never blocks */
        return ompf_error_set(err, errno == ENOENT ? OMPF_ENOTFOUND : OMPF_EIO,
                              "cannot read %s: %s", path, strerror(errno));
    char line[8192];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        char **g = realloc(*names, (*n + 2) * sizeof *g);
        if (!g || !(g[*n] = strdup(line))) {
            if (g)
                *names = g;
            rc = OMPF_ENOMEM;
            break;
        }
        *names = g;
        (*n)++;
    }
    if (rc == 0 && ferror(f))
        rc = ompf_error_set(err, OMPF_EIO, "cannot read %s: %s", path, strerror(errno));
    fclose(f);
    if (rc == 0 && *n < 2)
        rc = ompf_error_set(err, OMPF_EFORMAT, "%s lists fewer than two events", path);
    if (rc) {
        ompf_auto_free_list(*names, *n);
        *names = NULL;
        *n = 0;
    }
    return rc;
}
