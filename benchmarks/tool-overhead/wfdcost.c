/* Cost of the writer's descriptor guard (profile/wfd.c): the fstat that
 * checks (st_dev, st_ino) before every write, against the 1 MiB write it
 * guards (what a stream flush appends).  Usage: tool_wfdcost [DIR]
 * (default /tmp); prints best / median of 7 batches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wfd.h"

enum { BATCHES = 7 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, double *per)
{
    qsort(per, BATCHES, sizeof *per, cmp);
    printf("%s: %.0f / %.0f ns, best / median\n", what, per[0], per[BATCHES / 2]);
}

int main(int argc, char **argv)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ompf-wfdcost.%ld", argc > 1 ? argv[1] : "/tmp",
             (long)getpid());
    fmt_wfd_t f;
    if (fmt_wfd_create(&f, path) != 0) {
        perror(path);
        return 1;
    }
    enum { N = 200000, MIB = 1 << 20, WRITES = 16 };
    double per[BATCHES];
    struct stat st;
    for (int k = 0; k < BATCHES; k++) {
        double a = now();
        for (int i = 0; i < N; i++)
            fstat(f.fd, &st);
        per[k] = (now() - a) / N;
    }
    report("fstat (the check, once per write)", per);
    char *buf = malloc(MIB);
    if (!buf)
        return 1;
    memset(buf, 0x5a, MIB);
    /* the file grows once (warm-up), then both variants rewrite the same
     * 16 MiB in the page cache, alternating batch by batch */
    for (int i = 0; i < WRITES; i++)
        if (pwrite(f.fd, buf, MIB, (off_t)i * MIB) != MIB)
            return 1;
    double plain[BATCHES];
    for (int k = 0; k < BATCHES; k++) {
        f.off = 0;
        double a = now();
        for (int i = 0; i < WRITES; i++)
            if (fmt_wfd_write(&f, buf, MIB) != 0)
                return 1;
        per[k] = (now() - a) / WRITES;
        a = now();
        for (int i = 0; i < WRITES; i++)
            if (pwrite(f.fd, buf, MIB, (off_t)i * MIB) != MIB)
                return 1;
        plain[k] = (now() - a) / WRITES;
    }
    report("guarded 1 MiB write (check + pwrite)", per);
    report("plain 1 MiB pwrite", plain);
    fmt_wfd_close(&f);
    unlink(path);
    free(buf);
    return 0;
}
