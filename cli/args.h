/* Small option-parsing helpers shared by the subcommands. */
#ifndef OMPF_CLI_ARGS_H
#define OMPF_CLI_ARGS_H

/* 1 when argument a is option name, alone or as "name=value". */
int ompf_cli_is_opt(const char *a, const char *name);
/* The value of "--opt VALUE" or "--opt=VALUE" at argv[*i] (advancing *i
 * past a separate value); NULL when the value is missing. */
const char *ompf_cli_opt_value(int argc, char **argv, int *i, const char *name);
/* Parses a whole number in [lo, hi]; on error prints one line naming the
 * program and option and returns -1. */
int ompf_cli_parse_uint(const char *prog, const char *opt, const char *v,
                        unsigned lo, unsigned hi, unsigned *out);

/* The evaluation options `ompfuse evaluate` and `ompfuse report` share
 * (--bins, --per-type, --correlation-error, --allow-partial,
 * --ignore-program) at argv[*i]: 1 when it was one of them (applied to o),
 * 0 when not, -1 when its value is bad (one line printed). */
struct ompf_eval_opts;
int ompf_cli_eval_opt(const char *prog, int argc, char **argv, int *i,
                      struct ompf_eval_opts *o);

#endif
