/* Lean reading and shared labels (profile.h, "Lean profiles", "Shared
 * labels"): for every flag set, a lean read of a file holds exactly the
 * full read's ids, types, labels, times, values and exact counts, and
 * nothing it says it drops; it refuses the same damaged files; moving
 * labels into a shared trie keeps every XU's label, and so does reading
 * into one, whichever guesses of the next node hit or miss. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gen.h"
#include "ompfuse/file.h"

static char *dir;
static char path[1024];

static int setup(void **state)
{
    (void)state;
    dir = gen_tmpdir();
    snprintf(path, sizeof path, "%s/p.ompf", dir);
    /* a fused profile (provenance), huge integers (exact counts), missing
     * values, several chunks of XUs */
    gen_opts_t o = {.n_xu = 70000, .n_threads = 3, .n_events = 3, .n_constructs = 5,
                    .n_sources = 2, .missing_rate = 0.1, .special_values = 1, .seed = 7};
    ompf_profile_t *p = gen_profile(&o);
    /* parts on a few XUs */
    for (size_t i = 5; i < ompf_xu_count(p); i += 9973) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        ompf_part_t pt[2] = {{x->thread, x->start_ns, x->start_ns + 1},
                             {x->thread, x->end_ns - 1, x->end_ns}};
        assert_int_equal(ompf_xu_set_parts(p, i, pt, 2), 0);
        ((ompf_xu_t *)ompf_xu_get(p, i))->parts = 2;
    }
    /* counts no double holds */
    for (size_t i = 3; i < ompf_xu_count(p); i += 777)
        assert_int_equal(ompf_xu_value_set_u64(p, i, 1, (1ull << 60) + 2 * i + 1), 0);
    ompf_error_t err;
    assert_int_equal(ompf_profile_write(p, path, &err), 0);
    ompf_profile_destroy(p);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gen_rmdir(dir);
    return 0;
}

/* The lean profile q holds what full profile p holds, field by field. */
static void same_as_full(const ompf_profile_t *p, const ompf_profile_t *q, unsigned flags)
{
    size_t n = ompf_xu_count(p), ne = ompf_event_count(p);
    assert_int_equal(ompf_xu_count(q), n);
    assert_true(n > 65536);
    assert_int_equal(ompf_profile_lean(q), flags);
    assert_int_equal(ompf_profile_lean(p), 0);
    ompf_u64_view_t id = ompf_xu_view_u64(q, OMPF_XU_ID), st = ompf_xu_view_u64(q, OMPF_XU_START),
                    en = ompf_xu_view_u64(q, OMPF_XU_END);
    ompf_u32_view_t ty = ompf_xu_view_u32(q, OMPF_XU_TYPE), lb = ompf_xu_view_u32(q, OMPF_XU_LABEL);
    int want_type = !(flags & OMPF_LEAN_NO_TYPE);
    assert_non_null(id.base);
    assert_int_equal(ty.base != NULL, want_type);
    assert_non_null(lb.base);
    int want_start = (flags & (OMPF_LEAN_START | OMPF_LEAN_TIMES)) != 0;
    int want_end = (flags & OMPF_LEAN_TIMES) != 0;
    assert_int_equal(st.base != NULL, want_start);
    assert_int_equal(en.base != NULL, want_end);
    /* the same views of the full profile step through its records */
    ompf_u64_view_t fid = ompf_xu_view_u64(p, OMPF_XU_ID), fen = ompf_xu_view_u64(p, OMPF_XU_END);
    ompf_u32_view_t flb = ompf_xu_view_u32(p, OMPF_XU_LABEL);
    for (size_t i = 0; i < n; i++) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        assert_null(ompf_xu_get(q, i));
        assert_int_equal(id.base[i * id.stride], x->id);
        assert_int_equal(fid.base[i * fid.stride], x->id);
        if (want_type)
            assert_int_equal(ty.base[i * ty.stride], x->type);
        assert_int_equal(lb.base[i * lb.stride], x->label);
        assert_int_equal(flb.base[i * flb.stride], x->label);
        assert_int_equal(fen.base[i * fen.stride], x->end_ns);
        if (want_start)
            assert_int_equal(st.base[i * st.stride], x->start_ns);
        if (want_end)
            assert_int_equal(en.base[i * en.stride], x->end_ns);
        assert_memory_equal(ompf_xu_values_const(p, i), ompf_xu_values_const(q, i),
                            ne * sizeof(double));
        for (uint32_t e = 0; e < ne; e++) {
            uint64_t a = 0, b = 0;
            int ha = ompf_xu_value_u64(p, i, e, &a), hb = ompf_xu_value_u64(q, i, e, &b);
            assert_int_equal(ha, hb);
            assert_int_equal(a, b);
        }
        /* what a lean profile does not keep */
        assert_null(ompf_xu_provenance_const(q, i));
        assert_int_equal(ompf_xu_has_parts(q, i), 0);
    }
    assert_true(ompf_xu_exact_count(p) > 0);
    assert_int_equal(ompf_xu_exact_count(q), ompf_xu_exact_count(p));
    assert_true(ompf_part_count(p) > 0);
    assert_int_equal(ompf_part_count(q), 0);
    assert_int_equal(ompf_label_count(q), ompf_label_count(p));
    assert_int_equal(ompf_thread_count(q), ompf_thread_count(p));
    assert_int_equal(ompf_source_count(q), ompf_source_count(p));
}

static void test_lean_fields(void **state)
{
    (void)state;
    ompf_profile_t *p, *q;
    ompf_error_t err;
    assert_int_equal(ompf_profile_read(path, &p, NULL, &err), 0);
    static const unsigned flags[] = {OMPF_LEAN, OMPF_LEAN | OMPF_LEAN_START,
                                     OMPF_LEAN | OMPF_LEAN_TIMES,
                                     OMPF_LEAN | OMPF_LEAN_TIMES | OMPF_LEAN_START};
    for (size_t k = 0; k < sizeof flags / sizeof *flags; k++) {
        assert_int_equal(ompf_profile_read_into(path, flags[k], NULL, &q, NULL, &err), 0);
        same_as_full(p, q, flags[k]);
        /* a lean profile has nothing to write or compare record by record */
        char out[1100];
        snprintf(out, sizeof out, "%s/w.ompf", dir);
        assert_int_equal(ompf_profile_write(q, out, &err), OMPF_EINVAL);
        assert_non_null(strstr(err.msg, "lean profile"));
        assert_int_equal(access(out, F_OK), -1);
        assert_int_equal(ompf_profile_compare(p, q, &err), OMPF_EMISMATCH);
        /* an XU added to it keeps the lean fields */
        ompf_xu_t x = *ompf_xu_get(p, 0);
        assert_int_equal(ompf_xu_add(q, &x, ompf_xu_values_const(p, 0)), 0);
        ompf_u64_view_t id = ompf_xu_view_u64(q, OMPF_XU_ID);
        assert_int_equal(id.base[ompf_xu_count(q) - 1], x.id);
        ompf_profile_destroy(q);
    }
    /* flags that are no lean reading */
    static const unsigned bad[] = {OMPF_LEAN_START, OMPF_LEAN_TIMES, OMPF_LEAN_PACKED,
                                   OMPF_LEAN | 16u};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        q = (ompf_profile_t *)1;
        assert_int_equal(ompf_profile_read_into(path, bad[k], NULL, &q, NULL, &err), OMPF_EINVAL);
        assert_null(q);
        assert_non_null(strstr(err.msg, "invalid flags"));
    }
    ompf_profile_destroy(p);
}

/* A damaged or cut file: the lean reader says what the full one says. */
/* ompf_profile_lean_narrow: each narrowing gives what a read with the
 * narrower flags gives; widening, a packed or a full profile are refused. */
static void test_lean_narrow(void **state)
{
    (void)state;
    ompf_profile_t *p, *q;
    ompf_error_t err;
    assert_int_equal(ompf_profile_read(path, &p, NULL, &err), 0);
    static const unsigned from[] = {OMPF_LEAN | OMPF_LEAN_TIMES, OMPF_LEAN | OMPF_LEAN_TIMES,
                                    OMPF_LEAN | OMPF_LEAN_START, OMPF_LEAN | OMPF_LEAN_TIMES |
                                    OMPF_LEAN_START};
    static const unsigned to[] = {OMPF_LEAN | OMPF_LEAN_START, OMPF_LEAN, OMPF_LEAN,
                                  OMPF_LEAN | OMPF_LEAN_TIMES};
    for (size_t k = 0; k < sizeof from / sizeof *from; k++) {
        assert_int_equal(ompf_profile_read_into(path, from[k], NULL, &q, NULL, &err), 0);
        assert_int_equal(ompf_profile_lean_narrow(q, to[k]), 0);
        assert_int_equal(ompf_profile_lean(q), to[k]);
        same_as_full(p, q, to[k]);
        /* then without types (fusion, once grouped): the rest unchanged,
         * no way back, and no XU taken */
        unsigned nt = to[k] | OMPF_LEAN_NO_TYPE;
        assert_int_equal(ompf_profile_lean_narrow(q, nt), 0);
        same_as_full(p, q, nt);
        assert_int_equal(ompf_profile_lean_narrow(q, to[k]), OMPF_EINVAL);
        assert_int_equal(ompf_profile_lean_narrow(q, nt), 0); /* again: a no-op */
        ompf_xu_t x = *ompf_xu_get(p, 0);
        assert_int_equal(ompf_xu_add(q, &x, ompf_xu_values_const(p, 0)), OMPF_EINVAL);
        assert_int_equal(ompf_xu_reserve(q, 2 * ompf_xu_count(p)), OMPF_EINVAL);
        same_as_full(p, q, nt);
        ompf_profile_destroy(q);
    }
    static const unsigned bad_from[] = {OMPF_LEAN, OMPF_LEAN | OMPF_LEAN_START,
                                        OMPF_LEAN | OMPF_LEAN_TIMES | OMPF_LEAN_PACKED,
                                        OMPF_LEAN | OMPF_LEAN_TIMES};
    static const unsigned bad_to[] = {OMPF_LEAN | OMPF_LEAN_START, OMPF_LEAN | OMPF_LEAN_TIMES,
                                      OMPF_LEAN | OMPF_LEAN_PACKED, OMPF_LEAN_START};
    for (size_t k = 0; k < sizeof bad_from / sizeof *bad_from; k++) {
        assert_int_equal(ompf_profile_read_into(path, bad_from[k], NULL, &q, NULL, &err), 0);
        assert_int_equal(ompf_profile_lean_narrow(q, bad_to[k]), OMPF_EINVAL);
        assert_int_equal(ompf_profile_lean(q), bad_from[k]); /* unchanged */
        if (!(bad_from[k] & OMPF_LEAN_PACKED))
            same_as_full(p, q, bad_from[k]);
        ompf_profile_destroy(q);
    }
    assert_int_equal(ompf_profile_lean_narrow(p, OMPF_LEAN), OMPF_EINVAL); /* full */
    ompf_profile_destroy(p);
}

static void test_lean_errors(void **state)
{
    (void)state;
    size_t len;
    unsigned char *buf = gen_slurp(path, &len);
    char bad[1100];
    snprintf(bad, sizeof bad, "%s/bad.ompf", dir);
    /* a flipped byte in the middle (a checksum fails), and the file cut at
     * three places (salvaged) */
    size_t cuts[] = {len / 2, len / 3, len - 9, len * 2 / 3};
    for (size_t k = 0; k < sizeof cuts / sizeof *cuts; k++) {
        if (k == 0) {
            buf[cuts[0]] ^= 0x5a;
            gen_spit(bad, buf, len);
            buf[cuts[0]] ^= 0x5a;
        } else {
            gen_spit(bad, buf, cuts[k]);
        }
        ompf_profile_t *p = NULL, *q = NULL;
        ompf_error_t e1, e2;
        ompf_read_info_t i1, i2;
        int r1 = ompf_profile_read(bad, &p, &i1, &e1);
        int r2 = ompf_profile_read_into(bad, OMPF_LEAN | OMPF_LEAN_TIMES, NULL, &q, &i2, &e2);
        assert_true(r1 != 0);
        assert_int_equal(r1, r2);
        assert_string_equal(e1.msg, e2.msg);
        assert_int_equal(i1.xus_read, i2.xus_read);
        assert_int_equal(ompf_xu_count(p), ompf_xu_count(q));
        ompf_profile_destroy(p);
        ompf_profile_destroy(q);
    }
    free(buf);
}

/* Moving labels into a shared trie: every XU keeps its label (formatted
 * the same from the trie it now indexes), labels two profiles share are
 * held once, a second move is refused. */
static void test_move_labels(void **state)
{
    (void)state;
    ompf_profile_t *p, *q, *r, *space;
    ompf_error_t err;
    assert_int_equal(ompf_profile_read(path, &p, NULL, &err), 0);
    assert_int_equal(ompf_profile_read(path, &r, NULL, &err), 0);
    assert_int_equal(ompf_profile_read_into(path, OMPF_LEAN, NULL, &q, NULL, &err), 0);
    assert_int_equal(ompf_profile_create(&space), 0);
    assert_ptr_equal(ompf_profile_label_space(q), q);
    assert_int_equal(ompf_profile_move_labels(q, space), 0);
    assert_int_equal(ompf_profile_move_labels(r, space), 0); /* full: xu[].label */
    assert_int_equal(ompf_profile_move_labels(q, space), OMPF_EINVAL);
    assert_int_equal(ompf_profile_move_labels(space, space), OMPF_EINVAL);
    assert_ptr_equal(ompf_profile_label_space(q), space);
    assert_int_equal(ompf_label_count(q), 1);
    /* the same labels twice: held once */
    assert_int_equal(ompf_label_count(space), ompf_label_count(p));
    ompf_label_drop_index(space);
    ompf_u32_view_t lq = ompf_xu_view_u32(q, OMPF_XU_LABEL);
    char a[512], b[512], c[512];
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        ompf_label_format(p, ompf_xu_get(p, i)->label, a, sizeof a);
        ompf_label_format(space, lq.base[i * lq.stride], b, sizeof b);
        ompf_label_format(space, ompf_xu_get(r, i)->label, c, sizeof c);
        assert_string_equal(a, b);
        assert_string_equal(a, c);
    }
    /* read straight into the trie: the same nodes, nothing added */
    ompf_profile_t *s2;
    size_t had = ompf_label_count(space);
    assert_int_equal(ompf_profile_read_into(path, OMPF_LEAN | OMPF_LEAN_START, space, &s2, NULL,
                                            &err), 0);
    assert_int_equal(ompf_label_count(space), had);
    assert_ptr_equal(ompf_profile_label_space(s2), space);
    assert_int_equal(ompf_label_count(s2), 1);
    ompf_u32_view_t l2 = ompf_xu_view_u32(s2, OMPF_XU_LABEL);
    for (size_t i = 0; i < ompf_xu_count(p); i++)
        assert_int_equal(l2.base[i * l2.stride], lq.base[i * lq.stride]);
    assert_int_equal(ompf_profile_move_labels(s2, space), OMPF_EINVAL);
    /* a trie that is itself in another's cannot take labels */
    ompf_profile_t *s3 = (ompf_profile_t *)1;
    assert_int_equal(ompf_profile_read_into(path, 0, q, &s3, NULL, &err), OMPF_EINVAL);
    assert_null(s3);
    ompf_profile_destroy(s2);
    /* a label only one of them has is added after the index was dropped */
    uint32_t node, again;
    assert_int_equal(ompf_label_child(space, OMPF_LABEL_ROOT, 987654321, &node), 0);
    assert_int_equal(ompf_label_child(space, OMPF_LABEL_ROOT, 987654321, &again), 0);
    assert_int_equal(node, again);
    assert_int_equal(ompf_label_count(space), ompf_label_count(p) + 1);
    ompf_profile_destroy(p);
    ompf_profile_destroy(q);
    ompf_profile_destroy(r);
    ompf_profile_destroy(space);
}

/* A profile whose XU i has label labs[i] (and gen_profile's other fields). */
static void write_labels(const char *file, char labs[][32], size_t n, unsigned seed)
{
    gen_opts_t o = {.n_xu = n, .n_threads = 1, .n_events = 1, .n_constructs = 1, .seed = seed};
    ompf_profile_t *p = gen_profile(&o);
    for (size_t i = 0; i < n; i++) {
        uint32_t node;
        assert_int_equal(ompf_label_parse(p, labs[i], &node), 0);
        ((ompf_xu_t *)ompf_xu_get(p, i))->label = node;
    }
    ompf_error_t err;
    assert_int_equal(ompf_profile_write(p, file, &err), 0);
    ompf_profile_destroy(p);
}

/* Adds every label of q's trie to u. */
static void union_into(ompf_profile_t *u, const ompf_profile_t *q)
{
    char buf[512];
    for (uint32_t k = 0; k < ompf_label_count(q); k++) {
        ompf_label_format(q, k, buf, sizeof buf);
        assert_int_equal(ompf_label_parse(u, buf, NULL), 0);
    }
}

/* Reading into a shared trie guesses that a label is the node after the
 * previous one's (runs create labels in nearly the same order).  Labels
 * of few components make wrong guesses common: a node with the same
 * component under another parent, or the same parent and another
 * component.  Every XU keeps its label, and the trie holds the union. */
static void test_label_guesses(void **state)
{
    (void)state;
    enum { N = 3000 };
    static char a[N][32], b[N][32];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int d = 1 + (int)(x % 4), n = snprintf(a[i], 32, "0");
        for (int k = 0; k < d; k++)
            n += snprintf(a[i] + n, (size_t)(32 - n), ".%u", (unsigned)((x >> (8 + 2 * k)) % 3));
    }
    /* b: a's order with neighbouring blocks swapped, a fifth replaced */
    size_t i = 0;
    while (i < N) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t l1 = 1 + x % 40, l2 = 1 + (x >> 20) % 40;
        if (i + l1 + l2 > N) {
            memcpy(b[i], a[i], 32);
            i++;
            continue;
        }
        for (size_t k = 0; k < l2; k++)
            memcpy(b[i + k], a[i + l1 + k], 32);
        for (size_t k = 0; k < l1; k++)
            memcpy(b[i + l2 + k], a[i + k], 32);
        i += l1 + l2;
    }
    for (size_t k = 0; k < N; k += 5)
        snprintf(b[k], 32, "0.%zu.%zu", k % 7, k % 3);
    char pa[1100], pb[1100];
    snprintf(pa, sizeof pa, "%s/a.ompf", dir);
    snprintf(pb, sizeof pb, "%s/b.ompf", dir);
    write_labels(pa, a, N, 1);
    write_labels(pb, b, N, 2);
    ompf_profile_t *space, *qa, *qb, *alone, *u;
    ompf_error_t err;
    assert_int_equal(ompf_profile_create(&space), 0);
    assert_int_equal(ompf_profile_create(&u), 0);
    assert_int_equal(ompf_profile_read_into(pa, OMPF_LEAN, space, &qa, NULL, &err), 0);
    assert_int_equal(ompf_profile_read_into(pb, OMPF_LEAN, space, &qb, NULL, &err), 0);
    assert_int_equal(ompf_profile_read(pb, &alone, NULL, &err), 0);
    const ompf_profile_t *want[2] = {NULL, alone};
    ompf_profile_t *got[2] = {qa, qb};
    assert_int_equal(ompf_profile_read(pa, (ompf_profile_t **)&want[0], NULL, &err), 0);
    char s1[512], s2[512];
    for (int f = 0; f < 2; f++) {
        ompf_u32_view_t l = ompf_xu_view_u32(got[f], OMPF_XU_LABEL);
        for (size_t k = 0; k < N; k++) {
            ompf_label_format(want[f], ompf_xu_get(want[f], k)->label, s1, sizeof s1);
            ompf_label_format(space, l.base[k * l.stride], s2, sizeof s2);
            assert_string_equal(s1, s2);
            assert_string_equal(s1, f ? b[k] : a[k]);
        }
        union_into(u, want[f]);
    }
    assert_int_equal(ompf_label_count(space), ompf_label_count(u));
    ompf_profile_destroy((ompf_profile_t *)want[0]);
    ompf_profile_destroy(alone);
    ompf_profile_destroy(qa);
    ompf_profile_destroy(qb);
    ompf_profile_destroy(space);
    ompf_profile_destroy(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lean_fields),
        cmocka_unit_test(test_lean_narrow),
        cmocka_unit_test(test_lean_errors),
        cmocka_unit_test(test_move_labels),
        cmocka_unit_test(test_label_guesses),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
