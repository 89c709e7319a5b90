/* perf's event syntax next to libpfm4 names (private to libompfcounters):
 * SUBSYS:NAME tracepoints, uprobe:BINARY:SYMBOL[+OFF], PMU/terms/ sysfs
 * PMUs and mem:ADDR[:rwx] breakpoints.  See docs/events.md. */
#ifndef OMPF_COUNTERS_SOURCES_H
#define OMPF_COUNTERS_SOURCES_H

#include <stddef.h>
#include <stdint.h>
#include <perfmon/perf_event.h> /* libpfm4's copy: counters.c includes it */
#include "ompfuse/counters.h"

/* What ompf_cnt_src_encode found. */
typedef struct ompf_cnt_src {
    struct perf_event_attr attr;
    char *path;     /* uprobe: absolute binary path attr.config1 points to
                       (owned by the caller once filled) */
    int hardware;   /* counts on a PMU the kernel multiplexes */
    ompf_cnt_fail_t fail;
    char reason[256];
} ompf_cnt_src_t;

/* 1 when name is in perf's syntax and was handled (out->fail says whether
 * it encoded), 0 when it is not: the caller tries libpfm4.  A SUBSYS:NAME
 * that is no tracepoint returns 0 too; ompf_cnt_src_tp_why then explains
 * the libpfm4 failure in tracepoint terms. */
int ompf_cnt_src_encode(const char *name, ompf_cnt_src_t *out);
/* For a name shaped like SUBSYS:NAME that libpfm4 does not know either:
 * 1 and a sentence (tracefs not mounted, no such tracepoint) in out. */
int ompf_cnt_src_tp_why(const char *name, ompf_cnt_src_t *out);
/* The absolute binary (PATH_MAX bytes) and file offset of a
 * uprobe:BINARY:SYMBOL[+OFFSET] name: 0, or -1 when it is none. */
int ompf_cnt_src_uprobe_where(const char *name, char *abs, uint64_t *off);
/* The mounted tracefs events directory, or NULL (neither
 * /sys/kernel/tracing nor /sys/kernel/debug/tracing is mounted). */
const char *ompf_cnt_src_tracefs(void);

#endif
