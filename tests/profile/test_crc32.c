/* fmt_crc32 (profile/crc32.c, carry-less multiplication where the CPU has
 * it) equals zlib's crc32: every length up to 2100 bytes at every
 * alignment mod 16, chained from any value, and a buffer of 1 MiB. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#include <cmocka.h>

#include "fmt.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_equals_zlib(void **state)
{
    (void)state;
    enum { MAX = 2100, BIG = 1 << 20 };
    unsigned char *b = malloc(BIG + 16);
    assert_non_null(b);
    uint64_t seed = 12345;
    for (size_t i = 0; i < BIG + 16; i++)
        b[i] = (unsigned char)rnd(&seed);
    for (size_t n = 0; n <= MAX; n++)
        for (size_t off = 0; off < 16; off++) {
            uint32_t init = off == 0 ? 0 : (uint32_t)rnd(&seed);
            uint32_t want = (uint32_t)crc32(init, b + off, (uInt)n);
            assert_int_equal(fmt_crc32(init, b + off, n), want);
        }
    /* chained: two pieces give the whole's */
    for (int k = 0; k < 200; k++) {
        size_t n = rnd(&seed) % MAX, cut = n ? rnd(&seed) % n : 0;
        uint32_t whole = fmt_crc32(0, b, n);
        assert_int_equal(fmt_crc32(fmt_crc32(0, b, cut), b + cut, n - cut), whole);
    }
    assert_int_equal(fmt_crc32(0, b + 3, BIG), (uint32_t)crc32(0, b + 3, BIG));
    assert_int_equal(fmt_crc32(7, NULL, 0), 7);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equals_zlib),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
