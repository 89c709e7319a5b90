/* Deterministic occurrences for the event-source tests: task t calls hit()
 * and getppid() (t+1)*K times each; loop iteration i calls hit() once and
 * getppid() once (dynamic chunks of 4: one XU each).  Nothing else in the
 * program calls either. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) void ompf_sources_hit(long v)
{
    __asm__ __volatile__("" ::: "memory");
    sink += v;
}

static void occur(long n)
{
    for (long j = 0; j < n; j++) {
        ompf_sources_hit(j);
        syscall(SYS_getppid);
    }
}

int main(int argc, char **argv)
{
    int tasks = argc > 1 ? atoi(argv[1]) : 8;
    long k = argc > 2 ? atol(argv[2]) : 100;
    int iters = argc > 3 ? atoi(argv[3]) : 64;
#pragma omp parallel
    {
#pragma omp single
        for (int t = 0; t < tasks; t++) {
#pragma omp task firstprivate(t)
            occur((t + 1) * k);
        }
#pragma omp for schedule(dynamic, 4)
        for (int i = 0; i < iters; i++)
            occur(1);
    }
    printf("%ld\n", (long)sink);
    return 0;
}
