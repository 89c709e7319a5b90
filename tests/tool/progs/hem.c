/* Programs for the HEM-mode tests (tool_hem_*), one per argv[1] mode.
 *
 * faults N PAGES WORK: a schedule(dynamic, 1) loop of N iterations (one
 *   XU each).  Even iterations touch PAGES fresh pages of their own
 *   anonymous mapping, one page every WORK units of computation, so their
 *   page faults are spread evenly over the XU; odd iterations do the same
 *   computation without touching memory.  Per XU the true PAGE-FAULTS
 *   count is PAGES (even) or 0 (odd), whatever the thread or the timing.
 *   A faulting iteration is longer than a pure one by its faults.
 * timed_faults N PAGES US: the same, but every iteration lasts US
 *   microseconds of its thread's CPU time (more only if its faults alone
 *   take longer), the pages touched at PAGES evenly spaced instants: XUs
 *   alike in length, told apart only by their page faults.
 * fault_cost PAGES: prints the median CPU time, in microseconds, of
 *   mapping, faulting in and unmapping PAGES fresh pages (15 times):
 *   ~1 us a fault on bare metal, ~40 us on some VMs.
 * io LINES: the initial thread prints LINES lines, sleeping 100 us with
 *   nanosleep() between them (restarted with the remaining time on EINTR,
 *   as POSIX programs must), with a parallel loop every 10 lines; exits
 *   with status 3.  Its output must be the same with and without the
 *   tool. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;

static void work(long n)
{
    double x = 1.0;
    for (long k = 0; k < n; k++)
        x = x * 0.9999999 + 1e-9;
    sink += x;
}

static int faults(long n, long pages, long w)
{
    long ps = sysconf(_SC_PAGESIZE);
    long touched = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : touched)
    for (long i = 0; i < n; i++) {
        char *m = NULL;
        if (i % 2 == 0) {
            m = mmap(NULL, (size_t)(pages * ps), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED)
                m = NULL;
        }
        for (long p = 0; p < pages; p++) {
            if (m) {
                m[p * ps] = (char)p;
                touched++;
            }
            work(w);
        }
        if (m)
            munmap(m, (size_t)(pages * ps));
    }
    printf("faults %ld xus, %ld pages touched\n", n, touched);
    return 0;
}

static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void work_until(double t_us)
{
    while (cpu_us() < t_us)
        work(200);
}

static int timed_faults(long n, long pages, long us)
{
    long ps = sysconf(_SC_PAGESIZE);
    long touched = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : touched)
    for (long i = 0; i < n; i++) {
        double t0 = cpu_us();
        /* every iteration maps (cheap); only even ones touch */
        char *m = mmap(NULL, (size_t)(pages * ps), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            m = NULL;
        else /* one fault per page, whatever the THP setting */
            madvise(m, (size_t)(pages * ps), MADV_NOHUGEPAGE);
        for (long p = 0; p < pages; p++) {
            work_until(t0 + (double)us * ((double)p + 0.5) / (double)pages);
            if (m && i % 2 == 0) {
                m[p * ps] = (char)p;
                touched++;
            }
        }
        work_until(t0 + (double)us);
        if (m)
            munmap(m, (size_t)(pages * ps));
    }
    printf("timed_faults %ld xus of %ld us, %ld pages touched\n", n, us,
           touched);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y);
}

static int fault_cost(long pages)
{
    enum { REPS = 15 };
    double c[REPS];
    long ps = sysconf(_SC_PAGESIZE);
    for (int r = 0; r < REPS; r++) {
        double t0 = cpu_us();
        char *m = mmap(NULL, (size_t)(pages * ps), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return 1;
        madvise(m, (size_t)(pages * ps), MADV_NOHUGEPAGE);
        for (long p = 0; p < pages; p++)
            m[p * ps] = (char)p;
        munmap(m, (size_t)(pages * ps));
        c[r] = cpu_us() - t0;
    }
    qsort(c, REPS, sizeof c[0], cmp_double);
    printf("fault_cost %ld pages: %.1f us\n", pages, c[REPS / 2]);
    return 0;
}

static void sleep_us(long us)
{
    struct timespec req = {0, us * 1000};
    while (nanosleep(&req, &req) != 0 && errno == EINTR) {
    }
}

static int io(long lines)
{
    double total = 0;
    for (long l = 0; l < lines; l++) {
        printf("line %ld: %s\n", l, "the quick brown fox jumps over the lazy dog");
        fflush(stdout);
        sleep_us(100);
        if (l % 10 == 9) {
            double s = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : s)
            for (int i = 0; i < 400; i++) {
                double x = i;
                for (int k = 0; k < 500; k++)
                    x = x * 0.999 + 1e-3;
                s += x;
            }
            total += s;
        }
    }
    printf("io total %.6e\n", total);
    return 3;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    if (!strcmp(m, "faults") && argc == 5)
        return faults(atol(argv[2]), atol(argv[3]), atol(argv[4]));
    if (!strcmp(m, "timed_faults") && argc == 5)
        return timed_faults(atol(argv[2]), atol(argv[3]), atol(argv[4]));
    if (!strcmp(m, "fault_cost") && argc == 3)
        return fault_cost(atol(argv[2]));
    if (!strcmp(m, "io") && argc == 3)
        return io(atol(argv[2]));
    fprintf(stderr, "usage: %s faults N PAGES WORK | timed_faults N PAGES "
            "US | fault_cost PAGES | io LINES\n", argv[0]);
    return 2;
}
