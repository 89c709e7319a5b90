/* JSON output helpers (see jsonw.h). */
#include <math.h>
#include <stdlib.h>

#include "jsonw.h"
#include "ompfuse/text.h"

void ompf_jw_u64(FILE *f, uint64_t v)
{
    char b[24], *e = b + sizeof b, *s = e;
    do
        *--s = (char)('0' + v % 10);
    while (v /= 10);
    fwrite_unlocked(s, 1, (size_t)(e - s), f);
}

void ompf_jw_num(FILE *f, double v)
{
    if (ompf_is_missing(v) || !isfinite(v)) {
        fputs_unlocked("null", f);
    } else if (v >= -9.2e18 && v <= 9.2e18 && v == (double)(long long)v &&
               !(v == 0 && signbit(v))) {
        if (v < 0)
            putc_unlocked('-', f);
        ompf_jw_u64(f, (uint64_t)llabs((long long)v));
    } else {
        fprintf(f, "%.17g", v);
    }
}

void ompf_jw_us(FILE *f, uint64_t ns)
{
    ompf_jw_u64(f, ns / 1000);
    unsigned r = (unsigned)(ns % 1000);
    char b[4] = {'.', (char)('0' + r / 100), (char)('0' + r / 10 % 10), (char)('0' + r % 10)};
    fwrite_unlocked(b, 1, 4, f);
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

