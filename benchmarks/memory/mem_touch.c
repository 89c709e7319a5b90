/* What first touching fresh anonymous memory costs on this machine, per
 * 4 KiB page, for each size given (MiB): CPU time of the process (user +
 * system) while it maps the region, writes one byte per page and unmaps
 * it.  On the project's VMs the cost per page grows with the size (the
 * hypervisor backs memory the guest has reported free only when it is
 * touched again), which is what makes `combine` at 10 x 10^7 XUs spend
 * more system than user time; scale.py prints this next to its figures.
 *
 * usage: mem_touch MIB [MIB ...]    e.g. mem_touch 600 6000 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

static double cpu_s(long *minflt)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *minflt = ru.ru_minflt;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mem_touch MIB [MIB ...]\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        char *end;
        unsigned long mib = strtoul(argv[i], &end, 10);
        if (*end || !mib) {
            fprintf(stderr, "mem_touch: '%s' is not a size in MiB\n", argv[i]);
            return 2;
        }
        size_t len = (size_t)mib << 20;
        long f0, f1;
        double t0 = cpu_s(&f0);
        volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            fprintf(stderr, "mem_touch: %lu MiB: %s\n", mib, strerror(errno));
            return 1;
        }
        for (size_t o = 0; o < len; o += 4096)
            p[o] = 1;
        munmap((void *)p, len);
        double t = cpu_s(&f1) - t0;
        size_t pages = len / 4096;
        printf("%lu MiB: %.2f s CPU, %.2f us per page (%ld faults)\n", mib, t,
               t / (double)pages * 1e6, f1 - f0);
    }
    return 0;
}
