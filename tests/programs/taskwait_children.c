/* A task whose children dominate the work done during its taskwait:
 * `single` creates one parent task; the parent works ~1 ms, creates 4
 * child tasks of ~20 ms each and waits for them with taskwait.  With
 * OMP_NUM_THREADS=1 every child runs inside the parent's taskwait; a tool
 * must charge them to the children, so the parent's exclusive time stays
 * ~1 ms while the children total ~80 ms.
 * XUs (any N): 5 tasks (1 parent + 4 children). */
#include "prog_util.h"

#define TW_PARENT_ITERS 400000L  /* ~1 ms */
#define TW_CHILD_ITERS 8000000L  /* ~20 ms */

int main(void)
{
    static double parent, child[4];
#pragma omp parallel
#pragma omp single
    {
#pragma omp task
        {
            parent = prog_work(TW_PARENT_ITERS, 0.5);
            for (int i = 0; i < 4; i++) {
#pragma omp task firstprivate(i)
                child[i] = prog_work(TW_CHILD_ITERS, 1.0 + i);
            }
#pragma omp taskwait
        }
    }
    double all[5] = {parent, child[0], child[1], child[2], child[3]};
    prog_checksum("taskwait_children", all, 5);
    return 0;
}
