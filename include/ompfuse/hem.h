/*
 * ompfuse HEM: hardware event multiplexing, emulated or real, its two
 * estimators, and the CounterMiner-style repair of multiplexed profiles.
 * docs/hem.md explains the design, the limits and the numbers.
 *
 * Three parts, usable separately:
 *
 * 1. ompf_mux_*: user-space multiplexing emulator, one engine per thread.
 *    All N events stay open and counting in ONE perf_event group of the
 *    thread (software events are never multiplexed by the kernel).  The
 *    engine keeps, per event, the value / time_enabled / time_running the
 *    kernel would report if at most `slots` of the N events could count at
 *    a time, rotated round-robin (window of `slots` consecutive events,
 *    advanced by one event per period, as perf_event rotates single-event
 *    groups) by a per-thread POSIX timer whose signal handler samples the
 *    group and rotates.  The clock of the emulation is the real group's
 *    time_enabled (the thread's on-CPU time while the group is enabled),
 *    so enabled/running are exactly what the kernel reports for a
 *    multiplexed task event.
 *
 *    How the OMPT tool calls it (the integration is mechanical):
 *
 *      at tool init, before any thread is created (once per process):
 *          int sig = ompf_mux_signal_init(0, &err);   // < 0: report, fall
 *                                                      // back to no HEM
 *      at thread begin, on the thread itself, after opening its group:
 *          ompf_mux_create(read_fn, group, n, slots, period_ns,
 *                          0, &t->mux, &err);
 *          where read_fn(group, value[n], &clock_ns) is one read() of the
 *          group (async-signal-safe: no locks, no malloc), e.g. a wrapper
 *          of ompf_cnt_group_read() returning sample.value[] and
 *          sample.enabled_ns; or ompf_mux_create_fd() with the leader fd.
 *      at every XU boundary (instead of reading the group):
 *          ompf_mux_sample(t->mux, value, enabled, running);
 *          ompf_hem_charge(n, t->prev, value, enabled, running, acc);
 *          (acc: the n accumulators of the XU or gap that was running; at
 *          XU end its values are ompf_hem_acc_hem / ompf_hem_acc_delta).
 *      at thread end, on the thread itself: a last ompf_mux_sample(), then
 *          ompf_mux_destroy(t->mux) (before closing the group).
 *      at finalize, for threads that did not end on their own: from the
 *          finalizing thread ompf_mux_stop(t->mux) (never destroy another
 *          thread's engine), then close the group.
 *
 *    Never read the group except through the engine while it exists: the
 *    engine's busy flag is what makes the signal handler safe.
 *
 * 2. ompf_hem_*: the estimators (pure functions).
 *
 * 3. ompf_hem_clean(): fill missing values with k nearest neighbours of
 *    the same type, replace outliers beyond mean + sigma * std.
 */
#ifndef OMPFUSE_HEM_H
#define OMPFUSE_HEM_H

#include <stddef.h>
#include <stdint.h>
#include "ompfuse/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OMPF_MUX_MAX_EVENTS 64
#define OMPF_MUX_DEFAULT_PERIOD_NS 4000000u /* OMPFUSE_MUX_PERIOD_US=4000 */
/* Shorter periods would let signal handling starve the program. */
#define OMPF_MUX_MIN_PERIOD_NS 10000u

/* ---- multiplexing emulator ------------------------------------------- */

/* Installs the process-wide handler (SA_SIGINFO | SA_RESTART) for the
 * timer signal.  signo 0 chooses the first real-time signal from
 * SIGRTMIN+8 to SIGRTMAX whose disposition is still the default (the
 * program has not claimed it); otherwise signo is used if it is a
 * real-time signal not claimed by anyone.  Returns the signal number (> 0)
 * or a negative OMPF_E* code with a sentence in err.  Idempotent: later
 * calls return the same number. */
int ompf_mux_signal_init(int signo, ompf_error_t *err);
/* The signal chosen by ompf_mux_signal_init(), 0 before. */
int ompf_mux_signal(void);

/* Reads the real group once: n counts in the engine's event order and the
 * group's time_enabled in ns (the emulation clock).  Called from the
 * signal handler: must be async-signal-safe.  Returns 0 or negative. */
typedef int (*ompf_mux_read_fn)(void *ctx, uint64_t *value,
                                uint64_t *clock_ns);

#define OMPF_MUX_NO_TIMER 0x1u  /* no timer: rotate with ompf_mux_tick()
                                   (tests; external drivers) */
#define OMPF_MUX_CPU_CLOCK 0x2u /* timer on CLOCK_THREAD_CPUTIME_ID instead
                                   of CLOCK_MONOTONIC (never interrupts a
                                   blocked thread, but the kernel fires it
                                   only at scheduler ticks: 1/CONFIG_HZ) */

typedef struct ompf_mux ompf_mux_t;

/* Creates the engine of the calling thread and, unless OMPF_MUX_NO_TIMER,
 * arms its timer (SIGEV_THREAD_ID to this thread, first expiry after one
 * period).  Virtual values, enabled and running start at 0; the active
 * window is events 0..slots-1.  slots >= n means no multiplexing (running
 * == enabled).  Needs ompf_mux_signal_init() unless OMPF_MUX_NO_TIMER.
 * Returns 0, OMPF_EINVAL (bad arguments), OMPF_ENOMEM, OMPF_EIO (first
 * read failed) or OMPF_EUNSUPP (timer_create failed), with err set. */
int ompf_mux_create(ompf_mux_read_fn read, void *ctx, unsigned n_events,
                    unsigned slots, uint64_t period_ns, unsigned flags,
                    ompf_mux_t **out, ompf_error_t *err);
/* Same, reading the group of leader_fd itself: the group must have been
 * opened with read_format PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED
 * | PERF_FORMAT_TOTAL_TIME_RUNNING (no PERF_FORMAT_ID) and have exactly
 * n_events members, in engine order.  The fd stays the caller's. */
int ompf_mux_create_fd(int leader_fd, unsigned n_events, unsigned slots,
                       uint64_t period_ns, unsigned flags, ompf_mux_t **out,
                       ompf_error_t *err);

/* One boundary: reads the group (one read()), brings the virtual counts
 * up to date, completes a rotation the timer had to defer, and writes the
 * virtual cumulative value / time_enabled / time_running of every event
 * (n_events entries each; any pointer may be NULL).  Returns 0 or
 * OMPF_EIO (read failed: outputs keep the previous state). */
int ompf_mux_sample(ompf_mux_t *m, uint64_t *value, uint64_t *enabled,
                    uint64_t *running);
/* The real (unmultiplexed) reading the last ompf_mux_sample() used,
 * relative to the engine's creation: counts and clock.  For validation
 * only: a HEM profile must not record these. */
void ompf_mux_real(const ompf_mux_t *m, uint64_t *value, uint64_t *clock_ns);
/* What the timer does: sample, then rotate the window by one event when
 * the clock (the thread's running time) advanced by at least half a
 * period since the previous rotation, as the kernel rotates a task's
 * events only while it runs.  Public for tests and for drivers created
 * with OMPF_MUX_NO_TIMER.  Returns 0 or OMPF_EIO. */
int ompf_mux_tick(ompf_mux_t *m);

typedef struct ompf_mux_stats {
    uint64_t rotations;  /* window advances */
    uint64_t signals;    /* timer signals handled */
    uint64_t deferred;   /* signals that found a boundary in progress */
    uint64_t catchups;   /* rotations done at a boundary because no timer
                            signal came for 2 periods (signal blocked) */
    uint64_t read_errors;
} ompf_mux_stats_t;
void ompf_mux_get_stats(const ompf_mux_t *m, ompf_mux_stats_t *out);

/* Disarms and deletes the timer, discards a signal of it still pending
 * for this thread, frees.  Call on the thread that created the engine. */
void ompf_mux_destroy(ompf_mux_t *m);
/* From any thread (e.g. the one running ompt_finalize for threads that
 * never reached implicit-task end): deletes the timer and waits until no
 * handler is inside the engine; afterwards the handler ignores the engine
 * and the group may be closed.  Does not free: a signal may still be
 * queued for the owner, so the memory must stay valid (free it with
 * ompf_mux_destroy() on the owner, or leave it to process exit).  The
 * values of the last ompf_mux_sample() remain the thread's totals. */
void ompf_mux_stop(ompf_mux_t *m);

/* ---- hardware path: one group per event, kernel multiplexing --------- */

/* n events (perf_event_attr as the caller encoded them; read_format and
 * disabled are set here), each opened as its own group for (pid, cpu), so
 * that the kernel time-shares them.  ompf_hemhw_read() returns the kernel's
 * value, time_enabled, time_running per event: one read() per event.
 * On a failed open errno holds perf_event_open's error, for the caller
 * to diagnose with the event's name (ompf_cnt_diagnose()). */
struct perf_event_attr;
typedef struct ompf_hemhw ompf_hemhw_t;
int ompf_hemhw_open(const struct perf_event_attr *attrs, unsigned n,
                    int pid, int cpu, ompf_hemhw_t **out, ompf_error_t *err);
int ompf_hemhw_read(ompf_hemhw_t *h, uint64_t *value, uint64_t *enabled,
                    uint64_t *running);
/* 1 when no read failed and every descriptor still names its event. */
int ompf_hemhw_intact(const ompf_hemhw_t *h);
/* Closes the descriptors that are still the events opened (never a
 * number the program took over: ompfuse/pfd.h). */
void ompf_hemhw_close(ompf_hemhw_t *h);

/* ---- estimators ------------------------------------------------------ */

/* Cumulative (value, time_enabled, time_running) of one event. */
typedef struct ompf_hem_reading {
    uint64_t value, enabled, running;
} ompf_hem_reading_t;

/* value * enabled / running (perf stat, PAPI); 0 when running == 0. */
double ompf_hem_scaled(const ompf_hem_reading_t *r);
/* hem: scaled(end) - scaled(start), the cumulative-scaling estimate of one
 * XU part; may be negative. */
double ompf_hem_cumulative(const ompf_hem_reading_t *start,
                           const ompf_hem_reading_t *end);
/* hem-delta: dvalue * denabled / drunning over the part; OMPF_MISSING when
 * drunning == 0. */
double ompf_hem_delta(const ompf_hem_reading_t *start,
                      const ompf_hem_reading_t *end);

/* Per-XU accumulator of one event over all parts of the XU (or the gap
 * bucket of a thread): hem sums the parts' cumulative estimates (so XUs +
 * gap telescope to the scaled thread total); hem-delta pools the parts:
 * sum(dvalue) * sum(denabled) / sum(drunning), missing when no part ran. */
typedef struct ompf_hem_acc {
    double hem;
    uint64_t dvalue, denabled, drunning;
} ompf_hem_acc_t;
void ompf_hem_acc_reset(ompf_hem_acc_t *a);
void ompf_hem_acc_add(ompf_hem_acc_t *a, const ompf_hem_reading_t *start,
                      const ompf_hem_reading_t *end);
double ompf_hem_acc_hem(const ompf_hem_acc_t *a);
double ompf_hem_acc_delta(const ompf_hem_acc_t *a);
/* One boundary for n events: charges the part from prev[] to the sample
 * (value, enabled, running as ompf_mux_sample/ompf_hemhw_read give them)
 * to acc[] (the XU or gap that was running; NULL: charge nothing) and
 * stores the sample in prev[]. */
void ompf_hem_charge(size_t n, ompf_hem_reading_t *prev, const uint64_t *value,
                     const uint64_t *enabled, const uint64_t *running,
                     ompf_hem_acc_t *acc);

/* ---- cleaning (CounterMiner, Lv et al., MICRO 2018, section III-B) ---- */

typedef struct ompf_clean_opts {
    unsigned k;         /* neighbours averaged (default 5) */
    double sigma;       /* outlier threshold mean + sigma * std (5) */
    int keep_negative;  /* 0: negative counts are invalid and replaced */
} ompf_clean_opts_t;
void ompf_clean_opts_default(ompf_clean_opts_t *o);

/* Per event, what cleaning changed. */
typedef struct ompf_clean_count {
    uint64_t missing;   /* values that were missing and got filled */
    uint64_t outliers;  /* values above mean + sigma * std, replaced */
    uint64_t negative;  /* negative values, replaced */
    uint64_t fallback;  /* of those, filled with the type median because no
                           XU of the type shared a present event */
    uint64_t unfilled;  /* left missing: no XU of the type has the event */
} ompf_clean_count_t;

/* Cleans p in place.  Per type (construct) and event: values above mean +
 * sigma * std of the present values (and negative values unless
 * keep_negative) become missing; then every missing value of event e in an
 * XU x is the mean of e over the k XUs of x's type nearest to x among
 * those that have e, distance = Euclidean over the events present in both
 * (each scaled by its standard deviation within the type, weighted by
 * present-in-both / present-in-x as in nan-Euclidean kNN imputation).
 * Donor values are those after outlier removal, never filled ones.  k-d
 * trees per type and presence pattern: O(n log n).  Records metadata
 * cleaned=1, clean_k, clean_sigma, clean_keep_negative.  counts (may be
 * NULL) receives ompf_event_count(p) entries. */
int ompf_hem_clean(ompf_profile_t *p, const ompf_clean_opts_t *o,
                   ompf_clean_count_t *counts, ompf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
