/* Untied tasks with taskyield: `single` creates 8 untied tasks; each
 * works, calls taskyield (a scheduling point where it may be suspended
 * and later resumed, possibly on another thread), then works again.
 * XUs (any N): 8 tasks; a task resumed in several parts is still one XU
 * (the sum of its parts). */
#include "prog_util.h"

int main(void)
{
    static double a[8], b[8];
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < 8; i++) {
#pragma omp task untied firstprivate(i)
        {
            a[i] = prog_work(100000, i);
#pragma omp taskyield
            b[i] = prog_work(100000, 10 + i);
        }
    }
    double all[16];
    for (int i = 0; i < 8; i++) {
        all[i] = a[i];
        all[8 + i] = b[i];
    }
    prog_checksum("untied", all, 16);
    return 0;
}
