/* Packed profiles (profile.h, OMPF_LEAN_PACKED): for every column set, a
 * packed profile gives back each XU's whole record and parts exactly,
 * packed in memory or read so from a file (70,000 XUs, more than one
 * chunk of the file); edge values (negative CPUs, times near 2^64, ends before
 * starts, unsorted and equal parts, 40 parts) included; its values and
 * exact counts are the full profile's; and what cannot be done with it
 * says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gen.h"
#include "ompfuse/file.h"

static char *dir;
static char path[1024];

/* Edge records appended to the generated ones: (fields, parts). */
typedef struct {
    ompf_xu_t x;
    uint32_t np;
    ompf_part_t pt[40];
} edge_t;

static edge_t edges[6];

static void make_edges(void)
{
    memset(edges, 0, sizeof edges);
    const uint64_t top = UINT64_MAX;
    edges[0].x = (ompf_xu_t){.id = top, .thread = 2, .team_thread = UINT32_MAX,
                             .team_size = UINT32_MAX, .parts = 1, .cpu = INT32_MIN,
                             .core = INT32_MAX, .numa = -1, .kind = OMPF_XU_KIND_COUNT - 1,
                             .start_ns = top - 5, .end_ns = top, .iter_start = top,
                             .iter_count = top};
    /* ends before it starts: kept as given */
    edges[1].x = (ompf_xu_t){.id = 1ull << 62, .start_ns = 500, .end_ns = 20, .parts = 1};
    /* parts out of order and equal, a part before the XU's start */
    edges[2].x = (ompf_xu_t){.id = 100077, .thread = 1, .parts = 4, .start_ns = 1000,
                             .end_ns = 5000};
    edges[2].np = 4;
    edges[2].pt[0] = (ompf_part_t){1, 3000, 3500};
    edges[2].pt[1] = (ompf_part_t){0, 900, 950};
    edges[2].pt[2] = (ompf_part_t){2, 3000, 3500};
    edges[2].pt[3] = (ompf_part_t){2, top - 1, top};
    /* 40 parts */
    edges[3].x = (ompf_xu_t){.id = 100078, .parts = 40, .start_ns = 10, .end_ns = 900000};
    edges[3].np = 40;
    for (uint32_t k = 0; k < 40; k++)
        edges[3].pt[k] = (ompf_part_t){k % 3, 10 + k * k * 100, 10 + k * k * 100 + k};
    /* a parts count with none recorded */
    edges[4].x = (ompf_xu_t){.id = 100079, .parts = 7, .start_ns = 1, .end_ns = 2};
    edges[5].x = (ompf_xu_t){.id = 0, .start_ns = 0, .end_ns = 0};
}

/* 70000 generated XUs (two XUS chunks in the file), some with parts, exact counts
 * and missing values, then the edges. */
static ompf_profile_t *make_profile(void)
{
    gen_opts_t o = {.n_xu = 70000, .n_threads = 3, .n_events = 3, .n_constructs = 5,
                    .missing_rate = 0.1, .special_values = 1, .seed = 11};
    ompf_profile_t *p = gen_profile(&o);
    for (size_t i = 4; i < ompf_xu_count(p); i += 997) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        ompf_part_t pt[3] = {{x->thread, x->start_ns, x->start_ns + 1},
                             {0, x->start_ns + 5, x->start_ns + 9},
                             {x->thread, x->end_ns - 1, x->end_ns}};
        assert_int_equal(ompf_xu_set_parts(p, i, pt, 3), 0);
    }
    for (size_t i = 3; i < ompf_xu_count(p); i += 777)
        assert_int_equal(ompf_xu_value_set_u64(p, i, 1, (1ull << 60) + 2 * i + 1), 0);
    double v[3] = {1, OMPF_MISSING, 3};
    for (size_t k = 0; k < sizeof edges / sizeof *edges; k++) {
        edges[k].x.label = OMPF_LABEL_ROOT;
        assert_int_equal(ompf_xu_add(p, &edges[k].x, v), 0);
        if (edges[k].np)
            assert_int_equal(ompf_xu_set_parts(p, ompf_xu_count(p) - 1, edges[k].pt,
                                               edges[k].np), 0);
    }
    return p;
}

static int setup(void **state)
{
    (void)state;
    make_edges();
    dir = gen_tmpdir();
    snprintf(path, sizeof path, "%s/p.ompf", dir);
    ompf_profile_t *p = make_profile();
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

#define SAME(f)                                                                             \
    if (a->f != b.f)                                                                        \
    fail_msg("XU %zu: field " #f " is %llu, expected %llu", i, (unsigned long long)b.f,    \
             (unsigned long long)a->f)

/* Packed q holds what full p holds, XU by XU (at least min_parts of
 * them with recorded parts). */
static void same_as(const ompf_profile_t *p, const ompf_profile_t *q, size_t min_parts)
{
    assert_int_equal(ompf_xu_count(q), ompf_xu_count(p));
    assert_null(ompf_xu_get(q, 0));
    size_t nev = ompf_event_count(p), with_parts = 0;
    ompf_part_t buf[40];
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        const ompf_xu_t *a = ompf_xu_get(p, i);
        ompf_xu_t b;
        assert_int_equal(ompf_xu_record(q, i, &b), 0);
        SAME(id);
        SAME(type);
        SAME(label);
        SAME(thread);
        SAME(team_thread);
        SAME(team_size);
        SAME(parts);
        SAME(cpu);
        SAME(core);
        SAME(numa);
        SAME(kind);
        SAME(start_ns);
        SAME(end_ns);
        SAME(iter_start);
        SAME(iter_count);
        assert_int_equal(ompf_xu_has_parts(q, i), ompf_xu_has_parts(p, i));
        uint32_t n, m;
        ompf_part_t one;
        const ompf_part_t *pa = ompf_xu_parts(p, i, &n, &one);
        assert_int_equal(ompf_xu_parts_copy(q, i, buf, 40, &m), 0);
        assert_int_equal(m, n);
        for (uint32_t k = 0; k < n; k++)
            if (buf[k].thread != pa[k].thread || buf[k].start_ns != pa[k].start_ns ||
                buf[k].end_ns != pa[k].end_ns)
                fail_msg("XU %zu part %u differs", i, k);
        with_parts += ompf_xu_has_parts(p, i) != 0;
        const double *va = ompf_xu_values_const(p, i), *vb = ompf_xu_values_const(q, i);
        for (size_t e = 0; e < nev; e++) {
            uint64_t ua, ub;
            int ra = ompf_xu_value_u64(p, i, (uint32_t)e, &ua);
            int rb = ompf_xu_value_u64(q, i, (uint32_t)e, &ub);
            assert_int_equal(ra, rb);
            if (!ra)
                assert_true(ua == ub);
            assert_memory_equal(&va[e], &vb[e], sizeof va[e]);
        }
    }
    assert_true(with_parts >= min_parts);
    assert_int_equal(ompf_part_count(q), ompf_part_count(p));
}

static void same_as_full(const ompf_profile_t *p, const ompf_profile_t *q)
{
    same_as(p, q, 71);
}

static const unsigned flag_sets[] = {
    OMPF_LEAN | OMPF_LEAN_PACKED, OMPF_LEAN | OMPF_LEAN_START | OMPF_LEAN_PACKED,
    OMPF_LEAN | OMPF_LEAN_TIMES | OMPF_LEAN_PACKED,
    OMPF_LEAN | OMPF_LEAN_TIMES | OMPF_LEAN_START | OMPF_LEAN_PACKED};

static void test_pack_in_memory(void **state)
{
    (void)state;
    ompf_profile_t *p = make_profile();
    for (size_t k = 0; k < sizeof flag_sets / sizeof *flag_sets; k++) {
        ompf_profile_t *q = make_profile();
        assert_int_equal(ompf_profile_pack(q, flag_sets[k]), 0);
        assert_int_equal(ompf_profile_lean(q), flag_sets[k]);
        same_as_full(p, q);
        /* the columns the flags ask for, and no others */
        assert_true((ompf_xu_view_u64(q, OMPF_XU_START).base != NULL) ==
                    ((flag_sets[k] & (OMPF_LEAN_START | OMPF_LEAN_TIMES)) != 0));
        assert_true((ompf_xu_view_u64(q, OMPF_XU_END).base != NULL) ==
                    ((flag_sets[k] & OMPF_LEAN_TIMES) != 0));
        ompf_profile_destroy(q);
    }
    ompf_profile_destroy(p);
}

static void test_read_packed(void **state)
{
    (void)state;
    ompf_profile_t *p, *q, *space;
    ompf_error_t err;
    int rc = ompf_profile_read(path, &p, NULL, &err);
    if (rc)
        fail_msg("%s", err.msg);
    for (size_t k = 0; k < sizeof flag_sets / sizeof *flag_sets; k++) {
        assert_int_equal(ompf_profile_read_into(path, flag_sets[k], NULL, &q, NULL, &err), 0);
        same_as_full(p, q);
        ompf_profile_destroy(q);
    }
    /* into a shared trie, as combine reads its first input: the labels
     * are nodes of that trie */
    assert_int_equal(ompf_profile_create(&space), 0);
    assert_int_equal(ompf_profile_read_into(path, flag_sets[1], space, &q, NULL, &err), 0);
    ompf_xu_t b;
    assert_int_equal(ompf_xu_record(q, 100, &b), 0);
    assert_int_equal(b.label, ompf_xu_view_u32(q, OMPF_XU_LABEL).base[100]);
    assert_true(b.label < ompf_label_count(space));
    ompf_profile_destroy(q);
    ompf_profile_destroy(space);
    ompf_profile_destroy(p);
}

static void test_refusals(void **state)
{
    (void)state;
    ompf_profile_t *p = make_profile(), *q;
    ompf_error_t err;
    /* flags without OMPF_LEAN or without OMPF_LEAN_PACKED, unknown bits */
    static const unsigned bad[] = {OMPF_LEAN_PACKED, OMPF_LEAN, OMPF_LEAN | OMPF_LEAN_TIMES,
                                   OMPF_LEAN | OMPF_LEAN_PACKED | 16u};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        assert_int_equal(ompf_profile_pack(p, bad[k]), OMPF_EINVAL);
    assert_int_equal(ompf_profile_pack(NULL, flag_sets[0]), OMPF_EINVAL);
    size_t n = ompf_xu_count(p);
    assert_int_equal(ompf_profile_pack(p, flag_sets[0]), 0);
    assert_int_equal(ompf_profile_pack(p, flag_sets[0]), OMPF_EINVAL); /* packed already */
    /* nothing is added to a packed profile */
    ompf_xu_t x = {.id = 5, .label = OMPF_LABEL_ROOT};
    assert_int_equal(ompf_xu_add(p, &x, NULL), OMPF_EINVAL);
    assert_int_equal(ompf_xu_reserve(p, n + 10), OMPF_EINVAL);
    assert_int_equal(ompf_xu_count(p), n);
    /* out of range, a buffer too small (the count is told), no output */
    ompf_xu_t b;
    ompf_part_t two[2];
    uint32_t m;
    assert_int_equal(ompf_xu_record(p, n, &b), OMPF_ERANGE);
    assert_int_equal(ompf_xu_record(p, 0, NULL), OMPF_EINVAL);
    assert_int_equal(ompf_xu_parts_copy(p, n - 3, two, 2, &m), OMPF_ERANGE); /* 40 parts */
    assert_int_equal(m, 40);
    assert_int_equal(ompf_xu_parts_copy(p, n, two, 2, &m), OMPF_ERANGE);
    assert_int_equal(ompf_xu_parts_copy(p, 0, NULL, 2, &m), OMPF_EINVAL);
    /* the one span of an XU without recorded parts needs room for one */
    assert_int_equal(ompf_xu_parts_copy(p, n - 1, two, 0, &m), OMPF_ERANGE);
    assert_int_equal(m, 1);
    /* a packed profile is lean: not written record by record */
    char out[1100];
    snprintf(out, sizeof out, "%s/w.ompf", dir);
    assert_int_equal(ompf_profile_write(p, out, &err), OMPF_EINVAL);
    ompf_profile_destroy(p);
    /* a lean profile that is not packed has no records to give */
    assert_int_equal(ompf_profile_read_into(path, OMPF_LEAN, NULL, &q, NULL, &err), 0);
    assert_int_equal(ompf_xu_record(q, 0, &b), OMPF_EINVAL);
    assert_int_equal(ompf_xu_parts_copy(q, 0, two, 2, &m), OMPF_EINVAL);
    assert_int_equal(ompf_profile_pack(q, flag_sets[0]), OMPF_EINVAL);
    ompf_profile_destroy(q);
}

/* A file without parts (as the synthetic benchmarks write) packs its
 * records as they come, with nothing to add at the end. */
static void test_no_parts(void **state)
{
    (void)state;
    gen_opts_t o = {.n_xu = 3000, .n_threads = 2, .n_events = 2, .n_constructs = 3,
                    .seed = 5};
    ompf_profile_t *p = gen_profile(&o), *q;
    char np[1100];
    snprintf(np, sizeof np, "%s/noparts.ompf", dir);
    ompf_error_t err;
    assert_int_equal(ompf_profile_write(p, np, &err), 0);
    ompf_profile_destroy(p);
    assert_int_equal(ompf_profile_read(np, &p, NULL, &err), 0);
    assert_int_equal(ompf_part_count(p), 0);
    for (size_t k = 0; k < sizeof flag_sets / sizeof *flag_sets; k++) {
        assert_int_equal(ompf_profile_read_into(np, flag_sets[k], NULL, &q, NULL, &err), 0);
        same_as(p, q, 0);
        ompf_profile_destroy(q);
    }
    ompf_profile_destroy(p);
}

/* A file cut short is packed as salvaged, parts lost with the tail
 * included: the packed read holds what the full read holds. */
static void test_truncated(void **state)
{
    (void)state;
    size_t len;
    unsigned char *b = gen_slurp(path, &len);
    char cut[1100];
    snprintf(cut, sizeof cut, "%s/cut.ompf", dir);
    gen_spit(cut, b, len - 40); /* into the tail chunks */
    free(b);
    ompf_profile_t *p, *q;
    ompf_error_t err;
    assert_int_equal(ompf_profile_read(cut, &p, NULL, &err), OMPF_ETRUNC);
    assert_int_equal(ompf_profile_read_into(cut, flag_sets[2], NULL, &q, NULL, &err),
                     OMPF_ETRUNC);
    assert_true(ompf_xu_count(p) > 1000);
    size_t n = ompf_xu_count(p);
    assert_int_equal(ompf_xu_count(q), n);
    for (size_t i = 0; i < n; i++) {
        const ompf_xu_t *a = ompf_xu_get(p, i);
        ompf_xu_t x;
        assert_int_equal(ompf_xu_record(q, i, &x), 0);
        assert_true(x.id == a->id && x.end_ns == a->end_ns && x.parts == a->parts);
        assert_int_equal(ompf_xu_has_parts(q, i), ompf_xu_has_parts(p, i));
    }
    ompf_profile_destroy(p);
    ompf_profile_destroy(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_in_memory),
        cmocka_unit_test(test_read_packed),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_no_parts),
        cmocka_unit_test(test_truncated),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
