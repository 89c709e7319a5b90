/*
 * ompfuse counters: event names -> perf_event groups.  Names are libpfm4's
 * or perf's own syntax: SUBSYS:NAME tracepoints (ids from tracefs),
 * uprobe:BINARY:SYMBOL[+OFFSET], PMU/EVENT/ for sysfs PMUs (msr/tsc/) and
 * mem:ADDR[:rw|:x] breakpoints (docs/events.md).
 *
 * An event set is encoded once per process (ompf_cnt_set_create); a group
 * is opened per thread from it (ompf_cnt_group_open, pid 0 / cpu -1 by
 * default) and read with one read() of PERF_FORMAT_GROUP, or with rdpmc
 * when every member is a hardware event whose mmap page allows it.
 *
 * Events that cannot be encoded or opened are not fatal: each one keeps a
 * status and a sentence naming the event and the reason, and reads give no
 * value for it.  Callers decide whether that is an error (OMPFUSE_STRICT).
 */
#ifndef OMPFUSE_COUNTERS_H
#define OMPFUSE_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ompfuse/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OMPF_CNT_MAX_EVENTS 64

/* Why an event is not usable (0 = usable). */
typedef enum ompf_cnt_fail {
    OMPF_CNT_OK = 0,
    OMPF_CNT_UNKNOWN = 1,     /* libpfm4 does not know the name */
    OMPF_CNT_PERMISSION = 2,  /* EACCES/EPERM: perf_event_paranoid */
    OMPF_CNT_UNSUPPORTED = 3, /* ENOENT/EOPNOTSUPP/EINVAL: not on this CPU */
    OMPF_CNT_NO_PMU = 4,      /* ENODEV: no such PMU (virtual machine) */
    OMPF_CNT_LIMIT = 5,       /* beyond the virtual counter limit */
    OMPF_CNT_OTHER = 6        /* any other errno */
} ompf_cnt_fail_t;

/* ---- event sets ------------------------------------------------------ */

typedef struct ompf_cnt_set ompf_cnt_set_t;

/* Encodes n libpfm4 names (PFM_OS_PERF_EVENT_EXT; user+kernel unless the
 * name carries its own privilege modifiers).  Fails only on bad arguments
 * or memory; unknown names are recorded per event (ompf_cnt_set_fail). */
int ompf_cnt_set_create(const char *const *names, size_t n,
                        ompf_cnt_set_t **out, ompf_error_t *err);
/* Parses a comma-separated list ("perf::TASK-CLOCK,perf::PAGE-FAULTS");
 * blanks around names are ignored, empty items are refused. */
int ompf_cnt_set_parse(const char *list, ompf_cnt_set_t **out,
                       ompf_error_t *err);
/* Encodings kept from an earlier process (the tool's start-up cache):
 * libpfm4's initialisation scans every PMU (and, with debugfs mounted,
 * every tracepoint), milliseconds per process, and is done only for a
 * libpfm4 name that lookup(name, ctx) has no encoding text for (NULL).
 * The text is what ompf_cnt_set_encoding wrote, valid on the same machine
 * and boot only (PMU type numbers are assigned at boot). */
typedef const char *(*ompf_cnt_lookup_t)(const char *name, void *ctx);
int ompf_cnt_set_parse_cached(const char *list, ompf_cnt_lookup_t lookup,
                              void *ctx, ompf_cnt_set_t **out,
                              ompf_error_t *err);
/* Event i's encoding as text for a later lookup, when libpfm4 encoded it
 * (not perf's own syntax, not failed) and the text holds all of it: its
 * length, else 0. */
int ompf_cnt_set_encoding(const ompf_cnt_set_t *s, size_t i, char *buf,
                          size_t n);
void ompf_cnt_set_destroy(ompf_cnt_set_t *s);
size_t ompf_cnt_set_size(const ompf_cnt_set_t *s);
const char *ompf_cnt_set_name(const ompf_cnt_set_t *s, size_t i);
/* Fills ev (name, perf_event type/config/flags) for the profile's event
 * table; status COUNTED or FAILED with the reason sentence. */
int ompf_cnt_set_event(const ompf_cnt_set_t *s, size_t i, ompf_event_t *ev);
/* Copies event i's complete perf_event_attr (size bytes at most) for code
 * that opens it itself (the HEM kernel path): unlike the profile's
 * encoding from ompf_cnt_set_event, a uprobe's config1 here points to its
 * path, valid while s lives.  0, or OMPF_EINVAL. */
struct perf_event_attr;
int ompf_cnt_set_attr(const ompf_cnt_set_t *s, size_t i,
                      struct perf_event_attr *out, size_t size);
/* Marks event i unusable (e.g. OMPF_CNT_LIMIT) with a reason sentence. */
void ompf_cnt_set_fail(ompf_cnt_set_t *s, size_t i, ompf_cnt_fail_t why,
                       const char *reason);
/* Failure of event i (OMPF_CNT_OK when usable) and its sentence. */
ompf_cnt_fail_t ompf_cnt_set_status(const ompf_cnt_set_t *s, size_t i,
                                    const char **reason);
/* 1 when the event counts on the CPU's PMU (hardware/raw/cache). */
int ompf_cnt_set_is_hardware(const ompf_cnt_set_t *s, size_t i);
/* Why perf_event_open of event i failed with errno e: the failure class,
 * and in what (n bytes) the sentence the groups report after "event NAME: "
 * (e.g. "no hardware PMU for it (...)").  For code that opens the event's
 * perf_event itself (the HEM kernel path), so both say the same words. */
ompf_cnt_fail_t ompf_cnt_diagnose(const ompf_cnt_set_t *s, size_t i, int e,
                                  char *what, size_t n);

/* ---- per-thread groups ----------------------------------------------- */

typedef struct ompf_cnt_group ompf_cnt_group_t;

#define OMPF_CNT_NO_RDPMC 0x1u  /* always read() */
#define OMPF_CNT_DISABLED 0x2u  /* open disabled (enable later) */

/* Opens the usable events of s as one group for (pid, cpu) (0, -1: the
 * calling thread on any CPU).  Events that fail to open are left out with
 * their reason (ompf_cnt_group_fail); returns 0 even when none opened
 * (ompf_cnt_group_opened() == 0); negative only for ENOMEM/EINVAL. */
int ompf_cnt_group_open(const ompf_cnt_set_t *s, pid_t pid, int cpu,
                        unsigned flags, ompf_cnt_group_t **out);
void ompf_cnt_group_close(ompf_cnt_group_t *g);
/* Number of events of the set that are in the group. */
size_t ompf_cnt_group_opened(const ompf_cnt_group_t *g);
/* 1 when no read of the group failed and every descriptor still names
 * its event (checked by event id: a few syscalls, not for hot paths). */
int ompf_cnt_group_intact(const ompf_cnt_group_t *g);

/* Why event i of the set is not in the group (OMPF_CNT_OK if it is); the
 * sentence names the event and the reason; errno_out may be NULL. */
ompf_cnt_fail_t ompf_cnt_group_fail(const ompf_cnt_group_t *g, size_t i,
                                    const char **reason, int *errno_out);
/* 1 when reads use rdpmc (no system call). */
int ompf_cnt_group_uses_rdpmc(const ompf_cnt_group_t *g);

/* One reading of a group. */
typedef struct ompf_cnt_sample {
    uint64_t enabled_ns; /* PERF_FORMAT_TOTAL_TIME_ENABLED of the group */
    uint64_t running_ns; /* PERF_FORMAT_TOTAL_TIME_RUNNING */
    uint64_t value[OMPF_CNT_MAX_EVENTS]; /* in set order; 0 where the
                                            event is not in the group */
} ompf_cnt_sample_t;

/* Reads every member at once: one read() (or rdpmc).  Returns 0, or
 * OMPF_EIO when the read failed (sample unchanged). */
int ompf_cnt_group_read(ompf_cnt_group_t *g, ompf_cnt_sample_t *out);
/* Enables/disables the whole group (ioctl on the leader). */
int ompf_cnt_group_enable(ompf_cnt_group_t *g, int on);

/* ---- probing ----------------------------------------------------------- */

/* Opens the set as one group on the calling thread, burns ~1 ms, reads,
 * and says whether it is schedulable at once: 0 when every event opened
 * and time_running == time_enabled > 0; OMPF_EUNSUPP with a sentence in
 * err otherwise (naming the first event that failed, or multiplexing). */
int ompf_cnt_probe(const ompf_cnt_set_t *s, ompf_error_t *err);

/* The events directory of the mounted tracefs (/sys/kernel/tracing/events
 * or /sys/kernel/debug/tracing/events), or NULL when neither is mounted.
 * Tracepoints are named SUBSYS:NAME after its subdirectories. */
const char *ompf_cnt_tracefs(void);

/* Whether breakpoint (mem:ADDR) events count here: a write breakpoint on
 * a variable of the calling thread, written OMPF_CNT_BP_CHECK_WRITES
 * times.  1 when every write counted; 0 when fewer did (counted says how
 * many: a hypervisor that lets breakpoints open but never delivers their
 * hits gives 0); OMPF_EUNSUPP when no breakpoint opens, OMPF_EIO when it
 * cannot be read. */
#define OMPF_CNT_BP_CHECK_WRITES 16
int ompf_cnt_breakpoint_check(uint64_t *counted);

/* perf_event_paranoid level, or -100 when unreadable. */
int ompf_cnt_paranoid(void);

/* ---- PAPI preset names -------------------------------------------------
 * Event lists accept PAPI's preset names: each stands for the generic perf
 * event below (the profile records the PAPI name and that encoding).  A
 * PAPI_ name not in the table is refused with a pointer to the native
 * names.  `ompfuse events --papi` prints the table. */
typedef struct ompf_papi_preset {
    const char *papi;  /* PAPI_TOT_CYC */
    const char *perf;  /* perf::CYCLES */
    const char *what;  /* PAPI's description */
    const char *note;  /* how the perf event differs; "" when it does not */
} ompf_papi_preset_t;
size_t ompf_papi_preset_count(void);
const ompf_papi_preset_t *ompf_papi_preset_at(size_t i);
const ompf_papi_preset_t *ompf_papi_preset_find(const char *name); /* NULL */

#ifdef __cplusplus
}
#endif
#endif
