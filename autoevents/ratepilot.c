/* The rate pilot of `--events auto`: the program, without the tool, with
 * every uprobe candidate counted on every CPU (pid -1), stopped after a
 * time budget.  Totals are enough to tell how often each probe is hit,
 * which is what its cost depends on; the per-XU pilot then runs under the
 * tool with the cheap ones only.
 *
 * Why per CPU and not per process with inherit: the kernel encodes an
 * inherited uprobe event again in each new thread, reading the binary's
 * path from the user address in config1, which in the program is not
 * ours: its pthread_create fails with EFAULT.  A uprobe only fires in
 * processes that map that very file, so per-CPU counts are the program's
 * (and any other process running the same file meanwhile: run nothing
 * else from that file during the pilot). */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "autoevents_internal.h"
#include "ompfuse/counters.h"

static void child(int rd, char *const *argv, const char *const *env, size_t nenv)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (size_t i = 0; i < nenv; i++) {
        char kv[4096];
        snprintf(kv, sizeof kv, "%s", env[i]);
        char *eq = strchr(kv, '=');
        if (eq) {
            *eq = '\0';
            setenv(kv, eq + 1, 1);
        }
    }
    unsetenv("OMP_TOOL_LIBRARIES");
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 1);
        if (!getenv("OMPF_AUTO_STDERR")) dup2(null, 2);
    }
    char go;
    if (read(rd, &go, 1) == 1)
        execv(argv[0], argv);
    _exit(127);
}

int ompf_auto_rate_round(char *const *argv, const char *const *env, size_t nenv,
                         const ompf_exit_set_t *exit_ok, char *const *names, size_t n,
                         double budget_s, ompf_auto_round_t *r, ompf_error_t *err)
{
    memset(r, 0, sizeof *r);
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    if (ncpu < 1)
        ncpu = 1;
    size_t nfd = n * (size_t)ncpu;
    int *fd = calloc(nfd ? nfd : 1, sizeof *fd);
    r->count = calloc(n ? n : 1, sizeof *r->count);
    r->usable = calloc(n ? n : 1, sizeof *r->usable);
    if (!fd || !r->count || !r->usable) {
        free(fd);
        return OMPF_ENOMEM;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC)) {
        free(fd);
        return ompf_error_set(err, OMPF_EIO, "pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[1]);
        child(p[0], argv, env, nenv);
    }
    close(p[0]);
    if (pid < 0) {
        close(p[1]);
        free(fd);
        return ompf_error_set(err, OMPF_EIO, "fork: %s", strerror(errno));
    }
    int denied = 0;
    for (size_t k = 0; k < nfd; k++)
        fd[k] = -1;
    /* encoded in sets of at most OMPF_CNT_MAX_EVENTS; the kernel copies a
     * uprobe's path at open, so each set may go once its events are open */
    ompf_cnt_set_t *set = NULL;
    size_t base = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (i % OMPF_CNT_MAX_EVENTS == 0) {
            ompf_cnt_set_destroy(set);
            set = NULL;
            base = i;
            size_t m = n - i < OMPF_CNT_MAX_EVENTS ? n - i : OMPF_CNT_MAX_EVENTS;
            rc = ompf_cnt_set_create((const char *const *)names + i, m, &set, err);
            if (rc)
                break;
        }
        struct perf_event_attr a;
        if (ompf_cnt_set_status(set, i - base, NULL) != OMPF_CNT_OK ||
            ompf_cnt_set_attr(set, i - base, &a, sizeof a))
            continue;
        a.inherit = 0;
        a.disabled = 0;
        a.read_format = 0;
        for (long cpu = 0; cpu < ncpu; cpu++) {
            int f = (int)syscall(SYS_perf_event_open, &a, -1, (int)cpu, -1,
                                 PERF_FLAG_FD_CLOEXEC);
            if (f < 0 && (errno == EACCES || errno == EPERM))
                denied = 1;
            fd[i * (size_t)ncpu + (size_t)cpu] = f;
            r->usable[i] |= f >= 0; /* an offline CPU fails: the others count */
        }
    }
    ompf_cnt_set_destroy(set);
    if (denied || rc) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(p[1]);
        for (size_t k = 0; k < nfd; k++)
            if (fd[k] >= 0)
                close(fd[k]);
        free(fd);
        if (rc)
            return rc;
        return ompf_error_set(err, OMPF_EPERM,
                              "--events auto counts uprobes, which needs root or CAP_PERFMON "
                              "(perf_event_paranoid is %d): run as root, or give the events "
                              "with --events LIST", ompf_cnt_paranoid());
    }
    double t0 = ompf_cmpi_now();
    if (write(p[1], "g", 1) != 1) {
        /* the child is gone: reaped below */
    }
    close(p[1]);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    for (;;) {
        pid_t w = wait4(pid, &status, WNOHANG, &ru);
        if (w == pid)
            break;
        if (ompf_cmpi_now() - t0 > budget_s) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            wait4(pid, &status, 0, &ru);
            r->killed = 1;
            break;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    r->seconds = ompf_cmpi_now() - t0;
    r->cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
             (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    r->failed = !r->killed &&
                !(WIFEXITED(status) && ompf_exit_set_has(exit_ok, WEXITSTATUS(status)));
    r->status = status;
    for (size_t i = 0; i < n; i++) {
        r->count[i] = 0;
        for (long cpu = 0; cpu < ncpu; cpu++) {
            int f = fd[i * (size_t)ncpu + (size_t)cpu];
            uint64_t v = 0;
            if (f < 0)
                continue;
            if (read(f, &v, sizeof v) != (ssize_t)sizeof v)
                r->usable[i] = 0;
            close(f);
            r->count[i] += (double)v;
        }
    }
    free(fd);
    return 0;
}

/* The uprobe's target for the cost measurement: a real call (noinline, and
 * the asm keeps it from being folded away). */
__attribute__((noinline)) void ompf_auto_probe_target(void);
__attribute__((noinline)) void ompf_auto_probe_target(void)
{
    __asm__ volatile("");
}

/* The same with a nop first: a uprobe there is emulated, not stepped. */
__attribute__((noinline)) void ompf_auto_probe_target_nop(void);
__attribute__((noinline)) void ompf_auto_probe_target_nop(void)
{
    __asm__ volatile("nop");
}

/* This thread's CPU time: a trap is the thread's system time, and on a
 * loaded machine the wall time of the calls also holds others' turns. */
static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double ompf_auto_hit_cost(size_t n, int emulated)
{
    void (*target)(void) = emulated ? ompf_auto_probe_target_nop : ompf_auto_probe_target;
    char self[4096], name[4200];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return 0;
    self[len] = '\0';
    snprintf(name, sizeof name, "uprobe:%s:ompf_auto_probe_target%s", self,
             emulated ? "_nop" : "");
    const char *names[1] = {name};
    ompf_cnt_set_t *set;
    struct perf_event_attr a;
    if (ompf_cnt_set_create(names, 1, &set, NULL))
        return 0;
    int fd = -1;
    if (ompf_cnt_set_status(set, 0, NULL) == OMPF_CNT_OK &&
        ompf_cnt_set_attr(set, 0, &a, sizeof a) == 0)
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    ompf_cnt_set_destroy(set);
    if (fd < 0)
        return 0;
    double t0 = thread_cpu();
    for (size_t i = 0; i < n; i++)
        target();
    double with = thread_cpu() - t0;
    uint64_t hits = 0;
    if (read(fd, &hits, sizeof hits) != (ssize_t)sizeof hits)
        hits = 0;
    close(fd);
    t0 = thread_cpu();
    for (size_t i = 0; i < n; i++)
        target();
    double without = thread_cpu() - t0;
    return hits == n ? (with - without) / (double)n : 0;
}

double ompf__auto_cost_of(const ompf_auto_t *a, const ompf_auto_cand_t *c)
{
    if (c->kind == OMPF_AUTO_TRACEPOINT)
        return TRACEPOINT_COST;
    if (c->kind != OMPF_AUTO_UPROBE)
        return 0;
    return c->emulated && a->emu_cost > 0 ? a->emu_cost : a->uprobe_cost;
}

void ompf_auto_round_free(ompf_auto_round_t *r)
{
    free(r->count);
    free(r->usable);
    memset(r, 0, sizeof *r);
}

/* One round's verdicts (auto.c's rate_pilot): a whole run affords
 * max_slowdown x plain / cost hits of a probe (plain: the program's CPU
 * time, which a hit's cost adds to), so a count above that, even
 * from a round stopped early, is too hot; a completed round's zero is
 * exact: never reached.  Returns how many were dropped as too hot or not
 * usable. */
size_t ompf__auto_rate_verdicts(ompf_auto_t *a, const size_t *idx, size_t na,
                                const ompf_auto_round_t *r, double plain, double max_slowdown)
{
    size_t dropped = 0;
    for (size_t k = 0; k < na; k++) {
        ompf_auto_cand_t *c = &a->c[idx[k]];
        double cost = ompf__auto_cost_of(a, c), allowed = max_slowdown * plain / cost;
        if (c->why[0])
            continue;
        if (!r->usable[k]) {
            ompf__auto_reject(c, "does not open here");
            dropped++;
        } else if (r->count[k] > allowed) {
            if (r->killed)
                ompf__auto_reject(c, "too hot: %.0f hits before the round was stopped "
                                  "(%.2f s): alone at least %.0f%% of its CPU time",
                                  r->count[k], r->seconds, 100 * r->count[k] * cost / plain);
            else
                ompf__auto_reject(c, "too hot: %.0f hits per run, alone %.0f%% of its CPU "
                                  "time", r->count[k], 100 * r->count[k] * cost / plain);
            dropped++;
        } else if (!r->killed && (c->total = r->count[k]) == 0) {
            /* the whole run, counted exactly: never reached */
            ompf__auto_reject(c, "never hit in the rate pilot");
        }
    }
    return dropped;
}
