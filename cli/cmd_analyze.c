/* ompfuse analyze: groups, derived metrics, top XUs, the analysis page
 * (libompfanalysis does the work; docs/analysis.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "opts.h"
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
    static const struct option lo[] = {
        {"csv", no_argument, 0, 'c'},
        {"json", no_argument, 0, 'J'},
        {"no-resolve", no_argument, 0, 'N'},
        {"no-builtin-metrics", no_argument, 0, 'B'},
        {"by", required_argument, 0, 'b'},
        {"depth", required_argument, 0, 'd'},
        {"where", required_argument, 0, 'w'},
        {"metric", required_argument, 0, 'm'},
        {"metrics", required_argument, 0, 'M'},
        {"sort", required_argument, 0, 's'},
        {"top", required_argument, 0, 't'},
        {"top-by", required_argument, 0, 'T'},
        {"output", required_argument, 0, 'o'},
        {"html", required_argument, 0, 'H'},
        {"colour", required_argument, 0, 'l'},
        {"color", required_argument, 0, 'l'},
        {"scatter", required_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    ompf_cli_opts_t po;
    ompf_cli_opts_start(&po, "analyze", argc, argv, "ho:", lo);
    int ch;
    while ((ch = ompf_cli_opts_next(&po)) != -1) {
        int rc = 0;
        switch (ch) {
        case 'h':
            analyze_usage(stdout);
            return -1;
        case 'c': o->csv = 1; break;
        case 'J': o->json = 1; break;
        case 'N': o->resolve = 0; break;
        case 'B': ompf_analysis_use_builtins(a, 0); break;
        case 'b': by = optarg; break;
        case 'd':
            if (ompf_cli_parse_uint("ompfuse analyze", "--depth", optarg, 0, 1000, &depth))
                return 2;
            break;
        case 'w': rc = ompf_analysis_add_where(a, optarg, &err); break;
        case 'm': rc = ompf_analysis_add_metric(a, optarg, &err); break;
        case 'M': rc = ompf_analysis_load_metrics(a, optarg, &err); break;
        case 's': rc = ompf_analysis_set_sort(a, optarg); break;
        case 't':
            if (ompf_cli_parse_uint("ompfuse analyze", "--top", optarg, 1, 100000000, &top))
                return 2;
            break;
        case 'T': top_by = optarg; break;
        case 'o': o->out = optarg; break;
        case 'H': o->html = optarg; break;
        case 'l': o->colour = optarg; break;
        case 'S': o->scatter = optarg; break;
        default: return 2;
        }
        if (rc) {
            fprintf(stderr, "ompfuse analyze: %s\n", err.msg);
            return 2;
        }
    }
    for (int i = optind; i < argc; i++)
        o->in[o->nin++] = argv[i];
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
