/* Subcommands of the ompfuse program.  Each returns the process exit code,
 * one rule for all (README, "Exit status"): 0 success; 1 only for run and
 * campaign, which completed but some planned runs failed; 2 usage error,
 * bad or unreadable input, or an I/O error, with a message naming the file
 * and the reason. */
#ifndef OMPF_CLI_COMMANDS_H
#define OMPF_CLI_COMMANDS_H

#include <stddef.h>
#include "ompfuse/campaign.h"

/* The end of every command's --help that can only succeed or fail. */
#define OMPF_CLI_EXIT_HELP                                                        \
    "\nExit status: 0 success; 2 usage error, bad or unreadable input, or an\n" \
    "I/O error (the message names the file and the reason).\n"

int ompf_cmd_events(int argc, char **argv);   /* cmd_events.c */
/* events_sources.c: tracepoints, uprobes, sysfs PMUs (names on request) */
int ompf_events_sources(int tracepoints, int pmus, int probe);
int ompf_cmd_plan(int argc, char **argv);     /* cmd_plan.c */
/* events_auto.c: the N of "auto" / "auto:N" (0: not auto, -1: bad N), and
 * the events chosen for argv (or saved before) in DIR/events-auto.txt,
 * ordered for plans of `slots` events a run; 0, or -1 after printing why. */
int ompf_cli_auto_want(const char *events);
int ompf_cli_auto_events(const char *prog, char *const *argv, const char *dir, unsigned want,
                         unsigned slots, const char *const *env, size_t nenv,
                         const ompf_exit_set_t *exit_ok, char ***events, size_t *n);
/* The holder of the current command's uprobes, for the pilots of
 * ompf_cli_auto_events (NULL: none). */
extern struct ompf_uphold *ompf_cli_uphold;
/* "OPENS" or "fails: why" for one event name, as the tool would open it
 * (events_sources.c): 1 when it opens. */
int ompf_cli_probe_one(const char *name, char *status, size_t n);
int ompf_cmd_run(int argc, char **argv);      /* cmd_run.c */
int ompf_cmd_combine(int argc, char **argv);  /* cmd_combine.c */
int ompf_cmd_clean(int argc, char **argv);    /* cmd_clean.c */
int ompf_cmd_evaluate(int argc, char **argv); /* cmd_evaluate.c */
int ompf_cmd_report(int argc, char **argv);   /* cmd_report.c */
int ompf_cmd_show(int argc, char **argv);     /* cmd_show.c */
int ompf_cmd_export(int argc, char **argv);   /* cmd_export.c */
int ompf_cmd_import(int argc, char **argv);   /* cmd_import.c */
int ompf_cmd_simulate(int argc, char **argv); /* cmd_simulate.c */
int ompf_cmd_analyze(int argc, char **argv);  /* cmd_analyze.c */
int ompf_cmd_campaign(int argc, char **argv); /* cmd_campaign.c */

#endif
