/* ompfuse plan: split events into runs for fusion, references and HEM. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <sys/stat.h>

#include "commands.h"
#include "opts.h"
#include "ompfuse/campaign.h"
#include "ompfuse/file.h"
#include "ompfuse/plan.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ompfuse plan --events LIST|all [options] [-o PLAN]\n"
        "       ompfuse plan --events auto[:N] [options] [-o PLAN] -- PROGRAM ARGS\n"
        "\n"
        "Splits events into the runs of a campaign: disjoint sets for LGL/CTC,\n"
        "an overlapping chain for BC, reference sets covering every pair of\n"
        "events (each repeated R times) and, with --hem, the multiplexed runs.\n"
        "Candidate sets are opened for real on this machine.  The rules:\n"
        "docs/semantics.md, section Planning.\n"
        "\n"
        "  --events LIST        comma-separated libpfm4 names, or \"all\" (every\n"
        "                       event that opens here)\n"
        "  --events auto[:N]    choose N (default 4) events of PROGRAM that vary per\n"
        "                       XU and are not twins, from pilot runs (uprobes on\n"
        "                       its source lines, tracepoints, software events; root;\n"
        "                       docs/events.md)\n"
        "  --auto-dir DIR       where the pilots run and the choice is saved\n"
        "                       (DIR/events-auto.txt, reused when present; default\n"
        "                       ompfuse-auto)\n"
        "  --exit-code L        with --events auto: PROGRAM's normal exit codes\n"
        "                       (default 0; e.g. 3, 0,3, 1-9 or any)\n"
        "  --slots N            counter limit (default: $OMPFUSE_PMU_SLOTS, else\n"
        "                       the PMU's general counters; required without a\n"
        "                       hardware PMU)\n"
        "  --for lgl|bc|both|none  fusion runs to plan (default both)\n"
        "  --references R       repeats of each reference set (default 3, >= 2;\n"
        "                       0 = no reference runs)\n"
        "  --hem                add hem and hem-delta runs with all events\n"
        "  --hem-repeats N      repeats of each HEM line (default 1)\n"
        "  --overlap N          events each BC set shares with its predecessors\n"
        "                       (default 1)\n"
        "  --pilot PROFILE      profile(s) whose correlations choose the BC\n"
        "                       overlap (repeatable)\n"
        "  --assume-compatible  do not open anything: every set of at most N\n"
        "                       events is assumed to fit (what-if planning)\n"
        "  -o, --output PLAN    plan file to write (default: stdout)\n"
        "  -h, --help           this text\n" OMPF_CLI_EXIT_HELP);
}

static size_t split_list(char *s, char **items, size_t max)
{
    size_t n = 0;
    for (char *p = s; p && *p && n < max;) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        while (*p == ' ')
            p++;
        char *e = p + strlen(p);
        while (e > p && e[-1] == ' ')
            *--e = '\0';
        if (*p)
            items[n++] = p;
        p = c ? c + 1 : NULL;
    }
    return n;
}

/* Every event of this machine that opens on its own ("all"). */
static int all_events(char ***out, size_t *n, ompf_error_t *err)
{
    ompf_catalog_t *c;
    int rc = ompf_catalog_load(&c, err);
    if (rc)
        return rc;
    size_t ne = ompf_catalog_event_count(c);
    char **v = calloc(ne + 1, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; v && i < ne; i++) {
        const ompf_event_desc_t *e = ompf_catalog_event(c, i);
        if (e->equiv)
            continue; /* named by its first alias below */
        const ompf_pmu_desc_t *pm = ompf_catalog_pmu(c, e->pmu);
        if (!pm->kernel_present)
            continue;
        /* prefer the short perf-tool spelling (perf::TASK-CLOCK) */
        const char *name = e->name;
        const char *bare = strstr(e->name, "::") + 2;
        for (size_t j = i + 1; j < ne; j++) {
            const ompf_event_desc_t *a = ompf_catalog_event(c, j);
            if (a->pmu == e->pmu && a->equiv && !strcmp(a->equiv, bare)) {
                name = a->name;
                break;
            }
        }
        const char *one[1] = {name};
        if (!ompf_plan_probe_compat(one, 1, NULL, NULL, 0))
            continue;
        v[k++] = strdup(name);
    }
    ompf_catalog_destroy(c);
    if (!v)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    if (k == 0) {
        free(v);
        return ompf_error_set(err, OMPF_EUNSUPP,
                              "no event opens on this machine; check "
                              "`ompfuse events --probe` and "
                              "/proc/sys/kernel/perf_event_paranoid");
    }
    *out = v;
    *n = k;
    return 0;
}

int ompf_cmd_plan(int argc, char **argv)
{
    static const struct option lo[] = {
        {"events", required_argument, 0, 'e'},
        {"slots", required_argument, 0, 's'},
        {"for", required_argument, 0, 'f'},
        {"references", required_argument, 0, 'r'},
        {"hem", no_argument, 0, 'H'},
        {"hem-repeats", required_argument, 0, 'R'},
        {"overlap", required_argument, 0, 'v'},
        {"pilot", required_argument, 0, 'p'},
        {"assume-compatible", no_argument, 0, 'A'},
        {"output", required_argument, 0, 'o'},
        {"auto-dir", required_argument, 0, 'D'},
        {"exit-code", required_argument, 0, 'x'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *events = NULL, *output = "-", *forwhat = "both", *auto_dir = "ompfuse-auto";
    const char *pilots[64];
    size_t npilot = 0;
    long slots = -1;
    int assume = 0;
    ompf_exit_set_t exit_ok;
    memset(&exit_ok, 0, sizeof exit_ok);
    ompf_plan_opts_t o;
    ompf_plan_opts_init(&o);
    ompf_cli_opts_t po;
    ompf_cli_opts_start(&po, "plan", argc, argv, "ho:", lo);
    int ch;
    while ((ch = ompf_cli_opts_next(&po)) != -1) {
        char *end;
        switch (ch) {
        case 'e': events = optarg; break;
        case 's':
            slots = strtol(optarg, &end, 10);
            if (*end || slots < 1 || slots > 64) {
                fprintf(stderr, "ompfuse plan: --slots %s: give a number from 1 to 64\n", optarg);
                return 2;
            }
            break;
        case 'f': forwhat = optarg; break;
        case 'r': {
            long r = strtol(optarg, &end, 10);
            if (*end || r < 0 || r == 1 || r > 1000) {
                fprintf(stderr, "ompfuse plan: --references %s: give 0 (none) or a "
                                "repeat count of at least 2 (EPD needs two repeats)\n",
                        optarg);
                return 2;
            }
            o.references = (unsigned)r;
            break;
        }
        case 'H': o.hem = 1; break;
        case 'R': {
            long r = strtol(optarg, &end, 10);
            if (*end || r < 1 || r > 1000) {
                fprintf(stderr, "ompfuse plan: --hem-repeats %s: give a number >= 1\n", optarg);
                return 2;
            }
            o.hem_repeats = (unsigned)r;
            break;
        }
        case 'v': {
            long r = strtol(optarg, &end, 10);
            if (*end || r < 1 || r > 63) {
                fprintf(stderr, "ompfuse plan: --overlap %s: give a number >= 1\n", optarg);
                return 2;
            }
            o.bc_overlap = (unsigned)r;
            break;
        }
        case 'p':
            if (npilot == 64) {
                fprintf(stderr, "ompfuse plan: at most 64 --pilot profiles\n");
                return 2;
            }
            pilots[npilot++] = optarg;
            break;
        case 'A': assume = 1; break;
        case 'D': auto_dir = optarg; break;
        case 'x':
            if (ompf_exit_set_parse(optarg, &exit_ok)) {
                fprintf(stderr, "ompfuse plan: --exit-code %s: give the program's normal exit "
                                "codes, 0 to 255 (3, 0,3, 1-9 or any)\n", optarg);
                return 2;
            }
            break;
        case 'o': output = optarg; break;
        case 'h': usage(stdout); return 0;
        default: /* bad option, reported */
            return 2;
        }
    }
    int want = events ? ompf_cli_auto_want(events) : 0;
    char **prog = optind < argc ? argv + optind : NULL;
    if (prog && !strcmp(prog[0], "--"))
        prog++;
    if (prog && !prog[0])
        prog = NULL;
    if (want < 0) {
        fprintf(stderr, "ompfuse plan: --events %s: give auto or auto:N with N from 2 to 16\n",
                events);
        return 2;
    }
    if (optind < argc && !want) {
        fprintf(stderr, "ompfuse plan: unexpected argument '%s'; see 'ompfuse plan --help'\n",
                argv[optind]);
        return 2;
    }
    if (!want && !ompf_exit_set_is_default(&exit_ok)) {
        fprintf(stderr, "ompfuse plan: --exit-code is for the pilot runs of --events auto; "
                        "give it to ompfuse run or campaign\n");
        return 2;
    }
    if (want && !prog) {
        fprintf(stderr, "ompfuse plan: --events auto chooses from runs of the program: give "
                        "it after the options, as -- PROGRAM ARGS\n");
        return 2;
    }
    if (!events) {
        fprintf(stderr, "ompfuse plan: say which events with --events LIST (or --events all)\n");
        return 2;
    }
    if (!strcmp(forwhat, "lgl") || !strcmp(forwhat, "ctc"))
        o.for_lgl = 1, o.for_bc = 0;
    else if (!strcmp(forwhat, "bc"))
        o.for_lgl = 0, o.for_bc = 1;
    else if (!strcmp(forwhat, "both"))
        o.for_lgl = 1, o.for_bc = 1;
    else if (!strcmp(forwhat, "none"))
        o.for_lgl = 0, o.for_bc = 0;
    else {
        fprintf(stderr, "ompfuse plan: --for %s: expected lgl, bc, both or none\n", forwhat);
        return 2;
    }
    if (assume)
        o.compat = ompf_plan_assume_compat;

    /* the counter limit */
    const char *slot_src = "--slots";
    if (slots < 0) {
        const char *env = getenv("OMPFUSE_PMU_SLOTS");
        if (env && *env) {
            char *end;
            slots = strtol(env, &end, 10);
            if (*end || slots < 1 || slots > 64) {
                fprintf(stderr, "ompfuse plan: OMPFUSE_PMU_SLOTS=%s is not a number from 1 to 64\n", env);
                return 2;
            }
            slot_src = "OMPFUSE_PMU_SLOTS";
        }
    }
    if (slots < 0 && !assume) {
        ompf_catalog_t *cat;
        ompf_error_t e;
        if (ompf_catalog_load(&cat, &e) == 0) {
            if (ompf_catalog_has_hw_pmu(cat) && ompf_catalog_hw_counters(cat) > 0) {
                slots = ompf_catalog_hw_counters(cat);
                slot_src = "the PMU's general counters";
            }
            ompf_catalog_destroy(cat);
        }
        if (slots < 0) {
            fprintf(stderr,
                    "ompfuse plan: this machine has no hardware PMU (only software "
                    "events, which the kernel never multiplexes), so there is no "
                    "counter limit to plan for: give the limit to emulate with "
                    "--slots N or OMPFUSE_PMU_SLOTS=N\n");
            return 2;
        }
    }
    if (slots < 0) {
        fprintf(stderr, "ompfuse plan: --assume-compatible needs --slots N\n");
        return 2;
    }
    o.slots = (unsigned)slots;

    /* the events */
    char *copy = NULL;
    char **list = NULL;
    char *items[256];
    size_t n = 0;
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    int rc = 0;
    char **chosen = NULL;
    char found[4096];
    if (want) {
        if (ompf_find_program(prog[0], found, sizeof found)) {
            fprintf(stderr, "ompfuse plan: program '%s' not found or not executable\n", prog[0]);
            return 2;
        }
        prog[0] = found;
        if (mkdir(auto_dir, 0777) && errno != EEXIST) {
            fprintf(stderr, "ompfuse plan: cannot create %s: %s\n", auto_dir, strerror(errno));
            return 2;
        }
        if (ompf_cli_auto_events("ompfuse plan", prog, auto_dir, (unsigned)want, o.slots,
                                 NULL, 0, &exit_ok, &chosen, &n))
            return 2;
        for (size_t i = 0; i < n && i < 256; i++)
            items[i] = chosen[i];
    } else if (!strcmp(events, "all")) {
        if (assume) {
            fprintf(stderr, "ompfuse plan: --events all lists this machine's events; "
                            "with --assume-compatible name the events\n");
            return 2;
        }
        if (all_events(&list, &n, &err) != 0) {
            fprintf(stderr, "ompfuse plan: %s\n", err.msg);
            return 2;
        }
        for (size_t i = 0; i < n && i < 256; i++)
            items[i] = list[i];
        if (n > 256)
            n = 256;
    } else {
        copy = strdup(events);
        if (!copy)
            return 2;
        n = split_list(copy, items, 256);
        if (n == 0) {
            fprintf(stderr, "ompfuse plan: --events is empty\n");
            free(copy);
            return 2;
        }
        if (!assume && (rc = ompf_plan_check_names((const char *const *)items, n, &err)) != 0) {
            fprintf(stderr, "ompfuse plan: %s\n", err.msg);
            free(copy);
            return 2;
        }
    }

    /* libpfm4 knows the model's counters, not how many are free for us:
     * measure it on the events themselves */
    char measured[160];
    if (!strcmp(slot_src, "the PMU's general counters")) {
        size_t m = ompf_plan_measure_slots((const char *const *)items, n,
                                           o.slots, o.compat, o.compat_ctx);
        if (m >= 1 && m < o.slots && m < n) {
            snprintf(measured, sizeof measured,
                     "a measurement: at most %zu of these events count at "
                     "once; libpfm4 lists %u general counters", m, o.slots);
            o.slots = (unsigned)m;
            slot_src = measured;
        }
    }

    /* pilot correlations */
    double *corr = NULL;
    ompf_profile_t *prof[64];
    size_t nprof = 0;
    for (size_t i = 0; i < npilot; i++) {
        ompf_read_info_t info;
        rc = ompf_profile_read(pilots[i], &prof[nprof], &info, &err);
        if (rc == OMPF_ETRUNC) {
            fprintf(stderr, "ompfuse plan: note: pilot %s is truncated (%s); using what it has\n",
                    pilots[i], info.note);
            rc = 0;
        }
        if (rc) {
            fprintf(stderr, "ompfuse plan: %s\n", err.msg);
            for (size_t k = 0; k < nprof; k++)
                ompf_profile_destroy(prof[k]);
            free(copy);
            return 2;
        }
        nprof++;
    }
    if (nprof) {
        corr = malloc(n * n * sizeof *corr);
        if (!corr ||
            ompf_plan_correlation((const ompf_profile_t *const *)prof, nprof,
                                  (const char *const *)items, n, corr) != 0) {
            fprintf(stderr, "ompfuse plan: out of memory\n");
            return 2;
        }
        size_t known = 0;
        for (size_t i = 0; i < n * n; i++)
            known += !isnan(corr[i]);
        fprintf(stderr, "ompfuse plan: pilot correlations known for %zu of %zu event pairs\n",
                (known - n) / 2, n * (n - 1) / 2);
        o.corr = corr;
    }

    ompf_plan_t *plan = NULL;
    ompf_plan_stats_t st;
    rc = ompf_plan_build((const char *const *)items, n, &o, &plan, &st, &err);
    if (rc == 0 && o.references && n >= 2)
        rc = ompf_plan_check_pairs(plan, o.slots, &err);
    if (rc == 0 && o.for_bc)
        rc = ompf_plan_check_chain(plan, &err);
    if (rc == 0) {
        ompf_stale_tmp_remove(output, stderr, "ompfuse plan");
        rc = ompf_plan_save(plan, output, &err);
    }
    if (rc == 0) {
        fprintf(stderr, "ompfuse plan: %zu events, %u slots (from %s)%s\n", n, o.slots,
                slot_src, assume ? ", compatibility assumed" : ", sets opened for real");
        if (o.for_lgl)
            fprintf(stderr, "  lgl/ctc:    %zu disjoint set%s\n", st.lgl_sets,
                    st.lgl_sets == 1 ? "" : "s");
        if (o.for_bc)
            fprintf(stderr, "  bc:         %zu overlapping set%s\n", st.bc_sets,
                    st.bc_sets == 1 ? "" : "s");
        if (o.references && n >= 2)
            fprintf(stderr,
                    "  references: %zu set%s x %u repeats = %zu runs cover all %zu "
                    "pairs (one set per pair: %zu sets, %zu runs)\n",
                    st.ref_sets, st.ref_sets == 1 ? "" : "s", o.references, st.ref_runs,
                    st.pairs, st.naive_ref_sets, st.naive_ref_sets * o.references);
        if (st.pairs_uncoverable)
            fprintf(stderr, "  WARNING: %zu pairs cannot be counted together: no reference for them\n",
                    st.pairs_uncoverable);
        if (o.hem)
            fprintf(stderr, "  hem:        hem and hem-delta, %u repeat%s each\n",
                    o.hem_repeats, o.hem_repeats == 1 ? "" : "s");
        size_t nr = ompf_plan_total_runs(plan, -1);
        fprintf(stderr, "  total:      %zu run%s%s%s\n", nr, nr == 1 ? "" : "s",
                strcmp(output, "-") ? " -> " : "", strcmp(output, "-") ? output : "");
    } else {
        fprintf(stderr, "ompfuse plan: %s\n", err.msg);
    }
    ompf_plan_destroy(plan);
    for (size_t k = 0; k < nprof; k++)
        ompf_profile_destroy(prof[k]);
    free(corr);
    free(copy);
    if (list) {
        for (size_t i = 0; list[i]; i++)
            free(list[i]);
        free(list);
    }
    for (size_t i = 0; chosen && i < n; i++)
        free(chosen[i]);
    free(chosen);
    return rc == 0 ? 0 : 2;
}
