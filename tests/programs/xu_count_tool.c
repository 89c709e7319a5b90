/* xu_count_tool: a minimal OMPT tool used only by the bench_prog_* tests
 * to check the XU counts stated at the top of each test program,
 * independently of the project's own tool.  Load it with
 * OMP_TOOL_LIBRARIES=/path/libxu_count_tool.so; at finalisation it prints
 *   xu_count: tasks=T taskloop_chunks=L loop_chunks=C sections=S
 * to stderr, where tasks counts explicit task creations (taskloop chunk
 * and splitter tasks included), taskloop_chunks the taskloop chunk
 * dispatches, loop_chunks the worksharing-loop chunk dispatches with at
 * least one iteration (static loops report one per thread) and sections
 * the section dispatches.  A taskloop chunk whose task a thief ran before
 * its creator stored the range gets no dispatch from libomp (and with one
 * thread none does): a task created inside a taskloop that completes
 * without a dispatch is counted as a chunk too, so the count does not
 * depend on that race.  (libomp's splitter tasks, in taskloops of many
 * tasks, would be counted as chunks: the programs checked have none.) */
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static _Atomic long n_tasks, n_taskloop_chunks, n_loop_chunks, n_sections, n_undispatched;
static _Atomic int printed;
static _Thread_local int in_taskloop; /* this thread is in a taskloop construct */

enum { CHUNK_TASK = 1, CHUNK_DISPATCHED = 2 }; /* a task's ompt_data_t value */

static void on_work(ompt_work_t wstype, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                    ompt_data_t *task_data, uint64_t count, const void *codeptr_ra)
{
    (void)parallel_data;
    (void)task_data;
    (void)count;
    (void)codeptr_ra;
    if (wstype == ompt_work_taskloop)
        in_taskloop = endpoint == ompt_scope_begin;
}

static void on_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
                             ompt_data_t *next_task_data)
{
    (void)next_task_data;
    if (prior_task_status == ompt_task_complete && prior_task_data &&
        prior_task_data->value == CHUNK_TASK)
        atomic_fetch_add(&n_undispatched, 1);
}

static void on_task_create(ompt_data_t *encountering_task_data,
                           const ompt_frame_t *encountering_task_frame,
                           ompt_data_t *new_task_data, int flags, int has_dependences,
                           const void *codeptr_ra)
{
    (void)encountering_task_data;
    (void)encountering_task_frame;
    (void)has_dependences;
    (void)codeptr_ra;
    if (flags & ompt_task_explicit) {
        atomic_fetch_add(&n_tasks, 1);
        if (in_taskloop && new_task_data)
            new_task_data->value = CHUNK_TASK;
    }
}

static void on_dispatch(ompt_data_t *parallel_data, ompt_data_t *task_data,
                        ompt_dispatch_t kind, ompt_data_t instance)
{
    (void)parallel_data;
    if (kind == ompt_dispatch_ws_loop_chunk) {
        const ompt_dispatch_chunk_t *c = instance.ptr;
        if (c && c->iterations > 0)
            atomic_fetch_add(&n_loop_chunks, 1);
    } else if (kind == ompt_dispatch_taskloop_chunk) {
        atomic_fetch_add(&n_taskloop_chunks, 1);
        if (task_data)
            task_data->value = CHUNK_DISPATCHED;
    } else if (kind == ompt_dispatch_section) {
        atomic_fetch_add(&n_sections, 1);
    }
}

static void report(void)
{
    if (atomic_exchange(&printed, 1))
        return;
    fprintf(stderr, "xu_count: tasks=%ld taskloop_chunks=%ld loop_chunks=%ld sections=%ld\n",
            atomic_load(&n_tasks), atomic_load(&n_taskloop_chunks) + atomic_load(&n_undispatched),
            atomic_load(&n_loop_chunks),
            atomic_load(&n_sections));
    fflush(stderr);
}

static int tool_init(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *data)
{
    (void)initial_device_num;
    (void)data;
    /* libomp 19 does not call the finalize callback when exit() is called
     * inside a parallel region of more than one thread; report then too. */
    atexit(report);
    ompt_set_callback_t set_cb = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set_cb)
        return 0;
    if (set_cb(ompt_callback_task_create, (ompt_callback_t)on_task_create) != ompt_set_always ||
        set_cb(ompt_callback_dispatch, (ompt_callback_t)on_dispatch) != ompt_set_always ||
        set_cb(ompt_callback_work, (ompt_callback_t)on_work) != ompt_set_always ||
        set_cb(ompt_callback_task_schedule, (ompt_callback_t)on_task_schedule) != ompt_set_always) {
        fprintf(stderr, "xu_count: the OpenMP runtime lacks task_create/dispatch/work/task_schedule "
                        "callbacks "
                        "(need libomp >= 16)\n");
        return 0;
    }
    return 1;
}

static void tool_fini(ompt_data_t *data)
{
    (void)data;
    report();
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
    (void)omp_version;
    (void)runtime_version;
    static ompt_start_tool_result_t result = {tool_init, tool_fini, {0}};
    return &result;
}
