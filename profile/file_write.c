/* ompf_profile_write: a whole in-memory profile to a file, written under a
 * temporary name and renamed.  On-disk ids are the in-memory indices
 * (label node index, construct index). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

#include "fmt.h"
#include "ompfuse/file.h"
#include "profile_internal.h"

int fmt_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return OMPF_EIO;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

typedef struct wctx {
    int fd;
    const char *tmp;
    fmt_buf_t payload, chunk;
    ZSTD_CCtx *z;
    uint64_t chunks;
    ompf_error_t *err;
} wctx_t;

static int emit(wctx_t *w, uint32_t type, size_t count)
{
    if (count > UINT32_MAX)
        return ompf_error_set(w->err, OMPF_ERANGE, "%s: too many records for one chunk",
                              w->tmp);
    int rc = fmt_chunk_build(&w->chunk, type, (uint32_t)count, &w->payload, w->z, 1);
    w->payload.len = 0;
    if (rc == OMPF_ENOMEM)
        return ompf_error_set(w->err, rc, "%s: out of memory while encoding a %s chunk",
                              w->tmp, fmt_chunk_name(type));
    if (rc)
        return ompf_error_set(w->err, rc, "%s: a %s chunk exceeds the format's %u MiB limit",
                              w->tmp, fmt_chunk_name(type), FMT_MAX_RAW >> 20);
    if (fmt_write_all(w->fd, w->chunk.data, w->chunk.len))
        return ompf_error_set(w->err, OMPF_EIO, "%s: write failed: %s (disk full?)", w->tmp,
                              strerror(errno));
    w->chunks++;
    return 0;
}

/* Appends one XU's parts, emitting a PARTS chunk when it is full. */
static int put_parts(wctx_t *w, uint64_t id, const ompf_part_t *pt, uint32_t np,
                     size_t *in_chunk)
{
    for (uint32_t k = 0; k < np; k++)
        fmt_enc_part(&w->payload, id, &pt[k]);
    *in_chunk += np;
    if (*in_chunk >= FMT_XUS_PER_CHUNK || w->payload.len >= FMT_MAX_RAW / 2) {
        int rc = emit(w, FMT_CHUNK_PARTS, *in_chunk);
        *in_chunk = 0;
        return rc;
    }
    return 0;
}

/* XUs, exact counts and parts of an in-memory profile. */
static int write_xus(wctx_t *w, const ompf_profile_t *p, uint32_t n_ev, uint32_t n_src)
{
    int rc = 0;
    size_t n_xu = ompf_xu_count(p);
    fmt_xu_row_t *rows = malloc(FMT_XUS_PER_CHUNK * sizeof *rows);
    if (!rows)
        return ompf_error_set(w->err, OMPF_ENOMEM, "%s: out of memory", w->tmp);
    for (size_t i = 0; i < n_xu; i += FMT_XUS_PER_CHUNK) {
        size_t k = n_xu - i < FMT_XUS_PER_CHUNK ? n_xu - i : FMT_XUS_PER_CHUNK;
        for (size_t j = 0; j < k; j++) {
            const ompf_xu_t *x = ompf_xu_get(p, i + j);
            rows[j].xu = x;
            rows[j].cid = x->type;
            rows[j].lid = x->label;
            rows[j].values = ompf_xu_values_const(p, i + j);
            rows[j].prov = n_src ? ompf_xu_provenance_const(p, i + j) : NULL;
        }
        fmt_enc_xus(&w->payload, rows, k, n_ev, n_src);
        if ((rc = emit(w, FMT_CHUNK_XUS, k))) {
            free(rows);
            return rc;
        }
    }
    free(rows);

    /* Exact counts a double cannot hold, after the XUs they refer to. */
    uint64_t *ex;
    size_t n_ex;
    if (ompf__exact_sorted(p, &ex, &n_ex))
        return ompf_error_set(w->err, OMPF_ENOMEM, "%s: out of memory", w->tmp);
    for (size_t i = 0; i < n_ex && !rc; i += FMT_EXACT_PER_CHUNK) {
        size_t k = n_ex - i < FMT_EXACT_PER_CHUNK ? n_ex - i : FMT_EXACT_PER_CHUNK;
        fmt_enc_exact(&w->payload, p, ex + 2 * i, k);
        rc = emit(w, FMT_CHUNK_EXACT, k);
    }
    free(ex);
    if (rc)
        return rc;

    /* Parts after their XUs (a reader attaches them by XU id). */
    size_t in_chunk = 0;
    for (size_t i = 0; i < n_xu; i++) {
        if (!ompf_xu_has_parts(p, i))
            continue;
        uint32_t np;
        ompf_part_t one;
        const ompf_part_t *pt = ompf_xu_parts(p, i, &np, &one);
        if ((rc = put_parts(w, ompf_xu_get(p, i)->id, pt, np, &in_chunk)))
            return rc;
    }
    return in_chunk ? emit(w, FMT_CHUNK_PARTS, in_chunk) : 0;
}

/* The same from a feed: rows a few thousand at a time into buffers reused
 * for every batch, each batch encoded column by column as it comes
 * (fmt_xcols.c), so that neither the XUs nor one chunk's rows are ever
 * all in memory; the bytes are those of write_xus. */
#define FED_BATCH 4096
static int write_fed_xus(wctx_t *w, const ompf_xu_feed_t *f, uint32_t n_ev, uint32_t n_src)
{
    int rc = 0;
    size_t per = FMT_XUS_PER_CHUNK, sub = FED_BATCH;
    fmt_xu_row_t *rows = malloc(sub * sizeof *rows);
    ompf_xu_t *xu = malloc(sub * sizeof *xu);
    double *val = malloc(sub * (n_ev ? n_ev : 1) * sizeof *val);
    uint64_t *prov = malloc(sub * (n_src ? n_src : 1) * sizeof *prov);
    fmt_xcols_t *xc = fmt_xcols_create(n_ev, n_src);
    if (!rows || !xu || !val || !prov || !xc)
        rc = ompf_error_set(w->err, OMPF_ENOMEM, "%s: out of memory", w->tmp);
    for (size_t i = 0; i < f->n_xu && !rc; i += per) {
        size_t k = f->n_xu - i < per ? f->n_xu - i : per;
        for (size_t b = 0; b < k && !rc; b += sub) {
            size_t m = k - b < sub ? k - b : sub;
            if ((rc = f->rows(f->ctx, i + b, m, xu, val, prov))) {
                rc = ompf_error_set(w->err, rc, "%s: %s while producing XUs", w->tmp,
                                    ompf_strerror(rc));
                break;
            }
            for (size_t j = 0; j < m; j++) {
                rows[j].xu = &xu[j];
                rows[j].cid = xu[j].type;
                rows[j].lid = xu[j].label;
                rows[j].values = n_ev ? val + j * n_ev : NULL;
                rows[j].prov = n_src ? prov + j * n_src : NULL;
            }
            if (fmt_xcols_add(xc, rows, m))
                rc = ompf_error_set(w->err, OMPF_ENOMEM, "%s: out of memory", w->tmp);
        }
        if (rc)
            break;
        if (fmt_xcols_finish(xc, &w->payload))
            w->payload.oom = 1; /* emit says so */
        rc = emit(w, FMT_CHUNK_XUS, k);
    }
    free(rows);
    free(xu);
    free(val);
    free(prov);
    fmt_xcols_destroy(xc);
    if (rc)
        return rc;
    const uint64_t *ex = NULL;
    size_t n_ex = 0;
    if (f->exact)
        f->exact(f->ctx, &ex, &n_ex);
    for (size_t i = 0; i < n_ex && !rc; i += FMT_EXACT_PER_CHUNK) {
        size_t k = n_ex - i < FMT_EXACT_PER_CHUNK ? n_ex - i : FMT_EXACT_PER_CHUNK;
        for (size_t j = 0; j < 3 * k; j++)
            fmt_buf_uv(&w->payload, ex[3 * i + j]);
        rc = emit(w, FMT_CHUNK_EXACT, k);
    }
    size_t in_chunk = 0;
    for (size_t i = 0; i < f->n_xu && f->parts && !rc; i++) {
        uint32_t np = 0;
        uint64_t id = 0;
        ompf_part_t one;
        const ompf_part_t *pt = f->parts(f->ctx, i, &np, &one, &id);
        if (pt && np)
            rc = put_parts(w, id, pt, np, &in_chunk);
        else if (!pt && np) /* the feed could not give them */
            rc = ompf_error_set(w->err, OMPF_ENOMEM, "%s: out of memory", w->tmp);
    }
    return !rc && in_chunk ? emit(w, FMT_CHUNK_PARTS, in_chunk) : rc;
}

static int write_body(wctx_t *w, const ompf_profile_t *p, const ompf_xu_feed_t *feed)
{
    int rc;
    unsigned char hdr[FMT_HEADER_SIZE];
    fmt_header_build(hdr);
    if (fmt_write_all(w->fd, hdr, sizeof hdr))
        return ompf_error_set(w->err, OMPF_EIO, "%s: write failed: %s", w->tmp,
                              strerror(errno));

    fmt_enc_meta(&w->payload, p);
    if ((rc = emit(w, FMT_CHUNK_META, ompf_meta_count(p))))
        return rc;
    /* Sources before events: events refer to them. */
    size_t n_src = ompf_source_count(p);
    if (n_src) {
        fmt_enc_sources(&w->payload, p);
        if ((rc = emit(w, FMT_CHUNK_SOURCES, n_src)))
            return rc;
    }
    fmt_enc_events(&w->payload, p);
    if ((rc = emit(w, FMT_CHUNK_EVENTS, ompf_event_count(p))))
        return rc;
    size_t n_con = ompf_construct_count(p);
    if (n_con) {
        for (size_t i = 0; i < n_con; i++)
            fmt_enc_construct(&w->payload, i, ompf_construct_get(p, (uint32_t)i));
        if ((rc = emit(w, FMT_CHUNK_CONSTRUCTS, n_con)))
            return rc;
    }

    /* Labels before XUs: a truncated file then loses XUs, not references. */
    int fed = feed && feed->label; /* the feed holds them (file.h) */
    size_t n_lab = fed ? feed->n_labels : ompf_label_count(p);
    fmt_label_rec_t *lab = malloc(FMT_LABELS_PER_CHUNK * sizeof *lab);
    if (!lab)
        return ompf_error_set(w->err, OMPF_ENOMEM, "%s: out of memory", w->tmp);
    for (size_t i = 1; i < n_lab; i += FMT_LABELS_PER_CHUNK) {
        size_t k = n_lab - i < FMT_LABELS_PER_CHUNK ? n_lab - i : FMT_LABELS_PER_CHUNK;
        for (size_t j = 0; j < k; j++) {
            uint32_t node = (uint32_t)(i + j), parent;
            lab[j].id = node;
            if (fed) {
                feed->label(feed->ctx, node, &parent, &lab[j].comp);
                lab[j].parent = parent;
            } else {
                lab[j].parent = ompf_label_parent(p, node);
                lab[j].comp = ompf_label_component(p, node);
            }
        }
        fmt_enc_labels(&w->payload, lab, k);
        if ((rc = emit(w, FMT_CHUNK_LABELS, k))) {
            free(lab);
            return rc;
        }
    }
    free(lab);

    size_t n_xu = feed ? feed->n_xu : ompf_xu_count(p);
    uint32_t n_ev = (uint32_t)ompf_event_count(p);
    if (feed)
        rc = write_fed_xus(w, feed, n_ev, (uint32_t)n_src);
    else
        rc = write_xus(w, p, n_ev, (uint32_t)n_src);
    if (rc)
        return rc;
    size_t n_th = ompf_thread_count(p);
    if (n_th) {
        for (size_t i = 0; i < n_th; i++) {
            ompf_thread_t t = *ompf_thread_get_const(p, (uint32_t)i);
            t.index = (uint32_t)i; /* the position is what the reader rebuilds */
            fmt_enc_thread(&w->payload, &t, n_ev);
        }
        if ((rc = emit(w, FMT_CHUNK_THREADS, n_th)))
            return rc;
    }

    fmt_buf_uv(&w->payload, n_xu);
    fmt_buf_uv(&w->payload, w->chunks);
    return emit(w, FMT_CHUNK_END, 0);
}

static int write_file(const ompf_profile_t *p, const ompf_xu_feed_t *feed, const char *path,
                      ompf_error_t *err)
{
    if (!p || !path || !*path)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_profile_write: no profile or path");
    if (ompf_profile_lean(p) && !feed)
        return ompf_error_set(err, OMPF_EINVAL, "%s: a lean profile (profile.h) has no full "
                              "XU records to write; read it with ompf_profile_read", path);
    size_t tlen = strlen(path) + 32;
    char *tmp = malloc(tlen);
    if (!tmp)
        return ompf_error_set(err, OMPF_ENOMEM, "%s: out of memory", path);
    /* a device or FIFO (-o /dev/null) is written directly, never renamed
     * over */
    int direct = ompf_output_is_special(path);
    if (direct)
        snprintf(tmp, tlen, "%s", path);
    else
        snprintf(tmp, tlen, "%s.tmp.%ld", path, (long)getpid());
    int fd = direct ? open(tmp, O_WRONLY | O_CLOEXEC)
                    : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int rc = ompf_error_set(err, errno == EACCES ? OMPF_EPERM : OMPF_EIO,
                                "%s: cannot create: %s; check that the directory exists "
                                "and is writable", path, strerror(errno));
        free(tmp);
        return rc;
    }
    wctx_t w = {.fd = fd, .tmp = tmp, .err = err};
    w.z = ZSTD_createCCtx();
    int rc = w.z ? write_body(&w, p, feed)
                 : ompf_error_set(err, OMPF_ENOMEM, "%s: out of memory", tmp);
    ZSTD_freeCCtx(w.z);
    fmt_buf_free(&w.payload);
    fmt_buf_free(&w.chunk);
    if (!rc && !direct && fsync(fd))
        rc = ompf_error_set(err, OMPF_EIO, "%s: fsync failed: %s", tmp, strerror(errno));
    if (close(fd) && !rc)
        rc = ompf_error_set(err, OMPF_EIO, "%s: close failed: %s", tmp, strerror(errno));
    if (!rc && !direct && rename(tmp, path))
        rc = ompf_error_set(err, OMPF_EIO, "%s: cannot rename to %s: %s", tmp, path,
                            strerror(errno));
    if (rc && !direct)
        unlink(tmp);
    free(tmp);
    return rc;
}

int ompf_profile_write(const ompf_profile_t *p, const char *path, ompf_error_t *err)
{
    return write_file(p, NULL, path, err);
}

int ompf_profile_write_feed(const ompf_profile_t *header, const ompf_xu_feed_t *feed,
                            const char *path, ompf_error_t *err)
{
    if (!feed || !feed->rows)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_profile_write_feed: no feed");
    if (feed->label && header && ompf_label_count(header) != 1)
        return ompf_error_set(err, OMPF_EINVAL, "%s: labels both in the header and in the "
                              "feed (file.h, ompf_xu_feed_t)", path ? path : "(no path)");
    return write_file(header, feed, path, err);
}
