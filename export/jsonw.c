/* JSON output helpers (see jsonw.h). */
#include <math.h>
#include <stdlib.h>

#include "jsonw.h"

void ompf_jw_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    putc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            putc('\\', f);
            putc(*c, f);
        } else if (*c < 0x20) {
            /* control characters (argv's \x1f separator among them) */
            fprintf(f, "\\u%04x", *c);
        } else {
            putc(*c, f);
        }
    }
    putc('"', f);
}

void ompf_jw_num(FILE *f, double v)
{
    if (ompf_is_missing(v) || !isfinite(v))
        fputs("null", f);
    else if (v >= -9.2e18 && v <= 9.2e18 && v == (double)(long long)v && !(v == 0 && signbit(v)))
        fprintf(f, "%lld", (long long)v);
    else
        fprintf(f, "%.17g", v);
}

void ompf_jw_us(FILE *f, uint64_t ns)
{
    fprintf(f, "%llu.%03u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000));
}

const char *ompf_jw_label(ompf_jw_label_t *l, const ompf_profile_t *p, uint32_t node)
{
    size_t need = ompf_label_format(p, node, l->buf, l->cap);
    if (need >= l->cap) {
        char *b = realloc(l->buf, need + 64);
        if (!b)
            return NULL;
        l->buf = b;
        l->cap = need + 64;
        ompf_label_format(p, node, l->buf, l->cap);
    }
    return l->buf;
}

void ompf_jw_label_free(ompf_jw_label_t *l)
{
    free(l->buf);
    l->buf = NULL;
    l->cap = 0;
}
