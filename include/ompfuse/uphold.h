/*
 * ompfuse held uprobes: cheap uprobe events for the runs of a campaign.
 *
 * A uprobe opened through the uprobe PMU is a trace event of its own per
 * perf event: ~10 ms to open and ~80 ms to close (RCU grace periods) per
 * thread and uprobe.  Defined once in tracefs's uprobe_events and kept
 * open by one perf event of this process (a "holder", which counts
 * nothing: this process does not run the probed binary), every run's
 * per-thread events on that tracepoint open and close in microseconds;
 * counts are the same.  libompfcounters opens `uprobe:` names as such a
 * tracepoint when one is defined (docs/events.md, "Held uprobes").
 *
 * ompf_uphold_create names the group ompfuse_<pid>, exports it as
 * OMPFUSE_UPROBE_GROUP (so runs prefer this process's definitions), removes
 * the groups of dead ompfuse processes, and starts a janitor process that
 * removes the group when this process ends in any way (signal, SIGKILL,
 * error exit) once the probes are no longer open.  A probe someone else
 * defined (perf probe) is held as it is and never removed.
 *
 * Without tracefs or without permission to write uprobe_events the holder
 * holds nothing and says so once (one note line on log) when the first
 * uprobe is added: runs then use the uprobe PMU as before.
 */
#ifndef OMPFUSE_UPHOLD_H
#define OMPFUSE_UPHOLD_H

#include <stddef.h>
#include <stdio.h>
#include "ompfuse/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ompf_uphold ompf_uphold_t;

/* 0, or OMPF_ENOMEM.  log: the note line (NULL: silent).  Never mounts. */
int ompf_uphold_create(FILE *log, ompf_uphold_t **out);
/* Defines and holds the uprobe: names among names[0..n), and holds the
 * kernel tracepoints (SUBSYS:NAME) among them (their last close would
 * unregister them, waiting for RCU grace periods under the kernel's
 * event_mutex, which stalls every tracepoint open and close meanwhile);
 * other names are ignored, names already held are skipped.  The number newly held;
 * names that cannot be held (bad symbol, kernel refuses) are left to the
 * uprobe PMU.  Negative only for bad arguments or memory. */
int ompf_uphold_add(ompf_uphold_t *h, const char *const *names, size_t n);
/* The same for a comma-separated event list. */
int ompf_uphold_add_list(ompf_uphold_t *h, const char *list);
/* Holds exactly the uprobes of list: the others are released (holder
 * closed, our definition removed), so that a run that counts none of them
 * does not trap at them (a held probe is armed in every process of its
 * binary).  The number newly held, or negative as ompf_uphold_add. */
int ompf_uphold_only(ompf_uphold_t *h, const char *list);
/* Probes held now. */
size_t ompf_uphold_count(const ompf_uphold_t *h);
/* 0 when the cheap path is available, else why not: OMPF_EUNSUPP (tracefs
 * not mounted), OMPF_EPERM (uprobe_events not writable). */
int ompf_uphold_status(const ompf_uphold_t *h);
/* Closes the holders and removes this process's definitions (waiting a
 * little for runs that still have them open; what stays busy is left to
 * the janitor). */
void ompf_uphold_destroy(ompf_uphold_t *h);
const char *ompf_uphold_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
