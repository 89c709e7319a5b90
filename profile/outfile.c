/* Output files written atomically: "<path>.tmp.<pid>" in the same
 * directory, renamed over path on commit, so that a reader never sees a
 * half-written file.  "-" writes to stdout; a device, FIFO or socket is
 * written directly (ompf_output_is_special). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ompfuse/file.h"

#define OUTFILE_BUF ((size_t)1 << 20)

struct ompf_outfile {
    FILE *fp;
    char *path, *tmp; /* both NULL for stdout and for a special file */
    int direct;       /* a special file: fp is ours to close */
    char *buf;        /* fp's buffer (a temporary file's), freed after fclose */
};

int ompf_output_is_special(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

int ompf_outfile_open(const char *path, ompf_outfile_t **out, FILE **fp, ompf_error_t *err)
{
    if (!path || !*path || !out || !fp)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_outfile_open: no path");
    *out = NULL;
    *fp = NULL;
    ompf_outfile_t *o = calloc(1, sizeof *o);
    if (!o)
        return ompf_error_set(err, OMPF_ENOMEM, "%s: out of memory", path);
    if (!strcmp(path, "-")) {
        o->fp = stdout;
    } else if (ompf_output_is_special(path)) {
        o->direct = 1;
        o->fp = fopen(path, "w");
        if (!o->fp) {
            int e = errno;
            free(o);
            return ompf_error_set(err, e == EACCES ? OMPF_EPERM : OMPF_EIO,
                                  "%s: cannot open for writing: %s", path, strerror(e));
        }
    } else {
        size_t n = strlen(path) + 32;
        o->path = strdup(path);
        o->tmp = malloc(n);
        if (!o->path || !o->tmp) {
            ompf_outfile_abort(o);
            return ompf_error_set(err, OMPF_ENOMEM, "%s: out of memory", path);
        }
        snprintf(o->tmp, n, "%s.tmp.%ld", path, (long)getpid());
        o->fp = fopen(o->tmp, "w");
        if (!o->fp) {
            int e = errno;
            int rc = ompf_error_set(err, e == EACCES ? OMPF_EPERM : OMPF_EIO,
                                    "%s: cannot create: %s; check that the directory exists "
                                    "and is writable", path, strerror(e));
            ompf_outfile_abort(o);
            return rc;
        }
    }
    /* Exports write gigabytes (a Perfetto trace of 1.8 million tasks is
     * 2.8 GB): 1 MB writes instead of stdio's 4 KB.  glibc ignores the
     * size when setvbuf is given no buffer. */
    if (o->tmp && (o->buf = malloc(OUTFILE_BUF)))
        setvbuf(o->fp, o->buf, _IOFBF, OUTFILE_BUF);
    *out = o;
    *fp = o->fp;
    return 0;
}

int ompf_outfile_commit(ompf_outfile_t *o, ompf_error_t *err)
{
    if (!o)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_outfile_commit: no file");
    int rc = 0;
    if (!o->tmp) {
        int bad = fflush(o->fp) || ferror(o->fp);
        int e = errno;
        if (o->direct && fclose(o->fp) && !bad) {
            bad = 1;
            e = errno;
        }
        if (bad)
            rc = ompf_error_set(err, OMPF_EIO, "%s: write failed: %s",
                                o->direct ? "output device" : "standard output", strerror(e));
        free(o);
        return rc;
    }
    int bad = ferror(o->fp);
    int e = errno;
    if (fclose(o->fp) && !bad) {
        bad = 1;
        e = errno;
    }
    o->fp = NULL;
    free(o->buf);
    if (bad)
        rc = ompf_error_set(err, OMPF_EIO, "%s: write failed: %s; check free disk space",
                            o->tmp, strerror(e));
    else if (rename(o->tmp, o->path))
        rc = ompf_error_set(err, OMPF_EIO, "%s: cannot rename to %s: %s", o->tmp, o->path,
                            strerror(errno));
    if (rc)
        unlink(o->tmp);
    free(o->path);
    free(o->tmp);
    free(o);
    return rc;
}

void ompf_outfile_abort(ompf_outfile_t *o)
{
    if (!o)
        return;
    if (o->tmp) {
        if (o->fp)
            fclose(o->fp);
        free(o->buf);
        unlink(o->tmp);
    } else if (o->fp) {
        if (o->direct)
            fclose(o->fp);
        else
            fflush(o->fp);
    }
    free(o->path);
    free(o->tmp);
    free(o);
}
