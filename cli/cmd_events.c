/* ompfuse events: what this machine can count, honestly. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "opts.h"
#include "ompfuse/counters.h"
#include "ompfuse/text.h"
#include "ompfuse/plan.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ompfuse events [--probe] [--pmu NAME] [--umasks] [--tracepoints] [--pmus]\n"
        "       ompfuse events --papi [--probe]\n"
        "       ompfuse events --json [--probe] [--pmu NAME]\n"
        "\n"
        "Lists the events libpfm4 knows for the PMUs detected on this machine,\n"
        "with each PMU's counters, whether the kernel really exposes the PMU,\n"
        "and what perf_event_paranoid permits; then the sources in perf's syntax\n"
        "(tracepoints, uprobes, sysfs PMUs, breakpoints: docs/events.md).\n"
        "\n"
        "  --probe      open every event (alone, on this thread) and say whether\n"
        "               it really counts, and why not\n"
        "  --pmu NAME   only this PMU (e.g. perf, amd64_fam19h_zen3)\n"
        "  --umasks     list each event's unit masks\n"
        "  --tracepoints  list the tracepoints (SUBSYS:NAME) instead of libpfm4's\n"
        "               events (with --probe: open each)\n"
        "  --pmus       list the sysfs PMUs' named events (PMU/EVENT/) instead\n"
        "  --json       the PMUs and events as one JSON document on stdout (like\n"
        "               perf list -j): pmus[] and events[] with name, pmu, kind,\n"
        "               aliases, umasks, description and, with --probe, status\n"
        "  --papi       the PAPI preset names event lists accept (PAPI_TOT_CYC, ...)\n"
        "               and the perf event each stands for (with --probe: open each)\n"
        "  -h, --help   this text\n" OMPF_CLI_EXIT_HELP);
}

static void paranoid_text(void)
{
    int lvl = ompf_cnt_paranoid();
    int root = geteuid() == 0;
    printf("perf_event_paranoid: ");
    if (lvl == -100) {
        printf("unreadable (/proc/sys/kernel/perf_event_paranoid missing: no perf_event support?)\n");
        return;
    }
    printf("%d: ", lvl);
    if (lvl <= -1)
        printf("every user may count everything (CPU-wide, kernel, tracepoints).\n");
    else if (lvl == 0)
        printf("users may count their own processes and CPU-wide, user and kernel, no raw tracepoints.\n");
    else if (lvl == 1)
        printf("users may count their own processes, user and kernel; no CPU-wide counting.\n");
    else if (lvl == 2)
        printf("users may count their own processes in user mode only; counting kernel time\n"
               "  (which ompfuse does by default; software events such as context switches\n"
               "  need it) requires root or CAP_PERFMON.\n");
    else
        printf("unprivileged users may not use perf_event_open at all.\n");
    if (root)
        printf("  You are root: the paranoid level does not restrict you.\n");
    else if (lvl >= 2)
        printf("  You are not root: run as root, grant CAP_PERFMON, or\n"
               "  `sysctl kernel.perf_event_paranoid=1`.\n");
}

/* One event of --json; status NULL without --probe. */
static void json_event(const char *name, const char *pmu, const ompf_event_desc_t *e,
                       const char *also, const char *status, size_t k)
{
    printf("%s\n {\"name\":", k ? "," : "");
    ompf_json_string(stdout, name);
    fputs(",\"pmu\":", stdout);
    ompf_json_string(stdout, pmu);
    printf(",\"kind\":\"%s\",\"description\":", e->software ? "software" : "hardware");
    ompf_json_string(stdout, e->desc);
    fputs(",\"aliases\":[", stdout);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", also);
    int first = 1;
    for (char *tok = strtok(buf, ", "); tok; tok = strtok(NULL, ", ")) {
        fputs(first ? "" : ",", stdout);
        ompf_json_string(stdout, tok);
        first = 0;
    }
    fputs("],\"umasks\":[", stdout);
    for (size_t i = 0; i < e->n_umasks; i++) {
        fputs(i ? "," : "", stdout);
        ompf_json_string(stdout, e->umasks[i]);
    }
    fputs("]", stdout);
    if (status) {
        fputs(",\"status\":", stdout);
        ompf_json_string(stdout, status);
    }
    fputs("}", stdout);
}

/* --papi: the preset table; with probe, whether each opens here. */
static int papi_table(int probe)
{
    size_t n = ompf_papi_preset_count();
    printf("%-13s %s\n", "PAPI preset", "counted as");
    for (size_t i = 0; i < n; i++) {
        const ompf_papi_preset_t *pp = ompf_papi_preset_at(i);
        char here[300] = "";
        if (probe) {
            ompf_cnt_set_t *s = NULL;
            const char *name = pp->papi;
            ompf_error_t err;
            if (ompf_cnt_set_create(&name, 1, &s, &err) == 0 && ompf_cnt_probe(s, &err) == 0)
                snprintf(here, sizeof here, "OPENS");
            else
                snprintf(here, sizeof here, "fails: %.280s", err.msg);
            ompf_cnt_set_destroy(s);
        }
        if (here[0] == 'O')
            printf("%-13s %-30s OPENS\n", pp->papi, pp->perf);
        else
            printf("%-13s %s\n", pp->papi, pp->perf);
        printf("              %s%s%s\n", pp->what, *pp->note ? "; " : "", pp->note);
        if (here[0] == 'f')
            printf("              %s\n", here);
    }
    printf("\n%zu presets.  Other PAPI presets have no generic perf event: PAPI builds them\n"
           "from this CPU's native events, which `ompfuse events` lists.\n", n);
    return 0;
}

int ompf_cmd_events(int argc, char **argv)
{
    static const struct option lo[] = {
        {"probe", no_argument, 0, 'p'},
        {"pmu", required_argument, 0, 'P'},
        {"umasks", no_argument, 0, 'u'},
        {"tracepoints", no_argument, 0, 't'},
        {"pmus", no_argument, 0, 'S'},
        {"papi", no_argument, 0, 'A'},
        {"json", no_argument, 0, 'J'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int probe = 0, umasks = 0, tps = 0, pmus = 0, papi = 0, json = 0;
    const char *only = NULL;
    ompf_cli_opts_t po;
    ompf_cli_opts_start(&po, "events", argc, argv, "h", lo);
    int ch;
    while ((ch = ompf_cli_opts_next(&po)) != -1) {
        switch (ch) {
        case 'p': probe = 1; break;
        case 'P': only = optarg; break;
        case 'u': umasks = 1; break;
        case 't': tps = 1; break;
        case 'S': pmus = 1; break;
        case 'A': papi = 1; break;
        case 'J': json = 1; break;
        case 'h': usage(stdout); return 0;
        default: /* bad option, reported */
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ompfuse events: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (papi)
        return papi_table(probe);
    ompf_catalog_t *c;
    ompf_error_t err;
    if (ompf_catalog_load(&c, &err) != 0) {
        fprintf(stderr, "ompfuse events: %s\n", err.msg);
        return 2;
    }
    int hw = ompf_catalog_has_hw_pmu(c);
    if (only) {
        int found = 0;
        for (size_t i = 0; i < ompf_catalog_pmu_count(c); i++)
            found |= !strcmp(ompf_catalog_pmu(c, i)->name, only);
        if (!found) {
            fprintf(stderr, "ompfuse events: no PMU named '%s' on this machine; PMUs:", only);
            for (size_t i = 0; i < ompf_catalog_pmu_count(c); i++)
                fprintf(stderr, " %s", ompf_catalog_pmu(c, i)->name);
            fprintf(stderr, "\n");
            ompf_catalog_destroy(c);
            return 2;
        }
    }

    if (json) {
        fputs("{\"perf_event_paranoid\":", stdout);
        printf("%d,\"hardware_pmu\":%s,\"pmus\":[", ompf_cnt_paranoid(), hw ? "true" : "false");
        for (size_t i = 0; i < ompf_catalog_pmu_count(c); i++) {
            const ompf_pmu_desc_t *p = ompf_catalog_pmu(c, i);
            printf("%s\n {\"name\":", i ? "," : "");
            ompf_json_string(stdout, p->name);
            fputs(",\"description\":", stdout);
            ompf_json_string(stdout, p->desc);
            printf(",\"counters\":%d,\"fixed_counters\":%d,\"events\":%d,\"kernel\":%s}",
                   p->num_cntrs, p->num_fixed_cntrs, p->nevents,
                   p->kernel_present == 1   ? "\"present\""
                   : p->kernel_present == 0 ? "\"absent\""
                                            : "\"unknown\"");
        }
        fputs("],\"events\":[", stdout);
    }
    if (!json) {
    printf("PMUs detected by libpfm4:\n");
    for (size_t i = 0; i < ompf_catalog_pmu_count(c); i++) {
        const ompf_pmu_desc_t *p = ompf_catalog_pmu(c, i);
        char cnt[64];
        if (p->num_cntrs || p->num_fixed_cntrs)
            snprintf(cnt, sizeof cnt, "%d general + %d fixed counters", p->num_cntrs,
                     p->num_fixed_cntrs);
        else
            snprintf(cnt, sizeof cnt, "generic (no counters of its own)");
        printf("  %-22s %-30.30s %-32s %3d events  %s\n", p->name, p->desc, cnt, p->nevents,
               p->kernel_present == 1    ? "kernel: present"
               : p->kernel_present == 0  ? "kernel: NOT PRESENT (events will not open)"
                                         : "kernel: unknown (use --probe)");
    }
    printf("\n");
    if (!hw) {
        /* a PMU with counters of its own: libpfm4 knows the CPU model */
        int model = 0;
        for (size_t i = 0; i < ompf_catalog_pmu_count(c); i++)
            model |= ompf_catalog_pmu(c, i)->num_cntrs > 0;
        printf("No hardware PMU is available to the kernel (/sys/bus/event_source/devices has\n"
               "no cpu PMU: typically a virtual machine without PMU passthrough).  %s\n"
               "software events count here, e.g. perf::TASK-CLOCK, perf::CPU-CLOCK,\n",
               model ? "libpfm4\nrecognises the CPU model, but its hardware events will not open.  Only"
                     : "This\nlibpfm4 does not know the CPU model either (no native event names).  Only");
        printf("perf::PAGE-FAULTS, perf::MINOR-FAULTS, perf::MAJOR-FAULTS,\n"
               "perf::CONTEXT-SWITCHES, perf::CPU-MIGRATIONS.  The kernel never multiplexes\n"
               "software events: emulate a counter limit with OMPFUSE_PMU_SLOTS=N.\n\n");
    } else {
        if (ompf_catalog_hw_counters(c) > 0)
            printf("Hardware PMU present: %d general-purpose counters per core (libpfm4).\n\n",
                   ompf_catalog_hw_counters(c));
        else /* the kernel has a cpu PMU that this libpfm4 cannot name */
            printf("Hardware PMU present, but this libpfm4 does not know the CPU model: no\n"
                   "native event names; perf:: generic events (perf::CYCLES, ...) name its\n"
                   "counters, LIBPFM_FORCE_PMU=MODEL another CPU's names.\n\n");
    }
    paranoid_text();
    printf("\n");
    ompf_events_sources(tps, pmus, probe);
    if (tps || pmus) {
        ompf_catalog_destroy(c);
        return 0;
    }
    } /* !json */

    size_t shown = 0, opened = 0, failed = 0;
    const char *cur_pmu = NULL;
    for (size_t i = 0; i < ompf_catalog_event_count(c); i++) {
        const ompf_event_desc_t *e = ompf_catalog_event(c, i);
        const ompf_pmu_desc_t *p = ompf_catalog_pmu(c, e->pmu);
        if (only && strcmp(p->name, only))
            continue;
        if (e->equiv)
            continue; /* shown with the event it names */
        /* aliases: the perf tool's short names come first */
        char also[512] = "";
        const char *shown_name = e->name;
        const char *bare = strstr(e->name, "::") + 2;
        for (size_t j = i + 1; j < ompf_catalog_event_count(c); j++) {
            const ompf_event_desc_t *a = ompf_catalog_event(c, j);
            size_t bl = strlen(bare);
            if (a->pmu != e->pmu || !a->equiv || strncmp(a->equiv, bare, bl) ||
                (a->equiv[bl] != '\0' && a->equiv[bl] != ':'))
                continue;
            if (shown_name == e->name && a->equiv[bl] == '\0') {
                shown_name = a->name;
                continue;
            }
            size_t l = strlen(also);
            snprintf(also + l, sizeof also - l, "%s%s", l ? ", " : "", a->name);
        }
        if (shown_name != e->name) {
            size_t l = strlen(also);
            snprintf(also + l, sizeof also - l, "%s%s", l ? ", " : "", e->name);
        }
        if (!json && cur_pmu != p->name) {
            cur_pmu = p->name;
            printf("%s events%s:\n", p->name,
                   probe ? "  (status: what happened when opened alone)" : "");
        }
        char status[400];
        if (probe) {
            const char *one = shown_name;
            char with[600];
            /* libpfm4's tracepoint groups open only with a tracepoint */
            if (e->n_umasks && !e->software) {
                snprintf(with, sizeof with, "%s:%s", e->name, e->umasks[0]);
                one = with;
            }
            if (ompf_cli_probe_one(one, status, sizeof status)) {
                if (one == with)
                    snprintf(status, sizeof status, "OPENS (as %.300s)", with);
                opened++;
            } else {
                failed++;
            }
        } else if (e->software) {
            snprintf(status, sizeof status, "software");
        } else if (p->kernel_present == 0 || (!hw && !strcmp(p->name, "perf"))) {
            snprintf(status, sizeof status, "hardware, no PMU: will not open");
        } else {
            snprintf(status, sizeof status, "hardware");
        }
        if (json) {
            json_event(shown_name, p->name, e, also, probe ? status : NULL, shown);
            shown++;
            continue;
        }
        if (also[0])
            printf("  %-36s %s  (also %s)\n", shown_name, status, also);
        else
            printf("  %-36s %s\n", shown_name, status);
        if (umasks && e->n_umasks) {
            printf("      umasks:");
            for (size_t k = 0; k < e->n_umasks; k++)
                printf(" %s", e->umasks[k]);
            printf("\n");
        }
        shown++;
    }
    if (json) {
        fputs("]}\n", stdout);
        ompf_catalog_destroy(c);
        return 0;
    }
    printf("\n%zu events listed", shown);
    if (probe)
        printf(": %zu open, %zu fail", opened, failed);
    printf(".\n");
    if (!probe)
        printf("`ompfuse events --probe` opens each one to show what really counts.\n");
    ompf_catalog_destroy(c);
    return 0;
}
