/* prog_two_units: main's own constructs (this file) and those of
 * two_units_work.c, resolved to their files and lines (tool_two_units). */
#include <stdio.h>

#include "two_units.h"

int main(void)
{
    double a = 0, b = 0;
#pragma omp parallel
    {
#pragma omp single
        a = two_units_work(40);
        b = two_units_loop(64);
#pragma omp for schedule(dynamic, 8)
        for (int i = 0; i < 32; i++)
            if (i < 0)
                printf("never\n");
    }
    printf("two_units checksum = %.1f\n", a + b);
    return 0;
}
