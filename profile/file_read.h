/* The profile reader's shared state (not installed): the reader is split
 * by job into file_read.c (header, chunk framing, the two passes),
 * file_read_chunks.c (pass-1 chunk decoders), file_read_labels.c (the
 * labels, resolved as pass 1 decodes them), file_read_resolve.c (the other
 * ids after pass 1, and the salvage of truncated files) and
 * file_read_xus.c (pass 2: the XUS chunks). */
#ifndef OMPF_PROFILE_FILE_READ_H
#define OMPF_PROFILE_FILE_READ_H

#include <stdint.h>
#include <string.h>
#include <zstd.h>

#include "fmt.h"
#include "ompfuse/file.h"
#include "profile_internal.h" /* ompf__keeps_parts */

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

/* A label record that waits for its parent, or an id met again
 * (file_read_labels.c); seq: its place among the file's records, next:
 * the next record waiting for the same parent (a ring), or the next free
 * slot. */
typedef struct rd_lab {
    uint64_t id, parent, comp;
    uint32_t seq, next;
} rd_lab_t;

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

    /* Labels (file_read_labels.c): resolved as they come into lab_map;
     * a record whose parent is not resolved yet waits in lab[]. */
    fmt_idmap_t lab_map; /* label id -> trie node; after resolution also
                            LABEL_DROPPED */
    rd_lab_t *lab;       /* waiting records (slots reused) */
    size_t n_lab, cap_lab; /* slots used so far */
    size_t n_wait;        /* records waiting now */
    uint32_t lab_free;    /* first free slot, or NONE32 */
    uint32_t lab_seq;     /* records met so far */
    fmt_idmap_t lab_wait; /* parent id -> last record waiting for it, or
                             WAIT_DONE once it is resolved */
    uint64_t *lab_q;      /* while releasing waiting records: lists to
                             resolve (last record << 32 | parent node) */
    size_t cap_lab_q;
    rd_lab_t *dup;        /* records of an id met before */
    size_t n_dup, cap_dup;
    fmt_label_rec_t *lab_in; /* one chunk's records, with their ids */
    size_t cap_lab_in;
    ompf_profile_t *lt;  /* the trie labels go to: p, or the shared one
                            (ompf_profile_read_into) */
    int lab_mode;        /* 0 before the first label; append or look up */
    size_t lab_start;    /* nodes of lt before this read */
    uint32_t lab_guess;  /* ompf__label_child_hint's guess */
    int lab_hit;         /* whether the last guess was right */
    int labels_last;     /* OMPF_LABELS_LAST: no reader looks lt up next */

    thread_rec_t *th;
    size_t n_th, cap_th;

    xus_loc_t *xus;
    size_t n_xus, cap_xus;
    uint64_t xus_in_chunks;

    int have_end;
    uint64_t end_xus, end_chunks;

    uint64_t xus_read, xus_dropped;

    fmt_exact_t exact;      /* EXACT records, applied after pass 2 */
    fmt_parts_t parts;      /* PARTS records counted by XU id */
    xus_loc_t *parts_loc;   /* the PARTS chunks, decoded again after pass 2
                               (a read that keeps parts: full or packed) */
    size_t n_parts_loc, cap_parts_loc;
    uint64_t parts_dropped; /* XUs whose parts were lost (truncated) */

    /* The file mapped by the reader itself (read_file): each pass drops
     * the pages it is done with (rd_release); released: bytes from buf
     * dropped so far in this pass. */
    int own_map;
    size_t released;
} rd_t;

#define MALFORMED "malformed payload (the file is damaged or was not written by ompfuse)"

/* A column of n items: in version 2 a mode column (mode 0: n items;
 * mode 1, n >= 2: item 0, then the one value of items 1..n-1), in
 * version 1 always n items without a mode. */
typedef struct mcol {
    fmt_cur_t c;
    int constant;
    uint64_t i, first, rest;
} mcol_t;

static inline uint64_t mcol_uv(mcol_t *m)
{
    if (m->constant)
        return m->i++ ? m->rest : m->first;
    return fmt_cur_uv(&m->c);
}
static inline int64_t mcol_sv(mcol_t *m) { return fmt_unzz(mcol_uv(m)); }

/* Error naming the file and, while decoding, the chunk (file_read.c). */
__attribute__((format(printf, 3, 4))) int rd_fail(rd_t *r, int code, const char *fmt, ...);
int rd_over_limit(rd_t *r, const char *what, uint64_t value, const char *limit,
                  unsigned max);
int rd_oom(rd_t *r);
int rd_grow(void **arr, size_t *cap, size_t need, size_t elem);
int rd_payload(rd_t *r, const fmt_chunk_hdr_t *h, const unsigned char *stored,
               fmt_cur_t *out);
int rd_finish_payload(rd_t *r, const fmt_cur_t *c);
/* The pages of the mapped file below offset upto go back to the system
 * (a later access faults them in again from the page cache): a pass past
 * them keeps a few megabytes of the file resident, not all of it.
 * Nothing when the caller gave the buffer (ompf_profile_read_mem).
 * rd_release_restart begins a pass from the start of the file. */
static inline void rd_release(rd_t *r, size_t upto)
{
    if (r->own_map)
        ompf_give_back(r->buf, &r->released, upto);
}
static inline void rd_release_restart(rd_t *r)
{
    r->released = 0;
}

/* Pass-1 decoders (file_read_chunks.c). */
int rd_dec_meta(rd_t *r, fmt_cur_t *c, uint32_t count);
int rd_dec_events(rd_t *r, fmt_cur_t *c, uint32_t count);
int rd_dec_sources(rd_t *r, fmt_cur_t *c, uint32_t count);
int rd_dec_constructs(rd_t *r, fmt_cur_t *c, uint32_t count);
int rd_dec_labels(rd_t *r, fmt_cur_t *c, uint32_t count);
int rd_dec_paths(rd_t *r, fmt_cur_t *c, uint32_t count);
int rd_dec_threads(rd_t *r, fmt_cur_t *c, uint32_t count);
int rd_dec_end(rd_t *r, fmt_cur_t *c);
int rd_dec_exact(rd_t *r, fmt_cur_t *c, uint32_t count);
int rd_dec_parts(rd_t *r, fmt_cur_t *c, uint32_t count);
/* After pass 2: the PARTS chunks' records into their XUs (a read that
 * keeps parts: full or packed). */
int rd_attach_parts(rd_t *r);
void rd_mcol_begin(const rd_t *r, mcol_t *m, fmt_cur_t *c, uint64_t n, int has_mode,
                   int skip_values);

/* Labels (file_read_labels.c): count records (a chunk's) into the trie
 * during pass 1; after it, the ones that waited and the checks; and on a
 * failed read, the shared trie as it was. */
int rd_add_labels(rd_t *r, const fmt_label_rec_t *l, size_t count);
int rd_resolve_labels(rd_t *r);
void rd_labels_abandon(rd_t *r);

/* Sources, threads and labels after pass 1 (file_read_resolve.c). */
int rd_resolve(rd_t *r);

/* Pass 2 (file_read_xus.c). */
int rd_pass2(rd_t *r);

#endif
