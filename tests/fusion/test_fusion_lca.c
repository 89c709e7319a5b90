/* fz_lca, the common prefix of two union labels by jump pointers, against
 * ompf_label_common's walk up both parent chains: table-driven over trie
 * shapes (a chain of 5000 levels, a binary task tree like fib's, a random
 * recursive tree, a broad shallow one, a single node) and pairs that
 * cover equal nodes, the root, ancestor and descendant, and nodes at very
 * different depths; and the walk fz_lca falls back to, for labels out of
 * range and without the table (a trie not in parent-first order, which
 * ompf_label_child cannot build); and fz_label_before, the label order of
 * CTC's ties, against ompf_label_dfs_rank. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fz.h"
#include "fzt.h"


typedef enum {
    T_CHAIN,   /* node i's parent is i - 1 (one long path) */
    T_BINARY,  /* node i's parent is (i - 1) / 2 */
    T_RANDOM,  /* parent uniform among the earlier nodes */
    T_BROAD,   /* parent among the first 10 nodes */
    T_DEEPISH, /* parent among the last 3 nodes: long paths that branch */
    T_ROOT,    /* the root alone */
} shape_t;

/* comp: component of node i (0: i itself, so siblings come in node
 * order; else random, unique) */
static ompf_profile_t *make_trie_comp(shape_t shape, size_t n, uint64_t *s, int random_comp);
static ompf_profile_t *make_trie(shape_t shape, size_t n, uint64_t *s)
{
    return make_trie_comp(shape, n, s, 0);
}
static ompf_profile_t *make_trie_comp(shape_t shape, size_t n, uint64_t *s, int random_comp)
{
    ompf_profile_t *p = NULL;
    assert_int_equal(ompf_profile_create(&p), 0);
    for (size_t i = 1; i < n; i++) {
        uint32_t parent = 0;
        switch (shape) {
        case T_CHAIN: parent = (uint32_t)(i - 1); break;
        case T_BINARY: parent = (uint32_t)((i - 1) / 2); break;
        case T_RANDOM: parent = (uint32_t)(fzt_rand(s) % i); break;
        case T_BROAD: parent = (uint32_t)(fzt_rand(s) % (i < 10 ? i : 10)); break;
        case T_DEEPISH: parent = (uint32_t)(i - 1 - fzt_rand(s) % (i < 3 ? i : 3)); break;
        case T_ROOT: break;
        }
        uint32_t node;
        uint64_t comp = random_comp ? (fzt_rand(s) % 1000) << 32 | i : i;
        assert_int_equal(ompf_label_child(p, parent, comp, &node), 0);
        assert_int_equal(node, i);
    }
    return p;
}

static void check_pair(const fz_ctx_t *c, uint32_t x, uint32_t y, int shape)
{
    uint32_t want = ompf_label_common(c->ut, x, y), got = fz_lca(c, x, y);
    if (got != want)
        fail_msg("shape %d: lca(%u, %u) = %u, expected %u", shape, x, y, got, want);
}

static void test_table(void **state)
{
    (void)state;
    static const struct {
        shape_t shape;
        size_t n;
    } cases[] = {{T_CHAIN, 5000}, {T_BINARY, 1}, {T_BINARY, 2}, {T_BINARY, 100000},
                 {T_RANDOM, 100000}, {T_BROAD, 20000}, {T_DEEPISH, 30000}, {T_ROOT, 1}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        uint64_t s = 0x5eed + k;
        fz_ctx_t c;
        memset(&c, 0, sizeof c);
        ompf_profile_t *p = make_trie(cases[k].shape, cases[k].n, &s);
        c.ut = p;
        assert_int_equal(fz_lca_build(&c), 0);
        assert_non_null(c.anc);
        uint32_t n = (uint32_t)cases[k].n;
        for (int i = 0; i < 20000; i++) {
            uint32_t x = (uint32_t)(fzt_rand(&s) % n), y = (uint32_t)(fzt_rand(&s) % n);
            check_pair(&c, x, y, cases[k].shape);
            check_pair(&c, x, x, cases[k].shape);
            check_pair(&c, 0, x, cases[k].shape);
            check_pair(&c, x, 0, cases[k].shape);
            /* an ancestor of x, from a few levels up to the root */
            uint32_t a = x;
            for (uint64_t up = fzt_rand(&s) % 64; up-- && a;)
                a = ompf_label_parent(p, a);
            check_pair(&c, a, x, cases[k].shape);
            check_pair(&c, x, a, cases[k].shape);
            /* the deepest and the newest nodes against anything */
            check_pair(&c, n - 1, x, cases[k].shape);
        }
        /* out of range: the walk's answer (none) */
        assert_int_equal(fz_lca(&c, n, 0), OMPF_NONE32);
        /* without the table: the walk */
        fz_lca_free(&c);
        check_pair(&c, n - 1, n / 2, cases[k].shape);
        ompf_profile_destroy(p);
    }
}

/* Every pair of every small trie of each shape, 1 to 70 nodes. */
static void test_all_pairs(void **state)
{
    (void)state;
    for (int shape = T_CHAIN; shape <= T_DEEPISH; shape++)
        for (size_t n = 1; n <= 70; n++) {
            uint64_t s = 0xabc + n * 7 + (uint64_t)shape;
            fz_ctx_t c;
            memset(&c, 0, sizeof c);
            ompf_profile_t *p = make_trie((shape_t)shape, n, &s);
            c.ut = p;
            assert_int_equal(fz_lca_build(&c), 0);
            for (uint32_t x = 0; x < n; x++)
                for (uint32_t y = 0; y < n; y++)
                    check_pair(&c, x, y, shape);
            fz_lca_free(&c);
            ompf_profile_destroy(p);
        }
}

/* fz_label_before (CTC's ties) against ompf_label_dfs_rank, on tries
 * whose siblings' components are not in node order: every pair of small
 * tries, and random, ancestor and root pairs of large ones. */
static void check_before(const ompf_profile_t *p, const uint32_t *rank, uint32_t x,
                         uint32_t y, int shape)
{
    int want = rank[x] < rank[y], got = fz_label_before(p, x, y);
    if (got != want)
        fail_msg("shape %d: before(%u, %u) = %d, expected %d", shape, x, y, got, want);
}

static void test_label_order(void **state)
{
    (void)state;
    for (int shape = T_CHAIN; shape <= T_ROOT; shape++)
        for (size_t n = 1; n <= 70; n++) {
            uint64_t s = 0xdef + n * 11 + (uint64_t)shape;
            ompf_profile_t *p = make_trie_comp((shape_t)shape, n, &s, 1);
            uint32_t rank[70];
            assert_int_equal(ompf_label_dfs_rank(p, rank), 0);
            for (uint32_t x = 0; x < n; x++)
                for (uint32_t y = 0; y < n; y++)
                    check_before(p, rank, x, y, shape);
            ompf_profile_destroy(p);
        }
    static const size_t big[] = {5000, 100000, 100000, 20000, 30000, 1};
    for (int shape = T_CHAIN; shape <= T_ROOT; shape++) {
        uint64_t s = 0x77 + (uint64_t)shape;
        uint32_t n = (uint32_t)big[shape];
        ompf_profile_t *p = make_trie_comp((shape_t)shape, n, &s, 1);
        uint32_t *rank = malloc(n * sizeof *rank);
        assert_int_equal(ompf_label_dfs_rank(p, rank), 0);
        for (int i = 0; i < 20000; i++) {
            uint32_t x = (uint32_t)(fzt_rand(&s) % n), y = (uint32_t)(fzt_rand(&s) % n), a = x;
            for (uint64_t up = fzt_rand(&s) % 64; up-- && a;)
                a = ompf_label_parent(p, a);
            check_before(p, rank, x, y, shape);
            check_before(p, rank, a, x, shape);
            check_before(p, rank, x, a, shape);
            check_before(p, rank, 0, x, shape);
        }
        free(rank);
        ompf_profile_destroy(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_all_pairs),
        cmocka_unit_test(test_label_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
