/* Opening an input file without ever blocking (see ompf_open_input in
 * file.h).  A FIFO opened for reading blocks in open(2) until a writer
 * comes, and a device can hand out endless bytes: both are refused after
 * a non-blocking open, before one byte is read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ompfuse/file.h"

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

int ompf_open_input(const char *path, const char *what, ompf_error_t *err)
{
    if (!path || !*path)
        return ompf_error_set(err, OMPF_EINVAL, "no input file named");
    if (!what)
        what = "file";
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0 && errno == ENOENT && !strcmp(path, "-"))
        /* "-" for standard input (or a misplaced "--csv -"): inputs are
         * read by name, as a reader may need to seek */
        return ompf_error_set(err, OMPF_EIO, "-: no such file; inputs are read from files, "
                              "not standard input: give the %s's path (output goes to "
                              "standard output unless -o OUT names a file)", what);
    if (fd < 0) {
        int e = errno;
        return ompf_error_set(err, e == EACCES ? OMPF_EPERM : OMPF_EIO, "%s: cannot open: %s",
                              path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        return ompf_error_set(err, OMPF_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return ompf_error_set(err, OMPF_EIO, "%s: not a regular file (%s); pass a %s", path,
                              kind_of(st.st_mode), what);
    }
    /* Regular files never block; clear the flag so that later reads behave
     * as usual (a network file system may still return EAGAIN otherwise). */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        int e = errno;
        close(fd);
        return ompf_error_set(err, OMPF_EIO, "%s: cannot open: %s", path, strerror(e));
    }
    return fd;
}

int ompf_fopen_input(const char *path, const char *what, FILE **fp, ompf_error_t *err)
{
    *fp = NULL;
    int fd = ompf_open_input(path, what, err);
    if (fd < 0)
        return fd;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
        return ompf_error_set(err, OMPF_ENOMEM, "%s: cannot open: %s", path, strerror(e));
    }
    *fp = f;
    return 0;
}
