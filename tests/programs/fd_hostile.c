/* A program hostile to descriptors it did not open (tool_fd_* tests).
 *   fd_hostile MODE FILE [ROUNDS] [TASKS]
 * A team of two first runs 10 tasks (which starts a tool), then:
 *   close3   closes descriptors 3..1023, opens FILE (read-write, created)
 *   closeall closes every descriptor (0.. the soft limit), opens nothing
 *   dup2     opens FILE and dup2()s it onto every other open descriptor
 *            >= 3 (a tool's output among them)
 *   closefrom closefrom(3), then close_range(3, ~0U, 0); opens FILE
 *   sysclose closes 3..1023 by the close system call itself (no libc
 *            function a tool could wrap), opens FILE
 *   lost     closes 3..the soft limit and removes the file
 *            $OMPFUSE_OUTPUT.tmp.<pid> (a tool's temporary profile)
 *   scribble appends 4 MiB to $OMPFUSE_OUTPUT.tmp.<pid> at the end
 * then ROUNDS rounds (default 4) of `single` + TASKS tasks (default 50000)
 * each; after each round it appends one line to FILE (not in closeall and
 * lost).  At the end it reads FILE back, checks every byte and prints
 * "fd_hostile MODE file ok BYTES bytes" (or "file differs", exit 1).
 * XUs with N >= 2 threads: 10 + ROUNDS * TASKS tasks. */
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static double acc[64];

static void tasks(int n)
{
#pragma omp parallel num_threads(2)
#pragma omp single
    for (int i = 0; i < n; i++) {
#pragma omp task
        {
            /* atomic: the file's lines must not depend on the run */
#pragma omp atomic
            acc[i & 63] += 1.0;
        }
    }
}

static int soft_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur > 1 << 20)
        return 1 << 20;
    return (int)rl.rlim_cur;
}

static void close_range_(int lo, int hi)
{
    for (int fd = lo; fd < hi; fd++)
        close(fd);
}

/* The tool's temporary profile: $OMPFUSE_OUTPUT.tmp.<pid>; removed, or
 * 4 MiB appended. */
static void hit_tmp(int remove)
{
    const char *out = getenv("OMPFUSE_OUTPUT");
    if (!out)
        return;
    char path[4200];
    snprintf(path, sizeof path, "%s.tmp.%ld", out, (long)getpid());
    if (remove) {
        unlink(path);
        return;
    }
    int fd = open(path, O_WRONLY | O_APPEND);
    static char junk[4 << 20]; /* more than the tool's last flush */
    if (fd >= 0 && write(fd, junk, sizeof junk) > 0)
        close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: fd_hostile MODE FILE [ROUNDS] [TASKS]\n");
        return 2;
    }
    const char *mode = argv[1], *file = argv[2];
    int rounds = argc > 3 ? atoi(argv[3]) : 4;
    int ntasks = argc > 4 ? atoi(argv[4]) : 50000;
    tasks(10);
    int fd = -1;
    if (!strcmp(mode, "close3")) {
        close_range_(3, 1024);
        fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
    } else if (!strcmp(mode, "closefrom")) {
        closefrom(3);
        close_range(3, ~0U, 0);
        fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
    } else if (!strcmp(mode, "sysclose")) {
        for (int d = 3; d < 1024; d++)
            syscall(SYS_close, d);
        fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
    } else if (!strcmp(mode, "closeall")) {
        close_range_(0, soft_limit());
    } else if (!strcmp(mode, "dup2")) {
        fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
        for (int d = 3; d < soft_limit() && d < 65536; d++)
            if (d != fd && fcntl(d, F_GETFD) != -1)
                dup2(fd, d);
    } else if (!strcmp(mode, "lost")) {
        close_range_(3, soft_limit());
        hit_tmp(1);
    } else if (strcmp(mode, "scribble")) {
        fprintf(stderr, "fd_hostile: unknown mode %s\n", mode);
        return 2;
    }
    char expect[1 << 16];
    size_t len = 0;
    for (int r = 0; r < rounds; r++) {
        tasks(ntasks);
        if (fd < 0)
            continue;
        char line[128];
        int n = snprintf(line, sizeof line, "round %d: %d tasks, acc[0] = %.1f\n", r, ntasks,
                         acc[0]);
        if (write(fd, line, (size_t)n) != n || len + (size_t)n > sizeof expect)
            return 1;
        memcpy(expect + len, line, (size_t)n);
        len += (size_t)n;
    }
    if (!strcmp(mode, "scribble"))
        hit_tmp(0);
    if (fd < 0)
        return 0;
    char back[sizeof expect + 1];
    ssize_t got = pread(fd, back, sizeof back, 0);
    int ok = got == (ssize_t)len && memcmp(back, expect, len) == 0;
    printf("fd_hostile %s file %s %zd bytes\n", mode, ok ? "ok" : "differs", got);
    return ok ? 0 : 1;
}
