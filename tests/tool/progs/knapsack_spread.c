/* knapsack (benchmarks/knapsack) for tool_knapsack, with the root's child
 * tasks made to wait for each other: in a team of several threads two of
 * them run on different threads in every run, however loaded the machine,
 * so some XU always runs on a thread other than 0.  The task tree, labels
 * and results are the benchmark's; only when its tasks run changes. */
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>

static _Atomic int spread_started;

static void spread_wait(int depth)
{
    if (depth != 1 || omp_get_num_threads() < 2)
        return;
    atomic_fetch_add(&spread_started, 1);
    /* A tied task busy-waiting outside any task scheduling point: its
     * thread cannot start the sibling, another thread must.  The limit
     * only keeps an instance with one root child from hanging (the test
     * then finds both children on one thread). */
    double t0 = omp_get_wtime();
    while (atomic_load(&spread_started) < 2 && omp_get_wtime() - t0 < 60)
        sched_yield();
}

#define KS_NODE_HOOK(depth) spread_wait(depth)
#include "knapsack.c"
