/* ompfuse: command dispatcher, in the style of git and perf. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "ompfuse/text.h"
#include "heap.h"
#include "ompfuse/profile.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    int big_reads; /* reads large profiles, starts no program: huge pages (cli/heap.h) */
} command_t;

static const command_t commands[] = {
    {"events", ompf_cmd_events, "list the events this machine can count", 0},
    {"plan", ompf_cmd_plan, "split events into runs for fusion and references", 0},
    {"run", ompf_cmd_run, "execute a plan: run a program under the tool", 0},
    {"campaign", ompf_cmd_campaign, "plan, run, combine, evaluate, report in one go", 0},
    {"combine", ompf_cmd_combine, "fuse profiles (ctc, lgl, bc, bc-unlabeled, random)", 1},
    {"clean", ompf_cmd_clean, "repair a multiplexed (HEM) profile, CounterMiner-style", 1},
    {"evaluate", ompf_cmd_evaluate, "EPD and Correlation Error against reference runs", 1},
    {"report", ompf_cmd_report, "self-contained HTML report with plots", 1},
    {"analyze", ompf_cmd_analyze, "per construct/thread/subtree sums, metrics, top XUs, page", 1},
    {"show", ompf_cmd_show, "human summary of profiles", 1},
    {"export", ompf_cmd_export, "profiles to CSV, JSON, Perfetto timeline or OTF2", 1},
    {"import", ompf_cmd_import, "CSV to profile", 0},
    {"simulate", ompf_cmd_simulate, "synthetic profiles with a known ground truth", 0},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: ompfuse <command> [options] [args]\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'ompfuse <command> --help' describes a command.\n"
               "\nExit status, the same for every command: 0 success; 1 only for run and\n"
               "campaign, which completed but some planned runs failed; 2 usage error,\n"
               "bad or unreadable input, or an I/O error (the message names the file\n"
               "and the reason).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    /* `ompfuse help CMD` is `ompfuse CMD --help`, as in git and perf */
    char *help_argv[4] = {argv[0], NULL, "--help", NULL};
    if (!strcmp(name, "help") && argc > 2) {
        help_argv[1] = argv[2];
        name = argv[2];
        argc = 3;
        argv = help_argv;
    }
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return fflush(stdout) || ferror(stdout) ? 2 : 0;
    }
    if (!strcmp(name, "--version")) {
        printf("ompfuse %s\n", OMPF_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strcmp(name, commands[i].name))
            continue;
        if (commands[i].big_reads && argv[1] == name)
            ompf_cli_heap_thp(argv);
        int rc = commands[i].run(argc - 1, argv + 1);
        /* What a command printed may still sit in stdout's buffer: a full
           disk or a closed pipe must not end in exit 0. */
        if (fflush(stdout) || ferror(stdout)) {
            fprintf(stderr, "ompfuse %s: standard output: write failed: %s\n", name,
                    strerror(errno));
            return 2;
        }
        return rc;
    }
    /* a typo: the nearest command, when it is near */
    size_t best = 3, at = 0;
    for (size_t i = 0; i < N_COMMANDS; i++) {
        size_t d = ompf_edit_distance(name, commands[i].name);
        if (d < best) {
            best = d;
            at = i;
        }
    }
    if (best < 3)
        fprintf(stderr, "ompfuse: '%s' is not a command; did you mean '%s'? See 'ompfuse --help'\n",
                name, commands[at].name);
    else
        fprintf(stderr, "ompfuse: '%s' is not a command; see 'ompfuse --help'\n", name);
    return 2;
}
