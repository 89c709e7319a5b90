/*
 * User-space emulation of perf_event multiplexing (see hem.h, docs/hem.md).
 *
 * The real group counts all N events all the time.  The engine replays
 * what the kernel would do with N single-event groups and `slots`
 * counters: at every sample it credits the time elapsed since the previous
 * sample (on the group's time_enabled clock) to every event's enabled time,
 * and to the running time and value of the events in the active window
 * only.  The window advances by one event per rotation.
 *
 * Concurrency: the engine belongs to one thread; its timer signal is
 * directed at that thread (SIGEV_THREAD_ID), so the only concurrency is
 * the handler interrupting the owner.  `busy` marks the owner inside the
 * engine; a signal that finds it set only records `pending`, and the owner
 * completes the rotation before leaving.  Signal fences keep the compiler
 * from moving the stores across those points.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ompfuse/hem.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define MUX_MAGIC 0x6d757821u /* "mux!" */
#define MUX_FIRST_SIGNAL_OFFSET 8

struct ompf_mux {
    _Atomic uint32_t magic;   /* MUX_MAGIC while live; 0 once stopped */
    _Atomic int in_handler;   /* the handler is using the engine */
    unsigned n, slots, flags;
    uint64_t period_ns;
    ompf_mux_read_fn read;
    void *ctx;
    int fd;             /* for the built-in reader; -1 otherwise */
    int has_timer;
    timer_t timer;
    volatile sig_atomic_t busy, pending;
    unsigned head;      /* first event of the active window */
    uint64_t last_rot_clock;
    uint64_t base_clock, prev_clock;
    uint64_t base_val[OMPF_MUX_MAX_EVENTS];
    uint64_t prev_val[OMPF_MUX_MAX_EVENTS];
    uint64_t now_val[OMPF_MUX_MAX_EVENTS];
    uint64_t v_val[OMPF_MUX_MAX_EVENTS];
    uint64_t v_en[OMPF_MUX_MAX_EVENTS];
    uint64_t v_run[OMPF_MUX_MAX_EVENTS];
    uint64_t rdbuf[3 + OMPF_MUX_MAX_EVENTS];
    ompf_mux_stats_t st;
};

static atomic_int mux_signo;
static pthread_mutex_t mux_init_lock = PTHREAD_MUTEX_INITIALIZER;

static void fence(void)
{
    atomic_signal_fence(memory_order_seq_cst);
}

static int is_active(const ompf_mux_t *m, unsigned i)
{
    return (i + m->n - m->head) % m->n < m->slots;
}

/* Credits the interval since the previous reading (now_val, clock). */
static void accumulate(ompf_mux_t *m, uint64_t clock)
{
    uint64_t d = clock > m->prev_clock ? clock - m->prev_clock : 0;
    for (unsigned i = 0; i < m->n; i++) {
        m->v_en[i] += d;
        if (is_active(m, i)) {
            m->v_run[i] += d;
            m->v_val[i] += m->now_val[i] - m->prev_val[i];
        }
        m->prev_val[i] = m->now_val[i];
    }
    if (clock > m->prev_clock)
        m->prev_clock = clock;
}

/* The kernel rotates a task's events at its per-CPU timer only when the
 * task is on that CPU, so a task rotates about once per period of its own
 * running time.  The timer here runs on wall time: rotate only when the
 * thread ran at least half a period since the last rotation (half, so
 * that a thread running flat out rotates at every signal despite signal
 * latency; a thread running a fraction f of the time rotates about every
 * 1/(2f) signals instead of every 1/f). */
static void rotate(ompf_mux_t *m)
{
    if (m->slots >= m->n ||
        m->prev_clock - m->last_rot_clock < m->period_ns / 2 ||
        m->prev_clock <= m->last_rot_clock)
        return;
    m->head = (m->head + 1) % m->n;
    m->last_rot_clock = m->prev_clock;
    m->st.rotations++;
}

static int read_now(ompf_mux_t *m, uint64_t *clock)
{
    if (m->read(m->ctx, m->now_val, clock) != 0) {
        m->st.read_errors++;
        return OMPF_EIO;
    }
    return 0;
}

/* Sample + rotate; caller holds busy. */
static int tick_locked(ompf_mux_t *m)
{
    uint64_t clock;
    if (read_now(m, &clock) != 0)
        return OMPF_EIO;
    accumulate(m, clock);
    rotate(m);
    return 0;
}

static void mux_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    int saved = errno;
    /* Only our timers' signals carry SI_TIMER and our pointer; anything
     * else sent with this number is ignored. */
    if (si && si->si_code == SI_TIMER && si->si_value.sival_ptr) {
        ompf_mux_t *m = si->si_value.sival_ptr;
        /* in_handler before magic, ompf_mux_stop() the other way round
         * (both sequentially consistent): a stopper never returns while a
         * handler that saw the engine live is still inside it. */
        atomic_store(&m->in_handler, 1);
        if (atomic_load(&m->magic) == MUX_MAGIC) {
            m->st.signals++;
            if (m->busy) {
                m->pending = 1;
                m->st.deferred++;
            } else {
                m->busy = 1;
                fence();
                (void)tick_locked(m);
                fence();
                m->busy = 0;
            }
        }
        atomic_store(&m->in_handler, 0);
    }
    errno = saved;
}

int ompf_mux_signal_init(int signo, ompf_error_t *err)
{
    pthread_mutex_lock(&mux_init_lock);
    int have = atomic_load(&mux_signo);
    if (have > 0) {
        pthread_mutex_unlock(&mux_init_lock);
        return have;
    }
    int lo = signo ? signo : SIGRTMIN + MUX_FIRST_SIGNAL_OFFSET;
    int hi = signo ? signo : SIGRTMAX;
    if (signo && (signo < SIGRTMIN || signo > SIGRTMAX)) {
        pthread_mutex_unlock(&mux_init_lock);
        return ompf_error_set(err, OMPF_EINVAL,
                              "multiplexing signal %d is not a real-time "
                              "signal (%d..%d); choose one in that range",
                              signo, SIGRTMIN, SIGRTMAX);
    }
    for (int s = lo; s <= hi; s++) {
        struct sigaction old;
        if (sigaction(s, NULL, &old) != 0)
            continue;
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue; /* the program (or another library) owns it */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = mux_handler;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(s, &sa, NULL) != 0)
            continue;
        atomic_store(&mux_signo, s);
        pthread_mutex_unlock(&mux_init_lock);
        return s;
    }
    pthread_mutex_unlock(&mux_init_lock);
    if (signo)
        return ompf_error_set(err, OMPF_EUNSUPP,
                              "multiplexing signal %d already has a handler "
                              "in this program; choose another real-time "
                              "signal (OMPFUSE_MUX_SIGNAL)", signo);
    return ompf_error_set(err, OMPF_EUNSUPP,
                          "every real-time signal from SIGRTMIN+%d to "
                          "SIGRTMAX already has a handler in this program: "
                          "cannot emulate multiplexing; name a free one "
                          "with OMPFUSE_MUX_SIGNAL", MUX_FIRST_SIGNAL_OFFSET);
}

int ompf_mux_signal(void)
{
    return atomic_load(&mux_signo);
}

/* Built-in reader: u64 nr, time_enabled, time_running, value[nr]. */
static int read_group_fd(void *ctx, uint64_t *value, uint64_t *clock_ns)
{
    ompf_mux_t *m = ctx;
    size_t want = (3 + (size_t)m->n) * sizeof(uint64_t);
    ssize_t got = read(m->fd, m->rdbuf, want);
    if (got != (ssize_t)want || m->rdbuf[0] != m->n)
        return -1;
    *clock_ns = m->rdbuf[1];
    memcpy(value, m->rdbuf + 3, m->n * sizeof(uint64_t));
    return 0;
}

static int mux_new(ompf_mux_read_fn read, void *ctx, int fd, unsigned n,
                   unsigned slots, uint64_t period_ns, unsigned flags,
                   ompf_mux_t **out, ompf_error_t *err)
{
    if (out)
        *out = NULL;
    if (!out || (!read && fd < 0) || n == 0 || n > OMPF_MUX_MAX_EVENTS ||
        slots == 0 || period_ns < OMPF_MUX_MIN_PERIOD_NS)
        return ompf_error_set(err, OMPF_EINVAL,
                              "multiplexing: need a reader, 1..%d events, "
                              "at least one slot and a period >= 10 us "
                              "(got %u events, %u slots, %llu ns)",
                              OMPF_MUX_MAX_EVENTS, n, slots,
                              (unsigned long long)period_ns);
    int sig = atomic_load(&mux_signo);
    if (!(flags & OMPF_MUX_NO_TIMER) && sig <= 0)
        return ompf_error_set(err, OMPF_EINVAL,
                              "multiplexing: ompf_mux_signal_init() was not "
                              "called before creating a timed engine");
    ompf_mux_t *m = calloc(1, sizeof *m);
    if (!m)
        return ompf_error_set(err, OMPF_ENOMEM, "multiplexing: out of memory");
    m->n = n;
    m->slots = slots;
    m->flags = flags;
    m->period_ns = period_ns;
    m->fd = fd;
    m->read = read ? read : read_group_fd;
    m->ctx = read ? ctx : m;
    if (read_now(m, &m->base_clock) != 0) {
        free(m);
        return ompf_error_set(err, OMPF_EIO,
                              "multiplexing: the first read of the counter "
                              "group failed (%s); is it a PERF_FORMAT_GROUP "
                              "group with time enabled/running and %u "
                              "members?", strerror(errno), n);
    }
    memcpy(m->base_val, m->now_val, sizeof m->base_val);
    memcpy(m->prev_val, m->now_val, sizeof m->prev_val);
    m->prev_clock = m->last_rot_clock = m->base_clock;
    m->magic = MUX_MAGIC;
    if (!(flags & OMPF_MUX_NO_TIMER)) {
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = sig;
        sev.sigev_value.sival_ptr = m;
        sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
        clockid_t clk = (flags & OMPF_MUX_CPU_CLOCK) ? CLOCK_THREAD_CPUTIME_ID
                                                     : CLOCK_MONOTONIC;
        if (timer_create(clk, &sev, &m->timer) != 0) {
            int e = errno;
            m->magic = 0;
            free(m);
            return ompf_error_set(err, OMPF_EUNSUPP,
                                  "multiplexing: timer_create failed (%s)",
                                  strerror(e));
        }
        m->has_timer = 1;
        struct itimerspec it;
        it.it_interval.tv_sec = (time_t)(period_ns / 1000000000u);
        it.it_interval.tv_nsec = (long)(period_ns % 1000000000u);
        it.it_value = it.it_interval;
        if (timer_settime(m->timer, 0, &it, NULL) != 0) {
            int e = errno;
            timer_delete(m->timer);
            m->magic = 0;
            free(m);
            return ompf_error_set(err, OMPF_EUNSUPP,
                                  "multiplexing: timer_settime failed (%s)",
                                  strerror(e));
        }
    }
    *out = m;
    return 0;
}

int ompf_mux_create(ompf_mux_read_fn read, void *ctx, unsigned n_events,
                    unsigned slots, uint64_t period_ns, unsigned flags,
                    ompf_mux_t **out, ompf_error_t *err)
{
    if (!read) {
        if (out)
            *out = NULL;
        return ompf_error_set(err, OMPF_EINVAL, "multiplexing: no reader");
    }
    return mux_new(read, ctx, -1, n_events, slots, period_ns, flags, out, err);
}

int ompf_mux_create_fd(int leader_fd, unsigned n_events, unsigned slots,
                       uint64_t period_ns, unsigned flags, ompf_mux_t **out,
                       ompf_error_t *err)
{
    if (leader_fd < 0) {
        if (out)
            *out = NULL;
        return ompf_error_set(err, OMPF_EINVAL,
                              "multiplexing: invalid group fd %d", leader_fd);
    }
    return mux_new(NULL, NULL, leader_fd, n_events, slots, period_ns, flags,
                   out, err);
}

static void enter(ompf_mux_t *m)
{
    m->busy = 1;
    fence();
}

/* Leaves the engine.  A signal that came while busy only set `pending`:
 * complete its rotation here, at the reading just taken (a few us after
 * the signal), without reading again, so a slow reader cannot keep the
 * owner looping.  The second check covers a signal that lands between the
 * first check and clearing busy. */
static void leave(ompf_mux_t *m)
{
    for (int pass = 0; pass < 2; pass++) {
        if (m->pending) {
            m->pending = 0;
            rotate(m);
        }
        fence();
        m->busy = 0;
        fence();
        if (!m->pending)
            return;
        m->busy = 1;
        fence();
    }
    fence();
    m->busy = 0;
    fence();
}

int ompf_mux_sample(ompf_mux_t *m, uint64_t *value, uint64_t *enabled,
                    uint64_t *running)
{
    if (!m)
        return OMPF_EINVAL;
    enter(m);
    uint64_t clock;
    int rc = read_now(m, &clock);
    if (rc == 0) {
        accumulate(m, clock);
        if (!m->pending && m->has_timer && m->slots < m->n &&
                   m->prev_clock - m->last_rot_clock >= 2 * m->period_ns) {
            /* No signal for two periods of running time: it is blocked
             * or lost; rotate here so the emulation keeps going. */
            uint64_t before = m->st.rotations;
            rotate(m);
            m->st.catchups += m->st.rotations - before;
        }
    }
    for (unsigned i = 0; i < m->n; i++) {
        if (value)
            value[i] = m->v_val[i];
        if (enabled)
            enabled[i] = m->v_en[i];
        if (running)
            running[i] = m->v_run[i];
    }
    leave(m);
    return rc;
}

void ompf_mux_real(const ompf_mux_t *m, uint64_t *value, uint64_t *clock_ns)
{
    if (!m)
        return;
    for (unsigned i = 0; value && i < m->n; i++)
        value[i] = m->prev_val[i] - m->base_val[i];
    if (clock_ns)
        *clock_ns = m->prev_clock - m->base_clock;
}

int ompf_mux_tick(ompf_mux_t *m)
{
    if (!m)
        return OMPF_EINVAL;
    enter(m);
    int rc = tick_locked(m);
    leave(m);
    return rc;
}

void ompf_mux_get_stats(const ompf_mux_t *m, ompf_mux_stats_t *out)
{
    if (m && out)
        *out = m->st;
}

void ompf_mux_stop(ompf_mux_t *m)
{
    if (!m || atomic_load(&m->magic) != MUX_MAGIC)
        return;
    atomic_store(&m->magic, 0);
    if (m->has_timer)
        timer_delete(m->timer);
    /* A handler running on the owner thread right now finishes quickly
     * (one read); wait for it so the caller may close the group. */
    while (atomic_load(&m->in_handler))
        sched_yield();
}

void ompf_mux_destroy(ompf_mux_t *m)
{
    if (!m)
        return;
    int sig = atomic_load(&mux_signo);
    sigset_t set, old;
    if (m->has_timer) {
        sigemptyset(&set);
        sigaddset(&set, sig);
        pthread_sigmask(SIG_BLOCK, &set, &old);
    }
    ompf_mux_stop(m);
    if (m->has_timer) {
        /* A signal of the deleted timer may still be queued for this
         * thread: consume it so the handler never sees a freed engine. */
        struct timespec zero = {0, 0};
        while (sigtimedwait(&set, NULL, &zero) > 0) {
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    free(m);
}
