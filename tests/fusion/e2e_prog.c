/* End-to-end fusion test program: `single` creates N tasks (default 300,
 * argv[1]) whose work varies 1..64 units with the task's index (the same
 * in every run).  A unit is a fixed amount of arithmetic plus 8 freshly
 * mapped pages touched, so a task's TASK-CLOCK/CPU-CLOCK and its
 * PAGE-FAULTS/MINOR-FAULTS both grow with its work: fusion that pairs the
 * right XUs puts each pair of nearly identical events on the diagonal. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static double work(int units, long page)
{
    size_t len = (size_t)units * 8 * (size_t)page;
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    double acc = 0;
    if (m == MAP_FAILED)
        return 0;
    for (size_t off = 0; off < len; off += (size_t)page)
        m[off] = (unsigned char)off;
    for (long i = 0; i < (long)units * 40000; i++)
        acc += (double)(i % 7) * 0.5 + m[((size_t)i * 4096) % len];
    munmap(m, len);
    return acc;
}

static int units_of(int i)
{
    uint32_t h = (uint32_t)i * 2654435761u;
    h ^= h >> 15;
    /* Classes a factor 4 apart: on a loaded machine a task's CPU time
     * varies between runs by up to half, which let neighbours a factor 2
     * apart trade places (BC pairs by it) and put LGL's agreement on time
     * near half of random pairing's. */
    return 1 << (2 * (h % 4)); /* 1, 4, 16, 64 */
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 300;
    if (n < 1 || n > 100000) {
        fprintf(stderr, "fusion_e2e_prog: usage: fusion_e2e_prog [tasks 1..100000]\n");
        return 2;
    }
    long page = sysconf(_SC_PAGESIZE);
    double sum = 0;
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < n; i++) {
        int u = units_of(i);
#pragma omp task firstprivate(u) shared(sum)
        {
            double r = work(u, page);
#pragma omp atomic
            sum += r;
        }
    }
    printf("e2e checksum = %.6e\n", sum);
    return 0;
}
