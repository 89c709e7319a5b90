/* Text helpers of the model and plan parsers: trimming, and reading a
 * whole small text file (refusing binary data). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/file.h"
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
    size_t len;
    int rc = ompf_read_input(path, max, what, out, &len, err);
    if (rc == OMPF_ERANGE)
        return OMPF_EFORMAT;
    if (rc)
        return rc;
    if (strlen(*out) != len) {
        free(*out);
        *out = NULL;
        return ompf_error_set(err, OMPF_EFORMAT,
                              "%s: not a %s (binary data); give text lines",
                              path, what);
    }
    return 0;
}
