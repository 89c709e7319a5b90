/* Reading a small input file whole (see ompf_read_file in file.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/file.h"

/* Reads f to its end; errno tells a read error. */
static int slurp(FILE *f, size_t max, char **data, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : OMPF_ENOMEM;
    while (!rc) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                rc = OMPF_ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (n > max)
            rc = OMPF_ERANGE;
        else if (got == 0)
            break;
    }
    int e = errno;
    if (!rc && ferror(f))
        rc = OMPF_EIO;
    if (rc) {
        free(buf);
        errno = e;
        return rc;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

int ompf_read_input(const char *path, size_t max, const char *what, char **data,
                    size_t *len, ompf_error_t *err)
{
    *data = NULL;
    size_t n = 0;
    if (len)
        *len = 0;
    FILE *f;
    int rc = ompf_fopen_input(path, what, &f, err);
    if (rc)
        return rc;
    rc = slurp(f, max, data, &n);
    int e = errno;
    fclose(f);
    errno = e;
    if (rc == OMPF_ENOMEM)
        return ompf_error_set(err, rc, "%s: out of memory reading it", path);
    if (rc == OMPF_ERANGE)
        return ompf_error_set(err, rc, "%s: larger than %zu bytes; not a %s", path, max,
                              what ? what : "file");
    if (rc)
        return ompf_error_set(err, rc, "%s: cannot read: %s", path, strerror(e));
    if (len)
        *len = n;
    return 0;
}

int ompf_read_file(const char *path, size_t max, char **data, size_t *len)
{
    return ompf_read_input(path, max, NULL, data, len, NULL);
}
