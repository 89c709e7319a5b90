/* One option parser for every subcommand: a thin layer over glibc's
 * getopt_long, so that unambiguous prefixes of long options, bundled short
 * options (-qo F), -jN / -j N / --jobs=N / --jobs N and the messages for a
 * bad option are the same in every command.
 *
 * Usage, with the command's own option table:
 *
 *     ompf_cli_opts_t p;
 *     ompf_cli_opts_start(&p, "clean", argc, argv, "hqo:k:", longopts);
 *     while ((ch = ompf_cli_opts_next(&p)) != -1)
 *         switch (ch) { ... optarg ...; case '?': return 2; }
 *     operands: argv[optind..argc-1]
 *
 * The first character of shortopts picks how operands are met:
 *   (a letter) options may come anywhere before "--"; operands are left,
 *              in order, in argv[optind..] (getopt permutes them there);
 *   '+'        options end at the first operand (run, campaign: what
 *              follows is a program's own command line);
 *   '-'        each operand is returned in order as OMPF_CLI_OPERAND with
 *              the text in optarg (evaluate, report: "-r A B" lists).
 * '?' means a bad option; its message (unknown, ambiguous prefix, missing
 * value) is already printed, and the command exits 2.
 *
 * Test aid: with OMPFUSE_DEBUG_OPTS=1 in the environment, the parser prints
 * what it parsed to stderr, one "NAME=VALUE" (or "NAME") line per option
 * with its long name, then "operand=X" per operand, and the command exits 0
 * without doing anything (tests/cli/opts_forms.sh compares these). */
#ifndef OMPF_CLI_OPTS_H
#define OMPF_CLI_OPTS_H

#include <getopt.h>

#define OMPF_CLI_OPERAND 1

typedef struct ompf_cli_opts {
    const char *cmd; /* "clean": for messages */
    int argc;
    char **argv;
    char shortopts[96];
    const struct option *longopts;
    int debug;
    /* debug: the last operand returned in '-' mode, printed on the next
     * call so that the command may first name its list */
    const char *pending;
    const char *pending_key;
} ompf_cli_opts_t;

void ompf_cli_opts_start(ompf_cli_opts_t *p, const char *cmd, int argc, char **argv,
                         const char *shortopts, const struct option *longopts);
/* The next option's value in its table (optarg: its value), -1 at the
 * end (optind: the first operand left), '?' after a bad option. */
int ompf_cli_opts_next(ompf_cli_opts_t *p);
/* '-' mode, test aid: the operand just returned belongs to the list
 * named key (e.g. "references"), not to the plain operands. */
void ompf_cli_opts_operand_of(ompf_cli_opts_t *p, const char *key);

#endif
