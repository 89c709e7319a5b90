/* Property: fusing K copies of one profile, each keeping a different subset
 * of its events (disjoint for LGL/CTC; for BC disjoint apart from one shared
 * overlapping event), gives back the original profile exactly: the same
 * XUs, each with its original value for every event, label and type.
 * Also: the same inputs and seed give a byte-identical output file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <unistd.h>

#include "fzt.h"
#include "ompfuse/file.h"

enum { N_EV = 7 };

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Added to a third of the start times: with 3,000 XUs a run (12 index
 * bits), 2^61 spreads them too far for CTC to carry a time and an index
 * in one 64-bit key, so it sorts them apart, and 2^50 leaves room only
 * without aligning the time to a 16-bit digit (ctc.c). */
static uint64_t wide_times;

/* An original profile with n XUs over 4 types, nested labels (a few
 * duplicated within a type), start-time ties, repeated values. */
static ompf_profile_t *original(uint64_t seed, size_t n)
{
    rng_state = seed;
    ompf_profile_t *p = fzt_profile(1, "E0,E1,E2,E3,E4,E5,E6");
    for (size_t i = 0; i < n; i++) {
        char l[96];
        int type = 1 + (int)(rnd() % 4);
        int depth = 1 + (int)(rnd() % 3);
        size_t len = (size_t)snprintf(l, sizeof l, "0");
        for (int d = 0; d < depth; d++)
            len += (size_t)snprintf(l + len, sizeof l - len, ".%llu",
                                    (unsigned long long)(rnd() % 6));
        if (i % 7 == 0) /* unique labels for most */
            snprintf(l + len, sizeof l - len, ".%zu", i);
        else
            snprintf(l + len, sizeof l - len, ".%zu.%d", i, type);
        double v[N_EV];
        for (int e = 0; e < N_EV; e++)
            v[e] = (double)(rnd() % (e == 0 ? 50 : 100000));
        uint64_t start = (rnd() % (n / 2 + 1)) * 10;
        if (wide_times && rnd() % 3 == 0)
            start += wide_times;
        fzt_xu(p, 1000 + i, type, l, start, v);
    }
    return p;
}

/* A copy of p keeping events whose bit is set in mask (others dropped). */
static ompf_profile_t *subset(const ompf_profile_t *p, unsigned mask,
                              uint64_t run_id)
{
    char evs[256] = "";
    for (int e = 0; e < N_EV; e++)
        if (mask & (1u << e)) {
            size_t l = strlen(evs);
            snprintf(evs + l, sizeof evs - l, "%sE%d", l ? "," : "", e);
        }
    ompf_profile_t *q = fzt_profile(run_id, evs);
    for (size_t c = 0; c < ompf_construct_count(p); c++)
        FZT_CHECK(ompf_construct_add(q, ompf_construct_get(p, (uint32_t)c), NULL));
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        ompf_xu_t x = *ompf_xu_get(p, i);
        FZT_CHECK(ompf_label_import(q, p, x.label, &x.label));
        const double *v = ompf_xu_values_const(p, i);
        double w[N_EV];
        size_t k = 0;
        for (int e = 0; e < N_EV; e++)
            if (mask & (1u << e))
                w[k++] = v[e];
        FZT_CHECK(ompf_xu_add(q, &x, w));
    }
    return q;
}

static void check_exact(const ompf_profile_t *orig, const ompf_profile_t *f,
                        size_t k)
{
    size_t n = ompf_xu_count(orig);
    assert_int_equal(ompf_xu_count(f), n);
    assert_int_equal(ompf_event_count(f), N_EV);
    char *seen = calloc(n, 1);
    for (size_t i = 0; i < n; i++) {
        const uint64_t *pv = ompf_xu_provenance_const(f, i);
        for (size_t r = 1; r < k; r++)
            assert_int_equal(pv[r], pv[0]);
        assert_true(pv[0] >= 1000 && pv[0] < 1000 + n);
        size_t o = pv[0] - 1000;
        assert_false(seen[o]);
        seen[o] = 1;
        const ompf_xu_t *fx = ompf_xu_get(f, i), *ox = ompf_xu_get(orig, o);
        assert_int_equal(fx->id, ox->id);
        assert_int_equal(fx->start_ns, ox->start_ns);
        assert_string_equal(ompf_construct_get(f, fx->type)->name,
                            ompf_construct_get(orig, ox->type)->name);
        char a[128], b[128];
        ompf_label_format(f, fx->label, a, sizeof a);
        ompf_label_format(orig, ox->label, b, sizeof b);
        assert_string_equal(a, b);
        for (int e = 0; e < N_EV; e++) {
            char name[8];
            snprintf(name, sizeof name, "E%d", e);
            assert_true(fzt_val(f, i, name) == ompf_xu_values_const(orig, o)[e]);
        }
    }
    free(seen);
}

static void run_property(int strategy, const unsigned *masks, size_t k,
                         uint64_t seed, size_t n)
{
    ompf_profile_t *orig = original(seed, n);
    ompf_profile_t *in[8];
    for (size_t r = 0; r < k; r++)
        in[r] = subset(orig, masks[r], 0x100 + r);
    ompf_profile_t *f, *g;
    ompf_fuse_report_t *rep;
    ompf_error_t err;
    int rc = fzt_fuse(in, k, strategy, seed, &f, &rep, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    check_exact(orig, f, k);
    for (size_t r = 0; r < k; r++)
        assert_int_equal(ompf_fuse_report_unmatched(rep, r), 0);
    ompf_fuse_report_destroy(rep);
    /* Deterministic: same content, same bytes on disk. */
    assert_int_equal(fzt_fuse(in, k, strategy, seed, &g, NULL, &err), 0);
    assert_int_equal(ompf_profile_compare(f, g, &err), 0);
    char p1[64], p2[64];
    snprintf(p1, sizeof p1, "fz-prop-%d-a.ompf", (int)getpid());
    snprintf(p2, sizeof p2, "fz-prop-%d-b.ompf", (int)getpid());
    assert_int_equal(ompf_profile_write(f, p1, &err), 0);
    assert_int_equal(ompf_profile_write(g, p2, &err), 0);
    FILE *a = fopen(p1, "rb"), *b = fopen(p2, "rb");
    assert_non_null(a);
    assert_non_null(b);
    int ca, cb;
    long pos = 0;
    do {
        ca = fgetc(a);
        cb = fgetc(b);
        if (ca != cb)
            fail_msg("fused files differ at byte %ld", pos);
        pos++;
    } while (ca != EOF);
    fclose(a);
    fclose(b);
    unlink(p1);
    unlink(p2);
    ompf_profile_destroy(f);
    ompf_profile_destroy(g);
    for (size_t r = 0; r < k; r++)
        ompf_profile_destroy(in[r]);
    ompf_profile_destroy(orig);
}

static const unsigned disjoint3[3] = {0x07, 0x18, 0x60};
static const unsigned disjoint7[7] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40};
/* 8 runs: CTC sorts each through the radix sort's scratch (a run is at
 * most an eighth of the input XUs), not in place (ctc.c) */
static const unsigned runs8[8] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x03};
/* BC: E1 shared by all, the rest disjoint; E0 (few distinct values) too. */
static const unsigned overlap4[4] = {0x03, 0x06, 0x1a, 0x62};

static void test_lgl(void **s)
{
    (void)s;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        run_property(OMPF_FUSE_LGL, disjoint3, 3, seed, 500);
        run_property(OMPF_FUSE_LGL, disjoint7, 7, seed, 200);
    }
}

static void test_ctc(void **s)
{
    (void)s;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        run_property(OMPF_FUSE_CTC, disjoint3, 3, seed, 500);
        run_property(OMPF_FUSE_CTC, disjoint7, 7, seed, 200);
        run_property(OMPF_FUSE_CTC, runs8, 8, seed, 300);
    }
    for (int w = 0; w < 2; w++) {
        wide_times = w ? 1ull << 50 : 1ull << 61;
        for (uint64_t seed = 1; seed <= 3; seed++) {
            run_property(OMPF_FUSE_CTC, disjoint3, 3, seed, 3000);
            run_property(OMPF_FUSE_CTC, runs8, 8, seed, 1000);
        }
    }
    wide_times = 0;
}

static void test_bc(void **s)
{
    (void)s;
    for (uint64_t seed = 1; seed <= 5; seed++)
        run_property(OMPF_FUSE_BC, overlap4, 4, seed, 800);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lgl),
        cmocka_unit_test(test_ctc),
        cmocka_unit_test(test_bc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
