/* Option-parsing helpers shared by the subcommands (see args.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "ompfuse/evaluate.h"

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

int ompf_cli_eval_opt(const char *prog, int ch, const char *v, struct ompf_eval_opts *o)
{
    switch (ch) {
    case 'j': return ompf_cli_parse_uint(prog, "--jobs", v, 1, 1024, &o->threads);
    case 'b': return ompf_cli_parse_uint(prog, "--bins", v, 1, 1000, &o->bins);
    case 'T': o->per_type = 1; break;
    case 'C': o->correlation_error = 1; break;
    case 'P': o->allow_partial = 1; break;
    case 'I': o->check_program = 0; break;
    }
    return 0;
}
