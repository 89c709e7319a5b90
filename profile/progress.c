/* The progress line (include/ompfuse/progress.h). */
#include "ompfuse/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ompf_progress {
    char label[96];
    char unit[24];
    uint64_t total, done, checked; /* done when the clock was last read */
    unsigned calls;
    double start, last;
    int shown; /* a line is on the terminal */
    double delay;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *mode(void)
{
    const char *m = getenv("OMPFUSE_PROGRESS");
    return m ? m : "";
}

int ompf_progress_wanted(int quiet)
{
    if (quiet || !strcmp(mode(), "never"))
        return 0;
    return !strcmp(mode(), "always") || isatty(STDERR_FILENO);
}

ompf_progress_t *ompf_progress_create(const char *label, uint64_t total,
                                      const char *unit, int enabled)
{
    if (!enabled)
        return NULL;
    ompf_progress_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->label, sizeof p->label, "%s", label ? label : "");
    snprintf(p->unit, sizeof p->unit, "%s", unit ? unit : "");
    p->total = total;
    p->start = p->last = now_s();
    p->delay = strcmp(mode(), "always") ? 2.0 : 0.0;
    return p;
}

static void print(ompf_progress_t *p, double t)
{
    char line[200];
    int n;
    if (p->total) {
        double f = (double)p->done / (double)p->total;
        double el = t - p->start;
        if (f > 0 && f < 1)
            n = snprintf(line, sizeof line, "%s: %llu/%llu %s (%.0f%%, ETA %.0f s)",
                         p->label, (unsigned long long)p->done,
                         (unsigned long long)p->total, p->unit, 100 * f,
                         el / f - el);
        else
            n = snprintf(line, sizeof line, "%s: %llu/%llu %s (%.0f%%)", p->label,
                         (unsigned long long)p->done,
                         (unsigned long long)p->total, p->unit, 100 * f);
    } else {
        n = snprintf(line, sizeof line, "%s: %llu %s", p->label,
                     (unsigned long long)p->done, p->unit);
    }
    (void)n;
    /* \r then pad, so a shorter line covers the previous one. */
    fprintf(stderr, "\r%-70s", line);
    fflush(stderr);
    p->shown = 1;
    p->last = t;
}

void ompf_progress_update(ompf_progress_t *p, uint64_t done)
{
    if (!p)
        return;
    p->done = done;
    /* The clock every 1024 calls, or when done moved by 1/1000 of the
     * total: coarse steps (inputs, runs) show too. */
    if ((++p->calls & 1023) && !(p->total && done >= p->total) &&
        !(p->total && (done - p->checked) * 1000 >= p->total))
        return;
    p->checked = done;
    double t = now_s();
    if (t - p->start < p->delay || (t - p->last < 0.25 && p->shown))
        return;
    print(p, t);
}

void ompf_progress_add(ompf_progress_t *p, uint64_t n)
{
    if (p)
        ompf_progress_update(p, p->done + n);
}

void ompf_progress_destroy(ompf_progress_t *p)
{
    if (!p)
        return;
    if (p->shown) {
        fprintf(stderr, "\r%-70s\r", "");
        fflush(stderr);
    }
    free(p);
}
