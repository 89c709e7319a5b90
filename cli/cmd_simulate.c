/* ompfuse simulate: synthetic profiles with a known ground truth
 * (docs/simulator.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "opts.h"
#include "ompfuse/file.h"
#include "ompfuse/progress.h"
#include "ompfuse/simulate.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ompfuse simulate --model FILE|builtin:NAME (--runs PLAN | --plan-auto SLOTS)\n"
            "                        -o DIR [--seed N] [--set KEY=VALUE]...\n"
            "       ompfuse simulate --list-models\n"
            "       ompfuse simulate --show-model FILE|builtin:NAME [--set KEY=VALUE]...\n"
            "       ompfuse simulate --score TRUTH PROFILE...\n"
            "\n"
            "Writes the profiles a campaign would record for a synthetic program (one file\n"
            "per run: <group|role>-NNN.ompf), truth.ompf with every event of every XU of\n"
            "every run, plan.txt, model.txt and runs.tsv (one line per run).\n"
            "\n"
            "  --model SPEC         model file (key = value lines) or builtin:zero|low|high\n"
            "  --runs PLAN          plan file: '<role> <repeat> <events>' lines, roles run,\n"
            "                       reference, hem, hem-delta; events comma-separated or 'all'\n"
            "  --plan-auto SLOTS    generate LGL, BC-chain, reference and HEM runs instead\n"
            "  --ref-repeats R      repeats of each reference set with --plan-auto (default 3)\n"
            "  --hem-repeats R      repeats of the hem and hem-delta runs (default 1, 0: none)\n"
            "  -o, --output DIR     output directory (created if missing)\n"
            "  --seed N             seed of the run-to-run randomness (default 1)\n"
            "  --set KEY=VALUE      override a model parameter (repeatable)\n"
            "  --no-truth           do not write truth.ompf\n"
            "  --truth-skip-references  leave reference runs out of the truth (smaller)\n"
            "  --max-size SIZE      refuse to write more than about SIZE bytes (suffix K, M,\n"
            "                       G: powers of 1000; default 1G): prints the estimate\n"
            "  -y, --yes            write even when the estimate exceeds --max-size\n"
            "  --score TRUTH P...   per-XU error of profiles (fused or simulated runs)\n"
            "  -q, --quiet          no progress on stderr\n"
            "  -h, --help           this text\n" OMPF_CLI_EXIT_HELP);
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

/* SIZE with an optional K/M/G/T suffix (powers of 1000). */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        return -1;
    double v = strtod(s, &end);
    const char *sfx = "KMGT";
    const char *k = *end ? strchr(sfx, *end) : NULL;
    if (errno || end == s || (*end && (!k || end[1])) || !(v >= 0) || v > 1e18)
        return -1;
    for (const char *q = sfx; k && q <= k; q++)
        v *= 1000;
    *out = (uint64_t)v;
    return 0;
}

static void human(uint64_t b, char *buf, size_t n)
{
    if (b >= 1000000000u)
        snprintf(buf, n, "%.2f GB", (double)b / 1e9);
    else if (b >= 1000000u)
        snprintf(buf, n, "%.1f MB", (double)b / 1e6);
    else
        snprintf(buf, n, "%.1f kB", (double)b / 1e3);
}

/* Estimates the output; above max_size refuses (2) unless yes.  A refusal
 * rather than a warning: simulate runs unattended in scripts, where a
 * warning scrolls by while the disk fills. */
static int check_size(const ompf_sim_model_t *m, const ompf_sim_plan_t *plan, uint64_t seed,
                      int truth_mode, uint64_t max_size, int yes, int quiet, const char *outdir)
{
    ompf_sim_estimate_t est;
    ompf_error_t err = {0, ""};
    if (ompf_sim_estimate(m, plan, seed, truth_mode, max_size, &est, &err)) {
        fprintf(stderr, "ompfuse simulate: estimating the output size: %s\n", err.msg);
        return 2;
    }
    if (est.bound_only || est.bytes <= max_size)
        return 0;
    char all[32], runs[32], truth[32], lim[32];
    human(est.bytes, all, sizeof all);
    human(est.run_bytes, runs, sizeof runs);
    human(est.truth_bytes, truth, sizeof truth);
    human(max_size, lim, sizeof lim);
    if (yes) {
        if (!quiet)
            fprintf(stderr, "ompfuse simulate: writing about %s in %llu files to %s\n", all,
                    (unsigned long long)est.files, outdir);
        return 0;
    }
    fprintf(stderr,
            "ompfuse simulate: this would write about %s in %llu files to %s (runs %s, "
            "truth %s), more than --max-size %s; pass --yes to write it, or make it smaller "
            "(--no-truth, --truth-skip-references, --ref-repeats, --set xus=N)\n",
            all, (unsigned long long)est.files, outdir, runs, truth, lim);
    return 2;
}

static int mkdir_p(const char *dir)
{
    char buf[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) && errno != EEXIST)
                return -1;
            buf[i] = c;
        }
    }
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

typedef struct kv {
    char *key, *value;
} kv_t;

static int apply_sets(ompf_sim_model_t *m, kv_t *sets, int n)
{
    for (int i = 0; i < n; i++) {
        ompf_error_t err = {0, ""};
        if (ompf_sim_model_set(m, sets[i].key, sets[i].value, &err)) {
            fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
            return 2;
        }
    }
    return 0;
}

static int cmd_score(int argc, char **argv, int i)
{
    if (argc - i < 2) {
        fprintf(stderr, "ompfuse simulate: --score needs TRUTH and at least one PROFILE\n");
        return 2;
    }
    ompf_error_t err = {0, ""};
    ompf_profile_t *truth = NULL;
    int rc = ompf_profile_read(argv[i], &truth, NULL, &err);
    if (rc) {
        if (rc == OMPF_ETRUNC)
            ompf_profile_destroy(truth);
        fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
        return 2;
    }
    printf("%-32s %8s %8s %9s %8s %6s %10s %10s %10s\n", "profile", "xus", "scored",
           "unmatched", "missing", "events", "median", "mean", "p90");
    int status = 0;
    for (int j = i + 1; j < argc; j++) {
        ompf_profile_t *p = NULL;
        ompf_sim_score_t sc;
        err.code = 0;
        rc = ompf_profile_read(argv[j], &p, NULL, &err);
        if (rc) {
            if (rc == OMPF_ETRUNC)
                ompf_profile_destroy(p);
            fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
            status = 2;
            continue;
        }
        rc = ompf_sim_score(p, truth, &sc, &err);
        ompf_profile_destroy(p);
        if (rc) {
            fprintf(stderr, "ompfuse simulate: %s: %s\n", argv[j], err.msg);
            status = 2;
            continue;
        }
        printf("%-32s %8" PRIu64 " %8" PRIu64 " %9" PRIu64 " %8" PRIu64 " %6u %10.4g %10.4g %10.4g\n",
               argv[j], sc.xus, sc.scored, sc.unmatched, sc.missing, sc.events, sc.median,
               sc.mean, sc.p90);
    }
    ompf_profile_destroy(truth);
    return status;
}

static int write_text(const char *path, const ompf_sim_model_t *m, const ompf_sim_plan_t *plan)
{
    ompf_error_t err = {0, ""};
    ompf_outfile_t *o;
    FILE *f;
    ompf_stale_tmp_remove(path, stderr, "ompfuse simulate");
    if (ompf_outfile_open(path, &o, &f, &err)) {
        fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
        return 2;
    }
    int rc = plan ? ompf_sim_plan_write(plan, m, f) : ompf_sim_model_write(m, f);
    if (rc) {
        ompf_outfile_abort(o);
        fprintf(stderr, "ompfuse simulate: %s: write failed: %s\n", path, strerror(errno));
        return 2;
    }
    if (ompf_outfile_commit(o, &err)) {
        fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
        return 2;
    }
    return 0;
}

int ompf_cmd_simulate(int argc, char **argv)
{
    const char *model_spec = NULL, *plan_path = NULL, *outdir = NULL, *show = NULL;
    uint64_t seed = 1, slots = 0, ref_repeats = 3, hem_repeats = 1, max_size = 1000000000u;
    int no_truth = 0, skip_refs = 0, quiet = 0, list = 0, yes = 0;
    kv_t sets[256];
    int n_sets = 0;
    static const struct option lo[] = {
        {"score", no_argument, 0, 'c'},
        {"list-models", no_argument, 0, 'l'},
        {"no-truth", no_argument, 0, 'n'},
        {"truth-skip-references", no_argument, 0, 'k'},
        {"quiet", no_argument, 0, 'q'},
        {"model", required_argument, 0, 'm'},
        {"show-model", required_argument, 0, 'M'},
        {"runs", required_argument, 0, 'r'},
        {"output", required_argument, 0, 'o'},
        {"seed", required_argument, 0, 's'},
        {"plan-auto", required_argument, 0, 'P'},
        {"ref-repeats", required_argument, 0, 'R'},
        {"hem-repeats", required_argument, 0, 'H'},
        {"set", required_argument, 0, 'S'},
        {"yes", no_argument, 0, 'y'},
        {"max-size", required_argument, 0, 'X'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int score = 0, bad = 0;
    ompf_cli_opts_t po;
    ompf_cli_opts_start(&po, "simulate", argc, argv, "hqo:y", lo);
    int ch;
    while (!bad && (ch = ompf_cli_opts_next(&po)) != -1) {
        const char *v = optarg;
        switch (ch) {
        case 'h':
            usage(stdout);
            bad = -1;
            break;
        case 'c': score = 1; break;
        case 'l': list = 1; break;
        case 'n': no_truth = 1; break;
        case 'k': skip_refs = 1; break;
        case 'q': quiet = 1; break;
        case 'y': yes = 1; break;
        case 'X':
            if (parse_size(v, &max_size)) {
                fprintf(stderr, "ompfuse simulate: --max-size '%s' is not a size (e.g. 500M, 2G)\n", v);
                bad = 1;
            }
            break;
        case 'm': model_spec = v; break;
        case 'M': show = v; break;
        case 'r': plan_path = v; break;
        case 'o': outdir = v; break;
        case 's':
            if (parse_u64(v, &seed)) {
                fprintf(stderr, "ompfuse simulate: --seed '%s' is not a non-negative integer\n", v);
                bad = 1;
            }
            break;
        case 'P': case 'R': case 'H': {
            uint64_t x;
            if (parse_u64(v, &x) || x > 100000) {
                fprintf(stderr, "ompfuse simulate: --%s '%s' is not an integer from 0 to 100000\n",
                        ch == 'P' ? "plan-auto" : ch == 'R' ? "ref-repeats" : "hem-repeats", v);
                bad = 1;
                break;
            }
            *(ch == 'P' ? &slots : ch == 'R' ? &ref_repeats : &hem_repeats) = x;
            break;
        }
        case 'S': {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || n_sets == 256) {
                fprintf(stderr, "ompfuse simulate: --set '%s': expected KEY=VALUE\n", v);
                bad = 1;
                break;
            }
            sets[n_sets].key = strndup(v, (size_t)(eq - v));
            sets[n_sets].value = (char *)eq + 1;
            if (!sets[n_sets].key) {
                fprintf(stderr, "ompfuse simulate: out of memory\n");
                bad = 1;
                break;
            }
            n_sets++;
            break;
        }
        default: bad = 1;
        }
    }
    if (!bad && !score && optind < argc) {
        fprintf(stderr, "ompfuse simulate: unexpected argument '%s'; see --help\n", argv[optind]);
        bad = 1;
    }
    if (bad || score) {
        for (int k = 0; k < n_sets; k++)
            free(sets[k].key);
        return bad < 0 ? 0 : bad ? 2 : cmd_score(argc, argv, optind);
    }
    int status = 0;
    ompf_sim_model_t *m = NULL;
    ompf_sim_plan_t *plan = NULL;
    ompf_sim_t *sim = NULL;
    ompf_profile_t *truth = NULL;
    FILE *tsv = NULL;
    ompf_outfile_t *tsv_o = NULL;
    ompf_error_t err = {0, ""};
    if (list) {
        for (const char *const *n = ompf_sim_builtin_names(); *n; n++)
            printf("builtin:%-6s %s\n", *n, ompf_sim_builtin_summary(*n));
        goto done;
    }
    if (show) {
        if (ompf_sim_model_load(show, &m, &err)) {
            fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
            status = 2;
        } else if (!(status = apply_sets(m, sets, n_sets))) {
            ompf_sim_model_write(m, stdout);
            printf("# events:\n");
            for (uint32_t e = 0; e < ompf_sim_model_event_count(m); e++) {
                char nm[80];
                ompf_sim_event_name(m, e, nm, sizeof nm);
                printf("#   ev%-3u %s\n", e, nm);
            }
        }
        goto done;
    }
    if (!model_spec || !outdir || (!plan_path == !slots)) {
        fprintf(stderr, "ompfuse simulate: need --model, -o DIR and one of --runs PLAN or "
                        "--plan-auto SLOTS; see --help\n");
        status = 2;
        goto done;
    }
    if (ompf_sim_model_load(model_spec, &m, &err)) {
        fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
        status = 2;
        goto done;
    }
    if ((status = apply_sets(m, sets, n_sets)))
        goto done;
    if (plan_path ? ompf_sim_plan_load(plan_path, m, &plan, &err)
                  : ompf_sim_plan_auto(m, (uint32_t)slots, (uint32_t)ref_repeats,
                                       (uint32_t)hem_repeats, &plan, &err)) {
        fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
        status = 2;
        goto done;
    }
    if ((status = check_size(m, plan, seed,
                             no_truth    ? OMPF_SIM_TRUTH_NONE
                             : skip_refs ? OMPF_SIM_TRUTH_NO_REFERENCES
                                         : OMPF_SIM_TRUTH_ALL,
                             max_size, yes, quiet, outdir)))
        goto done;
    if (mkdir_p(outdir)) {
        fprintf(stderr, "ompfuse simulate: cannot create output directory '%s': %s\n", outdir,
                strerror(errno));
        status = 2;
        goto done;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/model.txt", outdir);
    if ((status = write_text(path, m, NULL)))
        goto done;
    snprintf(path, sizeof path, "%s/plan.txt", outdir);
    if ((status = write_text(path, m, plan)))
        goto done;
    if (ompf_sim_create(m, seed, &sim, &err) ||
        (!no_truth && ompf_sim_truth_create(sim, &truth, &err))) {
        fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
        status = 2;
        goto done;
    }
    snprintf(path, sizeof path, "%s/runs.tsv", outdir);
    ompf_stale_tmp_remove(path, stderr, "ompfuse simulate");
    if (ompf_outfile_open(path, &tsv_o, &tsv, &err)) {
        fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
        status = 2;
        goto done;
    }
    fprintf(tsv, "file\trun_no\trole\tgroup\tline\trepeat\trun_id\tevents\n");
    uint32_t run_no = 0, counters[64] = {0};
    char prefixes[64][40];
    size_t n_prefix = 0, total_runs = ompf_sim_plan_runs(plan);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ompf_progress_t *prog = ompf_progress_create("ompfuse simulate", total_runs, "runs",
                                                 ompf_progress_wanted(quiet));
    for (size_t li = 0; li < ompf_sim_plan_count(plan) && !status; li++) {
        const ompf_sim_plan_line_t *ln = ompf_sim_plan_get(plan, li);
        const char *prefix = ln->group[0] ? ln->group : ompf_sim_role_name(ln->role);
        char pre[40];
        snprintf(pre, sizeof pre, "%s", prefix);
        size_t pi = 0;
        while (pi < n_prefix && strcmp(prefixes[pi], pre))
            pi++;
        if (pi == n_prefix) {
            if (n_prefix == 64)
                pi = 63;
            else
                snprintf(prefixes[n_prefix++], sizeof prefixes[0], "%s", pre);
        }
        for (uint32_t r = 0; r < ln->repeat && !status; r++, run_no++) {
            ompf_profile_t *p = NULL;
            int to_truth = truth && !(skip_refs && ln->role == OMPF_SIM_REFERENCE);
            char file[128];
            snprintf(file, sizeof file, "%s-%03u.ompf", pre, ++counters[pi]);
            if (ompf_sim_execute(sim, run_no, ln->role, ln->events, ln->n_events, &p,
                                 to_truth ? truth : NULL, &err)) {
                fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
                status = 2;
                break;
            }
            if (to_truth)
                ompf_sim_truth_set_file(truth, file);
            snprintf(path, sizeof path, "%s/%s", outdir, file);
            ompf_stale_tmp_remove(path, stderr, "ompfuse simulate");
            if (ompf_profile_write(p, path, &err)) {
                fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
                ompf_profile_destroy(p);
                status = 2;
                break;
            }
            fprintf(tsv, "%s\t%u\t%s\t%s\t%zu\t%u\t%016" PRIx64 "\t", file, run_no,
                    ompf_sim_role_name(ln->role), ln->group, li + 1, r + 1,
                    ompf_profile_run_id(p));
            for (uint32_t e = 0; e < ln->n_events; e++) {
                char nm[80];
                ompf_sim_event_name(m, ln->events[e], nm, sizeof nm);
                fprintf(tsv, "%s%s", e ? "," : "", nm);
            }
            fputc('\n', tsv);
            ompf_profile_destroy(p);
            ompf_progress_update(prog, run_no + 1);
        }
    }
    ompf_progress_destroy(prog);
    if (!status && truth) {
        snprintf(path, sizeof path, "%s/truth.ompf", outdir);
        ompf_stale_tmp_remove(path, stderr, "ompfuse simulate");
        if (ompf_profile_write(truth, path, &err)) {
            fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
            status = 2;
        }
    }
    if (!status) {
        if (ompf_outfile_commit(tsv_o, &err)) {
            fprintf(stderr, "ompfuse simulate: %s\n", err.msg);
            status = 2;
        }
        tsv_o = NULL;
    }
    if (!status && !quiet && isatty(2)) {
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        fprintf(stderr, "ompfuse simulate: %zu runs of %u XUs written to %s in %.2f s\n",
                total_runs, ompf_sim_model_xu_count(m), outdir,
                (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    }
done:
    if (tsv_o)
        ompf_outfile_abort(tsv_o);
    ompf_profile_destroy(truth);
    ompf_sim_destroy(sim);
    ompf_sim_plan_destroy(plan);
    ompf_sim_model_destroy(m);
    for (int i = 0; i < n_sets; i++)
        free(sets[i].key);
    return status;
}
