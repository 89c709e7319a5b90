/* Malformed inputs, table-driven (in the manner of libpfm4's validation
 * tests): each case builds or mutates a file, and states the error code and
 * a fragment of the message the reader must give.  No case may crash, leak
 * or return a profile.  One file over 600 lines: it is one table, and the
 * cases are read together. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fbuild.h"
#include "fmt.h"
#include "gen.h"
#include "ompfuse/file.h"

/* ---- a valid base file and raw mutations ------------------------------ */

static unsigned char *base;
static size_t base_len;


static bytes_t copy_base(void)
{
    bytes_t b = {malloc(base_len + 64), base_len};
    memcpy(b.d, base, base_len);
    return b;
}

/* Offset of chunk i (0-based) of a well-formed file. */
static size_t chunk_off(const bytes_t *b, int i)
{
    size_t off = FMT_HEADER_SIZE;
    for (; i > 0; i--)
        off += FMT_CHUNK_HEADER_SIZE + fmt_get_u64(b->d + off + 8);
    return off;
}

static size_t find_chunk(const bytes_t *b, uint32_t type)
{
    size_t off = FMT_HEADER_SIZE;
    while (off < b->n && fmt_get_u32(b->d + off) != type)
        off += FMT_CHUNK_HEADER_SIZE + fmt_get_u64(b->d + off + 8);
    assert_true(off < b->n);
    return off;
}

static void fix_crc(bytes_t *b, size_t off)
{
    fmt_put_u32(b->d + off + 28,
                fmt_chunk_crc(b->d + off, b->d + off + FMT_CHUNK_HEADER_SIZE,
                              fmt_get_u64(b->d + off + 8)));
}

static void fix_header_crc(bytes_t *b)
{
    fmt_put_u32(b->d + 28, fmt_chunk_crc(b->d, NULL, 0));
}

static bytes_t m_empty(void) { bytes_t b = copy_base(); b.n = 0; return b; }
static bytes_t m_magic(void) { bytes_t b = copy_base(); b.d[1] = 'X'; return b; }
static bytes_t m_text(void)
{
    bytes_t b = {(unsigned char *)strdup("xu,type,kind\n1,a,task\n"), 22};
    return b;
}
static bytes_t m_short_header(void) { bytes_t b = copy_base(); b.n = 20; return b; }
static bytes_t m_magic_only(void) { bytes_t b = copy_base(); b.n = 5; return b; }
static bytes_t m_newer(void)
{
    bytes_t b = copy_base();
    fmt_put_u32(b.d + 8, OMPF_FORMAT_VERSION + 1);
    fix_header_crc(&b);
    return b;
}
static bytes_t m_version0(void)
{
    bytes_t b = copy_base();
    fmt_put_u32(b.d + 8, 0);
    fix_header_crc(&b);
    return b;
}
static bytes_t m_header_crc(void) { bytes_t b = copy_base(); b.d[20] ^= 1; return b; }
static bytes_t m_header_size(void)
{
    bytes_t b = copy_base();
    fmt_put_u32(b.d + 12, 48);
    fix_header_crc(&b);
    return b;
}
static bytes_t m_payload_flip(void)
{
    bytes_t b = copy_base();
    size_t off = find_chunk(&b, FMT_CHUNK_XUS);
    b.d[off + FMT_CHUNK_HEADER_SIZE + 3] ^= 0x40;
    return b;
}
static bytes_t m_chunk_header_flip(void)
{
    bytes_t b = copy_base();
    size_t off = chunk_off(&b, 1);
    b.d[off + 24] ^= 0x01; /* record count */
    return b;
}
static bytes_t m_absurd_stored(void)
{
    bytes_t b = copy_base();
    size_t off = chunk_off(&b, 2);
    fmt_put_u64(b.d + off + 8, 1ULL << 40);
    return b;
}
static bytes_t m_absurd_raw(void)
{
    bytes_t b = copy_base();
    size_t off = find_chunk(&b, FMT_CHUNK_XUS);
    fmt_put_u64(b.d + off + 16, 1ULL << 33);
    fix_crc(&b, off);
    return b;
}
static bytes_t m_raw_ne_stored(void)
{
    bytes_t b = copy_base();
    size_t off = chunk_off(&b, 0); /* META, stored raw */
    assert_int_equal(fmt_get_u32(b.d + off + 4) & FMT_CF_ZSTD, 0);
    fmt_put_u64(b.d + off + 16, fmt_get_u64(b.d + off + 8) + 1);
    fix_crc(&b, off);
    return b;
}
static bytes_t m_unknown_flags(void)
{
    bytes_t b = copy_base();
    size_t off = chunk_off(&b, 1);
    fmt_put_u32(b.d + off + 4, fmt_get_u32(b.d + off + 4) | 0x100);
    fix_crc(&b, off);
    return b;
}
static bytes_t m_unknown_type(void)
{
    bytes_t b = copy_base();
    size_t off = chunk_off(&b, 1);
    fmt_put_u32(b.d + off, 99);
    fix_crc(&b, off);
    return b;
}
static bytes_t m_trailing(void)
{
    bytes_t b = copy_base();
    memcpy(b.d + b.n, "garbage", 7);
    b.n += 7;
    return b;
}
static bytes_t m_count_absurd(void)
{
    bytes_t b = copy_base();
    size_t off = find_chunk(&b, FMT_CHUNK_CONSTRUCTS);
    fmt_put_u32(b.d + off + 24, 0xfffffff0u);
    fix_crc(&b, off);
    return b;
}
static bytes_t m_xu_count_absurd(void)
{
    bytes_t b = copy_base();
    size_t off = find_chunk(&b, FMT_CHUNK_XUS);
    /* version 2: constant columns take no bytes, the count has a limit */
    fmt_put_u32(b.d + off + 24, FMT_MAX_COLUMN_RECORDS + 1);
    fix_crc(&b, off);
    return b;
}
static bytes_t m_xu_count_wrong(void)
{
    bytes_t b = copy_base();
    size_t off = find_chunk(&b, FMT_CHUNK_XUS);
    fmt_put_u32(b.d + off + 24, fmt_get_u32(b.d + off + 24) - 1);
    fix_crc(&b, off);
    return b;
}

/* ---- crafted files ----------------------------------------------------- */

static bytes_t c_valid(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{2, 1, 7}, {1, 0, 3}}; /* parent defined after child */
    fb_labels(&f, l, 2);
    fb_xu(&f, 1, 2, 0, OMPF_XU_TASK);
    return fb_done(&f);
}
static bytes_t c_skippable(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_buf_str(&f.pl, "from the future");
    fmt_buf_t c = {0};
    assert_int_equal(fmt_chunk_build(&c, 77, 1, &f.pl, NULL, 0), 0);
    fmt_put_u32(c.data + 4, FMT_CF_SKIPPABLE);
    fmt_put_u32(c.data + 28, fmt_chunk_crc(c.data, c.data + 32, c.len - 32));
    fmt_buf_bytes(&f.b, c.data, c.len);
    fmt_buf_free(&c);
    f.pl.len = 0;
    f.chunks++;
    fb_xu(&f, 1, 0, 0, OMPF_XU_TASK);
    return fb_done(&f);
}
static bytes_t c_label_cycle(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{5, 6, 1}, {6, 7, 1}, {7, 5, 1}};
    fb_labels(&f, l, 3);
    return fb_done(&f);
}
static bytes_t c_label_self(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{9, 9, 1}};
    fb_labels(&f, l, 1);
    return fb_done(&f);
}
static bytes_t c_label_dangling(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{3, 0, 1}, {4, 1234, 1}};
    fb_labels(&f, l, 2);
    return fb_done(&f);
}
static bytes_t c_label_zero(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{0, 0, 1}};
    fb_labels(&f, l, 1);
    return fb_done(&f);
}
static bytes_t c_label_dup(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{3, 0, 1}};
    fmt_label_rec_t m[] = {{3, 0, 2}};
    fb_labels(&f, l, 1);
    fb_labels(&f, m, 1);
    return fb_done(&f);
}
static bytes_t c_label_dup_same(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{3, 0, 1}};
    fb_labels(&f, l, 1);
    fb_labels(&f, l, 1);
    fb_xu(&f, 1, 3, 0, OMPF_XU_TASK);
    return fb_done(&f);
}
/* One label under ids 1 and 2, and id 3 named under each: one label. */
static bytes_t c_label_dup_equal_parent(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{1, 0, 5}, {2, 0, 5}, {3, 1, 9}, {3, 2, 9}};
    fb_labels(&f, l, 4);
    fb_xu(&f, 1, 3, 0, OMPF_XU_TASK);
    return fb_done(&f);
}
static bytes_t c_label_dup_other_parent(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{1, 0, 5}, {2, 0, 6}, {3, 1, 9}, {3, 2, 9}};
    fb_labels(&f, l, 4);
    return fb_done(&f);
}
/* id 4 waits for id 5, is defined again meanwhile under the root */
static bytes_t c_label_dup_waiting(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{4, 5, 1}, {4, 0, 2}, {5, 0, 1}};
    fb_labels(&f, l, 3);
    return fb_done(&f);
}
static bytes_t c_label_dangling_waiting(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{4, 5, 1}, {5, 1234, 1}};
    fb_labels(&f, l, 2);
    return fb_done(&f);
}
/* a chain one deeper than the limit, its deepest label first */
static bytes_t c_label_deep_waiting(void)
{
    fb_t f;
    fb_prefix(&f);
    uint32_t n = OMPF_MAX_LABEL_DEPTH + 1;
    fmt_label_rec_t *l = malloc(n * sizeof *l);
    for (uint32_t i = 0; i < n; i++)
        l[i] = (fmt_label_rec_t){n - i, n - i - 1, 1};
    fb_labels(&f, l, n);
    free(l);
    return fb_done(&f);
}
static bytes_t c_xu_dangling_construct(void)
{
    fb_t f;
    fb_prefix(&f);
    fb_xu(&f, 99, 0, 0, OMPF_XU_TASK);
    return fb_done(&f);
}
static bytes_t c_xu_dangling_label(void)
{
    fb_t f;
    fb_prefix(&f);
    fb_xu(&f, 1, 55, 0, OMPF_XU_TASK);
    return fb_done(&f);
}
static bytes_t c_xu_thread(void)
{
    fb_t f;
    fb_prefix(&f);
    fb_xu(&f, 1, 0, 1, OMPF_XU_TASK);
    return fb_done(&f);
}
static bytes_t c_xu_kind(void)
{
    fb_t f;
    fb_prefix(&f);
    fb_xu(&f, 1, 0, 0, OMPF_XU_KIND_COUNT);
    return fb_done(&f);
}
static bytes_t c_xu_nev(void)
{
    fb_t f;
    fb_prefix(&f);
    fb_xu_ev(&f, 1, 0, 0, OMPF_XU_TASK, 2);
    return fb_done(&f);
}
static bytes_t c_construct_kind(void)
{
    fb_t f;
    fb_prefix(&f);
    fb_construct(&f, 2, 0x20, OMPF_CK_COUNT + 3);
    fb_chunk(&f, FMT_CHUNK_CONSTRUCTS, 1);
    return fb_done(&f);
}
static bytes_t c_construct_dup(void)
{
    fb_t f;
    fb_prefix(&f);
    fb_construct(&f, 1, 0x99, OMPF_CK_TASK);
    fb_chunk(&f, FMT_CHUNK_CONSTRUCTS, 1);
    return fb_done(&f);
}
static bytes_t c_event_status(void)
{
    fb_t f;
    fb_init(&f);
    fb_event(&f, "cycles", 17, -1);
    fb_chunk(&f, FMT_CHUNK_EVENTS, 1);
    return fb_done(&f);
}
static bytes_t c_event_source(void)
{
    fb_t f;
    fb_init(&f);
    fb_event(&f, "cycles", 0, 3);
    fb_chunk(&f, FMT_CHUNK_EVENTS, 1);
    return fb_done(&f);
}
static bytes_t c_event_rename(void)
{
    fb_t f;
    fb_prefix(&f);
    fb_event(&f, "instructions", 1, -1);
    fb_chunk(&f, FMT_CHUNK_EVENTS, 1);
    return fb_done(&f);
}
static bytes_t c_event_dup(void)
{
    fb_t f;
    fb_init(&f);
    fb_event(&f, "cycles", 0, -1);
    fb_event(&f, "cycles", 0, -1);
    fb_chunk(&f, FMT_CHUNK_EVENTS, 2);
    return fb_done(&f);
}
static bytes_t c_thread_dup(void)
{
    fb_t f;
    fb_prefix(&f);
    fb_thread(&f, 0, 1);
    fb_chunk(&f, FMT_CHUNK_THREADS, 1);
    return fb_done(&f);
}
static bytes_t c_thread_gap(void)
{
    fb_t f;
    fb_prefix(&f);
    fb_thread(&f, 1000000, 1);
    fb_chunk(&f, FMT_CHUNK_THREADS, 1);
    return fb_done(&f);
}
static bytes_t c_thread_nev(void)
{
    fb_t f;
    fb_prefix(&f);
    fb_thread(&f, 1, 3);
    fb_chunk(&f, FMT_CHUNK_THREADS, 1);
    return fb_done(&f);
}
static bytes_t c_end_xus(void)
{
    fb_t f;
    fb_prefix(&f);
    fb_xu(&f, 1, 0, 0, OMPF_XU_TASK);
    f.xus = 5;
    return fb_done(&f);
}
static bytes_t c_end_chunks(void)
{
    fb_t f;
    fb_prefix(&f);
    f.chunks += 2;
    return fb_done(&f);
}
static bytes_t c_string_past_end(void)
{
    fb_t f;
    fb_init(&f);
    fmt_buf_uv(&f.pl, 100);
    fmt_buf_bytes(&f.pl, "abc", 3);
    fb_chunk(&f, FMT_CHUNK_META, 1);
    return fb_done(&f);
}
static bytes_t c_string_nul(void)
{
    fb_t f;
    fb_init(&f);
    fmt_buf_uv(&f.pl, 3);
    fmt_buf_bytes(&f.pl, "a\0c", 3);
    fmt_buf_str(&f.pl, "v");
    fb_chunk(&f, FMT_CHUNK_META, 1);
    return fb_done(&f);
}
static bytes_t c_extra_bytes(void)
{
    fb_t f;
    fb_init(&f);
    fmt_buf_bytes(&f.pl, "xyz", 3);
    fb_chunk(&f, FMT_CHUNK_META, 0);
    return fb_done(&f);
}
static bytes_t c_long_varint(void)
{
    fb_t f;
    fb_init(&f);
    for (int i = 0; i < 11; i++)
        fmt_buf_bytes(&f.pl, "\xff", 1);
    fmt_buf_bytes(&f.pl, "\x01", 1);
    fb_chunk(&f, FMT_CHUNK_META, 1);
    return fb_done(&f);
}
static bytes_t c_bad_value_tag(void)
{
    fb_t f;
    fb_prefix(&f);
    /* A thread whose first value has the reserved tag 3. */
    fmt_buf_uv(&f.pl, 1);
    fmt_buf_sv(&f.pl, 1);
    fmt_buf_uv(&f.pl, 1);
    fmt_buf_uv(&f.pl, 3);
    for (int k = 0; k < 3; k++)
        fmt_buf_value(&f.pl, 1);
    fb_chunk(&f, FMT_CHUNK_THREADS, 1);
    return fb_done(&f);
}
static bytes_t c_zstd_lies(void)
{
    fb_t f;
    fb_init(&f);
    for (int i = 0; i < 50; i++) {
        fmt_buf_str(&f.pl, "key");
        fmt_buf_str(&f.pl, "value value value");
    }
    fmt_buf_t c = {0};
    assert_int_equal(fmt_chunk_build(&c, FMT_CHUNK_META, 50, &f.pl, NULL, 1), 0);
    assert_true(fmt_get_u32(c.data + 4) & FMT_CF_ZSTD);
    fmt_put_u64(c.data + 16, fmt_get_u64(c.data + 16) + 10);
    fmt_put_u32(c.data + 28, fmt_chunk_crc(c.data, c.data + 32, c.len - 32));
    fmt_buf_bytes(&f.b, c.data, c.len);
    fmt_buf_free(&c);
    f.pl.len = 0;
    f.chunks++;
    return fb_done(&f);
}
static bytes_t c_zstd_garbage(void)
{
    fb_t f;
    fb_init(&f);
    /* A zstd frame header announcing 200 bytes, then garbage. */
    static const unsigned char frame[] = {0x28, 0xb5, 0x2f, 0xfd, 0x20, 200, 0xde, 0xad,
                                          0xbe, 0xef, 0x00, 0x11, 0x22, 0x33};
    unsigned char h[FMT_CHUNK_HEADER_SIZE];
    fmt_put_u32(h, FMT_CHUNK_META);
    fmt_put_u32(h + 4, FMT_CF_ZSTD);
    fmt_put_u64(h + 8, sizeof frame);
    fmt_put_u64(h + 16, 200);
    fmt_put_u32(h + 24, 1);
    fmt_put_u32(h + 28, fmt_chunk_crc(h, frame, sizeof frame));
    fmt_buf_bytes(&f.b, h, sizeof h);
    fmt_buf_bytes(&f.b, frame, sizeof frame);
    f.chunks++;
    return fb_done(&f);
}

typedef struct mcase {
    const char *what;
    bytes_t (*make)(void);
    int code;
    const char *fragment;
} mcase_t;

/* Version 2 PATHS chunk, hand-made: record A = nodes 10 (parent 0, comp
 * 3) and 11 (comp 7); record B = node 20 (parent 11, comp 9).  Columns:
 * n, first (delta), parent (delta), components at positions 0..3 (delta
 * over the records that have them); each a mode (0: every item) then the
 * items.  n_a/n_b set the node counts, mode_n the n column's mode. */
static bytes_t paths_file(uint64_t n_a, uint64_t n_b, uint64_t mode_n, uint32_t version)
{
    fb_t f;
    fb_prefix(&f);
    fmt_buf_uv(&f.pl, mode_n);
    fmt_buf_uv(&f.pl, n_a);
    fmt_buf_uv(&f.pl, n_b);
    fmt_buf_uv(&f.pl, 0);
    fmt_buf_sv(&f.pl, 10);
    fmt_buf_sv(&f.pl, 10);
    fmt_buf_uv(&f.pl, 0);
    fmt_buf_sv(&f.pl, 0);
    fmt_buf_sv(&f.pl, 11);
    fmt_buf_uv(&f.pl, 0); /* position 0: both records */
    fmt_buf_sv(&f.pl, 3);
    fmt_buf_sv(&f.pl, 6);
    fmt_buf_uv(&f.pl, 0); /* position 1: record A */
    fmt_buf_sv(&f.pl, 7);
    fmt_buf_uv(&f.pl, 0);
    fmt_buf_uv(&f.pl, 0);
    fb_chunk(&f, FMT_CHUNK_PATHS, 2);
    fb_xu(&f, 1, 20, 0, OMPF_XU_TASK);
    bytes_t b = fb_done(&f);
    fmt_put_u32(b.d + 8, version);
    fix_header_crc(&b);
    return b;
}
static bytes_t c_paths_valid(void) { return paths_file(2, 1, 0, 2); }
static bytes_t c_paths_empty(void) { return paths_file(2, 0, 0, 2); }
static bytes_t c_paths_long(void) { return paths_file(5, 1, 0, 2); }
static bytes_t c_paths_mode(void) { return paths_file(2, 1, 2, 2); }
static bytes_t c_paths_v1(void) { return paths_file(2, 1, 0, 1); }
/* A version 1 file (XUS columns without modes) is still read. */
static bytes_t c_version1(void)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{2, 0, 7}};
    fb_labels(&f, l, 1);
    fmt_buf_uv(&f.pl, 1); /* events */
    fmt_buf_uv(&f.pl, 0); /* sources */
    static const int64_t sv[15] = {1, 1, 2, 0, 0, 1, 1, -1, -1, -1, 0, 100, 5, 0, 0};
    for (int k = 0; k < 15; k++)
        if (k == 7 || k == 8 || k == 9 || k == 11 || k == 12 || k <= 2 || k == 13)
            fmt_buf_sv(&f.pl, sv[k]);
        else
            fmt_buf_uv(&f.pl, (uint64_t)sv[k]);
    fmt_buf_value(&f.pl, 5);
    fb_chunk(&f, FMT_CHUNK_XUS, 1);
    f.xus++;
    bytes_t b = fb_done(&f);
    fmt_put_u32(b.d + 8, 1);
    fix_header_crc(&b);
    return b;
}

/* One XU (id 1) with value v, then an EXACT chunk of n records. */
static bytes_t exact_file(double v, const fmt_exact_rec_t *r, size_t n)
{
    fb_t f;
    fb_prefix(&f);
    ompf_xu_t x = {.id = 1, .parts = 1, .kind = OMPF_XU_TASK, .cpu = -1, .core = -1,
                   .numa = -1};
    fmt_xu_row_t row = {.xu = &x, .cid = 1, .lid = 0, .values = &v};
    fmt_enc_xus(&f.pl, &row, 1, 1, 0);
    fb_chunk(&f, FMT_CHUNK_XUS, 1);
    f.xus++;
    for (size_t i = 0; i < n; i++) {
        fmt_buf_uv(&f.pl, r[i].xu);
        fmt_buf_uv(&f.pl, r[i].event);
        fmt_buf_uv(&f.pl, r[i].value);
    }
    fb_chunk(&f, FMT_CHUNK_EXACT, (uint32_t)n);
    return fb_done(&f);
}
#define P53 9007199254740992ull
static bytes_t c_exact_valid(void)
{
    fmt_exact_rec_t r[] = {{1, 0, P53 + 1}};
    return exact_file((double)P53, r, 1);
}
static bytes_t c_exact_holdable(void)
{
    fmt_exact_rec_t r[] = {{1, 0, P53 + 2}};
    return exact_file((double)(P53 + 2), r, 1);
}
static bytes_t c_exact_disagrees(void)
{
    fmt_exact_rec_t r[] = {{1, 0, P53 + 1}};
    return exact_file(5, r, 1);
}
static bytes_t c_exact_no_xu(void)
{
    fmt_exact_rec_t r[] = {{2, 0, P53 + 1}};
    return exact_file((double)P53, r, 1);
}
static bytes_t c_exact_no_event(void)
{
    fmt_exact_rec_t r[] = {{1, 1, P53 + 1}};
    return exact_file((double)P53, r, 1);
}
static bytes_t c_exact_twice(void)
{
    fmt_exact_rec_t r[] = {{1, 0, P53 + 1}, {1, 0, P53 + 1}};
    return exact_file((double)P53, r, 2);
}
/* n records announced, one there (10 bytes: 4 records cannot fit). */
static bytes_t exact_short(uint32_t n)
{
    fmt_exact_rec_t r[] = {{1, 0, P53 + 1}};
    bytes_t b = exact_file((double)P53, r, 1);
    size_t off = find_chunk(&b, FMT_CHUNK_EXACT);
    fmt_put_u32(b.d + off + 24, n);
    fix_crc(&b, off);
    return b;
}
static bytes_t c_exact_short(void) { return exact_short(2); }
static bytes_t c_exact_absurd(void) { return exact_short(4); }

static const mcase_t cases[] = {
    {"exact count", c_exact_valid, 0, NULL},
    {"exact count a double holds", c_exact_holdable, OMPF_EFORMAT, "is one a value holds"},
    {"exact count disagrees", c_exact_disagrees, OMPF_EFORMAT,
     "exact count 9007199254740993 disagrees with the value"},
    {"exact count of no XU", c_exact_no_xu, OMPF_EFORMAT, "refers to XU id 2, which is not"},
    {"exact count of no event", c_exact_no_event, OMPF_EFORMAT, "names no event"},
    {"exact count twice", c_exact_twice, OMPF_EFORMAT, "has two exact counts"},
    {"exact records short", c_exact_short, OMPF_EFORMAT, "runs past the end"},
    {"exact records beyond the payload", c_exact_absurd, OMPF_EFORMAT, "runs past the end"},
    {"version 2 label paths", c_paths_valid, 0, NULL},
    {"version 1 file", c_version1, 0, NULL},
    {"label path of 0 nodes", c_paths_empty, OMPF_EFORMAT, "has 0 nodes"},
    {"label path of 5 nodes", c_paths_long, OMPF_EFORMAT, "has 5 nodes"},
    {"column mode 2", c_paths_mode, OMPF_EFORMAT, "runs past the end"},
    {"PATHS in a version 1 file", c_paths_v1, OMPF_EFORMAT, "unknown chunk type 9"},
    {"crafted valid file (parent after child)", c_valid, 0, NULL},
    {"unknown skippable chunk", c_skippable, 0, NULL},
    {"identical duplicate label", c_label_dup_same, 0, NULL},
    {"label redefined under an equal parent", c_label_dup_equal_parent, 0, NULL},
    {"label redefined under another parent", c_label_dup_other_parent, OMPF_EFORMAT,
     "label id 3 is defined twice, as two different labels"},
    {"waiting label redefined", c_label_dup_waiting, OMPF_EFORMAT,
     "label id 4 is defined twice, as two different labels"},
    {"waiting label, dangling parent", c_label_dangling_waiting, OMPF_EFORMAT,
     "label id 5 has parent id 1234, which is not defined"},
    {"label too deep, deepest first", c_label_deep_waiting, OMPF_ERANGE,
     "is deeper than"},
    {"empty file", m_empty, OMPF_EFORMAT, "the file is empty"},
    {"wrong magic", m_magic, OMPF_EFORMAT, "wrong magic number"},
    {"a CSV file", m_text, OMPF_EFORMAT, "not an ompfuse profile"},
    {"truncated header", m_short_header, OMPF_EFORMAT, "truncated header"},
    {"only part of the magic", m_magic_only, OMPF_EFORMAT, "truncated header"},
    {"newer version", m_newer, OMPF_EVERSION, "upgrade ompfuse"},
    {"version 0", m_version0, OMPF_EFORMAT, "version 0"},
    {"header checksum", m_header_crc, OMPF_ECHECKSUM, "header checksum mismatch"},
    {"header size", m_header_size, OMPF_EFORMAT, "unknown header size"},
    {"payload bit flip", m_payload_flip, OMPF_ECHECKSUM, "checksum mismatch"},
    {"chunk header bit flip", m_chunk_header_flip, OMPF_ECHECKSUM, "checksum mismatch"},
    {"absurd stored size", m_absurd_stored, OMPF_ERANGE, "absurd chunk size"},
    {"absurd decoded size", m_absurd_raw, OMPF_ERANGE, "absurd chunk size"},
    {"raw size differs from stored", m_raw_ne_stored, OMPF_EFORMAT, "different stored"},
    {"unknown flags", m_unknown_flags, OMPF_EFORMAT, "unknown chunk flags"},
    {"unknown chunk type", m_unknown_type, OMPF_EFORMAT, "unknown chunk type 99"},
    {"bytes after END", m_trailing, OMPF_EFORMAT, "7 bytes follow the END chunk"},
    {"absurd record count", m_count_absurd, OMPF_ERANGE, "absurd record count"},
    {"absurd XU count", m_xu_count_absurd, OMPF_ERANGE, "absurd XU count"},
    {"XU count one short", m_xu_count_wrong, OMPF_EFORMAT, "END says 50 XUs"},
    {"label cycle", c_label_cycle, OMPF_EFORMAT, "form a cycle"},
    {"label its own parent", c_label_self, OMPF_EFORMAT, "form a cycle through id 9"},
    {"dangling label parent", c_label_dangling, OMPF_EFORMAT, "parent id 1234"},
    {"label id 0", c_label_zero, OMPF_EFORMAT, "reserved for the root"},
    {"label redefined", c_label_dup, OMPF_EFORMAT, "label id 3 is defined twice"},
    {"XU with unknown construct", c_xu_dangling_construct, OMPF_EFORMAT,
     "construct id 99, which is not defined (dangling id)"},
    {"XU with unknown label", c_xu_dangling_label, OMPF_EFORMAT,
     "label id 55, which is not defined (dangling id)"},
    {"XU thread out of range", c_xu_thread, OMPF_ERANGE, "refers to thread 1"},
    {"XU kind out of range", c_xu_kind, OMPF_ERANGE, "out-of-range field (kind 6"},
    {"XU value count", c_xu_nev, OMPF_EFORMAT, "carry 2 values each"},
    {"construct kind", c_construct_kind, OMPF_ERANGE, "construct id 2 has kind 12"},
    {"construct redefined", c_construct_dup, OMPF_EFORMAT, "construct id 1 is defined twice"},
    {"event status", c_event_status, OMPF_ERANGE, "status 17"},
    {"event source", c_event_source, OMPF_ERANGE, "refers to source 3"},
    {"event renamed", c_event_rename, OMPF_EFORMAT, "first EVENTS chunk named it 'cycles'"},
    {"event twice", c_event_dup, OMPF_EFORMAT, "duplicate name"},
    {"thread twice", c_thread_dup, OMPF_EFORMAT, "thread index 0 is recorded twice"},
    {"thread index absurd", c_thread_gap, OMPF_ERANGE, "thread index 1000000 is not below the limit OMPF_MAX_THREADS = 65536"},
    {"thread totals count", c_thread_nev, OMPF_EFORMAT, "carries 3 event totals"},
    {"END XU count", c_end_xus, OMPF_EFORMAT, "END says 5 XUs"},
    {"END chunk count", c_end_chunks, OMPF_EFORMAT, "chunks precede it"},
    {"string past the end", c_string_past_end, OMPF_EFORMAT, "runs past the end"},
    {"NUL in a string", c_string_nul, OMPF_EFORMAT, "runs past the end"},
    {"extra payload bytes", c_extra_bytes, OMPF_EFORMAT, "3 unexpected bytes"},
    {"varint over 64 bits", c_long_varint, OMPF_EFORMAT, "runs past the end"},
    {"reserved value tag", c_bad_value_tag, OMPF_EFORMAT, "runs past the end"},
    {"zstd size lie", c_zstd_lies, OMPF_EFORMAT, "does not match its declared size"},
    {"zstd garbage", c_zstd_garbage, OMPF_EFORMAT, "zstd cannot decompress"},
};

static void test_cases(void **state)
{
    (void)state;
    int failures = 0;
    char *dir = gen_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/case.ompf", dir);
    ompf_profile_t *space;
    uint32_t node;
    assert_int_equal(ompf_profile_create(&space), 0);
    assert_int_equal(ompf_label_parse(space, "0.5.9", &node), 0);
    assert_int_equal(ompf_label_parse(space, "0.3", &node), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const mcase_t *c = &cases[i];
        bytes_t b = c->make();
        ompf_profile_t *p = (ompf_profile_t *)&b; /* must be overwritten */
        ompf_read_info_t info;
        ompf_error_t err = {0};
        int rc = ompf_profile_read_mem(b.d, b.n, "case.ompf", &p, &info, &err);
        int ok = rc == c->code;
        if (c->code == 0) {
            ok = ok && p != NULL && !info.truncated;
        } else {
            ok = ok && p == NULL && err.code == c->code &&
                 strstr(err.msg, c->fragment) != NULL && strstr(err.msg, "case.ompf") != NULL;
        }
        if (!ok) {
            fprintf(stderr, "case '%s': got %d (%s) \"%s\", want %d with \"%s\"\n", c->what,
                    rc, ompf_strerror(rc), err.msg, c->code, c->fragment ? c->fragment : "");
            failures++;
        }
        if (rc == 0 || rc == OMPF_ETRUNC)
            ompf_profile_destroy(p);
        /* The same file read into a shared trie that holds labels already
         * (combine's later inputs: their labels are looked up there):
         * the same outcome, and a failed read leaves the trie as it was. */
        gen_spit(path, b.d, b.n);
        size_t before = ompf_label_count(space);
        ompf_error_t err2 = {0};
        int rc2 = ompf_profile_read_into(path, 0, space, &p, &info, &err2);
        if (rc2 != rc || (rc && rc != OMPF_ETRUNC &&
                          (strstr(err2.msg, c->fragment ? c->fragment : "") == NULL ||
                           ompf_label_count(space) != before))) {
            fprintf(stderr, "case '%s' into a shared trie: got %d \"%s\", %zu labels before, "
                            "%zu after\n", c->what, rc2, err2.msg, before,
                    ompf_label_count(space));
            failures++;
        }
        if (rc2 == 0 || rc2 == OMPF_ETRUNC)
            ompf_profile_destroy(p);
        free(b.d);
    }
    ompf_profile_destroy(space);
    unlink(path);
    gen_rmdir(dir);
    assert_int_equal(failures, 0);
}

/* Through the file API too: the path is named in the message. */
static void test_file_api(void **state)
{
    (void)state;
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/bad.ompf", dir);
    bytes_t b = m_newer();
    FILE *f = fopen(path, "wb");
    fwrite(b.d, 1, b.n, f);
    fclose(f);
    free(b.d);
    ompf_profile_t *p;
    ompf_error_t err = {0};
    assert_int_equal(ompf_profile_read(path, &p, NULL, &err), OMPF_EVERSION);
    assert_null(p);
    assert_non_null(strstr(err.msg, path));
    gen_rmdir(dir);
}

static int setup(void **state)
{
    (void)state;
    gen_opts_t o = {.n_xu = 50, .n_threads = 2, .n_events = 2, .n_constructs = 2, .seed = 3};
    ompf_profile_t *p = gen_profile(&o);
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/base.ompf", dir);
    ompf_error_t err;
    if (ompf_profile_write(p, path, &err))
        return -1;
    base = gen_slurp(path, &base_len);
    ompf_profile_destroy(p);
    gen_rmdir(dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(base);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_file_api),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
