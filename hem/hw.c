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
#include "ompfuse/pfd.h"

struct ompf_hemhw {
    unsigned n;
    int dead;  /* a read failed: never read again */
    int fd[];  /* handles (ompfuse/pfd.h) */
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
        int fd = ompf_pfd_adopt((int)syscall(SYS_perf_event_open, &a, pid,
                                             cpu, -1, PERF_FLAG_FD_CLOEXEC));
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
    if (h->dead)
        return OMPF_EIO;
    for (unsigned i = 0; i < h->n; i++) {
        /* looked up each time: the tool's dup2 wrapper may move it; one
         * retry when it moved during a failed read */
        uint64_t buf[3];
        int fd = ompf_pfd_fd(h->fd[i]);
        ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
        if (got != (ssize_t)sizeof buf && ompf_pfd_fd(h->fd[i]) != fd) {
            fd = ompf_pfd_fd(h->fd[i]);
            got = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
        }
        if (got != (ssize_t)sizeof buf || buf[2] > buf[1]) {
            h->dead = 1;
            return OMPF_EIO;
        }
        if (value)
            value[i] = buf[0];
        if (enabled)
            enabled[i] = buf[1];
        if (running)
            running[i] = buf[2];
    }
    return 0;
}

int ompf_hemhw_intact(const ompf_hemhw_t *h)
{
    if (!h || h->dead)
        return 0;
    for (unsigned i = 0; i < h->n; i++)
        if (!ompf_pfd_intact(h->fd[i]))
            return 0;
    return 1;
}

void ompf_hemhw_close(ompf_hemhw_t *h)
{
    if (!h)
        return;
    for (unsigned i = 0; i < h->n; i++)
        if (h->fd[i] >= 0)
            ompf_pfd_release(h->fd[i]); /* only if still ours */
    free(h);
}
