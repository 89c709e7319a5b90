/* Nested parallelism: an outer parallel region of 2 threads, each
 * encountering (directly in its implicit task) an inner parallel region
 * of 2 threads that runs a schedule(dynamic,1) loop of 4 iterations.
 * Team sizes are fixed by num_threads(2), so for any OMP_NUM_THREADS
 * (active nesting is enabled with omp_set_max_active_levels(2)):
 * XUs: 8 dynamic chunks (2 inner regions x 4 one-iteration chunks);
 * no explicit tasks (implicit tasks: 2 outer + 2 x 2 inner). */
#include <omp.h>

#include "prog_util.h"

int main(void)
{
    static double out[2][4];
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
    {
        int outer = omp_get_thread_num();
#pragma omp parallel num_threads(2)
        {
#pragma omp for schedule(dynamic, 1)
            for (int i = 0; i < 4; i++)
                out[outer][i] = prog_work(100000, 10 * outer + i);
        }
    }
    prog_checksum("nested", &out[0][0], 8);
    return 0;
}
