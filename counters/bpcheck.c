/* Whether hardware breakpoints fire here: a self-test.  Some hypervisors
 * let a breakpoint event open (the kernel has the debug registers' PMU)
 * but never deliver its hits, so every mem:ADDR event counts 0: the
 * development VM (AMD family 1Ah under a paravirtual hypervisor) does
 * exactly that, and perf stat counts 0 there too.  Opening alone cannot
 * tell; counting writes to a variable of our own can. */
#include "ompfuse/counters.h"

#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

int ompf_cnt_breakpoint_check(uint64_t *counted)
{
    static volatile int watched;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_BREAKPOINT;
    a.bp_type = HW_BREAKPOINT_W;
    a.bp_addr = (uint64_t)(uintptr_t)&watched;
    a.bp_len = HW_BREAKPOINT_LEN_4;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0)
        return OMPF_EUNSUPP;
    for (int i = 0; i < OMPF_CNT_BP_CHECK_WRITES; i++)
        watched = i;
    uint64_t n = 0;
    ssize_t r = read(fd, &n, sizeof n);
    close(fd);
    if (r != (ssize_t)sizeof n)
        return OMPF_EIO;
    if (counted)
        *counted = n;
    return n == OMPF_CNT_BP_CHECK_WRITES;
}
