/* tracefs's uprobe_events (private to libompfcounters): the probes defined
 * there, parsed without malloc or stdio so that the cleanup of a held
 * group (counters/uphold.c) can also run in a forked janitor process. */
#ifndef OMPF_COUNTERS_UPEVENTS_H
#define OMPF_COUNTERS_UPEVENTS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* One line of uprobe_events: "p:GROUP/EVENT PATH:0xOFFSET[(0xREF)][ ARGS]". */
typedef struct ompf_upev {
    char kind;           /* 'p' entry, 'r' return probe */
    char group[64], event[64];
    char path[PATH_MAX]; /* as the definer wrote it */
    uint64_t off;
    int plain;           /* no reference counter, no fetch arguments */
} ompf_upev_t;

/* Parses one line (without its newline): 0, or -1 when it is no probe. */
int ompf_upev_parse(const char *line, size_t len, ompf_upev_t *e);

/* The tracing directory holding uprobe_events (/sys/kernel/tracing or
 * /sys/kernel/debug/tracing) into buf; 0, or -1 when neither is mounted. */
int ompf_upev_root(char *buf, size_t n);

/* The event name ompfuse gives the probe at path:off ("u<off>_<hash of
 * path>", hex): a run finds its holder's definition by name, without
 * reading uprobe_events (which waits for the kernel's event_mutex, held
 * for RCU grace periods while anyone closes a uprobe PMU event). */
void ompf_upev_name(const char *path, uint64_t off, char *buf, size_t n);

/* pid of a group named ompfuse_<pid>[_...] (ours), else 0. */
long ompf_upev_owner(const char *group);
/* 1 when pid is a live process (or one we may not signal). */
int ompf_upev_alive(long pid);

/* Reads root/uprobe_events into buf (NUL-terminated, cut at n - 1):
 * its length, or -errno. */
long ompf_upev_read(const char *root, char *buf, size_t n);

/* Removes every probe of group (stale == 0) or of every ompfuse_<pid>
 * group whose process is dead (stale == 1), retrying probes that are busy
 * (EBUSY: a perf event still open on them) for up to wait_ms.  Only
 * system calls: safe in a forked child.  The probes left (busy), or -errno
 * when uprobe_events cannot be opened. */
int ompf_upev_remove(const char *root, const char *group, int stale, int wait_ms);

#endif
