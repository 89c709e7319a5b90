/* Guided loop: schedule(guided, 4) over 1000 iterations in a parallel
 * region of N threads; no tasks.  The chunk sequence of libomp's guided
 * schedule depends only on N, not on timing (chunks shrink with the
 * remaining iterations, down to 4).  XUs: G(N) chunks, measured with
 * libomp 19: G(2) = 19, G(3) = 28, G(4) = 35; N = 1: one chunk of 1000. */
#include "prog_util.h"

int main(void)
{
    static double out[1000];
#pragma omp parallel
    {
#pragma omp for schedule(guided, 4)
        for (int i = 0; i < 1000; i++)
            out[i] = prog_work(2000, i);
    }
    prog_checksum("guided", out, 1000);
    return 0;
}
