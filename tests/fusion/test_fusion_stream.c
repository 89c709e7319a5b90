/* ompf_fuse_write (the fused XUs streamed to the file chunk by chunk) writes
 * byte for byte what ompf_fuse + ompf_profile_write write, for every
 * strategy, across chunk boundaries (more than 65536 fused XUs), with
 * recorded parts on base XUs and exact counts above 2^53; and the same
 * from lean inputs with shared labels, as combine reads them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fzt.h"
#include "ompfuse/file.h"

#define NX 70000u /* more than one XU chunk (65536) */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Run r: NX XUs of two types with labels 0.t.i (run 1 misses some), in
 * an order that differs per run; every 1000th XU of the base has two
 * recorded parts and every 777th an exact count above 2^53. */
static ompf_profile_t *make_run(unsigned r)
{
    /* overlapping pairs of events, as BC needs */
    static const char *const ev[] = {"perf::TASK-CLOCK,perf::CPU-CLOCK",
                                     "perf::CPU-CLOCK,perf::PAGE-FAULTS",
                                     "perf::PAGE-FAULTS,perf::TASK-CLOCK"};
    ompf_profile_t *p = fzt_profile(0x100 + r, ev[r]);
    uint32_t th;
    FZT_CHECK(ompf_thread_add(p, 1000 + (int32_t)r, &th));
    for (unsigned k = 0; k < NX; k++) {
        unsigned i = r ? (k * 7919u) % NX : k; /* 7919 is prime: a permutation */
        if (r == 1 && i % 97 == 5)
            continue;
        char lab[48];
        snprintf(lab, sizeof lab, "0.%u.%u", i % 2, i);
        double v[2] = {10.0 + i + r, 5.0 + (i % 13) * (r + 1)};
        fzt_xu(p, 1 + i + 1000000ull * r, 10 + (int)(i % 2), lab,
               (uint64_t)i * 50 + r * 3, v);
        size_t x = ompf_xu_count(p) - 1;
        if (i % 777 == 3)
            FZT_CHECK(ompf_xu_value_set_u64(p, x, 0, (1ull << 60) + 2 * i + 1));
        if (r == 0 && i % 1000 == 7) {
            ompf_part_t pt[2] = {{0, (uint64_t)i * 50, (uint64_t)i * 50 + 10},
                                 {0, (uint64_t)i * 50 + 20, (uint64_t)i * 50 + 40}};
            FZT_CHECK(ompf_xu_set_parts(p, x, pt, 2));
        }
    }
    return p;
}

static void test_stream_equals_memory(void **state)
{
    (void)state;
    ompf_profile_t *in[3] = {make_run(0), make_run(1), make_run(2)};
    const char *paths[3] = {"a.ompf", "b.ompf", "c.ompf"};
    static const int strat[] = {OMPF_FUSE_LGL, OMPF_FUSE_CTC, OMPF_FUSE_RANDOM,
                                OMPF_FUSE_BC, OMPF_FUSE_BC_UNLABELED};
    char mem[64], str[64];
    snprintf(mem, sizeof mem, "fzstream_mem.%ld.ompf", (long)getpid());
    snprintf(str, sizeof str, "fzstream_str.%ld.ompf", (long)getpid());
    for (size_t s = 0; s < sizeof strat / sizeof *strat; s++) {
        ompf_fuse_opts_t o;
        ompf_fuse_opts_init(&o);
        o.strategy = strat[s];
        ompf_error_t err;
        ompf_profile_t *f;
        ompf_fuse_report_t *r1, *r2;
        int rc = ompf_fuse((const ompf_profile_t *const *)in, paths, 3, &o, &f, &r1, &err);
        if (rc)
            fprintf(stderr, "%s: %s\n", ompf_fuse_strategy_name(o.strategy), err.msg);
        assert_int_equal(rc, 0);
        size_t nf = ompf_xu_count(f);
        /* LGL drops run 1's missing labels; the others pair positionally */
        assert_true(nf > 65536);
        assert_true(ompf_xu_exact_count(f) > 0);
        assert_true(ompf_part_count(f) > 0);
        assert_int_equal(ompf_profile_write(f, mem, &err), 0);
        assert_int_equal(ompf_fuse_write((const ompf_profile_t *const *)in, paths, 3, &o,
                                         str, &r2, &err), 0);
        assert_int_equal(ompf_fuse_report_fused(r2), nf);
        size_t la, lb;
        char *a = slurp(mem, &la), *b = slurp(str, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
        free(a);
        free(b);
        ompf_fuse_report_destroy(r1);
        ompf_fuse_report_destroy(r2);
        ompf_profile_destroy(f);
    }
    unlink(mem);
    unlink(str);
    /* An output that cannot be created is an error naming it. */
    ompf_fuse_opts_t o;
    ompf_fuse_opts_init(&o);
    ompf_error_t err;
    ompf_fuse_report_t *rep;
    assert_true(ompf_fuse_write((const ompf_profile_t *const *)in, paths, 3, &o,
                                "/nonexistent-dir/x.ompf", &rep, &err) < 0);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/x.ompf"));
    ompf_fuse_report_destroy(rep);
    for (int i = 0; i < 3; i++)
        ompf_profile_destroy(in[i]);
}

/* Fuses files fp[0..3) read as combine reads them (the first in full,
 * lean with flags when first_lean is 1, packed (flags | OMPF_LEAN_PACKED)
 * when it is 2; the others lean with flags, or all full when flags is 0;
 * all labels in one trie when share is 1, input 1's alone moved into one
 * when 2) into out; returns the first error code. */
/* release: through ompf_fuse_write_release, which must then have left
 * every lean input but the base run and a packed one without times. */
static int fuse_files_rel(const char *const *fp, int strategy, unsigned flags, int first_lean,
                          int share, int release, const char *out, ompf_error_t *err)
{
    ompf_profile_t *in[3] = {NULL, NULL, NULL}, *space;
    FZT_CHECK(ompf_profile_create(&space));
    int rc = 0;
    for (int i = 0; i < 3 && !rc; i++) {
        unsigned fl = !flags              ? 0
                      : i || first_lean == 1 ? flags
                      : first_lean == 2      ? flags | OMPF_LEAN_PACKED
                                             : 0;
        /* shared labels read into the trie (share 1: and input 1 moved
         * into it after a read of its own) */
        if (share == 1 && i != 1)
            rc = ompf_profile_read_into(fp[i], fl, space, &in[i], NULL, err);
        else
            rc = ompf_profile_read_into(fp[i], fl, NULL, &in[i], NULL, err);
        if (!rc && (share == 1 || share == 2) && i == 1)
            FZT_CHECK(ompf_profile_move_labels(in[i], space));
    }
    ompf_fuse_opts_t o;
    ompf_fuse_opts_init(&o);
    o.strategy = strategy;
    ompf_fuse_report_t *rep = NULL;
    if (!rc && !release)
        rc = ompf_fuse_write((const ompf_profile_t *const *)in, fp, 3, &o, out, &rep, err);
    if (!rc && release)
        rc = ompf_fuse_write_release(in, fp, 3, &o, out, &rep, err);
    for (int i = 0; i < 3 && !rc && release; i++) {
        unsigned lean = ompf_profile_lean(in[i]);
        int base = (uint32_t)i == ompf_fuse_report_order(rep)[0];
        if (lean && !(lean & OMPF_LEAN_PACKED) && !base) {
            assert_null(ompf_xu_view_u64(in[i], OMPF_XU_START).base);
            assert_null(ompf_xu_view_u64(in[i], OMPF_XU_END).base);
        } else if (lean & (OMPF_LEAN_START | OMPF_LEAN_TIMES)) {
            assert_non_null(ompf_xu_view_u64(in[i], OMPF_XU_START).base);
        }
    }
    ompf_fuse_report_destroy(rep);
    for (int i = 0; i < 3; i++)
        ompf_profile_destroy(in[i]);
    ompf_profile_destroy(space);
    return rc;
}

static int fuse_files(const char *const *fp, int strategy, unsigned flags, int first_lean,
                      int share, const char *out, ompf_error_t *err)
{
    return fuse_files_rel(fp, strategy, flags, first_lean, share, 0, out, err);
}

/* What combine does (lean inputs, the first packed, one shared label
 * trie) writes byte for byte what full inputs give, for every strategy,
 * and so does a full first input; an input lean in a way its role cannot
 * use is an error that says so. */
static void test_lean_inputs(void **state)
{
    (void)state;
    const char *fp[3] = {"lean_a.ompf", "lean_b.ompf", "lean_c.ompf"};
    ompf_error_t err;
    for (unsigned r = 0; r < 3; r++) {
        ompf_profile_t *p = make_run(r);
        assert_int_equal(ompf_profile_write(p, fp[r], &err), 0);
        ompf_profile_destroy(p);
    }
    static const int strat[] = {OMPF_FUSE_LGL, OMPF_FUSE_CTC, OMPF_FUSE_RANDOM,
                                OMPF_FUSE_BC, OMPF_FUSE_BC_UNLABELED};
    /* each strategy with the leanest reading it accepts, and with times */
    static const unsigned need[] = {OMPF_LEAN | OMPF_LEAN_START, OMPF_LEAN | OMPF_LEAN_TIMES,
                                    OMPF_LEAN, OMPF_LEAN, OMPF_LEAN};
    for (size_t s = 0; s < sizeof strat / sizeof *strat; s++) {
        assert_int_equal(fuse_files(fp, strat[s], 0, 0, 0, "lean_full.ompf", &err), 0);
        size_t la, lb;
        char *a = slurp("lean_full.ompf", &la);
        unsigned fl[2] = {need[s], OMPF_LEAN | OMPF_LEAN_TIMES};
        for (int k = 0; k < 4; k++)
            for (int share = 0; share < 3; share++) {
                int rc = fuse_files(fp, strat[s], fl[k / 2], k % 2 ? 2 : 0, share,
                                    "lean_lean.ompf", &err);
                if (rc)
                    fprintf(stderr, "%s: %s\n", ompf_fuse_strategy_name(strat[s]), err.msg);
                assert_int_equal(rc, 0);
                char *b = slurp("lean_lean.ompf", &lb);
                assert_int_equal(la, lb);
                assert_memory_equal(a, b, la);
                free(b);
                /* as combine calls it: the same bytes */
                if (share != 1)
                    continue;
                assert_int_equal(fuse_files_rel(fp, strat[s], fl[k / 2], k % 2 ? 2 : 0, share,
                                                1, "lean_lean.ompf", &err), 0);
                b = slurp("lean_lean.ompf", &lb);
                assert_int_equal(la, lb);
                assert_memory_equal(a, b, la);
                free(b);
            }
        free(a);
    }
    /* the first input lean; CTC without end times; LGL without starts */
    assert_int_equal(fuse_files(fp, OMPF_FUSE_BC, OMPF_LEAN, 1, 1, "lean_x.ompf", &err),
                     OMPF_EINVAL);
    assert_non_null(strstr(err.msg, "input 0 (lean_a.ompf) is lean: the first input"));
    assert_non_null(strstr(err.msg, "OMPF_LEAN_PACKED"));
    assert_int_equal(fuse_files(fp, OMPF_FUSE_CTC, OMPF_LEAN | OMPF_LEAN_START, 0, 1,
                                "lean_x.ompf", &err), OMPF_EINVAL);
    assert_non_null(strstr(err.msg, "input 1 (lean_b.ompf) is lean: CTC needs"));
    assert_int_equal(fuse_files(fp, OMPF_FUSE_LGL, OMPF_LEAN, 0, 1, "lean_x.ompf", &err),
                     OMPF_EINVAL);
    assert_non_null(strstr(err.msg, "input 1 (lean_b.ompf) is lean: LGL needs"));
    assert_int_equal(fuse_files(fp, OMPF_FUSE_LGL, OMPF_LEAN | 16u, 0, 1, "lean_x.ompf", &err),
                     OMPF_EINVAL); /* an unknown flag: the reader refuses it */
    assert_non_null(strstr(err.msg, "invalid flags"));
    assert_int_equal(access("lean_x.ompf", F_OK), -1);
    for (int r = 0; r < 3; r++)
        unlink(fp[r]);
    unlink("lean_full.ompf");
    unlink("lean_lean.ompf");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_equals_memory),
        cmocka_unit_test(test_lean_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
