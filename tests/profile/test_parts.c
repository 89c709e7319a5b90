/* XU parts in the file format (docs/format.md, PARTS): round trip through
 * both writers, a reader that does not know the chunk skips it, a
 * complete file whose parts do not match the XU's count is refused, parts
 * of XUs a file does not hold are ignored, truncation keeps one span. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "fmt.h"
#include "gen.h"
#include "ompfuse/file.h"

static char path[1024];

/* A stream-written profile: XU 1 in parts a[0..na) (its count: count), XU 2
 * in one part; parts of XU 9, which is never written, when ghost. */
static void write_stream(const ompf_part_t *a, uint32_t na, uint32_t count, int ghost)
{
    ompf_profile_t *h;
    ompf_error_t err;
    assert_int_equal(ompf_profile_create(&h), 0);
    ompf_event_t e = {.name = "perf::TASK-CLOCK", .source = -1};
    assert_int_equal(ompf_event_add(h, &e, NULL), 0);
    ompf_writer_t *w;
    assert_int_equal(ompf_writer_create(path, h, &w, &err), 0);
    ompf_wstream_t *s[2];
    assert_int_equal(ompf_wstream_create(w, 0, &s[0]), 0);
    assert_int_equal(ompf_wstream_create(w, 0, &s[1]), 0);
    ompf_construct_t c = {.module = "/bin/a", .build_id = "01", .offset = 9,
                          .kind = OMPF_CK_TASK};
    assert_int_equal(ompf_wstream_construct(s[0], 3, &c), 0);
    for (uint32_t k = 0; k < na; k++) /* each part in its thread's stream */
        assert_int_equal(ompf_wstream_part(s[a[k].thread & 1], 1, &a[k]), 0);
    if (ghost)
        assert_int_equal(ompf_wstream_part(s[1], 9, &a[0]), 0);
    assert_int_equal(ompf_wstream_label(s[0], 1, 0, 5), 0);
    ompf_xu_t x = {.id = 1, .thread = a[na - 1].thread, .parts = count, .kind = OMPF_XU_TASK,
                   .start_ns = a[0].start_ns, .end_ns = a[na - 1].end_ns};
    double v = 7;
    assert_int_equal(ompf_wstream_xu(s[0], &x, 3, 1, &v), 0);
    ompf_xu_t y = {.id = 2, .thread = 0, .parts = 1, .kind = OMPF_XU_TASK, .start_ns = 5,
                   .end_ns = 50};
    assert_int_equal(ompf_wstream_xu(s[1], &y, 3, 1, &v), 0);
    ompf_thread_t t0 = {.index = 0, .os_tid = 1}, t1 = {.index = 1, .os_tid = 2};
    double z = 0, zz[4] = {0};
    t0.total = t0.gap = t0.enabled_ns = t0.running_ns = &z;
    t1.total = t1.gap = t1.enabled_ns = t1.running_ns = zz;
    assert_int_equal(ompf_wstream_thread(s[0], &t0), 0);
    assert_int_equal(ompf_wstream_thread(s[1], &t1), 0);
    assert_int_equal(ompf_writer_finish(w, h, &err), 0);
    ompf_profile_destroy(h);
}

static const ompf_part_t three[3] = {{0, 100, 130}, {1, 150, 170}, {0, 200, 260}};

static size_t find_xu(const ompf_profile_t *p, uint64_t id)
{
    for (size_t i = 0; i < ompf_xu_count(p); i++)
        if (ompf_xu_get(p, i)->id == id)
            return i;
    fail_msg("no XU %llu", (unsigned long long)id);
    return 0;
}

static void test_roundtrip(void **state)
{
    (void)state;
    write_stream(three, 3, 3, 1);
    ompf_profile_t *p;
    ompf_error_t err;
    assert_int_equal(ompf_profile_read(path, &p, NULL, &err), 0);
    size_t i = find_xu(p, 1), j = find_xu(p, 2);
    uint32_t n;
    ompf_part_t one;
    const ompf_part_t *pt = ompf_xu_parts(p, i, &n, &one);
    assert_true(ompf_xu_has_parts(p, i));
    assert_int_equal(n, 3);
    assert_memory_equal(pt, three, sizeof three); /* sorted back by start */
    assert_false(ompf_xu_has_parts(p, j));
    pt = ompf_xu_parts(p, j, &n, &one);
    assert_ptr_equal(pt, &one);
    assert_int_equal(n, 1);
    assert_true(one.thread == 0 && one.start_ns == 5 && one.end_ns == 50);
    assert_int_equal(ompf_part_count(p), 3);
    /* ompf_profile_write keeps them; compare checks every part */
    char p2[1100];
    snprintf(p2, sizeof p2, "%s.2", path);
    assert_int_equal(ompf_profile_write(p, p2, &err), 0);
    ompf_profile_t *q;
    assert_int_equal(ompf_profile_read(p2, &q, NULL, &err), 0);
    assert_int_equal(ompf_profile_compare(p, q, &err), 0);
    ompf_part_t moved[3];
    memcpy(moved, three, sizeof moved);
    moved[1].thread = 0;
    assert_int_equal(ompf_xu_set_parts(q, find_xu(q, 1), moved, 3), 0);
    assert_int_not_equal(ompf_profile_compare(p, q, &err), 0);
    assert_int_equal(ompf_xu_set_parts(q, ompf_xu_count(q), moved, 3), OMPF_ERANGE);
    ompf_profile_destroy(q);
    ompf_profile_destroy(p);
    remove(p2);
}

/* Renames every PARTS chunk to type 99 (a type no reader knows), fixing
 * its CRC: a reader without PARTS sees exactly this. */
static void test_unknown_skipped(void **state)
{
    (void)state;
    write_stream(three, 3, 3, 0);
    size_t len;
    unsigned char *b = gen_slurp(path, &len);
    int renamed = 0;
    for (size_t off = FMT_HEADER_SIZE; off + FMT_CHUNK_HEADER_SIZE <= len;) {
        fmt_chunk_hdr_t h;
        fmt_chunk_hdr_parse(b + off, &h);
        if (h.type == FMT_CHUNK_PARTS) {
            assert_true(h.flags & FMT_CF_SKIPPABLE);
            fmt_put_u32(b + off, 99);
            fmt_put_u32(b + off + 28, fmt_chunk_crc(b + off, b + off + FMT_CHUNK_HEADER_SIZE,
                                                    h.stored));
            renamed++;
        }
        off += FMT_CHUNK_HEADER_SIZE + h.stored;
    }
    assert_true(renamed >= 2); /* one per stream */
    ompf_profile_t *p;
    ompf_error_t err;
    assert_int_equal(ompf_profile_read_mem(b, len, "x", &p, NULL, &err), 0);
    size_t i = find_xu(p, 1);
    assert_false(ompf_xu_has_parts(p, i));
    assert_int_equal(ompf_xu_get(p, i)->parts, 3); /* the count, as before */
    ompf_profile_destroy(p);
    free(b);
}

static void test_mismatch(void **state)
{
    (void)state;
    write_stream(three, 2, 3, 0); /* 2 parts recorded, count 3 */
    ompf_profile_t *p;
    ompf_error_t err;
    assert_int_equal(ompf_profile_read(path, &p, NULL, &err), OMPF_EFORMAT);
    assert_non_null(strstr(err.msg, "has 2 parts recorded but a parts count of 3"));
    /* the same file cut before its END chunk: XU 1 keeps one span */
    size_t len;
    unsigned char *b = gen_slurp(path, &len);
    ompf_read_info_t info;
    assert_int_equal(ompf_profile_read_mem(b, len - 1, "x", &p, &info, &err), OMPF_ETRUNC);
    size_t i = find_xu(p, 1);
    assert_false(ompf_xu_has_parts(p, i));
    assert_non_null(strstr(info.note, "1 XUs lost some parts"));
    ompf_profile_destroy(p);
    free(b);
}

int main(void)
{
    char *dir = gen_tmpdir();
    snprintf(path, sizeof path, "%s/p.ompf", dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_unknown_skipped),
        cmocka_unit_test(test_mismatch),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    remove(path);
    gen_rmdir(dir);
    return rc;
}
