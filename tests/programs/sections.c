/* sections: one `sections` construct with 4 sections in a parallel
 * region of N threads.  libomp hands sections out like a static loop and
 * reports one section dispatch per thread that receives sections, without
 * a section index, so the XUs are the per-thread section sets:
 * XUs with N >= 2 threads: min(N, 4) section XUs (measured: N = 2: 2,
 * N = 3: 3, N = 4: 4); no tasks.  N = 1 (serialized team): libomp 19
 * sends no section dispatch at all. */
#include "prog_util.h"

int main(void)
{
    static double out[4];
#pragma omp parallel
    {
#pragma omp sections
        {
#pragma omp section
            out[0] = prog_work(100000, 1);
#pragma omp section
            out[1] = prog_work(100000, 2);
#pragma omp section
            out[2] = prog_work(100000, 3);
#pragma omp section
            out[3] = prog_work(100000, 4);
        }
    }
    prog_checksum("sections", out, 4);
    return 0;
}
