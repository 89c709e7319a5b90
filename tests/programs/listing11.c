/* Listing 1.1 of the OpenMP fusion paper (IWOMP 2017): a parallel region
 * of exactly 2 threads (num_threads(2), whatever OMP_NUM_THREADS says)
 * with a static loop of 8 iterations that creates one task per
 * iteration, a dynamic,2 loop of 8 iterations, and one task created
 * directly in the parallel region by each thread.
 * XUs: 16 = 2 static chunks (one per thread, 4 iterations each)
 *         + 8 tasks (created in the static loop)
 *         + 4 dynamic chunks (2 iterations each, starts 0 2 4 6)
 *         + 2 tasks created directly in the parallel region (one per TID).
 * The region's task construct sits in a small noinline helper called by
 * the implicit task (still "directly in the parallel region" for OpenMP
 * and for the labels): its task-creating call is the helper's last call, so
 * prog_listing11_sibcall (built with sibling-call optimisation) turns it into
 * a tail jump and codeptr_ra points into libomp (docs/semantics.md, OpenMP
 * runtime); prog_listing11 keeps a real call there. */
#include <omp.h>

#include "prog_util.h"

static double region_task[2];

__attribute__((noinline)) static void region_task_create(int tid)
{
#pragma omp task firstprivate(tid)
    region_task[tid] = prog_work(100000, 30 + tid);
}

int main(void)
{
    static double loop_task[8], dyn[8], stat[8];
#pragma omp parallel num_threads(2)
    {
#pragma omp for schedule(static)
        for (int i = 0; i < 8; i++) {
            stat[i] = prog_work(20000, i);
#pragma omp task firstprivate(i)
            loop_task[i] = prog_work(100000, 10 + i);
        }
#pragma omp for schedule(dynamic, 2)
        for (int i = 0; i < 8; i++)
            dyn[i] = prog_work(100000, 20 + i);
        region_task_create(omp_get_thread_num());
    }
    double all[26];
    for (int i = 0; i < 8; i++) {
        all[i] = stat[i];
        all[8 + i] = loop_task[i];
        all[16 + i] = dyn[i];
    }
    all[24] = region_task[0];
    all[25] = region_task[1];
    prog_checksum("listing11", all, 26);
    return 0;
}
