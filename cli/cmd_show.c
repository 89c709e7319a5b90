/* ompfuse show: human summary of profiles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "heap.h"
#include "opts.h"
#include "ompfuse/file.h"
#include "ompfuse/profile.h"

static void show_usage(FILE *f)
{
    fprintf(f,
            "usage: ompfuse show [--no-resolve] FILE...\n"
            "\n"
            "Prints a summary of each profile: metadata, events and their status,\n"
            "constructs with file:line and XU counts, XU totals per kind, per-thread\n"
            "totals and gap.  A truncated profile is shown up to its last complete\n"
            "chunk, with a note.\n"
            "\n"
            "  --no-resolve  do not resolve constructs to file:line / function\n"
            "  -h, --help    this help\n" OMPF_CLI_EXIT_HELP);
}

static void fmt_num(char *buf, size_t len, double v)
{
    if (ompf_is_missing(v))
        snprintf(buf, len, "-");
    else if (v == (double)(long long)v && v > -1e18 && v < 1e18)
        snprintf(buf, len, "%lld", (long long)v);
    else
        snprintf(buf, len, "%.6g", v);
}

/* Sum that skips missing values; missing when all are. */
typedef struct acc {
    double sum;
    size_t n;
} acc_t;

static void acc_add(acc_t *a, double v)
{
    if (!ompf_is_missing(v)) {
        a->sum += v;
        a->n++;
    }
}

static double acc_val(const acc_t *a)
{
    return a->n ? a->sum : OMPF_MISSING;
}

static void show_profile(ompf_profile_t *p, const char *path, const ompf_read_info_t *info)
{
    size_t nev = ompf_event_count(p), ncon = ompf_construct_count(p),
           nxu = ompf_xu_count(p), nth = ompf_thread_count(p), nsrc = ompf_source_count(p);
    char num[64], num2[64], num3[64];

    printf("profile %s\n", path);
    if (info->truncated)
        printf("  status: TRUNCATED: %s\n", info->note);
    else
        printf("  status: complete (%llu chunks)\n", (unsigned long long)info->chunks);

    printf("metadata (%zu):\n", ompf_meta_count(p));
    for (size_t i = 0; i < ompf_meta_count(p); i++) {
        const char *k, *v;
        ompf_meta_at(p, i, &k, &v);
        printf("  %-16s ", k);
        /* argv is stored joined by \x1f: show it as spaces. */
        for (const char *s = v; *s; s++)
            putchar(*s == '\x1f' ? ' ' : *s);
        putchar('\n');
    }

    printf("events (%zu):\n", nev);
    for (size_t e = 0; e < nev; e++) {
        const ompf_event_t *ev = ompf_event_get(p, (uint32_t)e);
        printf("  %-3zu %-32s %-12s", e, ev->name, ompf_event_status_name(ev->status));
        if (ev->source >= 0)
            printf(" from source %d", ev->source);
        if (ev->reason && *ev->reason)
            printf(" (%s)", ev->reason);
        putchar('\n');
    }

    if (nsrc) {
        printf("sources (%zu):\n", nsrc);
        for (size_t s = 0; s < nsrc; s++) {
            const ompf_source_t *src = ompf_source_get(p, (uint32_t)s);
            printf("  %-3zu run %016llx  %s\n", s, (unsigned long long)src->run_id,
                   src->path ? src->path : "");
        }
    }

    size_t *per_con = calloc(ncon + 1, sizeof *per_con);
    size_t per_kind[OMPF_XU_KIND_COUNT] = {0};
    acc_t *kind_sum = calloc((size_t)OMPF_XU_KIND_COUNT * (nev + 1), sizeof *kind_sum);
    size_t *per_th = calloc(nth + 1, sizeof *per_th);
    acc_t *th_sum = calloc((nth + 1) * (nev + 1), sizeof *th_sum);
    if (!per_con || !kind_sum || !per_th || !th_sum) {
        fprintf(stderr, "ompfuse show: out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < nxu; i++) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        const double *v = ompf_xu_values_const(p, i);
        per_con[x->type]++;
        per_kind[x->kind]++;
        if (x->thread < nth)
            per_th[x->thread]++;
        for (size_t e = 0; e < nev; e++) {
            acc_add(&kind_sum[x->kind * nev + e], v[e]);
            if (x->thread < nth)
                acc_add(&th_sum[x->thread * nev + e], v[e]);
        }
    }

    printf("constructs (%zu):\n", ncon);
    for (size_t c = 0; c < ncon; c++) {
        const ompf_construct_t *k = ompf_construct_get(p, (uint32_t)c);
        /* the construct key, as every command prints it */
        int unresolved = !k->file && !k->function;
        printf("  %-3zu %-9s %s%s %10zu XUs\n", c,
               ompf_construct_kind_name((ompf_construct_kind_t)k->kind),
               ompf_construct_name(p, (uint32_t)c),
               unresolved ? " (unresolved)" : "", per_con[c]);
        if (!unresolved && k->module && *k->module)
            printf("      %s+0x%llx%s%s\n", k->module, (unsigned long long)k->offset,
                   *k->build_id ? " build-id " : "", k->build_id);
    }

    printf("XUs: %zu\n", nxu);
    printf("  %-16s %10s", "kind", "XUs");
    for (size_t e = 0; e < nev; e++)
        printf(" %20.20s", ompf_event_get(p, (uint32_t)e)->name);
    putchar('\n');
    for (int k = 0; k < OMPF_XU_KIND_COUNT; k++) {
        if (!per_kind[k])
            continue;
        printf("  %-16s %10zu", ompf_xu_kind_name((ompf_xu_kind_t)k), per_kind[k]);
        for (size_t e = 0; e < nev; e++) {
            fmt_num(num, sizeof num, acc_val(&kind_sum[k * nev + e]));
            printf(" %20s", num);
        }
        putchar('\n');
    }

    printf("threads (%zu):\n", nth);
    if (nth)
        printf("  %-6s %8s %10s  %-24s %16s %16s %16s\n", "thread", "os_tid", "XUs", "event",
               "total", "gap", "in XUs");
    for (size_t t = 0; t < nth; t++) {
        const ompf_thread_t *th = ompf_thread_get_const(p, (uint32_t)t);
        printf("  %-6zu %8d %10zu", t, th->os_tid, per_th[t]);
        if (!nev)
            putchar('\n');
        for (size_t e = 0; e < nev; e++) {
            if (e)
                printf("  %-6s %8s %10s", "", "", "");
            fmt_num(num, sizeof num, th->total[e]);
            fmt_num(num2, sizeof num2, th->gap[e]);
            fmt_num(num3, sizeof num3, acc_val(&th_sum[t * nev + e]));
            printf("  %-24.24s %16s %16s %16s\n", ompf_event_get(p, (uint32_t)e)->name, num,
                   num2, num3);
        }
    }
out:
    free(per_con);
    free(kind_sum);
    free(per_th);
    free(th_sum);
}

int ompf_cmd_show(int argc, char **argv)
{
    int resolve = 1;
    static const struct option lo[] = {
        {"no-resolve", no_argument, 0, 'N'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    ompf_cli_opts_t po;
    ompf_cli_opts_start(&po, "show", argc, argv, "h", lo);
    int ch;
    while ((ch = ompf_cli_opts_next(&po)) != -1) {
        if (ch == 'h') {
            show_usage(stdout);
            return 0;
        }
        if (ch != 'N')
            return 2;
        resolve = 0;
    }
    if (optind >= argc) {
        fprintf(stderr, "ompfuse show: no profile given; usage: ompfuse show FILE...\n");
        return 2;
    }
    ompf_cli_heap_reuse(); /* one profile after another */
    int status = 0;
    for (int i = optind; i < argc; i++) {
        ompf_profile_t *p = NULL;
        ompf_read_info_t info;
        ompf_error_t err = {0};
        int rc = ompf_profile_read(argv[i], &p, &info, &err);
        if (rc && rc != OMPF_ETRUNC) {
            fprintf(stderr, "ompfuse show: %s\n", err.msg);
            status = 2;
            continue;
        }
        if (rc == OMPF_ETRUNC)
            fprintf(stderr, "ompfuse show: warning: %s\n", err.msg);
        if (resolve && ompf_resolve_constructs(p, &err) < 0)
            fprintf(stderr, "ompfuse show: warning: %s\n", err.msg);
        show_profile(p, argv[i], &info);
        ompf_profile_destroy(p);
        fflush(stdout);
    }
    return status;
}
