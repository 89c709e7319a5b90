/* ompfuse campaign: plan -> run -> combine (every strategy) -> clean HEM ->
 * evaluate -> report, for the bundled benchmarks or one program.  Each step
 * after the runs is this same binary's subcommand, run as a child process
 * (cmd_campaign_steps.c): a step that fails is reported and the campaign
 * goes on with what it has.  This file: options, planning and running each
 * benchmark, the exit status; cmd_campaign_results.c: what is shown and
 * written at the end. */
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

#include "cmd_campaign.h"
#include "commands.h"
#include "opts.h"
#include "ompfuse/campaign.h"
#include "ompfuse/file.h"
#include "ompfuse/plan.h"

#define MAX_BENCH 16

typedef struct bench {
    const char *name;
    const char *binary; /* in the directory of the ompfuse binary */
    const char *args[4];
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
        "  --benchmarks LIST  of cg-static, cg-dyn10, mg, knapsack (default all)\n"
        "  --repeats R        repeats of each reference set (default 3, >= 2)\n"
        "  --threads N        OMP_NUM_THREADS (default 2)\n"
        "  --quick            2 reference repeats (a faster, rougher campaign)\n"
        "  --jobs N           runs at a time (default 1)\n"
        "  --timeout S        kill a run after S seconds (default 600)\n"
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

double ompf_cmpc_now(void)
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
    unsigned auto_want; /* --events auto[:N]: chosen per benchmark */
    double timeout;
} settings_t;

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

/* Run order.  `ompf_plan_build` writes each reference set with its R
 * repeats on one line, so the repeats of a set run back to back, and the
 * fusion and HEM runs before or after all of them.  On a shared machine the
 * load drifts over minutes, and consecutive runs resemble each other more
 * than runs made at another time: the calibration (median distance between
 * repeats) then understates the run-to-run variability that every target
 * run is exposed to, and whichever strategy's runs happened to fall in a
 * calmer or busier moment wins or loses by that alone.  So the campaign
 * makes R rounds of the reference sets (one repeat of each set per round)
 * and puts the fusion and HEM runs between the rounds:
 *   phase 1: round 1, lgl sets, hem           (round 1 is the BC pilot)
 *   phase 2: round 2, bc chain, hem-delta, rounds 3..R
 * Each set is still repeated R times (docs/semantics.md, Planning); only
 * the order changes. */
static int copy_runs(ompf_plan_t *dst, const ompf_plan_t *src, int role, uint32_t repeat)
{
    for (size_t i = 0; i < ompf_plan_count(src); i++) {
        const ompf_plan_run_t *r = ompf_plan_get(src, i);
        if (role >= 0 && r->role != role)
            continue;
        int rc = ompf_plan_add(dst, r->role, repeat ? repeat : r->repeat,
                               (const char *const *)r->events, r->n_events,
                               (const char *const *)r->opts, r->n_opts);
        if (rc)
            return rc;
    }
    return 0;
}

static int reference_round(ompf_plan_t *dst, const ompf_plan_t *built, unsigned round,
                           unsigned repeats)
{
    ompf_plan_comment(dst, "group: ref");
    ompf_plan_comment(dst, "reference round %u of %u: one repeat of every set", round, repeats);
    return copy_runs(dst, built, OMPF_ROLE_REFERENCE, 1);
}

static int interleave_phase1(const ompf_plan_t *built, const settings_t *s, ompf_plan_t **out)
{
    ompf_plan_t *p;
    if (ompf_plan_create(&p))
        return OMPF_ENOMEM;
    ompf_plan_set_slots(p, s->slots);
    ompf_plan_comment(p, "ompfuse campaign: %zu events, %u counter slots", s->nevents, s->slots);
    ompf_plan_comment(p, "line format: <role> <repeat> <events> [key=value ...]");
    ompf_plan_comment(p, "slots: %u", s->slots);
    ompf_plan_comment(p, "reference sets run in %u rounds with the fusion and HEM runs between "
                         "them (see cli/cmd_campaign.c: run order)", s->repeats);
    int rc = reference_round(p, built, 1, s->repeats);
    if (rc == 0) {
        ompf_plan_comment(p, "group: lgl");
        ompf_plan_comment(p, "disjoint sets (first-fit) for LGL, CTC and random");
        rc = copy_runs(p, built, OMPF_ROLE_LGL, 0);
    }
    if (rc == 0) {
        ompf_plan_comment(p, "group: hem");
        rc = copy_runs(p, built, OMPF_ROLE_HEM, 0);
    }
    if (rc) {
        ompf_plan_destroy(p);
        return rc;
    }
    *out = p;
    return 0;
}

static int interleave_phase2(ompf_plan_t *full, const ompf_plan_t *phase1,
                             const ompf_plan_t *built, const ompf_plan_t *chain,
                             const settings_t *s, int by_correlation)
{
    int rc = ompf_plan_append(full, phase1);
    if (rc == 0 && s->repeats >= 2)
        rc = reference_round(full, built, 2, s->repeats);
    if (rc == 0) {
        ompf_plan_comment(full, "group: bc");
        ompf_plan_comment(full, "a chain: each set shares one event with its predecessors, %s",
                          by_correlation ? "the one most correlated (|Spearman| over the "
                                           "reference runs of round 1) with the new events"
                                         : "default anchor perf::TASK-CLOCK (no reference runs)");
        rc = copy_runs(full, chain, -1, 0);
    }
    if (rc == 0) {
        ompf_plan_comment(full, "group: hem");
        rc = copy_runs(full, built, OMPF_ROLE_HEM_DELTA, 0);
    }
    for (unsigned r = 3; rc == 0 && r <= s->repeats; r++)
        rc = reference_round(full, built, r, s->repeats);
    return rc;
}

/* One benchmark: plan, run, combine, clean, evaluate. */
static void do_bench_events(const char *name, char *const *argv, const char *schedule,
                     const settings_t *given, result_t *res, char ***chosen_out,
                     size_t *nchosen)
{
    double t0 = ompf_cmpc_now();
    settings_t local = *given; /* with --events auto: this benchmark's events */
    const settings_t *s = &local;
    char **chosen = NULL;
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
    if (s->auto_want) {
        /* the events of this program, chosen once (or read back on resume) */
        if (mkdir(res->dir, 0777) != 0 && errno != EEXIST) {
            snprintf(res->note, sizeof res->note, "cannot create %.400s: %s", res->dir,
                     strerror(errno));
            fprintf(stderr, "%s: %s\n", PROG, res->note);
            res->error = 1;
            return;
        }
        if (ompf_cli_auto_events(PROG, argv, res->dir, s->auto_want, s->slots, env, nenv, &chosen,
                                 &local.nevents)) {
            snprintf(res->note, sizeof res->note, "--events auto could not choose events "
                                                  "(see above)");
            res->error = 1;
            return;
        }
        local.events = chosen;
        *chosen_out = chosen; /* freed by do_bench */
        *nchosen = local.nevents;
    }

    /* phase 1: fusion runs for LGL/CTC, references, HEM */
    ompf_plan_opts_t po;
    ompf_plan_opts_init(&po);
    po.slots = s->slots;
    po.for_lgl = 1;
    po.for_bc = 0;
    po.references = s->repeats;
    po.hem = 1;
    ompf_plan_t *built = NULL, *plan = NULL;
    ompf_plan_stats_t st;
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    if (ompf_plan_build((const char *const *)s->events, s->nevents, &po, &built, &st, &err) ||
        interleave_phase1(built, s, &plan)) {
        snprintf(res->note, sizeof res->note, "planning failed: %.480s",
                 err.msg[0] ? err.msg : "out of memory");
        res->step_failed = 1;
        fprintf(stderr, "%s: %s\n", PROG, res->note);
        ompf_plan_destroy(built);
        return;
    }
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/plan.txt", res->dir);
    ompf_campaign_t *c = NULL;
    int rc = 0;
    if (mkdir(res->dir, 0777) != 0 && errno != EEXIST)
        rc = ompf_error_set(&err, OMPF_EIO, "cannot create %s: %s", res->dir, strerror(errno));
    if (rc == 0)
        rc = ompf_plan_save(plan, path, &err);
    if (rc == 0)
        rc = execute(plan, argv, s, res->dir, env, nenv, 1, &c, &err);
    if (rc && rc != OMPF_CAMPAIGN_INCOMPLETE) {
        snprintf(res->note, sizeof res->note, "%.500s", err.msg);
        fprintf(stderr, "%s: %s: %s\n", PROG, name, err.msg);
        /* EPERM: interrupted once running, or the directory is locked */
        res->interrupted = rc == OMPF_EPERM && c;
        res->error = !res->interrupted;
        ompf_campaign_destroy(c);
        ompf_plan_destroy(plan);
        ompf_plan_destroy(built);
        return;
    }

    if (ompf_campaign_count_status(c, OMPF_RUN_OK) == 0) {
        /* nothing to plan BC from or to fuse: do not fail every run twice */
        res->runs_failed = ompf_campaign_count_status(c, OMPF_RUN_FAILED) +
                           ompf_campaign_count_status(c, OMPF_RUN_TIMEOUT);
        snprintf(res->note, sizeof res->note,
                 "every run failed (see %.400s/manifest.tsv): nothing to evaluate",
                 res->dir);
        fprintf(stderr, "%s: %s: %s\n", PROG, name, res->note);
        ompf_campaign_destroy(c);
        ompf_plan_destroy(plan);
        ompf_plan_destroy(built);
        return;
    }

    /* phase 2: the BC chain, overlap chosen from the reference runs */
    const char *refs[256];
    size_t nref = ompf_cmpc_runs_of(c, OMPF_ROLE_REFERENCE, refs, 256);
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
    ompf_plan_t *full = NULL, *chain = NULL;
    ompf_plan_create(&full);
    ompf_plan_create(&chain);
    rc = full && chain ? ompf_plan_chain(chain, (const char *const *)s->events, s->nevents,
                                         &po, NULL, &err)
                       : OMPF_ENOMEM;
    if (rc == 0)
        rc = interleave_phase2(full, plan, built, chain, s, po.corr != NULL);
    ompf_plan_destroy(chain);
    if (rc && full) {
        /* BC cannot be planned: keep phase 1 as it was, report below */
        ompf_plan_destroy(full);
        full = NULL;
        if (ompf_plan_create(&full) == 0)
            ompf_plan_append(full, plan);
    }
    free(corr);
    if (rc) {
        fprintf(stderr, "%s: %s: BC planning failed: %s\n", PROG, name, err.msg);
        res->step_failed = 1;
    } else {
        ompf_campaign_destroy(c);
        c = NULL;
        rc = ompf_plan_save(full, path, &err);
        if (rc == 0)
            rc = execute(full, argv, s, res->dir, env, nenv, 0, &c, &err);
        if (rc && rc != OMPF_CAMPAIGN_INCOMPLETE) {
            snprintf(res->note, sizeof res->note, "%.500s", err.msg);
            fprintf(stderr, "%s: %s: %s\n", PROG, name, err.msg);
            res->interrupted = rc == OMPF_EPERM && c;
            res->error = !res->interrupted;
            ompf_campaign_destroy(c);
            ompf_plan_destroy(plan);
            ompf_plan_destroy(built);
            ompf_plan_destroy(full);
            return;
        }
    }
    if (!c) {
        snprintf(res->note, sizeof res->note, "%.500s", err.msg);
        ompf_plan_destroy(plan);
        ompf_plan_destroy(built);
        ompf_plan_destroy(full);
        return;
    }
    res->runs_ok = ompf_campaign_count_status(c, OMPF_RUN_OK);
    res->runs_failed = ompf_campaign_count_status(c, OMPF_RUN_FAILED) +
                       ompf_campaign_count_status(c, OMPF_RUN_TIMEOUT);

    ompf_cmpc_fuse_and_evaluate(res, c, full, name);
    ompf_campaign_destroy(c);
    ompf_plan_destroy(plan);
    ompf_plan_destroy(built);
    ompf_plan_destroy(full);
    res->seconds = ompf_cmpc_now() - t0;
}

static void do_bench(const char *name, char *const *argv, const char *schedule,
                     const settings_t *s, result_t *res)
{
    char **chosen = NULL;
    size_t n = 0;
    do_bench_events(name, argv, schedule, s, res, &chosen, &n);
    for (size_t i = 0; i < n; i++)
        free(chosen[i]);
    free(chosen);
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
        {"summarize", required_argument, 0, 'S'},
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
    if (want)
        fprintf(stderr, PROG ": events chosen per benchmark (--events %s), ", events);
    else
        fprintf(stderr, PROG ": %zu events, ", s.nevents);
    fprintf(stderr, "%u slots (OMPFUSE_PMU_SLOTS), %u reference repeats, "
                    "OMP_NUM_THREADS=%u, output in %s\n",
            s.slots, s.repeats, s.threads, s.out);
    double t0 = ompf_cmpc_now();
    size_t nres = custom ? 1 : nsel;
    result_t *res = calloc(nres, sizeof *res);
    if (!res) {
        fprintf(stderr, PROG ": out of memory\n");
        free(evcopy);
        ompf_dirlock_release(lock);
        return 2;
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
                res[i].error = 1;
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
               ompf_cmpc_now() - t0);
    else
        printf("\nno report written   total time %.0f s\n", ompf_cmpc_now() - t0);
    for (size_t i = 0; i < nres; i++)
        if (res[i].analysis[0])
            printf("analysis: %s/%s   (%s, fused-%s.ompf)\n", s.out, res[i].analysis,
                   res[i].name, tname[res[i].analysis_of]);
    for (size_t i = 0; i < nres; i++)
        for (size_t r = 0; r < res[i].nrefs; r++)
            free(res[i].refs[r]);
    free(res);
    free(evcopy);
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

