/* Many empty tasks: `single` creates C empty tasks (default C = 1000000,
 * argv[1] to change).  XUs (any N): C tasks.  Stresses a tool's per-XU
 * cost and memory. */
#include <stdlib.h>

#include "prog_util.h"

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 1000000L;
    if (count < 0) {
        fprintf(stderr, "prog_many_tasks: count must be >= 0\n");
        return 2;
    }
#pragma omp parallel
#pragma omp single
    for (long i = 0; i < count; i++) {
#pragma omp task
        {
        }
    }
    double v = (double)count;
    prog_checksum("many_tasks", &v, 1);
    return 0;
}
