/* ompfuse campaign: plan -> run -> combine (every strategy) -> clean HEM ->
 * evaluate -> report, for the bundled benchmarks or one program.  Each step
 * after the runs is this same binary's subcommand, run as a child process:
 * a step that fails is reported and the campaign goes on with what it has. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "commands.h"
#include "ompfuse/campaign.h"
#include "ompfuse/file.h"
#include "ompfuse/plan.h"

#define PROG "ompfuse campaign"
#define MAX_BENCH 16
#define MAX_ARGS 64

typedef struct bench {
    const char *name;
    const char *binary; /* in the directory of the ompfuse binary */
    const char *args[4];
    const char *schedule; /* OMP_SCHEDULE, NULL: not set */
} bench_t;

/* Small sizes: the whole campaign must fit in minutes on 2 cores.  The
 * static-schedule runs have few, short XUs, so they use class W (a run
 * still takes well under a second) to keep machine noise from dominating
 * the counts; cg with dynamic,10 has 5x more XUs at W and stays at S. */
static const bench_t builtin[] = {
    {"cg-static", "cg", {"W", NULL}, "static"},
    {"cg-dyn10", "cg", {"S", NULL}, "dynamic,10"},
    {"mg", "mg", {"W", NULL}, "static"},
    {"knapsack", "knapsack", {NULL}, NULL},
};
#define N_BUILTIN (sizeof builtin / sizeof builtin[0])

static const char *const default_events =
    "perf::TASK-CLOCK,perf::CPU-CLOCK,perf::PAGE-FAULTS,perf::MINOR-FAULTS";

/* Targets of the evaluation, in table order. */
enum { T_CTC, T_LGL, T_BC, T_BCU, T_RANDOM, T_HEM, T_HEMD, T_HEMC, T_HEMDC, N_T };
static const char *const tname[N_T] = {"ctc", "lgl", "bc", "bc-unlabeled", "random",
                                       "hem", "hem-delta", "hem-cleaned",
                                       "hem-delta-cleaned"};

typedef struct result {
    char name[64];
    double epd[N_T];     /* NaN: not available */
    char problem[N_T][160];
    size_t runs_ok, runs_failed;
    double seconds;
    char dir[PATH_MAX];
    char refs_glob[PATH_MAX];
    char *refs[256];
    size_t nrefs;
    char target_path[N_T][PATH_MAX];
    int target_ok[N_T];
    char note[512];
    int interrupted; /* Ctrl-C: stop the whole campaign */
} result_t;

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
        "  --slots N          counter limit to plan for and emulate (default 2)\n"
        "  --benchmarks LIST  of cg-static, cg-dyn10, mg, knapsack (default all)\n"
        "  --repeats R        repeats of each reference set (default 3, >= 2)\n"
        "  --threads N        OMP_NUM_THREADS (default 2)\n"
        "  --quick            2 reference repeats (a faster, rougher campaign)\n"
        "  --jobs N           runs at a time (default 1)\n"
        "  --timeout S        kill a run after S seconds (default 600)\n"
        "  -h, --help         this text\n"
        "\n"
        "With -- PROGRAM ARGS, that program is the only benchmark (OMP_SCHEDULE\n"
        "and the rest of the environment are passed through).\n",
        default_events);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
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

/* Runs this binary with argv (argv[0] = subcommand); stdout to out_path,
 * stderr to err_path (NULL: the same file).  Returns the exit code, or -1
 * when it could not run or died of a signal. */
static int run_self(char *const *args, const char *out_path, const char *err_path)
{
    char *argv[MAX_ARGS + 600];
    size_t n = 0;
    argv[n++] = "ompfuse";
    for (size_t i = 0; args[i] && n < sizeof argv / sizeof *argv - 1; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        int e = err_path ? open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0666) : o;
        if (o < 0 || e < 0)
            _exit(125);
        dup2(o, 1);
        dup2(e, 2);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Last non-empty line of a file (why a step failed). */
static void last_line(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        size_t l = strlen(line);
        while (l && (line[l - 1] == '\n' || line[l - 1] == '\r'))
            line[--l] = '\0';
        if (l)
            snprintf(buf, len, "%s", line);
    }
    fclose(f);
}

static int file_exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
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

typedef struct settings {
    const char *out;
    char **events;
    size_t nevents;
    unsigned slots, repeats, threads, jobs;
    double timeout;
} settings_t;

/* Profiles of the ok runs of one role. */
static size_t runs_of(const ompf_campaign_t *c, int role, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < ompf_campaign_run_count(c) && n < max; i++) {
        const ompf_campaign_run_t *r = ompf_campaign_run_get(c, i);
        if (r->role == role && r->status == OMPF_RUN_OK)
            out[n++] = r->profile;
    }
    return n;
}

static int execute(const ompf_plan_t *plan, char *const *argv, const settings_t *s,
                   const char *dir, const char *const *env, size_t nenv, int check,
                   ompf_campaign_t **out, ompf_error_t *err)
{
    ompf_campaign_opts_t o;
    ompf_campaign_opts_init(&o);
    o.out_dir = dir;
    o.jobs = s->jobs;
    o.timeout_s = s->timeout;
    o.env = env;
    o.n_env = nenv;
    o.check_plain = check;
    ompf_campaign_t *c;
    int rc = ompf_campaign_create(plan, argv, &o, &c, err);
    if (rc)
        return rc;
    rc = ompf_campaign_execute(c, err);
    *out = c;
    return rc;
}

/* One benchmark: plan, run, combine, clean, evaluate. */
static void do_bench(const char *name, char *const *argv, const char *schedule,
                     const settings_t *s, result_t *res)
{
    double t0 = now_s();
    snprintf(res->name, sizeof res->name, "%s", name);
    for (int t = 0; t < N_T; t++) {
        res->epd[t] = NAN;
        snprintf(res->problem[t], sizeof res->problem[t], "not produced");
    }
    snprintf(res->dir, sizeof res->dir, "%s/%s", s->out, name);
    fprintf(stderr, "\n== %s: %s", name, argv[0]);
    for (size_t i = 1; argv[i]; i++)
        fprintf(stderr, " %s", argv[i]);
    if (schedule)
        fprintf(stderr, "   (OMP_SCHEDULE=%s)", schedule);
    fprintf(stderr, "\n");

    char env_threads[64], env_sched[128], env_slots[64];
    const char *env[3];
    size_t nenv = 0;
    snprintf(env_threads, sizeof env_threads, "OMP_NUM_THREADS=%u", s->threads);
    env[nenv++] = env_threads;
    snprintf(env_slots, sizeof env_slots, "OMPFUSE_PMU_SLOTS=%u", s->slots);
    env[nenv++] = env_slots;
    if (schedule) {
        snprintf(env_sched, sizeof env_sched, "OMP_SCHEDULE=%s", schedule);
        env[nenv++] = env_sched;
    }

    /* phase 1: fusion runs for LGL/CTC, references, HEM */
    ompf_plan_opts_t po;
    ompf_plan_opts_init(&po);
    po.slots = s->slots;
    po.for_lgl = 1;
    po.for_bc = 0;
    po.references = s->repeats;
    po.hem = 1;
    ompf_plan_t *plan = NULL;
    ompf_plan_stats_t st;
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    if (ompf_plan_build((const char *const *)s->events, s->nevents, &po, &plan, &st, &err)) {
        snprintf(res->note, sizeof res->note, "planning failed: %.480s", err.msg);
        fprintf(stderr, "%s: %s\n", PROG, res->note);
        return;
    }
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/plan.txt", res->dir);
    mkdir(res->dir, 0777);
    ompf_plan_save(plan, path, NULL);
    ompf_campaign_t *c = NULL;
    int rc = execute(plan, argv, s, res->dir, env, nenv, 1, &c, &err);
    if (rc == OMPF_EINVAL || rc == OMPF_ENOTFOUND || rc == OMPF_EUNSUPP || rc == OMPF_EPERM) {
        snprintf(res->note, sizeof res->note, "%.500s", err.msg);
        fprintf(stderr, "%s: %s: %s\n", PROG, name, err.msg);
        res->interrupted = rc == OMPF_EPERM;
        ompf_campaign_destroy(c);
        ompf_plan_destroy(plan);
        return;
    }

    /* phase 2: the BC chain, overlap chosen from the reference runs */
    const char *refs[256];
    size_t nref = runs_of(c, OMPF_ROLE_REFERENCE, refs, 256);
    ompf_profile_t *pilot[256];
    size_t npilot = 0;
    for (size_t i = 0; i < nref; i++) {
        ompf_read_info_t info;
        if (ompf_profile_read(refs[i], &pilot[npilot], &info, NULL) == 0)
            npilot++;
    }
    double *corr = malloc(s->nevents * s->nevents * sizeof *corr);
    if (corr && npilot &&
        ompf_plan_correlation((const ompf_profile_t *const *)pilot, npilot,
                              (const char *const *)s->events, s->nevents, corr) == 0)
        po.corr = corr;
    for (size_t i = 0; i < npilot; i++)
        ompf_profile_destroy(pilot[i]);
    ompf_plan_t *full = NULL;
    ompf_plan_create(&full);
    ompf_plan_append(full, plan);
    ompf_plan_comment(full, "group: bc");
    ompf_plan_comment(full, "a chain: each set shares one event with its predecessors, %s",
                      po.corr ? "the one most correlated (|Spearman| over the reference "
                                "runs) with the new events"
                              : "default anchor perf::TASK-CLOCK (no reference runs)");
    rc = ompf_plan_chain(full, (const char *const *)s->events, s->nevents, &po, NULL, &err);
    free(corr);
    if (rc) {
        fprintf(stderr, "%s: %s: BC planning failed: %s\n", PROG, name, err.msg);
    } else {
        ompf_plan_save(full, path, NULL);
        ompf_campaign_destroy(c);
        c = NULL;
        rc = execute(full, argv, s, res->dir, env, nenv, 0, &c, &err);
        if (rc == OMPF_EPERM) {
            snprintf(res->note, sizeof res->note, "%.500s", err.msg);
            res->interrupted = 1;
            ompf_campaign_destroy(c);
            ompf_plan_destroy(plan);
            ompf_plan_destroy(full);
            return;
        }
    }
    if (!c) {
        snprintf(res->note, sizeof res->note, "%.500s", err.msg);
        ompf_plan_destroy(plan);
        ompf_plan_destroy(full);
        return;
    }
    res->runs_ok = ompf_campaign_count_status(c, OMPF_RUN_OK);
    res->runs_failed = ompf_campaign_count_status(c, OMPF_RUN_FAILED) +
                       ompf_campaign_count_status(c, OMPF_RUN_TIMEOUT);

    /* combine */
    const char *lgl[64], *bc[64], *hem[2] = {NULL, NULL};
    size_t nl = runs_of(c, OMPF_ROLE_LGL, lgl, 64);
    size_t nb = runs_of(c, OMPF_ROLE_BC, bc, 64);
    runs_of(c, OMPF_ROLE_HEM, &hem[0], 1);
    runs_of(c, OMPF_ROLE_HEM_DELTA, &hem[1], 1);
    nref = runs_of(c, OMPF_ROLE_REFERENCE, refs, 256);
    size_t want_l = ompf_plan_total_runs(full, OMPF_ROLE_LGL);
    size_t want_b = ompf_plan_total_runs(full, OMPF_ROLE_BC);
    char logdir[PATH_MAX + 16];
    snprintf(logdir, sizeof logdir, "%s/logs", res->dir);
    mkdir(logdir, 0777);
    for (int t = T_CTC; t <= T_RANDOM; t++) {
        int is_bc = t == T_BC || t == T_BCU;
        size_t n = is_bc ? nb : nl;
        size_t want = is_bc ? want_b : want_l;
        if (n < want || n < 2) {
            snprintf(res->problem[t], sizeof res->problem[t],
                     "%zu of %zu %s runs succeeded: not combined", n, want,
                     is_bc ? "bc" : "lgl");
            continue;
        }
        snprintf(res->target_path[t], sizeof res->target_path[t], "%.3900s/fused-%s.ompf",
                 res->dir, tname[t]);
        char *args[MAX_ARGS + 8];
        size_t k = 0;
        args[k++] = "combine";
        args[k++] = "--strategy";
        args[k++] = (char *)tname[t];
        args[k++] = "-q";
        args[k++] = "-o";
        args[k++] = res->target_path[t];
        for (size_t i = 0; i < n && k < MAX_ARGS; i++)
            args[k++] = (char *)(is_bc ? bc[i] : lgl[i]);
        args[k] = NULL;
        char log[PATH_MAX + 64];
        snprintf(log, sizeof log, "%s/combine-%s.log", logdir, tname[t]);
        double ts = now_s();
        int x = run_self(args, log, NULL);
        if (x == 0 && file_exists(res->target_path[t])) {
            res->target_ok[t] = 1;
            fprintf(stderr, "  combine %-13s ok (%.1f s)\n", tname[t], now_s() - ts);
        } else {
            char why[400];
            last_line(log, why, sizeof why);
            snprintf(res->problem[t], sizeof res->problem[t], "combine failed: %.120s", why);
            fprintf(stderr, "  combine %-13s FAILED: %s (log %s)\n", tname[t], why, log);
        }
    }
    /* HEM profiles as recorded, and cleaned */
    for (int h = 0; h < 2; h++) {
        int t = h ? T_HEMD : T_HEM, tc = h ? T_HEMDC : T_HEMC;
        if (!hem[h]) {
            snprintf(res->problem[t], sizeof res->problem[t], "the %s run failed",
                     tname[t]);
            snprintf(res->problem[tc], sizeof res->problem[tc], "the %s run failed",
                     tname[t]);
            continue;
        }
        snprintf(res->target_path[t], sizeof res->target_path[t], "%s", hem[h]);
        res->target_ok[t] = 1;
        snprintf(res->target_path[tc], sizeof res->target_path[tc], "%.3900s/%s.ompf",
                 res->dir, tname[tc]);
        char *args[] = {"clean", "-q", "-o", res->target_path[tc], (char *)hem[h], NULL};
        char log[PATH_MAX + 64];
        snprintf(log, sizeof log, "%s/clean-%s.log", logdir, tname[t]);
        int x = run_self(args, log, NULL);
        if (x == 0 && file_exists(res->target_path[tc])) {
            res->target_ok[tc] = 1;
            fprintf(stderr, "  clean   %-13s ok\n", tname[t]);
        } else {
            char why[400];
            last_line(log, why, sizeof why);
            snprintf(res->problem[tc], sizeof res->problem[tc], "clean failed: %.120s", why);
            fprintf(stderr, "  clean   %-13s FAILED: %s (log %s)\n", tname[t], why, log);
        }
    }
    /* evaluate every target against the references */
    for (size_t i = 0; i < nref && i < 256; i++)
        res->refs[res->nrefs++] = strdup(refs[i]);
    if (nref < 2) {
        for (int t = 0; t < N_T; t++)
            if (res->target_ok[t])
                snprintf(res->problem[t], sizeof res->problem[t],
                         "not evaluated: %zu reference runs succeeded", nref);
    } else {
        char *args[MAX_ARGS + 300];
        char named[N_T][PATH_MAX + 32];
        size_t k = 0;
        args[k++] = "evaluate";
        args[k++] = "-q";
        args[k++] = "--allow-partial";
        args[k++] = "-r";
        for (size_t i = 0; i < nref; i++)
            args[k++] = (char *)refs[i];
        args[k++] = "--";
        size_t ntargets = 0;
        for (int t = 0; t < N_T; t++)
            if (res->target_ok[t]) {
                snprintf(named[t], sizeof named[t], "%s=%s", tname[t], res->target_path[t]);
                args[k++] = named[t];
                ntargets++;
            }
        args[k] = NULL;
        char outp[PATH_MAX + 64], errp[PATH_MAX + 64];
        snprintf(outp, sizeof outp, "%s/evaluate.txt", res->dir);
        snprintf(errp, sizeof errp, "%s/evaluate.log", logdir);
        if (ntargets) {
            double ts = now_s();
            int x = run_self(args, outp, errp);
            /* rows: "<target> <EPD> ..." after the header */
            FILE *f = fopen(outp, "r");
            char line[2048];
            while (f && fgets(line, sizeof line, f)) {
                char nm[128], val[64];
                if (sscanf(line, "%127s %63s", nm, val) != 2)
                    continue;
                for (int t = 0; t < N_T; t++)
                    if (res->target_ok[t] && !strcmp(nm, tname[t])) {
                        char *end;
                        double v = strtod(val, &end);
                        if (end != val && !*end) {
                            res->epd[t] = v;
                            res->problem[t][0] = '\0';
                        }
                    }
            }
            if (f)
                fclose(f);
            char why[400];
            last_line(errp, why, sizeof why);
            for (int t = 0; t < N_T; t++)
                if (res->target_ok[t] && isnan(res->epd[t]))
                    snprintf(res->problem[t], sizeof res->problem[t],
                             "evaluation failed: %.120s", why[0] ? why : "no EPD");
            fprintf(stderr, "  evaluate %zu targets: %s (%.1f s, %s)\n", ntargets,
                    x == 0 ? "ok" : "FAILED", now_s() - ts, outp);
        }
    }
    ompf_campaign_destroy(c);
    ompf_plan_destroy(plan);
    ompf_plan_destroy(full);
    res->seconds = now_s() - t0;
}

static void print_table(FILE *f, const result_t *res, size_t n)
{
    fprintf(f, "\nEPD (1.0 = as close as two reference runs; lower is better)\n");
    int nw = 12; /* name column: the longest benchmark name */
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(res[i].name) > nw)
            nw = (int)strlen(res[i].name);
    fprintf(f, "%-*s", nw, "benchmark");
    for (int t = 0; t < N_T; t++)
        fprintf(f, " %*s", t == T_HEMDC ? 17 : t == T_BCU ? 12 : 11, tname[t]);
    fprintf(f, "\n");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%-*s", nw, res[i].name);
        for (int t = 0; t < N_T; t++) {
            int w = t == T_HEMDC ? 17 : t == T_BCU ? 12 : 11;
            if (isnan(res[i].epd[t]))
                fprintf(f, " %*s", w, "-");
            else
                fprintf(f, " %*.3f", w, res[i].epd[t]);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < n; i++) {
        double hem_best = INFINITY;
        int have_hem = 0;
        for (int t = T_HEM; t <= T_HEMDC; t++)
            if (!isnan(res[i].epd[t])) {
                have_hem = 1;
                if (res[i].epd[t] < hem_best)
                    hem_best = res[i].epd[t];
            }
        fprintf(f, "%-*s", nw, res[i].name);
        if (res[i].note[0]) {
            fprintf(f, " not completed: %s\n", res[i].note);
            continue;
        }
        fprintf(f, " runs ok %zu, failed %zu, %.0f s.", res[i].runs_ok, res[i].runs_failed,
                res[i].seconds);
        for (int t = T_LGL; t <= T_BC; t++) {
            if (isnan(res[i].epd[t]))
                fprintf(f, " %s: no EPD (%s).", tname[t], res[i].problem[t]);
            else if (!have_hem)
                fprintf(f, " %s %.3f: no HEM EPD to compare with.", tname[t], res[i].epd[t]);
            else
                fprintf(f, " %s %.3f %s the best HEM variant (%.3f).", tname[t],
                        res[i].epd[t], res[i].epd[t] < hem_best ? "beats" : "does NOT beat",
                        hem_best);
        }
        fprintf(f, "\n");
        for (int t = 0; t < N_T; t++)
            if (isnan(res[i].epd[t]) && res[i].problem[t][0])
                fprintf(f, "    %s: %s\n", tname[t], res[i].problem[t]);
    }
}

static int write_tsv(const char *path, const result_t *res, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "benchmark");
    for (int t = 0; t < N_T; t++)
        fprintf(f, "\t%s", tname[t]);
    fprintf(f, "\n");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s", res[i].name);
        for (int t = 0; t < N_T; t++)
            if (isnan(res[i].epd[t]))
                fprintf(f, "\t-");
            else
                fprintf(f, "\t%.6g", res[i].epd[t]);
        fprintf(f, "\n");
    }
    return fclose(f);
}

static void html_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
    }
}

/* When `ompfuse report` cannot write the report: the numbers, honestly. */
static int write_fallback_html(const char *path, const result_t *res, size_t n,
                               const char *why)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ompfuse campaign"
               "</title><style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px;"
               "text-align:right}td:first-child{text-align:left}.bad{color:#a00}</style>"
               "</head><body><h1>ompfuse campaign</h1>\n<p class=\"bad\">The detailed report "
               "(<code>ompfuse report</code>) could not be written: ");
    html_escape(f, why);
    fprintf(f, ". This page has the EPD table only (1.0 = as close as two reference runs; "
               "lower is better).</p>\n<table><tr><th>benchmark</th>");
    for (int t = 0; t < N_T; t++)
        fprintf(f, "<th>%s</th>", tname[t]);
    fprintf(f, "</tr>\n");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<tr><td>");
        html_escape(f, res[i].name);
        fprintf(f, "</td>");
        for (int t = 0; t < N_T; t++) {
            if (isnan(res[i].epd[t])) {
                fprintf(f, "<td title=\"");
                html_escape(f, res[i].problem[t]);
                fprintf(f, "\">-</td>");
            } else {
                fprintf(f, "<td>%.3f</td>", res[i].epd[t]);
            }
        }
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table></body></html>\n");
    return fclose(f);
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
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    settings_t s;
    memset(&s, 0, sizeof s);
    s.out = "ompfuse-campaign";
    s.slots = 2;
    s.repeats = 3;
    s.threads = 2;
    s.jobs = 1;
    s.timeout = 600;
    const char *events = default_events, *benches = NULL;
    int quick = 0, repeats_given = 0;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
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
        case 't': s.threads = (unsigned)v; break;
        case 'j': s.jobs = (unsigned)v; break;
        case 'Q': quick = 1; break;
        case 'T':
            s.timeout = strtod(optarg, &end);
            if (*end || !(s.timeout > 0)) {
                fprintf(stderr, PROG ": --timeout %s: give seconds > 0\n", optarg);
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, PROG ": unknown or incomplete option '%s'; see 'ompfuse campaign --help'\n",
                    argv[optind - 1]);
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
    if (custom && benches) {
        fprintf(stderr, PROG ": give either --benchmarks or -- PROGRAM, not both\n");
        return 2;
    }

    char *evcopy = strdup(events);
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
    if (ompf_plan_check_names((const char *const *)evs, s.nevents, &err)) {
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
        return 1;
    }
    if (!custom) {
        char *bcopy = strdup(benches ? benches : "cg-static,cg-dyn10,mg,knapsack");
        char *items[MAX_BENCH];
        size_t nb = split_list(bcopy, items, MAX_BENCH);
        for (size_t i = 0; i < nb; i++) {
            size_t k;
            for (k = 0; k < N_BUILTIN; k++)
                if (!strcmp(items[i], builtin[k].name))
                    break;
            if (k == N_BUILTIN) {
                fprintf(stderr, PROG ": unknown benchmark '%s' (cg-static, cg-dyn10, mg, "
                                "knapsack; or -- PROGRAM ARGS)\n", items[i]);
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
        return 1;
    }
    fprintf(stderr, PROG ": %zu events, %u slots (OMPFUSE_PMU_SLOTS), %u reference repeats, "
                    "OMP_NUM_THREADS=%u, output in %s\n",
            s.nevents, s.slots, s.repeats, s.threads, s.out);
    double t0 = now_s();
    size_t nres = custom ? 1 : nsel;
    result_t *res = calloc(nres, sizeof *res);
    if (!res) {
        free(evcopy);
        return 1;
    }
    if (custom) {
        const char *b = strrchr(custom[0], '/');
        do_bench(b ? b + 1 : custom[0], custom, NULL, &s, &res[0]);
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
                continue;
            }
            do_bench(sel[i]->name, bargv, sel[i]->schedule, &s, &res[i]);
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
        return 1;
    }
    /* the report: all benchmarks as groups of one `ompfuse report` */
    char html[PATH_MAX + 32], tsv[PATH_MAX + 32], log[PATH_MAX + 32];
    snprintf(html, sizeof html, "%s/report.html", s.out);
    snprintf(tsv, sizeof tsv, "%s/epd.tsv", s.out);
    snprintf(log, sizeof log, "%s/report.log", s.out);
    write_tsv(tsv, res, nres);
    {
        size_t cap = 16;
        for (size_t i = 0; i < nres; i++)
            cap += res[i].nrefs + N_T + 6;
        char **args = calloc(cap, sizeof *args);
        char (*named)[PATH_MAX + 32] = calloc(nres * N_T, sizeof *named);
        size_t k = 0, groups = 0;
        if (args && named) {
            args[k++] = "report";
            args[k++] = "-q";
            args[k++] = "--allow-partial";
            args[k++] = "--title";
            args[k++] = "ompfuse campaign";
            args[k++] = "-o";
            args[k++] = html;
            for (size_t i = 0; i < nres; i++) {
                if (res[i].nrefs < 2)
                    continue;
                args[k++] = "--group";
                args[k++] = res[i].name;
                args[k++] = "-r";
                for (size_t r = 0; r < res[i].nrefs; r++)
                    args[k++] = res[i].refs[r];
                args[k++] = "--";
                for (int t = 0; t < N_T; t++)
                    if (res[i].target_ok[t]) {
                        snprintf(named[i * N_T + t], sizeof named[0], "%s=%s", tname[t],
                                 res[i].target_path[t]);
                        args[k++] = named[i * N_T + t];
                    }
                groups++;
            }
            args[k] = NULL;
        }
        int x = -1;
        if (groups) {
            fprintf(stderr, "\n" PROG ": writing the report...\n");
            x = run_self(args, log, NULL);
        }
        if (x != 0 || !file_exists(html)) {
            char why[400];
            if (groups)
                last_line(log, why, sizeof why);
            else
                snprintf(why, sizeof why, "no benchmark has usable reference runs");
            write_fallback_html(html, res, nres, why[0] ? why : "ompfuse report failed");
            fprintf(stderr, PROG ": ompfuse report failed (%s); wrote the EPD table to %s\n",
                    why, html);
        }
        free(args);
        free(named);
    }
    print_table(stdout, res, nres);
    printf("\nreport: %s   table: %s   total time %.0f s\n", html, tsv, now_s() - t0);
    int bad = 0;
    for (size_t i = 0; i < nres; i++) {
        bad |= res[i].note[0] != 0;
        for (size_t r = 0; r < res[i].nrefs; r++)
            free(res[i].refs[r]);
    }
    free(res);
    free(evcopy);
    return bad ? 1 : 0;
}
