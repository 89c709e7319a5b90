/* The program `--events auto` is tested on (tests/counters/run_auto.py):
 * TASKS tasks of one construct whose outer loops run a task-dependent,
 * known number of times (task t: (t % 5 + 1) * 2 rounds of the first
 * loop, (3 * t) % 7 + 1 of the second), so uprobes on those loops'
 * lines count few hits that vary per XU and are not twins; each round does
 * a fixed amount of arithmetic (the inner loop: too hot to probe). */
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

static double inner(long n, double x)
{
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

/* Two rounds of different kinds, kept out of line so that their entries
 * count a and b per task (inlined, the compiler merged both loops' calls
 * into one block whose count is a + b). */
__attribute__((noinline)) static double round_a(long n, double x) { return inner(n, x); }
__attribute__((noinline)) static double round_b(long n, double x) { return inner(n / 2, x) - 1.0; }

int main(int argc, char **argv)
{
    int tasks = argc > 1 ? atoi(argv[1]) : 24;
    long work = argc > 2 ? atol(argv[2]) : 1000000;
    double total = 0;
#pragma omp parallel
#pragma omp single
    for (int t = 0; t < tasks; t++) {
#pragma omp task firstprivate(t) shared(total)
        {
            double x = t;
            int a = (t % 5 + 1) * 2, b = (3 * t) % 7 + 1;
            for (int r = 0; r < a; r++)
                x = round_a(work, x);
            for (int r = 0; r < b; r++)
                x = round_b(work, x);
#pragma omp atomic
            total += x;
        }
    }
    sink = total;
    printf("auto_prog: %d tasks done\n", tasks);
    /* AUTO_EXIT=n: a program whose normal exit code is n (--exit-code) */
    const char *e = getenv("AUTO_EXIT");
    return e ? atoi(e) : 0;
}
