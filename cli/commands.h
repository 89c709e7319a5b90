/* Subcommands of the ompfuse program.  Each returns the process exit code:
 * 0 success, 1 failure of the work, 2 usage error or unreadable input. */
#ifndef OMPF_CLI_COMMANDS_H
#define OMPF_CLI_COMMANDS_H

int ompf_cmd_events(int argc, char **argv);   /* cmd_events.c */
/* events_sources.c: tracepoints, uprobes, sysfs PMUs (names on request) */
int ompf_events_sources(int tracepoints, int pmus, int probe);
int ompf_cmd_plan(int argc, char **argv);     /* cmd_plan.c */
int ompf_cmd_run(int argc, char **argv);      /* cmd_run.c */
int ompf_cmd_combine(int argc, char **argv);  /* cmd_combine.c */
int ompf_cmd_clean(int argc, char **argv);    /* cmd_clean.c */
int ompf_cmd_evaluate(int argc, char **argv); /* cmd_evaluate.c */
int ompf_cmd_report(int argc, char **argv);   /* cmd_report.c */
int ompf_cmd_show(int argc, char **argv);     /* cmd_show.c */
int ompf_cmd_export(int argc, char **argv);   /* cmd_export.c */
int ompf_cmd_import(int argc, char **argv);   /* cmd_import.c */
int ompf_cmd_simulate(int argc, char **argv); /* cmd_simulate.c */
int ompf_cmd_campaign(int argc, char **argv); /* cmd_campaign.c */

#endif
