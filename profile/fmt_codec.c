/* Byte-level codec of the profile format: buffers, varints, values,
 * strings, chunk framing (docs/format.md).  One file over 600 lines: each
 * encoder sits next to its decoder, so that a change to one is seen with
 * the other. */
#include <math.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

#include "fmt.h"
#include "fmt_put.h"

const char *fmt_chunk_name(uint32_t type)
{
    static const char *const names[] = {
        "?", "META", "EVENTS", "CONSTRUCTS", "LABELS",
        "XUS", "THREADS", "SOURCES", "END", "PATHS", "EXACT", "PARTS",
    };
    return type <= FMT_CHUNK_TYPE_MAX ? names[type] : "unknown";
}

/* ---- buffers ---------------------------------------------------------- */

void fmt_buf_free(fmt_buf_t *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

int fmt_buf_reserve(fmt_buf_t *b, size_t extra)
{
    if (b->oom)
        return OMPF_ENOMEM;
    if (b->cap - b->len >= extra)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < extra) {
        if (cap > SIZE_MAX / 2) {
            b->oom = 1;
            return OMPF_ENOMEM;
        }
        cap *= 2;
    }
    unsigned char *d = realloc(b->data, cap);
    if (!d) {
        b->oom = 1;
        return OMPF_ENOMEM;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void fmt_buf_bytes(fmt_buf_t *b, const void *p, size_t n)
{
    if (n == 0 || fmt_buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void fmt_buf_uv_slow(fmt_buf_t *b, uint64_t v)
{
    if (fmt_buf_reserve(b, 10))
        return;
    fmt_buf_uv(b, v);
}

void fmt_buf_str(fmt_buf_t *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    fmt_buf_uv(b, n);
    fmt_buf_bytes(b, s, n);
}

void fmt_buf_optstr(fmt_buf_t *b, const char *s)
{
    if (!s) {
        fmt_buf_uv(b, 0);
        return;
    }
    size_t n = strlen(s);
    fmt_buf_uv(b, (uint64_t)n + 1);
    fmt_buf_bytes(b, s, n);
}

/* The value codec: fmt_put.h. */
void fmt_buf_value(fmt_buf_t *b, double v)
{
    if (v >= -FMT_INT_LIMIT && v <= FMT_INT_LIMIT && v == (double)(int64_t)v &&
        !(v == 0 && signbit(v))) {
        fmt_buf_uv(b, fmt_zz((int64_t)v) << 2 | FMT_VAL_INT);
        return;
    }
    if (ompf_is_missing(v)) {
        fmt_buf_uv(b, FMT_VAL_MISSING);
        return;
    }
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    unsigned char raw[9];
    raw[0] = FMT_VAL_RAW;
    fmt_put_u64(raw + 1, bits);
    fmt_buf_bytes(b, raw, sizeof raw);
}

/* ---- cursor ----------------------------------------------------------- */

void fmt_cur_skip_uv(fmt_cur_t *c, uint64_t n)
{
    while (n-- && !c->bad) {
        while (c->p < c->end && (*c->p & 0x80))
            c->p++;
        if (c->p >= c->end) {
            c->bad = 1;
            return;
        }
        c->p++;
    }
}

double fmt_cur_value(fmt_cur_t *c)
{
    uint64_t u = fmt_cur_uv(c);
    switch (u & 3) {
    case FMT_VAL_INT:
        return (double)fmt_unzz(u >> 2);
    case FMT_VAL_MISSING:
        if (u != FMT_VAL_MISSING)
            c->bad = 1;
        return OMPF_MISSING;
    case FMT_VAL_RAW: {
        if (u != FMT_VAL_RAW || c->end - c->p < 8) {
            c->bad = 1;
            return 0;
        }
        uint64_t bits = fmt_get_u64(c->p);
        c->p += 8;
        double v;
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    default:
        c->bad = 1;
        return 0;
    }
}

void fmt_cur_skip_values(fmt_cur_t *c, uint64_t n)
{
    while (n-- && !c->bad)
        (void)fmt_cur_value(c);
}

static char *cur_bytes(fmt_cur_t *c, uint64_t n, int *oom)
{
    if (c->bad || n > (uint64_t)(c->end - c->p)) {
        c->bad = 1;
        return NULL;
    }
    if (memchr(c->p, 0, (size_t)n)) {
        c->bad = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        *oom = 1;
        return NULL;
    }
    memcpy(s, c->p, (size_t)n);
    s[n] = 0;
    c->p += n;
    return s;
}

char *fmt_cur_str(fmt_cur_t *c, int *oom)
{
    uint64_t n = fmt_cur_uv(c);
    return cur_bytes(c, n, oom);
}

char *fmt_cur_optstr(fmt_cur_t *c, int *present, int *oom)
{
    uint64_t n = fmt_cur_uv(c);
    *present = 0;
    if (c->bad || n == 0)
        return NULL;
    *present = 1;
    return cur_bytes(c, n - 1, oom);
}

/* ---- chunk framing ---------------------------------------------------- */

void fmt_header_build(unsigned char out[FMT_HEADER_SIZE])
{
    memset(out, 0, FMT_HEADER_SIZE);
    memcpy(out, FMT_MAGIC, FMT_MAGIC_LEN);
    fmt_put_u32(out + 8, OMPF_FORMAT_VERSION);
    fmt_put_u32(out + 12, FMT_HEADER_SIZE);
    /* 16..27: flags and reserved, zero */
    fmt_put_u32(out + 28, (uint32_t)crc32(0L, out, 28));
}

uint32_t fmt_chunk_crc(const unsigned char *hdr, const unsigned char *payload,
                       size_t stored)
{
    return fmt_crc32(fmt_crc32(0, hdr, 28), payload, stored);
}

void fmt_chunk_hdr_parse(const unsigned char *p, fmt_chunk_hdr_t *h)
{
    h->type = fmt_get_u32(p);
    h->flags = fmt_get_u32(p + 4);
    h->stored = fmt_get_u64(p + 8);
    h->raw = fmt_get_u64(p + 16);
    h->count = fmt_get_u32(p + 24);
    h->crc = fmt_get_u32(p + 28);
}

int fmt_chunk_build(fmt_buf_t *out, uint32_t type, uint32_t count,
                    const fmt_buf_t *payload, void *zctx, int compress)
{
    out->len = 0;
    return fmt_chunk_append(out, type, count, payload, zctx, compress ? FMT_ZSTD_LEVEL
                                                                      : FMT_NO_COMPRESSION);
}

int fmt_chunk_append(fmt_buf_t *out, uint32_t type, uint32_t count,
                     const fmt_buf_t *payload, void *zctx, int level)
{
    if (payload->oom)
        return OMPF_ENOMEM;
    size_t raw = payload->len;
    if (raw > FMT_MAX_RAW)
        return OMPF_ERANGE;
    /* Optional information (EXACT, PARTS: added within version 2): older
     * readers skip it. */
    uint32_t flags = type == FMT_CHUNK_EXACT || type == FMT_CHUNK_PARTS ? FMT_CF_SKIPPABLE : 0;
    size_t stored = raw;
    size_t at = out->len; /* the chunk starts here */
    if (level != FMT_NO_COMPRESSION && raw >= 64) {
        size_t bound = ZSTD_compressBound(raw);
        if (fmt_buf_reserve(out, FMT_CHUNK_HEADER_SIZE + bound))
            return OMPF_ENOMEM;
        unsigned char *dst = out->data + at + FMT_CHUNK_HEADER_SIZE;
        size_t z;
        if (zctx)
            z = ZSTD_compressCCtx((ZSTD_CCtx *)zctx, dst, bound, payload->data, raw, level);
        else
            z = ZSTD_compress(dst, bound, payload->data, raw, level);
        /* Keep the raw bytes when compression does not pay. */
        if (!ZSTD_isError(z) && z < raw) {
            flags |= FMT_CF_ZSTD;
            stored = z;
        }
    }
    if (fmt_buf_reserve(out, FMT_CHUNK_HEADER_SIZE + stored))
        return OMPF_ENOMEM;
    unsigned char *h = out->data + at;
    if (!(flags & FMT_CF_ZSTD) && raw)
        memcpy(h + FMT_CHUNK_HEADER_SIZE, payload->data, raw);
    fmt_put_u32(h, type);
    fmt_put_u32(h + 4, flags);
    fmt_put_u64(h + 8, stored);
    fmt_put_u64(h + 16, raw);
    fmt_put_u32(h + 24, count);
    fmt_put_u32(h + 28, fmt_chunk_crc(h, h + FMT_CHUNK_HEADER_SIZE, stored));
    out->len = at + FMT_CHUNK_HEADER_SIZE + stored;
    return 0;
}

/* ---- encoders --------------------------------------------------------- */

void fmt_enc_meta(fmt_buf_t *b, const ompf_profile_t *p)
{
    size_t n = ompf_meta_count(p);
    for (size_t i = 0; i < n; i++) {
        const char *k = NULL, *v = NULL;
        ompf_meta_at(p, i, &k, &v);
        fmt_buf_str(b, k);
        fmt_buf_str(b, v);
    }
}

void fmt_enc_events(fmt_buf_t *b, const ompf_profile_t *p)
{
    size_t n = ompf_event_count(p);
    for (size_t i = 0; i < n; i++) {
        const ompf_event_t *e = ompf_event_get(p, (uint32_t)i);
        fmt_buf_str(b, e->name);
        fmt_buf_uv(b, e->pe_type);
        fmt_buf_uv(b, e->config);
        fmt_buf_uv(b, e->config1);
        fmt_buf_uv(b, e->config2);
        fmt_buf_uv(b, e->pe_flags);
        fmt_buf_sv(b, e->status);
        fmt_buf_optstr(b, e->reason);
        fmt_buf_sv(b, e->source);
    }
}

void fmt_enc_sources(fmt_buf_t *b, const ompf_profile_t *p)
{
    size_t n = ompf_source_count(p);
    for (size_t i = 0; i < n; i++) {
        const ompf_source_t *s = ompf_source_get(p, (uint32_t)i);
        fmt_buf_uv(b, s->run_id);
        fmt_buf_str(b, s->path);
    }
}

void fmt_enc_construct(fmt_buf_t *b, uint64_t id, const ompf_construct_t *c)
{
    fmt_buf_uv(b, id);
    fmt_buf_str(b, c->module);
    fmt_buf_str(b, c->build_id);
    fmt_buf_uv(b, c->offset);
    fmt_buf_sv(b, c->kind);
    fmt_buf_optstr(b, c->file);
    fmt_buf_sv(b, c->line);
    fmt_buf_optstr(b, c->function);
    fmt_buf_optstr(b, c->name);
}

void fmt_enc_part(fmt_buf_t *b, uint64_t xu_id, const ompf_part_t *pt)
{
    fmt_buf_uv(b, xu_id);
    fmt_buf_uv(b, pt->thread);
    fmt_buf_uv(b, pt->start_ns);
    fmt_buf_uv(b, pt->end_ns - pt->start_ns);
}

void fmt_enc_thread(fmt_buf_t *b, const ompf_thread_t *t, uint32_t n_events)
{
    fmt_buf_uv(b, t->index);
    fmt_buf_sv(b, t->os_tid);
    fmt_buf_uv(b, n_events);
    const double *arr[4] = {t->total, t->gap, t->enabled_ns, t->running_ns};
    for (int a = 0; a < 4; a++)
        for (uint32_t e = 0; e < n_events; e++)
            fmt_buf_value(b, arr[a] ? arr[a][e] : OMPF_MISSING);
}

/* Reserves n_items worst-case varints; returns the write pointer or NULL
 * (then b->oom is set). */
static unsigned char *enc_begin(fmt_buf_t *b, size_t n_items)
{
    if (n_items > (SIZE_MAX - 64) / UV_MAX) {
        b->oom = 1;
        return NULL;
    }
    if (fmt_buf_reserve(b, n_items * UV_MAX + 64))
        return NULL;
    return b->data + b->len;
}

static void enc_end(fmt_buf_t *b, unsigned char *o)
{
    b->len = (size_t)(o - b->data);
}

/* Columns, each delta-coded where neighbours are close, so that zstd sees
 * long runs of small similar bytes. */
void fmt_enc_labels(fmt_buf_t *b, const fmt_label_rec_t *l, size_t n)
{
    unsigned char *o = enc_begin(b, 3 * n);
    if (!o)
        return;
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        o = put_uv(o, fmt_zz((int64_t)(l[i].id - prev)));
        prev = l[i].id;
    }
    for (size_t i = 0; i < n; i++)
        o = put_uv(o, fmt_zz((int64_t)(l[i].id - l[i].parent)));
    prev = 0;
    for (size_t i = 0; i < n; i++) {
        o = put_uv(o, fmt_zz((int64_t)(l[i].comp - prev)));
        prev = l[i].comp;
    }
    enc_end(b, o);
}

#define DELTA_COLUMN(expr)                                                  \
    do {                                                                    \
        uint64_t prev_ = 0;                                                 \
        for (size_t i = 0; i < n; i++) {                                    \
            uint64_t v_ = (expr);                                           \
            o = put_uv(o, fmt_zz((int64_t)(v_ - prev_)));                   \
            prev_ = v_;                                                     \
        }                                                                   \
    } while (0)

/* Mode column (version 2, docs/format.md 1.3) of n items: item 0 is
 * FIRST, item i >= 1 is ITEM (an expression in i), both before the
 * zigzag when SIGNED.  Items 1.. all equal: mode 1, item 0, item 1; else
 * mode 0 and every item.  One pass decides, on the raw numbers with adds,
 * ORs and XORs only (vectorisable: no zigzag, whose 64-bit arithmetic
 * shift SSE2/AVX2 lack): equal raw numbers are equal items, and a zigzag
 * item is one byte iff its raw number + 64 is below 128.  When every item
 * is one byte the second pass is a narrowing copy.  Updates o; both
 * writers use it, so the stream's bytes are the row encoder's. */
#define MCOL(N, FIRST, ITEM, SIGNED)                                        \
    do {                                                                    \
        size_t n_ = (N);                                                    \
        if (n_ == 0) {                                                      \
            *o++ = 0;                                                       \
            break;                                                          \
        }                                                                   \
        uint64_t first_ = (uint64_t)(FIRST);                                \
        if (n_ == 1) {                                                      \
            *o++ = 0;                                                       \
            o = put_uv(o, MCOL_ITEM_(SIGNED, first_));                      \
            break;                                                          \
        }                                                                   \
        uint64_t second_;                                                   \
        {                                                                   \
            size_t i = 1;                                                   \
            second_ = (uint64_t)(ITEM);                                     \
        }                                                                   \
        const uint64_t bias_ = (SIGNED) ? 64 : 0;                           \
        uint64_t acc_ = (first_ + bias_) | (second_ + bias_), dif_ = 0;     \
        for (size_t i = 2; i < n_; i++) {                                   \
            uint64_t it_ = (uint64_t)(ITEM);                                \
            acc_ |= it_ + bias_;                                            \
            dif_ |= it_ ^ second_;                                          \
        }                                                                   \
        if (!dif_) {                                                        \
            *o++ = 1;                                                       \
            o = put_uv(o, MCOL_ITEM_(SIGNED, first_));                      \
            o = put_uv(o, MCOL_ITEM_(SIGNED, second_));                     \
            break;                                                          \
        }                                                                   \
        *o++ = 0;                                                           \
        if (acc_ < 0x80) {                                                  \
            o[0] = (unsigned char)MCOL_ITEM_(SIGNED, first_);               \
            for (size_t i = 1; i < n_; i++)                                 \
                o[i] = (unsigned char)MCOL_ITEM_(SIGNED, (ITEM));           \
            o += n_;                                                        \
        } else {                                                            \
            o = put_uv(o, MCOL_ITEM_(SIGNED, first_));                      \
            for (size_t i = 1; i < n_; i++)                                 \
                o = put_uv(o, MCOL_ITEM_(SIGNED, (ITEM)));                  \
        }                                                                   \
    } while (0)
/* MCOL of a plain or signed column stored as array A (items A[i]): when
 * A[1..n-1] are all equal (one memcmp of the array against itself shifted
 * by one, much faster than the item loop for the many constant columns),
 * mode 1 directly; else MCOL.  Same bytes either way. */
#define MCOL_ARRAY(A, SIGNED) MCOL_ARRAY_K(A, SIGNED, 0)
/* ... where KNOWN says that A[1..n-1] are all equal (only A[0], A[1] are
 * stored) */
#define MCOL_ARRAY_K(A, SIGNED, KNOWN)                                      \
    do {                                                                    \
        if (n >= 3 &&                                                       \
            ((KNOWN) || !memcmp((A) + 1, (A) + 2, (n - 2) * sizeof *(A)))) { \
            *o++ = 1;                                                       \
            o = put_uv(o, MCOL_ITEM_(SIGNED, (uint64_t)(A)[0]));            \
            o = put_uv(o, MCOL_ITEM_(SIGNED, (uint64_t)(A)[1]));            \
        } else if (SIGNED) {                                                \
            MCOL(n, (int64_t)(A)[0], (int64_t)(A)[i], 1);                   \
        } else {                                                            \
            MCOL(n, (A)[0], (A)[i], 0);                                     \
        }                                                                   \
    } while (0)
/* sv(v[i] - v[i-1]), v[-1] = 0; plain uv; sv */
#define MCOL_DELTA(V) MCOL(n, V(0), V(i) - V(i - 1), 1)
#define MCOL_PLAIN(V) MCOL(n, V(0), V(i), 0)
#define MCOL_SIGNED(V) MCOL(n, (int64_t)V(0), (int64_t)V(i), 1)

static size_t xus_items(size_t n, uint32_t n_events, uint32_t n_prov)
{
    size_t per = FMT_XU_COLUMNS + (size_t)n_events + n_prov;
    /* + the mode of each scalar column */
    return n > (SIZE_MAX / UV_MAX - 2 - FMT_XU_COLUMNS) / per
               ? SIZE_MAX
               : 2 + FMT_XU_COLUMNS + n * per;
}

void fmt_enc_xus(fmt_buf_t *b, const fmt_xu_row_t *r, size_t n,
                 uint32_t n_events, uint32_t n_prov)
{
    unsigned char *o = enc_begin(b, xus_items(n, n_events, n_prov));
    if (!o)
        return;
    o = put_uv(o, n_events);
    o = put_uv(o, n_prov);
#define R_ID(i) r[i].xu->id
#define R_CID(i) r[i].cid
#define R_LID(i) r[i].lid
#define R_THREAD(i) r[i].xu->thread
#define R_TT(i) r[i].xu->team_thread
#define R_TS(i) r[i].xu->team_size
#define R_PARTS(i) r[i].xu->parts
#define R_CPU(i) r[i].xu->cpu
#define R_CORE(i) r[i].xu->core
#define R_NUMA(i) r[i].xu->numa
#define R_KIND(i) r[i].xu->kind
#define R_START(i) r[i].xu->start_ns
#define R_DUR(i) (r[i].xu->end_ns - r[i].xu->start_ns)
#define R_ISTART(i) r[i].xu->iter_start
#define R_ICOUNT(i) r[i].xu->iter_count
    MCOL_DELTA(R_ID);
    MCOL_DELTA(R_CID);
    MCOL_DELTA(R_LID);
    MCOL_PLAIN(R_THREAD);
    MCOL_PLAIN(R_TT);
    MCOL_PLAIN(R_TS);
    MCOL_PLAIN(R_PARTS);
    MCOL_SIGNED(R_CPU);
    MCOL_SIGNED(R_CORE);
    MCOL_SIGNED(R_NUMA);
    MCOL_PLAIN(R_KIND);
    MCOL_DELTA(R_START);
    MCOL_SIGNED(R_DUR);
    MCOL_DELTA(R_ISTART);
    MCOL_PLAIN(R_ICOUNT);
    for (uint32_t e = 0; e < n_events; e++)
        for (size_t i = 0; i < n; i++)
            o = put_value(o, r[i].values[e]);
    /* Source XU ids + 1 (so that "none", UINT64_MAX, becomes 0). */
    for (uint32_t s = 0; s < n_prov; s++)
        DELTA_COLUMN(r[i].prov[s] + 1);
    enc_end(b, o);
}

/* ---- contiguous columns (the streaming writer) ------------------------- */

/* The column encoders' item loops vectorise: on x86-64 an AVX2 copy is
 * chosen at load time where the CPU has it (ifunc), else the baseline. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define FMT_NO_CLONES 1 /* the sanitizer build checks the baseline copy */
#endif
#endif
#if defined(__x86_64__) && defined(__ELF__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(FMT_NO_CLONES)
#define FMT_ENC_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FMT_ENC_CLONES
#endif

/* Column j of PATHS: delta column of comp[j][i] over the records with
 * n[i] > j, as a mode column. */
static unsigned char *path_comp_col(unsigned char *o, const fmt_path_cols_t *c, size_t n,
                                    unsigned j)
{
    uint64_t prev = 0, first = 0, second = 0, dif = 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (c->n[i] <= j)
            continue;
        uint64_t v = c->comp[j][i];
        uint64_t it = fmt_zz((int64_t)(v - prev));
        prev = v;
        if (m == 0)
            first = it;
        else if (m == 1)
            second = it;
        else
            dif |= it ^ second;
        m++;
    }
    if (m >= 2 && !dif) {
        *o++ = 1;
        o = put_uv(o, first);
        return put_uv(o, second);
    }
    *o++ = 0;
    prev = 0;
    for (size_t i = 0; i < n; i++) {
        if (c->n[i] <= j)
            continue;
        uint64_t v = c->comp[j][i];
        o = put_uv(o, fmt_zz((int64_t)(v - prev)));
        prev = v;
    }
    return o;
}

FMT_ENC_CLONES void fmt_enc_path_cols(fmt_buf_t *b, const fmt_path_cols_t *c, size_t n)
{
    if (n > SIZE_MAX / UV_MAX / (3 + FMT_PATH_MAX) - 8) {
        b->oom = 1;
        return;
    }
    unsigned char *o = enc_begin(b, (3 + FMT_PATH_MAX) * (n + 2));
    if (!o)
        return;
#define P_FIRST(i) c->first[i]
#define P_PARENT(i) c->parent[i]
#define P_COMP(i) c->comp[j][i]
    MCOL_ARRAY(c->n, 0);
    MCOL_DELTA(P_FIRST);
    MCOL_DELTA(P_PARENT);
    /* positions every record has: plain columns; none has: empty */
    unsigned nmin = FMT_PATH_MAX, nmax = 0;
    for (size_t i = 0; i < n; i++) {
        nmin = c->n[i] < nmin ? c->n[i] : nmin;
        nmax = c->n[i] > nmax ? c->n[i] : nmax;
    }
    for (unsigned j = 0; j < FMT_PATH_MAX; j++) {
        if (j < nmin)
            MCOL_DELTA(P_COMP);
        else if (j >= nmax)
            *o++ = 0;
        else
            o = path_comp_col(o, c, n, j);
    }
    enc_end(b, o);
}

FMT_ENC_CLONES void fmt_enc_xu_cols(fmt_buf_t *b, const fmt_xu_cols_t *c, size_t n, uint32_t n_events)
{
    unsigned char *o = enc_begin(b, xus_items(n, n_events, 0));
    if (!o)
        return;
    o = put_uv(o, n_events);
    o = put_uv(o, 0);
#define C_ID(i) c->id[i]
#define C_CID(i) c->cid[i]
#define C_LID(i) c->lid[i]
#define C_START(i) c->start[i]
#define C_DUR(i) (c->end[i] - c->start[i])
#define C_ISTART(i) c->iter_start[i]
    MCOL_DELTA(C_ID);
    MCOL_DELTA(C_CID);
    MCOL_DELTA(C_LID);
    MCOL_ARRAY_K(c->thread, 0, c->run_only);
    MCOL_ARRAY_K(c->team_thread, 0, c->run_only);
    MCOL_ARRAY_K(c->team_size, 0, c->run_only);
    MCOL_ARRAY_K(c->parts, 0, c->run_only);
    MCOL_ARRAY_K(c->cpu, 1, c->run_only);
    MCOL_ARRAY_K(c->core, 1, c->run_only);
    MCOL_ARRAY_K(c->numa, 1, c->run_only);
    MCOL_ARRAY_K(c->kind, 0, c->run_only);
    MCOL_DELTA(C_START);
    MCOL_SIGNED(C_DUR);
    MCOL_DELTA(C_ISTART);
    MCOL_ARRAY(c->iter_count, 0);
    for (uint32_t e = 0; e < n_events; e++)
        for (size_t i = 0; i < n; i++)
            o = put_value(o, c->vals[i * n_events + e]);
    enc_end(b, o);
}
