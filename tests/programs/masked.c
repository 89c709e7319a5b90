/* masked / master + tasks: in a parallel region of N threads, a `masked`
 * block creates 4 tasks, then (after a barrier) a `master` block creates
 * 4 more.  Both run on thread 0 only.  XUs (any N): 8 tasks; their
 * parents are the masked / master construct instances. */
#include "prog_util.h"

int main(void)
{
    static double out[8];
#pragma omp parallel
    {
#pragma omp masked
        {
            for (int i = 0; i < 4; i++) {
#pragma omp task firstprivate(i)
                out[i] = prog_work(100000, i);
            }
        }
#pragma omp barrier
#pragma omp master
        {
            for (int i = 4; i < 8; i++) {
#pragma omp task firstprivate(i)
                out[i] = prog_work(100000, i);
            }
        }
    }
    prog_checksum("masked", out, 8);
    return 0;
}
