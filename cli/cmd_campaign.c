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
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
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

/* The two pairs of near-identical software events of SPEC §5 (the
 * situation of the paper's PAPI_L1_DCM / PAPI_L2_DCA), listed so that each
 * pair is split: the first-fit LGL sets become {TASK-CLOCK, PAGE-FAULTS}
 * and {CPU-CLOCK, MINOR-FAULTS}, so a fusion must bring the twins of an XU
 * together from different runs, which EPD checks on the twin pairs (listed
 * as TASK-CLOCK, CPU-CLOCK, ... the twins shared a run and every pairing,
 * even the random control, kept them on the diagonal).  HEM rotates its
 * window over the same order ({TC,PF}, {PF,CC}, {CC,MF}, {MF,TC} on 2
 * slots), so it too never counts both twins in one window. */
static const char *const default_events =
    "perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CPU-CLOCK,perf::MINOR-FAULTS";

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
    int error;       /* could not run or write its files: stop, exit 2 */
    int step_failed; /* a planning, combine, clean or evaluate step failed */
    int io_error;    /* a step or file failed on an I/O error: exit 2 */
    unsigned long long left_out[N_T]; /* most XUs left out of one pair */
    unsigned floor_pairs;             /* pairs calibrated at the floor */
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
        "  --summarize DIR    print the EPD table and verdicts of the campaign in DIR\n"
        "                     (from DIR/epd.tsv) and run nothing\n"
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

/* Removes path when it is an empty file (a log or output nothing was
 * written to: an empty file says nothing, or lies about a result). */
static void drop_if_empty(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0)
        unlink(path);
}

/* The last non-empty line seen in a stream, across reads. */
typedef struct tail {
    char line[1024];
    size_t len;
} tail_t;

static void tail_feed(tail_t *t, const char *buf, size_t n, char *why, size_t whylen)
{
    for (size_t i = 0; i <= n; i++) {
        if (i == n || buf[i] == '\n' || buf[i] == '\r') {
            if (t->len && (i < n || !n)) {
                size_t l = t->len < whylen ? t->len : whylen - 1; /* cut to fit */
                memcpy(why, t->line, l);
                why[l] = '\0';
                t->len = 0;
            }
        } else if (t->len < sizeof t->line - 1) {
            t->line[t->len++] = buf[i];
        }
    }
}

/* Runs this binary with argv (argv[0] = subcommand); the child dies with
 * the campaign.  Its stderr (and its stdout when out is NULL) goes to
 * log_path, created only when something is written, and its last
 * non-empty line into why; with out, its stdout is returned in *out
 * (malloc'd, NUL-terminated).  Both arrive through pipes, so they are
 * known even when no file can be written (a full disk).  Returns the exit
 * code, or -1 when it could not run or died of a signal. */
static int run_self(char *const *args, const char *log_path, char *why, size_t whylen,
                    char **out)
{
    char *argv[MAX_ARGS + 600];
    size_t n = 0;
    argv[n++] = "ompfuse";
    for (size_t i = 0; args[i] && n < sizeof argv / sizeof *argv - 1; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    why[0] = '\0';
    if (out)
        *out = NULL;
    int ep[2], op[2] = {-1, -1};
    if (pipe2(ep, O_CLOEXEC) != 0 || (out && pipe2(op, O_CLOEXEC) != 0)) {
        snprintf(why, whylen, "cannot create a pipe: %s", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(125);
        dup2(out ? op[1] : ep[1], 1);
        dup2(ep[1], 2);
        execv("/proc/self/exe", argv);
        dprintf(2, "ompfuse campaign: cannot execute /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    close(ep[1]);
    if (out)
        close(op[1]);
    if (pid < 0) {
        snprintf(why, whylen, "cannot fork: %s", strerror(errno));
        close(ep[0]);
        if (out)
            close(op[0]);
        return -1;
    }
    FILE *log = NULL;
    tail_t t = {.len = 0};
    char *text = NULL;
    size_t tlen = 0, tcap = 0;
    int oom = 0;
    struct pollfd pf[2] = {{ep[0], POLLIN, 0}, {out ? op[0] : -1, POLLIN, 0}};
    while (pf[0].fd >= 0 || pf[1].fd >= 0) {
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int k = 0; k < 2; k++) {
            if (pf[k].fd < 0 || !pf[k].revents)
                continue;
            char buf[4096];
            ssize_t got = read(pf[k].fd, buf, sizeof buf);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0) {
                close(pf[k].fd);
                pf[k].fd = -1;
                continue;
            }
            if (k == 0) {
                if (!log)
                    log = fopen(log_path, "w");
                if (log)
                    fwrite(buf, 1, (size_t)got, log);
                tail_feed(&t, buf, (size_t)got, why, whylen);
            } else if (!oom) {
                if (tlen + (size_t)got + 1 > tcap) {
                    size_t nc = 2 * (tlen + (size_t)got + 1);
                    char *nt = realloc(text, nc);
                    if (!nt) {
                        oom = 1;
                        continue;
                    }
                    text = nt;
                    tcap = nc;
                }
                memcpy(text + tlen, buf, (size_t)got);
                tlen += (size_t)got;
            }
        }
    }
    tail_feed(&t, "", 0, why, whylen);
    if (log)
        fclose(log); /* a log that could not be written is dropped below */
    drop_if_empty(log_path);
    if (out) {
        if (!text && !oom)
            text = calloc(1, 1);
        if (text)
            text[tlen] = '\0';
        *out = text;
    }
    int st;
    pid_t w;
    while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    if (w != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A failed step is an error of the campaign (exit 2), not a negative
 * result, when the step says so (exit 2: its inputs are the campaign's own
 * files, so even "bad input" is the campaign's failure) or when its message
 * names an error of the filesystem. */
static int step_io_error(int x, const char *why)
{
    static const int io[] = {ENOSPC, EDQUOT, EIO, EROFS, EFBIG};
    if (x == 2)
        return 1;
    for (size_t i = 0; i < sizeof io / sizeof *io; i++)
        if (strstr(why, strerror(io[i])))
            return 1;
    return 0;
}

/* path holds text, written atomically; 0 or err names path and reason. */
static int write_text(const char *path, const char *text, ompf_error_t *err)
{
    ompf_outfile_t *o;
    FILE *f;
    int rc = ompf_outfile_open(path, &o, &f, err);
    if (rc)
        return rc;
    fputs(text, f);
    return ompf_outfile_commit(o, err);
}

/* A step's output counts only when it holds something. */
static int file_exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && sb.st_size > 0;
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
 * Each set is still repeated R times (SPEC §8); only the order changes. */
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
    if (mkdir(logdir, 0777) != 0 && errno != EEXIST)
        fprintf(stderr, "%s: %s: cannot create %s: %s (the steps' logs are lost)\n", PROG,
                name, logdir, strerror(errno));
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
        char why[400];
        int x = run_self(args, log, why, sizeof why, NULL);
        if (x == 0 && file_exists(res->target_path[t])) {
            res->target_ok[t] = 1;
            fprintf(stderr, "  combine %-13s ok (%.1f s)\n", tname[t], now_s() - ts);
        } else {
            res->step_failed = 1;
            res->io_error |= step_io_error(x, why);
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
        char why[400];
        int x = run_self(args, log, why, sizeof why, NULL);
        if (x == 0 && file_exists(res->target_path[tc])) {
            res->target_ok[tc] = 1;
            fprintf(stderr, "  clean   %-13s ok\n", tname[t]);
        } else {
            res->step_failed = 1;
            res->io_error |= step_io_error(x, why);
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
            char why[400], *text = NULL;
            int x = run_self(args, errp, why, sizeof why, &text);
            /* evaluate's own table, kept next to the runs */
            if (text && *text && write_text(outp, text, &err) != 0) {
                fprintf(stderr, "%s: %s: %s\n", PROG, name, err.msg);
                res->io_error = 1;
            }
            /* rows: "<target> <EPD> ..." after the header */
            char *save = NULL;
            for (char *line = text ? strtok_r(text, "\n", &save) : NULL; line;
                 line = strtok_r(NULL, "\n", &save)) {
                char nm[128], val[64], pairs[64];
                unsigned long long lo = 0;
                unsigned fl = 0;
                int got = sscanf(line, "%127s %63s %63s %llu %u", nm, val, pairs, &lo, &fl);
                if (got < 2)
                    continue;
                for (int t = 0; t < N_T; t++)
                    if (res->target_ok[t] && !strcmp(nm, tname[t])) {
                        char *end;
                        double v = strtod(val, &end);
                        if (end != val && !*end) {
                            res->epd[t] = v;
                            res->problem[t][0] = '\0';
                            if (got == 5) {
                                res->left_out[t] = lo;
                                if (fl > res->floor_pairs)
                                    res->floor_pairs = fl;
                            }
                        }
                    }
            }
            free(text);
            for (int t = 0; t < N_T; t++)
                if (res->target_ok[t] && isnan(res->epd[t])) {
                    snprintf(res->problem[t], sizeof res->problem[t],
                             "evaluation failed: %.120s", why[0] ? why : "no EPD");
                    res->step_failed = 1;
                }
            if (x == 0)
                fprintf(stderr, "  evaluate %zu targets: ok (%.1f s)\n", ntargets, now_s() - ts);
            else
                fprintf(stderr, "  evaluate %zu targets: FAILED: %s (%.1f s)\n", ntargets,
                        why[0] ? why : "no message", now_s() - ts);
            if (x != 0) {
                res->step_failed = 1;
                res->io_error |= step_io_error(x, why);
            }
        }
    }
    rmdir(logdir); /* when no step left a log */
    ompf_campaign_destroy(c);
    ompf_plan_destroy(plan);
    ompf_plan_destroy(built);
    ompf_plan_destroy(full);
    res->seconds = now_s() - t0;
}

/* ---- verdicts ---------------------------------------------------------
 * The headline of the experiment: on every benchmark the EPD of LGL and of
 * BC is below that of every HEM variant (hem, hem-delta and both cleaned
 * profiles).  Numbers are compared as printed (3 decimals), so a line never
 * says that 1.844 beats 1.844: equal printed values are a tie, and a tie is
 * not a win. */
enum { V_WIN = 1, V_LOSS = 0, V_NONE = -1 };

static double rounded3(double v) { return round(v * 1000.0) / 1000.0; }

/* Writes "NAME: ..." into buf; returns V_WIN, V_LOSS or V_NONE (an EPD
 * needed for the verdict is missing).  problem[t] (may be NULL) says why a
 * number is missing. */
static int verdict_line(const char *name, const double *epd, const char (*problem)[160],
                        char *buf, size_t len)
{
    static const int fus[2] = {T_LGL, T_BC};
    static const char *const fname[2] = {"LGL", "BC"};
    int best = -1, nhem = 0;
    for (int t = T_HEM; t <= T_HEMDC; t++)
        if (!isnan(epd[t])) {
            nhem++;
            if (best < 0 || epd[t] < epd[best])
                best = t;
        }
    size_t k = 0;
#define ADD(...)                                                                            \
    do {                                                                                    \
        int w_ = snprintf(buf + k, k < len ? len - k : 0, __VA_ARGS__);                     \
        if (w_ > 0)                                                                         \
            k += (size_t)w_;                                                                \
    } while (0)
    ADD("%s: ", name);
    int missing = 0, wins = 0;
    for (int i = 0; i < 2; i++)
        missing |= isnan(epd[fus[i]]);
    if (best < 0 || missing) {
        int first = 1;
        for (int i = 0; i < 2; i++)
            if (isnan(epd[fus[i]])) {
                ADD("%s%s has no EPD (%s)", first ? "" : "; ", fname[i],
                    problem && problem[fus[i]][0] ? problem[fus[i]] : "not produced");
                first = 0;
            }
        if (best < 0)
            ADD("%sno HEM variant has an EPD", first ? "" : "; ");
        ADD(": no verdict");
        return V_NONE;
    }
    double h = rounded3(epd[best]);
    for (int i = 0; i < 2; i++)
        wins += rounded3(epd[fus[i]]) < h;
    if (wins == 2) {
        ADD("LGL %.3f, BC %.3f < best HEM variant %s %.3f: fusion wins", epd[T_LGL], epd[T_BC],
            tname[best], epd[best]);
    } else {
        for (int i = 0; i < 2; i++) {
            double v = rounded3(epd[fus[i]]);
            if (i)
                ADD("; ");
            if (v < h)
                ADD("%s %.3f < best HEM variant %s %.3f", fname[i], epd[fus[i]], tname[best],
                    epd[best]);
            else if (v == h)
                ADD("%s ties %s (%.3f vs %.3f), not below it", fname[i], tname[best],
                    epd[fus[i]], epd[best]);
            else
                ADD("%s does NOT beat %s (%.3f vs %.3f)", fname[i], tname[best], epd[fus[i]],
                    epd[best]);
        }
        ADD(": fusion does NOT win here");
    }
    if (nhem < T_HEMDC - T_HEM + 1)
        ADD(" (only %d of %d HEM variants have an EPD)", nhem, T_HEMDC - T_HEM + 1);
#undef ADD
    return wins == 2 ? V_WIN : V_LOSS;
}

/* The verdict line of one benchmark, or why it has none. */
static int bench_verdict(const result_t *r, char *line, size_t len)
{
    if (r->note[0]) {
        snprintf(line, len, "%s: not completed: %.500s: no verdict", r->name,
                 r->note);
        return V_NONE;
    }
    return verdict_line(r->name, r->epd, r->problem, line, len);
}

/* The random pairing is the control (SPEC §6: what meaningless fusion
 * scores).  Where it scores about as well as LGL (within 10 %), the
 * histograms do not see which XU is which: most XUs share one bin (the
 * bounds are set by a few outliers) and the verdict rests on a handful of
 * XUs and on noise.  Said next to the verdict, never instead of it. */
static int power_note(const result_t *r, char *buf, size_t len)
{
    if (isnan(r->epd[T_RANDOM]) || isnan(r->epd[T_LGL]) ||
        !(r->epd[T_RANDOM] < 1.1 * r->epd[T_LGL]))
        return 0;
    snprintf(buf, len, "%s: the random-pairing control scores like LGL (%.3f vs %.3f): "
                       "EPD cannot tell matched from random XUs on this benchmark, so its "
                       "verdict rests on few XUs and on run-to-run noise",
             r->name, r->epd[T_RANDOM], r->epd[T_LGL]);
    return 1;
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
    fprintf(f, "\nVerdicts (fusion wins where LGL and BC are below every HEM variant: hem, "
               "hem-delta, hem-cleaned, hem-delta-cleaned)\n");
    size_t won = 0;
    char lost[512] = "";
    for (size_t i = 0; i < n; i++) {
        char line[1024];
        int v = bench_verdict(&res[i], line, sizeof line);
        fprintf(f, "%s\n", line);
        if (v == V_WIN)
            won++;
        else {
            size_t l = strlen(lost);
            snprintf(lost + l, sizeof lost - l, "%s%s", l ? ", " : "", res[i].name);
        }
    }
    fprintf(f, "headline: fusion wins on %zu of %zu benchmarks%s%s%s\n", won, n,
            lost[0] ? " (not on " : "", lost, lost[0] ? ")" : "");
    /* What the numbers rest on: XUs a target leaves out of a pair's
     * histogram (missing values) and pairs whose references agree so
     * exactly that the calibration floor was used. */
    for (size_t i = 0; i < n; i++) {
        for (int t = 0; t < N_T; t++)
            if (!isnan(res[i].epd[t]) && res[i].left_out[t])
                fprintf(f, "note: %s %s: up to %llu XU%s of a pair left out (missing values); "
                           "its EPD describes only the XUs that have both values\n",
                        res[i].name, tname[t], res[i].left_out[t],
                        res[i].left_out[t] == 1 ? "" : "s");
        char pn[512];
        if (power_note(&res[i], pn, sizeof pn))
            fprintf(f, "note: %s\n", pn);
        if (res[i].floor_pairs)
            fprintf(f, "note: %s: calibration floor (1/|XUs|) used on %u pair%s: the "
                       "references agree exactly there, so any difference scores above 1\n",
                    res[i].name, res[i].floor_pairs, res[i].floor_pairs == 1 ? "" : "s");
    }
    int any = 0;
    for (size_t i = 0; i < n; i++)
        if (res[i].runs_ok || res[i].runs_failed)
            any = 1;
    if (!any)
        return;
    fprintf(f, "\nruns:");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s %s %zu ok, %zu failed, %.0f s", i ? ";" : "", res[i].name,
                res[i].runs_ok, res[i].runs_failed, res[i].seconds);
    fprintf(f, "\n");
    for (size_t i = 0; i < n; i++)
        for (int t = 0; t < N_T; t++)
            if (isnan(res[i].epd[t]) && res[i].problem[t][0])
                fprintf(f, "    %s %s: %s\n", res[i].name, tname[t], res[i].problem[t]);
}

/* The verdicts as an HTML section (the report shows what stdout says). */
static void html_escape(FILE *f, const char *s);
static void html_verdicts(FILE *f, const result_t *res, size_t n)
{
    fprintf(f, "<section id=\"verdicts\"><h2>Verdicts</h2>\n<p class=\"note\">EPD of every "
               "strategy (1.0 = as close as two reference runs; lower is better). Fusion "
               "wins on a benchmark where LGL and BC are below every HEM variant (hem, "
               "hem-delta, hem-cleaned, hem-delta-cleaned), compared as printed.</p>\n"
               "<table class=\"epd\"><tr><th>benchmark</th>");
    for (int t = 0; t < N_T; t++)
        fprintf(f, "<th>%s</th>", tname[t]);
    fprintf(f, "</tr>\n");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<tr data-benchmark=\"");
        html_escape(f, res[i].name);
        fprintf(f, "\"><td>");
        html_escape(f, res[i].name);
        fprintf(f, "</td>");
        for (int t = 0; t < N_T; t++) {
            if (isnan(res[i].epd[t]))
                fprintf(f, "<td class=\"num\" data-target=\"%s\">-</td>", tname[t]);
            else
                fprintf(f, "<td class=\"num\" data-target=\"%s\" data-epd=\"%.6g\">%.3f</td>",
                        tname[t], res[i].epd[t], res[i].epd[t]);
        }
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n<ul class=\"verdicts\">\n");
    size_t won = 0;
    for (size_t i = 0; i < n; i++) {
        char line[1024];
        int v = bench_verdict(&res[i], line, sizeof line);
        won += v == V_WIN;
        fprintf(f, "<li class=\"verdict\" data-verdict=\"%s\"%s>",
                v == V_WIN ? "win" : v == V_LOSS ? "loss" : "none",
                v == V_WIN ? "" : " style=\"color:#a00\"");
        html_escape(f, line);
        fprintf(f, "</li>\n");
    }
    fprintf(f, "</ul>\n<p class=\"headline\">headline: fusion wins on %zu of %zu benchmarks</p>\n",
            won, n);
    for (size_t i = 0; i < n; i++) {
        for (int t = 0; t < N_T; t++)
            if (!isnan(res[i].epd[t]) && res[i].left_out[t]) {
                fprintf(f, "<p class=\"note\">");
                html_escape(f, res[i].name);
                fprintf(f, " %s: up to %llu XU%s of a pair left out (missing values); its EPD "
                           "describes only the XUs that have both values.</p>\n",
                        tname[t], res[i].left_out[t], res[i].left_out[t] == 1 ? "" : "s");
            }
        char pn[512];
        if (power_note(&res[i], pn, sizeof pn)) {
            fprintf(f, "<p class=\"note\">");
            html_escape(f, pn);
            fprintf(f, ".</p>\n");
        }
        if (res[i].floor_pairs) {
            fprintf(f, "<p class=\"note\">");
            html_escape(f, res[i].name);
            fprintf(f, ": calibration floor (1/|XUs|) used on %u pair%s: the references agree "
                       "exactly there, so any difference scores above 1.</p>\n",
                    res[i].floor_pairs, res[i].floor_pairs == 1 ? "" : "s");
        }
    }
    fprintf(f, "</section>\n");
}

/* Puts the verdict section into the report `ompfuse report` wrote, before
 * the first benchmark's section; written to a new file and renamed.  0, or
 * err names the file and the reason. */
static int insert_verdicts(const char *path, const result_t *res, size_t n, ompf_error_t *err)
{
    char *doc;
    size_t len;
    if (ompf_read_file(path, (size_t)1 << 30, &doc, &len) != 0)
        return ompf_error_set(err, OMPF_EIO, "cannot read %s: %s", path, strerror(errno));
    char *at = strstr(doc, "<section class=\"group\"");
    if (!at)
        at = strstr(doc, "</body>");
    if (!at)
        at = doc + len;
    ompf_outfile_t *o;
    FILE *f;
    int rc = ompf_outfile_open(path, &o, &f, err);
    if (rc) {
        free(doc);
        return rc;
    }
    fwrite(doc, 1, (size_t)(at - doc), f);
    html_verdicts(f, res, n);
    fputs(at, f);
    free(doc);
    return ompf_outfile_commit(o, err);
}

static int write_tsv(const char *path, const result_t *res, size_t n, ompf_error_t *err)
{
    ompf_outfile_t *o;
    FILE *f;
    int rc = ompf_outfile_open(path, &o, &f, err);
    if (rc)
        return rc;
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
                fprintf(f, "\t%.10g", res[i].epd[t]);
        fprintf(f, "\n");
    }
    return ompf_outfile_commit(o, err);
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
                               const char *why, ompf_error_t *err)
{
    ompf_outfile_t *o;
    FILE *f;
    int rc = ompf_outfile_open(path, &o, &f, err);
    if (rc)
        return rc;
    fprintf(f, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ompfuse campaign"
               "</title><style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px;"
               "text-align:right}td:first-child{text-align:left}.bad{color:#a00}</style>"
               "</head><body><h1>ompfuse campaign</h1>\n<p class=\"bad\">The detailed report "
               "(<code>ompfuse report</code>) could not be written: ");
    html_escape(f, why);
    fprintf(f, ". This page has the EPD table and the verdicts only.</p>\n");
    html_verdicts(f, res, n);
    fprintf(f, "</body></html>\n");
    return ompf_outfile_commit(o, err);
}

/* DIR/report.html: all benchmarks as groups of one `ompfuse report`, the
 * verdicts inserted; when that fails, a page with the table and verdicts.
 * *wrote: report.html holds one of them; *failed: `ompfuse report`
 * failed; *io: an I/O error (in that step or in writing the page). */
static void write_report(const result_t *res, size_t nres, const char *html,
                         const char *log, int *wrote, int *io, int *failed)
{
    ompf_error_t err;
    memset(&err, 0, sizeof err);
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
        args[k++] = (char *)html;
        for (size_t i = 0; i < nres; i++) {
            if (res[i].nrefs < 2)
                continue;
            args[k++] = "--group";
            args[k++] = (char *)res[i].name;
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
    char why[400] = "";
    int x = -1;
    if (groups) {
        fprintf(stderr, "\n" PROG ": writing the report...\n");
        x = run_self(args, log, why, sizeof why, NULL);
    } else {
        snprintf(why, sizeof why, "no benchmark has usable reference runs");
    }
    free(args);
    free(named);
    if (x == 0 && file_exists(html)) {
        *wrote = 1; /* without the verdicts if inserting them fails */
        if (insert_verdicts(html, res, nres, &err)) {
            fprintf(stderr, PROG ": could not add the verdicts to %s: %s\n", html, err.msg);
            *io = 1;
        }
        return;
    }
    *failed = 1;
    *io |= groups && step_io_error(x, why);
    fprintf(stderr, PROG ": ompfuse report could not write %s: %s\n", html,
            why[0] ? why : "no message");
    if (write_fallback_html(html, res, nres, why[0] ? why : "ompfuse report failed", &err)) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        *io = 1;
    } else {
        *wrote = 1;
        fprintf(stderr, PROG ": wrote the EPD table and verdicts to %s instead\n", html);
    }
}

/* --summarize DIR: the table and verdicts of a finished campaign, from
 * DIR/epd.tsv, without running anything. */
static int summarize(const char *dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/epd.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, PROG ": cannot read %s: %s (give the --out DIR of a campaign)\n", path,
                strerror(errno));
        return 2;
    }
    char line[4096];
    int col[N_T + 1]; /* tsv column -> target */
    size_t ncol = 0, n = 0, cap = 0;
    result_t *res = NULL;
    int rc = 0;
    if (!fgets(line, sizeof line, f) || strncmp(line, "benchmark\t", 10)) {
        fprintf(stderr, PROG ": %s: not an EPD table (first line must start with "
                        "'benchmark<TAB>')\n", path);
        fclose(f);
        return 2;
    }
    for (char *tok = strtok(line + 10, "\t\r\n"); tok && ncol <= N_T; tok = strtok(NULL, "\t\r\n")) {
        col[ncol] = -1;
        for (int t = 0; t < N_T; t++)
            if (!strcmp(tok, tname[t]))
                col[ncol] = t;
        ncol++;
    }
    while (fgets(line, sizeof line, f)) {
        char *name = strtok(line, "\t\r\n");
        if (!name)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            result_t *r = realloc(res, cap * sizeof *res);
            if (!r) {
                rc = 1;
                break;
            }
            res = r;
        }
        result_t *r = &res[n++];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", name);
        for (int t = 0; t < N_T; t++) {
            r->epd[t] = NAN;
            snprintf(r->problem[t], sizeof r->problem[t], "not in %s", "epd.tsv");
        }
        for (size_t c = 0; c < ncol; c++) {
            char *v = strtok(NULL, "\t\r\n");
            if (!v)
                break;
            char *end;
            double x = strtod(v, &end);
            if (col[c] < 0)
                continue;
            if (end != v && !*end && x >= 0) {
                r->epd[col[c]] = x;
                r->problem[col[c]][0] = '\0';
            } else {
                snprintf(r->problem[col[c]], sizeof r->problem[0], "no EPD in epd.tsv");
            }
        }
    }
    fclose(f);
    if (rc == 0)
        print_table(stdout, res, n);
    free(res);
    return rc;
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
        case 'S': return summarize(optarg);
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
    fprintf(stderr, PROG ": %zu events, %u slots (OMPFUSE_PMU_SLOTS), %u reference repeats, "
                    "OMP_NUM_THREADS=%u, output in %s\n",
            s.nevents, s.slots, s.repeats, s.threads, s.out);
    double t0 = now_s();
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
        if (write_tsv(tsv, res, nres, &err) == 0)
            wrote_tsv = 1;
        else {
            fprintf(stderr, PROG ": %s\n", err.msg);
            io = 1;
        }
        write_report(res, nres, html, log, &wrote_html, &io, &report_failed);
    }
    print_table(stdout, res, nres);
    if (wrote_html || wrote_tsv)
        printf("\n%s%s%s%s   total time %.0f s\n", wrote_html ? "report: " : "",
               wrote_html ? html : "", wrote_tsv ? "   table: " : "", wrote_tsv ? tsv : "",
               now_s() - t0);
    else
        printf("\nno report written   total time %.0f s\n", now_s() - t0);
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

