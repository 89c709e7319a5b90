/* Reading a small input file whole (see ompf_read_file in file.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "ompfuse/file.h"

int ompf_read_file(const char *path, size_t max, char **data, size_t *len)
{
    *data = NULL;
    if (len)
        *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return OMPF_EIO;
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
    fclose(f);
    if (rc) {
        free(buf);
        errno = e;
        return rc;
    }
    buf[n] = '\0';
    *data = buf;
    if (len)
        *len = n;
    return 0;
}
