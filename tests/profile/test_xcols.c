/* fmt_xcols (the XUS chunk encoder fed a few rows at a time) against
 * fmt_enc_xus (all rows at once), table-driven: for each case of column
 * patterns, row counts and batch sizes the two payloads must be the same
 * bytes, and a second chunk through the same encoder (state reset) too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fmt.h"

typedef enum { P_CONST, P_CONST_AFTER_FIRST, P_ONE_CHANGE_LATE, P_STEP, P_RANDOM,
               P_NEGATIVE, P_HUGE } pattern_t;

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Field value of row i under pattern p (late: the row where a late
 * change happens). */
static uint64_t field(pattern_t p, size_t i, size_t late, uint64_t *s)
{
    switch (p) {
    case P_CONST: return 7;
    case P_CONST_AFTER_FIRST: return i == 0 ? 3 : 900;
    case P_ONE_CHANGE_LATE: return i == late ? 5 : 4;
    case P_STEP: return 1000 + 3 * i;
    case P_RANDOM: return rnd(s) % 100000;
    case P_NEGATIVE: return (uint64_t)(int64_t)-1 - (i % 3);
    case P_HUGE: return rnd(s);
    }
    return 0;
}

static void fill(ompf_xu_t *xu, double *val, uint64_t *prov, size_t n, uint32_t ne,
                 uint32_t np, pattern_t p, size_t late, uint64_t seed)
{
    uint64_t s = seed | 1;
    for (size_t i = 0; i < n; i++) {
        ompf_xu_t *x = &xu[i];
        memset(x, 0, sizeof *x);
        x->id = field(p == P_CONST ? P_STEP : p, i, late, &s);
        x->type = (uint32_t)field(p, i, late, &s);
        x->label = (uint32_t)field(p, i, late, &s);
        x->thread = (uint32_t)field(p, i, late, &s);
        x->team_thread = (uint32_t)(i % 2);
        x->team_size = (uint32_t)field(p, i, late, &s);
        x->parts = 1 + (uint32_t)(p == P_RANDOM ? i % 3 : 0);
        x->cpu = (int32_t)field(p, i, late, &s);
        x->core = p == P_NEGATIVE ? -1 : (int32_t)(i % 5);
        x->numa = -1;
        x->kind = (uint8_t)(field(p, i, late, &s) % 4);
        x->start_ns = field(p, i, late, &s);
        x->end_ns = x->start_ns + field(p, i, late, &s);
        x->iter_start = field(p, i, late, &s);
        x->iter_count = field(p, i, late, &s);
        for (uint32_t e = 0; e < ne; e++) {
            double v = (double)field(p, i, late, &s);
            if (e == 1 && i % 7 == 3)
                v = ompf_missing();
            if (e == 2)
                v = v / 3.0; /* fractions: raw doubles */
            val[i * ne + e] = v;
        }
        for (uint32_t k = 0; k < np; k++)
            prov[i * np + k] = i % 11 == k ? OMPF_NONE64 : field(p, i, late, &s);
    }
}

typedef struct xcase {
    size_t n, batch;
    uint32_t ne, np;
    pattern_t p;
    size_t late;
} xcase_t;

static const xcase_t cases[] = {
    {0, 4, 2, 1, P_STEP, 0},
    {1, 4, 2, 1, P_STEP, 0},
    {2, 1, 2, 1, P_CONST_AFTER_FIRST, 0},
    {3, 1, 1, 0, P_CONST, 0},
    {3, 2, 3, 2, P_CONST_AFTER_FIRST, 0},
    {100, 7, 3, 2, P_CONST, 0},
    {100, 7, 3, 2, P_CONST_AFTER_FIRST, 0},
    {100, 7, 3, 2, P_ONE_CHANGE_LATE, 99},   /* the last row differs */
    {100, 7, 3, 2, P_ONE_CHANGE_LATE, 1},    /* item 1 differs */
    {100, 7, 3, 2, P_ONE_CHANGE_LATE, 2},    /* item 2 differs */
    {100, 10, 3, 2, P_ONE_CHANGE_LATE, 70},  /* at a batch's first row */
    {5000, 4096, 3, 10, P_STEP, 0},
    {5000, 4096, 3, 10, P_RANDOM, 0},
    {5000, 333, 3, 10, P_NEGATIVE, 0},
    {5000, 4096, 4, 3, P_HUGE, 0},
    {9000, 4096, 0, 0, P_RANDOM, 0},
    {9000, 4096, 33, 0, P_ONE_CHANGE_LATE, 8192},
};

static void test_same_bytes(void **state)
{
    (void)state;
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        const xcase_t *c = &cases[t];
        size_t n = c->n ? c->n : 1;
        ompf_xu_t *xu = calloc(n, sizeof *xu);
        double *val = calloc(n * (c->ne ? c->ne : 1), sizeof *val);
        uint64_t *prov = calloc(n * (c->np ? c->np : 1), sizeof *prov);
        fmt_xu_row_t *rows = calloc(n, sizeof *rows);
        assert_non_null(xu);
        assert_non_null(rows);
        fill(xu, val, prov, c->n, c->ne, c->np, c->p, c->late, 0x9E3779B97F4A7C15ull + t);
        for (size_t i = 0; i < c->n; i++) {
            rows[i].xu = &xu[i];
            rows[i].cid = xu[i].type;
            rows[i].lid = xu[i].label;
            rows[i].values = c->ne ? val + i * c->ne : NULL;
            rows[i].prov = c->np ? prov + i * c->np : NULL;
        }
        fmt_buf_t want = {0}, got = {0};
        fmt_enc_xus(&want, rows, c->n, c->ne, c->np);
        fmt_xcols_t *xc = fmt_xcols_create(c->ne, c->np);
        assert_non_null(xc);
        for (int round = 0; round < 2; round++) { /* the same state reused */
            got.len = 0;
            for (size_t i = 0; i < c->n; i += c->batch) {
                size_t m = c->n - i < c->batch ? c->n - i : c->batch;
                assert_int_equal(fmt_xcols_add(xc, rows + i, m), 0);
            }
            assert_int_equal(fmt_xcols_finish(xc, &got), 0);
            if (got.len != want.len || memcmp(got.data, want.data, want.len))
                fail_msg("case %zu (n %zu, batch %zu, pattern %d), round %d: %zu bytes "
                         "against fmt_enc_xus's %zu", t, c->n, c->batch, (int)c->p, round,
                         got.len, want.len);
        }
        fmt_xcols_destroy(xc);
        fmt_buf_free(&want);
        fmt_buf_free(&got);
        free(xu);
        free(val);
        free(prov);
        free(rows);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_same_bytes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
