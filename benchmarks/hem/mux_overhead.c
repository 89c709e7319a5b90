/*
 * Cost of the multiplexing emulator itself, without the OMPT tool: T
 * threads (default 2) each run the same fixed amount of compute, split
 * into XUs of X us (default 50) with a counter boundary between XUs, in
 * six configurations: no counters; one group read per boundary (plain);
 * the emulator at periods 4 ms, 1 ms and 0.1 ms (4 software events, 2
 * slots); and plain plus a bare 0.1 ms timer signal with an empty handler
 * (what the operating system alone charges for the signals).  Prints the
 * median wall time of R repeats (default 5), the ratio to "plain" and the
 * timer signals received per thread.
 *
 *   build/bin/hem_mux_overhead [threads] [xu_us] [repeats] [total_ms]
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ompfuse/hem.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile double sink;
static long iters_per_xu;
static long xus_per_thread;

static void work(long n)
{
    double x = 1.0;
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    sink = x;
}

typedef struct {
    int mode; /* 0 none, 1 plain, 2 mux, 3 plain + bare timer */
    uint64_t period;
    int ok;
    uint64_t signals;
} arg_t;

static __thread volatile uint64_t bare_fires;
static int bare_sig;
static void bare_handler(int sig)
{
    (void)sig;
    bare_fires++;
}

static int open_group(int *fd)
{
    static const uint64_t cfg[4] = {PERF_COUNT_SW_TASK_CLOCK,
                                    PERF_COUNT_SW_CPU_CLOCK,
                                    PERF_COUNT_SW_PAGE_FAULTS,
                                    PERF_COUNT_SW_CONTEXT_SWITCHES};
    for (int i = 0; i < 4; i++) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = PERF_TYPE_SOFTWARE;
        a.config = cfg[i];
        a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                        PERF_FORMAT_TOTAL_TIME_RUNNING;
        fd[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, i ? fd[0] : -1, 0);
        if (fd[i] < 0) {
            fprintf(stderr, "perf_event_open: %s\n", strerror(errno));
            return -1;
        }
    }
    return 0;
}

static void *thread_main(void *p)
{
    arg_t *a = p;
    int fd[4] = {-1, -1, -1, -1};
    ompf_mux_t *m = NULL;
    uint64_t buf[8], v[4], e[4], r[4];
    if (a->mode && open_group(fd))
        return NULL;
    timer_t bare;
    if (a->mode == 3) {
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = bare_sig;
        sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
        struct itimerspec it = {{0, (long)a->period}, {0, (long)a->period}};
        if (timer_create(CLOCK_MONOTONIC, &sev, &bare) || timer_settime(bare, 0, &it, NULL))
            return NULL;
    }
    if (a->mode == 2) {
        ompf_error_t err;
        if (ompf_mux_create_fd(fd[0], 4, 2, a->period, 0, &m, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return NULL;
        }
    }
    for (long x = 0; x < xus_per_thread; x++) {
        work(iters_per_xu);
        if (a->mode == 1 || a->mode == 3) {
            if (read(fd[0], buf, sizeof buf) < 0)
                return NULL;
        } else if (a->mode == 2) {
            ompf_mux_sample(m, v, e, r);
        }
    }
    if (m) {
        ompf_mux_stats_t st;
        ompf_mux_get_stats(m, &st);
        a->signals = st.signals;
    }
    ompf_mux_destroy(m);
    if (a->mode == 3) {
        timer_delete(bare);
        a->signals = bare_fires;
    }
    for (int i = 3; i >= 0; i--)
        if (fd[i] >= 0)
            close(fd[i]);
    a->ok = 1;
    return NULL;
}

static double run(int threads, int mode, uint64_t period, double *sigs)
{
    pthread_t th[64];
    arg_t args[64];
    double t0 = now();
    for (int i = 0; i < threads; i++) {
        args[i] = (arg_t){mode, period, 0, 0};
        pthread_create(&th[i], NULL, thread_main, &args[i]);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    double dt = now() - t0;
    *sigs = 0;
    for (int i = 0; i < threads; i++) {
        if (!args[i].ok)
            return -1;
        *sigs += (double)args[i].signals / threads;
    }
    return dt;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    double xu_us = argc > 2 ? atof(argv[2]) : 50;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    double total_ms = argc > 4 ? atof(argv[4]) : 500;
    if (threads < 1 || threads > 64 || xu_us <= 0 || reps < 1 || total_ms <= 0) {
        fprintf(stderr, "usage: hem_mux_overhead [threads] [xu_us] [repeats] [total_ms]\n");
        return 2;
    }
    ompf_error_t err;
    if (ompf_mux_signal_init(0, &err) <= 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    /* calibrate: iterations per microsecond on one thread */
    long cal = 2000000;
    double t0 = now();
    work(cal);
    double per_us = (double)cal / ((now() - t0) * 1e6);
    iters_per_xu = (long)(per_us * xu_us);
    xus_per_thread = (long)(total_ms * 1000.0 / xu_us);
    printf("%d threads, %ld XUs of %.0f us each per thread, median of %d\n",
           threads, xus_per_thread, xu_us, reps);
    enum { NC = 6 };
    const char *names[NC] = {"no counters", "plain read", "mux 4 ms", "mux 1 ms",
                             "mux 0.1 ms", "bare 0.1 ms"};
    int modes[NC] = {0, 1, 2, 2, 2, 3};
    uint64_t periods[NC] = {0, 0, 4000000, 1000000, 100000, 100000};
    double med[NC], sigs[NC];
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = bare_handler;
    sa.sa_flags = SA_RESTART;
    bare_sig = SIGRTMIN + 2;
    sigaction(bare_sig, &sa, NULL);
    if (reps > 64)
        reps = 64;
    for (int c = 0; c < NC; c++) {
        double t[64];
        sigs[c] = 0;
        for (int r = 0; r < reps; r++) {
            double sg;
            t[r] = run(threads, modes[c], periods[c], &sg);
            sigs[c] += sg / reps;
            if (t[r] < 0) {
                fprintf(stderr, "%s: a thread failed\n", names[c]);
                return 1;
            }
        }
        qsort(t, (size_t)reps, sizeof(double), cmp);
        med[c] = t[reps / 2];
    }
    printf("%-12s %10s %10s %12s\n", "config", "wall s", "vs plain", "signals/thr");
    for (int c = 0; c < NC; c++)
        printf("%-12s %10.3f %10.3f %12.0f\n", names[c], med[c], med[c] / med[1], sigs[c]);
    return 0;
}
