/* What one counted occurrence costs: N calls of a noinline function (with
 * and without a uprobe counting them) and N getppid() system calls (with
 * and without syscalls:sys_enter_getppid counting them), each timed
 * REPEATS times; the cost of an occurrence is the median difference.  The
 * uprobe twice: on an instruction the kernel single-steps (an add) and on
 * one it emulates (a nop; x86 also emulates jmp, jcc, call and push).
 * Events are opened through libompfcounters, exactly as the tool does.
 *   event_cost [N=200000] [REPEATS=11]   (as root; tracefs mounted) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ompfuse/counters.h"

static volatile long sink;

__attribute__((noinline)) void event_cost_hit(long v)
{
    __asm__ __volatile__("" ::: "memory");
    sink += v;
}

/* The same, its first instruction a nop: a uprobe there is emulated. */
__attribute__((noinline)) void event_cost_hit_nop(long v)
{
    __asm__ __volatile__("nop" ::: "memory");
    sink += v;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static double run(int sys, long n)
{
    double t0 = now();
    for (long i = 0; i < n; i++) {
        if (sys == 1)
            syscall(SYS_getppid);
        else if (sys == 2)
            event_cost_hit_nop(i);
        else
            event_cost_hit(i);
    }
    return (now() - t0) / (double)n;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ns per operation over reps runs (min, median) with event ev counting
 * (NULL: none); the count read back must be n per run. */
static int measure(const char *ev, int sys, long n, int reps, double *mn,
                   double *med)
{
    ompf_cnt_set_t *s = NULL;
    ompf_cnt_group_t *g = NULL;
    ompf_error_t err;
    double v[101];
    if (ev) {
        const char *why;
        if (ompf_cnt_set_parse(ev, &s, &err) || ompf_cnt_group_open(s, 0, -1, 0, &g) ||
            ompf_cnt_group_fail(g, 0, &why, NULL) != OMPF_CNT_OK) {
            fprintf(stderr, "event_cost: %s: %s\n", ev, g ? why : err.msg);
            ompf_cnt_group_close(g);
            ompf_cnt_set_destroy(s);
            return -1;
        }
    }
    for (int r = 0; r < reps; r++) {
        ompf_cnt_sample_t a, b;
        if (g)
            ompf_cnt_group_read(g, &a);
        v[r] = run(sys, n);
        if (g) {
            ompf_cnt_group_read(g, &b);
            if (b.value[0] - a.value[0] != (uint64_t)n) {
                fprintf(stderr, "event_cost: %s counted %llu of %ld\n", ev,
                        (unsigned long long)(b.value[0] - a.value[0]), n);
                return -1;
            }
        }
    }
    ompf_cnt_group_close(g);
    ompf_cnt_set_destroy(s);
    qsort(v, (size_t)reps, sizeof *v, cmp);
    *mn = v[0];
    *med = v[reps / 2];
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    int reps = argc > 2 ? atoi(argv[2]) : 11;
    if (n < 1 || reps < 1 || reps > 101) {
        fprintf(stderr, "usage: event_cost [N>=1] [REPEATS 1..101]\n");
        return 2;
    }
    char self[4200], up[4300], upnop[4300], load[128] = "?";
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l < 0)
        return 2;
    self[l] = '\0';
    snprintf(up, sizeof up, "uprobe:%s:event_cost_hit", self);
    snprintf(upnop, sizeof upnop, "uprobe:%s:event_cost_hit_nop", self);
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(load, sizeof load, f))
            snprintf(load, sizeof load, "?\n");
        fclose(f);
    }
    printf("event_cost: N=%ld repeats=%d; load average before: %s", n, reps, load);
    struct {
        const char *label, *ev;
        int sys;
    } v[] = {{"function call", NULL, 0},
             {"function call + uprobe", up, 0},
             {"getppid()", NULL, 1},
             {"getppid() + tracepoint", "syscalls:sys_enter_getppid", 1},
             {"call (nop first)", NULL, 2},
             {"call (nop first) + uprobe", upnop, 2}};
    double mn[6], med[6];
    for (int i = 0; i < 6; i++) {
        if (measure(v[i].ev, v[i].sys, n, reps, &mn[i], &med[i]))
            return 1;
        printf("  %-26s min %8.1f ns  median %8.1f ns per call\n", v[i].label,
               mn[i], med[i]);
    }
    printf("cost per occurrence (with - without): uprobe min %.1f median %.1f ns;"
           " tracepoint min %.1f median %.1f ns\n", mn[1] - mn[0], med[1] - med[0],
           mn[3] - mn[2], med[3] - med[2]);
    printf("uprobe on an emulated instruction (nop): min %.1f median %.1f ns\n",
           mn[5] - mn[4], med[5] - med[4]);
    return 0;
}
