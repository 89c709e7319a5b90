/* ompfuse report: one self-contained HTML file with the EPD bars, TMD
 * heatmaps and XU scatter plots of one or more groups (benchmarks) of
 * targets evaluated against their references (evaluate/report.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "opts.h"
#include "ompfuse/evaluate.h"
#include "ompfuse/file.h"
#include "ompfuse/progress.h"

#define PROG "ompfuse report"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ompfuse report -o OUT.html [options]\n"
            "         [--group NAME] --references REF... -- TARGET...\n"
            "        [--group NAME  --references REF... -- TARGET...]...\n"
            "\n"
            "Writes one self-contained HTML file (inline SVG, no scripts, no network)\n"
            "with, per group: a table of EPD and Correlation Error per target, EPD as\n"
            "bars with the calibration line at 1.0, a heatmap of calibrated TMD per\n"
            "event pair for every target, and scatter plots of the XUs of every\n"
            "target against a reference run for one event pair.\n"
            "\n"
            "Inputs: '--group NAME' starts a section (e.g. one benchmark); the\n"
            "--references and targets after it belong to it.  Without --group there\n"
            "is one section named after the references' program.  --references (-r)\n"
            "and --targets (-t) take every following argument up to the next\n"
            "option; '--' ends a --references list, the next arguments are targets.\n"
            "A target may be NAME=PATH; otherwise it is named by its fused strategy\n"
            "(ctc, lgl, bc, ...), its HEM mode, or its file name.  Directories stand\n"
            "for their *.ompf files; CSV files are imported.\n"
            "\n"
            "  -o, --output FILE    HTML file to write (required)\n"
            "  --title TEXT         page title (default 'ompfuse report')\n"
            "  --pair A,B           event pair of the scatter plots (default: the\n"
            "                       pair whose TMD differs most between targets)\n"
            "  --bins N             intervals per event (default 10)\n"
            "  --per-type           TMD per construct (as evaluate --per-type)\n"
            "  --correlation-error  add Correlation Error to the table\n"
            "  --allow-partial      evaluate the pairs that can be, list the others\n"
            "  --ignore-program     accept profiles whose program/argv differ\n"
            "  -j, --jobs N         threads (default: online CPUs)\n"
            "  --any-mode           take every profile as a reference, whatever its\n"
            "                       mode (as evaluate --any-mode)\n"
            "  -q, --quiet          no progress line\n"
            "  -h, --help           this help\n"
            "\n"
            "A target that cannot be evaluated is shown as such in the report,\n"
            "which is still written, and the exit status is 2.\n" OMPF_CLI_EXIT_HELP);
}

typedef struct {
    char *name;
    const char **refs, **targets;
    size_t nrefs, ntargets;
    ompf_inputs_t rin, tin;
    const ompf_profile_t **rp;
    ompf_eval_t *ev;
    ompf_eval_result_t **res;
    char **errors;
    ompf_report_target_t *rt;
} group_t;

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Matches an evaluation event by full name or by the part after "::". */
static int match_event(const ompf_eval_t *ev, const char *want, size_t len)
{
    for (size_t e = 0; e < ompf_eval_event_count(ev); e++) {
        const char *n = ompf_eval_event_name(ev, e);
        const char *s = strstr(n, "::");
        if ((strlen(n) == len && !strncmp(n, want, len)) ||
            (s && strlen(s + 2) == len && !strncmp(s + 2, want, len)))
            return (int)e;
    }
    return -1;
}

static int find_pair(const ompf_eval_t *ev, const char *spec)
{
    const char *c = strchr(spec, ',');
    if (!c)
        return -2;
    int a = match_event(ev, spec, (size_t)(c - spec));
    int b = match_event(ev, c + 1, strlen(c + 1));
    if (a < 0 || b < 0)
        return -1;
    for (size_t i = 0; i < ompf_eval_pair_count(ev); i++) {
        ompf_eval_pair_info_t in;
        ompf_eval_pair_info(ev, i, &in);
        if (((int)in.ev[0] == a && (int)in.ev[1] == b) ||
            ((int)in.ev[0] == b && (int)in.ev[1] == a))
            return (int)i;
    }
    return -1;
}

int ompf_cmd_report(int argc, char **argv)
{
    ompf_eval_opts_t o;
    ompf_eval_opts_default(&o);
    char **args = NULL;
    const char *out = NULL, *title = "ompfuse report", *pair = NULL;
    int quiet = 0, any_mode = 0, mode = 0; /* 0: positional = targets, 1: refs, 2: targets */
    int status = 2;
    group_t *gs = calloc((size_t)argc + 1, sizeof *gs);
    size_t ng = 0;
    ompf_report_group_t *rg = NULL;
    ompf_outfile_t *of = NULL;
    if (!gs) {
        fprintf(stderr, PROG ": out of memory\n");
        return 2;
    }
    static const struct option lo[] = {
        {"targets", no_argument, 0, 't'},
        {"group", required_argument, 0, 'g'},
        {"output", required_argument, 0, 'o'},
        {"title", required_argument, 0, 'L'},
        {"pair", required_argument, 0, 'p'},
        OMPF_CLI_EVAL_LONGOPTS,
        {0, 0, 0, 0}};
    /* Here '--' starts the targets of a group, and more groups may follow
       it: the parser sees it as --targets. */
    args = calloc((size_t)argc + 1, sizeof *args);
    if (!args) {
        fprintf(stderr, PROG ": out of memory\n");
        goto done;
    }
    for (int i = 0; i < argc; i++)
        args[i] = strcmp(argv[i], "--") ? argv[i] : "--targets";
    ompf_cli_opts_t po;
    ompf_cli_opts_start(&po, "report", argc, args, "-hr::tqj:o:", lo);
    int ch;
#define CUR (ng ? &gs[ng - 1] : (ng = 1, &gs[0]))
    while ((ch = ompf_cli_opts_next(&po)) != -1) {
        const char *a = optarg;
        if (ch == OMPF_CLI_OPERAND || (ch == 'r' && a)) {
            group_t *g = CUR;
            if (!g->refs) {
                g->refs = calloc((size_t)argc, sizeof *g->refs);
                g->targets = calloc((size_t)argc, sizeof *g->targets);
                if (!g->refs || !g->targets) {
                    fprintf(stderr, PROG ": out of memory\n");
                    goto done;
                }
            }
            if (ch == 'r') /* --references=REF */
                g->refs[g->nrefs++] = a;
            else if (mode == 1)
                g->refs[g->nrefs++] = a;
            else
                g->targets[g->ntargets++] = a;
            if (ch == OMPF_CLI_OPERAND) {
                ompf_cli_opts_operand_of(&po, mode == 1 ? "references" : "targets");
                continue;
            }
        }
        mode = 0;
        switch (ch) {
        case 'h':
            usage(stdout);
            status = 0;
            goto done;
        case 'r': mode = 1; break;
        case 't': mode = 2; break;
        case 'g':
            if (ng == 0 || gs[ng - 1].name || gs[ng - 1].refs)
                ng++;
            if (!(gs[ng - 1].name = dupstr(a))) {
                fprintf(stderr, PROG ": out of memory\n");
                goto done;
            }
            break;
        case 'o': out = a; break;
        case 'L': title = a; break;
        case 'p':
            pair = a;
            if (!strchr(pair, ',')) {
                fprintf(stderr, PROG ": --pair needs two event names as "
                                "A,B\n");
                goto done;
            }
            break;
        OMPF_CLI_EVAL_CASES:
            if (ompf_cli_eval_opt(PROG, ch, a, &o) < 0)
                goto done;
            break;
        case 'q': quiet = 1; break;
        case 'A': any_mode = 1; break;
        default: goto done;
        }
    }
#undef CUR
    if (!out) {
        fprintf(stderr, PROG ": no output file: give -o report.html\n");
        goto done;
    }
    if (!ng) {
        fprintf(stderr, PROG ": nothing to report: give --references REF... "
                        "-- TARGET...\n");
        goto done;
    }
    for (size_t k = 0; k < ng; k++) {
        group_t *g = &gs[k];
        const char *gn = g->name ? g->name : "(unnamed group)";
        if (!g->nrefs) {
            fprintf(stderr, PROG ": group %s has no --references\n", gn);
            goto done;
        }
        if (!g->ntargets) {
            fprintf(stderr, PROG ": group %s has no target (--references "
                            "takes every argument up to the next option; put "
                            "'--' before the targets)\n", gn);
            goto done;
        }
    }
    o.progress = ompf_progress_wanted(quiet);
    ompf_error_t err = {0};
    int target_failed = 0;
    for (size_t k = 0; k < ng; k++) {
        group_t *g = &gs[k];
        for (size_t i = 0; i < g->nrefs; i++) {
            char note[700];
            if (ompf_inputs_add_references(&g->rin, g->refs[i], any_mode,
                                           PROG, NULL, note, sizeof note,
                                           &err)) {
                fprintf(stderr, PROG ": %s\n", err.msg);
                goto done;
            }
            if (note[0])
                fprintf(stderr, PROG ": note: %s\n", note);
        }
        for (size_t i = 0; i < g->ntargets; i++)
            if (ompf_inputs_add(&g->tin, g->targets[i], 1, PROG, &err)) {
                fprintf(stderr, PROG ": %s\n", err.msg);
                goto done;
            }
        if (ompf_inputs_name(&g->tin))
            goto oom;
        if (!g->name) {
            const char *prog = ompf_meta_get(g->rin.v[0].profile, "program");
            const char *b = prog && *prog ? strrchr(prog, '/') : NULL;
            g->name = dupstr(b ? b + 1 : prog && *prog ? prog : "profiles");
            if (!g->name)
                goto oom;
        }
        g->rp = calloc(g->rin.n, sizeof *g->rp);
        const char **rn = calloc(g->rin.n, sizeof *rn);
        if (!g->rp || !rn) {
            free(rn);
            goto oom;
        }
        for (size_t i = 0; i < g->rin.n; i++) {
            g->rp[i] = g->rin.v[i].profile;
            rn[i] = g->rin.v[i].path;
        }
        int rc = ompf_eval_create(g->rp, rn, g->rin.n, &o, &g->ev, &err);
        free(rn);
        if (rc) {
            fprintf(stderr, PROG ": group %s: %s\n", g->name, err.msg);
            goto done;
        }
        g->res = calloc(g->tin.n, sizeof *g->res);
        g->errors = calloc(g->tin.n, sizeof *g->errors);
        g->rt = calloc(g->tin.n, sizeof *g->rt);
        if (!g->res || !g->errors || !g->rt)
            goto oom;
        for (size_t t = 0; t < g->tin.n; t++) {
            rc = ompf_eval_target(g->ev, g->tin.v[t].profile,
                                  g->tin.v[t].name, &g->res[t], &err);
            if (rc) {
                fprintf(stderr, PROG ": %s (file %s)\n", err.msg,
                        g->tin.v[t].path);
                if (!(g->errors[t] = dupstr(err.msg)))
                    goto oom;
                target_failed = 1;
            }
            g->rt[t].name = g->tin.v[t].name;
            g->rt[t].path = g->tin.v[t].path;
            g->rt[t].profile = g->tin.v[t].profile;
            g->rt[t].result = g->res[t];
            g->rt[t].error = g->errors[t];
        }
    }
    rg = calloc(ng, sizeof *rg);
    if (!rg)
        goto oom;
    for (size_t k = 0; k < ng; k++) {
        group_t *g = &gs[k];
        rg[k].name = g->name;
        rg[k].eval = g->ev;
        rg[k].refs = g->rp;
        rg[k].nrefs = g->rin.n;
        rg[k].targets = g->rt;
        rg[k].ntargets = g->tin.n;
        rg[k].bins = o.bins ? o.bins : 10;
        rg[k].per_type = o.per_type;
        rg[k].scatter_pair = -1;
        if (pair) {
            int p = find_pair(g->ev, pair);
            if (p < 0) {
                fprintf(stderr, PROG ": group %s: no event pair '%s' in the "
                                "references (events are named as in 'ompfuse "
                                "show', with or without their 'pmu::' prefix)\n",
                        g->name, pair);
                goto done;
            }
            rg[k].scatter_pair = p;
        }
    }
    FILE *f;
    ompf_stale_tmp_remove(out, stderr, PROG);
    if (ompf_outfile_open(out, &of, &f, &err)) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        goto done;
    }
    if (ompf_report_write(f, title, rg, ng, &err)) {
        fprintf(stderr, PROG ": %s: %s\n", strcmp(out, "-") ? out : "standard output",
                err.msg);
        status = 2;
        goto done;
    }
    if (ompf_outfile_commit(of, &err)) {
        of = NULL;
        fprintf(stderr, PROG ": %s\n", err.msg);
        status = 2;
        goto done;
    }
    of = NULL;
    if (!quiet) {
        size_t nt = 0;
        for (size_t k = 0; k < ng; k++)
            nt += gs[k].tin.n;
        fprintf(stderr, PROG ": wrote %s (%zu group%s, %zu target%s)\n", out,
                ng, ng == 1 ? "" : "s", nt, nt == 1 ? "" : "s");
    }
    status = target_failed ? 2 : 0;
    goto done;
oom:
    fprintf(stderr, PROG ": out of memory\n");
    status = 2;
done:
    if (of)
        ompf_outfile_abort(of);
    free(rg);
    for (size_t k = 0; k < ng; k++) {
        group_t *g = &gs[k];
        for (size_t t = 0; g->res && t < g->tin.n; t++) {
            ompf_eval_result_free(g->res[t]);
            if (g->errors)
                free(g->errors[t]);
        }
        free(g->res);
        free(g->errors);
        free(g->rt);
        ompf_eval_destroy(g->ev);
        free((void *)g->rp);
        ompf_inputs_free(&g->rin);
        ompf_inputs_free(&g->tin);
        free(g->refs);
        free(g->targets);
        free(g->name);
    }
    free(gs);
    free(args);
    return status;
}
