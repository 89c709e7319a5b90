/* The second compilation unit of prog_two_units (listed first when it is
 * linked, so that the program's constructs are spread over two CUs in
 * both orders of the line tables): tasks and a loop in a function of
 * their own file. */
#include "two_units.h"

static double leaf(int i)
{
    double x = i;
    for (int k = 0; k < 2000; k++)
        x = x * 0.999 + 1.0;
    return x;
}

double two_units_work(int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
#pragma omp task shared(sum) firstprivate(i)
        {
            double v = leaf(i);
#pragma omp atomic
            sum += v;
        }
    }
#pragma omp taskwait
    return sum;
}

/* an orphaned loop: called by every thread of the team */
double two_units_loop(int n)
{
    static double sum; /* shared by the team */
#pragma omp for schedule(dynamic, 4)
    for (int i = 0; i < n; i++) {
        double v = leaf(i);
#pragma omp atomic
        sum += v;
    }
    return sum;
}
