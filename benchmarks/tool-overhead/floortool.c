/* Reference OMPT tools for the bookkeeping benchmark (bookkeeping.py):
 * the callbacks libompfuse.so registers, with FLOOR_MODE=empty doing
 * nothing in them (what libomp's OMPT work costs by itself), and
 * FLOOR_MODE=stamps doing only what no recording tool can avoid: a
 * timestamp at each XU boundary (task switch, chunk dispatch, implicit
 * task begin/end) stored to a per-thread buffer, read from the clock
 * libompfuse.so reads (ompt-tool/clock.c): the TSC where the kernel's
 * clocksource is tsc, else clock_gettime(CLOCK_MONOTONIC_RAW).
 * ompfuse's bookkeeping is measured over the first, and its floor is
 * the second. */
#include <omp-tools.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "callback_list.h"

static int stamps, use_tsc;

#define RING 4096
static __thread uint64_t ring[RING];
static __thread unsigned pos;
static volatile uint64_t sink;

static inline void stamp(void)
{
    if (!stamps)
        return;
    if (use_tsc) {
        uint32_t lo, hi;
        __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
        ring[pos++ & (RING - 1)] = (uint64_t)hi << 32 | lo;
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
        ring[pos++ & (RING - 1)] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
}

/* The tool's rule (ompt-tool/clock.c): the TSC only where the kernel
 * keeps time with it. */
static int clocksource_is_tsc(void)
{
    char b[64] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return 0;
    int ok = fgets(b, sizeof b, f) && strstr(b, "tsc"); /* clock.c: file_has */
    fclose(f);
    return ok;
}

static void on_thread_begin(ompt_thread_t k, ompt_data_t *d) { (void)k, (void)d; }
static void on_thread_end(ompt_data_t *d)
{
    (void)d;
    sink += ring[0]; /* the stores are not dead */
}
static void on_parallel_begin(ompt_data_t *a, const ompt_frame_t *b, ompt_data_t *c,
                              unsigned int d, int e, const void *f)
{
    (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
}
static void on_parallel_end(ompt_data_t *a, ompt_data_t *b, int c, const void *d)
{
    (void)a, (void)b, (void)c, (void)d;
}
static void on_implicit_task(ompt_scope_endpoint_t e, ompt_data_t *a, ompt_data_t *b,
                             unsigned int c, unsigned int d, int f)
{
    (void)e, (void)a, (void)b, (void)c, (void)d, (void)f;
    stamp();
}
static void on_task_create(ompt_data_t *a, const ompt_frame_t *b, ompt_data_t *c, int d,
                           int e, const void *f)
{
    (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
}
static void on_task_schedule(ompt_data_t *a, ompt_task_status_t s, ompt_data_t *b)
{
    (void)a, (void)s, (void)b;
    stamp(); /* the end of one XU and the start of the next */
}
static void on_work(ompt_work_t w, ompt_scope_endpoint_t e, ompt_data_t *a, ompt_data_t *b,
                    uint64_t c, const void *d)
{
    (void)w, (void)e, (void)a, (void)b, (void)c, (void)d;
}
static void on_sync_region(ompt_sync_region_t k, ompt_scope_endpoint_t e, ompt_data_t *a,
                           ompt_data_t *b, const void *c)
{
    (void)k, (void)e, (void)a, (void)b, (void)c;
}
static void on_masked(ompt_scope_endpoint_t e, ompt_data_t *a, ompt_data_t *b, const void *c)
{
    (void)e, (void)a, (void)b, (void)c;
}
static void on_dispatch(ompt_data_t *a, ompt_data_t *b, ompt_dispatch_t k, ompt_data_t c)
{
    (void)a, (void)b, (void)k, (void)c;
    stamp(); /* a chunk's start is the previous one's end */
}

static int init(ompt_function_lookup_t lookup, int dev, ompt_data_t *data)
{
    (void)dev, (void)data;
    const char *m = getenv("FLOOR_MODE");
    stamps = m && !strcmp(m, "stamps");
    use_tsc = clocksource_is_tsc();
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
#define REG(ev, fn) set(ev, (ompt_callback_t)(fn));
    OMPF_TOOL_CALLBACKS(REG) /* the same callbacks as libompfuse.so */
#undef REG
    return 1;
}

static void fini(ompt_data_t *data) { (void)data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned int v, const char *rt)
{
    (void)v, (void)rt;
    static ompt_start_tool_result_t r = {init, fini, {0}};
    return &r;
}
