/* The reader's id map (profile/fmt_idmap.c) against a sorted reference:
 * dense ids, the OMPT tool's per-thread ids, ids over many threads' ranges
 * (which must go to the hash rather than to thousands of tables), random
 * 64-bit ids, and a switch to the hash half-way.  put's "old", get of
 * present and absent ids, and set are checked after every pattern. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fmt.h"

typedef struct kv {
    uint64_t k;
    uint32_t v;
} kv_t;

static int cmp_kv(const void *a, const void *b)
{
    uint64_t x = ((const kv_t *)a)->k, y = ((const kv_t *)b)->k;
    return x < y ? -1 : x > y;
}

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Puts keys[0..n) with values 0..n-1 (a repeated key keeps its first
 * value, and put reports it), then checks everything against the
 * reference; want_hashed: whether the map must have left its tables. */
static void check_spread(const uint64_t *keys, size_t n, int want_hashed, unsigned spread)
{
    fmt_idmap_t m;
    memset(&m, 0, sizeof m);
    m.spread = spread;
    kv_t *ref = malloc(n * sizeof *ref);
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t old;
        assert_int_equal(fmt_idmap_put(&m, keys[i], (uint32_t)i, &old), 0);
        /* the reference: first value of each key */
        if (old == UINT32_MAX)
            ref[nr++] = (kv_t){keys[i], (uint32_t)i};
        else
            assert_int_equal(keys[old], keys[i]);
    }
    qsort(ref, nr, sizeof *ref, cmp_kv);
    for (size_t i = 1; i < nr; i++)
        assert_true(ref[i].k != ref[i - 1].k); /* put reported every repeat */
    assert_int_equal(m.n, nr);
    assert_int_equal(m.hashed, want_hashed);
    if (m.hashed)
        assert_true(m.slots == 0 && m.seg == NULL && m.seg0.dense == NULL);
    for (size_t i = 0; i < nr; i++) {
        assert_int_equal(fmt_idmap_get(&m, ref[i].k), ref[i].v);
        /* neighbours that are not keys are absent */
        uint64_t a = ref[i].k + 1;
        kv_t probe = {a, 0};
        if (!bsearch(&probe, ref, nr, sizeof *ref, cmp_kv))
            assert_int_equal(fmt_idmap_get(&m, a), UINT32_MAX);
    }
    assert_int_equal(fmt_idmap_get(&m, 0xfedcba9876543210ull), UINT32_MAX);
    for (size_t i = 0; i < nr; i += 3)
        fmt_idmap_set(&m, ref[i].k, ref[i].v + 7);
    for (size_t i = 0; i < nr; i++)
        assert_int_equal(fmt_idmap_get(&m, ref[i].k), ref[i].v + (i % 3 ? 0 : 7));
    fmt_idmap_set(&m, 0xfedcba9876543210ull, 5); /* absent: no effect */
    assert_int_equal(fmt_idmap_get(&m, 0xfedcba9876543210ull), UINT32_MAX);
    assert_int_equal(m.n, nr);
    fmt_idmap_free(&m);
    free(ref);
}

static void check(const uint64_t *keys, size_t n, int want_hashed)
{
    check_spread(keys, n, want_hashed, 0);
}

static void test_dense(void **state)
{
    (void)state;
    size_t n = 200000;
    uint64_t *k = malloc(n * sizeof *k), s = 1;
    for (size_t i = 0; i < n; i++)
        k[i] = 1 + i / 2 + rnd(&s) % 1000; /* near order, repeats */
    check(k, n, 0);
    free(k);
}

/* Four threads' ids, (t + 1) << 40 | sequence, interleaved. */
static void test_per_thread(void **state)
{
    (void)state;
    size_t n = 400000;
    uint64_t *k = malloc(n * sizeof *k), s = 2;
    uint64_t seq[4] = {0};
    for (size_t i = 0; i < n; i++) {
        unsigned t = (unsigned)(rnd(&s) % 4);
        k[i] = (uint64_t)(t + 1) << 40 | ++seq[t];
        if (i % 97 == 0 && i)
            k[i] = k[i - 1]; /* a repeat */
    }
    check(k, n, 0);
    free(k);
}

/* One id in each of 4,000 threads' ranges: the hash, not 4,000 tables. */
static void test_many_ranges(void **state)
{
    (void)state;
    size_t n = 4000;
    uint64_t *k = malloc(n * sizeof *k);
    for (size_t i = 0; i < n; i++)
        k[i] = (uint64_t)(i + 1) << 40 | 60000;
    check(k, n, 1);
    free(k);
}

static void test_random(void **state)
{
    (void)state;
    size_t n = 100000;
    uint64_t *k = malloc(n * sizeof *k), s = 3;
    for (size_t i = 0; i < n; i++)
        k[i] = i % 10 == 9 ? k[i - 5] : rnd(&s);
    check(k, n, 1);
    free(k);
}

/* Dense ids, per-thread ids, then one far beyond: everything moves to
 * the hash and is still found. */
static void test_switch(void **state)
{
    (void)state;
    size_t n = 300000;
    uint64_t *k = malloc(n * sizeof *k);
    for (size_t i = 0; i < n; i++)
        k[i] = i < 100000 ? i + 1 : i < 299999 ? (uint64_t)(1 + i % 3) << 40 | (i / 3) : ~0ull;
    check(k, n, 1);
    free(k);
}

/* Id 0, the first id of a thread's range (low bits 0), the last range
 * with a table (4095) and the first without (4096). */
static void test_edges(void **state)
{
    (void)state;
    uint64_t k[] = {0, 1, 2, 1ull << 40, 1ull << 40 | 1, 4095ull << 40, 4095ull << 40 | 3, 1};
    check(k, 8, 0);
    uint64_t h[] = {0, 1ull << 40, 4095ull << 40 | 3, 4096ull << 40 | 1, 2};
    check(h, 5, 1);
}

/* The reader's map of XU ids with parts: the tool's ids, one in six of a
 * thread's sequence, two threads, in near order.  Beyond the default 4
 * slots an entry (the hash), within a spread of 16 (tables). */
static void test_spread(void **state)
{
    (void)state;
    size_t n = 300000;
    uint64_t *k = malloc(n * sizeof *k), s = 4;
    for (size_t i = 0; i < n; i++)
        k[i] = (uint64_t)(i % 2 + 1) << 40 | (3 * i + 5 + rnd(&s) % 600);
    check_spread(k, n, 1, 0);
    check_spread(k, n, 0, 16);
    /* still the hash for ids 32 apart */
    for (size_t i = 0; i < n; i++)
        k[i] = 1ull << 40 | (32 * i + 1);
    check_spread(k, n, 1, 16);
    free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense),       cmocka_unit_test(test_per_thread),
        cmocka_unit_test(test_many_ranges), cmocka_unit_test(test_random),
        cmocka_unit_test(test_switch),      cmocka_unit_test(test_edges),
        cmocka_unit_test(test_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
