/* Small OpenMP programs for the tool tests, one per argv[1] mode.  They
 * are deterministic in their XU structure (not in thread assignment). */
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

static void work(long n)
{
    for (long k = 0; k < n * 200; k++)
        sink += k;
}

static long fib(int n)
{
    if (n < 2) {
        work(1);
        return n;
    }
    long a, b;
#pragma omp task shared(a) final(n < 6)
    a = fib(n - 1);
#pragma omp task shared(b) final(n < 6)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

static int dynamic_loop(void)
{
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 3)
        for (int i = 0; i < 100; i++)
            work(i % 7);
#pragma omp for schedule(guided)
        for (int i = 0; i < 200; i++)
            work(i % 5);
#pragma omp for schedule(static, 4)
        for (int i = 0; i < 50; i++)
            work(1);
    }
    return 0;
}

static int tasks_in_loop(void)
{
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 2)
        for (int i = 0; i < 40; i++) {
#pragma omp task
            work(i % 3);
#pragma omp task
            {
#pragma omp task
                work(2);
                work(1);
            }
        }
#pragma omp task
        work(3);
#pragma omp task
        work(4);
    }
    return 0;
}

static int single_fib(void)
{
    long r = 0;
#pragma omp parallel
#pragma omp single
    r = fib(16);
    printf("fib %ld\n", r);
    return 0;
}

static int taskloop(void)
{
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskloop grainsize(5)
        for (int i = 0; i < 200; i++)
            work(i % 4);
#pragma omp taskloop num_tasks(3)
        for (int i = 0; i < 30; i++) {
#pragma omp task
            work(1);
        }
    }
    return 0;
}

static int nested(void)
{
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
    {
#pragma omp parallel num_threads(2)
        {
#pragma omp for schedule(dynamic)
            for (int i = 0; i < 10; i++)
                work(i);
#pragma omp task
            {
#pragma omp task
                work(2);
            }
        }
#pragma omp task
        work(1);
    }
    return 0;
}

static int sections_masked(void)
{
#pragma omp parallel
    {
#pragma omp sections
        {
#pragma omp section
            work(10);
#pragma omp section
            work(20);
        }
#pragma omp masked
        {
#pragma omp task
            work(3);
#pragma omp task
            work(4);
        }
#pragma omp single
        {
#pragma omp task
            work(5);
        }
    }
    return 0;
}

/* Every XU on team thread `owner` whatever the timing: the other threads
 * wait, outside any construct and task scheduling point, until the owner
 * is through the constructs, then find them done.  Runs with different
 * owners must give the same labels (single won by another thread, its
 * tasks, taskloop and dynamic/guided chunks taken by another thread). */
static _Atomic int owned_passed;

static void owned_gate(int owner, int step)
{
    if (omp_get_thread_num() != owner)
        while (atomic_load(&owned_passed) < step)
            sched_yield();
}

static int owned(long owner)
{
#pragma omp parallel
    {
        int k = (int)(owner % omp_get_num_threads());
        owned_gate(k, 1);
#pragma omp single nowait
        {
#pragma omp taskgroup
            {
                fib(8);
#pragma omp taskloop grainsize(5)
                for (int i = 0; i < 40; i++)
                    work(1);
            }
        }
        if (omp_get_thread_num() == k)
            atomic_store(&owned_passed, 1);
        owned_gate(k, 2);
#pragma omp for schedule(dynamic, 3) nowait
        for (int i = 0; i < 30; i++)
            work(1);
#pragma omp for schedule(guided) nowait
        for (int i = 0; i < 60; i++)
            work(1);
        if (omp_get_thread_num() == k)
            atomic_store(&owned_passed, 2);
    }
    return 0;
}

static int many_tasks(long n)
{
#pragma omp parallel
#pragma omp single
    for (long i = 0; i < n; i++) {
#pragma omp task
        sink++;
    }
    printf("tasks %ld\n", n);
    return 0;
}

static int many_chunks(long n)
{
#pragma omp parallel for schedule(dynamic, 1)
    for (long i = 0; i < n; i++)
        sink++;
    printf("chunks %ld\n", n);
    return 0;
}

static int exit_in_parallel(int who)
{
#pragma omp parallel
    {
#pragma omp for schedule(dynamic)
        for (int i = 0; i < 20; i++)
            work(i);
        if (omp_get_thread_num() == who) {
            printf("exiting\n");
            fflush(stdout);
            exit(7);
        }
        for (;;)
            work(1);
    }
    return 0;
}

/* A relative OMPFUSE_OUTPUT stays where it was meant after chdir(), and a
 * forked child that exits does not finish the parent's profile. */
static int fork_chdir(void)
{
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < 10; i++)
        work(i);
    if (chdir("/") != 0)
        return 3;
    pid_t p = fork();
    if (p == 0)
        exit(0);
    if (p > 0)
        waitpid(p, NULL, 0);
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < 10; i++)
        work(i);
    printf("forked\n");
    return 0;
}

static int compute(long n)
{
    double s = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : s)
    for (long i = 0; i < n; i++) {
        double x = (double)i;
        for (int k = 0; k < 2000; k++)
            x = x * 0.999999 + 1e-9 * k;
        s += x;
    }
    printf("compute %.3e\n", s);
    return 0;
}

static int untied(void)
{
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < 8; i++) {
#pragma omp task untied
        {
            work(5);
#pragma omp taskyield
            work(5);
        }
    }
    return 0;
}

static int taskwait_children(void)
{
    /* the parent's own work is 10 units; its children do 20000 units each,
     * run inside it (undeferred) and during its taskwait.  Twice: the
     * first instance also pays the tool's first-sight costs. */
#pragma omp parallel num_threads(1)
#pragma omp single
    for (int rep = 0; rep < 2; rep++) {
#pragma omp task
        {
            work(10);
#pragma omp task if (0)
            work(20000);
#pragma omp task
            work(20000);
#pragma omp taskwait
        }
    }
    return 0;
}

/* 300 small taskloops in a row, each of 2 one-iteration chunks whose
 * body creates a task first thing: idle threads steal each chunk as soon
 * as it is queued, many chances to start one (and create its task) before
 * the creator has stored the chunk's range (tool_taskloop_children runs
 * it with OMP_WAIT_POLICY=passive, which widens that window). */
static int taskloop_children(void)
{
#pragma omp parallel
#pragma omp single
    for (int r = 0; r < 300; r++) {
#pragma omp taskloop num_tasks(2)
        for (int i = 0; i < 2; i++) {
#pragma omp task
            work(0);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    long n = argc > 2 ? atol(argv[2]) : 1000;
    if (!strcmp(m, "dynamic"))
        return dynamic_loop();
    if (!strcmp(m, "tasks_in_loop"))
        return tasks_in_loop();
    if (!strcmp(m, "fib"))
        return single_fib();
    if (!strcmp(m, "taskloop"))
        return taskloop();
    if (!strcmp(m, "nested"))
        return nested();
    if (!strcmp(m, "sections"))
        return sections_masked();
    if (!strcmp(m, "owned"))
        return owned(n);
    if (!strcmp(m, "many_tasks"))
        return many_tasks(n);
    if (!strcmp(m, "many_chunks"))
        return many_chunks(n);
    if (!strcmp(m, "exit"))
        return exit_in_parallel(0);
    if (!strcmp(m, "exit_worker"))
        return exit_in_parallel(1);
    if (!strcmp(m, "fork_chdir"))
        return fork_chdir();
    if (!strcmp(m, "compute"))
        return compute(n);
    if (!strcmp(m, "untied"))
        return untied();
    if (!strcmp(m, "taskloop_children"))
        return taskloop_children();
    if (!strcmp(m, "taskwait_children"))
        return taskwait_children();
    fprintf(stderr, "usage: mix MODE [N]\n");
    return 2;
}
