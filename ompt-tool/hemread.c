/* The HEM modes (OMPFUSE_MODE=hem / hem-delta; docs/semantics.md,
 * Counters; docs/hem.md).
 *
 * Every requested event is monitored in the one execution, more events
 * than counters.  Two engines give, per event, the cumulative value,
 * time_enabled and time_running at every XU boundary:
 *
 * - emulator (hem/mux.c): the thread's events stay in one real
 *   perf_event group; the engine replays what the kernel would report
 *   with `slots` counters, rotated by a per-thread timer signal.  Used for
 *   software events (the kernel never multiplexes them) and whenever
 *   OMPFUSE_PMU_SLOTS is set;
 * - kernel (hem/hw.c): each event its own group, the kernel time-shares
 *   the PMU.  Used for hardware events without OMPFUSE_PMU_SLOTS.
 *
 * The part between two boundaries is charged to the running XU or the
 * gap (ompf_hem_charge); an XU's value is the selected estimator of its
 * accumulators: hem = cumulative scaling, hem-delta = delta scaling
 * (missing when the event never ran during the XU).
 *
 * Reading the group outside the engine is forbidden while it exists: the
 * engine's busy flag is what keeps its signal handler safe. */
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

enum { ENG_EMULATOR = 1, ENG_KERNEL = 2 };
#define DEFAULT_SLOTS 2u

typedef struct ft_hem {
    unsigned n;                         /* events in the engine */
    int identity;                       /* engine index == set index */
    uint8_t map[OMPF_CNT_MAX_EVENTS];   /* engine index -> set index */
    uint8_t rmap[OMPF_CNT_MAX_EVENTS];  /* set index -> engine index */
    ompf_mux_t *mux;                    /* emulator */
    int stopped;                        /* mux stopped from another thread */
    ompf_hemhw_t *hw[OMPF_CNT_MAX_EVENTS]; /* kernel: one group per event */
    ompf_hem_reading_t first[OMPF_CNT_MAX_EVENTS];
    ompf_hem_reading_t prev[OMPF_CNT_MAX_EVENTS];
    ompf_hem_acc_t gap[OMPF_CNT_MAX_EVENTS]; /* set index */
} ft_hem_t;

static struct {
    int engine;
    int broken;            /* no engine possible: values missing */
    unsigned slots;
    uint64_t period_ns;
    unsigned flags;
    int signo;
    long kernel_ms;        /* kernel: perf_event_mux_interval_ms, -1 */
    /* engine statistics, summed over the threads at close */
    ompf_mux_stats_t st;
} hc;

static long env_long(const char *name, long dflt, long lo, long hi)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi) {
        char key[64], msg[300];
        snprintf(key, sizeof key, "env-%s", name);
        snprintf(msg, sizeof msg,
                 "%s=%s is not a number in %ld..%ld; using %ld", name, v, lo,
                 hi, dflt);
        ft_degrade(key, msg);
        return dflt;
    }
    return x;
}

static uint64_t period_from_env(void)
{
    const char *v = getenv("OMPFUSE_MUX_PERIOD_US");
    if (!v || !*v)
        return OMPF_MUX_DEFAULT_PERIOD_NS;
    char *end;
    errno = 0;
    double us = strtod(v, &end);
    if (errno || *end || !(us * 1000.0 >= OMPF_MUX_MIN_PERIOD_NS) ||
        us > 1e9) {
        char msg[300];
        snprintf(msg, sizeof msg,
                 "OMPFUSE_MUX_PERIOD_US=%s is not a period of at least %u "
                 "microseconds; using %u", v,
                 OMPF_MUX_MIN_PERIOD_NS / 1000,
                 OMPF_MUX_DEFAULT_PERIOD_NS / 1000);
        ft_degrade("mux-period", msg);
        return OMPF_MUX_DEFAULT_PERIOD_NS;
    }
    return (uint64_t)llround(us * 1000.0);
}

/* The kernel's multiplexing interval of the CPU PMU (whole ms), -1. */
static long kernel_interval_ms(void)
{
    FILE *f = fopen("/sys/bus/event_source/devices/cpu/"
                    "perf_event_mux_interval_ms", "r");
    long ms = -1;
    if (f) {
        if (fscanf(f, "%ld", &ms) != 1)
            ms = -1;
        fclose(f);
    }
    return ms;
}

void ft_hem_configure(void)
{
    if (!ft_g.hem)
        return;
    hc.period_ns = period_from_env();
    int any_hw = 0;
    for (size_t i = 0; i < ft_g.nev; i++)
        if (ompf_cnt_set_status(ft_g.set, i, NULL) == OMPF_CNT_OK &&
            ompf_cnt_set_is_hardware(ft_g.set, i))
            any_hw = 1;
    const char *eng = getenv("OMPFUSE_HEM_ENGINE");
    if (eng && *eng && strcmp(eng, "kernel") == 0)
        hc.engine = ENG_KERNEL;
    else if (eng && *eng && strcmp(eng, "emulator") == 0)
        hc.engine = ENG_EMULATOR;
    else {
        if (eng && *eng) {
            char msg[300];
            snprintf(msg, sizeof msg,
                     "OMPFUSE_HEM_ENGINE=%s is neither kernel nor emulator; "
                     "choosing by the events", eng);
            ft_degrade("hem-engine-env", msg);
        }
        hc.engine = ft_g.pmu_slots >= 0 || !any_hw ? ENG_EMULATOR
                                                   : ENG_KERNEL;
    }
    if (hc.engine == ENG_KERNEL && ft_g.pmu_slots >= 0) {
        ft_degrade("hem-kernel-slots",
                   "OMPFUSE_HEM_ENGINE=kernel cannot honour "
                   "OMPFUSE_PMU_SLOTS (the kernel decides how many events "
                   "count at once); using the emulator");
        hc.engine = ENG_EMULATOR;
    }
    if (hc.engine == ENG_KERNEL) {
        hc.kernel_ms = kernel_interval_ms();
        ft_verbose("HEM (%s): one perf_event group per event, the kernel "
                   "multiplexes every %ld ms",
                   ft_g.mode, hc.kernel_ms);
        return;
    }
    if (ft_g.pmu_slots < 0) {
        ft_g.pmu_slots = DEFAULT_SLOTS;
        if (ft_g.nev > DEFAULT_SLOTS)
            ft_warn_once("hem-default-slots",
                         "warning: OMPFUSE_MODE=%s with software events and "
                         "no OMPFUSE_PMU_SLOTS: emulating %u counters (set "
                         "OMPFUSE_PMU_SLOTS=N to choose)",
                         ft_g.mode, DEFAULT_SLOTS);
    }
    if (ft_g.pmu_slots == 0) {
        ft_degrade("hem-zero-slots",
                   "OMPFUSE_PMU_SLOTS=0 leaves no counter to multiplex; "
                   "emulating 1");
        ft_g.pmu_slots = 1;
    }
    hc.slots = ft_g.pmu_slots > OMPF_CNT_MAX_EVENTS
                   ? OMPF_CNT_MAX_EVENTS
                   : (unsigned)ft_g.pmu_slots;
    const char *clk = getenv("OMPFUSE_MUX_CLOCK");
    if (clk && *clk && strcmp(clk, "cpu") == 0)
        hc.flags |= OMPF_MUX_CPU_CLOCK;
    else if (clk && *clk && strcmp(clk, "monotonic") != 0) {
        char msg[300];
        snprintf(msg, sizeof msg,
                 "OMPFUSE_MUX_CLOCK=%s is neither monotonic nor cpu; using "
                 "monotonic", clk);
        ft_degrade("mux-clock", msg);
    }
    int want = (int)env_long("OMPFUSE_MUX_SIGNAL", 0, 0, 1024);
    ompf_error_t err = {0, ""};
    int sig = ompf_mux_signal_init(want, &err);
    if (sig < 0) {
        char msg[700];
        snprintf(msg, sizeof msg,
                 "cannot emulate multiplexing: %s; the HEM values are "
                 "missing", err.msg);
        ft_degrade("mux-signal", msg);
        hc.broken = 1;
        return;
    }
    hc.signo = sig;
    ft_verbose("HEM (%s): emulating %u counters for %zu events, rotation "
               "every %.1f us (%s clock, signal %d)",
               ft_g.mode, hc.slots, ft_g.nev, (double)hc.period_ns / 1000.0,
               (hc.flags & OMPF_MUX_CPU_CLOCK) ? "thread CPU-time"
                                               : "monotonic",
               sig);
}

void ft_hem_header(ompf_profile_t *p)
{
    if (!ft_g.hem)
        return;
    char buf[64];
    ompf_meta_set(p, "hem_engine",
                  hc.engine == ENG_KERNEL ? "kernel" : "emulator");
    if (hc.engine == ENG_KERNEL) {
        if (hc.kernel_ms > 0)
            snprintf(buf, sizeof buf, "%ld", hc.kernel_ms * 1000);
        else
            snprintf(buf, sizeof buf, "unknown");
        ompf_meta_set(p, "mux_period_us", buf);
        ompf_meta_set(p, "mux_clock", "kernel");
        ompf_meta_set(p, "mux_signal", "none");
        return;
    }
    snprintf(buf, sizeof buf, "%g", (double)hc.period_ns / 1000.0);
    ompf_meta_set(p, "mux_period_us", buf);
    ompf_meta_set(p, "mux_clock",
                  (hc.flags & OMPF_MUX_CPU_CLOCK) ? "thread-cputime"
                                                  : "monotonic");
    snprintf(buf, sizeof buf, "%d", hc.signo);
    ompf_meta_set(p, "mux_signal", buf);
}

/* The emulator's reader: one read of the thread's real group, set order
 * mapped to engine order.  Runs in the signal handler: the sample lives
 * on the stack, ompf_cnt_group_read() is one read() (or rdpmc). */
static int mux_read(void *ctx, uint64_t *value, uint64_t *clock_ns)
{
    ft_thread_t *t = ctx;
    ft_hem_t *h = t->hem;
    ompf_cnt_sample_t s;
    if (ompf_cnt_group_read(t->grp, &s) != 0)
        return -1;
    for (unsigned k = 0; k < h->n; k++)
        value[k] = s.value[h->map[k]];
    *clock_ns = s.enabled_ns;
    return 0;
}

static int sample(ft_hem_t *h, uint64_t *v, uint64_t *e, uint64_t *r)
{
    if (h->mux)
        return h->stopped ? OMPF_EIO : ompf_mux_sample(h->mux, v, e, r);
    for (unsigned k = 0; k < h->n; k++)
        if (ompf_hemhw_read(h->hw[k], v + k, e + k, r + k) != 0)
            return OMPF_EIO;
    return 0;
}

static void open_kernel(ft_thread_t *t, ft_hem_t *h)
{
    for (size_t i = 0; i < ft_g.nev; i++) {
        if (ompf_cnt_set_status(ft_g.set, i, NULL) != OMPF_CNT_OK)
            continue; /* reported once at start */
        /* the set's own attr, as the plain mode opens it: every field the
           encoding set (a uprobe's path pointer, a breakpoint's bp_type) */
        struct perf_event_attr a;
        if (ompf_cnt_set_attr(ft_g.set, i, &a, sizeof a) != 0)
            continue;
        a.inherit = 0;
        const char *name = ompf_cnt_set_name(ft_g.set, i);
        ompf_error_t err = {0, ""};
        ompf_hemhw_t *hw = NULL;
        if (ompf_hemhw_open(&a, 1, 0, -1, &hw, &err) != 0) {
            /* the plain mode's words (counters), naming the event */
            int e = errno;
            char key[300], what[160], msg[600];
            ompf_cnt_diagnose(ft_g.set, i, e, what, sizeof what);
            ft_read_note_fail(i, what);
            snprintf(key, sizeof key, "hemhw-%s", name);
            snprintf(msg, sizeof msg, "event %s: %s; its values are missing",
                     name, what);
            ft_degrade(key, msg);
            continue;
        }
        h->rmap[i] = (uint8_t)h->n;
        h->map[h->n] = (uint8_t)i;
        h->hw[h->n++] = hw;
        t->have |= 1ull << i;
    }
}

static void open_emulator(ft_thread_t *t, ft_hem_t *h)
{
    ft_read_open_group(t);
    if (!t->grp || hc.broken) {
        t->have = 0;
        return;
    }
    for (size_t i = 0; i < ft_g.nev; i++)
        if ((t->have >> i) & 1) {
            h->rmap[i] = (uint8_t)h->n;
            h->map[h->n++] = (uint8_t)i;
        }
    if (!h->n)
        return;
    ompf_error_t err = {0, ""};
    if (ompf_mux_create(mux_read, t, h->n, hc.slots, hc.period_ns, hc.flags,
                        &h->mux, &err) != 0) {
        char msg[700];
        snprintf(msg, sizeof msg,
                 "cannot emulate multiplexing on a thread: %s; its HEM "
                 "values are missing", err.msg);
        ft_degrade("mux-create", msg);
        h->mux = NULL;
        t->have = 0;
        h->n = 0;
    }
}

void ft_hem_open(ft_thread_t *t)
{
    ft_hem_t *h = calloc(1, sizeof *h);
    if (!h) {
        ft_warn_once("hem-nomem", "warning: out of memory: a thread's HEM "
                                  "values are missing");
        return;
    }
    t->hem = h;
    t->gapacc = h->gap;
    if (hc.engine == ENG_KERNEL)
        open_kernel(t, h);
    else
        open_emulator(t, h);
    h->identity = 1;
    for (unsigned k = 0; k < h->n; k++)
        h->identity &= h->map[k] == k;
    uint64_t v[OMPF_CNT_MAX_EVENTS], e[OMPF_CNT_MAX_EVENTS],
        r[OMPF_CNT_MAX_EVENTS];
    if (h->n && sample(h, v, e, r) == 0)
        for (unsigned k = 0; k < h->n; k++) {
            ompf_hem_reading_t x = {v[k], e[k], r[k]};
            h->first[k] = h->prev[k] = x;
        }
    ft_verbose("thread %u (tid %d): %u of %zu events in the HEM %s",
               t->index, t->os_tid, h->n, ft_g.nev,
               hc.engine == ENG_KERNEL ? "kernel groups" : "emulator");
}

void ft_hem_boundary(ft_thread_t *t)
{
    ft_hem_t *h = t->hem;
    if (!h || !h->n || !t->have) /* none, or lost: no read per boundary */
        return;
    uint64_t v[OMPF_CNT_MAX_EVENTS], e[OMPF_CNT_MAX_EVENTS],
        r[OMPF_CNT_MAX_EVENTS];
    if (sample(h, v, e, r) != 0) {
        ft_read_lost(t, "reading the counters failed (descriptor closed "
                        "or replaced)");
        return;
    }
    ompf_hem_acc_t *acc = t->target;
    if (h->identity) {
        ompf_hem_charge(h->n, h->prev, v, e, r, acc);
        return;
    }
    for (unsigned k = 0; k < h->n; k++) {
        ompf_hem_reading_t now = {v[k], e[k], r[k]};
        ompf_hem_acc_add(&acc[h->map[k]], &h->prev[k], &now);
        h->prev[k] = now;
    }
}

static double estimate(const ompf_hem_acc_t *a, int est)
{
    return est == FT_HEM_DELTA ? ompf_hem_acc_delta(a) : ompf_hem_acc_hem(a);
}

void ft_hem_values(const ft_thread_t *t, const void *accv, int est,
                   double *vals)
{
    const ompf_hem_acc_t *a = accv;
    for (size_t i = 0; i < ft_g.nev; i++)
        vals[i] = (t->have >> i) & 1 ? estimate(&a[i], est) : OMPF_MISSING;
}

void ft_hem_acc_merge(void *dstv, const void *srcv)
{
    ompf_hem_acc_t *d = dstv;
    const ompf_hem_acc_t *s = srcv;
    for (size_t i = 0; i < ft_g.nev; i++) {
        d[i].hem += s[i].hem;
        d[i].dvalue += s[i].dvalue;
        d[i].denabled += s[i].denabled;
        d[i].drunning += s[i].drunning;
    }
}

void ft_hem_thread_record(const ft_thread_t *t, int est, ompf_thread_t *rec)
{
    const ft_hem_t *h = t->hem;
    for (size_t i = 0; i < ft_g.nev; i++) {
        if (!h || !((t->have >> i) & 1)) {
            rec->total[i] = rec->gap[i] = OMPF_MISSING;
            rec->enabled_ns[i] = rec->running_ns[i] = OMPF_MISSING;
            continue;
        }
        unsigned k = h->rmap[i];
        const ompf_hem_reading_t *a = &h->first[k], *b = &h->prev[k];
        /* the thread's whole life as one interval, with the mode's
         * estimator: hem telescopes with its XUs and gap */
        rec->total[i] = est == FT_HEM_DELTA ? ompf_hem_delta(a, b)
                                            : ompf_hem_cumulative(a, b);
        rec->gap[i] = estimate(&h->gap[i], est);
        rec->enabled_ns[i] = (double)(b->enabled - a->enabled);
        rec->running_ns[i] = (double)(b->running - a->running);
    }
}

int ft_hem_intact(const ft_thread_t *t)
{
    const ft_hem_t *h = t->hem;
    if (!h)
        return 0;
    if (hc.engine != ENG_KERNEL)
        return !h->stopped && t->grp && ompf_cnt_group_intact(t->grp);
    for (unsigned k = 0; k < h->n; k++)
        if (!ompf_hemhw_intact(h->hw[k]))
            return 0;
    return 1;
}

void ft_hem_close(ft_thread_t *t)
{
    ft_hem_t *h = t->hem;
    if (!h)
        return;
    if (h->mux && !h->stopped) {
        ompf_mux_stats_t s;
        ompf_mux_get_stats(h->mux, &s);
        pthread_mutex_lock(&ft_g.lock);
        hc.st.rotations += s.rotations;
        hc.st.signals += s.signals;
        hc.st.deferred += s.deferred;
        hc.st.catchups += s.catchups;
        hc.st.read_errors += s.read_errors;
        pthread_mutex_unlock(&ft_g.lock);
        if (t == ft_self) {
            ompf_mux_destroy(h->mux);
            h->mux = NULL;
        } else {
            /* another thread's engine: stop its timer and wait for its
             * handler; the memory stays (a signal may still be queued
             * for the owner, and the handler then sees it dead) */
            ompf_mux_stop(h->mux);
            h->stopped = 1;
        }
    }
    for (unsigned k = 0; k < h->n && hc.engine == ENG_KERNEL; k++) {
        ompf_hemhw_close(h->hw[k]);
        h->hw[k] = NULL;
    }
}

void ft_hem_trailer(ompf_profile_t *p)
{
    if (!ft_g.hem || hc.engine != ENG_EMULATOR)
        return;
    char buf[32];
#define STAT(key, field)                                                      \
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)hc.st.field);       \
    ompf_meta_set(p, key, buf)
    STAT("hem_rotations", rotations);
    STAT("hem_signals", signals);
    STAT("hem_deferred_signals", deferred);
    STAT("hem_catchups", catchups);
    STAT("hem_read_errors", read_errors);
#undef STAT
}
