/* XU parts in the file format (docs/format.md, PARTS): round trip through
 * both writers, a reader that does not know the chunk skips it, a
 * complete file whose parts do not match the XU's count is refused, parts
 * of XUs a file does not hold are ignored, truncation keeps one span;
 * many XUs' parts, shuffled over chunks, each XU's sorted back; a packed
 * read sealing XUs as their parts come; records
 * that differ between the reader's two decodes are refused. */
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

/* A writer on path with one event, two streams of cap bytes each
 * (0: the default), construct 3 and label 1 written. */
typedef struct {
    ompf_profile_t *h;
    ompf_writer_t *w;
    ompf_wstream_t *s[2];
} twostreams_t;

static void begin(twostreams_t *t, size_t cap)
{
    ompf_error_t err;
    assert_int_equal(ompf_profile_create(&t->h), 0);
    ompf_event_t e = {.name = "perf::TASK-CLOCK", .source = -1};
    assert_int_equal(ompf_event_add(t->h, &e, NULL), 0);
    assert_int_equal(ompf_writer_create(path, t->h, &t->w, &err), 0);
    assert_int_equal(ompf_wstream_create(t->w, cap, &t->s[0]), 0);
    assert_int_equal(ompf_wstream_create(t->w, cap, &t->s[1]), 0);
    ompf_construct_t c = {.module = "/bin/a", .build_id = "01", .offset = 9,
                          .kind = OMPF_CK_TASK};
    assert_int_equal(ompf_wstream_construct(t->s[0], 3, &c), 0);
    assert_int_equal(ompf_wstream_label(t->s[0], 1, 0, 5), 0);
}

/* The two threads' records, then the file. */
static void finish(twostreams_t *t)
{
    ompf_error_t err;
    ompf_thread_t t0 = {.index = 0, .os_tid = 1}, t1 = {.index = 1, .os_tid = 2};
    double z = 0, zz[4] = {0};
    t0.total = t0.gap = t0.enabled_ns = t0.running_ns = &z;
    t1.total = t1.gap = t1.enabled_ns = t1.running_ns = zz;
    assert_int_equal(ompf_wstream_thread(t->s[0], &t0), 0);
    assert_int_equal(ompf_wstream_thread(t->s[1], &t1), 0);
    assert_int_equal(ompf_writer_finish(t->w, t->h, &err), 0);
    ompf_profile_destroy(t->h);
}

/* A stream-written profile: XU 1 in parts a[0..na) (its count: count), XU 2
 * in one part; parts of XU 9, which is never written, when ghost. */
static void write_stream(const ompf_part_t *a, uint32_t na, uint32_t count, int ghost)
{
    twostreams_t t;
    begin(&t, 0);
    for (uint32_t k = 0; k < na; k++) /* each part in its thread's stream */
        assert_int_equal(ompf_wstream_part(t.s[a[k].thread & 1], 1, &a[k]), 0);
    if (ghost)
        assert_int_equal(ompf_wstream_part(t.s[1], 9, &a[0]), 0);
    ompf_xu_t x = {.id = 1, .thread = a[na - 1].thread, .parts = count, .kind = OMPF_XU_TASK,
                   .start_ns = a[0].start_ns, .end_ns = a[na - 1].end_ns};
    double v = 7;
    assert_int_equal(ompf_wstream_xu(t.s[0], &x, 3, 1, &v), 0);
    ompf_xu_t y = {.id = 2, .thread = 0, .parts = 1, .kind = OMPF_XU_TASK, .start_ns = 5,
                   .end_ns = 50};
    assert_int_equal(ompf_wstream_xu(t.s[1], &y, 3, 1, &v), 0);
    finish(&t);
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

/* Many XUs, their parts written in a shuffled order over two streams
 * that flush often (so one XU's parts sit in chunks far apart, before and
 * after it), with three id layouts: the tool's ((thread + 1) << 40 | n,
 * one id in 6 with parts), small dense ids, and ids spread over 64 bits
 * (the reader's id map leaves its direct tables for a hash).  Each XU
 * must get exactly its parts, ordered by start then end. */
typedef struct {
    uint64_t id;
    ompf_part_t part;
} tpart_t;

static uint64_t mix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int tpart_cmp(const void *a, const void *b)
{
    const tpart_t *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    if (x->part.start_ns != y->part.start_ns)
        return x->part.start_ns < y->part.start_ns ? -1 : 1;
    return (x->part.end_ns > y->part.end_ns) - (x->part.end_ns < y->part.end_ns);
}

enum { IDS_TOOL, IDS_DENSE, IDS_SPREAD };

static uint64_t xu_id_of(int layout, size_t i, uint64_t salt)
{
    switch (layout) {
    case IDS_TOOL: return (uint64_t)(i % 2 + 1) << 40 | (6 * (i / 2) + 5);
    case IDS_DENSE: return i + 1;
    default: {
        uint64_t s = salt + i;
        return mix64(&s) | 1;
    }
    }
}

static void check_many(int layout)
{
    enum { NXU = 6000 };
    uint64_t seed = 0xa11 + (uint64_t)layout;
    tpart_t *all = malloc(NXU * 6 * sizeof *all);
    uint32_t *count = calloc(NXU, sizeof *count);
    assert_non_null(all);
    assert_non_null(count);
    size_t na = 0;
    for (size_t i = 0; i < NXU; i++) {
        if (i % 3 == 0)
            continue; /* no parts */
        uint32_t k = 2 + (uint32_t)(mix64(&seed) % 4);
        count[i] = k;
        for (uint32_t j = 0; j < k; j++) {
            uint64_t st = 1000 + mix64(&seed) % 50; /* equal starts happen */
            all[na].id = xu_id_of(layout, i, 77);
            all[na].part = (ompf_part_t){(uint32_t)(mix64(&seed) % 2), st,
                                         st + 1 + j * 7 + mix64(&seed) % 5};
            na++;
        }
    }
    /* ghost parts: ids no XU has */
    for (size_t g = 0; g < 50; g++) {
        all[na].id = xu_id_of(layout, NXU + g, 77);
        all[na++].part = (ompf_part_t){0, 5, 9};
    }
    for (size_t i = na; i > 1; i--) { /* Fisher-Yates */
        size_t j = mix64(&seed) % i;
        tpart_t t = all[i - 1];
        all[i - 1] = all[j];
        all[j] = t;
    }
    twostreams_t t;
    begin(&t, 4096);
    ompf_wstream_t **s = t.s;
    double v = 7;
    size_t next_part = 0;
    for (size_t i = 0; i < NXU; i++) {
        /* half the parts before the XUs, the rest among them */
        for (; next_part < na && (next_part < na / 2 || next_part * NXU < na * i); next_part++)
            assert_int_equal(ompf_wstream_part(s[all[next_part].part.thread],
                                               all[next_part].id, &all[next_part].part),
                             0);
        ompf_xu_t x = {.id = xu_id_of(layout, i, 77), .thread = (uint32_t)(i % 2),
                       .parts = count[i] ? count[i] : 1, .kind = OMPF_XU_TASK,
                       .start_ns = 1000, .end_ns = 2000};
        assert_int_equal(ompf_wstream_xu(s[i % 2], &x, 3, 1, &v), 0);
    }
    for (; next_part < na; next_part++)
        assert_int_equal(ompf_wstream_part(s[all[next_part].part.thread], all[next_part].id,
                                           &all[next_part].part),
                         0);
    finish(&t);

    ompf_profile_t *p;
    ompf_error_t err;
    assert_int_equal(ompf_profile_read(path, &p, NULL, &err), 0);
    assert_int_equal(ompf_xu_count(p), NXU);
    qsort(all, na, sizeof *all, tpart_cmp); /* the oracle: by (id, start, end) */
    size_t checked = 0;
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        tpart_t key = {.id = x->id};
        size_t lo = 0, hi = na; /* first record of this id */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (all[mid].id < key.id)
                lo = mid + 1;
            else
                hi = mid;
        }
        uint32_t n;
        ompf_part_t one;
        const ompf_part_t *pt = ompf_xu_parts(p, i, &n, &one);
        size_t want = 0;
        while (lo + want < na && all[lo + want].id == x->id)
            want++;
        if (!want) {
            assert_false(ompf_xu_has_parts(p, i));
            continue;
        }
        assert_true(ompf_xu_has_parts(p, i));
        if (n != want)
            fail_msg("layout %d: XU id %llx has %u parts, expected %zu", layout,
                     (unsigned long long)x->id, n, want);
        for (size_t j = 0; j < want; j++)
            if (pt[j].thread != all[lo + j].part.thread ||
                pt[j].start_ns != all[lo + j].part.start_ns ||
                pt[j].end_ns != all[lo + j].part.end_ns)
                fail_msg("layout %d: XU id %llx part %zu is (%u, %llu, %llu), expected "
                         "(%u, %llu, %llu)", layout, (unsigned long long)x->id, j,
                         pt[j].thread, (unsigned long long)pt[j].start_ns,
                         (unsigned long long)pt[j].end_ns, all[lo + j].part.thread,
                         (unsigned long long)all[lo + j].part.start_ns,
                         (unsigned long long)all[lo + j].part.end_ns);
        checked++;
    }
    assert_int_equal(checked, NXU - NXU / 3);
    ompf_profile_destroy(p);
    free(all);
    free(count);
}

/* A packed read (combine's first input) seals each XU once its parts are
 * all in, and gives back the memory of those already sealed: parts
 * emitted as the tool does, on either stream, up to 3000 XUs before their
 * own, in enough chunks (23 MB of parts unpacked) that the sealing and the
 * giving back happen many times.  Every record and part matches the full
 * read, whose parts check_many checks against an oracle. */
static void write_tool_xu(twostreams_t *t, size_t x, const uint32_t *count)
{
    double v = 3;
    ompf_xu_t r = {.id = xu_id_of(IDS_TOOL, x, 0), .thread = (uint32_t)(x % 2),
                   .parts = count[x] ? count[x] : 1, .kind = OMPF_XU_TASK,
                   .start_ns = 10 * x, .end_ns = 10 * x + 2000};
    assert_int_equal(ompf_wstream_xu(t->s[x % 2], &r, 3, 1, &v), 0);
}

static void test_packed_as_parts_come(void **state)
{
    (void)state;
    enum { NXU = 400000, LAG = 3000 };
    uint64_t seed = 0x5ea1;
    /* XU i's parts, each due at a random XU in i .. i + LAG - 1: it goes
     * out then, and XU i's record only after all of them */
    tpart_t *all = malloc((size_t)NXU * 4 * sizeof *all);
    uint32_t *next = malloc((size_t)NXU * 4 * sizeof *next), *head = malloc(
                                                                (NXU + LAG) * sizeof *head);
    uint32_t *count = calloc(NXU, sizeof *count);
    assert_non_null(all);
    assert_non_null(next);
    assert_non_null(head);
    assert_non_null(count);
    memset(head, 0xff, (NXU + LAG) * sizeof *head);
    uint32_t np = 0;
    for (size_t i = 0; i < NXU; i++) {
        if (i % 5 == 0)
            continue; /* no parts */
        count[i] = 2 + (uint32_t)(mix64(&seed) % 3);
        for (uint32_t j = 0; j < count[i]; j++) {
            uint64_t st = 10 * i + mix64(&seed) % 1000;
            all[np].id = xu_id_of(IDS_TOOL, i, 0);
            all[np].part = (ompf_part_t){(uint32_t)(mix64(&seed) % 2), st, st + 1 + j};
            size_t due = i + mix64(&seed) % LAG;
            next[np] = head[due];
            head[due] = np++;
        }
    }
    twostreams_t t;
    begin(&t, 1 << 16);
    for (size_t i = 0; i < NXU + LAG; i++) {
        for (uint32_t k = head[i]; k != UINT32_MAX; k = next[k])
            assert_int_equal(ompf_wstream_part(t.s[all[k].part.thread], all[k].id,
                                               &all[k].part), 0);
        if (i >= LAG)
            write_tool_xu(&t, i - LAG, count);
    }
    finish(&t);

    ompf_profile_t *p, *q;
    ompf_error_t err;
    assert_int_equal(ompf_profile_read(path, &p, NULL, &err), 0);
    assert_int_equal(ompf_profile_read_into(path, OMPF_LEAN | OMPF_LEAN_START | OMPF_LEAN_PACKED,
                                            NULL, &q, NULL, &err), 0);
    assert_int_equal(ompf_xu_count(p), NXU);
    assert_int_equal(ompf_xu_count(q), NXU);
    assert_int_equal(ompf_part_count(p), np);
    assert_int_equal(ompf_part_count(q), np);
    ompf_part_t buf[8];
    for (size_t i = 0; i < NXU; i++) {
        ompf_xu_t a = *ompf_xu_get(p, i), b;
        assert_int_equal(ompf_xu_record(q, i, &b), 0);
        b.label = a.label; /* each profile's own trie */
        assert_memory_equal(&a, &b, sizeof a);
        uint32_t n, m;
        ompf_part_t one;
        const ompf_part_t *pt = ompf_xu_parts(p, i, &n, &one);
        assert_int_equal(ompf_xu_parts_copy(q, i, buf, 8, &m), 0);
        assert_int_equal(m, n);
        for (uint32_t k = 0; k < n; k++) { /* fields: ompf_xu_parts' one has no zeroed padding */
            assert_int_equal(pt[k].thread, buf[k].thread);
            assert_int_equal(pt[k].start_ns, buf[k].start_ns);
            assert_int_equal(pt[k].end_ns, buf[k].end_ns);
        }
        /* the record's XU (ids: xu_id_of, IDS_TOOL) had its count of parts */
        size_t x = 2 * (((a.id & 0xffffffffffull) - 5) / 6) + (a.id >> 40) - 1;
        assert_int_equal(n, count[x] ? count[x] : 1);
    }
    ompf_profile_destroy(p);
    ompf_profile_destroy(q);
    free(all);
    free(next);
    free(head);
    free(count);
}

static void test_many(void **state)
{
    (void)state;
    check_many(IDS_TOOL);
    check_many(IDS_DENSE);
    check_many(IDS_SPREAD);
}

/* An XU with np parts in one stream, many equal in start and end (told
 * apart by thread): sorted by start and end, equal ones in file order
 * (12 parts take the insertion sort, 40 qsort with the file position as
 * the last key); and a second XU with the same id gets no parts (the
 * first XU in record order takes them). */
static void check_ties(uint32_t np)
{
    ompf_part_t pt[40];
    assert_true(np <= 40);
    for (uint32_t j = 0; j < np; j++)
        pt[j] = (ompf_part_t){j % 2, 100 + (np - j) % 5, 110 + (np - j) % 5};
    twostreams_t t;
    begin(&t, 0);
    for (uint32_t j = 0; j < np; j++)
        assert_int_equal(ompf_wstream_part(t.s[0], 7, &pt[j]), 0);
    double v = 1;
    ompf_xu_t x = {.id = 7, .thread = 0, .parts = np, .kind = OMPF_XU_TASK, .start_ns = 100,
                   .end_ns = 120};
    assert_int_equal(ompf_wstream_xu(t.s[0], &x, 3, 1, &v), 0);
    assert_int_equal(ompf_wstream_xu(t.s[0], &x, 3, 1, &v), 0); /* the same id again */
    finish(&t);
    ompf_profile_t *p;
    ompf_error_t err;
    assert_int_equal(ompf_profile_read(path, &p, NULL, &err), 0);
    assert_int_equal(ompf_xu_count(p), 2);
    uint32_t n;
    ompf_part_t one;
    const ompf_part_t *got = ompf_xu_parts(p, 0, &n, &one);
    assert_int_equal(n, np);
    size_t k = 0;
    for (uint64_t st = 100; st < 105; st++) /* expected: by start, then write order */
        for (uint32_t j = 0; j < np; j++)
            if (pt[j].start_ns == st) {
                if (got[k].start_ns != st || got[k].end_ns != pt[j].end_ns ||
                    got[k].thread != pt[j].thread)
                    fail_msg("%u parts: part %zu is (%u, %llu), expected (%u, %llu) from "
                             "write position %u", np, k, got[k].thread,
                             (unsigned long long)got[k].start_ns, pt[j].thread,
                             (unsigned long long)st, j);
                k++;
            }
    assert_int_equal(k, np);
    assert_false(ompf_xu_has_parts(p, 1));
    ompf_profile_destroy(p);
}

static void test_ties_and_shared_id(void **state)
{
    (void)state;
    check_ties(12);
    check_ties(40);
}

/* The reader decodes the PARTS chunks twice: counted, then written into
 * their places.  Records that differ the second time (the file written
 * while it was read) are refused, a record too many before it could
 * write past its XU's places, too few before a place stays unfilled. */
static void fill_with(const uint64_t *ids, size_t n, int *fill_rc, int *order_rc)
{
    fmt_buf_t first = {0}, second = {0};
    ompf_part_t pt = {0, 10, 20};
    fmt_enc_part(&first, 1, &pt);
    fmt_enc_part(&first, 1, &pt); /* XU 1: two parts */
    fmt_enc_part(&first, 2, &pt);
    fmt_enc_part(&first, 2, &pt); /* XU 2: two parts */
    for (size_t k = 0; k < n; k++)
        fmt_enc_part(&second, ids[k], &pt);
    assert_false(first.oom || second.oom);
    ompf_profile_t *p;
    assert_int_equal(ompf_profile_create(&p), 0);
    ompf_construct_t c = {.module = "/bin/a", .build_id = "01", .offset = 9,
                          .kind = OMPF_CK_TASK};
    assert_int_equal(ompf_construct_add(p, &c, NULL), 0);
    for (uint64_t id = 1; id <= 2; id++) {
        ompf_xu_t x = {.id = id, .parts = 2, .kind = OMPF_XU_TASK, .start_ns = 10,
                       .end_ns = 20};
        assert_int_equal(ompf_xu_add(p, &x, NULL), 0);
    }
    fmt_parts_t ps;
    memset(&ps, 0, sizeof ps);
    const char *what = "";
    fmt_cur_t cur = {first.data, first.data + first.len, 0};
    assert_int_equal(fmt_parts_decode(&ps, &cur, 4, &what), 0);
    uint64_t dropped = 0;
    char msg[200];
    assert_int_equal(fmt_parts_claim(&ps, p, 0, &dropped, msg, sizeof msg), 0);
    cur = (fmt_cur_t){second.data, second.data + second.len, 0};
    *fill_rc = fmt_parts_fill(&ps, p, &cur, (uint32_t)n, &what);
    *order_rc = *fill_rc ? 0 : fmt_parts_order(&ps, p, 0, &what);
    if (*fill_rc || *order_rc)
        assert_non_null(strstr(what, "differ from those first read"));
    fmt_parts_free(&ps);
    fmt_buf_free(&first);
    fmt_buf_free(&second);
    ompf_profile_destroy(p);
}

static void test_changed_between_passes(void **state)
{
    (void)state;
    int f, o;
    static const uint64_t same[] = {2, 1, 2, 1}, more[] = {1, 1, 1, 2, 2},
                          fewer[] = {1, 2, 2}, ghost[] = {1, 1, 9, 2, 2};
    fill_with(same, 4, &f, &o); /* the same records in another order: fine */
    assert_int_equal(f, 0);
    assert_int_equal(o, 0);
    fill_with(more, 5, &f, &o);
    assert_int_equal(f, OMPF_EFORMAT);
    fill_with(fewer, 3, &f, &o);
    assert_int_equal(f, 0);
    assert_int_equal(o, OMPF_EFORMAT);
    fill_with(ghost, 5, &f, &o); /* a record of an id no XU has: skipped */
    assert_int_equal(f, 0);
    assert_int_equal(o, 0);
}

int main(void)
{
    char *dir = gen_tmpdir();
    snprintf(path, sizeof path, "%s/p.ompf", dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_unknown_skipped),
        cmocka_unit_test(test_mismatch),
        cmocka_unit_test(test_many),
        cmocka_unit_test(test_packed_as_parts_come),
        cmocka_unit_test(test_ties_and_shared_id),
        cmocka_unit_test(test_changed_between_passes),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    remove(path);
    gen_rmdir(dir);
    return rc;
}
