/* Writing varints and values through a local pointer, for the column
 * encoders (fmt_codec.c, fmt_xcols.c): internal to profile/. */
#ifndef OMPF_FMT_PUT_H
#define OMPF_FMT_PUT_H

#include <math.h>
#include <string.h>

#include "fmt.h"

/* Value codec: varint u, tag = u & 3.
 *   0: integer, value = unzigzag(u >> 2)     (exact integers |v| <= 2^53)
 *   1: missing (u == 1)
 *   2: 8 raw little-endian IEEE-754 bytes follow (fractions, -0, inf, NaN)
 * Counter values are mostly small integers: 1-5 bytes instead of 8. */
#define FMT_VAL_INT 0u
#define FMT_VAL_MISSING 1u
#define FMT_VAL_RAW 2u
#define FMT_INT_LIMIT 9007199254740992.0 /* 2^53 */

/* The column encoders below reserve the worst case once (a varint takes at
 * most 10 bytes, a value 9) and then write through a local pointer: no
 * capacity check per varint, and the compiler need not reload the buffer's
 * length after every byte it stores. */
#define UV_MAX 10u

/* An item of a mode column as stored: zigzag when the column is signed
 * (fmt_codec.c MCOL, fmt_xcols.c). */
#define MCOL_ITEM_(SIGNED, X) ((SIGNED) ? fmt_zz((int64_t)(X)) : (uint64_t)(X))

static inline unsigned char *put_uv(unsigned char *o, uint64_t v)
{
    /* one and two bytes without a loop: the stream's times are mostly
     * these (a loop's exit per item costs more than two compares) */
    if (v < 0x80) {
        *o = (unsigned char)v;
        return o + 1;
    }
    if (v < 0x4000) {
        o[0] = (unsigned char)(v | 0x80);
        o[1] = (unsigned char)(v >> 7);
        return o + 2;
    }
    while (v >= 0x80) {
        *o++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *o++ = (unsigned char)v;
    return o;
}

static inline unsigned char *put_value(unsigned char *o, double v)
{
    if (v >= -FMT_INT_LIMIT && v <= FMT_INT_LIMIT && v == (double)(int64_t)v &&
        !(v == 0 && signbit(v)))
        return put_uv(o, fmt_zz((int64_t)v) << 2 | FMT_VAL_INT);
    if (ompf_is_missing(v)) {
        *o++ = FMT_VAL_MISSING;
        return o;
    }
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    *o++ = FMT_VAL_RAW;
    fmt_put_u64(o, bits);
    return o + 8;
}

#endif
