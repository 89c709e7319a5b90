/* ompfuse events: the event sources in perf's syntax (tracepoints, uprobes,
 * sysfs PMUs, breakpoints): how many, their names on request, and whether
 * they open (through the same library the tool uses). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "ompfuse/counters.h"
#include "ompfuse/plan.h"

#define SYSPMU "/sys/bus/event_source/devices"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the subdirectories (or files) of dir; NULL when
 * unreadable.  Free with free_names. */
static char **names_in(const char *dir, int want_dirs, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    size_t cap = 64;
    char **v = malloc(cap * sizeof *v);
    struct dirent *e;
    while (v && (e = readdir(d))) {
        /* sysfs PMUs are symbolic links to their devices */
        int dir = e->d_type == DT_DIR || e->d_type == DT_LNK;
        if (e->d_name[0] == '.' || (want_dirs && !dir) ||
            (!want_dirs && e->d_type == DT_DIR))
            continue;
        if (*n == cap) {
            char **w = realloc(v, (cap *= 2) * sizeof *v);
            if (!w)
                break;
            v = w;
        }
        if (!(v[*n] = strdup(e->d_name)))
            break;
        (*n)++;
    }
    closedir(d);
    if (v)
        qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

int ompf_cli_probe_one(const char *name, char *status, size_t n)
{
    const char *one[1] = {name};
    char why[512];
    if (ompf_plan_probe_compat(one, 1, NULL, why, sizeof why)) {
        snprintf(status, n, "OPENS");
        return 1;
    }
    const char *r = strstr(why, ": "); /* the reason repeats the name */
    snprintf(status, n, "fails: %.380s", r ? r + 2 : why);
    return 0;
}

/* Calls fn for every countable tracepoint (SUBSYS:NAME with an id; the
 * ftrace record formats have none); returns how many. */
static size_t each_tracepoint(const char *root, size_t *groups,
                              void (*fn)(const char *name, void *ctx), void *ctx)
{
    size_t ng, total = 0;
    char **g = names_in(root, 1, &ng);
    for (size_t i = 0; i < ng; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", root, g[i]);
        size_t nt;
        char **tps = names_in(dir, 1, &nt);
        for (size_t t = 0; t < nt; t++) {
            char id[4096 + 300], name[512];
            snprintf(id, sizeof id, "%s/%s/id", dir, tps[t]);
            if (access(id, F_OK) != 0)
                continue;
            total++;
            snprintf(name, sizeof name, "%s:%s", g[i], tps[t]);
            if (fn)
                fn(name, ctx);
        }
        free_names(tps, nt);
    }
    free_names(g, ng);
    if (groups)
        *groups = ng;
    return total;
}

struct listing {
    int probe;
    size_t opened, failed;
};

static void list_one(const char *name, void *ctx)
{
    struct listing *l = ctx;
    char status[400] = "";
    if (l->probe)
        *(ompf_cli_probe_one(name, status, sizeof status) ? &l->opened : &l->failed) += 1;
    printf("  %-52s %s\n", name, status);
}

static void list_pmus(int names, int probe, size_t *opened, size_t *failed)
{
    size_t np;
    char **pmus = names_in(SYSPMU, 1, &np);
    printf("PMUs the kernel describes in " SYSPMU " (named PMU/EVENT/):\n");
    for (size_t i = 0; i < np; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, SYSPMU "/%s/events", pmus[i]);
        size_t ne;
        char **evs = names_in(dir, 0, &ne);
        printf("  %-14s %zu named events%s\n", pmus[i], ne,
               !strcmp(pmus[i], "uprobe")       ? " (uprobe:BINARY:SYMBOL[+OFFSET])"
               : !strcmp(pmus[i], "tracepoint") ? " (SUBSYS:NAME)"
               : !strcmp(pmus[i], "breakpoint") ? " (mem:ADDR[:rw|:x])"
                                                : "");
        for (size_t k = 0; names && k < ne; k++) {
            if (strchr(evs[k], '.'))
                continue; /* .scale / .unit files describe an event */
            char name[512], status[400] = "";
            snprintf(name, sizeof name, "%s/%s/", pmus[i], evs[k]);
            if (probe)
                *(ompf_cli_probe_one(name, status, sizeof status) ? opened : failed) += 1;
            printf("    %-40s %s\n", name, status);
        }
        free_names(evs, ne);
    }
    free_names(pmus, np);
}

int ompf_events_sources(int tracepoints, int pmus, int probe)
{
    size_t opened = 0, failed = 0;
    int root = geteuid() == 0;
    const char *tfs = ompf_cnt_tracefs();
    printf("Event sources in perf's syntax (docs/events.md):\n");
    if (tfs) {
        size_t ng, nt = each_tracepoint(tfs, &ng, NULL, NULL);
        printf("  tracepoints   %zu in %zu groups, ids from %s; named SUBSYS:NAME "
               "(e.g. sched:sched_switch)%s\n", nt, ng, tfs,
               tracepoints ? "" : "; list with --tracepoints");
    } else if (access("/sys/kernel/tracing", F_OK) == 0 && !root) {
        printf("  tracepoints   tracefs unreadable for this user: run as root\n");
    } else {
        printf("  tracepoints   tracefs is not mounted; as root: `mount -t "
               "tracefs nodev /sys/kernel/tracing`\n");
    }
    int up = access(SYSPMU "/uprobe/type", R_OK) == 0;
    printf("  uprobes       %s; named uprobe:BINARY:SYMBOL[+OFFSET] (a "
           "function's executions); need root or CAP_PERFMON\n",
           up ? "uprobe PMU present" : "no uprobe PMU in this kernel");
    printf("  perf probe    `perf probe -x BINARY FUNC` makes the tracepoint "
           "probe_BINARY:FUNC\n");
    uint64_t bp_got = 0;
    int bp_pmu = access(SYSPMU "/breakpoint/type", R_OK) == 0;
    int bp = bp_pmu ? ompf_cnt_breakpoint_check(&bp_got) : 0;
    char bp_state[200];
    if (bp_pmu && bp == 0)
        snprintf(bp_state, sizeof bp_state,
                 "present but they do not fire here (a self-test counted %llu of %d "
                 "writes: the hypervisor does not deliver debug-register hits, so "
                 "mem: events count 0)", (unsigned long long)bp_got,
                 OMPF_CNT_BP_CHECK_WRITES);
    else
        snprintf(bp_state, sizeof bp_state, "%s", !bp_pmu    ? "absent"
                                                  : bp == 1 ? "present"
                                                            : "present (none opened)");
    printf("  breakpoints   %s; named mem:ADDR[:rw|:x]; the CPU's debug "
           "registers bound how many open at once\n", bp_state);
    if (!root)
        printf("  You are not root: tracepoint ids (tracefs) and uprobes need root "
               "or CAP_PERFMON.\n");
    printf("\n");
    if (tracepoints && tfs) {
        printf("tracepoints%s:\n", probe ? "  (status: what happened when opened alone)" : "");
        struct listing l = {probe, 0, 0};
        each_tracepoint(tfs, NULL, list_one, &l);
        opened += l.opened;
        failed += l.failed;
        printf("\n");
    }
    list_pmus(pmus, probe && pmus, &opened, &failed);
    if (probe && (tracepoints || pmus))
        printf("\nperf-syntax events probed: %zu open, %zu fail.\n", opened, failed);
    printf("\n");
    return 0;
}
