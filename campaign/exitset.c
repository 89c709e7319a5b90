/*
 * The program's normal exit codes (--exit-code): a set of 0-255, written
 * "0", "0,3", "1-9,20" or "any".  The empty set is the default, {0}, so a
 * zeroed options struct means what it always meant.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/campaign.h"
#include "ompfuse/profile.h"

static int only_default(const ompf_exit_set_t *s)
{
    return !s || !(s->bits[0] | s->bits[1] | s->bits[2] | s->bits[3]);
}

int ompf_exit_set_has(const ompf_exit_set_t *s, int code)
{
    if (code < 0 || code > 255)
        return 0;
    if (only_default(s))
        return code == 0;
    return (int)((s->bits[code >> 6] >> (code & 63)) & 1u);
}

int ompf_exit_set_is_default(const ompf_exit_set_t *s)
{
    return only_default(s) || (s->bits[0] == 1 && !(s->bits[1] | s->bits[2] | s->bits[3]));
}

static void add_range(ompf_exit_set_t *s, long a, long b)
{
    for (long c = a; c <= b; c++)
        s->bits[c >> 6] |= 1ull << (c & 63);
}

static int code_at(const char *p, char **end, long *v)
{
    if (*p < '0' || *p > '9')
        return -1;
    *v = strtol(p, end, 10);
    return *v > 255 ? -1 : 0;
}

int ompf_exit_set_parse(const char *text, ompf_exit_set_t *s)
{
    ompf_exit_set_t r;
    memset(&r, 0, sizeof r);
    if (!text || !*text)
        return OMPF_EINVAL;
    if (!strcmp(text, "any")) {
        add_range(&r, 0, 255);
        *s = r;
        return 0;
    }
    const char *p = text;
    for (;;) {
        char *end;
        long a, b;
        if (code_at(p, &end, &a))
            return OMPF_EINVAL;
        b = a;
        if (*end == '-') {
            if (code_at(end + 1, &end, &b) || b < a)
                return OMPF_EINVAL;
        }
        add_range(&r, a, b);
        if (*end == '\0')
            break;
        if (*end != ',')
            return OMPF_EINVAL;
        p = end + 1;
    }
    *s = r;
    return 0;
}

void ompf_exit_set_hint(const ompf_exit_set_t *given, int code, char *buf, size_t n)
{
    ompf_exit_set_t with;
    memset(&with, 0, sizeof with);
    if (!ompf_exit_set_is_default(given))
        with = *given;
    if (code >= 0 && code <= 255)
        with.bits[code >> 6] |= 1ull << (code & 63);
    char set[1024];
    ompf_exit_set_format(&with, set, sizeof set);
    snprintf(buf, n, "if %d is how it normally ends, give --exit-code %s (a list such as "
                     "0-3, or any, when it varies)", code, set);
}

void ompf_exit_set_format(const ompf_exit_set_t *s, char *buf, size_t n)
{
    size_t len = 0;
    int members = 0;
    if (!n)
        return;
    buf[0] = '\0';
    for (int c = 0; c < 256; c++)
        members += ompf_exit_set_has(s, c);
    if (members == 256) {
        snprintf(buf, n, "any");
        return;
    }
    for (int c = 0; c < 256 && len < n; c++) {
        if (!ompf_exit_set_has(s, c))
            continue;
        int e = c;
        while (e < 255 && ompf_exit_set_has(s, e + 1))
            e++;
        const char *sep = len ? "," : "";
        if (e > c + 1)
            len += (size_t)snprintf(buf + len, n - len, "%s%d-%d", sep, c, e);
        else if (e == c + 1)
            len += (size_t)snprintf(buf + len, n - len, "%s%d,%d", sep, c, e);
        else
            len += (size_t)snprintf(buf + len, n - len, "%s%d", sep, c);
        c = e;
    }
}
