/* The OMPT callbacks libompfuse.so registers, as one list: X(event,
 * handler) per callback, dispatch last.  The tool's registration
 * (callbacks.c) and the bookkeeping benchmark's reference tools
 * (benchmarks/tool-overhead/floortool.c), whose handlers have the same
 * names, both expand it, so that the benchmark measures libomp with
 * exactly the callbacks the tool asks for. */
#ifndef OMPF_CALLBACK_LIST_H
#define OMPF_CALLBACK_LIST_H

#define OMPF_TOOL_CALLBACKS(X)                                                \
    X(ompt_callback_thread_begin, on_thread_begin)                            \
    X(ompt_callback_thread_end, on_thread_end)                                \
    X(ompt_callback_parallel_begin, on_parallel_begin)                        \
    X(ompt_callback_parallel_end, on_parallel_end)                            \
    X(ompt_callback_implicit_task, on_implicit_task)                          \
    X(ompt_callback_task_create, on_task_create)                              \
    X(ompt_callback_task_schedule, on_task_schedule)                          \
    X(ompt_callback_work, on_work)                                            \
    X(ompt_callback_sync_region, on_sync_region)                              \
    X(ompt_callback_masked, on_masked)                                        \
    X(ompt_callback_dispatch, on_dispatch)

#endif
