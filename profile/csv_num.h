/* Number parsers of CSV import (csv_num.c), private to libompfprofile. */
#ifndef OMPF_CSV_NUM_H
#define OMPF_CSV_NUM_H

#include <stdint.h>

/* A count: decimal digits only, at most max.  0; -1 not digits (sign,
 * hex, fraction, exponent, blank); -2 above max or 2^64-1. */
int ompf__csv_u64(const char *s, uint64_t max, uint64_t *out);
/* A signed 32-bit integer (the cpu column). 0 or -1. */
int ompf__csv_i32(const char *s, int32_t *out);
/* An event value; empty = missing.  0; -1 syntax; -2 integer above
 * 2^64-1; -3 negative integer a double cannot hold exactly; -4 beyond a
 * double's range.  *exact: a count a double cannot hold (its nearest
 * double in *out), else 0. */
int ompf__csv_value(const char *s, double *out, uint64_t *exact);

#endif
