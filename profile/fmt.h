/*
 * Internal helpers of the profile file format (docs/format.md): growable
 * byte buffers, LEB128 varints, the value codec, chunk framing, the id map
 * used by the reader, and the XU column codec shared by both writers.
 * Private to libompfprofile.
 */
#ifndef OMPF_FMT_H
#define OMPF_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ompfuse/file.h"
#include "ompfuse/profile.h"

/* ---- layout constants (docs/format.md) -------------------------------- */

#define FMT_MAGIC "\x89OMPF\r\n\x1a"
#define FMT_MAGIC_LEN 8
#define FMT_HEADER_SIZE 32u
#define FMT_CHUNK_HEADER_SIZE 32u

enum {
    FMT_CHUNK_META = 1,
    FMT_CHUNK_EVENTS = 2,
    FMT_CHUNK_CONSTRUCTS = 3,
    FMT_CHUNK_LABELS = 4,
    FMT_CHUNK_XUS = 5,
    FMT_CHUNK_THREADS = 6,
    FMT_CHUNK_SOURCES = 7,
    FMT_CHUNK_END = 8,
    FMT_CHUNK_PATHS = 9, /* version 2 */
    FMT_CHUNK_EXACT = 10, /* version 2, skippable */
    FMT_CHUNK_PARTS = 11, /* version 2, SKIPPABLE: older readers skip it */
    FMT_CHUNK_TYPE_MAX = 11
};

#define FMT_CF_ZSTD 0x1u      /* payload is one zstd frame */
#define FMT_CF_SKIPPABLE 0x2u /* readers that do not know the type skip it */
#define FMT_CF_KNOWN (FMT_CF_ZSTD | FMT_CF_SKIPPABLE)

/* Largest decoded chunk payload a reader accepts; writers stay far below.
 * Bounds every allocation driven by a size field. */
#define FMT_MAX_RAW (64u << 20)
/* zstd never expands by more than a small margin. */
#define FMT_MAX_STORED (FMT_MAX_RAW + (FMT_MAX_RAW >> 7) + 4096u)
/* Missing thread records (lost to truncation, or never written) are
 * replaced by empty ones, up to this many beyond the records present. */
#define FMT_MAX_SALVAGE_THREADS 65536u

/* ompf_profile_write compresses harder than the streaming writer: the
 * tool pays for every nanosecond per record, and the fast level -1 costs
 * a third of level 1's time for 14-46 % more bytes (docs/format.md, 8).
 * The streaming writer compresses only streams with event values: without
 * them a version 2 chunk is ~4-6 bytes per XU raw, and zstd would be the
 * writer's largest cost per record (docs/format.md, 8).
 * FMT_STREAM_ZSTD_LEVEL can be overridden at build time for experiments. */
#define FMT_ZSTD_LEVEL 1
#ifndef FMT_STREAM_ZSTD_LEVEL
#define FMT_STREAM_ZSTD_LEVEL (-1)
#endif
/* Version 2: XUS and PATHS chunks hold at most this many records (their
 * constant columns take no bytes per record, so the payload size no
 * longer bounds the count). */
#define FMT_MAX_COLUMN_RECORDS (1u << 20)
/* Version 2 PATHS: nodes per path record. */
#define FMT_PATH_MAX 4u
/* Records per chunk written by ompf_profile_write. */
#define FMT_XUS_PER_CHUNK 65536u
#define FMT_LABELS_PER_CHUNK 262144u

const char *fmt_chunk_name(uint32_t type);

/* Keeps rare paths (buffer growth) out of the record calls, so that those
 * need no stack frame. */
#if defined(__GNUC__)
#define FMT_COLD __attribute__((noinline, cold))
#else
#define FMT_COLD
#endif

/* ---- little-endian fixed-width ---------------------------------------- */

static inline void fmt_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline void fmt_put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint32_t fmt_get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint64_t fmt_get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline uint64_t fmt_zz(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t fmt_unzz(uint64_t u)
{
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* ---- growable output buffer ------------------------------------------- */

typedef struct fmt_buf {
    unsigned char *data;
    size_t len, cap;
    int oom; /* sticky: an allocation failed; contents are incomplete */
} fmt_buf_t;

void fmt_buf_free(fmt_buf_t *b);
int fmt_buf_reserve(fmt_buf_t *b, size_t extra);
void fmt_buf_bytes(fmt_buf_t *b, const void *p, size_t n);
void fmt_buf_uv_slow(fmt_buf_t *b, uint64_t v);

static inline void fmt_buf_uv(fmt_buf_t *b, uint64_t v)
{
    if (b->cap - b->len >= 10) {
        unsigned char *o = b->data + b->len;
        while (v >= 0x80) {
            *o++ = (unsigned char)(v | 0x80);
            v >>= 7;
        }
        *o++ = (unsigned char)v;
        b->len = (size_t)(o - b->data);
        return;
    }
    fmt_buf_uv_slow(b, v);
}
static inline void fmt_buf_sv(fmt_buf_t *b, int64_t v) { fmt_buf_uv(b, fmt_zz(v)); }
void fmt_buf_str(fmt_buf_t *b, const char *s);    /* NULL written as "" */
void fmt_buf_optstr(fmt_buf_t *b, const char *s); /* NULL kept apart */
/* One event value: integer, missing, or raw IEEE-754 bits. */
void fmt_buf_value(fmt_buf_t *b, double v);

/* ---- bounds-checked input cursor -------------------------------------- */

typedef struct fmt_cur {
    const unsigned char *p, *end;
    int bad; /* sticky: read past the end or malformed varint */
} fmt_cur_t;

/* fmt_cur_uv always inlined, for a hot loop that needs it (the reader's
 * PARTS records, decoded twice: file_parts.c); elsewhere the compiler
 * chooses, and inlining everywhere made reading other files slower. */
__attribute__((always_inline)) static inline uint64_t fmt_cur_uv_hot(fmt_cur_t *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end) {
            c->bad = 1;
            return 0;
        }
        unsigned char byte = *c->p++;
        if (shift == 63 && byte > 1) { /* more than 64 bits */
            c->bad = 1;
            return 0;
        }
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
    c->bad = 1;
    return 0;
}
static inline uint64_t fmt_cur_uv(fmt_cur_t *c) { return fmt_cur_uv_hot(c); }
static inline int64_t fmt_cur_sv(fmt_cur_t *c) { return fmt_unzz(fmt_cur_uv(c)); }
/* Skips n varints (for locating columns). */
void fmt_cur_skip_uv(fmt_cur_t *c, uint64_t n);
/* Skips n encoded values. */
void fmt_cur_skip_values(fmt_cur_t *c, uint64_t n);
/* Returns a freshly allocated NUL-terminated copy (NULL when bad or out of
 * memory; *oom tells which).  Embedded NULs are malformed. */
char *fmt_cur_str(fmt_cur_t *c, int *oom);
/* Optional string: *present = 0 for NULL. */
char *fmt_cur_optstr(fmt_cur_t *c, int *present, int *oom);
double fmt_cur_value(fmt_cur_t *c);

/* ---- chunks ----------------------------------------------------------- */

/* Builds header + (possibly compressed) payload of one chunk in out (which
 * is reset).  zctx: a ZSTD_CCtx* reused across calls (may be NULL). */
int fmt_chunk_build(fmt_buf_t *out, uint32_t type, uint32_t count,
                    const fmt_buf_t *payload, void *zctx, int compress);
/* Appends one chunk to out (which keeps its bytes) compressed at zstd
 * level (FMT_NO_COMPRESSION: stored raw).  fmt_chunk_build is
 * fmt_chunk_append at FMT_ZSTD_LEVEL into an emptied buffer. */
#define FMT_NO_COMPRESSION (-1000000)
int fmt_chunk_append(fmt_buf_t *out, uint32_t type, uint32_t count,
                     const fmt_buf_t *payload, void *zctx, int level);

typedef struct fmt_chunk_hdr {
    uint32_t type, flags;
    uint64_t stored, raw;
    uint32_t count, crc;
} fmt_chunk_hdr_t;

void fmt_chunk_hdr_parse(const unsigned char *p, fmt_chunk_hdr_t *h);
/* zlib's crc32(crc, p, n) for any n (crc32.c: carry-less multiplication
 * where the CPU has it). */
uint32_t fmt_crc32(uint32_t crc, const unsigned char *p, size_t n);
uint32_t fmt_chunk_crc(const unsigned char *hdr, const unsigned char *payload,
                       size_t stored);
void fmt_header_build(unsigned char out[FMT_HEADER_SIZE]);

/* write(2) until done; 0 or OMPF_EIO with errno set. */
int fmt_write_all(int fd, const void *p, size_t n);

/* ---- encoders shared by the two writers ------------------------------- */

void fmt_enc_meta(fmt_buf_t *b, const ompf_profile_t *p);
void fmt_enc_events(fmt_buf_t *b, const ompf_profile_t *p);
void fmt_enc_sources(fmt_buf_t *b, const ompf_profile_t *p);
void fmt_enc_construct(fmt_buf_t *b, uint64_t id, const ompf_construct_t *c);
void fmt_enc_thread(fmt_buf_t *b, const ompf_thread_t *t, uint32_t n_events);
/* One PARTS record: uv xu id, uv thread, uv start_ns, uv end - start. */
void fmt_enc_part(fmt_buf_t *b, uint64_t xu_id, const ompf_part_t *pt);


typedef struct fmt_label_rec {
    uint64_t id, parent, comp;
} fmt_label_rec_t;
void fmt_enc_labels(fmt_buf_t *b, const fmt_label_rec_t *l, size_t n);

/* One XU as the column encoder sees it. */
typedef struct fmt_xu_row {
    const ompf_xu_t *xu;
    uint64_t cid, lid;
    const double *values;  /* n_events */
    const uint64_t *prov;  /* n_prov (may be NULL when n_prov == 0) */
} fmt_xu_row_t;
void fmt_enc_xus(fmt_buf_t *b, const fmt_xu_row_t *rows, size_t n,
                 uint32_t n_events, uint32_t n_prov);
/* The same chunk payload fed a few rows at a time (fmt_xcols.c):
 * fmt_xcols_add the rows in order, then fmt_xcols_finish appends to out
 * exactly what fmt_enc_xus of all of them would and starts over.  0 or
 * OMPF_ENOMEM. */
typedef struct fmt_xcols fmt_xcols_t;
fmt_xcols_t *fmt_xcols_create(uint32_t n_events, uint32_t n_prov);
int fmt_xcols_add(fmt_xcols_t *c, const fmt_xu_row_t *rows, size_t n);
int fmt_xcols_finish(fmt_xcols_t *c, fmt_buf_t *out);
void fmt_xcols_destroy(fmt_xcols_t *c);
/* The streaming writer's buffers: one array per field (contiguous
 * columns encode several times faster than rows).  fmt_enc_xu_cols writes
 * the payload of fmt_enc_xus (n_prov = 0). */
/* PATHS records: n[i] nodes with ids first[i] .. first[i] + n[i] - 1, the
 * first a child of parent[i], each next a child of the one before, with
 * components comp[j][i] (one array per position: a record touches only
 * the n[i] it has, and each position encodes from contiguous memory). */
typedef struct fmt_path_cols {
    uint64_t *first, *parent, *comp[FMT_PATH_MAX];
    uint8_t *n;
} fmt_path_cols_t;
void fmt_enc_path_cols(fmt_buf_t *b, const fmt_path_cols_t *c, size_t n);

typedef struct fmt_xu_cols {
    uint64_t *id, *cid, *lid, *start, *end, *iter_start, *iter_count;
    uint32_t *thread, *team_thread, *team_size, *parts;
    int32_t *cpu, *core, *numa;
    uint8_t *kind;
    double *vals; /* n x n_events, row-major */
    /* Set: the items 1 .. n - 1 of thread .. kind are all equal, and only
     * items 0 and 1 are stored (the streaming writer's run). */
    int run_only;
} fmt_xu_cols_t;
void fmt_enc_xu_cols(fmt_buf_t *b, const fmt_xu_cols_t *c, size_t n, uint32_t n_events);

/* Number of scalar columns of an XUS chunk before the value columns.
 * Version 2 prefixes each of them with a mode (docs/format.md, 1.3). */
#define FMT_XU_COLUMNS 15

/* ---- EXACT chunk (fmt_exact.c) ---------------------------------------- */

/* Records per EXACT chunk written by ompf_profile_write. */
#define FMT_EXACT_PER_CHUNK 65536u

/* pairs: n (slot, count) pairs of ompf__exact_sorted. */
void fmt_enc_exact(fmt_buf_t *b, const ompf_profile_t *p, const uint64_t *pairs, size_t n);

typedef struct fmt_exact_rec {
    uint64_t xu, event, value;
} fmt_exact_rec_t;
typedef struct fmt_exact {
    fmt_exact_rec_t *rec;
    size_t n, cap;
} fmt_exact_t;
void fmt_exact_free(fmt_exact_t *x);
/* Collects count records (a bad cursor is left for the caller to report).
 * 0, OMPF_ENOMEM, or OMPF_EFORMAT with the reason in why. */
int fmt_exact_decode(fmt_exact_t *x, fmt_cur_t *c, uint32_t count, char *why, size_t len);
/* Gives the XUs of p (all read) their exact counts.  0, OMPF_ENOMEM, or
 * OMPF_EFORMAT with the reason in why. */
int fmt_exact_apply(const fmt_exact_t *x, ompf_profile_t *p, int truncated, char *why,
                    size_t len);

/* ---- id map: u64 id -> u32 index -------------------------------------- */

/* Direct tables while ids are dense (4 bytes per id), open-addressing
 * hash otherwise (fmt_idmap.c).  Ids below 2^40 go to one table; ids that
 * carry a thread in their high bits, as the OMPT tool's do ((thread + 1)
 * << 40 | sequence number), to one table per thread. */
#define FMT_IDMAP_SEG_BITS 40
#define FMT_IDMAP_SEGS 4096u
typedef struct fmt_idmap_seg {
    uint32_t *dense; /* dense[id & low bits] = index or UINT32_MAX */
    size_t cap, n;
} fmt_idmap_seg_t;
typedef struct fmt_idmap {
    int hashed;
    unsigned spread; /* direct while within this many slots per entry
                        (0: 4); set before the first put */
    size_t n;
    fmt_idmap_seg_t *seg; /* FMT_IDMAP_SEGS tables, by id >> 40 (NULL:
                             only seg0 used so far) */
    fmt_idmap_seg_t seg0;
    size_t slots;         /* of all direct tables */
    uint64_t *keys;
    uint32_t *vals; /* UINT32_MAX = empty slot */
    size_t cap;     /* power of two */
} fmt_idmap_t;

void fmt_idmap_free(fmt_idmap_t *m);
/* Returns 0, or OMPF_ENOMEM. *old receives the existing value when the key
 * was present (then nothing is changed), UINT32_MAX otherwise. */
int fmt_idmap_put(fmt_idmap_t *m, uint64_t key, uint32_t val, uint32_t *old);
uint32_t fmt_idmap_get(const fmt_idmap_t *m, uint64_t key);
/* Overwrites the value of a present key (val must not be UINT32_MAX). */
void fmt_idmap_set(fmt_idmap_t *m, uint64_t key, uint32_t val);
/* Every value v below n becomes to[v] (none may become UINT32_MAX). */
void fmt_idmap_remap(fmt_idmap_t *m, const uint32_t *to, uint32_t n);
/* The key of an entry whose value is val, in *key: 1, or 0 when none
 * has it.  A scan of the whole map: for error messages. */
int fmt_idmap_key_of(const fmt_idmap_t *m, uint32_t val, uint64_t *key);

/* The reader's PARTS records (file_parts.c), attached without holding
 * them: pass 1 counts each XU id's records (fmt_parts_decode), and once
 * every XU is read fmt_parts_claim gives each XU that takes parts its
 * place in the profile's part array; a second decode of the chunks
 * (fmt_parts_fill) writes them there, and fmt_parts_order sorts each
 * XU's.  24 bytes a part and 8 an XU id, where a decoded copy of every
 * record cost 32 bytes a part more. */
typedef struct fmt_parts {
    fmt_idmap_t grp; /* XU id -> group (ids in order of first record) */
    uint32_t *cnt;   /* per group: its records; after claiming, where
                        its places end */
    uint32_t *slot;  /* per group, after claiming: its next place in the
                        part array, or UINT32_MAX (not attached) */
    size_t ng, cap;  /* groups; capacity of cnt */
    size_t n;        /* records */
    size_t base;     /* the part array's first index for this file */
} fmt_parts_t;
/* Decodes count records (counted by XU id into ps; NULL: checks them
 * only); 0, OMPF_ENOMEM, OMPF_EFORMAT (what says why), OMPF_ERANGE
 * (thread index at or above OMPF_MAX_THREADS). */
int fmt_parts_decode(fmt_parts_t *ps, fmt_cur_t *c, uint32_t count, const char **what);
/* Gives the XUs of p their parts' places, by XU id; the first XU with an
 * id takes its records.  Records of an XU the file does not hold are
 * ignored (a task that never completed, or lost with a truncated tail).
 * A complete file (truncated == 0) must give every XU it names exactly
 * its parts count (else OMPF_EFORMAT, msg says which); in a truncated one
 * an XU with fewer keeps one span (*dropped counts them).  OMPF_ERANGE
 * (msg says which) for more than OMPF_MAX_PARTS_PER_XU. */
int fmt_parts_claim(fmt_parts_t *ps, ompf_profile_t *p, int truncated, uint64_t *dropped,
                    char *msg, size_t msglen);
/* The same count records again (one chunk's, as fmt_parts_decode saw
 * them), each written to its XU's place. */
int fmt_parts_fill(fmt_parts_t *ps, ompf_profile_t *p, fmt_cur_t *c, uint32_t count,
                   const char **what);
/* Moves *next past the XUs from *next on whose places are all filled,
 * in XU order, sorting each one's parts as fmt_parts_order does: a
 * packed read seals them while later chunks are filled.  0 or
 * OMPF_ENOMEM. */
int fmt_parts_ready(fmt_parts_t *ps, ompf_profile_t *p, size_t *next);
/* Each XU's parts from XU from on by start, then end, in file order
 * where both are equal; 0, OMPF_ENOMEM, or OMPF_EFORMAT (what says why)
 * when the fill did not meet exactly the records first counted (the file
 * changed between the two decodes; fmt_parts_fill refuses a record too
 * many). */
int fmt_parts_order(fmt_parts_t *ps, ompf_profile_t *p, size_t from, const char **what);
void fmt_parts_free(fmt_parts_t *ps);

#endif
