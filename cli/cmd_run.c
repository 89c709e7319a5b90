/* ompfuse run: execute every run of a plan under the OMPT tool. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "ompfuse/campaign.h"
#include "ompfuse/plan.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ompfuse run --plan PLAN --out DIR [options] -- PROGRAM [ARGS...]\n"
        "\n"
        "Runs the unmodified PROGRAM once per planned run with the OMPT tool\n"
        "(OMP_TOOL_LIBRARIES), one profile per run: DIR/<role>-<line>-r<repeat>.ompf,\n"
        "and DIR/manifest.tsv.  Running the same command again resumes: complete,\n"
        "valid profiles are kept, everything else is run again.  The program is\n"
        "first run once without the tool; if that fails, nothing starts.\n"
        "\n"
        "  --plan PLAN     plan file (ompfuse plan)\n"
        "  --out DIR       output directory (created)\n"
        "  --jobs N        runs at a time (default 1: concurrent runs compete for\n"
        "                  cores and perturb each other's counts)\n"
        "  --timeout S     kill a run after S seconds (recorded as a failure)\n"
        "  --roles LIST    only these roles (e.g. lgl,reference)\n"
        "  --tool PATH     the OMPT tool (default $OMPFUSE_TOOL, else\n"
        "                  ../lib/libompfuse.so next to this ompfuse)\n"
        "  --env KEY=VAL   extra environment for every run (repeatable)\n"
        "  --no-check      skip the plain run without the tool\n"
        "  -q, --quiet     no progress output\n"
        "  -h, --help      this text\n"
        "\n"
        "Exit: 0 all runs ok, 1 some failed (the others still ran), 2 bad usage or\n"
        "the program fails even without the tool.\n");
}

int ompf_cmd_run(int argc, char **argv)
{
    static const struct option lo[] = {
        {"plan", required_argument, 0, 'p'},
        {"out", required_argument, 0, 'o'},
        {"jobs", required_argument, 0, 'j'},
        {"timeout", required_argument, 0, 't'},
        {"roles", required_argument, 0, 'r'},
        {"tool", required_argument, 0, 'T'},
        {"env", required_argument, 0, 'E'},
        {"no-check", no_argument, 0, 'N'},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *plan_path = NULL;
    const char *envs[64];
    size_t nenv = 0;
    ompf_campaign_opts_t o;
    ompf_campaign_opts_init(&o);
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "+hqj:", lo, NULL)) != -1) {
        char *end;
        switch (ch) {
        case 'p': plan_path = optarg; break;
        case 'o': o.out_dir = optarg; break;
        case 'j': {
            long j = strtol(optarg, &end, 10);
            if (*end || j < 1 || j > 256) {
                fprintf(stderr, "ompfuse run: --jobs %s: give a number from 1 to 256\n", optarg);
                return 2;
            }
            o.jobs = (unsigned)j;
            break;
        }
        case 't': {
            double t = strtod(optarg, &end);
            if (*end || !(t > 0)) {
                fprintf(stderr, "ompfuse run: --timeout %s: give seconds > 0\n", optarg);
                return 2;
            }
            o.timeout_s = t;
            break;
        }
        case 'r': {
            /* check every role name now rather than silently running nothing */
            char *copy = strdup(optarg);
            for (char *s = strtok(copy, ","); s; s = strtok(NULL, ","))
                if (ompf_plan_role_parse(s) < 0) {
                    fprintf(stderr, "ompfuse run: --roles: unknown role '%s' (roles: lgl, "
                                    "ctc, bc, run, reference, hem, hem-delta)\n", s);
                    free(copy);
                    return 2;
                }
            free(copy);
            o.roles = optarg;
            break;
        }
        case 'T': o.tool_path = optarg; break;
        case 'E':
            if (!strchr(optarg, '=') || nenv == 64) {
                fprintf(stderr, "ompfuse run: --env %s: expected KEY=VALUE (at most 64)\n", optarg);
                return 2;
            }
            envs[nenv++] = optarg;
            break;
        case 'N': o.check_plain = 0; break;
        case 'q': o.progress = -2; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "ompfuse run: unknown or incomplete option '%s'; see 'ompfuse run --help'\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (!plan_path || !o.out_dir) {
        fprintf(stderr, "ompfuse run: --plan PLAN and --out DIR are required; see 'ompfuse run --help'\n");
        return 2;
    }
    if (optind >= argc) {
        fprintf(stderr, "ompfuse run: no program: ompfuse run --plan P --out D -- PROGRAM ARGS\n");
        return 2;
    }
    o.env = envs;
    o.n_env = nenv;
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    ompf_plan_t *plan;
    if (ompf_plan_load(plan_path, &plan, &err) != 0) {
        fprintf(stderr, "ompfuse run: %s\n", err.msg);
        return 2;
    }
    ompf_campaign_t *c;
    int rc = ompf_campaign_create(plan, argv + optind, &o, &c, &err);
    if (rc) {
        fprintf(stderr, "ompfuse run: %s\n", err.msg);
        ompf_plan_destroy(plan);
        return 2;
    }
    rc = ompf_campaign_execute(c, &err);
    if (rc)
        fprintf(stderr, "ompfuse run: %s\n", err.msg);
    ompf_campaign_destroy(c);
    ompf_plan_destroy(plan);
    if (rc == 0)
        return 0;
    if (rc == OMPF_EINVAL || rc == OMPF_ENOTFOUND)
        return 2;
    return 1;
}
