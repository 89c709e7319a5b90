/* Tasks created directly in a parallel region (not in single, loop or
 * task): every thread of a team of N creates 3 tasks from its implicit
 * task.  XUs: 3 N tasks (labels use the 0.(TID + prev.N) rule).
 * The checksum covers the first 3 x 64 slots; threads >= 64 only work. */
#include <omp.h>

#include "prog_util.h"

#define PT_MAXT 64

int main(void)
{
    static double out[PT_MAXT * 3];
#pragma omp parallel
    {
        int tid = omp_get_thread_num();
        for (int k = 0; k < 3; k++) {
#pragma omp task firstprivate(tid, k)
            {
                double v = prog_work(100000, k + 1);
                if (tid < PT_MAXT)
                    out[3 * tid + k] = v + tid;
            }
        }
    }
    prog_checksum("parallel_tasks", out, PT_MAXT * 3);
    return 0;
}
