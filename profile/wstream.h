/*
 * The streaming writer's per-thread buffers (file_stream.c), visible to
 * the OMPT tool so that its record calls inline: a record is a handful of
 * stores into column arrays, and a call with its checks cost as much again
 * (docs/format.md, 8).  Private to ompfuse: other code uses the
 * ompf_wstream_* functions of ompfuse/file.h.
 */
#ifndef OMPF_WSTREAM_H
#define OMPF_WSTREAM_H

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "fmt.h"
#include "ompfuse/file.h"
#include "wfd.h"

struct ompf_writer {
    pthread_mutex_t lock;
    fmt_wfd_t f; /* the temporary file, guarded against the program */
    char *path, *tmp;
    uint32_t n_events;
    char **event_names;
    uint64_t xus_written, chunks;
    int failed; /* sticky OMPF_E* of the first write failure */
    int saved_errno;
    ompf_wstream_t *streams;
};

struct ompf_wstream {
    /* Hot fields first: the record calls touch only these.  Records are
     * buffered as columns (one array per field), the layout the encoder
     * reads fastest; a record call only stores its fields. */
    fmt_xu_cols_t xc;
    size_t n_xu, cap_xu;
    /* The columns thread .. kind seldom change from one XU to the next:
     * their items run_from .. n_xu - 1 are not stored yet and all equal
     * the fields thread .. kind of run.  They are stored when an XU brings
     * other values, and before the columns are encoded (fmt_ws_fill_run):
     * an XU costs one comparison instead of eight stores. */
    size_t run_from;
    ompf_xu_t run;
    fmt_path_cols_t lc; /* label nodes, as paths (PATHS chunks) */
    size_t n_lab, cap_lab;
    size_t used;     /* bytes of buffered records */
    size_t capacity; /* flush when used reaches it */
    size_t xu_bytes; /* buffer bytes per XU (record + values) */
    uint32_t n_events;

    ompf_writer_t *w;
    ompf_wstream_t *next;

    fmt_buf_t constructs; /* encoded records */
    size_t n_con;
    fmt_buf_t threads;
    size_t n_th;
    fmt_buf_t parts; /* encoded PARTS records (rare: suspended tasks) */
    size_t n_parts;

    fmt_buf_t payload, acc; /* scratch for encoding, kept across flushes */
    void *z;                /* ZSTD_CCtx */
    /* Set while the buffers are being flushed or reallocated: a fatal
     * signal arriving then cannot trust them (fmt_ws_salvage). */
    volatile int busy;
};

/* Appends n bytes (chunks complete chunks holding xus XUs) to the file,
 * with w->lock held.  Async-signal-safe.  0 or the sticky OMPF_E*. */
int fmt_ws_append_locked(ompf_writer_t *w, const void *p, size_t n, uint64_t chunks,
                         uint64_t xus);

/* Fatal endings (stream_salvage.c): writes what s has buffered as
 * uncompressed chunks, without malloc, zstd or a blocking lock, and
 * empties it.  For a signal handler, after the threads that fill s have
 * stopped (or s's thread is the one interrupted: then drop_last drops the
 * last buffered XU, which the interrupted code may have been storing).
 * 0; OMPF_EINVAL when s was busy (its buffers are not consistent) or the
 * writer lock is held; OMPF_ENOMEM when no scratch could be mapped; or the
 * writer's sticky error. */
int fmt_ws_salvage(ompf_wstream_t *s, int drop_last);

/* Stores values (NULL: missing) of buffered XU i (file_stream.c). */
void fmt_ws_put_values(ompf_wstream_t *s, size_t i, const double *values);

/* The bytes of ompf_xu_t from thread to kind: the run's fields. */
#define FMT_WS_RUN_AT offsetof(ompf_xu_t, thread)
#define FMT_WS_RUN_LEN (offsetof(ompf_xu_t, kind) + 1 - FMT_WS_RUN_AT)

/* Stores the run's items up to XU `to` (excluded) into the columns
 * (file_stream.c); async-signal-safe. */
void fmt_ws_fill_run(ompf_wstream_t *s, size_t to);

/* XU i brings other values than the run: the run ends before it, a new
 * one starts with its values (file_stream.c). */
void fmt_ws_new_run(ompf_wstream_t *s, size_t i, const ompf_xu_t *xu);

/* ompf_wstream_label_path for a valid path (s != NULL, first_id != 0,
 * 1 <= n <= FMT_PATH_MAX, ids not wrapping). */
static inline __attribute__((always_inline)) int fmt_ws_path(ompf_wstream_t *s, uint64_t first_id, uint64_t parent_id,
                              const uint64_t *comps, unsigned n)
{
    size_t i = s->n_lab;
    if (__builtin_expect(i == s->cap_lab, 0))
        return ompf_wstream_label_path(s, first_id, parent_id, comps, n);
    fmt_path_cols_t *c = &s->lc;
    c->first[i] = first_id;
    c->parent[i] = parent_id;
    c->n[i] = (uint8_t)n;
    for (unsigned j = 0; j < n; j++)
        c->comp[j][i] = comps[j];
    s->n_lab = i + 1;
    s->used += (2 + n) * sizeof(uint64_t);
    return s->used >= s->capacity ? ompf_wstream_flush(s) : 0;
}

/* ompf_wstream_xu for s != NULL and xu != NULL; vals 0: the stream's
 * writer has no events (values unused). */
static inline __attribute__((always_inline)) int fmt_ws_xu_(ompf_wstream_t *s, const ompf_xu_t *xu,
                                                            uint64_t construct_id,
                                                            uint64_t label_id,
                                                            const double *values, int vals)
{
    size_t i = s->n_xu;
    if (__builtin_expect(i == s->cap_xu, 0))
        return ompf_wstream_xu(s, xu, construct_id, label_id, values);
    fmt_xu_cols_t *c = &s->xc;
    c->id[i] = xu->id;
    c->cid[i] = construct_id;
    c->lid[i] = label_id;
    /* thread apart: a caller may have just stored it, and a wide load
     * over a narrow store just made waits for the store to complete */
    if (__builtin_expect(xu->thread != s->run.thread ||
                             memcmp(&xu->team_thread, &s->run.team_thread,
                                    FMT_WS_RUN_LEN - sizeof xu->thread) != 0,
                         0))
        fmt_ws_new_run(s, i, xu);
    c->start[i] = xu->start_ns;
    c->end[i] = xu->end_ns;
    c->iter_start[i] = xu->iter_start;
    c->iter_count[i] = xu->iter_count;
    s->n_xu = i + 1;
    if (vals && s->n_events)
        fmt_ws_put_values(s, i, values);
    s->used += s->xu_bytes;
    return s->used >= s->capacity ? ompf_wstream_flush(s) : 0;
}

static inline __attribute__((always_inline)) int fmt_ws_xu(ompf_wstream_t *s, const ompf_xu_t *xu,
                                                           uint64_t construct_id,
                                                           uint64_t label_id,
                                                           const double *values)
{
    return fmt_ws_xu_(s, xu, construct_id, label_id, values, 1);
}

/* fmt_ws_xu for a stream whose writer has no events (no values). */
static inline __attribute__((always_inline)) int fmt_ws_xu_noval(ompf_wstream_t *s,
                                                                 const ompf_xu_t *xu,
                                                                 uint64_t construct_id,
                                                                 uint64_t label_id)
{
    return fmt_ws_xu_(s, xu, construct_id, label_id, NULL, 0);
}

#endif
