/* exit() from inside a parallel region: a schedule(dynamic,1) loop of 8
 * iterations, then thread 0 prints the checksum and calls exit(0) while
 * the other threads wait at the region's closing barrier.  The process
 * must still end with status 0 and the tool must still write its output.
 * XUs with N >= 2: 8 one-iteration chunks (N = 1: one chunk of 8); no
 * tasks.  Note: libomp 19 does not call the OMPT finalize callback on
 * this path when N >= 2; a tool must also write its output from an
 * atexit handler. */
#include <omp.h>
#include <stdlib.h>

#include "prog_util.h"

int main(void)
{
    static double out[8];
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < 8; i++)
            out[i] = prog_work(100000, i);
        if (omp_get_thread_num() == 0) {
            prog_checksum("exit_in_parallel", out, 8);
            fflush(stdout);
            exit(0);
        }
    }
    /* Not reached: thread 0 exits above. */
    return 1;
}
