/* Builds profile files chunk by chunk for the reader's tests: files no
 * writer makes (malformed ones, or labels named twice).  Include after
 * cmocka.h. */
#ifndef OMPF_TEST_FBUILD_H
#define OMPF_TEST_FBUILD_H

#include <stdint.h>
#include <string.h>

#include "fmt.h"
#include "ompfuse/profile.h"

typedef struct bytes {
    unsigned char *d;
    size_t n;
} bytes_t;

typedef struct fb {
    fmt_buf_t b, pl;
    uint64_t chunks, xus;
} fb_t;

static inline void fb_init(fb_t *f)
{
    memset(f, 0, sizeof *f);
    unsigned char h[FMT_HEADER_SIZE];
    fmt_header_build(h);
    fmt_buf_bytes(&f->b, h, sizeof h);
}

/* Emits f->pl as a chunk (compressed when it pays). */
static inline void fb_chunk(fb_t *f, uint32_t type, uint32_t count)
{
    fmt_buf_t c = {0};
    assert_int_equal(fmt_chunk_build(&c, type, count, &f->pl, NULL, 1), 0);
    fmt_buf_bytes(&f->b, c.data, c.len);
    fmt_buf_free(&c);
    f->pl.len = 0;
    f->chunks++;
}

static inline void fb_event(fb_t *f, const char *name, int64_t status, int64_t source)
{
    fmt_buf_str(&f->pl, name);
    for (int i = 0; i < 5; i++)
        fmt_buf_uv(&f->pl, 0);
    fmt_buf_sv(&f->pl, status);
    fmt_buf_optstr(&f->pl, NULL);
    fmt_buf_sv(&f->pl, source);
}

static inline void fb_construct(fb_t *f, uint64_t id, uint64_t offset, int64_t kind)
{
    ompf_construct_t c = {.module = "/bin/app", .build_id = "", .offset = offset,
                          .kind = (int32_t)kind};
    fmt_enc_construct(&f->pl, id, &c);
}

static inline void fb_thread(fb_t *f, uint64_t index, uint32_t nev)
{
    fmt_buf_uv(&f->pl, index);
    fmt_buf_sv(&f->pl, 42);
    fmt_buf_uv(&f->pl, nev);
    for (uint32_t k = 0; k < 4 * nev; k++)
        fmt_buf_value(&f->pl, 1.0);
}

/* META, EVENTS (one event), CONSTRUCTS (id 1), THREADS (index 0). */
static inline void fb_prefix(fb_t *f)
{
    fb_init(f);
    fmt_buf_str(&f->pl, "program");
    fmt_buf_str(&f->pl, "app");
    fb_chunk(f, FMT_CHUNK_META, 1);
    fb_event(f, "cycles", 0, -1);
    fb_chunk(f, FMT_CHUNK_EVENTS, 1);
    fb_construct(f, 1, 0x10, OMPF_CK_TASK);
    fb_chunk(f, FMT_CHUNK_CONSTRUCTS, 1);
    fb_thread(f, 0, 1);
    fb_chunk(f, FMT_CHUNK_THREADS, 1);
}

static inline void fb_labels(fb_t *f, const fmt_label_rec_t *l, size_t n)
{
    fmt_enc_labels(&f->pl, l, n);
    fb_chunk(f, FMT_CHUNK_LABELS, (uint32_t)n);
}

static inline void fb_xu_ev(fb_t *f, uint64_t cid, uint64_t lid, uint32_t thread, uint8_t kind,
                     uint32_t nev)
{
    ompf_xu_t x = {.id = f->xus + 1, .thread = thread, .parts = 1, .kind = kind, .cpu = -1,
                   .core = -1, .numa = -1};
    double v[4] = {5, 6, 7, 8};
    fmt_xu_row_t row = {.xu = &x, .cid = cid, .lid = lid, .values = v};
    fmt_enc_xus(&f->pl, &row, 1, nev, 0);
    fb_chunk(f, FMT_CHUNK_XUS, 1);
    f->xus++;
}

static inline void fb_xu(fb_t *f, uint64_t cid, uint64_t lid, uint32_t thread, uint8_t kind)
{
    fb_xu_ev(f, cid, lid, thread, kind, 1);
}

static inline bytes_t fb_done(fb_t *f)
{
    fmt_buf_uv(&f->pl, f->xus);
    fmt_buf_uv(&f->pl, f->chunks);
    fb_chunk(f, FMT_CHUNK_END, 0);
    fmt_buf_free(&f->pl);
    bytes_t b = {f->b.data, f->b.len};
    return b;
}


#endif
