/*
 * The streaming writer's per-thread buffers (file_stream.c), visible to
 * the OMPT tool so that its record calls inline: a record is a handful of
 * stores into column arrays, and a call with its checks cost as much again
 * (docs/format.md, 8).  Private to ompfuse: other code uses the
 * ompf_wstream_* functions of ompfuse/file.h.
 */
#ifndef OMPF_WSTREAM_H
#define OMPF_WSTREAM_H

#include "fmt.h"
#include "ompfuse/file.h"

struct ompf_wstream {
    /* Hot fields first: the record calls touch only these.  Records are
     * buffered as columns (one array per field), the layout the encoder
     * reads fastest; a record call only stores its fields. */
    fmt_xu_cols_t xc;
    size_t n_xu, cap_xu;
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

    fmt_buf_t payload, acc; /* scratch for encoding, kept across flushes */
    void *z;                /* ZSTD_CCtx */
};

/* Stores values (NULL: missing) of buffered XU i (file_stream.c). */
void fmt_ws_put_values(ompf_wstream_t *s, size_t i, const double *values);

/* ompf_wstream_label_path for a valid path (s != NULL, first_id != 0,
 * 1 <= n <= FMT_PATH_MAX, ids not wrapping). */
static inline int fmt_ws_path(ompf_wstream_t *s, uint64_t first_id, uint64_t parent_id,
                              const uint64_t *comps, unsigned n)
{
    size_t i = s->n_lab;
    if (__builtin_expect(i == s->cap_lab, 0))
        return ompf_wstream_label_path(s, first_id, parent_id, comps, n);
    fmt_path_cols_t *c = &s->lc;
    c->first[i] = first_id;
    c->parent[i] = parent_id;
    c->n[i] = (uint8_t)n;
    uint64_t *d = c->comp + i * FMT_PATH_MAX;
    for (unsigned j = 0; j < n; j++)
        d[j] = comps[j];
    s->n_lab = i + 1;
    s->used += (2 + n) * sizeof(uint64_t);
    return s->used >= s->capacity ? ompf_wstream_flush(s) : 0;
}

/* ompf_wstream_xu for s != NULL and xu != NULL. */
static inline int fmt_ws_xu(ompf_wstream_t *s, const ompf_xu_t *xu, uint64_t construct_id,
                            uint64_t label_id, const double *values)
{
    size_t i = s->n_xu;
    if (__builtin_expect(i == s->cap_xu, 0))
        return ompf_wstream_xu(s, xu, construct_id, label_id, values);
    fmt_xu_cols_t *c = &s->xc;
    c->id[i] = xu->id;
    c->cid[i] = construct_id;
    c->lid[i] = label_id;
    c->thread[i] = xu->thread;
    c->team_thread[i] = xu->team_thread;
    c->team_size[i] = xu->team_size;
    c->parts[i] = xu->parts;
    c->cpu[i] = xu->cpu;
    c->core[i] = xu->core;
    c->numa[i] = xu->numa;
    c->kind[i] = xu->kind;
    c->start[i] = xu->start_ns;
    c->end[i] = xu->end_ns;
    c->iter_start[i] = xu->iter_start;
    c->iter_count[i] = xu->iter_count;
    s->n_xu = i + 1;
    if (s->n_events)
        fmt_ws_put_values(s, i, values);
    s->used += s->xu_bytes;
    return s->used >= s->capacity ? ompf_wstream_flush(s) : 0;
}

#endif
