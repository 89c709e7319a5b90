/* ompfuse run: execute every run of a plan under the OMPT tool, here or
 * through Slurm; --resume DIR repeats the command saved in DIR/run.args. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "opts.h"
#include "ompfuse/campaign.h"
#include "ompfuse/plan.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ompfuse run --plan PLAN --out DIR [options] -- PROGRAM [ARGS...]\n"
        "       ompfuse run --resume DIR [--no-wait] [--cancel] [-q]\n"
        "\n"
        "Runs the unmodified PROGRAM once per planned run with the OMPT tool\n"
        "(OMP_TOOL_LIBRARIES), one profile per run: DIR/<role>-<line>-r<repeat>.ompf,\n"
        "and DIR/manifest.tsv.  Running the same command again (or --resume DIR)\n"
        "resumes: complete, valid profiles are kept, everything else is run again.\n"
        "A DIR holding runs of another command, plan or OpenMP environment (OMP_*,\n"
        "KMP_*: DIR/run.env) is refused.\n"
        "The program is first run once without the tool; if that fails, nothing\n"
        "starts.\n"
        "\n"
        "  --plan PLAN     plan file (ompfuse plan)\n"
        "  --out DIR       output directory (created)\n"
        "  --jobs N        local: runs at a time (default 1: concurrent runs compete\n"
        "                  for cores and perturb each other's counts)\n"
        "  --timeout S     kill a run after S seconds (recorded as a failure)\n"
        "  --exit-code L   the program's normal exit codes (default 0; e.g. 3,\n"
        "                  0,3, 1-9 or any); a run that ends otherwise failed\n"
        "  --roles LIST    only these roles (e.g. lgl,reference)\n"
        "  --tool PATH     the OMPT tool (default $OMPFUSE_TOOL, else\n"
        "                  ../lib/libompfuse.so next to this ompfuse)\n"
        "  --env KEY=VAL   extra environment for every run (repeatable)\n"
        "  --no-check      skip the plain run without the tool\n"
        "  --resume DIR    repeat the command that made DIR (DIR/run.args)\n"
        "  -q, --quiet     no progress output\n"
        "  -h, --help      this text\n"
        "\n"
        "Slurm (docs/cluster.md): one job array, one whole node per run; DIR must be\n"
        "on a filesystem the compute nodes share, at the same path.\n"
        "  --launcher local|slurm   where runs execute (default local)\n"
        "  --partition P            sbatch --partition\n"
        "  --nodes-per-run 1        a run is one process on one node (only 1)\n"
        "  --max-parallel K         at most K runs at a time (array throttle %%K)\n"
        "  --sbatch-arg ARG         passed to sbatch, e.g. --sbatch-arg=--account=A\n"
        "  --poll S                 seconds between squeue polls (default 2)\n"
        "  --no-wait                submit and return; collect with --resume DIR\n"
        "  --cancel                 cancel the campaign's queued runs, then collect\n"
        "\n"
        "DIR is locked while the command runs (DIR/.ompfuse-lock names the holder's\n"
        "pid and host): a second campaign on DIR refuses to start.  Every run is a\n"
        "process group of its own that dies with the campaign, even after SIGKILL.\n"
        "\n"
        "Exit: 0 all runs ok (or submitted, with --no-wait); 1 some runs failed,\n"
        "timed out or are missing (the others still ran; the count is printed), or\n"
        "interrupted; 2 bad usage, the program fails even without the tool, DIR is\n"
        "in use by another campaign, or an I/O error (e.g. DIR/manifest.tsv cannot\n"
        "be written: the message names the file and the reason).\n");
}

typedef struct cli {
    const char *plan_path;
    ompf_campaign_opts_t o;
    const char *envs[64];
    size_t nenv;
    const char *sbatch[32];
    size_t nsb;
    int slurm;
    const char *resume;
    long task;     /* --slurm-task I, -1 if not */
    int prog;      /* index of PROGRAM in argv */
    int no_wait, cancel, quiet, have_poll;
    double poll;
} cli_t;

static int bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "ompfuse run: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return 2;
}

/* 0 parsed, 1 help printed, 2 bad usage (reported). */
static int parse(int argc, char **argv, cli_t *c)
{
    static const struct option lo[] = {
        {"plan", required_argument, 0, 'p'},
        {"out", required_argument, 0, 'o'},
        {"jobs", required_argument, 0, 'j'},
        {"timeout", required_argument, 0, 't'},
        {"exit-code", required_argument, 0, 'x'},
        {"roles", required_argument, 0, 'r'},
        {"tool", required_argument, 0, 'T'},
        {"env", required_argument, 0, 'E'},
        {"no-check", no_argument, 0, 'N'},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {"launcher", required_argument, 0, 'L'},
        {"partition", required_argument, 0, 'P'},
        {"nodes-per-run", required_argument, 0, 'n'},
        {"max-parallel", required_argument, 0, 'K'},
        {"sbatch-arg", required_argument, 0, 'S'},
        {"poll", required_argument, 0, 'W'},
        {"no-wait", no_argument, 0, 'w'},
        {"cancel", no_argument, 0, 'C'},
        {"resume", required_argument, 0, 'R'},
        {"slurm-task", required_argument, 0, 'X'},
        {0, 0, 0, 0}};
    memset(c, 0, sizeof *c);
    ompf_campaign_opts_init(&c->o);
    c->task = -1;
    ompf_cli_opts_t po;
    ompf_cli_opts_start(&po, "run", argc, argv, "+hqj:", lo);
    int ch;
    while ((ch = ompf_cli_opts_next(&po)) != -1) {
        char *end;
        switch (ch) {
        case 'p': c->plan_path = optarg; break;
        case 'o': c->o.out_dir = optarg; break;
        case 'j': {
            long j = strtol(optarg, &end, 10);
            if (*end || j < 1 || j > 256)
                return bad("--jobs %s: give a number from 1 to 256", optarg);
            c->o.jobs = (unsigned)j;
            break;
        }
        case 't': {
            double t = strtod(optarg, &end);
            if (*end || !(t > 0))
                return bad("--timeout %s: give seconds > 0", optarg);
            c->o.timeout_s = t;
            break;
        }
        case 'x':
            if (ompf_exit_set_parse(optarg, &c->o.exit_ok))
                return bad("--exit-code %s: give the program's normal exit codes, 0 to 255 "
                           "(3, 0,3, 1-9 or any)", optarg);
            break;
        case 'r': {
            /* check every role name now rather than silently running nothing */
            char *copy = strdup(optarg);
            for (char *s = strtok(copy, ","); s; s = strtok(NULL, ","))
                if (ompf_plan_role_parse(s) < 0) {
                    bad("--roles: unknown role '%s' (roles: lgl, ctc, bc, "
                        "run, reference, hem, hem-delta)", s);
                    free(copy);
                    return 2;
                }
            free(copy);
            c->o.roles = optarg;
            break;
        }
        case 'T': c->o.tool_path = optarg; break;
        case 'E':
            if (!strchr(optarg, '=') || c->nenv == 64)
                return bad("--env %s: expected KEY=VALUE (at most 64)", optarg);
            c->envs[c->nenv++] = optarg;
            break;
        case 'N': c->o.check_plain = 0; break;
        case 'q': c->quiet = 1; break;
        case 'h': usage(stdout); return 1;
        case 'L':
            if (!strcmp(optarg, "slurm"))
                c->slurm = 1;
            else if (strcmp(optarg, "local"))
                return bad("--launcher %s: give local or slurm", optarg);
            break;
        case 'P': c->o.partition = optarg; break;
        case 'n':
            if (strcmp(optarg, "1"))
                return bad("--nodes-per-run %s: a run is one OpenMP process on "
                           "one node; only 1 is possible", optarg);
            break;
        case 'K': {
            long k = strtol(optarg, &end, 10);
            if (*end || k < 1 || k > 100000)
                return bad("--max-parallel %s: give a number >= 1", optarg);
            c->o.max_parallel = (unsigned)k;
            break;
        }
        case 'S':
            if (c->nsb == 32)
                return bad("--sbatch-arg %s: at most 32", optarg);
            c->sbatch[c->nsb++] = optarg;
            break;
        case 'W':
            c->poll = strtod(optarg, &end);
            if (*end || !(c->poll >= 0.05))
                return bad("--poll %s: give seconds >= 0.05", optarg);
            c->have_poll = 1;
            break;
        case 'w': c->no_wait = 1; break;
        case 'C': c->cancel = 1; break;
        case 'R': c->resume = optarg; break;
        case 'X': {
            long t = strtol(optarg, &end, 10);
            if (*end || t < 0)
                return bad("--slurm-task %s: an array index", optarg);
            c->task = t;
            break;
        }
        default: /* bad option, reported */
            return 2;
        }
    }
    c->prog = optind;
    return 0;
}

/* The arguments worth saving for --resume: not the per-invocation ones. */
static int is_transient(const char *a)
{
    return !strcmp(a, "--no-wait") || !strcmp(a, "--cancel");
}

/* DIR/run.args for --resume and the Slurm array tasks: everything after
 * "run" except the per-invocation flags, with --plan naming a snapshot of
 * the plan in DIR (so that editing or deleting the plan file later cannot
 * change what the campaign's runs are). */
static void save_command(const cli_t *c, const ompf_plan_t *plan, int argc,
                         char **argv)
{
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    char snap[PATH_MAX + 16], opt[PATH_MAX + 32];
    char dir[PATH_MAX];
    if (!realpath(c->o.out_dir, dir))
        snprintf(dir, sizeof dir, "%s", c->o.out_dir);
    snprintf(snap, sizeof snap, "%s/plan.txt", dir);
    snprintf(opt, sizeof opt, "--plan=%s", snap);
    char **keep = calloc((size_t)argc, sizeof *keep);
    int rc = keep ? ompf_plan_save(plan, snap, &err) : OMPF_ENOMEM;
    int nk = 0;
    for (int i = 1; rc == 0 && i < argc; i++) {
        if (i >= c->prog) {
            keep[nk++] = argv[i];
        } else if (!strcmp(argv[i], "--plan") && i + 1 < c->prog) {
            keep[nk++] = opt;
            i++;
        } else if (!strncmp(argv[i], "--plan=", 7)) {
            keep[nk++] = opt;
        } else if (!is_transient(argv[i])) {
            keep[nk++] = argv[i];
        }
    }
    if (rc == 0)
        rc = ompf_campaign_save_args(c->o.out_dir, nk, keep, &err);
    if (rc)
        fprintf(stderr, "ompfuse run: warning: %s; --resume will not work "
                        "for this directory\n",
                keep ? err.msg : "out of memory");
    free(keep);
}

/* argv[from..to) joined by spaces into buf. */
static void join_args(char *const *argv, int from, int to, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = from; i < to && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i > from ? " " : "", argv[i]);
}

/* A directory that holds runs of another command: refused (exit 2), as
 * its profiles would be kept and fused as runs of this one. */
static int same_program(const cli_t *c, int argc, char **argv, const ompf_campaign_t *cp)
{
    char *cwd = NULL, **sv = NULL, here[PATH_MAX];
    int sc = 0;
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    if (!ompf_campaign_has_profiles(cp) ||
        ompf_campaign_load_args(c->o.out_dir, &cwd, &sc, &sv, &err) != 0)
        return 0; /* nothing kept, or made by an earlier ompfuse */
    if (!getcwd(here, sizeof here))
        snprintf(here, sizeof here, "?");
    char **av = calloc((size_t)sc + 2, sizeof *av);
    cli_t old;
    int same = 1;
    if (av) {
        av[0] = "run";
        for (int i = 0; i < sc; i++)
            av[i + 1] = sv[i];
        if (parse(sc + 1, av, &old) == 0) {
            same = sc + 1 - old.prog == argc - c->prog && !strcmp(here, cwd);
            for (int i = 0; same && i < argc - c->prog; i++)
                same = !strcmp(av[old.prog + i], argv[c->prog + i]);
        }
    }
    if (!same) {
        char was[2048], is[2048];
        join_args(av, old.prog, sc + 1, was, sizeof was);
        join_args(argv, c->prog, argc, is, sizeof is);
        fprintf(stderr,
                "ompfuse run: %s holds the runs of another command ('%s' in %s; this is "
                "'%s' in %s): they would be kept as runs of this one.  Choose another "
                "--out, remove %s, or continue that campaign with 'ompfuse run "
                "--resume %s'\n",
                c->o.out_dir, was, cwd, is, here, c->o.out_dir, c->o.out_dir);
    }
    free(av);
    ompf_campaign_free_args(cwd, sv);
    return same ? 0 : 2;
}

static int execute(cli_t *c, int argc, char **argv, int save)
{
    if (!c->plan_path || !c->o.out_dir) {
        fprintf(stderr, "ompfuse run: --plan PLAN and --out DIR are required; see 'ompfuse run --help'\n");
        return 2;
    }
    if (c->prog >= argc) {
        fprintf(stderr, "ompfuse run: no program: ompfuse run --plan P --out D -- PROGRAM ARGS\n");
        return 2;
    }
    if (!c->slurm && c->task < 0 &&
        (c->o.partition || c->o.max_parallel || c->nsb || c->no_wait ||
         c->cancel)) {
        fprintf(stderr, "ompfuse run: --partition, --max-parallel, --sbatch-arg, "
                        "--no-wait and --cancel need --launcher slurm\n");
        return 2;
    }
    c->o.env = c->envs;
    c->o.n_env = c->nenv;
    c->o.sbatch_args = c->sbatch;
    c->o.n_sbatch_args = c->nsb;
    c->o.no_wait = c->no_wait;
    c->o.cancel = c->cancel;
    if (c->have_poll)
        c->o.poll_s = c->poll;
    /* an array task runs inside its submitter's campaign, which holds the
     * directory's lock (possibly on another node) */
    c->o.no_lock = c->task >= 0;
    if (c->quiet)
        c->o.progress = -2;
    else if (c->task >= 0)
        c->o.progress = 0; /* an array task logs plain lines */
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    ompf_plan_t *plan;
    if (ompf_plan_load(c->plan_path, &plan, &err) != 0) {
        fprintf(stderr, "ompfuse run: %s\n", err.msg);
        return 2;
    }
    /* local runs open their uprobes as tracepoints this process defines
     * and holds: cheap to open and close per thread (docs/events.md) */
    if (!c->slurm && c->task < 0 && ompf_uphold_create(stderr, &c->o.hold)) {
        fprintf(stderr, "ompfuse run: out of memory\n");
        ompf_plan_destroy(plan);
        return 2;
    }
    ompf_campaign_t *cp;
    int rc = ompf_campaign_create(plan, argv + c->prog, &c->o, &cp, &err);
    if (rc) {
        fprintf(stderr, "ompfuse run: %s\n", err.msg);
        ompf_uphold_destroy(c->o.hold);
        ompf_plan_destroy(plan);
        return 2;
    }
    /* runs already in DIR must be this campaign's: same command, plan and
     * OpenMP environment (an array task belongs to its submitter's) */
    if (c->task < 0 &&
        ((save && (rc = same_program(c, argc, argv, cp)) != 0) ||
         ompf_campaign_check_plan(cp, &err) != 0 || ompf_campaign_check_env(cp, &err) != 0)) {
        if (!rc)
            fprintf(stderr, "ompfuse run: %s\n", err.msg);
        ompf_campaign_destroy(cp);
        ompf_uphold_destroy(c->o.hold);
        ompf_plan_destroy(plan);
        return 2;
    }
    if (save)
        save_command(c, plan, argc, argv);
    if (c->task >= 0) {
        rc = ompf_campaign_slurm_task(cp, (size_t)c->task, &err);
    } else if (c->slurm) {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        rc = ompf_campaign_execute_slurm(cp, exe, &err);
    } else {
        rc = ompf_campaign_execute(cp, &err);
    }
    if (rc)
        fprintf(stderr, "ompfuse run: %s\n", err.msg);
    ompf_campaign_destroy(cp);
    ompf_uphold_destroy(c->o.hold);
    ompf_plan_destroy(plan);
    /* 1: the campaign ran, but not every run is ok (or it was
     * interrupted); 2: it could not start or write its files */
    if (rc == 0)
        return 0;
    if (rc == OMPF_CAMPAIGN_INCOMPLETE || rc == OMPF_EPERM)
        return 1;
    return 2;
}

static int resume(const cli_t *now)
{
    char *cwd = NULL, **sv = NULL;
    int sc = 0;
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    char dir[PATH_MAX];
    if (!realpath(now->resume, dir)) {
        fprintf(stderr, "ompfuse run: --resume %s: %s\n", now->resume,
                strerror(errno));
        return 2;
    }
    if (ompf_campaign_load_args(dir, &cwd, &sc, &sv, &err) != 0) {
        fprintf(stderr, "ompfuse run: %s\n", err.msg);
        return 2;
    }
    /* relative paths in the saved command are relative to where it ran */
    if (chdir(cwd) != 0) {
        fprintf(stderr, "ompfuse run: --resume %s: cannot enter %s, where the "
                        "campaign was started: %s\n",
                now->resume, cwd, strerror(errno));
        ompf_campaign_free_args(cwd, sv);
        return 2;
    }
    char **av = calloc((size_t)sc + 2, sizeof *av);
    if (!av) {
        fprintf(stderr, "ompfuse run: out of memory\n");
        ompf_campaign_free_args(cwd, sv);
        return 2;
    }
    av[0] = "run";
    for (int i = 0; i < sc; i++)
        av[i + 1] = sv[i];
    cli_t c;
    int rc = parse(sc + 1, av, &c);
    if (rc == 0 && c.resume) {
        fprintf(stderr, "ompfuse run: %s/run.args names --resume itself\n", dir);
        rc = 2;
    }
    if (rc == 0) {
        /* this invocation's flags win over the saved ones */
        c.no_wait = now->no_wait;
        c.cancel = now->cancel;
        c.quiet |= now->quiet;
        if (now->have_poll) {
            c.have_poll = 1;
            c.poll = now->poll;
        }
        c.task = now->task;
        if (c.cancel && !c.slurm) {
            fprintf(stderr, "ompfuse run: --cancel: the campaign in %s runs "
                            "locally, not through Slurm\n", dir);
            rc = 2;
        } else {
            rc = execute(&c, sc + 1, av, 0);
        }
    }
    free(av);
    ompf_campaign_free_args(cwd, sv);
    return rc;
}

int ompf_cmd_run(int argc, char **argv)
{
    cli_t c;
    int rc = parse(argc, argv, &c);
    if (rc == 1)
        return 0;
    if (rc)
        return rc;
    if (c.resume) {
        if (c.plan_path || c.o.out_dir || c.prog < argc) {
            fprintf(stderr, "ompfuse run: --resume DIR repeats the saved "
                            "command; give no --plan, --out or program with it\n");
            return 2;
        }
        return resume(&c);
    }
    return execute(&c, argc, argv, c.task < 0);
}
