/* Tasks created in a dynamic loop: a schedule(dynamic,1) loop of 8
 * iterations in a parallel region of N threads; every iteration creates
 * 2 tasks.  XUs with N >= 2: 8 one-iteration chunks + 16 tasks (each
 * task's parent is the chunk that created it).  N = 1: libomp 19 reports
 * the loop as one chunk of 8 iterations (+ the 16 tasks). */
#include "prog_util.h"

int main(void)
{
    static double chunk[8], task[16];
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < 8; i++) {
            chunk[i] = prog_work(20000, i);
            for (int k = 0; k < 2; k++) {
#pragma omp task firstprivate(i, k)
                task[2 * i + k] = prog_work(50000, 100 + 2 * i + k);
            }
        }
    }
    double all[24];
    for (int i = 0; i < 8; i++)
        all[i] = chunk[i];
    for (int i = 0; i < 16; i++)
        all[8 + i] = task[i];
    prog_checksum("tasks_in_loop", all, 24);
    return 0;
}
