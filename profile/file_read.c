/* Profile reader (docs/format.md).  Never trusts the input: every size is
 * checked against the bytes that are really there, every allocation is
 * bounded by a chunk payload, every reference is resolved or reported.
 *
 * Pass 1 walks the chunks, verifies framing and checksums and decodes all
 * chunks except XUS (metadata, events and sources go straight into the
 * profile; constructs, labels and threads are collected).  Then ids are
 * resolved (a label's parent may come in a later chunk, from another
 * stream).  Pass 2 decodes the XUS chunks directly into the profile, so the
 * XU records are never held twice. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "fmt.h"
#include "ompfuse/file.h"

#define NONE32 UINT32_MAX
#define LABEL_DROPPED (UINT32_MAX - 1) /* parent chain lost in truncation */

/* Fuzzing builds ignore checksums so that mutated inputs reach the
 * decoders behind them (the checksum test itself is a single compare). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CRC_MISMATCH(a, b) ((void)(a), (void)(b), 0)
#else
#define CRC_MISMATCH(a, b) ((a) != (b))
#endif

typedef struct xus_loc {
    size_t off; /* of the chunk header */
    fmt_chunk_hdr_t h;
    uint64_t chunk; /* index in the file */
} xus_loc_t;

typedef struct thread_rec {
    uint64_t index;
    int32_t os_tid;
    double *vals; /* 4 x n_events */
} thread_rec_t;

typedef struct rd {
    const unsigned char *buf;
    size_t len;
    const char *name;
    ompf_error_t *err;
    ompf_profile_t *p;

    /* framing */
    uint32_t version; /* of the file (1 or 2) */
    int truncated;
    char trunc_why[160];
    uint64_t chunks;      /* complete chunks read (END included) */
    uint64_t chunk_index; /* of the chunk being decoded */
    size_t chunk_off;
    uint32_t chunk_type;

    unsigned char *scratch; /* decompressed payload */
    size_t scratch_cap;
    ZSTD_DCtx *z;

    int have_events;
    int32_t *ev_source; /* latest source per event */

    fmt_idmap_t con_map; /* construct id -> construct index */

    fmt_label_rec_t *lab;
    size_t n_lab, cap_lab;
    fmt_idmap_t lab_map; /* label id -> record index; after resolution,
                            label id -> trie node or LABEL_DROPPED */
    uint32_t *lab_node;  /* record index -> trie node (NONE32: dropped) */

    thread_rec_t *th;
    size_t n_th, cap_th;

    xus_loc_t *xus;
    size_t n_xus, cap_xus;
    uint64_t xus_in_chunks;

    int have_end;
    uint64_t end_xus, end_chunks;

    uint64_t xus_read, xus_dropped;

    fmt_exact_t exact; /* EXACT records, applied after pass 2 */
    fmt_parts_t parts;      /* PARTS records, attached after pass 2 */
    uint64_t parts_dropped; /* XUs whose parts were lost (truncated) */
} rd_t;

/* Error naming the file and, while decoding, the chunk. */
__attribute__((format(printf, 3, 4))) static int fail(rd_t *r, int code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->chunk_type)
        return ompf_error_set(r->err, code, "%s: chunk %llu (%s) at offset %zu: %s", r->name,
                              (unsigned long long)r->chunk_index,
                              fmt_chunk_name(r->chunk_type), r->chunk_off, msg);
    return ompf_error_set(r->err, code, "%s: %s", r->name, msg);
}

/* A count the file declares beyond one of the OMPF_MAX_* limits. */
static int over_limit(rd_t *r, const char *what, uint64_t value, const char *limit,
                      unsigned max)
{
    return fail(r, OMPF_ERANGE, "declares %llu %s, more than the limit %s = %u "
                "(docs/format.md, Limits)", (unsigned long long)value, what, limit, max);
}

static int oom(rd_t *r)
{
    return fail(r, OMPF_ENOMEM, "out of memory while reading the profile");
}

#define MALFORMED "malformed payload (the file is damaged or was not written by ompfuse)"

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (*arr && need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *a = realloc(*arr, c * elem);
    if (!a)
        return OMPF_ENOMEM;
    *arr = a;
    *cap = c;
    return 0;
}

/* Returns the decoded payload of a verified chunk in *out. */
static int payload(rd_t *r, const fmt_chunk_hdr_t *h, const unsigned char *stored,
                   fmt_cur_t *out)
{
    if (!(h->flags & FMT_CF_ZSTD)) {
        out->p = stored;
        out->end = stored + h->stored;
        out->bad = 0;
        return 0;
    }
    unsigned long long fcs = ZSTD_getFrameContentSize(stored, h->stored);
    if (fcs == ZSTD_CONTENTSIZE_ERROR || fcs != h->raw)
        return fail(r, OMPF_EFORMAT, "compressed payload does not match its declared size "
                                     "of %llu bytes; " MALFORMED, (unsigned long long)h->raw);
    if (r->scratch_cap < h->raw || !r->scratch) {
        free(r->scratch);
        r->scratch_cap = h->raw ? h->raw : 1;
        r->scratch = malloc(r->scratch_cap);
        if (!r->scratch) {
            r->scratch_cap = 0;
            return oom(r);
        }
    }
    if (!r->z && !(r->z = ZSTD_createDCtx()))
        return oom(r);
    size_t n = ZSTD_decompressDCtx(r->z, r->scratch, h->raw, stored, h->stored);
    if (ZSTD_isError(n) || n != h->raw)
        return fail(r, OMPF_EFORMAT, "zstd cannot decompress the payload (%s); " MALFORMED,
                    ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short output");
    out->p = r->scratch;
    out->end = r->scratch + h->raw;
    out->bad = 0;
    return 0;
}

static int finish_payload(rd_t *r, const fmt_cur_t *c)
{
    if (c->bad)
        return fail(r, OMPF_EFORMAT, "a record is malformed or runs past the end of the payload; " MALFORMED);
    if (c->p != c->end)
        return fail(r, OMPF_EFORMAT, "%zu unexpected bytes after the last record; " MALFORMED,
                    (size_t)(c->end - c->p));
    return 0;
}

/* ---- pass 1 decoders -------------------------------------------------- */

static int dec_meta(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    if (ompf_meta_count(r->p) + count > OMPF_MAX_META)
        return over_limit(r, "metadata entries", ompf_meta_count(r->p) + count,
                          "OMPF_MAX_META", OMPF_MAX_META);
    for (uint32_t i = 0; i < count; i++) {
        int o = 0;
        char *k = fmt_cur_str(c, &o);
        char *v = k ? fmt_cur_str(c, &o) : NULL;
        if (!k || !v) {
            free(k);
            free(v);
            return o ? oom(r) : finish_payload(r, c);
        }
        int rc = ompf_meta_set(r->p, k, v);
        free(k);
        free(v);
        if (rc)
            return rc == OMPF_ENOMEM ? oom(r)
                                     : fail(r, OMPF_EFORMAT, "invalid metadata entry %u", i);
    }
    return finish_payload(r, c);
}

static int dec_events(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    int first = !r->have_events;
    if (count > OMPF_MAX_EVENTS)
        return over_limit(r, "events", count, "OMPF_MAX_EVENTS", OMPF_MAX_EVENTS);
    if (!first && count != ompf_event_count(r->p))
        return fail(r, OMPF_EFORMAT, "lists %u events but the first EVENTS chunk listed %zu; "
                    MALFORMED, count, ompf_event_count(r->p));
    if (first) {
        r->ev_source = calloc(count + 1, sizeof *r->ev_source);
        if (!r->ev_source)
            return oom(r);
    }
    int rc = 0;
    for (uint32_t i = 0; i < count && !rc; i++) {
        int o = 0, has_reason = 0;
        char *name = fmt_cur_str(c, &o);
        uint64_t pe_type = fmt_cur_uv(c), config = fmt_cur_uv(c), config1 = fmt_cur_uv(c),
                 config2 = fmt_cur_uv(c), pe_flags = fmt_cur_uv(c);
        int64_t status = fmt_cur_sv(c);
        char *reason = name && !c->bad ? fmt_cur_optstr(c, &has_reason, &o) : NULL;
        int64_t source = fmt_cur_sv(c);
        if (o)
            rc = oom(r);
        else if (!name || c->bad || (has_reason && !reason))
            rc = finish_payload(r, c);
        else if (pe_type > UINT32_MAX || pe_flags > UINT32_MAX)
            rc = fail(r, OMPF_ERANGE, "event '%s' has an out-of-range perf type or flags",
                      name);
        else if (status < 0 || status >= OMPF_EV_STATUS_COUNT)
            rc = fail(r, OMPF_ERANGE, "event '%s' has status %lld, outside 0..%d", name,
                      (long long)status, OMPF_EV_STATUS_COUNT - 1);
        else if (source < -1 || source > INT32_MAX)
            rc = fail(r, OMPF_ERANGE, "event '%s' has source %lld, out of range", name,
                      (long long)source);
        else if (first) {
            ompf_event_t ev = {
                .name = name, .pe_type = (uint32_t)pe_type, .config = config,
                .config1 = config1, .config2 = config2, .pe_flags = (uint32_t)pe_flags,
                .status = (int32_t)status, .reason = reason, .source = -1,
            };
            uint32_t idx;
            int arc = ompf_event_add(r->p, &ev, &idx);
            if (arc == OMPF_ENOMEM)
                rc = oom(r);
            else if (arc)
                rc = fail(r, OMPF_EFORMAT, "event %u ('%s') cannot be added (%s; duplicate "
                          "name?)", i, name, ompf_strerror(arc));
        } else if (strcmp(name, ompf_event_get(r->p, i)->name)) {
            rc = fail(r, OMPF_EFORMAT, "event %u is '%s' but the first EVENTS chunk named it "
                      "'%s'; " MALFORMED, i, name, ompf_event_get(r->p, i)->name);
        } else if (ompf_event_set_status(r->p, i, (int32_t)status, reason)) {
            rc = oom(r);
        }
        if (!rc)
            r->ev_source[i] = (int32_t)source;
        free(name);
        free(reason);
    }
    r->have_events = 1;
    return rc ? rc : finish_payload(r, c);
}

static int dec_sources(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    if (ompf_source_count(r->p) + count > OMPF_MAX_SOURCES)
        return over_limit(r, "provenance sources", ompf_source_count(r->p) + count,
                          "OMPF_MAX_SOURCES", OMPF_MAX_SOURCES);
    for (uint32_t i = 0; i < count; i++) {
        int o = 0;
        uint64_t run_id = fmt_cur_uv(c);
        char *path = fmt_cur_str(c, &o);
        if (!path)
            return o ? oom(r) : finish_payload(r, c);
        ompf_source_t s = {.run_id = run_id, .path = path};
        uint32_t idx;
        int rc = ompf_source_add(r->p, &s, &idx);
        free(path);
        if (rc)
            return rc == OMPF_ENOMEM ? oom(r)
                                     : fail(r, OMPF_EFORMAT, "source %u cannot be added (%s)",
                                            i, ompf_strerror(rc));
    }
    return finish_payload(r, c);
}

static int str_eq(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

static int dec_constructs(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    int rc = 0;
    for (uint32_t i = 0; i < count && !rc; i++) {
        int o = 0, has_file = 0, has_fn = 0, has_name = 0;
        uint64_t id = fmt_cur_uv(c);
        char *module = fmt_cur_str(c, &o);
        char *build_id = module ? fmt_cur_str(c, &o) : NULL;
        uint64_t offset = fmt_cur_uv(c);
        int64_t kind = fmt_cur_sv(c);
        char *file = build_id ? fmt_cur_optstr(c, &has_file, &o) : NULL;
        int64_t line = fmt_cur_sv(c);
        char *fn = build_id ? fmt_cur_optstr(c, &has_fn, &o) : NULL;
        char *name = build_id ? fmt_cur_optstr(c, &has_name, &o) : NULL;
        if (o)
            rc = oom(r);
        else if (!module || !build_id || c->bad)
            rc = finish_payload(r, c);
        else if (kind < 0 || kind >= OMPF_CK_COUNT)
            rc = fail(r, OMPF_ERANGE, "construct id %llu has kind %lld, outside 0..%d",
                      (unsigned long long)id, (long long)kind, OMPF_CK_COUNT - 1);
        else if (line < INT32_MIN || line > INT32_MAX)
            rc = fail(r, OMPF_ERANGE, "construct id %llu has line %lld, out of range",
                      (unsigned long long)id, (long long)line);
        else {
            uint32_t idx = (uint32_t)ompf_construct_count(r->p), old;
            if (fmt_idmap_put(&r->con_map, id, idx, &old))
                rc = oom(r);
            else if (old != NONE32) {
                /* The same construct written by several streams. */
                const ompf_construct_t *e = ompf_construct_get(r->p, old);
                if (!str_eq(e->module, module) || !str_eq(e->build_id, build_id) ||
                    e->offset != offset || e->kind != kind)
                    rc = fail(r, OMPF_EFORMAT, "construct id %llu is defined twice with "
                              "different content; " MALFORMED, (unsigned long long)id);
            } else if (idx >= OMPF_MAX_CONSTRUCTS) {
                rc = over_limit(r, "constructs", (uint64_t)idx + 1, "OMPF_MAX_CONSTRUCTS",
                                OMPF_MAX_CONSTRUCTS);
            } else {
                ompf_construct_t k = {
                    .module = module, .build_id = build_id, .offset = offset,
                    .kind = (int32_t)kind, .file = has_file ? file : NULL,
                    .line = (int32_t)line, .function = has_fn ? fn : NULL,
                    .name = has_name && name && *name ? name : NULL,
                };
                int arc = ompf_construct_add(r->p, &k, &idx);
                if (arc == OMPF_ENOMEM)
                    rc = oom(r);
                else if (arc)
                    rc = fail(r, OMPF_EFORMAT, "construct id %llu cannot be added (%s)",
                              (unsigned long long)id, ompf_strerror(arc));
            }
        }
        free(module);
        free(build_id);
        free(file);
        free(fn);
        free(name);
    }
    return rc ? rc : finish_payload(r, c);
}

/* Registers the count label nodes decoded at r->lab + r->n_lab. */
static int add_labels(rd_t *r, const fmt_label_rec_t *l, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        uint32_t old;
        if (fmt_idmap_put(&r->lab_map, l[i].id, (uint32_t)(r->n_lab + i), &old))
            return oom(r);
        if (old != NONE32 && (r->lab[old].parent != l[i].parent ||
                              r->lab[old].comp != l[i].comp))
            return fail(r, OMPF_EFORMAT, "label id %llu is defined twice with different "
                        "content; " MALFORMED, (unsigned long long)l[i].id);
    }
    r->n_lab += count;
    return 0;
}

static int dec_labels(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    if (grow((void **)&r->lab, &r->cap_lab, r->n_lab + count, sizeof *r->lab))
        return oom(r);
    fmt_label_rec_t *l = r->lab + r->n_lab;
    uint64_t prev = 0;
    for (uint32_t i = 0; i < count; i++) {
        l[i].id = prev + (uint64_t)fmt_cur_sv(c);
        prev = l[i].id;
    }
    for (uint32_t i = 0; i < count; i++)
        l[i].parent = l[i].id - (uint64_t)fmt_cur_sv(c);
    prev = 0;
    for (uint32_t i = 0; i < count; i++) {
        l[i].comp = prev + (uint64_t)fmt_cur_sv(c);
        prev = l[i].comp;
    }
    int rc = finish_payload(r, c);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < count; i++)
        if (l[i].id == 0)
            return fail(r, OMPF_EFORMAT, "a label node has id 0, which is reserved for the "
                        "root; " MALFORMED);
    return add_labels(r, l, count);
}

/* A column of n items: in version 2 a mode column (mode 0: n items;
 * mode 1, n >= 2: item 0, then the one value of items 1..n-1), in
 * version 1 always n items without a mode. */
typedef struct mcol {
    fmt_cur_t c;
    int constant;
    uint64_t i, first, rest;
} mcol_t;

/* Starts column m at c's position, for n items, and moves c past it
 * (skip_values: the items are event values, version 1 layout only). */
static void mcol_begin(const rd_t *r, mcol_t *m, fmt_cur_t *c, uint64_t n, int has_mode,
                       int skip_values)
{
    memset(m, 0, sizeof *m);
    uint64_t mode = has_mode && r->version >= 2 ? fmt_cur_uv(c) : 0;
    if (mode == 1 && n >= 2) {
        m->constant = 1;
        m->first = fmt_cur_uv(c);
        m->rest = fmt_cur_uv(c);
        m->c = *c;
        return;
    }
    if (mode != 0)
        c->bad = 1;
    m->c = *c;
    if (skip_values)
        fmt_cur_skip_values(c, n);
    else
        fmt_cur_skip_uv(c, n);
}

static inline uint64_t mcol_uv(mcol_t *m)
{
    if (m->constant)
        return m->i++ ? m->rest : m->first;
    return fmt_cur_uv(&m->c);
}
static inline int64_t mcol_sv(mcol_t *m) { return fmt_unzz(mcol_uv(m)); }

/* Version 2 PATHS: each record is a chain of 1..FMT_PATH_MAX label nodes
 * with consecutive ids; expanded into label records. */
static int dec_paths(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    mcol_t mn, mf, mp;
    mcol_begin(r, &mn, c, count, 1, 0);
    mcol_begin(r, &mf, c, count, 1, 0);
    mcol_begin(r, &mp, c, count, 1, 0);
    if (c->bad)
        return finish_payload(r, c);
    /* node counts first: they size the component columns */
    unsigned char *nn = malloc(count ? count : 1);
    if (!nn)
        return oom(r);
    uint64_t nodes = 0, per[FMT_PATH_MAX] = {0};
    for (uint32_t i = 0; i < count; i++) {
        uint64_t k = mcol_uv(&mn);
        if (mn.c.bad) {
            free(nn);
            return finish_payload(r, &mn.c);
        }
        if (k == 0 || k > FMT_PATH_MAX) {
            free(nn);
            return fail(r, OMPF_EFORMAT, "a label path has %llu nodes (1..%u allowed); "
                        MALFORMED, (unsigned long long)k, FMT_PATH_MAX);
        }
        nn[i] = (unsigned char)k;
        nodes += k;
        for (uint64_t j = 0; j < k; j++)
            per[j]++;
    }
    mcol_t mc[FMT_PATH_MAX];
    for (unsigned j = 0; j < FMT_PATH_MAX; j++)
        mcol_begin(r, &mc[j], c, per[j], 1, 0);
    int rc = finish_payload(r, c);
    if (!rc && grow((void **)&r->lab, &r->cap_lab, r->n_lab + nodes, sizeof *r->lab))
        rc = oom(r);
    if (rc) {
        free(nn);
        return rc;
    }
    fmt_label_rec_t *l = r->lab + r->n_lab;
    uint64_t first = 0, parent = 0, prevc[FMT_PATH_MAX] = {0};
    size_t at = 0;
    for (uint32_t i = 0; i < count && !rc; i++) {
        first += (uint64_t)mcol_sv(&mf);
        parent += (uint64_t)mcol_sv(&mp);
        if (first == 0 || first + (nn[i] - 1) < first)
            rc = fail(r, OMPF_EFORMAT, "a label path has id 0, which is reserved for the "
                      "root, or its ids wrap around; " MALFORMED);
        for (unsigned j = 0; j < nn[i] && !rc; j++) {
            prevc[j] += (uint64_t)mcol_sv(&mc[j]);
            l[at].id = first + j;
            l[at].parent = j ? first + j - 1 : parent;
            l[at].comp = prevc[j];
            at++;
        }
    }
    free(nn);
    if (!rc && (mf.c.bad || mp.c.bad))
        rc = finish_payload(r, mf.c.bad ? &mf.c : &mp.c);
    for (unsigned j = 0; j < FMT_PATH_MAX && !rc; j++)
        if (mc[j].c.bad)
            rc = finish_payload(r, &mc[j].c);
    return rc ? rc : add_labels(r, l, at);
}

static int dec_threads(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    size_t nev = ompf_event_count(r->p);
    if (r->n_th + count > OMPF_MAX_THREADS)
        return over_limit(r, "thread records", r->n_th + count, "OMPF_MAX_THREADS",
                          OMPF_MAX_THREADS);
    if (grow((void **)&r->th, &r->cap_th, r->n_th + count, sizeof *r->th))
        return oom(r);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t index = fmt_cur_uv(c);
        int64_t os_tid = fmt_cur_sv(c);
        uint64_t n = fmt_cur_uv(c);
        if (c->bad)
            return finish_payload(r, c);
        if (n != nev)
            return fail(r, OMPF_EFORMAT, "thread %llu carries %llu event totals but the "
                        "profile has %zu events; " MALFORMED, (unsigned long long)index,
                        (unsigned long long)n, nev);
        if (os_tid < INT32_MIN || os_tid > INT32_MAX)
            return fail(r, OMPF_ERANGE, "thread %llu has OS thread id %lld, out of range",
                        (unsigned long long)index, (long long)os_tid);
        /* Each value takes at least one byte: bounded by the payload. */
        if ((uint64_t)(c->end - c->p) < 4 * n)
            return finish_payload(r, (c->bad = 1, c));
        thread_rec_t *t = &r->th[r->n_th];
        t->index = index;
        t->os_tid = (int32_t)os_tid;
        t->vals = malloc((4 * nev + 1) * sizeof *t->vals);
        if (!t->vals)
            return oom(r);
        r->n_th++;
        for (size_t k = 0; k < 4 * nev; k++)
            t->vals[k] = fmt_cur_value(c);
        if (c->bad)
            return finish_payload(r, c);
    }
    return finish_payload(r, c);
}

static int dec_end(rd_t *r, fmt_cur_t *c)
{
    r->end_xus = fmt_cur_uv(c);
    r->end_chunks = fmt_cur_uv(c);
    int rc = finish_payload(r, c);
    if (rc)
        return rc;
    if (r->end_chunks != r->chunks - 1)
        return fail(r, OMPF_EFORMAT, "END says %llu chunks precede it but %llu do; " MALFORMED,
                    (unsigned long long)r->end_chunks, (unsigned long long)(r->chunks - 1));
    if (r->end_xus != r->xus_in_chunks)
        return fail(r, OMPF_EFORMAT, "END says %llu XUs were written but the XUS chunks hold "
                    "%llu; " MALFORMED, (unsigned long long)r->end_xus,
                    (unsigned long long)r->xus_in_chunks);
    r->have_end = 1;
    return 0;
}

static int dec_exact(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    char why[300];
    int rc = fmt_exact_decode(&r->exact, c, count, why, sizeof why);
    if (rc == OMPF_ENOMEM)
        return oom(r);
    if (rc)
        return fail(r, rc, "%s; " MALFORMED, why);
    return finish_payload(r, c);
}

static int dec_parts(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    const char *what = "";
    int rc = fmt_parts_decode(&r->parts, c, count, &what);
    if (rc == OMPF_ENOMEM)
        return oom(r);
    if (rc)
        return fail(r, rc, "%s; " MALFORMED, what);
    return finish_payload(r, c);
}

static void set_truncated(rd_t *r, const char *why)
{
    r->truncated = 1;
    snprintf(r->trunc_why, sizeof r->trunc_why, "%s", why);
}

static int pass1(rd_t *r)
{
    size_t off = FMT_HEADER_SIZE;
    for (;;) {
        r->chunk_type = 0;
        if (off == r->len) {
            set_truncated(r, "the END chunk is missing");
            return 0;
        }
        if (r->len - off < FMT_CHUNK_HEADER_SIZE) {
            set_truncated(r, "the file ends inside a chunk header");
            return 0;
        }
        fmt_chunk_hdr_t h;
        fmt_chunk_hdr_parse(r->buf + off, &h);
        r->chunk_index = r->chunks;
        r->chunk_off = off;
        r->chunk_type = h.type ? h.type : UINT32_MAX;
        int known = h.type >= 1 &&
                    h.type <= (r->version >= 2 ? FMT_CHUNK_TYPE_MAX : FMT_CHUNK_END);
        /* version 2: constant columns of XUS and PATHS take no bytes per
         * record, their count has its own limit */
        int columns = r->version >= 2 &&
                      (h.type == FMT_CHUNK_XUS || h.type == FMT_CHUNK_PATHS);
        if (h.flags & ~FMT_CF_KNOWN)
            return fail(r, OMPF_EFORMAT, "unknown chunk flags 0x%x; " MALFORMED, h.flags);
        if (!known && !(h.flags & FMT_CF_SKIPPABLE))
            return fail(r, OMPF_EFORMAT, "unknown chunk type %u; " MALFORMED
                        " (a newer writer marks optional chunks skippable)", h.type);
        if (h.raw > FMT_MAX_RAW || h.stored > FMT_MAX_STORED)
            return fail(r, OMPF_ERANGE, "absurd chunk size (%llu bytes stored, %llu decoded; "
                        "the limit is %u MiB); " MALFORMED, (unsigned long long)h.stored,
                        (unsigned long long)h.raw, FMT_MAX_RAW >> 20);
        if (!(h.flags & FMT_CF_ZSTD) && h.raw != h.stored)
            return fail(r, OMPF_EFORMAT, "uncompressed chunk with different stored (%llu) and "
                        "decoded (%llu) sizes; " MALFORMED, (unsigned long long)h.stored,
                        (unsigned long long)h.raw);
        if (h.stored > r->len - off - FMT_CHUNK_HEADER_SIZE) {
            char why[160];
            snprintf(why, sizeof why, "chunk %llu needs %llu payload bytes but only %zu remain",
                     (unsigned long long)r->chunks, (unsigned long long)h.stored,
                     r->len - off - FMT_CHUNK_HEADER_SIZE);
            set_truncated(r, why);
            return 0;
        }
        const unsigned char *stored = r->buf + off + FMT_CHUNK_HEADER_SIZE;
        if (CRC_MISMATCH(fmt_chunk_crc(r->buf + off, stored, h.stored), h.crc))
            return fail(r, OMPF_ECHECKSUM, "checksum mismatch: the file is damaged; "
                        "re-record the profile or restore an intact copy");
        if (h.type == FMT_CHUNK_END ? h.count != 0
            : columns             ? h.type == FMT_CHUNK_PATHS && h.count > FMT_MAX_COLUMN_RECORDS
                                  : h.count > h.raw)
            return fail(r, OMPF_ERANGE, "absurd record count %u for a %llu-byte payload; "
                        MALFORMED, h.count, (unsigned long long)h.raw);
        r->chunks++;
        int rc = 0;
        fmt_cur_t c;
        if (h.type == FMT_CHUNK_XUS) {
            /* Version 1: every XU has at least FMT_XU_COLUMNS bytes. */
            if (columns ? h.count > FMT_MAX_COLUMN_RECORDS
                        : (uint64_t)h.count * FMT_XU_COLUMNS > h.raw)
                return fail(r, OMPF_ERANGE, "absurd XU count %u for a %llu-byte payload; "
                            MALFORMED, h.count, (unsigned long long)h.raw);
            if (grow((void **)&r->xus, &r->cap_xus, r->n_xus + 1, sizeof *r->xus))
                return oom(r);
            r->xus[r->n_xus++] = (xus_loc_t){off, h, r->chunk_index};
            r->xus_in_chunks += h.count;
        } else if (known) {
            if ((rc = payload(r, &h, stored, &c)))
                return rc;
            switch (h.type) {
            case FMT_CHUNK_META: rc = dec_meta(r, &c, h.count); break;
            case FMT_CHUNK_EVENTS: rc = dec_events(r, &c, h.count); break;
            case FMT_CHUNK_CONSTRUCTS: rc = dec_constructs(r, &c, h.count); break;
            case FMT_CHUNK_LABELS: rc = dec_labels(r, &c, h.count); break;
            case FMT_CHUNK_PATHS: rc = dec_paths(r, &c, h.count); break;
            case FMT_CHUNK_THREADS: rc = dec_threads(r, &c, h.count); break;
            case FMT_CHUNK_SOURCES: rc = dec_sources(r, &c, h.count); break;
            case FMT_CHUNK_END: rc = dec_end(r, &c); break;
            case FMT_CHUNK_EXACT: rc = dec_exact(r, &c, h.count); break;
            case FMT_CHUNK_PARTS: rc = dec_parts(r, &c, h.count); break;
            default: break;
            }
            if (rc)
                return rc;
        }
        off += FMT_CHUNK_HEADER_SIZE + (size_t)h.stored;
        if (r->have_end) {
            r->chunk_type = 0;
            if (off != r->len)
                return fail(r, OMPF_EFORMAT, "%zu bytes follow the END chunk at offset %zu; "
                            MALFORMED, r->len - off, off);
            return 0;
        }
    }
}

/* ---- resolution ------------------------------------------------------- */

static int cmp_thread(const void *a, const void *b)
{
    const thread_rec_t *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int build_threads(rd_t *r)
{
    size_t nev = ompf_event_count(r->p);
    if (r->n_th)
        qsort(r->th, r->n_th, sizeof *r->th, cmp_thread);
    for (size_t i = 0; i < r->n_th; i++) {
        const thread_rec_t *t = &r->th[i];
        if (i > 0 && t->index == r->th[i - 1].index)
            return fail(r, OMPF_EFORMAT, "thread index %llu is recorded twice; " MALFORMED,
                        (unsigned long long)t->index);
        if (t->index >= OMPF_MAX_THREADS)
            return fail(r, OMPF_ERANGE, "thread index %llu is not below the limit "
                        "OMPF_MAX_THREADS = %u (docs/format.md, Limits)",
                        (unsigned long long)t->index, OMPF_MAX_THREADS);
        if (t->index >= r->n_th + FMT_MAX_SALVAGE_THREADS)
            return fail(r, OMPF_ERANGE, "thread index %llu is out of range (%zu thread "
                        "records); " MALFORMED, (unsigned long long)t->index, r->n_th);
        /* A thread whose record was lost (truncation, or a writer that could
         * not profile it) gets an empty record: indices are positions. */
        while (ompf_thread_count(r->p) < t->index) {
            uint32_t idx;
            if (ompf_thread_add(r->p, -1, &idx))
                return oom(r);
        }
        uint32_t idx;
        if (ompf_thread_add(r->p, t->os_tid, &idx))
            return oom(r);
        ompf_thread_t *pt = ompf_thread_get(r->p, idx);
        for (size_t e = 0; e < nev; e++) {
            pt->total[e] = t->vals[e];
            pt->gap[e] = t->vals[nev + e];
            pt->enabled_ns[e] = t->vals[2 * nev + e];
            pt->running_ns[e] = t->vals[3 * nev + e];
        }
    }
    return 0;
}

/* Walks each label's parent chain up to a resolved node and creates the
 * trie nodes on the way back.  Detects cycles and dangling parents. */
static int build_labels(rd_t *r)
{
    size_t n = r->n_lab;
    r->lab_node = malloc((n + 1) * sizeof *r->lab_node);
    unsigned char *state = calloc(n + 1, 1); /* 0 new, 1 on stack, 2 done */
    uint32_t *stack = malloc((n + 1) * sizeof *stack);
    if (!r->lab_node || !state || !stack) {
        free(state);
        free(stack);
        return oom(r);
    }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (state[i] == 2)
            continue;
        size_t sp = 0;
        uint32_t cur = (uint32_t)i;
        uint32_t top_node = NONE32; /* node of the resolved ancestor */
        for (;;) {
            if (state[cur] == 2) {
                top_node = r->lab_node[cur];
                break;
            }
            if (state[cur] == 1) {
                rc = fail(r, OMPF_EFORMAT, "label ids form a cycle through id %llu (a node is "
                          "its own ancestor); " MALFORMED, (unsigned long long)r->lab[cur].id);
                break;
            }
            state[cur] = 1;
            stack[sp++] = cur;
            uint64_t pid = r->lab[cur].parent;
            if (pid == 0) {
                top_node = OMPF_LABEL_ROOT;
                break;
            }
            uint32_t prec = fmt_idmap_get(&r->lab_map, pid);
            if (prec == NONE32) {
                if (!r->truncated) {
                    rc = fail(r, OMPF_EFORMAT, "label id %llu has parent id %llu, which is "
                              "not defined (dangling id); " MALFORMED,
                              (unsigned long long)r->lab[cur].id, (unsigned long long)pid);
                    break;
                }
                top_node = NONE32; /* lost with the truncated tail */
                break;
            }
            cur = prec;
        }
        if (rc)
            break;
        while (sp > 0) {
            uint32_t k = stack[--sp];
            uint32_t node = NONE32;
            if (top_node != NONE32) {
                int arc = ompf_label_child(r->p, top_node, r->lab[k].comp, &node);
                if (arc == OMPF_ERANGE && ompf_label_depth(r->p, top_node) >=
                                              OMPF_MAX_LABEL_DEPTH) {
                    rc = fail(r, OMPF_ERANGE, "label id %llu is deeper than %u components, "
                              "the limit OMPF_MAX_LABEL_DEPTH (docs/format.md, Limits)",
                              (unsigned long long)r->lab[k].id, OMPF_MAX_LABEL_DEPTH);
                    break;
                }
                if (arc) {
                    rc = arc == OMPF_ENOMEM ? oom(r)
                                            : fail(r, OMPF_EFORMAT, "label id %llu cannot be "
                                                   "added (%s)", (unsigned long long)r->lab[k].id,
                                                   ompf_strerror(arc));
                    break;
                }
            }
            r->lab_node[k] = node;
            state[k] = 2;
            top_node = node;
        }
    }
    free(state);
    free(stack);
    if (rc)
        return rc;
    /* From now on the map gives trie nodes directly: the records can go
     * before the XUs are loaded (peak memory). */
    for (size_t i = 0; i < n; i++)
        if (fmt_idmap_get(&r->lab_map, r->lab[i].id) == i)
            fmt_idmap_set(&r->lab_map, r->lab[i].id,
                          r->lab_node[i] == NONE32 ? LABEL_DROPPED : r->lab_node[i]);
    free(r->lab);
    free(r->lab_node);
    r->lab = NULL;
    r->lab_node = NULL;
    r->n_lab = r->cap_lab = 0;
    return 0;
}

static int resolve(rd_t *r)
{
    r->chunk_type = 0;
    size_t nev = ompf_event_count(r->p), nsrc = ompf_source_count(r->p);
    for (size_t e = 0; e < nev; e++) {
        int32_t s = r->ev_source[e];
        if (s >= 0 && (size_t)s >= nsrc && r->truncated)
            s = -1; /* the SOURCES chunk was lost with the tail */
        if (s >= 0 && (size_t)s >= nsrc)
            return fail(r, OMPF_ERANGE, "event '%s' refers to source %d but the profile has "
                        "%zu sources; " MALFORMED, ompf_event_get(r->p, (uint32_t)e)->name, s,
                        nsrc);
        if (ompf_event_set_source(r->p, (uint32_t)e, s))
            return fail(r, OMPF_EFORMAT, "event '%s': source %d rejected",
                        ompf_event_get(r->p, (uint32_t)e)->name, s);
    }
    int rc = build_threads(r);
    if (!rc)
        rc = build_labels(r);
    return rc;
}

/* ---- pass 2: XUs ------------------------------------------------------ */

static int dec_xus(rd_t *r, const xus_loc_t *loc, double *row)
{
    r->chunk_index = loc->chunk;
    r->chunk_off = loc->off;
    r->chunk_type = FMT_CHUNK_XUS;
    fmt_cur_t c;
    int rc = payload(r, &loc->h, r->buf + loc->off + FMT_CHUNK_HEADER_SIZE, &c);
    if (rc)
        return rc;
    size_t nev = ompf_event_count(r->p), nsrc = ompf_source_count(r->p);
    uint64_t n_ev = fmt_cur_uv(&c), n_prov = fmt_cur_uv(&c);
    if (c.bad)
        return finish_payload(r, &c);
    if (n_ev != nev)
        return fail(r, OMPF_EFORMAT, "XUs carry %llu values each but the profile has %zu "
                    "events; " MALFORMED, (unsigned long long)n_ev, nev);
    if (n_prov != nsrc)
        return fail(r, OMPF_EFORMAT, "XUs carry %llu provenance ids each but the profile has "
                    "%zu sources; " MALFORMED, (unsigned long long)n_prov, nsrc);
    /* Locate every column, then read the rows across them. */
    size_t ncol = FMT_XU_COLUMNS + nev + nsrc;
    mcol_t *col = malloc(ncol * sizeof *col);
    if (!col)
        return oom(r);
    uint64_t n = loc->h.count;
    for (size_t k = 0; k < ncol; k++)
        mcol_begin(r, &col[k], &c, n, k < FMT_XU_COLUMNS,
                   k >= FMT_XU_COLUMNS && k < FMT_XU_COLUMNS + nev);
    rc = finish_payload(r, &c);
    uint64_t prev[FMT_XU_COLUMNS] = {0};
    uint64_t *pprev = calloc(nsrc + 1, sizeof *pprev);
    if (!pprev && !rc)
        rc = oom(r);
    size_t nth = ompf_thread_count(r->p);
    for (uint64_t i = 0; i < n && !rc; i++) {
        ompf_xu_t x = {0};
        x.id = prev[0] += (uint64_t)mcol_sv(&col[0]);
        uint64_t cid = prev[1] += (uint64_t)mcol_sv(&col[1]);
        uint64_t lid = prev[2] += (uint64_t)mcol_sv(&col[2]);
        uint64_t thread = mcol_uv(&col[3]), team_thread = mcol_uv(&col[4]),
                 team_size = mcol_uv(&col[5]), parts = mcol_uv(&col[6]);
        int64_t cpu = mcol_sv(&col[7]), core = mcol_sv(&col[8]),
                numa = mcol_sv(&col[9]);
        uint64_t kind = mcol_uv(&col[10]);
        x.start_ns = prev[11] += (uint64_t)mcol_sv(&col[11]);
        x.end_ns = x.start_ns + (uint64_t)mcol_sv(&col[12]);
        x.iter_start = prev[13] += (uint64_t)mcol_sv(&col[13]);
        x.iter_count = mcol_uv(&col[14]);
        for (size_t e = 0; e < nev; e++)
            row[e] = fmt_cur_value(&col[FMT_XU_COLUMNS + e].c);
        for (size_t k = 0; k < ncol; k++)
            if (col[k].c.bad) /* cannot happen after the column scan */
                rc = finish_payload(r, &col[k].c);
        if (rc)
            break;
        if (team_thread > UINT32_MAX || team_size > UINT32_MAX || parts > UINT32_MAX ||
            cpu < INT32_MIN || cpu > INT32_MAX || core < INT32_MIN || core > INT32_MAX ||
            numa < INT32_MIN || numa > INT32_MAX || kind >= OMPF_XU_KIND_COUNT) {
            rc = fail(r, OMPF_ERANGE, "XU id %llu has an out-of-range field (kind %llu, team "
                      "thread %llu, team size %llu, parts %llu, cpu %lld); " MALFORMED,
                      (unsigned long long)x.id, (unsigned long long)kind,
                      (unsigned long long)team_thread, (unsigned long long)team_size,
                      (unsigned long long)parts, (long long)cpu);
            break;
        }
        x.team_thread = (uint32_t)team_thread;
        x.team_size = (uint32_t)team_size;
        x.parts = (uint32_t)parts;
        x.cpu = (int32_t)cpu;
        x.core = (int32_t)core;
        x.numa = (int32_t)numa;
        x.kind = (uint8_t)kind;
        uint32_t type = fmt_idmap_get(&r->con_map, cid);
        uint32_t label = lid == 0 ? OMPF_LABEL_ROOT : fmt_idmap_get(&r->lab_map, lid);
        if (label == LABEL_DROPPED)
            label = NONE32;
        /* Source ids are read even for dropped XUs to keep columns aligned. */
        uint64_t *prov = pprev;
        for (size_t s = 0; s < nsrc; s++)
            prov[s] += (uint64_t)mcol_sv(&col[FMT_XU_COLUMNS + nev + s]);
        if (type == NONE32 || label == NONE32) {
            if (!r->truncated) {
                rc = fail(r, OMPF_EFORMAT, "XU id %llu refers to %s id %llu, which is not "
                          "defined (dangling id); " MALFORMED, (unsigned long long)x.id,
                          type == NONE32 ? "construct" : "label",
                          (unsigned long long)(type == NONE32 ? cid : lid));
                break;
            }
            r->xus_dropped++;
            continue;
        }
        /* A complete profile without thread records (allowed by the data
         * model) has nothing to check thread indices against. */
        if (thread >= nth && (nth || r->truncated)) {
            if (!r->truncated) {
                rc = fail(r, OMPF_ERANGE, "XU id %llu refers to thread %llu but the profile "
                          "has %zu threads; " MALFORMED, (unsigned long long)x.id,
                          (unsigned long long)thread, nth);
                break;
            }
            if (thread >= FMT_MAX_SALVAGE_THREADS || thread > UINT32_MAX) {
                r->xus_dropped++;
                continue;
            }
            /* Thread records are written last: invent the lost ones. */
            while (nth <= thread) {
                uint32_t idx;
                if (ompf_thread_add(r->p, -1, &idx)) {
                    rc = oom(r);
                    break;
                }
                nth++;
            }
            if (rc)
                break;
        }
        if (thread > UINT32_MAX) {
            rc = fail(r, OMPF_ERANGE, "XU id %llu has thread index %llu, out of range; "
                      MALFORMED, (unsigned long long)x.id, (unsigned long long)thread);
            break;
        }
        x.type = type;
        x.label = label;
        x.thread = (uint32_t)thread;
        int arc = ompf_xu_add(r->p, &x, row);
        if (arc) {
            rc = arc == OMPF_ENOMEM ? oom(r)
                                    : fail(r, OMPF_EFORMAT, "XU id %llu is rejected by the data "
                                           "model (%s); " MALFORMED, (unsigned long long)x.id,
                                           ompf_strerror(arc));
            break;
        }
        size_t xi = ompf_xu_count(r->p) - 1;
        if (nsrc) {
            uint64_t *dst = ompf_xu_provenance(r->p, xi);
            for (size_t s = 0; s < nsrc; s++)
                dst[s] = prov[s] - 1; /* stored as id + 1 */
        }
        r->xus_read++;
    }
    free(pprev);
    free(col);
    return rc;
}

static int pass2(rd_t *r)
{
    size_t nev = ompf_event_count(r->p);
    double *row = malloc((nev + 1) * sizeof *row);
    if (!row)
        return oom(r);
    /* Reserve only what the file can really hold (a lying count is caught
     * when its chunk is decoded). */
    uint64_t want = r->xus_in_chunks;
    if (want > r->len)
        want = r->len;
    if (want)
        ompf_xu_reserve(r->p, (size_t)want);
    int rc = 0;
    for (size_t i = 0; i < r->n_xus && !rc; i++)
        rc = dec_xus(r, &r->xus[i], row);
    free(row);
    if (!rc) {
        char msg[200] = "";
        r->chunk_type = 0;
        rc = fmt_parts_attach(&r->parts, r->p, r->truncated, &r->parts_dropped, msg, sizeof msg);
        if (rc == OMPF_ENOMEM)
            return oom(r);
        if (rc)
            return fail(r, rc, "%s; " MALFORMED, msg);
    }
    return rc;
}

/* ---- entry points ----------------------------------------------------- */

static int check_header(rd_t *r)
{
    if (r->len == 0)
        return fail(r, OMPF_EFORMAT, "the file is empty (0 bytes); it is not a profile or its "
                    "writer died before writing anything");
    size_t m = r->len < FMT_MAGIC_LEN ? r->len : FMT_MAGIC_LEN;
    if (memcmp(r->buf, FMT_MAGIC, m))
        return fail(r, OMPF_EFORMAT, "not an ompfuse profile (wrong magic number); pass a "
                    "file written by 'ompfuse run' or 'ompfuse import'");
    if (r->len < FMT_HEADER_SIZE)
        return fail(r, OMPF_EFORMAT, "truncated header: the file has %zu bytes, the header "
                    "needs %u; the writer died at once or the copy is incomplete", r->len,
                    FMT_HEADER_SIZE);
    uint32_t version = fmt_get_u32(r->buf + 8);
    if (version > OMPF_FORMAT_VERSION)
        return fail(r, OMPF_EVERSION, "written in format version %u but this ompfuse reads up "
                    "to version %u; upgrade ompfuse", version, OMPF_FORMAT_VERSION);
    if (version == 0)
        return fail(r, OMPF_EFORMAT, "format version 0 does not exist; " MALFORMED);
    r->version = version;
    if (CRC_MISMATCH(fmt_get_u32(r->buf + 28), (uint32_t)fmt_chunk_crc(r->buf, NULL, 0)))
        return fail(r, OMPF_ECHECKSUM, "header checksum mismatch: the file is damaged; "
                    "re-record the profile or restore an intact copy");
    if (fmt_get_u32(r->buf + 12) != FMT_HEADER_SIZE || fmt_get_u32(r->buf + 16) ||
        fmt_get_u32(r->buf + 20) || fmt_get_u32(r->buf + 24))
        return fail(r, OMPF_EFORMAT, "unknown header size or flags; " MALFORMED);
    return 0;
}

static void rd_free(rd_t *r)
{
    free(r->scratch);
    ZSTD_freeDCtx(r->z);
    free(r->ev_source);
    fmt_idmap_free(&r->con_map);
    fmt_idmap_free(&r->lab_map);
    free(r->lab);
    free(r->lab_node);
    for (size_t i = 0; i < r->n_th; i++)
        free(r->th[i].vals);
    free(r->th);
    free(r->xus);
    fmt_exact_free(&r->exact);
    fmt_parts_free(&r->parts);
}

int ompf_profile_read_mem(const void *buf, size_t len, const char *name, ompf_profile_t **out,
                          ompf_read_info_t *info, ompf_error_t *err)
{
    ompf_read_info_t dummy;
    if (!info)
        info = &dummy;
    memset(info, 0, sizeof *info);
    if (!out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_profile_read_mem: no output pointer");
    *out = NULL;
    rd_t r = {.buf = buf, .len = buf ? len : 0, .name = name ? name : "(memory)", .err = err};
    int rc = check_header(&r);
    if (!rc && ompf_profile_create(&r.p))
        rc = oom(&r);
    if (!rc)
        rc = pass1(&r);
    if (!rc && !r.ev_source && !(r.ev_source = calloc(1, sizeof *r.ev_source)))
        rc = oom(&r);
    if (!rc)
        rc = resolve(&r);
    if (!rc)
        rc = pass2(&r);
    if (!rc) {
        char why[300];
        r.chunk_type = 0; /* the message names no chunk */
        int erc = fmt_exact_apply(&r.exact, r.p, r.truncated, why, sizeof why);
        rc = erc == OMPF_ENOMEM ? oom(&r) : erc ? fail(&r, erc, "%s; " MALFORMED, why) : 0;
    }
    info->chunks = r.chunks;
    info->xus_read = r.xus_read;
    info->xus_dropped = r.xus_dropped;
    rd_free(&r);
    if (rc) {
        ompf_profile_destroy(r.p);
        info->xus_read = 0;
        return rc;
    }
    *out = r.p;
    if (!r.truncated)
        return 0;
    info->truncated = 1;
    int k = snprintf(info->note, sizeof info->note, "truncated after %llu XUs (%llu complete "
                     "chunks; %s)", (unsigned long long)r.xus_read,
                     (unsigned long long)r.chunks, r.trunc_why);
    if (r.xus_dropped && k > 0 && (size_t)k < sizeof info->note)
        snprintf(info->note + k, sizeof info->note - (size_t)k,
                 "; %llu XUs dropped for lost references", (unsigned long long)r.xus_dropped);
    k = (int)strlen(info->note);
    if (r.parts_dropped && (size_t)k < sizeof info->note)
        snprintf(info->note + k, sizeof info->note - (size_t)k,
                 "; %llu XUs lost some parts (one span each)",
                 (unsigned long long)r.parts_dropped);
    return ompf_error_set(err, OMPF_ETRUNC, "%s: %s", r.name, info->note);
}

int ompf_profile_read(const char *path, ompf_profile_t **out, ompf_read_info_t *info,
                      ompf_error_t *err)
{
    if (out)
        *out = NULL;
    if (info)
        memset(info, 0, sizeof *info);
    if (!path || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_profile_read: no path or output");
    int fd = ompf_open_input(path, "profile file", err);
    if (fd < 0)
        return fd;
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        return ompf_error_set(err, OMPF_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    size_t len = (size_t)st.st_size;
    void *map = NULL;
    if (len) {
        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            int e = errno;
            close(fd);
            return ompf_error_set(err, OMPF_EIO, "%s: cannot map: %s", path, strerror(e));
        }
    }
    close(fd);
    int rc = ompf_profile_read_mem(map, len, path, out, info, err);
    if (map)
        munmap(map, len);
    return rc;
}
