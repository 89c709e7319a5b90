/* Text helpers of the model and plan parsers: trimming, and reading a
 * whole small text file (refusing binary data). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

char *sim_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

int sim_read_text(const char *path, const char *what, size_t max,
                  char **out, ompf_error_t *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ompf_error_set(err, OMPF_EIO, "%s: cannot open %s: %s", path,
                              what, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (len + 1 >= cap) {
            char *nb = cap >= max ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (!got)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return ompf_error_set(err, OMPF_EIO,
                              "%s: cannot read %s (larger than %zu bytes, "
                              "or an I/O error)",
                              path, what, max);
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        free(buf);
        return ompf_error_set(err, OMPF_EFORMAT,
                              "%s: not a %s (binary data); give text lines",
                              path, what);
    }
    *out = buf;
    return 0;
}
