/* ompfuse import: CSV (as written by 'ompfuse export --csv') to profile. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opts.h"
#include "ompfuse/csv.h"
#include "ompfuse/file.h"
#include "ompfuse/profile.h"

static void import_usage(FILE *f)
{
    fprintf(f,
            "usage: ompfuse import --csv IN -o OUT [--program NAME] [--threads N]\n"
            "\n"
            "Builds a profile from a CSV with the columns\n"
            "  xu,type,kind,label,thread,cpu,start_ns,end_ns,<one column per event>\n"
            "A type 'file:line' becomes a resolved construct, 'module+0xHEX' a module\n"
            "offset; labels are dotted (0.1.4); an empty cell is a missing value.\n"
            "'ompfuse export --csv' of the result reproduces the CSV's data exactly.\n"
            "IN may be '-' for standard input.\n"
            "\n"
            "  --csv IN         the CSV file to read\n"
            "  -o, --output OUT the profile to write\n"
            "  --program NAME   program name to record (default: none, so combine and\n"
            "                   evaluate cannot check that inputs are one program)\n"
            "  --threads N      team size to record (default: 1 + largest thread)\n"
            "  -h, --help       this help\n" OMPF_CLI_EXIT_HELP);
}

int ompf_cmd_import(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    ompf_csv_import_opts_t opts = {0};
    static const struct option lo[] = {
        {"csv", required_argument, 0, 'c'},
        {"output", required_argument, 0, 'o'},
        {"program", required_argument, 0, 'p'},
        {"threads", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    ompf_cli_opts_t po;
    ompf_cli_opts_start(&po, "import", argc, argv, "ho:", lo);
    int ch;
    while ((ch = ompf_cli_opts_next(&po)) != -1) {
        switch (ch) {
        case 'h':
            import_usage(stdout);
            return 0;
        case 'c': in = optarg; break;
        case 'o': out = optarg; break;
        case 'p': opts.program = optarg; break;
        case 't': {
            char *e;
            errno = 0;
            unsigned long n = strtoul(optarg, &e, 10);
            if (*e || errno || n == 0 || n > 1u << 20 || optarg[0] == '-') {
                fprintf(stderr, "ompfuse import: --threads needs a positive count, not '%s'\n",
                        optarg);
                return 2;
            }
            opts.threads = (uint32_t)n;
            break;
        }
        default: return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ompfuse import: unexpected argument '%s'; see 'ompfuse import --help'\n",
                argv[optind]);
        return 2;
    }
    if (!in || !out) {
        fprintf(stderr, "ompfuse import: %s; usage: ompfuse import --csv IN -o OUT\n",
                !in ? "no input (--csv IN)" : "no output (-o OUT)");
        return 2;
    }
    FILE *f = stdin;
    ompf_error_t err = {0};
    if (strcmp(in, "-") && ompf_fopen_input(in, "CSV file", &f, &err)) {
        fprintf(stderr, "ompfuse import: %s\n", err.msg);
        return 2;
    }
    ompf_profile_t *p = NULL;
    int rc = ompf_csv_import(f, strcmp(in, "-") ? in : "(stdin)", &opts, &p, &err);
    if (f != stdin)
        fclose(f);
    if (rc) {
        fprintf(stderr, "ompfuse import: %s\n", err.msg);
        return 2;
    }
    ompf_stale_tmp_remove(out, stderr, "ompfuse import");
    rc = ompf_profile_write(p, out, &err);
    ompf_profile_destroy(p);
    if (rc) {
        fprintf(stderr, "ompfuse import: %s\n", err.msg);
        return 2;
    }
    return 0;
}
