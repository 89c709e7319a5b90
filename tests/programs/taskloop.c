/* taskloop inside single: `taskloop num_tasks(8)` over 64 iterations.
 * XUs with N >= 2 threads: 8 taskloop chunk tasks of 8 iterations each
 * (chunk starts 0, 8, ..., 56; 8 task creations, 8 taskloop_chunk
 * dispatches); libomp's internal splitter tasks, if any, are not XUs.
 * N = 1: the 8 tasks are created but libomp 19 sends no taskloop_chunk
 * dispatch (xu_count_tool counts them as the chunk tasks that completed
 * without one). */
#include "prog_util.h"

int main(void)
{
    static double out[64];
#pragma omp parallel
#pragma omp single
#pragma omp taskloop num_tasks(8)
    for (int i = 0; i < 64; i++)
        out[i] = prog_work(20000, i);
    prog_checksum("taskloop", out, 64);
    return 0;
}
