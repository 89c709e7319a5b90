/* Small option-parsing helpers shared by the subcommands (the parser
 * itself is opts.h). */
#ifndef OMPF_CLI_ARGS_H
#define OMPF_CLI_ARGS_H

/* Parses a whole number in [lo, hi]; on error prints one line naming the
 * program and option and returns -1. */
int ompf_cli_parse_uint(const char *prog, const char *opt, const char *v,
                        unsigned lo, unsigned hi, unsigned *out);

/* The options `ompfuse evaluate` and `ompfuse report` share, as entries
 * of their option tables; OMPF_CLI_EVAL_CASES are those that
 * ompf_cli_eval_opt applies (the others, -r, --any-mode, -q and -h, are the
 * command's). */
#define OMPF_CLI_EVAL_LONGOPTS                            \
    {"references", optional_argument, 0, 'r'},            \
    {"any-mode", no_argument, 0, 'A'},                    \
    {"jobs", required_argument, 0, 'j'},                  \
    {"quiet", no_argument, 0, 'q'},                       \
    {"help", no_argument, 0, 'h'},                        \
    {"bins", required_argument, 0, 'b'},                  \
    {"per-type", no_argument, 0, 'T'},                    \
    {"correlation-error", no_argument, 0, 'C'},           \
    {"allow-partial", no_argument, 0, 'P'},               \
    {"ignore-program", no_argument, 0, 'I'}
#define OMPF_CLI_EVAL_CASES case 'j': case 'b': case 'T': case 'C': case 'P': case 'I'

/* Applies one of those options (ch, its value v) to o; 0, or -1 when
 * the value is bad (one line printed). */
struct ompf_eval_opts;
int ompf_cli_eval_opt(const char *prog, int ch, const char *v, struct ompf_eval_opts *o);

#endif
