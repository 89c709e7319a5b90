/* Option-parsing helpers shared by the subcommands (see args.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "ompfuse/evaluate.h"

int ompf_cli_is_opt(const char *a, const char *name)
{
    size_t l = strlen(name);
    return !strncmp(a, name, l) && (a[l] == '\0' || a[l] == '=');
}

const char *ompf_cli_opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t l = strlen(name);
    if (!strncmp(argv[*i], name, l) && argv[*i][l] == '=')
        return argv[*i] + l + 1;
    if (*i + 1 < argc)
        return argv[++*i];
    return NULL;
}

int ompf_cli_parse_uint(const char *prog, const char *opt, const char *v,
                        unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long x = v ? strtoul(v, &end, 10) : 0;
    if (!v || errno || !*v || *end || v[0] == '-' || x < lo || x > hi) {
        fprintf(stderr, "%s: %s needs a whole number from %u to %u%s%s%s\n",
                prog, opt, lo, hi, v ? " (got '" : "", v ? v : "",
                v ? "')" : "");
        return -1;
    }
    *out = (unsigned)x;
    return 0;
}

int ompf_cli_eval_opt(const char *prog, int argc, char **argv, int *i,
                      struct ompf_eval_opts *o)
{
    const char *a = argv[*i];
    if (ompf_cli_is_opt(a, "--bins"))
        return ompf_cli_parse_uint(prog, "--bins",
                                   ompf_cli_opt_value(argc, argv, i, "--bins"),
                                   1, 1000, &o->bins)
                   ? -1
                   : 1;
    if (!strcmp(a, "--per-type"))
        o->per_type = 1;
    else if (!strcmp(a, "--correlation-error"))
        o->correlation_error = 1;
    else if (!strcmp(a, "--allow-partial"))
        o->allow_partial = 1;
    else if (!strcmp(a, "--ignore-program"))
        o->check_program = 0;
    else
        return 0;
    return 1;
}
