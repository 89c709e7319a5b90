/* Numbers of CSV import (see csv_num.h), read exactly: integers never go
 * through a double, and no syntax export does not write is accepted. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv_num.h"
#include "ompfuse/profile.h"
#include "profile_internal.h"

/* A count: decimal digits only, parsed exactly (never through double).
 * -1: not digits (sign, hex, fraction, exponent, blank); -2: above
 * 2^64-1. */
int ompf__csv_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -2;
        v = v * 10 + d;
    }
    if (*s)
        return -1;
    if (v > max)
        return -2;
    *out = v;
    return 0;
}

int ompf__csv_i32(const char *s, int32_t *out)
{
    if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
        return -1;
    errno = 0;
    char *e;
    long long v = strtoll(s, &e, 10);
    if (*e || errno || v < INT32_MIN || v > INT32_MAX)
        return -1;
    *out = (int32_t)v;
    return 0;
}

/* An event value: empty (missing), or a decimal number as export writes
 * it: [-]digits[.digits][e[+-]digits], or [-]inf.  No hex, nan (NaN is
 * how a profile stores "missing": a 'nan' cell would come back as an empty
 * one), blanks or '+'.  An integer is read exactly: a count up to 2^64-1
 * that a value (a 64-bit float) cannot hold goes to *exact (the profile's
 * exact counts), a negative one is refused rather than rounded.
 * Returns 0, -1 (syntax), -2 (integer above 2^64-1), -3 (negative integer
 * not exact as a value), -4 (beyond the range of a double). */
int ompf__csv_value(const char *s, double *out, uint64_t *exact)
{
    *exact = 0;
    if (!*s) {
        *out = OMPF_MISSING;
        return 0;
    }
    const char *q = s + (*s == '-');
    if (!strcmp(q, "inf")) {
        *out = *s == '-' ? -HUGE_VAL : HUGE_VAL;
        return 0;
    }
    size_t digits = strspn(q, "0123456789");
    if (!digits)
        return -1;
    if (!q[digits]) {
        uint64_t u;
        int rc = ompf__csv_u64(q, UINT64_MAX, &u);
        if (rc)
            return rc;
        double d = (double)u;
        if (!ompf__double_exact(u)) {
            if (*s == '-')
                return -3;
            *exact = u;
        }
        *out = *s == '-' ? -d : d;
        return 0;
    }
    const char *t = q + digits;
    if (*t == '.') {
        size_t f = strspn(t + 1, "0123456789");
        if (!f)
            return -1;
        t += 1 + f;
    }
    if (*t == 'e' || *t == 'E') {
        t++;
        if (*t == '+' || *t == '-')
            t++;
        size_t x = strspn(t, "0123456789");
        if (!x)
            return -1;
        t += x;
    }
    if (*t)
        return -1;
    errno = 0;
    double v = strtod(s, NULL);
    if (errno == ERANGE && (v > 1 || v < -1))
        return -4;
    *out = v;
    return 0;
}
