/* Fatal endings: a stream's buffered records written from a signal
 * handler (wstream.h, fmt_ws_salvage).  Async-signal-safe: scratch comes
 * from mmap, chunks are stored uncompressed (zstd allocates), the writer
 * lock is only tried, and the file is written through the guarded
 * descriptor.  The encoders reserve their worst case up front, so a buffer
 * mapped at least that large is never reallocated. */
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include "fmt.h"
#include "wstream.h"

/* The encoders' reservations (fmt_codec.c, enc_begin): 10 bytes per
 * varint item + 64; doubled for safety, since outgrowing the mapping would
 * mean realloc on it. */
#define ITEM_BYTES 10u
static size_t xu_bound(size_t n, uint32_t ne)
{
    return 2 * ((2 + FMT_XU_COLUMNS + n * (FMT_XU_COLUMNS + ne)) * ITEM_BYTES + 64);
}
static size_t path_bound(size_t n)
{
    return 2 * ((3 + FMT_PATH_MAX) * (n + 2) * ITEM_BYTES + 64);
}

static size_t max2(size_t a, size_t b) { return a > b ? a : b; }

/* Lock the writer without blocking: the holder may be this very thread,
 * interrupted.  Others were stopped by the caller; wait briefly anyway. */
static int try_lock(ompf_writer_t *w)
{
    for (int i = 0; i < 1000; i++) {
        if (pthread_mutex_trylock(&w->lock) == 0)
            return 0;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

/* One uncompressed chunk from pay, appended to out. */
static int stage_raw(fmt_buf_t *out, fmt_buf_t *pay, uint32_t type, size_t count,
                     uint64_t *chunks)
{
    int rc = fmt_chunk_append(out, type, (uint32_t)count, pay, NULL, FMT_NO_COMPRESSION);
    pay->len = 0;
    (*chunks)++;
    return rc;
}

int fmt_ws_salvage(ompf_wstream_t *s, int drop_last)
{
    if (!s || s->busy)
        return OMPF_EINVAL;
    size_t nx = s->n_xu, nl = s->n_lab;
    if (drop_last && nx)
        nx--;
    if (!nx && !nl && !s->n_con && !s->n_th && !s->n_parts)
        return 0;
    size_t pay_cap = max2(max2(xu_bound(nx, s->n_events), path_bound(nl)),
                          max2(max2(s->constructs.len, s->threads.len), s->parts.len) + 64);
    size_t out_cap = 5 * FMT_CHUNK_HEADER_SIZE + xu_bound(nx, s->n_events) + path_bound(nl) +
                     s->constructs.len + s->threads.len + s->parts.len + 256;
    size_t total = out_cap + pay_cap;
    unsigned char *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    if (m == MAP_FAILED)
        return OMPF_ENOMEM;
    fmt_buf_t out = {m, 0, out_cap, 0}, pay = {m + out_cap, 0, pay_cap, 0};
    uint64_t chunks = 0;
    int rc = 0;
    /* Same order as a flush: what XUs refer to first. */
    if (s->n_con) {
        fmt_buf_bytes(&pay, s->constructs.data, s->constructs.len);
        rc |= stage_raw(&out, &pay, FMT_CHUNK_CONSTRUCTS, s->n_con, &chunks);
    }
    if (nl) {
        fmt_enc_path_cols(&pay, &s->lc, nl);
        rc |= stage_raw(&out, &pay, FMT_CHUNK_PATHS, nl, &chunks);
    }
    if (s->n_th) {
        fmt_buf_bytes(&pay, s->threads.data, s->threads.len);
        rc |= stage_raw(&out, &pay, FMT_CHUNK_THREADS, s->n_th, &chunks);
    }
    if (nx) {
        fmt_ws_fill_run(s, nx);
        fmt_enc_xu_cols(&pay, &s->xc, nx, s->n_events);
        rc |= stage_raw(&out, &pay, FMT_CHUNK_XUS, nx, &chunks);
    }
    if (s->n_parts) {
        /* the parts of XUs still being recorded stay buffered records
           too; the reader drops those whose XU never came */
        fmt_buf_bytes(&pay, s->parts.data, s->parts.len);
        rc |= stage_raw(&out, &pay, FMT_CHUNK_PARTS, s->n_parts, &chunks);
    }
    /* a reservation beyond the mapping would have set oom, never realloc'd
     * (the bounds are twice the reservations) */
    if (rc || out.oom || pay.oom || out.data != m) {
        munmap(m, total);
        return OMPF_ENOMEM;
    }
    if (try_lock(s->w) != 0) {
        munmap(m, total);
        return OMPF_EINVAL;
    }
    rc = fmt_ws_append_locked(s->w, out.data, out.len, chunks, nx);
    pthread_mutex_unlock(&s->w->lock);
    munmap(m, total);
    /* written (or failed for good): a later flush must not repeat them */
    s->n_con = s->n_lab = s->n_th = s->n_xu = s->n_parts = 0;
    s->run_from = 0;
    s->constructs.len = s->threads.len = s->parts.len = 0;
    s->used = 0;
    return rc;
}
