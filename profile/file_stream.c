/* Streaming writer: one ompf_writer_t per file, one ompf_wstream_t per
 * producing thread.  Records go into the stream's own buffers without any
 * lock; a full buffer is encoded and compressed by its thread, and only the
 * append of the finished chunks takes the writer's mutex. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "fmt.h"
#include "ompfuse/file.h"
#include "wstream.h"

/* 1 MiB: flushing every 256 KiB cost ~10 % more per record (bench_wstream)
 * in fixed per-flush work (zstd set-up per chunk, chunk headers, a write).
 * Streams without events are not compressed; for them 256 KiB is 1-3 ns
 * per task cheaper (tool_overhead, bookkeeping.py): the buffered columns
 * (~1.2 MB at 1 MiB of records) then stay in a 1 MiB L2 cache.  Can be
 * overridden at build time. */
#ifndef STREAM_DEFAULT_CAPACITY
#define STREAM_DEFAULT_CAPACITY (1u << 20)
#endif
#ifndef STREAM_PLAIN_CAPACITY
#define STREAM_PLAIN_CAPACITY (1u << 18)
#endif

/* Appends built chunks under the lock: the only serialised step. */
static int append(ompf_writer_t *w, const fmt_buf_t *bytes, uint64_t chunks, uint64_t xus)
{
    pthread_mutex_lock(&w->lock);
    int rc = fmt_ws_append_locked(w, bytes->data, bytes->len, chunks, xus);
    pthread_mutex_unlock(&w->lock);
    return rc;
}

int fmt_ws_append_locked(ompf_writer_t *w, const void *p, size_t n, uint64_t chunks,
                         uint64_t xus)
{
    int rc = w->failed;
    if (rc)
        return rc;
    if (fmt_wfd_write(&w->f, p, n) != 0) {
        w->failed = rc = OMPF_EIO;
        w->saved_errno = errno;
    } else {
        w->chunks += chunks;
        w->xus_written += xus;
    }
    return rc;
}

/* Encodes one chunk from s->payload and appends it to acc. */
static int stage(ompf_wstream_t *s, fmt_buf_t *acc, uint32_t type, size_t count)
{
    int rc = fmt_chunk_append(acc, type, (uint32_t)count, &s->payload, s->z,
                              s->n_events ? FMT_STREAM_ZSTD_LEVEL : FMT_NO_COMPRESSION);
    s->payload.len = 0;
    return rc;
}

/* Marks s busy (or not) for a signal arriving on this thread; other
 * threads are stopped by the tool before it salvages (fmt_ws_salvage). */
static inline void set_busy(ompf_wstream_t *s, int v)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    s->busy = v;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static int flush(ompf_wstream_t *s);

int ompf_wstream_flush(ompf_wstream_t *s)
{
    if (!s)
        return OMPF_EINVAL;
    set_busy(s, 1);
    int rc = flush(s);
    set_busy(s, 0);
    return rc;
}

static int flush(ompf_wstream_t *s)
{
    fmt_buf_t *acc = &s->acc;
    acc->len = 0;
    uint64_t chunks = 0;
    int rc = 0;
    /* Referenced records first, so that a crash between chunks loses
     * as few references as possible. */
    if (s->n_con) {
        fmt_buf_bytes(&s->payload, s->constructs.data, s->constructs.len);
        if ((rc = stage(s, acc, FMT_CHUNK_CONSTRUCTS, s->n_con)))
            goto out;
        chunks++;
    }
    if (s->n_lab) {
        fmt_enc_path_cols(&s->payload, &s->lc, s->n_lab);
        if ((rc = stage(s, acc, FMT_CHUNK_PATHS, s->n_lab)))
            goto out;
        chunks++;
    }
    if (s->n_th) {
        fmt_buf_bytes(&s->payload, s->threads.data, s->threads.len);
        if ((rc = stage(s, acc, FMT_CHUNK_THREADS, s->n_th)))
            goto out;
        chunks++;
    }
    if (s->n_xu) {
        /* one run over every XU (the usual case): its first two items
         * are all the encoder reads */
        s->xc.run_only = s->run_from == 0;
        fmt_ws_fill_run(s, s->xc.run_only && s->n_xu > 2 ? 2 : s->n_xu);
        fmt_enc_xu_cols(&s->payload, &s->xc, s->n_xu, s->n_events);
        s->xc.run_only = 0;
        if ((rc = stage(s, acc, FMT_CHUNK_XUS, s->n_xu)))
            goto out;
        chunks++;
    }
    if (s->n_parts) {
        fmt_buf_bytes(&s->payload, s->parts.data, s->parts.len);
        if ((rc = stage(s, acc, FMT_CHUNK_PARTS, s->n_parts)))
            goto out;
        chunks++;
    }
    if (acc->len)
        rc = append(s->w, acc, chunks, s->n_xu);
out:
    /* Buffers are emptied even on failure: the writer's error is sticky and
     * the caller learns it from this and every later call.  A failed
     * allocation is not sticky: the scratch buffers start over. */
    if (acc->oom || s->payload.oom) {
        fmt_buf_free(acc);
        fmt_buf_free(&s->payload);
    }
    s->payload.len = 0;
    s->n_con = s->n_lab = s->n_th = s->n_xu = s->n_parts = 0;
    s->run_from = 0;
    s->constructs.len = s->threads.len = s->parts.len = 0;
    s->used = 0;
    return rc;
}

/* Counts n bytes of new records; flushes when the buffer is full. */
static inline int account(ompf_wstream_t *s, size_t n)
{
    s->used += n;
    return s->used >= s->capacity ? ompf_wstream_flush(s) : 0;
}

/* Grows column f of c to cap entries of sz bytes (in a function that
 * returns int).  A failure leaves earlier columns larger than the recorded
 * capacity: harmless. */
#define GROW_COL(c, f, sz)                                                  \
    do {                                                                    \
        void *p_ = realloc((c)->f, cap * (sz));                             \
        if (!p_)                                                            \
            return OMPF_ENOMEM;                                             \
        (c)->f = p_;                                                        \
    } while (0)

FMT_COLD static int grow_labels(ompf_wstream_t *s)
{
    size_t cap = s->cap_lab ? 2 * s->cap_lab : 256;
    fmt_path_cols_t *c = &s->lc;
    GROW_COL(c, first, 8);
    GROW_COL(c, parent, 8);
    for (unsigned j = 0; j < FMT_PATH_MAX; j++)
        GROW_COL(c, comp[j], 8);
    GROW_COL(c, n, 1);
    s->cap_lab = cap;
    return 0;
}

FMT_COLD static int path_slow(ompf_wstream_t *s, uint64_t first_id, uint64_t parent_id,
                              const uint64_t *comps, unsigned n)
{
    set_busy(s, 1);
    int rc = grow_labels(s);
    set_busy(s, 0);
    if (rc)
        return OMPF_ENOMEM;
    return ompf_wstream_label_path(s, first_id, parent_id, comps, n);
}

/* The record calls check their arguments and store the fields
 * (wstream.h: the tool inlines that part); growth and flush are out of
 * line.  A path longer than FMT_PATH_MAX nodes is split into records. */
int ompf_wstream_label_path(ompf_wstream_t *s, uint64_t first_id, uint64_t parent_id,
                            const uint64_t *comps, unsigned n)
{
    if (!s || first_id == 0 || !comps || n == 0 || n > 16 || first_id + (n - 1) < first_id)
        return OMPF_EINVAL;
    while (n > FMT_PATH_MAX) {
        int rc = ompf_wstream_label_path(s, first_id, parent_id, comps, FMT_PATH_MAX);
        if (rc)
            return rc;
        parent_id = first_id + FMT_PATH_MAX - 1;
        first_id += FMT_PATH_MAX;
        comps += FMT_PATH_MAX;
        n -= FMT_PATH_MAX;
    }
    if (s->n_lab == s->cap_lab)
        return path_slow(s, first_id, parent_id, comps, n);
    return fmt_ws_path(s, first_id, parent_id, comps, n);
}

int ompf_wstream_label(ompf_wstream_t *s, uint64_t id, uint64_t parent_id,
                       uint64_t component)
{
    return ompf_wstream_label_path(s, id, parent_id, &component, 1);
}

int ompf_wstream_construct(ompf_wstream_t *s, uint64_t id, const ompf_construct_t *c)
{
    if (!s || !c)
        return OMPF_EINVAL;
    size_t before = s->constructs.len;
    set_busy(s, 1);
    fmt_enc_construct(&s->constructs, id, c);
    set_busy(s, 0);
    if (s->constructs.oom) {
        /* drop the partial record, keep the buffered ones */
        s->constructs.oom = 0;
        s->constructs.len = before;
        return OMPF_ENOMEM;
    }
    s->n_con++;
    return account(s, s->constructs.len - before);
}

FMT_COLD static int grow_xus(ompf_wstream_t *s)
{
    size_t cap = s->cap_xu ? 2 * s->cap_xu : 64;
    fmt_xu_cols_t *c = &s->xc;
    GROW_COL(c, id, 8);
    GROW_COL(c, cid, 8);
    GROW_COL(c, lid, 8);
    GROW_COL(c, start, 8);
    GROW_COL(c, end, 8);
    GROW_COL(c, iter_start, 8);
    GROW_COL(c, iter_count, 8);
    GROW_COL(c, thread, 4);
    GROW_COL(c, team_thread, 4);
    GROW_COL(c, team_size, 4);
    GROW_COL(c, parts, 4);
    GROW_COL(c, cpu, 4);
    GROW_COL(c, core, 4);
    GROW_COL(c, numa, 4);
    GROW_COL(c, kind, 1);
    if (s->n_events)
        GROW_COL(c, vals, s->n_events * sizeof(double));
    s->cap_xu = cap;
    return 0;
}

static void free_cols(ompf_wstream_t *s)
{
    fmt_xu_cols_t *c = &s->xc;
    void *cols[] = {c->id,     c->cid,         c->lid,       c->start,      c->end,
                    c->iter_start, c->iter_count, c->thread, c->team_thread, c->team_size,
                    c->parts,  c->cpu,         c->core,      c->numa,       c->kind,
                    c->vals,   s->lc.first,    s->lc.parent, s->lc.n};
    for (size_t k = 0; k < sizeof cols / sizeof *cols; k++)
        free(cols[k]);
    for (unsigned j = 0; j < FMT_PATH_MAX; j++)
        free(s->lc.comp[j]);
}

void fmt_ws_fill_run(ompf_wstream_t *s, size_t to)
{
    const ompf_xu_t *r = &s->run;
    size_t from = s->run_from;
    /* one loop per column, from locals (no aliasing with the columns):
     * each is a fill the compiler vectorises */
#define FILL(col, T)                                                        \
    do {                                                                    \
        T *a_ = s->xc.col;                                                  \
        T v_ = r->col;                                                      \
        for (size_t i = from; i < to; i++)                                  \
            a_[i] = v_;                                                     \
    } while (0)
    FILL(thread, uint32_t);
    FILL(team_thread, uint32_t);
    FILL(team_size, uint32_t);
    FILL(parts, uint32_t);
    FILL(cpu, int32_t);
    FILL(core, int32_t);
    FILL(numa, int32_t);
    FILL(kind, uint8_t);
#undef FILL
}

FMT_COLD void fmt_ws_new_run(ompf_wstream_t *s, size_t i, const ompf_xu_t *xu)
{
    /* Stored, then run_from moved, then the new values: a fatal signal
     * between two steps finds run_from .. n_xu - 1 equal to the run
     * (fmt_ws_salvage fills them again; XU i is not counted yet). */
    fmt_ws_fill_run(s, i);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    s->run_from = i;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    memcpy((char *)&s->run + FMT_WS_RUN_AT, (const char *)xu + FMT_WS_RUN_AT,
           FMT_WS_RUN_LEN);
}

void fmt_ws_put_values(ompf_wstream_t *s, size_t i, const double *values)
{
    uint32_t ne = s->n_events;
    double *v = s->xc.vals + i * ne;
    if (values)
        memcpy(v, values, ne * sizeof *v);
    else
        for (uint32_t e = 0; e < ne; e++)
            v[e] = OMPF_MISSING;
}

FMT_COLD static int xu_slow(ompf_wstream_t *s, const ompf_xu_t *xu, uint64_t construct_id,
                            uint64_t label_id, const double *values)
{
    set_busy(s, 1);
    int rc = grow_xus(s);
    set_busy(s, 0);
    if (rc)
        return OMPF_ENOMEM;
    return ompf_wstream_xu(s, xu, construct_id, label_id, values);
}

int ompf_wstream_xu(ompf_wstream_t *s, const ompf_xu_t *xu, uint64_t construct_id,
                    uint64_t label_id, const double *values)
{
    if (!s || !xu)
        return OMPF_EINVAL;
    if (s->n_xu == s->cap_xu)
        return xu_slow(s, xu, construct_id, label_id, values);
    return fmt_ws_xu(s, xu, construct_id, label_id, values);
}

int ompf_wstream_thread(ompf_wstream_t *s, const ompf_thread_t *t)
{
    if (!s || !t)
        return OMPF_EINVAL;
    size_t before = s->threads.len;
    set_busy(s, 1);
    fmt_enc_thread(&s->threads, t, s->n_events);
    set_busy(s, 0);
    if (s->threads.oom) {
        s->threads.oom = 0;
        s->threads.len = before;
        return OMPF_ENOMEM;
    }
    s->n_th++;
    return account(s, s->threads.len - before);
}

int ompf_wstream_part(ompf_wstream_t *s, uint64_t xu_id, const ompf_part_t *part)
{
    if (!s || !part)
        return OMPF_EINVAL;
    size_t before = s->parts.len;
    set_busy(s, 1);
    fmt_enc_part(&s->parts, xu_id, part);
    set_busy(s, 0);
    if (s->parts.oom) {
        s->parts.oom = 0;
        s->parts.len = before;
        return OMPF_ENOMEM;
    }
    s->n_parts++;
    return account(s, s->parts.len - before);
}

static void stream_free(ompf_wstream_t *s)
{
    fmt_buf_free(&s->parts);
    free_cols(s);
    fmt_buf_free(&s->constructs);
    fmt_buf_free(&s->threads);
    fmt_buf_free(&s->payload);
    fmt_buf_free(&s->acc);
    ZSTD_freeCCtx(s->z);
    free(s);
}

int ompf_wstream_create(ompf_writer_t *w, size_t capacity_bytes, ompf_wstream_t **out)
{
    if (!w || !out)
        return OMPF_EINVAL;
    *out = NULL;
    ompf_wstream_t *s = calloc(1, sizeof *s);
    if (!s)
        return OMPF_ENOMEM;
    s->w = w;
    s->n_events = w->n_events;
    s->xu_bytes = 7 * sizeof(uint64_t) + 7 * sizeof(uint32_t) + 1 +
                  s->n_events * sizeof(double);
    s->capacity = capacity_bytes  ? capacity_bytes
                  : s->n_events ? STREAM_DEFAULT_CAPACITY
                                : STREAM_PLAIN_CAPACITY;
    /* Keep one flush within the format's chunk size limit. */
    if (s->capacity > FMT_MAX_RAW / 4)
        s->capacity = FMT_MAX_RAW / 4;
    s->z = ZSTD_createCCtx();
    if (!s->z) {
        free(s);
        return OMPF_ENOMEM;
    }
    pthread_mutex_lock(&w->lock);
    s->next = w->streams;
    w->streams = s;
    pthread_mutex_unlock(&w->lock);
    *out = s;
    return 0;
}

const char *ompf_writer_tmp_path(const ompf_writer_t *w)
{
    return w ? w->tmp : NULL;
}

static void writer_free(ompf_writer_t *w)
{
    ompf_wstream_t *s = w->streams;
    while (s) {
        ompf_wstream_t *n = s->next;
        stream_free(s);
        s = n;
    }
    for (uint32_t e = 0; e < w->n_events; e++)
        free(w->event_names[e]);
    free(w->event_names);
    pthread_mutex_destroy(&w->lock);
    free(w->path);
    free(w->tmp);
    free(w);
}

/* Writes one chunk from the writer itself (header, trailer, END).  One
 * of less than 4 KiB is stored as it is: compressing the tool's few
 * hundred bytes of metadata at start-up cost a zstd context and about a
 * dozen page faults (0.25 ms on a VM where a fresh page costs 20 us). */
static int writer_chunk(ompf_writer_t *w, fmt_buf_t *payload, uint32_t type, size_t count)
{
    fmt_buf_t out = {0};
    int rc = fmt_chunk_build(&out, type, (uint32_t)count, payload, NULL,
                             payload->len >= 4096);
    payload->len = 0;
    if (!rc)
        rc = append(w, &out, 1, 0);
    fmt_buf_free(&out);
    return rc;
}

static int write_fail(ompf_writer_t *w, ompf_error_t *err, int rc)
{
    if (rc == OMPF_ENOMEM)
        return ompf_error_set(err, rc, "%s: out of memory while writing the profile", w->tmp);
    if (w->f.lost)
        return ompf_error_set(err, rc,
                              "%s: the program closed or took over the profile's descriptor "
                              "and the file cannot be reopened (%s); no profile is written",
                              w->tmp, strerror(w->f.lost));
    return ompf_error_set(err, rc, "%s: write failed: %s; check free disk space", w->tmp,
                          strerror(w->saved_errno ? w->saved_errno : EIO));
}

int ompf_writer_create(const char *path, const ompf_profile_t *header, ompf_writer_t **out,
                       ompf_error_t *err)
{
    if (!path || !*path || !header || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_writer_create: missing argument");
    *out = NULL;
    /* The profile is built under a temporary name and renamed: over a
     * device or FIFO that would replace the node, so such a path is
     * refused (the tool then writes no profile and says why). */
    if (ompf_output_is_special(path))
        return ompf_error_set(err, OMPF_EINVAL,
                              "%s is a device, FIFO or socket, not a file: no profile is "
                              "written there; give a file name",
                              path);
    ompf_writer_t *w = calloc(1, sizeof *w);
    if (!w)
        return ompf_error_set(err, OMPF_ENOMEM, "%s: out of memory", path);
    pthread_mutex_init(&w->lock, NULL);
    w->f.fd = -1;
    size_t tlen = strlen(path) + 32;
    w->path = strdup(path);
    w->tmp = malloc(tlen);
    w->n_events = (uint32_t)ompf_event_count(header);
    w->event_names = calloc(w->n_events + 1, sizeof *w->event_names);
    if (!w->path || !w->tmp || !w->event_names) {
        writer_free(w);
        return ompf_error_set(err, OMPF_ENOMEM, "%s: out of memory", path);
    }
    for (uint32_t e = 0; e < w->n_events; e++)
        if (!(w->event_names[e] = strdup(ompf_event_get(header, e)->name))) {
            writer_free(w);
            return ompf_error_set(err, OMPF_ENOMEM, "%s: out of memory", path);
        }
    snprintf(w->tmp, tlen, "%s.tmp.%ld", path, (long)getpid());
    if (fmt_wfd_create(&w->f, w->tmp) != 0) {
        int rc = ompf_error_set(err, errno == EACCES ? OMPF_EPERM : OMPF_EIO,
                                "%s: cannot create: %s; check that the directory exists "
                                "and is writable", path, strerror(errno));
        writer_free(w);
        return rc;
    }
    unsigned char hdr[FMT_HEADER_SIZE];
    fmt_header_build(hdr);
    fmt_buf_t b = {0};
    fmt_buf_bytes(&b, hdr, sizeof hdr);
    int rc = append(w, &b, 0, 0);
    b.len = 0;
    if (!rc) {
        fmt_enc_meta(&b, header);
        rc = writer_chunk(w, &b, FMT_CHUNK_META, ompf_meta_count(header));
    }
    if (!rc) {
        fmt_enc_events(&b, header);
        rc = writer_chunk(w, &b, FMT_CHUNK_EVENTS, w->n_events);
    }
    fmt_buf_free(&b);
    if (rc) {
        rc = write_fail(w, err, rc);
        ompf_writer_abort(w);
        return rc;
    }
    *out = w;
    return 0;
}

int ompf_writer_finish(ompf_writer_t *w, const ompf_profile_t *trailer, ompf_error_t *err)
{
    if (!w)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_writer_finish: no writer");
    int rc = 0;
    for (ompf_wstream_t *s = w->streams; s && !rc; s = s->next)
        rc = ompf_wstream_flush(s);
    if (rc) {
        rc = write_fail(w, err, rc);
        ompf_writer_abort(w);
        return rc;
    }
    fmt_buf_t b = {0};
    if (trailer) {
        size_t n = ompf_event_count(trailer);
        if (n != w->n_events) {
            rc = ompf_error_set(err, OMPF_EMISMATCH,
                                "%s: the trailer has %zu events but the header declared "
                                "%u; pass the same event table", w->path, n, w->n_events);
        }
        for (uint32_t e = 0; !rc && e < n; e++)
            if (strcmp(ompf_event_get(trailer, e)->name, w->event_names[e]))
                rc = ompf_error_set(err, OMPF_EMISMATCH,
                                    "%s: trailer event %u is '%s' but the header declared "
                                    "'%s'; pass the same event table", w->path, e,
                                    ompf_event_get(trailer, e)->name, w->event_names[e]);
        if (rc) {
            ompf_writer_abort(w);
            return rc;
        }
        if (ompf_meta_count(trailer)) {
            fmt_enc_meta(&b, trailer);
            rc = writer_chunk(w, &b, FMT_CHUNK_META, ompf_meta_count(trailer));
        }
        if (!rc && n) {
            fmt_enc_events(&b, trailer);
            rc = writer_chunk(w, &b, FMT_CHUNK_EVENTS, n);
        }
    }
    if (!rc) {
        fmt_buf_uv(&b, w->xus_written);
        fmt_buf_uv(&b, w->chunks);
        rc = writer_chunk(w, &b, FMT_CHUNK_END, 0);
    }
    fmt_buf_free(&b);
    if (rc) {
        rc = write_fail(w, err, rc);
        ompf_writer_abort(w);
        return rc;
    }
    if (fmt_wfd_sync(&w->f)) {
        rc = w->f.lost ? write_fail(w, err, OMPF_EIO)
                       : ompf_error_set(err, OMPF_EIO, "%s: fsync failed: %s", w->tmp,
                                        strerror(errno));
        ompf_writer_abort(w);
        return rc;
    }
    /* what is there must be what was written: anything else (a file
     * truncated or extended behind the writer's back) never gets the
     * final name */
    struct stat st;
    int fd = fmt_wfd_get(&w->f);
    if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size != w->f.off) {
        rc = ompf_error_set(err, OMPF_EIO,
                            "%s: holds %lld bytes but %llu were written (changed by another "
                            "process); not renamed to %s",
                            w->tmp, (long long)st.st_size, (unsigned long long)w->f.off,
                            w->path);
        ompf_writer_abort(w);
        return rc;
    }
    if (fmt_wfd_close(&w->f)) {
        rc = ompf_error_set(err, OMPF_EIO, "%s: close failed: %s", w->tmp, strerror(errno));
        ompf_writer_abort(w);
        return rc;
    }
    if (rename(w->tmp, w->path)) {
        rc = ompf_error_set(err, OMPF_EIO, "%s: cannot rename to %s: %s", w->tmp, w->path,
                            strerror(errno));
        ompf_writer_abort(w);
        return rc;
    }
    writer_free(w);
    return 0;
}

void ompf_writer_abort(ompf_writer_t *w)
{
    if (!w)
        return;
    fmt_wfd_close(&w->f);
    unlink(w->tmp);
    writer_free(w);
}
