/* ompfuse analyze: groups, derived metrics, top XUs, the analysis page
 * (libompfanalysis does the work; docs/analysis.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "ompfuse/analysis.h"
#include "ompfuse/file.h"
#include "ompfuse/profile.h"

static void analyze_usage(FILE *f)
{
    fprintf(f,
            "usage: ompfuse analyze [options] PROFILE...\n"
            "\n"
            "Per group of XUs: count, time and its share, per event the sum and its\n"
            "share of the run's total (the threads' gap buckets are rows too, so shares\n"
            "add up to 100 %%), distributions per XU (mean, median, p5, p95, cv), and\n"
            "derived metrics evaluated per XU (ratio of sums and distribution).  Any\n"
            "profile: run, fused, HEM (estimates marked *).  Missing values are counted,\n"
            "never zero.  Data to standard output, messages to standard error.\n"
            "\n"
            "  --by DIMS          group by construct (default), thread, core, numa, kind,\n"
            "                     subtree, or a comma list (construct,numa)\n"
            "  --depth N          label depth of subtree groups (default 2)\n"
            "  --where DIM=VALUE  only these XUs (construct=cg.c:274, thread=1, kind=task,\n"
            "                     subtree=0.1.2); repeat to combine\n"
            "  --metric NAME=EXPR a derived metric: + - * / ( ), numbers, event names\n"
            "                     (with or without 'perf::'; {NAME} quotes any name),\n"
            "                     duration_ns, iterations; repeatable\n"
            "  --metrics FILE     more metrics, 'NAME = EXPR' per line\n"
            "  --no-builtin-metrics  only the metrics given\n"
            "  --sort COL[:asc]   order groups by a column (xus, name, duration_ns, an\n"
            "                     event's sum, a metric's ratio); default duration_ns\n"
            "  --top N            the N XUs with the largest --top-by value\n"
            "  --top-by COL       default: the sort column\n"
            "  --csv, --json      machine-readable output (--csv --top: the top XUs)\n"
            "  -o, --output OUT   write OUT (atomically) instead of standard output\n"
            "  --html OUT         the analysis page (one profile); then the table is\n"
            "                     written only with -o, --csv or --json\n"
            "  --colour COL       column colouring the page's timeline and distributions\n"
            "  --scatter X,Y      the page's scatter plots (default: two events)\n"
            "  --no-resolve       do not run addr2line on unresolved constructs\n"
            "  -h, --help         this help\n");
}

typedef struct opts {
    const char *out, *html, *colour, *scatter;
    int csv, json, resolve;
    unsigned top;
    const char **in;
    int nin;
} opts_t;

/* Parses argv into o and the configuration a; 0, or the exit code. */
static int parse(int argc, char **argv, opts_t *o, ompf_analysis_t *a)
{
    ompf_error_t err = {0};
    const char *by = "construct";
    unsigned depth = 2, top = 0;
    const char *top_by = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a1 = argv[i], *v;
        int rc = 0;
        if (!strcmp(a1, "-h") || !strcmp(a1, "--help")) {
            analyze_usage(stdout);
            return -1;
        } else if (!strcmp(a1, "--csv")) {
            o->csv = 1;
        } else if (!strcmp(a1, "--json")) {
            o->json = 1;
        } else if (!strcmp(a1, "--no-resolve")) {
            o->resolve = 0;
        } else if (!strcmp(a1, "--no-builtin-metrics")) {
            ompf_analysis_use_builtins(a, 0);
        } else if (a1[0] == '-' && a1[1]) {
            static const char *const valued[] = {
                "--by", "--depth", "--where", "--metric", "--metrics", "--sort", "--top",
                "--top-by", "-o", "--output", "--html", "--colour", "--color", "--scatter"};
            int k = -1;
            for (int j = 0; j < (int)(sizeof valued / sizeof *valued) && k < 0; j++)
                if (ompf_cli_is_opt(a1, valued[j]))
                    k = j;
            if (k < 0) {
                fprintf(stderr,
                        "ompfuse analyze: unknown option '%s'; see 'ompfuse analyze --help'\n",
                        a1);
                return 2;
            }
            if (!(v = ompf_cli_opt_value(argc, argv, &i, valued[k]))) {
                fprintf(stderr, "ompfuse analyze: %s needs a value\n", valued[k]);
                return 2;
            }
            switch (k) {
            case 0: by = v; break;
            case 1:
                if (ompf_cli_parse_uint("ompfuse analyze", "--depth", v, 0, 1000, &depth))
                    return 2;
                break;
            case 2: rc = ompf_analysis_add_where(a, v, &err); break;
            case 3: rc = ompf_analysis_add_metric(a, v, &err); break;
            case 4: rc = ompf_analysis_load_metrics(a, v, &err); break;
            case 5: rc = ompf_analysis_set_sort(a, v); break;
            case 6:
                if (ompf_cli_parse_uint("ompfuse analyze", "--top", v, 1, 100000000, &top))
                    return 2;
                break;
            case 7: top_by = v; break;
            case 8: case 9: o->out = v; break;
            case 10: o->html = v; break;
            case 11: case 12: o->colour = v; break;
            default: o->scatter = v;
            }
        } else {
            o->in[o->nin++] = a1;
        }
        if (rc) {
            fprintf(stderr, "ompfuse analyze: %s\n", err.msg);
            return 2;
        }
    }
    if (ompf_analysis_set_group(a, by, depth, &err)) {
        fprintf(stderr, "ompfuse analyze: %s\n", err.msg);
        return 2;
    }
    ompf_analysis_set_top(a, top, top_by);
    o->top = top;
    if (!o->nin) {
        fprintf(stderr, "ompfuse analyze: no profile given; see 'ompfuse analyze --help'\n");
        return 2;
    }
    if (o->csv && o->json) {
        fprintf(stderr, "ompfuse analyze: --csv and --json exclude each other\n");
        return 2;
    }
    if (o->html && o->nin > 1) {
        fprintf(stderr, "ompfuse analyze: --html makes the page of one profile (%d given)\n",
                o->nin);
        return 2;
    }
    return 0;
}

static int write_page(const opts_t *o, ompf_aresult_t *r)
{
    ompf_error_t err = {0};
    ompf_outfile_t *of;
    FILE *fp;
    ompf_page_opts_t po = {.colour = o->colour};
    char sx[256] = "", *sy = NULL;
    if (o->scatter) {
        snprintf(sx, sizeof sx, "%s", o->scatter);
        sy = strchr(sx, ',');
        if (!sy) {
            fprintf(stderr, "ompfuse analyze: --scatter '%s': expected X,Y\n", o->scatter);
            return 2;
        }
        *sy++ = 0;
        po.sx = sx;
        po.sy = sy;
    }
    if (ompf_outfile_open(o->html, &of, &fp, &err)) {
        fprintf(stderr, "ompfuse analyze: %s\n", err.msg);
        return 2;
    }
    if (ompf_aresult_write_html(r, &po, fp, &err)) {
        ompf_outfile_abort(of);
        fprintf(stderr, "ompfuse analyze: %s\n", err.msg);
        return 2;
    }
    if (ompf_outfile_commit(of, &err)) {
        fprintf(stderr, "ompfuse analyze: %s\n", err.msg);
        return 2;
    }
    fprintf(stderr, "ompfuse analyze: wrote %s\n", o->html);
    return 0;
}

int ompf_cmd_analyze(int argc, char **argv)
{
    opts_t o = {.out = "-", .resolve = 1};
    ompf_analysis_t *a = NULL;
    o.in = calloc((size_t)argc + 1, sizeof *o.in);
    if (!o.in || ompf_analysis_create(&a)) {
        fprintf(stderr, "ompfuse analyze: out of memory\n");
        free(o.in);
        return 2;
    }
    int rc = parse(argc, argv, &o, a);
    if (rc) {
        ompf_analysis_destroy(a);
        free(o.in);
        return rc < 0 ? 0 : rc;
    }
    int text = o.csv || o.json || !o.html || strcmp(o.out, "-"); /* -o: the table too */
    ompf_outfile_t *of = NULL;
    FILE *fp = NULL;
    ompf_error_t err = {0};
    if (text && ompf_outfile_open(o.out, &of, &fp, &err)) {
        fprintf(stderr, "ompfuse analyze: %s\n", err.msg);
        ompf_analysis_destroy(a);
        free(o.in);
        return 2;
    }
    for (int k = 0; k < o.nin && !rc; k++) {
        ompf_profile_t *p = NULL;
        int r1 = ompf_profile_read(o.in[k], &p, NULL, &err);
        if (r1 && r1 != OMPF_ETRUNC) {
            fprintf(stderr, "ompfuse analyze: %s\n", err.msg);
            rc = 2;
            break;
        }
        if (r1 == OMPF_ETRUNC)
            fprintf(stderr, "ompfuse analyze: warning: %s\n", err.msg);
        if (o.resolve && ompf_resolve_constructs(p, &err) < 0)
            fprintf(stderr, "ompfuse analyze: warning: %s\n", err.msg);
        ompf_aresult_t *r = NULL;
        if (ompf_analysis_run(a, p, o.in[k], &r, &err)) {
            fprintf(stderr, "ompfuse analyze: %s\n", err.msg);
            rc = 2;
        } else {
            if (text) {
                if (o.json)
                    rc = ompf_aresult_write_json(r, fp, k == 0);
                else if (o.csv)
                    rc = o.top ? ompf_aresult_write_top_csv(r, fp, k == 0)
                               : ompf_aresult_write_csv(r, fp, k == 0);
                else
                    rc = ompf_aresult_write_table(r, fp);
                if (rc) {
                    fprintf(stderr, "ompfuse analyze: writing %s: %s\n", o.out,
                            ompf_strerror(rc));
                    rc = 2;
                }
            }
            if (!rc && o.html)
                rc = write_page(&o, r);
        }
        ompf_aresult_destroy(r);
        ompf_profile_destroy(p);
    }
    if (text && !rc && o.json)
        ompf_aresult_json_end(fp, o.nin > 0);
    if (text) {
        if (rc)
            ompf_outfile_abort(of);
        else if (ompf_outfile_commit(of, &err)) {
            fprintf(stderr, "ompfuse analyze: %s\n", err.msg);
            rc = 2;
        }
    }
    ompf_analysis_destroy(a);
    free(o.in);
    return rc;
}
