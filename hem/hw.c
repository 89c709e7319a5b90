/*
 * Hardware path of HEM: every event in its own perf_event group, so that
 * the kernel time-shares the PMU counters among them (perf_event rotates
 * groups every perf_event_mux_interval_ms).  At each boundary every group
 * is read once: value, time_enabled, time_running, exactly what the
 * estimators take.  See docs/hem.md.
 */
#include <errno.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ompfuse/hem.h"

struct ompf_hemhw {
    unsigned n;
    int fd[];
};

int ompf_hemhw_open(const struct perf_event_attr *attrs, unsigned n, int pid,
                    int cpu, ompf_hemhw_t **out, ompf_error_t *err)
{
    if (out)
        *out = NULL;
    if (!attrs || !out || n == 0 || n > OMPF_MUX_MAX_EVENTS)
        return ompf_error_set(err, OMPF_EINVAL,
                              "HEM: need 1..%d event attributes (got %u)",
                              OMPF_MUX_MAX_EVENTS, n);
    ompf_hemhw_t *h = calloc(1, sizeof *h + n * sizeof(int));
    if (!h)
        return ompf_error_set(err, OMPF_ENOMEM, "HEM: out of memory");
    h->n = n;
    for (unsigned i = 0; i < n; i++)
        h->fd[i] = -1;
    for (unsigned i = 0; i < n; i++) {
        struct perf_event_attr a = attrs[i];
        a.size = sizeof a;
        a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
                        PERF_FORMAT_TOTAL_TIME_RUNNING;
        a.disabled = 0;
        /* Own group (group_fd -1): the kernel may schedule it alone. */
        int fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, 0);
        if (fd < 0) {
            int e = errno;
            ompf_hemhw_close(h);
            char which[48] = "";
            if (n > 1)
                snprintf(which, sizeof which, " of attribute %u of %u", i + 1,
                         n);
            ompf_error_set(err, e == EACCES || e == EPERM ? OMPF_EPERM
                                                          : OMPF_EUNSUPP,
                           "HEM: perf_event_open%s (type %u, config 0x%llx) "
                           "failed: %s", which, a.type,
                           (unsigned long long)a.config, strerror(e));
            /* the caller may want to diagnose the cause (ompf_cnt_diagnose) */
            errno = e;
            return e == EACCES || e == EPERM ? OMPF_EPERM : OMPF_EUNSUPP;
        }
        h->fd[i] = fd;
    }
    *out = h;
    return 0;
}

int ompf_hemhw_read(ompf_hemhw_t *h, uint64_t *value, uint64_t *enabled,
                    uint64_t *running)
{
    if (!h)
        return OMPF_EINVAL;
    for (unsigned i = 0; i < h->n; i++) {
        uint64_t buf[3];
        if (read(h->fd[i], buf, sizeof buf) != (ssize_t)sizeof buf)
            return OMPF_EIO;
        if (value)
            value[i] = buf[0];
        if (enabled)
            enabled[i] = buf[1];
        if (running)
            running[i] = buf[2];
    }
    return 0;
}

void ompf_hemhw_close(ompf_hemhw_t *h)
{
    if (!h)
        return;
    for (unsigned i = 0; i < h->n; i++)
        if (h->fd[i] >= 0)
            close(h->fd[i]);
    free(h);
}
