/* Internal state of the OMPT tool (libompfuse.so).  See docs/tool.md. */
#ifndef OMPFT_TOOL_H
#define OMPFT_TOOL_H

#include <omp-tools.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#if defined(__has_include)
#if __has_include(<sys/rseq.h>) && (defined(__x86_64__) || defined(__aarch64__))
#include <sys/rseq.h>
#define FT_HAVE_RSEQ 1
#endif
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "ompfuse/counters.h"
#include "ompfuse/file.h"
#include "ompfuse/hem.h"
#include "ompfuse/profile.h"

#define FT_CTX_MAX 4        /* nesting of single/masked/taskloop in a task */
#define FT_EXIT_STRICT 125  /* exit status under OMPFUSE_STRICT=1 */

/* A labelling context: something whose children get labels below it. */
typedef struct ft_ctx {
    uint64_t label;     /* label node id */
    uint64_t rank;      /* children so far (sequential) / prev (racing) */
    uint64_t construct; /* construct id of the context's owner */
    uint8_t racing;     /* implicit task: threads race to create children */
    uint8_t taskloop;   /* tasks created here are taskloop chunk/splitters */
    uintptr_t codeptr;  /* taskloop: the address libomp reports for it */
} ft_ctx_t;

/* An XU in progress.  r is the record as the stream takes it: filled at
 * the XU's start (fields that do not change), completed at its end (id,
 * end_ns), so that emitting it copies nothing. */
typedef struct ft_xu {
    ompf_xu_t r;        /* r.parts counts parts (0: not started) */
    uint64_t label, construct;
    uint64_t part_start; /* start of the part running (or last run) */
    uint8_t active; /* implicit task: a chunk is open */
    uint8_t running; /* explicit task: a part is open (libomp may report a
                        switch out of a task, then one from it to itself) */
} ft_xu_t;

enum { FT_IMPLICIT = 1, FT_EXPLICIT = 2, FT_INITIAL = 3, FT_PARALLEL = 4 };

/* Task (and parallel region) state, pooled per thread, hung off
 * ompt_data_t.ptr.  acc[] holds the XU's counter sums: nev uint64_t in
 * modes run/reference, nev ompf_hem_acc_t in the HEM modes (ft_g.acc_bytes
 * either way). */
typedef struct ft_task {
    struct ft_task *link;   /* free list; implicit: previous task */
    struct ft_thread *owner; /* thread whose pool it came from */
    struct ft_task *impl_outer; /* implicit: previous implicit task */
    /* Zeroed at allocation: from xu up to ctx[0] included (one memset of
     * what some path reads before writing); the fields after ctx[0] are
     * written before they are read (chunk_ctx by the dispatch that opens
     * the chunk, tl_* with tl, last_tl_* with last_tl_codeptr). */
    ft_xu_t xu;             /* explicit: itself; implicit: open chunk */
    uint64_t ws_rank;       /* implicit: worksharing constructs met */
    uint64_t ws_label, ws_construct;
    uintptr_t last_tl_codeptr; /* see last_tl_label */
    uint32_t team_size, thread_num; /* implicit (and parallel: size) */
    uint32_t in_sync;       /* inside taskwait/barrier/taskgroup waits */
    uint16_t depth;         /* ctx entries in use (>= 1) */
    uint16_t overflow;      /* pushes beyond FT_CTX_MAX */
    uint8_t kind;
    uint8_t is_xu;          /* explicit task recorded as XU */
    uint8_t tl;             /* created by a taskloop (chunk or splitter) */
    uint8_t tl_splitter;    /* it created taskloop tasks: not an XU */
    uint8_t tl_lost;        /* chunk task whose chunk was not recovered */
    uint8_t ws_kind;        /* ompf_xu_kind_t of the open loop's chunks */
    ft_ctx_t ctx[FT_CTX_MAX]; /* ctx[0]: the task itself */
    ft_ctx_t chunk_ctx;     /* implicit: labelling context of the chunk */
    uint64_t tl_label, tl_construct; /* the taskloop instance */
    uintptr_t tl_codeptr;   /* the address libomp reports for it */
    /* The last taskloop this task encountered: libomp reports the tasks
     * that splitter tasks create with the encountering task as parent,
     * sometimes after the taskloop's work end. */
    uint64_t last_tl_label, last_tl_construct;
    uint64_t acc[];
} ft_task_t;

/* Per-thread construct cache entry. */
typedef struct ft_cslot {
    uint64_t key, id, addr;
} ft_cslot_t;
#define FT_CCACHE 512

typedef struct ft_thread {
    uint32_t index;
    int32_t os_tid;
    ompf_wstream_t *stream;
    ompf_wstream_t *stream2; /* OMPFUSE_HEM_BOTH: the sibling profile */
    ompf_cnt_group_t *grp;
    uint64_t seq;           /* label/XU id sequence */
    uint64_t id_base;       /* (index + 1) << 40: ids are id_base | seq */
    /* of the innermost implicit task (impl): what an XU starting here
     * records as its team (0 and 1 outside any) */
    uint32_t team_thread, team_size;
    ft_task_t *cur;         /* task running on this thread */
    ft_task_t *impl;        /* innermost implicit task */
    void *target;           /* accumulator charged at the next boundary:
                               uint64_t[nev], or ompf_hem_acc_t[nev] in
                               the HEM modes */
    void *gapacc;           /* the gap accumulator (gap or hem->gap) */
    ft_task_t *free;        /* pool */
    ft_task_t *remote;      /* pool records freed by other threads */
    int in_cb;              /* inside a callback (finalize handshake) */
    int ended;
    int mux;                /* multiplexing seen on this thread */
    uint64_t tl_recovered;  /* taskloop chunks without dispatch event */
    uint64_t tl_waited;     /* of those, run and finished by a thief before
                               the creator stored their chunk */
    struct ft_thread *next_all;
    ompf_cnt_sample_t sample;
    uint64_t have;          /* bit i: event i opened in this thread */
    uint64_t *first, *last, *gap; /* nev each */
    struct ft_hem *hem;     /* HEM modes: engine and readings (hemread.c) */
    /* core and numa of topo_cpu: XUs mostly start on the CPU of the last */
    int32_t topo_cpu, topo_core, topo_numa;
    /* the last construct looked up (a loop creating tasks asks for the
     * same one each time); cm_id 0: none */
    int cm_kind;
    const void *cm_code;
    uint64_t cm_parent, cm_id, cm_addr;
    ft_cslot_t ccache[FT_CCACHE];
} ft_thread_t;

typedef struct ft_global {
    int active;
    int verbose;
    int strict;
    int trace;
    const char *mode;
    const char *role;
    long pmu_slots;         /* -1: no limit */
    long tl_wait_ns;        /* taskloop chunk wait bound (callbacks.c) */
    size_t nev;
    ompf_cnt_set_t *set;
    ompf_writer_t *writer;
    char out_path[4096];
    /* OMPFUSE_HEM_BOTH=1: the other estimator's profile, same XUs */
    ompf_writer_t *writer2;
    char out_path2[4096];
    uint64_t t0_ns;
    pid_t pid;              /* the process being profiled (not a fork) */
    size_t task_bytes;
    size_t acc_bytes;       /* an XU's accumulators (see ft_task_t) */
    int hem;                /* 0, or FT_HEM_CUMULATIVE / FT_HEM_DELTA */
    int use_membarrier;
    volatile int closing;
    /* a taskloop has begun (never reset): before, no task can be one of
     * its tasks and task creation skips the checks (callbacks.c) */
    int taskloops;
    pthread_mutex_t lock;   /* thread list, constructs, warnings */
    pthread_mutex_t life_lock; /* thread creation vs. finalize */
    ft_thread_t *threads;
    uint32_t nthreads;
    uint32_t first_team;    /* team size of the first parallel region */
    ompt_get_task_info_t get_task_info;
    int dispatch_ok;
    /* offset of a task's dispatch chunk from its ompt_data_t in libomp,
     * learnt from taskloop dispatches (0 unknown, -1 inconsistent) */
    long tl_chunk_off;
    uintptr_t omp_base;     /* libomp module */
    char omp_path[4096];
    char omp_build_id[80];
    ompf_profile_t *header;
} ft_global_t;

extern ft_global_t ft_g;
extern __thread ft_thread_t *ft_self __attribute__((tls_model("initial-exec")));

/* Timestamps: the TSC (calibrated once, clock.c) where the kernel trusts
 * it -- a third of the cost of clock_gettime on this kind of VM -- else
 * CLOCK_MONOTONIC_RAW. */
typedef struct ft_clock {
    int tsc;
    uint16_t shift;
    uint32_t mult;
    uint64_t zero;
    uint64_t mult32; /* mult << (32 - shift) (shift <= 32) */
    uint64_t rel; /* zero - ft_g.t0_ns (ft_now_rel) */
} ft_clock_t;
extern ft_clock_t ft_clk;
void ft_clock_init(void);

uint64_t ft_now_slow(void); /* CLOCK_MONOTONIC_RAW (clock.c) */

#if defined(__x86_64__)
/* base + (TSC * mult) >> shift, as (TSC * mult32) >> 32: one 128-bit
 * product and a constant shift, equal to perf's userpage arithmetic
 * (quotient and remainder; mult32 < 2^40, so nothing overflows). */
static inline __attribute__((always_inline)) uint64_t ft_tsc_ns(uint64_t base)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    uint64_t c = (uint64_t)hi << 32 | lo;
    return base + (uint64_t)(((unsigned __int128)c * ft_clk.mult32) >> 32);
}
#endif

static inline __attribute__((always_inline)) uint64_t ft_now(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(ft_clk.tsc, 1))
        return ft_tsc_ns(ft_clk.zero);
#endif
    return ft_now_slow();
}

/* ft_now() - ft_g.t0_ns (the same value): the time since the tool's
 * start, with the subtraction folded into the TSC's offset. */
static inline __attribute__((always_inline)) uint64_t ft_now_rel(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(ft_clk.tsc, 1))
        return ft_tsc_ns(ft_clk.rel);
#endif
    return ft_now_slow() - ft_g.t0_ns;
}

/* CPU of the calling thread: the kernel keeps it in the thread's rseq
 * area (glibc >= 2.35 registers one): a load instead of the getcpu vDSO
 * call, which costs ~30 ns on a VM. */
static inline int ft_cpu(void)
{
#ifdef FT_HAVE_RSEQ
    if (__rseq_size > 0) {
        const struct rseq *r =
            (const struct rseq *)((char *)__builtin_thread_pointer() +
                                  __rseq_offset);
        int c = (int)__atomic_load_n(&r->cpu_id, __ATOMIC_RELAXED);
        if (c >= 0)
            return c;
    }
#endif
    return sched_getcpu();
}

/* callbacks.c */
void ft_register_callbacks(ompt_set_callback_t set_cb);
ft_thread_t *ft_thread_new(int initial);
void ft_thread_finish(ft_thread_t *t, ompf_wstream_t *s,
                      ompf_wstream_t *s2);

/* reading.c: counters per thread (the seam for multiplexing modes) */
void ft_read_open(ft_thread_t *t, int initial);
void ft_read_close(ft_thread_t *t);
/* Opens the thread's one group (all usable events), sets t->have,
 * reports failures once per event and cause. */
void ft_read_open_group(ft_thread_t *t);
/* Why event i failed to open on some thread (NULL if it never did). */
const char *ft_read_fail_reason(size_t i);
/* Records why event i failed to open (first cause wins; thread start only). */
void ft_read_note_fail(size_t i, const char *why);
/* The thread's counters failed (a read failed, or a descriptor is no
 * longer its event): every value of t from now on is missing, and the
 * reason goes to the event table and one warning line. */
void ft_read_lost(ft_thread_t *t, const char *why);
/* At thread end: are the thread's descriptors still its events? */
void ft_read_check(ft_thread_t *t);
/* Why event i was lost on some thread after opening, and on how many. */
const char *ft_read_lost_reason(size_t i, unsigned *threads);
/* One reading into t->sample: 0, or nonzero when the read failed. */
static inline int ft_read_sample(ft_thread_t *t)
{
    return ompf_cnt_group_read(t->grp, &t->sample);
}

/* hemread.c: the HEM modes (docs/hem.md).  The tool reads value,
 * time_enabled and time_running per event at every boundary, from the
 * multiplexing emulator (software events, OMPFUSE_PMU_SLOTS) or from one
 * kernel group per event (hardware events: the kernel multiplexes). */
enum { FT_HEM_CUMULATIVE = 1, FT_HEM_DELTA = 2 };
/* Called by configure() once the events are encoded, before any thread. */
void ft_hem_configure(void);
void ft_hem_open(ft_thread_t *t);
/* One boundary: sample, charge the part to t->target. */
void ft_hem_boundary(ft_thread_t *t);
/* An estimator (FT_HEM_*) of an XU's (or the gap's) accumulators. */
void ft_hem_values(const ft_thread_t *t, const void *acc, int est,
                   double *vals);
/* dst += src (accumulators of a task that is not an XU into the gap). */
void ft_hem_acc_merge(void *dst, const void *src);
/* Thread record fields: totals (scaled), gap, enabled_ns, running_ns. */
void ft_hem_thread_record(const ft_thread_t *t, int est,
                          ompf_thread_t *rec);
/* Stops the engine (from any thread: ompf_mux_stop; on the owner:
 * ompf_mux_destroy) and closes the counters. */
void ft_hem_close(ft_thread_t *t);
/* 1 when t's HEM counters still read (descriptors theirs, no failure). */
int ft_hem_intact(const ft_thread_t *t);
/* Metadata and event statuses of a HEM run (trailer). */
void ft_hem_trailer(ompf_profile_t *trailer);
void ft_hem_header(ompf_profile_t *header);

/* constructs.c */
int ft_constructs_init(void *omp_symbol);
/* 1 if a loaded module other than libomp (omp_base) and this tool
 * (self_base) calls the runtime's taskloop entry (imports.c) */
int ft_imports_taskloop(uintptr_t omp_base, uintptr_t self_base);
/* Construct id (stable across runs) for codeptr of kind k met in the
 * context of construct parent (which names it when codeptr lies in
 * libomp); *addr receives the label "addr" component (module-relative
 * offset).  Writes the construct record once per thread. */
uint64_t ft_construct(ft_thread_t *t, const void *codeptr, int kind,
                      uint64_t parent, uint64_t *addr);
/* ft_construct with a one-entry memo of the thread's last lookup (not for
 * taskloops, whose identity comes from the stack). */
static inline __attribute__((always_inline)) uint64_t
ft_construct_memo(ft_thread_t *t, const void *codeptr,
                                         int kind, uint64_t parent,
                                         uint64_t *addr)
{
    if (t->cm_id && codeptr == t->cm_code && kind == t->cm_kind &&
        parent == t->cm_parent) {
        *addr = t->cm_addr;
        return t->cm_id;
    }
    uint64_t id = ft_construct(t, codeptr, kind, parent, addr);
    if (kind != OMPF_CK_TASKLOOP) {
        t->cm_code = codeptr;
        t->cm_kind = kind;
        t->cm_parent = parent;
        t->cm_id = id;
        t->cm_addr = *addr;
    }
    return id;
}

/* cache.c: the start-up cache (OMPFUSE_CACHE_DIR): loaded before the
 * clock, events and topology are set up, saved after; without it every
 * lookup misses and every put is ignored. */
/* A small file (boot id, clocksource) into buf, NUL-terminated ("" when
 * unreadable): one read, no stdio buffer, for the start-up. */
static inline void ft_read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = '\0';
}

void ft_cache_load(void);
void ft_cache_save(void);
const char *ft_cache_event(const char *name, void *ctx); /* ompf_cnt_lookup_t */
void ft_cache_put_event(const char *name, const char *enc);
/* 1 TSC (mult, shift), -1 no usable TSC, 0 not cached */
int ft_cache_on(void);
int ft_cache_clock(uint32_t *mult, uint16_t *shift);
void ft_cache_put_clock(int tsc, uint32_t mult, uint16_t shift);
/* CPUs in the table (0: not cached) */
int ft_cache_topo(const int32_t **core, const int32_t **numa);
void ft_cache_put_topo(int n, const int32_t *core, const int32_t *numa);
/* The CPU model (metadata cpu_model), from the cache or /proc/cpuinfo;
 * asked before ft_cache_save so that the next run has it. */
const char *ft_cache_cpu_model(void);

/* topo.c */
void ft_topo_init(void);
/* Why hwloc could not be loaded (lazylib.c), NULL when it was or was not tried. */
const char *ft_hwloc_why(void);
void ft_topo_of(int cpu, int32_t *core, int32_t *numa);

/* meta.c */
int ft_meta_fill(ompf_profile_t *p, const char *runtime_version);
void ft_default_output(char *buf, size_t len, const char *dir);

/* fatal.c: fatal signals (docs/tool.md, "Fatal endings") */
#define FT_NFATAL 5 /* SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL */
void ft_fatal_init(void);
/* Writes every thread's buffered XUs to the temporary profile and stops
 * recording; async-signal-safe, once per process (why prefixes its
 * message, if any). */
void ft_salvage(const char *why);
/* For the sigaction/signal hooks: when sig is one the tool handles,
 * records act as the program's disposition, returns the previous one in
 * old, and returns 1; otherwise 0. */
int ft_fatal_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* hook.c: exec family, sigaction and signal redirected in loaded modules */
void ft_hooks_install(void);

/* tool.c: finishes the profile now (before exec); nothing in a forked
 * child or when already finished. */
void ft_finalize_now(void);

/* messages: one per cause */
void ft_warn_once(const char *key, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ft_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A problem that degrades the run: one warning per key, or the end of
 * the program under OMPFUSE_STRICT=1. */
void ft_degrade(const char *key, const char *msg);
void ft_fail_strict(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

#endif
