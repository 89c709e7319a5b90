/* OMPT callbacks: XU boundaries, labels, counter charging
 * (docs/semantics.md: OpenMP runtime, Labels, Counters).
 *
 * Hot path rules: state lives in the thread (ft_self) and in pooled task
 * records hung off ompt_data_t; no locks, no global atomics, no malloc per
 * XU; at most one counter read (one read() or rdpmc) per boundary.
 *
 * One file over 600 lines: the callbacks share static inline helpers on
 * the hot path (boundary reads, label steps, record writes) that must stay
 * in one translation unit to be inlined without link-time optimisation. */
#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "callback_list.h"
#include "tool.h"
#include "wstream.h"

__thread ft_thread_t *ft_self __attribute__((tls_model("initial-exec")));

/* always inlined: constant arguments (n, plain) then fold */
#define FT_INLINE inline __attribute__((always_inline))

/* ---- configuration ---------------------------------------------------
 * The per-XU callbacks (task create and schedule, dispatch) are compiled
 * twice: a general copy that reads the run's configuration, and a plain
 * one for the usual run without counters -- no events, no second profile,
 * no trace, membarrier available, the TSC as clock on x86-64 -- registered
 * when the run is one (ft_register_callbacks).  The helpers below take
 * `plain`, a constant wherever they are inlined, so that in the plain copy
 * every test of the configuration folds away (~60 instructions per task,
 * ~2 ns). */
static FT_INLINE size_t cfg_nev(int plain) { return plain ? 0 : ft_g.nev; }
static FT_INLINE int cfg_hem(int plain) { return plain ? 0 : ft_g.hem; }
static FT_INLINE int cfg_trace(int plain) { return plain ? 0 : ft_g.trace; }
static FT_INLINE size_t cfg_acc_bytes(int plain)
{
    return plain ? 0 : ft_g.acc_bytes;
}
static FT_INLINE int cfg_membarrier(int plain)
{
    return plain ? 1 : ft_g.use_membarrier;
}
static FT_INLINE ompf_wstream_t *cfg_stream2(int plain, const ft_thread_t *t)
{
    return plain ? NULL : t->stream2;
}

/* ---- entering / leaving callbacks -----------------------------------
 * Finalize may run while other threads are still inside callbacks (exit()
 * in a parallel region).  Each callback marks itself busy and checks the
 * closing flag; the finalizer sets the flag, issues membarrier (so the fast
 * path needs only a compiler barrier), and waits for busy threads. */
#define ENTER_P(t, plain)                                                     \
    ft_thread_t *t = ft_self;                                                 \
    if (!t || t->ended)                                                       \
        return;                                                               \
    __atomic_store_n(&t->in_cb, 1, __ATOMIC_RELAXED);                         \
    if (cfg_membarrier(plain))                                                \
        __atomic_signal_fence(__ATOMIC_SEQ_CST);                              \
    else                                                                      \
        __atomic_thread_fence(__ATOMIC_SEQ_CST);                              \
    if (__atomic_load_n(&ft_g.closing, __ATOMIC_RELAXED)) {                   \
        __atomic_store_n(&t->in_cb, 0, __ATOMIC_RELAXED);                     \
        return;                                                               \
    }
#define ENTER(t) ENTER_P(t, 0)

#define LEAVE(t)                                                              \
    __atomic_store_n(&t->in_cb, 0, __ATOMIC_RELEASE)

#define TRACE_P(plain, ...)                                                   \
    do {                                                                      \
        if (cfg_trace(plain))                                                 \
            fprintf(stderr, "ompfuse-trace: " __VA_ARGS__);                   \
    } while (0)
#define TRACE(...) TRACE_P(0, __VA_ARGS__)

/* ---- pool ---------------------------------------------------------------- */

/* Records go back to the pool of the thread that allocated them: tasks
 * created on one thread and completed on another would otherwise make the
 * creator allocate without bound.  Other threads push onto the owner's
 * remote list (lock-free push); the owner takes the whole list at once, so
 * there is no ABA problem. */
/* The pool is empty: records freed by other threads, else a new slab
 * (bounded by the peak of live tasks).  NULL when out of memory. */
static __attribute__((noinline)) ft_task_t *task_refill(ft_thread_t *t)
{
    ft_task_t *x = NULL;
    if (__atomic_load_n(&t->remote, __ATOMIC_RELAXED))
        x = __atomic_exchange_n(&t->remote, NULL, __ATOMIC_ACQUIRE);
    if (!x) {
        size_t n = 64;
        char *slab = malloc(ft_g.task_bytes * n);
        if (!slab)
            return NULL;
        for (size_t i = 0; i < n; i++) {
            ft_task_t *r = (ft_task_t *)(slab + i * ft_g.task_bytes);
            r->link = x;
            x = r;
        }
    }
    return x;
}

static FT_INLINE ft_task_t *task_alloc(ft_thread_t *t, int plain)
{
    ft_task_t *x = t->free;
    if (__builtin_expect(!x, 0) && !(x = task_refill(t)))
        return NULL;
    t->free = x->link;
    /* a constant size (inlined stores); ctx[1..] are set when pushed */
    memset(&x->xu, 0, offsetof(ft_task_t, ctx) + sizeof(ft_ctx_t) -
                          offsetof(ft_task_t, xu));
    if (cfg_acc_bytes(plain))
        memset(x->acc, 0, ft_g.acc_bytes);
    x->owner = t;
    x->depth = 1;
    return x;
}

static void task_free(ft_thread_t *t, ft_task_t *x)
{
    ft_thread_t *o = x->owner;
    x->kind = 0;
    if (o == t || !o) {
        x->link = t->free;
        t->free = x;
        return;
    }
    ft_task_t *head = __atomic_load_n(&o->remote, __ATOMIC_RELAXED);
    do {
        x->link = head;
    } while (!__atomic_compare_exchange_n(&o->remote, &head, x, 1,
                                          __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
}

/* ---- labels --------------------------------------------------------------- */

static inline uint64_t new_id(ft_thread_t *t)
{
    return t->id_base | ++t->seq;
}

/* n label nodes below parent, each a child of the one before (ids are
 * consecutive: one stream call); returns the last one's id. */
static FT_INLINE uint64_t label_path(ft_thread_t *t, uint64_t parent,
                                     const uint64_t *comps, unsigned n,
                                     int plain)
{
    uint64_t first = t->id_base | (t->seq + 1);
    t->seq += n;
    fmt_ws_path(t->stream, first, parent, comps, n);
    if (cfg_stream2(plain, t))
        fmt_ws_path(t->stream2, first, parent, comps, n);
    return first + n - 1;
}

static FT_INLINE uint64_t label_child(ft_thread_t *t, uint64_t parent,
                                      uint64_t comp, int plain)
{
    return label_path(t, parent, &comp, 1, plain);
}

/* Where children of task x get their labels: the innermost pushed
 * construct (single, masked, taskloop), else the open chunk (a chunk's
 * body is sequential), else the task itself. */
static inline ft_ctx_t *top_ctx(ft_task_t *x)
{
    if (x->depth == 1 && x->xu.active && x->kind != FT_EXPLICIT)
        return &x->chunk_ctx;
    return &x->ctx[x->depth - 1];
}

/* Label of a construct instance created in ctx by a thread of task enc
 * (docs/semantics.md, Labels): sequential contexts give rank.addr; implicit
 * tasks, where threads race, give 0.(TID + prev*W).addr. */
static FT_INLINE uint64_t label_in_ctx(ft_thread_t *t, ft_task_t *enc,
                                       ft_ctx_t *c, uint64_t addr, int plain)
{
    if (c->racing) {
        uint64_t w = enc->team_size ? enc->team_size : 1;
        uint64_t comps[3] = {0, enc->thread_num + c->rank * w, addr};
        c->rank++;
        return label_path(t, c->label, comps, 3, plain);
    }
    uint64_t comps[2] = {++c->rank, addr};
    return label_path(t, c->label, comps, 2, plain);
}

static ft_ctx_t *ctx_push(ft_task_t *x, uint64_t label, uint64_t construct,
                          int taskloop)
{
    if (x->depth == FT_CTX_MAX) {
        x->overflow++;
        return NULL;
    }
    ft_ctx_t *c = &x->ctx[x->depth++];
    c->label = label;
    c->rank = 0;
    c->construct = construct;
    c->racing = 0;
    c->taskloop = (uint8_t)taskloop;
    c->codeptr = 0;
    return c;
}

static void ctx_pop(ft_task_t *x)
{
    if (x->overflow)
        x->overflow--;
    else if (x->depth > 1)
        x->depth--;
}

/* ---- counters -------------------------------------------------------------- */

/* Time since the tool's start (plain: the TSC, see ft_register_callbacks). */
static FT_INLINE uint64_t now_rel(int plain)
{
#if defined(__x86_64__)
    if (plain)
        return ft_tsc_ns(ft_clk.rel);
#endif
    (void)plain;
    return ft_now_rel();
}

/* The times of one boundary.  The counters are sampled at an unknown
 * instant inside the read (a system call): an interrupt, a reschedule on
 * its way out or a stall of the virtual CPU falls between that instant
 * and any clock reading, and its CPU time goes to the counts of one side
 * only.  So the clock is read before and after the counters: the XU that
 * ends here ends at `after`, the one that starts begins at `before`, and
 * every XU's interval contains the whole window its counts come from
 * (docs/tool.md, "How counters are attributed"). */
typedef struct ft_when {
    uint64_t before, after; /* 0, 0: no counter read (one clock reading
                               taken on demand by when_fill) */
} ft_when_t;

static FT_INLINE void when_fill(ft_when_t *w, int plain)
{
    if (!w->after)
        w->before = w->after = now_rel(plain);
}

static inline void boundary_read(ft_thread_t *t);

/* Charges the counts since the previous boundary to t->target; *w gets
 * the clock readings around the counter read. */
static FT_INLINE void boundary(ft_thread_t *t, ft_when_t *w, int plain)
{
    w->before = w->after = 0;
    if (!cfg_nev(plain) || (!ft_g.hem && !t->grp))
        return;
    w->before = now_rel(plain);
    boundary_read(t);
    w->after = now_rel(plain);
}

static inline void boundary_read(ft_thread_t *t)
{
    if (ft_g.hem) {
        ft_hem_boundary(t);
        return;
    }
    if (ft_read_sample(t) != 0) {
        ft_read_lost(t, "reading the counters failed (descriptor closed "
                        "or replaced)");
        return;
    }
    if (t->sample.running_ns < t->sample.enabled_ns)
        t->mux = 1;
    uint64_t *acc = t->target;
    for (size_t i = 0; i < ft_g.nev; i++) {
        uint64_t v = t->sample.value[i];
        acc[i] += v - t->last[i];
        t->last[i] = v;
    }
}

/* What the thread's counts go to while task x runs. */
static FT_INLINE void retarget(ft_thread_t *t, int plain)
{
    if (!cfg_nev(plain)) /* nothing is read, nothing charged */
        return;
    ft_task_t *x = t->cur;
    void *tg = t->gapacc;
    if (x && !x->in_sync) {
        if (x->kind == FT_EXPLICIT)
            tg = x->acc;
        else if (x->xu.active)
            tg = x->acc;
    }
    t->target = tg;
}

static FT_INLINE void xu_begin(ft_thread_t *t, ft_xu_t *u, uint64_t now)
{
    ompf_xu_t *r = &u->r;
    r->start_ns = now;
    int cpu = ft_cpu();
    if (cpu != t->topo_cpu) {
        t->topo_cpu = cpu;
        ft_topo_of(cpu, &t->topo_core, &t->topo_numa);
    }
    r->cpu = cpu;
    r->core = t->topo_core;
    r->numa = t->topo_numa;
    r->team_thread = t->team_thread;
    r->team_size = t->team_size;
}

static void xu_emit_values(ft_thread_t *t, ft_xu_t *u, const uint64_t *acc);

/* The part of XU u that ends now on this thread (docs/tool.md, "Parts"):
 * a record in the thread's own stream, keyed by the XU's id, which is
 * taken at its first part's end instead of at its end. */
static __attribute__((noinline)) void part_emit(ft_thread_t *t, ft_xu_t *u, uint64_t now)
{
    if (!u->r.id)
        u->r.id = new_id(t);
    ompf_part_t pt = {t->index, u->part_start, now};
    ompf_wstream_part(t->stream, u->r.id, &pt);
    if (t->stream2)
        ompf_wstream_part(t->stream2, u->r.id, &pt);
}

/* Completes and writes XU u: inline for the tool without events. */
static FT_INLINE void xu_emit(ft_thread_t *t, ft_xu_t *u, const uint64_t *acc,
                              uint64_t now, int plain)
{
    ompf_xu_t *r = &u->r;
    if (__builtin_expect(r->parts > 1, 0)) {
        if (u->running) /* its last part; the others ended earlier */
            part_emit(t, u, now);
    } else {
        r->id = new_id(t);
    }
    r->thread = t->index; /* untied: the thread it completed on */
    if (!r->parts)
        r->parts = 1;
    r->end_ns = now;
    if (cfg_nev(plain) || cfg_stream2(plain, t))
        xu_emit_values(t, u, acc);
    else
        /* no events: the profile has none (build_header) */
        fmt_ws_xu_noval(t->stream, r, u->construct, u->label);
}

static void xu_emit_values(ft_thread_t *t, ft_xu_t *u, const uint64_t *acc)
{
    ompf_xu_t *r = &u->r;
    double vals[OMPF_CNT_MAX_EVENTS];
    if (ft_g.hem)
        ft_hem_values(t, acc, ft_g.hem, vals);
    else
        for (size_t i = 0; i < ft_g.nev; i++)
            vals[i] = (t->have >> i) & 1 ? (double)acc[i] : OMPF_MISSING;
    fmt_ws_xu(t->stream, r, u->construct, u->label, vals);
    if (t->stream2) {
        /* OMPFUSE_HEM_BOTH: the other estimator, same XU */
        ft_hem_values(t, acc, FT_HEM_CUMULATIVE + FT_HEM_DELTA - ft_g.hem,
                      vals);
        fmt_ws_xu(t->stream2, r, u->construct, u->label, vals);
    }
}

/* Closes the open chunk of implicit task x (charged up to now). */
static FT_INLINE void chunk_close_at(ft_thread_t *t, ft_task_t *x,
                                    uint64_t now, int plain)
{
    if (!x->xu.active)
        return;
    xu_emit(t, &x->xu, x->acc, now, plain);
    x->xu.active = 0;
}

/* ... at the boundary w (just taken) */
static void chunk_close(ft_thread_t *t, ft_task_t *x, ft_when_t *w)
{
    if (x->xu.active) {
        when_fill(w, 0);
        chunk_close_at(t, x, w->after, 0);
    }
}

static inline void tl_chunk_before_child(ft_thread_t *t, ft_task_t *x,
                                         ompt_data_t *task_data);

/* ---- threads ---------------------------------------------------------------- */

static void on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data)
{
    /* finalize takes life_lock to close: a thread is either created
     * completely (and finalized) or not at all */
    pthread_mutex_lock(&ft_g.life_lock);
    ft_thread_t *t = NULL;
    if (!__atomic_load_n(&ft_g.closing, __ATOMIC_RELAXED))
        t = ft_thread_new(type == ompt_thread_initial);
    if (t)
        t->target = t->gapacc;
    thread_data->ptr = t;
    ft_self = t;
    pthread_mutex_unlock(&ft_g.life_lock);
}

static void on_thread_end(ompt_data_t *thread_data)
{
    (void)thread_data;
    ENTER(t);
    ft_when_t w;
    boundary(t, &w, 0);
    ft_thread_finish(t, t->stream, t->stream2);
    t->ended = 1;
    LEAVE(t);
}

/* ---- parallel regions and implicit tasks --------------------------------- */

static void on_parallel_begin(ompt_data_t *encountering_task_data,
                              const ompt_frame_t *encountering_task_frame,
                              ompt_data_t *parallel_data,
                              unsigned int requested_parallelism, int flags,
                              const void *codeptr_ra)
{
    (void)encountering_task_frame;
    (void)flags;
    ENTER(t);
    ft_task_t *enc = encountering_task_data ? encountering_task_data->ptr
                                            : NULL;
    if (enc)
        tl_chunk_before_child(t, enc, encountering_task_data);
    ft_task_t *p = task_alloc(t, 0);
    if (p) {
        p->kind = FT_PARALLEL;
        ft_ctx_t *c = enc ? top_ctx(enc) : NULL;
        uint64_t addr;
        uint64_t cons = ft_construct_memo(t, codeptr_ra, OMPF_CK_PARALLEL,
                                     c ? c->construct : 0, &addr);
        p->ctx[0].construct = cons;
        p->ctx[0].label = c ? label_in_ctx(t, enc, c, addr, 0)
                            : label_child(t, 0, addr, 0);
        p->team_size = requested_parallelism;
    }
    parallel_data->ptr = p;
    TRACE("T%u parallel_begin req=%u label=%llx\n", t->index,
          requested_parallelism,
          p ? (unsigned long long)p->ctx[0].label : 0ull);
    LEAVE(t);
}

static void on_parallel_end(ompt_data_t *parallel_data,
                            ompt_data_t *encountering_task_data, int flags,
                            const void *codeptr_ra)
{
    (void)encountering_task_data;
    (void)flags;
    (void)codeptr_ra;
    ENTER(t);
    ft_task_t *p = parallel_data ? parallel_data->ptr : NULL;
    if (p && p->kind == FT_PARALLEL) {
        task_free(t, p);
        parallel_data->ptr = NULL;
    }
    TRACE("T%u parallel_end\n", t->index);
    LEAVE(t);
}

/* x becomes the innermost implicit task (NULL: none) */
static void impl_set(ft_thread_t *t, ft_task_t *x)
{
    t->impl = x;
    t->team_thread = x ? x->thread_num : 0;
    t->team_size = x ? x->team_size : 1;
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint,
                             ompt_data_t *parallel_data,
                             ompt_data_t *task_data,
                             unsigned int actual_parallelism,
                             unsigned int index, int flags)
{
    ENTER(t);
    ft_when_t w;
    boundary(t, &w, 0);
    if (endpoint == ompt_scope_begin) {
        ft_task_t *x = task_alloc(t, 0);
        if (!x) {
            task_data->ptr = NULL;
            LEAVE(t);
            return;
        }
        task_data->ptr = x;
        if (flags & ompt_task_initial) {
            x->kind = FT_INITIAL;
            x->ctx[0].label = 0;
            x->ctx[0].racing = 0;
            x->team_size = 1;
            x->thread_num = 0;
        } else {
            ft_task_t *p = parallel_data ? parallel_data->ptr : NULL;
            x->kind = FT_IMPLICIT;
            x->ctx[0].label = p ? p->ctx[0].label : 0;
            x->ctx[0].construct = p ? p->ctx[0].construct : 0;
            x->ctx[0].racing = 1;
            x->team_size = actual_parallelism;
            x->thread_num = index;
            if (index == 0 && ft_g.first_team == 0)
                ft_g.first_team = actual_parallelism;
        }
        x->link = t->cur;
        x->impl_outer = t->impl;
        t->cur = x;
        impl_set(t, x);
        TRACE("T%u implicit_begin n=%u idx=%u flags=%x label=%llx\n",
              t->index, actual_parallelism, index, flags,
              (unsigned long long)x->ctx[0].label);
    } else {
        ft_task_t *x = task_data ? task_data->ptr : NULL;
        TRACE("T%u implicit_end cur=%s\n", t->index,
              x == t->cur ? "same" : "other");
        if (x) {
            chunk_close(t, x, &w);
            if (t->impl == x)
                impl_set(t, x->impl_outer);
            if (t->cur == x)
                t->cur = x->link;
            task_data->ptr = NULL;
            task_free(t, x);
        }
    }
    retarget(t, 0);
    LEAVE(t);
}

/* ---- worksharing ------------------------------------------------------------ */

static int chunk_kind(ompt_work_t w)
{
    switch ((int)w) {
    case ompt_work_loop_static:
        return OMPF_XU_STATIC_CHUNKS;
    case ompt_work_sections:
        return OMPF_XU_SECTION;
    default:
        return OMPF_XU_LOOP_CHUNK;
    }
}

static void on_work(ompt_work_t wstype, ompt_scope_endpoint_t endpoint,
                    ompt_data_t *parallel_data, ompt_data_t *task_data,
                    uint64_t count, const void *codeptr_ra)
{
    (void)parallel_data;
    (void)count;
    ENTER(t);
    ft_task_t *x = task_data ? task_data->ptr : NULL;
    if (!x) {
        LEAVE(t);
        return;
    }
    if (endpoint == ompt_scope_begin)
        tl_chunk_before_child(t, x, task_data);
    int loopish = 0;
    switch ((int)wstype) {
    case ompt_work_loop:
    case ompt_work_loop_static:
    case ompt_work_loop_dynamic:
    case ompt_work_loop_guided:
    case ompt_work_loop_other:
    case ompt_work_sections:
        loopish = 1;
        /* fall through */
    case ompt_work_workshare:
    case ompt_work_scope:
    case ompt_work_single_executor:
    case ompt_work_single_other:
        if (endpoint == ompt_scope_begin) {
            /* every thread of the team meets worksharing constructs in
             * the same order: rank them in the enclosing region */
            uint64_t rank = ++x->ws_rank;
            int ck = loopish ? (wstype == ompt_work_sections
                                    ? OMPF_CK_SECTIONS
                                    : OMPF_CK_LOOP)
                             : OMPF_CK_SINGLE;
            if (wstype == ompt_work_single_other ||
                wstype == ompt_work_workshare || wstype == ompt_work_scope)
                break;
            uint64_t addr;
            uint64_t cons = ft_construct_memo(t, codeptr_ra, ck,
                                         x->ctx[0].construct, &addr);
            uint64_t comps[2] = {rank, addr};
            uint64_t l = label_path(t, x->ctx[0].label, comps, 2, 0);
            if (loopish) {
                ft_when_t w;
                boundary(t, &w, 0);
                chunk_close(t, x, &w);
                x->ws_label = l;
                x->ws_construct = cons;
                x->ws_kind = (uint8_t)chunk_kind(wstype);
                retarget(t, 0);
            } else {
                /* single: its body is sequential, tasks created in it
                 * are children of the construct instance */
                ctx_push(x, l, cons, 0);
            }
        } else {
            if (loopish) {
                ft_when_t w;
                boundary(t, &w, 0);
                chunk_close(t, x, &w);
                retarget(t, 0);
            } else if (wstype == ompt_work_single_executor) {
                ctx_pop(x);
            }
        }
        break;
    case ompt_work_taskloop:
        if (endpoint == ompt_scope_begin) {
            ft_ctx_t *c = top_ctx(x);
            uint64_t addr;
            uint64_t cons = ft_construct(t, codeptr_ra, OMPF_CK_TASKLOOP,
                                         c->construct, &addr);
            uint64_t l = label_in_ctx(t, x, c, addr, 0);
            ctx_push(x, l, cons, 1);
            x->last_tl_label = l;
            x->last_tl_construct = cons;
            x->last_tl_codeptr = (uintptr_t)codeptr_ra;
            /* before this thread creates the taskloop's tasks, which
             * other threads get through the runtime's queues */
            if (!__atomic_load_n(&ft_g.taskloops, __ATOMIC_RELAXED))
                __atomic_store_n(&ft_g.taskloops, 1, __ATOMIC_RELAXED);
        } else {
            ctx_pop(x);
        }
        break;
    default:
        break;
    }
    TRACE("T%u work %d %s\n", t->index, (int)wstype,
          endpoint == ompt_scope_begin ? "begin" : "end");
    LEAVE(t);
}

/* Makes taskloop task x the XU of chunk ch: labelled by the taskloop
 * instance and the chunk's first iteration. */
static void tl_chunk(ft_thread_t *t, ft_task_t *x,
                     const ompt_dispatch_chunk_t *ch)
{
    x->is_xu = 1;
    x->xu.r.kind = OMPF_XU_TASKLOOP_CHUNK;
    x->xu.construct = x->tl_construct;
    x->xu.label = label_child(t, x->tl_label, ch->start, 0);
    x->xu.r.iter_start = ch->start;
    x->xu.r.iter_count = ch->iterations;
    x->ctx[0].label = x->xu.label;
    x->ctx[0].construct = x->tl_construct;
    x->ctx[0].rank = 0;
}

/* One step of a bounded wait for another thread's store: spin briefly,
 * then yield; 0 once 50 ms (OMPFUSE_TASKLOOP_WAIT_MS) have passed since
 * t0.  50 ms covers most preemptions on an oversubscribed machine and
 * bounds the cost where the store never comes (a runtime that stores
 * nothing). */
static int tl_wait_step(unsigned spin, const struct timespec *t0)
{
    if (spin < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return 1;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - t0->tv_sec) * 1000000000L + (now.tv_nsec - t0->tv_nsec) > ft_g.tl_wait_ns)
        return 0;
    sched_yield();
    return 1;
}

/* Waits (bounded) for the creating thread to store the chunk of a task
 * that a thief ran, and completed, before libomp stored it.  The task is
 * alive until this callback returns, and the creator stores the chunk a few
 * instructions after queueing the task unless it is preempted. */
static uint64_t tl_wait_chunk(const ompt_dispatch_chunk_t *ch)
{
    uint64_t it = __atomic_load_n(&ch->iterations, __ATOMIC_ACQUIRE);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned spin = 0; it == 0 && tl_wait_step(spin, &t0); spin++)
        it = __atomic_load_n(&ch->iterations, __ATOMIC_ACQUIRE);
    return it;
}

/* Waits (bounded) until some dispatch has told where libomp keeps a
 * taskloop task's chunk: a thief can finish the very first chunk before any
 * chunk has been dispatched (measured: 1 run in ~500 under ASan at 4
 * threads lost that chunk).  Any later chunk's dispatch, on any thread,
 * tells it. */
static long tl_wait_off(void)
{
    long off = __atomic_load_n(&ft_g.tl_chunk_off, __ATOMIC_RELAXED);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned spin = 0; off == 0 && tl_wait_step(spin, &t0); spin++)
        off = __atomic_load_n(&ft_g.tl_chunk_off, __ATOMIC_RELAXED);
    return off;
}

/* A taskloop task completed without a dispatch and without creating
 * taskloop tasks: a chunk whose dispatch libomp skipped (it stores the
 * chunk after queueing the task, so a thief can start it first, and even
 * finish it first).  Read the chunk where the dispatches said it lives;
 * if a thief ran it, wait for the creator to store it.  Run by its creator,
 * the task was executed inside its own queueing call (a serialized team):
 * nothing is stored until we return, so there is nothing to wait for. */
static void tl_missed_dispatch(ft_thread_t *t, ft_task_t *x,
                               ompt_data_t *task_data)
{
    if (x->tl_lost) /* tried when it created something: wait once */
        return;
    long off = __atomic_load_n(&ft_g.tl_chunk_off, __ATOMIC_RELAXED);
    if (off == 0 && x->owner != t)
        off = tl_wait_off();
    if (off > 0) {
        const ompt_dispatch_chunk_t *ch =
            (const ompt_dispatch_chunk_t *)((const char *)task_data + off);
        uint64_t it = __atomic_load_n(&ch->iterations, __ATOMIC_ACQUIRE);
        if (it == 0 && x->owner != t) {
            it = tl_wait_chunk(ch);
            if (it)
                t->tl_waited++;
        }
        if (it > 0) {
            TRACE("T%u taskloop chunk %llu recovered without dispatch\n",
                  t->index, (unsigned long long)ch->start);
            tl_chunk(t, x, ch);
            t->tl_recovered++;
            return;
        }
    }
    x->tl_lost = 1;
    ft_warn_once("tl-missed",
                 "warning: the OpenMP runtime ran a taskloop chunk task "
                 "without reporting its iteration range; such chunks are "
                 "not recorded as XUs (their counts go to the gap)");
}

/* Task x is about to label something created in it (a task, a construct
 * instance): if x is a taskloop chunk task whose dispatch libomp skipped
 * (a thief started it before the creator stored the chunk), recover its
 * chunk now, not only at its end -- else what it creates is labelled
 * under x's unset label (the root) instead of under the chunk. */
static inline void tl_chunk_before_child(ft_thread_t *t, ft_task_t *x,
                                         ompt_data_t *task_data)
{
    if (__builtin_expect(x->tl && !x->is_xu && !x->tl_splitter, 0) &&
        x->kind == FT_EXPLICIT)
        tl_missed_dispatch(t, x, task_data);
}

static FT_INLINE void dispatch(ompt_data_t *task_data, ompt_dispatch_t kind,
                              ompt_data_t instance, int plain)
{
    ENTER_P(t, plain);
    ft_task_t *x = task_data ? task_data->ptr : NULL;
    if (!x) {
        LEAVE(t);
        return;
    }
    if (kind == ompt_dispatch_ws_loop_chunk || kind == ompt_dispatch_section) {
        uint64_t start = 0, iters = 1;
        if (kind == ompt_dispatch_ws_loop_chunk) {
            const ompt_dispatch_chunk_t *ch = instance.ptr;
            if (!ch || ch->iterations == 0) {
                LEAVE(t);
                return;
            }
            start = ch->start;
            iters = ch->iterations;
        } else {
            /* no section index is reported: with the static assignment
             * of sections, the thread number identifies the section */
            start = t->impl ? t->impl->thread_num : 0;
        }
        ft_when_t w;
        boundary(t, &w, plain);
        /* the previous chunk ends after the counter read, this one
         * begins before it (without a read: one timestamp) */
        when_fill(&w, plain);
        chunk_close_at(t, x, w.after, plain);
        ft_xu_t *u = &x->xu;
        /* every field the chunk's record takes is set here, by xu_begin
         * or when it is emitted (no memset of the whole record) */
        u->r.id = 0;
        u->running = 0;
        if (cfg_acc_bytes(plain))
            memset(x->acc, 0, ft_g.acc_bytes);
        u->r.kind = kind == ompt_dispatch_section ? OMPF_XU_SECTION
                                                  : x->ws_kind;
        u->construct = x->ws_construct;
        u->label = label_child(t, x->ws_label, start, plain);
        u->r.iter_start = kind == ompt_dispatch_section ? 0 : start;
        u->r.iter_count = kind == ompt_dispatch_section ? 0 : iters;
        u->r.parts = 1;
        u->active = 1;
        x->chunk_ctx.label = u->label;
        x->chunk_ctx.rank = 0;
        x->chunk_ctx.construct = u->construct;
        x->chunk_ctx.racing = 0;
        x->chunk_ctx.taskloop = 0;
        xu_begin(t, u, w.before);
        retarget(t, plain);
    } else if (kind == ompt_dispatch_taskloop_chunk) {
        /* inside a taskloop task: a chunk XU labelled by the taskloop
         * instance and the chunk's first iteration (splitter tasks get
         * a dispatch too; they are recognised when they create tasks) */
        const ompt_dispatch_chunk_t *ch = instance.ptr;
        if (x->kind == FT_EXPLICIT && x->tl && !x->tl_splitter && ch)
            tl_chunk(t, x, ch);
        /* libomp passes the chunk stored in the task's runtime record: keep
         * its offset from task_data to recover chunks whose dispatch the
         * runtime skips (see tl_missed_dispatch) */
        long off = (long)((const char *)ch - (const char *)task_data);
        long known = __atomic_load_n(&ft_g.tl_chunk_off, __ATOMIC_RELAXED);
        if (off > 0 && off < 512 && known == 0)
            __atomic_store_n(&ft_g.tl_chunk_off, off, __ATOMIC_RELAXED);
        else if (known > 0 && off != known)
            __atomic_store_n(&ft_g.tl_chunk_off, -1, __ATOMIC_RELAXED);
    }
    TRACE_P(plain, "T%u dispatch kind=%d task %p off %ld\n", t->index, (int)kind,
          (void *)x, (long)((char *)instance.ptr - (char *)task_data));
    LEAVE(t);
}

static void on_dispatch(ompt_data_t *parallel_data, ompt_data_t *task_data,
                        ompt_dispatch_t kind, ompt_data_t instance)
{
    (void)parallel_data;
    dispatch(task_data, kind, instance, 0);
}

static void on_dispatch_plain(ompt_data_t *parallel_data,
                              ompt_data_t *task_data, ompt_dispatch_t kind,
                              ompt_data_t instance)
{
    (void)parallel_data;
    dispatch(task_data, kind, instance, 1);
}

/* ---- tasks ---------------------------------------------------------------- */

static FT_INLINE void task_create(ompt_data_t *encountering_task_data,
                                 ompt_data_t *new_task_data, int flags,
                                 const void *codeptr_ra, int plain)
{
    ENTER_P(t, plain);
    new_task_data->ptr = NULL;
    if (!(flags & ompt_task_explicit) || (flags & ompt_task_taskwait)) {
        LEAVE(t);
        return;
    }
    ft_task_t *enc = encountering_task_data ? encountering_task_data->ptr
                                            : NULL;
    ft_task_t *x = task_alloc(t, plain);
    if (!x) {
        LEAVE(t);
        return;
    }
    x->kind = FT_EXPLICIT;
    new_task_data->ptr = x;
    ft_ctx_t *c = enc ? top_ctx(enc) : NULL;
    /* Tasks of a taskloop (chunks and splitters) carry the address libomp
     * reports for the taskloop.  The runtime names as their parent either
     * the task that encountered the taskloop or the splitter task creating
     * them; a splitter creating them runs on this thread. */
    uintptr_t cp = (uintptr_t)codeptr_ra;
    ft_task_t *cur = t->cur;
    ft_task_t *tl_src = NULL;
    if (!__atomic_load_n(&ft_g.taskloops, __ATOMIC_RELAXED)) {
        /* no taskloop yet: none of its tasks */
    } else if (enc && enc->last_tl_codeptr && cp == enc->last_tl_codeptr) {
        x->tl_label = enc->last_tl_label;
        x->tl_construct = enc->last_tl_construct;
        tl_src = enc;
    } else if (enc && enc->kind == FT_EXPLICIT && enc->tl &&
               cp == enc->tl_codeptr) {
        x->tl_label = enc->tl_label;
        x->tl_construct = enc->tl_construct;
        tl_src = enc;
    } else if (cur && cur->kind == FT_EXPLICIT && cur->tl &&
               cp == cur->tl_codeptr) {
        x->tl_label = cur->tl_label;
        x->tl_construct = cur->tl_construct;
        tl_src = cur;
    }
    if (tl_src) {
        /* a chunk or splitter task (known at dispatch) */
        x->tl = 1;
        x->tl_codeptr = cp;
        /* the task creating it, if a taskloop task, is a splitter */
        ft_task_t *sp[2] = {enc, cur};
        for (int k = 0; k < 2; k++)
            if (sp[k] && sp[k]->kind == FT_EXPLICIT && sp[k]->tl &&
                sp[k]->tl_codeptr == cp && (k == 0 || sp[k] != enc)) {
                TRACE_P(plain, "T%u splitter %p (was xu %d, chunk %llu)\n", t->index,
                      (void *)sp[k], sp[k]->is_xu,
                      (unsigned long long)sp[k]->xu.r.iter_start);
                sp[k]->tl_splitter = 1;
                sp[k]->is_xu = 0;
            }
    } else {
        if (enc) {
            tl_chunk_before_child(t, enc, encountering_task_data);
            c = top_ctx(enc);
        }
        uint64_t addr;
        uint64_t cons = ft_construct_memo(t, codeptr_ra, OMPF_CK_TASK,
                                     c ? c->construct : 0, &addr);
        uint64_t l = c ? label_in_ctx(t, enc, c, addr, plain)
                       : label_child(t, 0, addr, plain);
        x->ctx[0].label = l;
        x->ctx[0].construct = cons;
        x->xu.label = l;
        x->xu.construct = cons;
        x->xu.r.kind = OMPF_XU_TASK;
        x->is_xu = 1;
    }
    TRACE_P(plain, "T%u task_create %p flags=%x label=%llx taskloop=%d\n", t->index,
          (void *)x, flags, (unsigned long long)x->ctx[0].label, x->tl);
    LEAVE(t);
}

static void on_task_create(ompt_data_t *encountering_task_data,
                           const ompt_frame_t *encountering_task_frame,
                           ompt_data_t *new_task_data, int flags,
                           int has_dependences, const void *codeptr_ra)
{
    (void)encountering_task_frame;
    (void)has_dependences;
    task_create(encountering_task_data, new_task_data, flags, codeptr_ra, 0);
}

static void on_task_create_plain(ompt_data_t *encountering_task_data,
                                 const ompt_frame_t *encountering_task_frame,
                                 ompt_data_t *new_task_data, int flags,
                                 int has_dependences, const void *codeptr_ra)
{
    (void)encountering_task_frame;
    (void)has_dependences;
    task_create(encountering_task_data, new_task_data, flags, codeptr_ra, 1);
}

static FT_INLINE void task_schedule(ompt_data_t *prior_task_data,
                                   ompt_task_status_t prior_task_status,
                                   ompt_data_t *next_task_data, int plain)
{
    ENTER_P(t, plain);
    ft_when_t w;
    boundary(t, &w, plain);
    ft_task_t *prior = prior_task_data ? prior_task_data->ptr : NULL;
    ft_task_t *next = next_task_data ? next_task_data->ptr : NULL;
    TRACE_P(plain, "T%u schedule %p(%d,tl%d,xu%d) st=%d -> %p(%d)\n", t->index,
          (void *)prior, prior ? prior->kind : -1, prior ? prior->tl : -1,
          prior ? prior->is_xu : -1, (int)prior_task_status, (void *)next,
          next ? next->kind : -1);
    /* switch and yield suspend the prior task; every other status ends
     * its execution (complete; cancel; detach and fulfill of detached
     * tasks, whose later fulfill event then finds no record) */
    int ended = prior_task_status != ompt_task_switch &&
                prior_task_status != ompt_task_yield;
    /* the task that ends ends after the counter read, the one that
     * starts begins before it */
    if (prior && prior->kind == FT_EXPLICIT && ended) {
        if (prior->tl && !prior->is_xu && !prior->tl_splitter)
            tl_missed_dispatch(t, prior, prior_task_data);
        if (prior->is_xu) {
            when_fill(&w, plain);
            xu_emit(t, &prior->xu, prior->acc, w.after, plain);
        } else {
            /* splitter / internal task: its counts are runtime work */
            if (cfg_hem(plain)) {
                if (t->hem)
                    ft_hem_acc_merge(t->gapacc, prior->acc);
            } else {
                for (size_t i = 0; i < cfg_nev(plain); i++)
                    t->gap[i] += prior->acc[i];
            }
        }
        prior_task_data->ptr = NULL;
        if (t->cur == prior)
            t->cur = NULL;
        task_free(t, prior);
    } else if (prior && prior->kind == FT_EXPLICIT && prior != next && prior->xu.running) {
        /* suspended: one of its parts ends here (whether it is an XU may
           be learnt later: a taskloop chunk without dispatch; the reader
           ignores the parts of tasks that are not).  A switch from a task
           to itself suspends nothing. */
        when_fill(&w, plain);
        part_emit(t, &prior->xu, w.after);
        prior->xu.running = 0;
    }
    if (!next) {
        /* a task we hold no record for: never keep a stale pointer */
        TRACE_P(plain, "T%u schedule to unknown task (data %p status %d)\n", t->index,
              (void *)next_task_data, (int)prior_task_status);
        t->cur = NULL;
    } else {
        if (next->kind == FT_EXPLICIT && !next->xu.running) {
            when_fill(&w, plain);
            if (next->xu.r.parts++ == 0)
                xu_begin(t, &next->xu, w.before);
            next->xu.part_start = w.before;
            next->xu.running = 1;
        }
        t->cur = next;
    }
    retarget(t, plain);
    LEAVE(t);
}

static void on_task_schedule(ompt_data_t *prior_task_data,
                             ompt_task_status_t prior_task_status,
                             ompt_data_t *next_task_data)
{
    task_schedule(prior_task_data, prior_task_status, next_task_data, 0);
}

static void on_task_schedule_plain(ompt_data_t *prior_task_data,
                                   ompt_task_status_t prior_task_status,
                                   ompt_data_t *next_task_data)
{
    task_schedule(prior_task_data, prior_task_status, next_task_data, 1);
}

/* ---- synchronization: waits are not work of the waiting XU --------------- */

static void on_sync_region(ompt_sync_region_t kind,
                           ompt_scope_endpoint_t endpoint,
                           ompt_data_t *parallel_data,
                           ompt_data_t *task_data, const void *codeptr_ra)
{
    (void)kind;
    (void)parallel_data;
    (void)codeptr_ra;
    ENTER(t);
    ft_task_t *x = task_data ? task_data->ptr : NULL;
    ft_when_t w;
    boundary(t, &w, 0);
    if (x) {
        if (endpoint == ompt_scope_begin)
            x->in_sync++;
        else if (x->in_sync)
            x->in_sync--;
    }
    retarget(t, 0);
    LEAVE(t);
}

static void on_masked(ompt_scope_endpoint_t endpoint,
                      ompt_data_t *parallel_data, ompt_data_t *task_data,
                      const void *codeptr_ra)
{
    (void)parallel_data;
    ENTER(t);
    ft_task_t *x = task_data ? task_data->ptr : NULL;
    if (x) {
        if (endpoint == ompt_scope_begin) {
            tl_chunk_before_child(t, x, task_data);
            /* the body runs on thread 0 only and sequentially: its
             * children are children of the masked instance */
            ft_ctx_t *c = top_ctx(x);
            uint64_t addr;
            uint64_t cons = ft_construct_memo(t, codeptr_ra, OMPF_CK_MASKED,
                                         c->construct, &addr);
            uint64_t l = label_in_ctx(t, x, c, addr, 0);
            ctx_push(x, l, cons, 0);
        } else {
            ctx_pop(x);
        }
    }
    LEAVE(t);
}

/* ---- registration -------------------------------------------------------- */

void ft_register_callbacks(ompt_set_callback_t set_cb)
{
    /* dispatch comes last: its result says whether chunks are seen */
    int rc = 0;
#define REG(ev, fn) rc = set_cb(ev, (ompt_callback_t)(fn));
    OMPF_TOOL_CALLBACKS(REG)
#undef REG
    /* the plain copies replace the general ones where they apply (see
     * "configuration"); the same events, so the same answers */
    int plain_clock = 1;
#if defined(__x86_64__)
    plain_clock = ft_clk.tsc; /* their clock reads the TSC */
#endif
    if (!ft_g.nev && !ft_g.hem && !ft_g.trace && ft_g.use_membarrier &&
        !ft_g.writer2 && plain_clock) {
        set_cb(ompt_callback_task_create,
               (ompt_callback_t)on_task_create_plain);
        set_cb(ompt_callback_task_schedule,
               (ompt_callback_t)on_task_schedule_plain);
        rc = set_cb(ompt_callback_dispatch,
                    (ompt_callback_t)on_dispatch_plain);
    }
    ft_g.dispatch_ok = rc == ompt_set_always || rc == ompt_set_sometimes ||
                       rc == ompt_set_sometimes_paired;
}
