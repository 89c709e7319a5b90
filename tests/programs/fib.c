/* single + recursive tasks: fib(n) (default n = 15, argv[1] to change)
 * started inside `single`; every call with n >= 2 creates two tasks
 * (fib(n-1), fib(n-2)) and waits for them with taskwait.
 * XUs (any N threads): 2 * (F(n+1) - 1) tasks, F(1) = F(2) = 1;
 * for n = 15: 2 * (987 - 1) = 1972 tasks. */
#include <stdlib.h>

#include "prog_util.h"

static long fib(int n)
{
    if (n < 2)
        return n;
    long a, b;
#pragma omp task shared(a) firstprivate(n)
    a = fib(n - 1);
#pragma omp task shared(b) firstprivate(n)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 15;
    if (n < 0 || n > 30) {
        fprintf(stderr, "prog_fib: n must be in 0..30\n");
        return 2;
    }
    long r = 0;
#pragma omp parallel
#pragma omp single
    r = fib(n);
    double v = (double)r;
    prog_checksum("fib", &v, 1);
    return 0;
}
