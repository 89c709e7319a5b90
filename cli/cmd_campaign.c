/* ompfuse campaign: plan -> run -> combine (every strategy) -> clean HEM ->
 * evaluate -> report, for the bundled benchmarks or one program.  Each step
 * after the runs is this same binary's subcommand, run as a child process
 * (campaign/steps.c): a step that fails is reported and the campaign goes
 * on with what it has.  This file: options, planning and running each
 * benchmark, the exit status; campaign/results.c (libompfbench,
 * campaign/bench.h): what is shown and written at the end. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "commands.h"
#include "ompfuse/uphold.h"
#include "opts.h"
#include "ompfuse/campaign.h"
#include "ompfuse/file.h"
#include "ompfuse/plan.h"

#define MAX_BENCH 16

typedef struct bench {
    const char *name;
    const char *binary; /* in the directory of the ompfuse binary */
    const char *args[8];
    const char *schedule; /* OMP_SCHEDULE, NULL: not set */
} bench_t;

/* Small sizes: the whole campaign must fit in minutes on 2 cores.  The
 * static-schedule runs have few, short XUs, so they use class W (a run
 * still takes well under a second) to keep machine noise from dominating
 * the counts; cg with dynamic,10 has 5x more XUs at W and stays at S.
 * (cg-static at class A, ~4x longer XUs, won no more often: docs/guide.md
 * §5.) */
static const bench_t builtin[] = {
    {"cg-static", "cg", {"W", NULL}, "static"},
    {"cg-dyn10", "cg", {"S", NULL}, "dynamic,10"},
    {"mg", "mg", {"W", NULL}, "static"},
    {"knapsack", "knapsack", {NULL}, NULL},
    /* not in the default list: the same task tree every run (-d), so that
     * labels match across runs, and tasks large enough (~230 us) that a
     * uprobe hit per task costs a few percent (--events auto, docs/events.md) */
    {"knapsack-d", "knapsack", {"-d", "-n", "42", "-c", "11", NULL}, NULL},
};
#define N_BUILTIN (sizeof builtin / sizeof builtin[0])

/* The two pairs of near-identical software events (docs/semantics.md,
 * Counters: the situation of the paper's PAPI_L1_DCM / PAPI_L2_DCA), listed so
 * that each pair is split: the first-fit LGL sets become {TASK-CLOCK,
 * PAGE-FAULTS} and {CPU-CLOCK, MINOR-FAULTS}, so a fusion must bring the twins
 * of an XU together from different runs, which EPD checks on the twin pairs
 * (listed as TASK-CLOCK, CPU-CLOCK, ... the twins shared a run and every
 * pairing, even the random control, kept them on the diagonal).  HEM rotates
 * its window over the same order ({TC,PF}, {PF,CC}, {CC,MF}, {MF,TC} on 2
 * slots), so it too never counts both twins in one window. */
static const char *const default_events =
    "perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CPU-CLOCK,perf::MINOR-FAULTS";

/* the bundled benchmarks a campaign without -- PROGRAM runs */
static const char *const default_benches = "cg-static,cg-dyn10,mg,knapsack";

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ompfuse campaign [options] [-- PROGRAM ARGS...]\n"
        "\n"
        "The whole experiment in one command: for each benchmark (or PROGRAM),\n"
        "plan the runs, execute them under the tool, fuse them with every\n"
        "strategy (ctc, lgl, bc, bc-unlabeled, random), clean the HEM profiles,\n"
        "evaluate everything against the reference runs (EPD: 1.0 = as close as\n"
        "two reference runs), print the EPD table and write DIR/report.html.\n"
        "Running it again resumes: completed runs are kept.\n"
        "\n"
        "  --out DIR          output directory (default ompfuse-campaign)\n"
        "  --events LIST      events (default %s)\n"
        "  --events auto[:N]  choose N (default 4) events per benchmark that vary per\n"
        "                     XU and are not twins, from pilot runs: uprobes on its\n"
        "                     source lines, tracepoints, software events (root;\n"
        "                     docs/events.md); saved in DIR/BENCH/events-auto.txt\n"
        "  --slots N          counter limit to plan for and emulate (default 2)\n"
        "  --benchmarks LIST  of cg-static, cg-dyn10, mg, knapsack (default: these\n"
        "                     four), knapsack-d (knapsack -d -n 42 -c 11)\n"
        "  --repeats R        repeats of each reference set (default 3, >= 2)\n"
        "  --threads N        OMP_NUM_THREADS (default: $OMP_NUM_THREADS when it is\n"
        "                     one number, else 2)\n"
        "  --quick            2 reference repeats (a faster, rougher campaign)\n"
        "  --jobs N           runs at a time (default 1)\n"
        "  --timeout S        kill a run after S seconds (default 600)\n"
        "  --exit-code L      with -- PROGRAM: its normal exit codes (default 0;\n"
        "                     e.g. 3, 0,3, 1-9 or any)\n"
        "  --summarize DIR    print the EPD table and verdicts of the campaign in DIR\n"
        "                     (from DIR/epd.tsv) and run nothing\n"
        "  -h, --help         this text\n"
        "\n"
        "With -- PROGRAM ARGS, that program is the only benchmark (OMP_SCHEDULE\n"
        "and the rest of the environment are passed through).\n"
        "\n"
        "DIR is locked while the campaign runs (DIR/.ompfuse-lock names its pid and\n"
        "host): a second campaign on DIR refuses to start.  Runs die with the\n"
        "campaign, even after SIGKILL.\n"
        "\n"
        "Exit: 0 everything succeeded; 1 it completed, but runs or steps failed or a\n"
        "benchmark produced nothing to evaluate (the counts are printed; no table or\n"
        "report is written when nothing was evaluated); 2 bad usage or input, DIR in\n"
        "use, or an I/O error (the message names the file and the reason).\n",
        default_events);
}


static int self_dir(char *buf, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *s = strrchr(self, '/');
    if (!s)
        return -1;
    *s = '\0';
    snprintf(buf, len, "%s", self);
    return 0;
}

static size_t split_list(char *s, char **items, size_t max)
{
    size_t n = 0;
    for (char *p = s; p && *p && n < max;) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        if (*p)
            items[n++] = p;
        p = c ? c + 1 : NULL;
    }
    return n;
}

int ompf_cmd_campaign(int argc, char **argv)
{
    static const struct option lo[] = {
        {"out", required_argument, 0, 'o'},
        {"events", required_argument, 0, 'e'},
        {"slots", required_argument, 0, 's'},
        {"benchmarks", required_argument, 0, 'b'},
        {"repeats", required_argument, 0, 'r'},
        {"threads", required_argument, 0, 't'},
        {"quick", no_argument, 0, 'Q'},
        {"jobs", required_argument, 0, 'j'},
        {"timeout", required_argument, 0, 'T'},
        {"exit-code", required_argument, 0, 'x'},
        {"summarize", required_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    settings_t s;
    memset(&s, 0, sizeof s);
    s.out = "ompfuse-campaign";
    s.slots = 2;
    s.repeats = 3;
    s.threads = 2;
    int threads_env = 0;
    {
        /* the user's OMP_NUM_THREADS, when it is one number (not a list
         * of nesting levels) */
        const char *e = getenv("OMP_NUM_THREADS");
        char *end = NULL;
        long t = e ? strtol(e, &end, 10) : 0;
        if (e && *e && end && !*end && t >= 1 && t <= 4096) {
            s.threads = (unsigned)t;
            threads_env = 1;
        }
    }
    s.jobs = 1;
    s.timeout = 600;
    const char *events = default_events, *benches = NULL;
    int quick = 0, repeats_given = 0;
    ompf_cli_opts_t po;
    ompf_cli_opts_start(&po, "campaign", argc, argv, "+hj:o:", lo);
    int ch;
    while ((ch = ompf_cli_opts_next(&po)) != -1) {
        char *end = NULL;
        long v = 0;
        if (ch == 's' || ch == 'r' || ch == 't' || ch == 'j') {
            v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1024 || (ch == 'r' && v < 2)) {
                fprintf(stderr, PROG ": --%s %s: give a whole number%s\n",
                        ch == 's' ? "slots" : ch == 'r' ? "repeats" : ch == 't' ? "threads" : "jobs",
                        optarg, ch == 'r' ? " >= 2" : " >= 1");
                return 2;
            }
        }
        switch (ch) {
        case 'o': s.out = optarg; break;
        case 'e': events = optarg; break;
        case 's': s.slots = (unsigned)v; break;
        case 'b': benches = optarg; break;
        case 'r': s.repeats = (unsigned)v; repeats_given = 1; break;
        case 't':
            s.threads = (unsigned)v;
            threads_env = 0;
            break;
        case 'j': s.jobs = (unsigned)v; break;
        case 'Q': quick = 1; break;
        case 'x':
            if (ompf_exit_set_parse(optarg, &s.exit_ok)) {
                fprintf(stderr, PROG ": --exit-code %s: give the program's normal exit "
                                "codes, 0 to 255 (3, 0,3, 1-9 or any)\n", optarg);
                return 2;
            }
            break;
        case 'T':
            s.timeout = strtod(optarg, &end);
            if (*end || !(s.timeout > 0)) {
                fprintf(stderr, PROG ": --timeout %s: give seconds > 0\n", optarg);
                return 2;
            }
            break;
        case 'S': return ompf_cmpc_summarize(optarg);
        case 'h': usage(stdout); return 0;
        default: /* bad option, reported */
            return 2;
        }
    }
    if (quick && !repeats_given)
        s.repeats = 2;
    char **custom = optind < argc ? argv + optind : NULL;
    if (custom && !strcmp(custom[0], "--"))
        custom++;
    if (custom && !custom[0])
        custom = NULL;
    if (custom) {
        /* Bad input leaves nothing behind: check before creating DIR. */
        char found[PATH_MAX];
        if (ompf_find_program(custom[0], found, sizeof found)) {
            fprintf(stderr, PROG ": program '%s' not found or not executable; "
                            "give its path after --\n", custom[0]);
            return 2;
        }
    }
    if (!ompf_exit_set_is_default(&s.exit_ok) && !custom) {
        fprintf(stderr, PROG ": --exit-code is for -- PROGRAM (the bundled "
                        "benchmarks exit 0)\n");
        return 2;
    }
    if (custom && benches) {
        fprintf(stderr, PROG ": give either --benchmarks or -- PROGRAM, not both\n");
        return 2;
    }

    int want = ompf_cli_auto_want(events);
    if (want < 0) {
        fprintf(stderr, PROG ": --events %s: give auto or auto:N with N from 2 to 16\n", events);
        return 2;
    }
    s.auto_want = (unsigned)want;
    s.choose_events = ompf_cli_auto_events;
    char *evcopy = strdup(want ? "auto,auto" : events); /* auto: per benchmark */
    char *evs[64];
    s.nevents = split_list(evcopy, evs, 64);
    s.events = evs;
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    if (s.nevents < 2) {
        fprintf(stderr, PROG ": give at least two events (EPD compares pairs)\n");
        free(evcopy);
        return 2;
    }
    if (!want && ompf_plan_check_names((const char *const *)evs, s.nevents, &err)) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        free(evcopy);
        return 2;
    }

    /* which benchmarks */
    const bench_t *sel[MAX_BENCH];
    size_t nsel = 0;
    char bindir[PATH_MAX];
    if (self_dir(bindir, sizeof bindir)) {
        fprintf(stderr, PROG ": cannot find the ompfuse binary's directory\n");
        free(evcopy);
        return 2;
    }
    if (!custom) {
        char *bcopy = strdup(benches ? benches : default_benches);
        char *items[MAX_BENCH];
        size_t nb = split_list(bcopy, items, MAX_BENCH);
        for (size_t i = 0; i < nb; i++) {
            size_t k;
            for (k = 0; k < N_BUILTIN; k++)
                if (!strcmp(items[i], builtin[k].name))
                    break;
            if (k == N_BUILTIN) {
                fprintf(stderr, PROG ": unknown benchmark '%s' (cg-static, cg-dyn10, mg, "
                                "knapsack, knapsack-d; or -- PROGRAM ARGS)\n", items[i]);
                free(bcopy);
                free(evcopy);
                return 2;
            }
            sel[nsel++] = &builtin[k];
        }
        free(bcopy);
        if (nsel == 0) {
            fprintf(stderr, PROG ": --benchmarks is empty\n");
            free(evcopy);
            return 2;
        }
    }
    if (mkdir(s.out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, PROG ": cannot create %s: %s\n", s.out, strerror(errno));
        free(evcopy);
        return 2;
    }
    /* one campaign per directory (each benchmark's run directory is locked
     * again by its runs, against `ompfuse run` there) */
    ompf_dirlock_t *lock;
    if (ompf_dirlock_acquire(s.out, stderr, &lock, &err)) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        free(evcopy);
        return 2;
    }
    /* a directory of another campaign: refused before anything is written
     * (the same settings resume it) */
    if (ompf_cmpc_check_settings(s.out, &s, events,
                                 benches ? benches : default_benches, custom,
                                 &err)) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        free(evcopy);
        ompf_dirlock_release(lock);
        return 2;
    }
    /* every run of every benchmark (pilots included) opens its uprobes as
     * tracepoints this process defines and holds (docs/events.md) */
    if (ompf_uphold_create(stderr, &s.hold)) {
        fprintf(stderr, PROG ": out of memory\n");
        free(evcopy);
        ompf_dirlock_release(lock);
        return 2;
    }
    ompf_cli_uphold = s.hold;
    if (want)
        fprintf(stderr, PROG ": events chosen per benchmark (--events %s), ", events);
    else
        fprintf(stderr, PROG ": %zu events, ", s.nevents);
    fprintf(stderr, "%u slots (OMPFUSE_PMU_SLOTS), %u reference repeats, "
                    "OMP_NUM_THREADS=%u%s, output in %s\n",
            s.slots, s.repeats, s.threads, threads_env ? " (from the environment)" : "",
            s.out);
    double t0 = ompf_cmpi_now();
    size_t nres = custom ? 1 : nsel;
    result_t *res = calloc(nres, sizeof *res);
    if (!res) {
        fprintf(stderr, PROG ": out of memory\n");
        free(evcopy);
        ompf_uphold_destroy(s.hold);
        ompf_dirlock_release(lock);
        return 2;
    }
    if (custom) {
        const char *b = strrchr(custom[0], '/');
        ompf_cmpc_do_bench(b ? b + 1 : custom[0], custom, NULL, &s, &res[0]);
    } else {
        for (size_t i = 0; i < nsel; i++) {
            char bin[PATH_MAX + 64];
            snprintf(bin, sizeof bin, "%s/%s", bindir, sel[i]->binary);
            char *bargv[8];
            size_t k = 0;
            bargv[k++] = bin;
            for (size_t a = 0; sel[i]->args[a]; a++)
                bargv[k++] = (char *)sel[i]->args[a];
            bargv[k] = NULL;
            if (access(bin, X_OK) != 0) {
                snprintf(res[i].name, sizeof res[i].name, "%s", sel[i]->name);
                for (int t = 0; t < N_T; t++)
                    res[i].epd[t] = NAN;
                snprintf(res[i].note, sizeof res[i].note,
                         "benchmark binary %.300s is not built (cmake --build ... --target %s)",
                         bin, sel[i]->binary);
                fprintf(stderr, "%s: %s\n", PROG, res[i].note);
                res[i].error = 1;
                continue;
            }
            ompf_cmpc_do_bench(sel[i]->name, bargv, sel[i]->schedule, &s, &res[i]);
            if (res[i].interrupted) {
                nres = i + 1;
                break;
            }
        }
    }

    if (nres && res[nres - 1].interrupted) {
        fprintf(stderr, PROG ": interrupted; running the same command again resumes\n");
        for (size_t i = 0; i < nres; i++)
            for (size_t r = 0; r < res[i].nrefs; r++)
                free(res[i].refs[r]);
        free(res);
        free(evcopy);
        ompf_uphold_destroy(s.hold);
        ompf_dirlock_release(lock);
        return 1;
    }
    /* the table and the report, when there is anything to show */
    char html[PATH_MAX + 32], tsv[PATH_MAX + 32], log[PATH_MAX + 32];
    snprintf(html, sizeof html, "%s/report.html", s.out);
    snprintf(tsv, sizeof tsv, "%s/epd.tsv", s.out);
    snprintf(log, sizeof log, "%s/report.log", s.out);
    size_t empty = 0, failed_runs = 0, planned_runs = 0, steps = 0, errors = 0;
    int io = 0, wrote_tsv = 0, wrote_html = 0, report_failed = 0;
    for (size_t i = 0; i < nres; i++) {
        int any = 0;
        for (int t = 0; t < N_T; t++)
            any |= !isnan(res[i].epd[t]);
        empty += !any;
        failed_runs += res[i].runs_failed;
        planned_runs += res[i].runs_ok + res[i].runs_failed;
        steps += res[i].step_failed;
        errors += res[i].error;
        io |= res[i].io_error;
    }
    if (empty == nres) {
        fprintf(stderr, "\n" PROG ": no benchmark produced anything to evaluate; %s and %s "
                        "are not written\n", tsv, html);
    } else {
        if (ompf_cmpc_write_tsv(tsv, res, nres, &err) == 0)
            wrote_tsv = 1;
        else {
            fprintf(stderr, PROG ": %s\n", err.msg);
            io = 1;
        }
        ompf_cmpc_write_analyses(res, nres, &io);
        ompf_cmpc_write_report(res, nres, html, log, &wrote_html, &io, &report_failed);
    }
    ompf_cmpc_print_table(stdout, res, nres);
    if (wrote_html || wrote_tsv)
        printf("\n%s%s%s%s   total time %.0f s\n", wrote_html ? "report: " : "",
               wrote_html ? html : "", wrote_tsv ? "   table: " : "", wrote_tsv ? tsv : "",
               ompf_cmpi_now() - t0);
    else
        printf("\nno report written   total time %.0f s\n", ompf_cmpi_now() - t0);
    for (size_t i = 0; i < nres; i++)
        if (res[i].analysis[0])
            printf("analysis: %s/%s   (%s, fused-%s.ompf)\n", s.out, res[i].analysis,
                   res[i].name, tname[res[i].analysis_of]);
    for (size_t i = 0; i < nres; i++)
        for (size_t r = 0; r < res[i].nrefs; r++)
            free(res[i].refs[r]);
    free(res);
    free(evcopy);
    ompf_uphold_destroy(s.hold);
    ompf_cli_uphold = NULL;
    ompf_dirlock_release(lock);
    /* 2: an error (I/O, a benchmark that could not run); 1: completed,
     * but not everything planned succeeded */
    int rc = io || errors ? 2 : failed_runs || empty || steps || report_failed ? 1 : 0;
    fflush(stdout);
    if (rc) {
        fprintf(stderr, PROG ": ");
        const char *sep = "";
        if (io) {
            fprintf(stderr, "I/O errors (see above)");
            sep = "; ";
        }
        if (errors) {
            fprintf(stderr, "%s%zu of %zu benchmarks stopped on an error (see above)", sep, errors, nres);
            sep = "; ";
        }
        if (failed_runs) {
            fprintf(stderr, "%s%zu of %zu planned runs failed", sep, failed_runs, planned_runs);
            sep = "; ";
        }
        if (empty) {
            fprintf(stderr, "%s%zu of %zu benchmarks produced nothing to evaluate", sep, empty,
                    nres);
            sep = "; ";
        }
        if (steps) {
            fprintf(stderr, "%s%zu benchmark%s had a failed step", sep, steps,
                    steps == 1 ? "" : "s");
            sep = "; ";
        }
        if (report_failed)
            fprintf(stderr, "%sthe report step failed", sep);
        fprintf(stderr, " (exit %d)\n", rc);
    }
    return rc;
}

