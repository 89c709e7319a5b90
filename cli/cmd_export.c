/* ompfuse export: profile to CSV, one row per XU (format in csv.h). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "ompfuse/csv.h"
#include "ompfuse/file.h"
#include "ompfuse/profile.h"

static void export_usage(FILE *f)
{
    fprintf(f,
            "usage: ompfuse export --csv [-o OUT] [--no-resolve] FILE\n"
            "\n"
            "Writes one CSV row per XU with the columns\n"
            "  xu,type,kind,label,thread,cpu,start_ns,end_ns,<one column per event>\n"
            "(type = construct as file:line, or module+0xOFFSET when unresolved;\n"
            "label dotted; an empty cell is a missing value).  Loads with\n"
            "pandas.read_csv(OUT) without options; 'ompfuse import' is the inverse.\n"
            "\n"
            "  --csv          CSV output (the only format)\n"
            "  -o, --output OUT  write OUT (atomically) instead of standard output\n"
            "  --no-resolve   do not run addr2line on unresolved constructs\n"
            "  -h, --help     this help\n" OMPF_CLI_EXIT_HELP);
}

int ompf_cmd_export(int argc, char **argv)
{
    const char *in = NULL, *out = "-";
    int csv = 0, resolve = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            export_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--csv")) {
            csv = 1;
        } else if (!strcmp(a, "--no-resolve")) {
            resolve = 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) {
                fprintf(stderr, "ompfuse export: %s needs a file name\n", a);
                return 2;
            }
            out = argv[i];
        } else if (!strncmp(a, "--output=", 9)) {
            out = a + 9;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "ompfuse export: unknown option '%s'; see 'ompfuse export --help'\n",
                    a);
            return 2;
        } else if (in) {
            fprintf(stderr, "ompfuse export: one profile at a time ('%s' and '%s' given)\n", in,
                    a);
            return 2;
        } else {
            in = a;
        }
    }
    if (!csv) {
        fprintf(stderr, "ompfuse export: say which format: --csv (the only one)\n");
        return 2;
    }
    if (!in) {
        fprintf(stderr, "ompfuse export: no profile given; usage: ompfuse export --csv FILE\n");
        return 2;
    }
    ompf_profile_t *p = NULL;
    ompf_error_t err = {0};
    int rc = ompf_profile_read(in, &p, NULL, &err);
    if (rc && rc != OMPF_ETRUNC) {
        fprintf(stderr, "ompfuse export: %s\n", err.msg);
        return 2;
    }
    if (rc == OMPF_ETRUNC)
        fprintf(stderr, "ompfuse export: warning: %s\n", err.msg);
    if (resolve && ompf_resolve_constructs(p, &err) < 0)
        fprintf(stderr, "ompfuse export: warning: %s\n", err.msg);
    ompf_outfile_t *o;
    FILE *fp;
    ompf_stale_tmp_remove(out, stderr, "ompfuse export");
    if (ompf_outfile_open(out, &o, &fp, &err)) {
        fprintf(stderr, "ompfuse export: %s\n", err.msg);
        ompf_profile_destroy(p);
        return 2;
    }
    rc = ompf_csv_export(p, fp, &err);
    ompf_profile_destroy(p);
    if (rc) {
        ompf_outfile_abort(o);
        fprintf(stderr, "ompfuse export: %s: %s\n", strcmp(out, "-") ? out : "standard output",
                err.msg);
        return 2;
    }
    if (ompf_outfile_commit(o, &err)) {
        fprintf(stderr, "ompfuse export: %s\n", err.msg);
        return 2;
    }
    return 0;
}
