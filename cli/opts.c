/* The shared option parser of the subcommands (see opts.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

void ompf_cli_opts_start(ompf_cli_opts_t *p, const char *cmd, int argc, char **argv,
                         const char *shortopts, const struct option *longopts)
{
    memset(p, 0, sizeof *p);
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    p->longopts = longopts;
    /* mode first, then ':' so that a missing value is told from an unknown
       option; glibc wants them in this order */
    size_t k = 0;
    if (shortopts[0] == '+' || shortopts[0] == '-')
        p->shortopts[k++] = *shortopts++;
    p->shortopts[k++] = ':';
    snprintf(p->shortopts + k, sizeof p->shortopts - k, "%s", shortopts);
    const char *d = getenv("OMPFUSE_DEBUG_OPTS");
    p->debug = d && *d && strcmp(d, "0");
    optind = 0; /* 0, not 1: glibc then also forgets a previous scan */
    opterr = 0;
}

static void flush_pending(ompf_cli_opts_t *p)
{
    if (p->pending)
        fprintf(stderr, "%s=%s\n", p->pending_key, p->pending);
    p->pending = NULL;
}

void ompf_cli_opts_operand_of(ompf_cli_opts_t *p, const char *key)
{
    if (p->pending)
        p->pending_key = key;
}

/* The long name of the option that getopt returned as ch (NULL: none). */
static const char *long_name(const ompf_cli_opts_t *p, int ch, int li)
{
    if (li >= 0)
        return p->longopts[li].name;
    for (const struct option *o = p->longopts; o->name; o++)
        if (!o->flag && o->val == ch)
            return o->name;
    return NULL;
}

static void bad_option(const ompf_cli_opts_t *p, int ch)
{
    const char *a = optind > 0 && optind <= p->argc ? p->argv[optind - 1] : "?";
    char shortopt[3] = {'-', (char)optopt, '\0'};
    /* a short option in a bundle (-qx): name the letter, not the bundle */
    const char *shown = optopt > 0 && optopt < 256 && a[0] == '-' && a[1] != '-' ? shortopt : a;
    if (ch == ':') {
        fprintf(stderr, "ompfuse %s: option '%s' needs a value; see 'ompfuse %s --help'\n",
                p->cmd, shown, p->cmd);
        return;
    }
    if (!strncmp(a, "--", 2) && optopt == 0) {
        size_t l = strcspn(a + 2, "=");
        char cands[256] = "";
        size_t n = 0, used = 0;
        for (const struct option *o = p->longopts; o->name; o++)
            if (!strncmp(o->name, a + 2, l)) {
                n++;
                int w = snprintf(cands + used, sizeof cands - used, "%s--%s", used ? ", " : "",
                                 o->name);
                if (w > 0 && (size_t)w < sizeof cands - used)
                    used += (size_t)w;
            }
        if (n > 1) {
            fprintf(stderr, "ompfuse %s: option '%.*s' is ambiguous (%s)\n", p->cmd,
                    (int)l + 2, a, cands);
            return;
        }
        if (n == 1) { /* a flag given a value: --quiet=1 */
            fprintf(stderr, "ompfuse %s: option '%.*s' takes no value; see 'ompfuse %s --help'\n",
                    p->cmd, (int)l + 2, a, p->cmd);
            return;
        }
    }
    fprintf(stderr, "ompfuse %s: unknown option '%s'; see 'ompfuse %s --help'\n", p->cmd,
            shown, p->cmd);
}

int ompf_cli_opts_next(ompf_cli_opts_t *p)
{
    if (p->debug)
        flush_pending(p);
    int li = -1;
    optopt = 0;
    int ch = getopt_long(p->argc, p->argv, p->shortopts, p->longopts, &li);
    if (ch == '?' || ch == ':') {
        bad_option(p, ch);
        return '?';
    }
    if (!p->debug)
        return ch;
    if (ch == OMPF_CLI_OPERAND && p->shortopts[0] == '-') {
        p->pending = optarg;
        p->pending_key = "operand";
    } else if (ch != -1) {
        const char *name = long_name(p, ch, li);
        if (name)
            fprintf(stderr, "%s", name);
        else
            fprintf(stderr, "-%c", ch);
        if (optarg)
            fprintf(stderr, "=%s", optarg);
        fputc('\n', stderr);
    } else {
        for (int i = optind; i < p->argc; i++)
            fprintf(stderr, "operand=%s\n", p->argv[i]);
        fflush(NULL);
        exit(0);
    }
    return ch;
}
