/* The counter-descriptor registry (ompfuse/pfd.h): moved high, moved off a
 * number the program dup2()s onto, never closing a number that is not its
 * event.  Needs perf::TASK-CLOCK (a software event). */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ompfuse/pfd.h"

static int fails;
#define CHECK(c)                                                         \
    do {                                                                 \
        if (!(c)) {                                                      \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); \
            fails++;                                                     \
        }                                                                \
    } while (0)

static int task_clock(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
                        PERF_FLAG_FD_CLOEXEC);
}

static int is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

/* A program file with 5 bytes and its position at 2. */
static int program_file(const char *path)
{
    int f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (f < 0 || write(f, "abcde", 5) != 5 || lseek(f, 2, SEEK_SET) != 2)
        exit(2);
    return f;
}

int main(void)
{
    char path[] = "/tmp/ompf_pfd_test.XXXXXX";
    int tmp = mkstemp(path);
    if (tmp < 0)
        return 2;
    close(tmp);
    int raw = task_clock();
    if (raw < 0) {
        perror("perf_event_open(TASK-CLOCK)");
        return 2;
    }

    /* adopt: moved into the high range, registered, intact */
    int h = ompf_pfd_adopt(raw);
    CHECK(h >= ompf_fd_high() || h == raw);
    CHECK(ompf_pfd_fd(h) == h && ompf_pfd_owned(h) && ompf_pfd_intact(h));
    CHECK(h == raw || !is_open(raw));
    uint64_t v;
    CHECK(read(ompf_pfd_fd(h), &v, sizeof v) == (ssize_t)sizeof v);

    /* the dup2 wrapper's part: the counter leaves the number first */
    int f = program_file(path);
    CHECK(ompf_pfd_take(h) == 0);
    int moved = ompf_pfd_fd(h);
    CHECK(moved >= 3 && moved != h && ompf_pfd_owned(moved));
    CHECK(!ompf_pfd_owned(h));
    CHECK(dup2(f, h) == h); /* the program's file at the old number */
    CHECK(ompf_pfd_intact(h));
    CHECK(read(ompf_pfd_fd(h), &v, sizeof v) == (ssize_t)sizeof v);
    CHECK(ompf_pfd_release(h) == 1);
    CHECK(!is_open(moved));     /* the counter closed at its new number */
    CHECK(is_open(h));          /* the program's number left alone */
    CHECK(lseek(h, 0, SEEK_CUR) == 2);
    close(h);
    close(f);

    /* a number taken behind the registry's back (a raw dup2): found not
     * intact, and release closes nothing */
    h = ompf_pfd_adopt(task_clock());
    CHECK(h >= 0 && ompf_pfd_intact(h));
    f = program_file(path);
    CHECK(dup2(f, h) == h);
    CHECK(!ompf_pfd_intact(h));
    CHECK(ompf_pfd_release(h) == 0);
    CHECK(is_open(h) && lseek(h, 0, SEEK_CUR) == 2);
    CHECK(ompf_pfd_fd(h) == -1); /* released: no number to read */
    close(h);
    close(f);

    /* a lost handle (cannot be read) and an unregistered number */
    CHECK(ompf_pfd_adopt(-1) == -1);
    CHECK(!ompf_pfd_owned(0) && !ompf_pfd_owned(-1) &&
          !ompf_pfd_owned(OMPF_PFD_MAX));
    unsigned nm = 0, nl = 0;
    ompf_pfd_stats(&nm, &nl);
    CHECK(nm == 1 && nl == 0);
    unlink(path);
    if (fails)
        return 1;
    printf("pfd: ok\n");
    return 0;
}
