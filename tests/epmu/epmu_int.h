/* Internals of the emulated PMU (libepmu.so, docs/epmu.md): the model
 * (model.c) and the interposed calls (shim.c). */
#ifndef EPMU_INT_H
#define EPMU_INT_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EPMU_MAX_EVENTS 4096
#define EPMU_MAX_FIXED 4

typedef struct epmu_ctx epmu_ctx_t;

typedef struct epmu_ev {
    int used;
    int refs;              /* descriptors naming it */
    uint64_t id;           /* PERF_EVENT_IOC_ID */
    uint32_t type;
    uint64_t config;
    uint64_t read_format;
    int hw;                /* needs a counter */
    int fixed;             /* fixed counter it may use, -1 */
    int on;                /* own enable state */
    struct epmu_ev *leader;
    struct epmu_ev *next_sib; /* members in open order (leader first) */
    struct epmu_ev *next_grp; /* leaders in rotation order */
    epmu_ctx_t *ctx;
    uint32_t rate;         /* counts per 8 ns of CPU time */
    uint32_t weight;       /* counts per epmu_signal() unit */
    uint64_t count, frac;  /* frac: eighths not yet counted */
    uint64_t truth;        /* what it would count never multiplexed */
    uint64_t truth_frac;
    uint64_t enabled_ns, running_ns;
    int active;            /* group on the counters in this slot */
    struct perf_event_mmap_page *page; /* the emulator's view */
    uint64_t nreads, first_value, first_enabled, first_running, last_value, last_enabled, last_running;
} epmu_ev_t;

struct epmu_ctx {
    pid_t tid;
    uint64_t last_ns;   /* thread CPU time accounted up to */
    uint64_t slot;      /* rotation slot of last_ns */
    int frozen;         /* thread gone: time stands still */
    int need_rotate;    /* a group did not fit in this slot */
    epmu_ev_t *groups;  /* leaders, head first */
    uint64_t rotations;
};

typedef struct epmu_cfg {
    unsigned gp, fixed; /* general and fixed counters */
    unsigned busy;      /* counters another user takes every other slot */
    uint64_t tick_ns;   /* multiplexing interval, thread CPU time */
    int rate_on;        /* 0: counts come from epmu_signal() only */
    int rdpmc;          /* cap_user_rdpmc in the mmap page */
    const char *log;    /* where closed events are written */
} epmu_cfg_t;

extern epmu_cfg_t epmu_cfg;

void epmu_lock(void);
void epmu_unlock(void);
void epmu_config(void);
/* perf_event_open for an emulated type; -errno.  *evp gets the event. */
int epmu_model_open(const struct perf_event_attr *a, pid_t pid, int cpu,
                    epmu_ev_t *group, epmu_ev_t **evp);
/* Last descriptor gone. */
void epmu_model_release(epmu_ev_t *e);
ssize_t epmu_model_read(epmu_ev_t *e, void *buf, size_t n);
int epmu_model_ioctl(epmu_ev_t *e, unsigned long req, unsigned long arg);
void epmu_model_signal(pid_t tid, unsigned long n);
void epmu_model_log(epmu_ev_t *e);
void epmu_model_log_all(void);

#endif
