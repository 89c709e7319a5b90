/* A write descriptor the observed program cannot take over (wfd.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wfd.h"
#include "ompfuse/pfd.h"

/* Moves fd to >= min (closing the original); keeps it where it is when
 * no high number is free. */
static int move_high(int fd, int min)
{
    if (fd >= min)
        return fd;
    int h = fcntl(fd, F_DUPFD_CLOEXEC, min);
    if (h < 0)
        return fd;
    close(fd);
    return h;
}

static int same_file(int fd, const fmt_wfd_t *f)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
}

int fmt_wfd_create(fmt_wfd_t *f, char *path)
{
    f->path = path;
    f->fd = -1;
    f->off = 0;
    f->reopens = 0;
    f->lost = 0;
    f->min_fd = ompf_fd_high();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    fd = move_high(fd, f->min_fd);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->fd = fd;
    return 0;
}

int fmt_wfd_get(fmt_wfd_t *f)
{
    if (f->lost) {
        errno = f->lost;
        return -1;
    }
    if (f->fd >= 0 && same_file(f->fd, f))
        return f->fd;
    /* Closed, or now the program's: forget the number, never touch it. */
    f->fd = -1;
    int fd = open(f->path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        f->lost = errno ? errno : EIO;
        return -1;
    }
    fd = move_high(fd, f->min_fd);
    if (!same_file(fd, f)) { /* removed and recreated by someone else */
        close(fd);
        f->lost = ESTALE;
        errno = ESTALE;
        return -1;
    }
    f->fd = fd;
    f->reopens++;
    return fd;
}

int fmt_wfd_write(fmt_wfd_t *f, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        int fd = fmt_wfd_get(f);
        if (fd < 0)
            return -1;
        ssize_t w = pwrite(fd, c, n, (off_t)f->off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (w == 0) { /* no progress on a regular file: give up */
            errno = EIO;
            return -1;
        }
        c += w;
        n -= (size_t)w;
        f->off += (uint64_t)w;
    }
    return 0;
}

int fmt_wfd_sync(fmt_wfd_t *f)
{
    int fd = fmt_wfd_get(f);
    return fd < 0 ? -1 : fsync(fd);
}

int fmt_wfd_close(fmt_wfd_t *f)
{
    int fd = f->fd;
    f->fd = -1;
    if (fd < 0 || !same_file(fd, f))
        return 0;
    return close(fd);
}
