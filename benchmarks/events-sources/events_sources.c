/* What a uprobe event costs by the way it is opened: through the uprobe
 * PMU, as a tracepoint defined in tracefs, and as one defined and held
 * (include/ompfuse/uphold.h).
 *   1. in this process: the time to open the event (libompfcounters, as
 *      the tool opens it), HITS hits of the probed function, and the close;
 *   2. the wall time of events_sources_prog (THREADS threads, each calling
 *      N probed functions HITS times) under the tool with the N uprobes
 *      and perf::TASK-CLOCK, against perf::TASK-CLOCK alone.
 * Every variant runs REPEATS times, the variants alternating; min and
 * median are printed with the load average before and after.  Counts are
 * checked: a variant that does not count every hit stops the benchmark.
 *   events_sources [N=4] [HITS=1000] [REPEATS=5] [THREADS=2]   (root) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "ompfuse/counters.h"
#include "ompfuse/uphold.h"

enum { PMU, DEFINED, HELD, TP, TP_HELD, NMODES };
static const char *const mode_name[] = {"uprobe PMU", "uprobe tracefs-defined",
                                        "uprobe tracefs-held", "tracepoint",
                                        "tracepoint held"};
#define TP_NAME "syscalls:sys_enter_getppid"

static volatile long sink;

__attribute__((noinline)) void events_sources_hit(long v)
{
    __asm__ __volatile__("" ::: "memory");
    sink += v;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void stats(double *v, int n, double *mn, double *med)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    *mn = v[0];
    *med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void load(const char *when)
{
    char buf[128] = "?\n";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            snprintf(buf, sizeof buf, "?\n");
        fclose(f);
    }
    printf("load average %s: %s", when, buf);
}

/* Writes cmd to uprobe_events (a definition of our own for DEFINED). */
static int uprobe_events(const char *cmd)
{
    int fd = open("/sys/kernel/tracing/uprobe_events", O_WRONLY | O_APPEND);
    if (fd < 0)
        return -errno;
    int rc = write(fd, cmd, strlen(cmd)) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

/* One open / HITS hits / close of ev in this thread: seconds of each. */
static int once(const char *ev, int sys, long hits, double *t_open, double *t_hit,
                double *t_close, int *type)
{
    ompf_cnt_set_t *s;
    ompf_error_t err;
    if (ompf_cnt_set_parse(ev, &s, &err)) {
        fprintf(stderr, "events_sources: %s\n", err.msg);
        return -1;
    }
    ompf_event_t e;
    ompf_cnt_set_event(s, 0, &e);
    *type = (int)e.pe_type;
    ompf_cnt_group_t *g = NULL;
    double t0 = now();
    int rc = ompf_cnt_group_open(s, 0, -1, 0, &g);
    double t1 = now();
    const char *why = "";
    if (rc || ompf_cnt_group_fail(g, 0, &why, NULL) != OMPF_CNT_OK) {
        fprintf(stderr, "events_sources: %s: %s\n", ev, why);
        ompf_cnt_group_close(g);
        ompf_cnt_set_destroy(s);
        return -1;
    }
    ompf_cnt_sample_t a, b;
    ompf_cnt_group_read(g, &a);
    double t2 = now();
    for (long i = 0; i < hits; i++) {
        if (sys)
            syscall(SYS_getppid);
        else
            events_sources_hit(i);
    }
    double t3 = now();
    ompf_cnt_group_read(g, &b);
    double t4 = now();
    ompf_cnt_group_close(g);
    double t5 = now();
    ompf_cnt_set_destroy(s);
    if (b.value[0] - a.value[0] != (uint64_t)hits) {
        fprintf(stderr, "events_sources: %s counted %llu of %ld hits\n", ev,
                (unsigned long long)(b.value[0] - a.value[0]), hits);
        return -1;
    }
    *t_open = t1 - t0;
    *t_hit = (t3 - t2) / (double)hits;
    *t_close = t5 - t4;
    return 0;
}

/* The wall time of the program under the tool with events. */
static double program(const char *events, long hits, int threads, const char *dir)
{
    char h[32], t[16], out[PATH_MAX];
    snprintf(h, sizeof h, "%ld", hits);
    snprintf(t, sizeof t, "%d", threads);
    snprintf(out, sizeof out, "%s/p.ompf", dir);
    fflush(stdout);
    double t0 = now();
    pid_t c = fork();
    if (c == 0) {
        setenv("OMP_TOOL_LIBRARIES", OMPF_ES_TOOL, 1);
        setenv("OMPFUSE_EVENTS", events, 1);
        setenv("OMPFUSE_OUTPUT", out, 1);
        setenv("OMP_NUM_THREADS", t, 1);
        setenv("OMPFUSE_STRICT", "1", 1);
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execl(OMPF_ES_PROG, OMPF_ES_PROG, h, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (c > 0 && waitpid(c, &st, 0) < 0 && errno == EINTR)
        ;
    double dt = now() - t0;
    if (c < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "events_sources: %s with %s failed (status %d)\n", OMPF_ES_PROG, events,
                st);
        return -1;
    }
    return dt;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    long hits = argc > 2 ? atol(argv[2]) : 1000;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    int threads = argc > 4 ? atoi(argv[4]) : 2;
    if (n < 1 || n > 8 || hits < 1 || reps < 1 || reps > 99 || threads < 1) {
        fprintf(stderr, "usage: events_sources [N 1..8] [HITS>=1] [REPEATS 1..99] [THREADS>=1]\n");
        return 2;
    }
    char self[PATH_MAX], ev[PATH_MAX + 64], def[2 * PATH_MAX];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l < 0)
        return 2;
    self[l] = '\0';
    snprintf(ev, sizeof ev, "uprobe:%s:events_sources_hit", self);
    unsetenv("OMPFUSE_UPROBE_GROUP");
    /* the probe's file offset, from its PMU encoding */
    ompf_cnt_set_t *s;
    ompf_error_t err;
    struct perf_event_attr a;
    if (ompf_cnt_set_parse(ev, &s, &err) || ompf_cnt_set_attr(s, 0, &a, sizeof a)) {
        fprintf(stderr, "events_sources: %s\n", err.msg);
        return 1;
    }
    ompf_cnt_set_destroy(s);
    snprintf(def, sizeof def, "p:ompfuse_%ld/events_sources %s:0x%llx\n", (long)getpid(), self,
             (unsigned long long)a.config2);
    printf("events_sources: N=%d uprobes per thread, HITS=%ld, REPEATS=%d, THREADS=%d\n", n,
           hits, reps, threads);
    load("before");

    /* 1. open, hit, close in this process */
    double op[NMODES][99], hit[NMODES][99], cl[NMODES][99];
    int type[NMODES] = {0};
    for (int r = 0; r < reps; r++)
        for (int m = 0; m < NMODES; m++) {
            ompf_uphold_t *h = NULL;
            int rc = 0;
            if (m == DEFINED)
                rc = uprobe_events(def);
            const char *name = m >= TP ? TP_NAME : ev;
            if ((m == HELD || m == TP_HELD) &&
                (ompf_uphold_create(stderr, &h) ||
                 ompf_uphold_add(h, (const char *const[]){name}, 1) != 1))
                rc = -EPERM;
            if (rc) {
                fprintf(stderr, "events_sources: cannot %s the probe in tracefs (%s): root, "
                                "and tracefs mounted?\n", m == HELD ? "hold" : "define",
                        strerror(-rc));
                ompf_uphold_destroy(h);
                return 1;
            }
            rc = once(name, m >= TP, hits, &op[m][r], &hit[m][r], &cl[m][r], &type[m]);
            ompf_uphold_destroy(h);
            if (m == DEFINED) {
                char rm[128];
                snprintf(rm, sizeof rm, "-:ompfuse_%ld/events_sources\n", (long)getpid());
                uprobe_events(rm);
            }
            if (rc)
                return 1;
        }
    printf("one event in this thread: open, HITS occurrences (function calls; getppid() for\n"
           "the tracepoint %s), close (min / median of %d):\n", TP_NAME, reps);
    for (int m = 0; m < NMODES; m++) {
        double o1, o2, h1, h2, c1, c2;
        stats(op[m], reps, &o1, &o2);
        stats(hit[m], reps, &h1, &h2);
        stats(cl[m], reps, &c1, &c2);
        printf("  %-22s (perf type %2d)  open %9.3f / %9.3f ms  close %9.3f / %9.3f ms  "
               "hit %6.2f / %6.2f us\n", mode_name[m], type[m], 1e3 * o1, 1e3 * o2, 1e3 * c1,
               1e3 * c2, 1e6 * h1, 1e6 * h2);
    }

    /* 2. the program under the tool */
    char dir[] = "/tmp/events_sources.XXXXXX", list[8 * (PATH_MAX + 64)];
    if (!mkdtemp(dir)) {
        perror("events_sources: mkdtemp");
        return 1;
    }
    size_t k = 0;
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(list + k, sizeof list - k, "uprobe:%s:es_probe_f%d,", OMPF_ES_PROG,
                              i);
    snprintf(list + k, sizeof list - k, "perf::TASK-CLOCK");
    static const char *const prog_mode[] = {"software events only", "N uprobes, uprobe PMU",
                                            "N uprobes, held"};
    double wall[3][99];
    int bad = 0;
    for (int r = 0; r < reps && !bad; r++)
        for (int m = 0; m < 3 && !bad; m++) {
            ompf_uphold_t *h = NULL;
            if (m == 2 && (ompf_uphold_create(stderr, &h) || ompf_uphold_add_list(h, list) != n))
                bad = 1;
            if (!bad)
                wall[m][r] = program(m ? list : "perf::TASK-CLOCK", hits, threads, dir);
            bad |= wall[m][r] < 0;
            ompf_uphold_destroy(h);
        }
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/p.ompf", dir);
    unlink(p);
    rmdir(dir);
    if (bad)
        return 1;
    printf("%s under the tool, %d threads x %d uprobes x %ld hits (wall s, min / median of "
           "%d, alternating):\n", OMPF_ES_PROG, threads, n, hits, reps);
    double b1, b2;
    stats(wall[0], reps, &b1, &b2);
    for (int m = 0; m < 3; m++) {
        double w1, w2;
        stats(wall[m], reps, &w1, &w2);
        printf("  %-22s %7.3f / %7.3f s   slowdown %+7.1f%% / %+7.1f%%\n", prog_mode[m], w1, w2,
               100 * (w1 / b1 - 1), 100 * (w2 / b2 - 1));
    }
    load("after");
    return 0;
}
