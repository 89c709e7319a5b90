/* prog_two_units: main's own constructs (this file) and those of
 * two_units_work.c, resolved to their files and lines (tool_two_units);
 * and one task construct in a function inlined at two call sites (two
 * code addresses, one source line: one group in `analyze`). */
#include <stdio.h>

#include "two_units.h"

static inline __attribute__((always_inline)) void spawn(double *acc, int k)
{
#pragma omp task firstprivate(acc, k)
    {
#pragma omp atomic
        *acc += k;
    }
}

int main(void)
{
    double a = 0, b = 0, c = 0;
#pragma omp parallel
    {
#pragma omp single
        {
            a = two_units_work(40);
            for (int k = 0; k < 3; k++)
                spawn(&c, k);
            for (int k = 0; k < 5; k++)
                spawn(&c, 10 * k);
        }
        b = two_units_loop(64);
#pragma omp for schedule(dynamic, 8)
        for (int i = 0; i < 32; i++)
            if (i < 0)
                printf("never\n");
    }
    printf("two_units checksum = %.1f\n", a + b + c);
    return 0;
}
