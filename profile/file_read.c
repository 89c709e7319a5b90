/* Profile reader (docs/format.md).  Never trusts the input: every size is
 * checked against the bytes that are really there, every allocation is
 * bounded by a chunk payload, every reference is resolved or reported.
 *
 * Pass 1 walks the chunks, verifies framing and checksums and decodes all
 * chunks except XUS (metadata, events and sources go straight into the
 * profile; constructs, labels and threads are collected).  Then ids are
 * resolved (a label's parent may come in a later chunk, from another
 * stream).  Pass 2 decodes the XUS chunks directly into the profile, so the
 * XU records are never held twice.
 *
 * This file: the header, chunk framing and the entry points; the rest is
 * split by job (see file_read.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_read.h"
#include "profile_internal.h"

/* Error naming the file and, while decoding, the chunk. */
__attribute__((format(printf, 3, 4))) int rd_fail(rd_t *r, int code, const char *fmt, ...)
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
int rd_over_limit(rd_t *r, const char *what, uint64_t value, const char *limit,
                      unsigned max)
{
    return rd_fail(r, OMPF_ERANGE, "declares %llu %s, more than the limit %s = %u "
                "(docs/format.md, Limits)", (unsigned long long)value, what, limit, max);
}

int rd_oom(rd_t *r)
{
    return rd_fail(r, OMPF_ENOMEM, "out of memory while reading the profile");
}

int rd_grow(void **arr, size_t *cap, size_t need, size_t elem)
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
int rd_payload(rd_t *r, const fmt_chunk_hdr_t *h, const unsigned char *stored,
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
        return rd_fail(r, OMPF_EFORMAT, "compressed payload does not match its declared size "
                                     "of %llu bytes; " MALFORMED, (unsigned long long)h->raw);
    if (r->scratch_cap < h->raw || !r->scratch) {
        free(r->scratch);
        r->scratch_cap = h->raw ? h->raw : 1;
        r->scratch = malloc(r->scratch_cap);
        if (!r->scratch) {
            r->scratch_cap = 0;
            return rd_oom(r);
        }
    }
    if (!r->z && !(r->z = ZSTD_createDCtx()))
        return rd_oom(r);
    size_t n = ZSTD_decompressDCtx(r->z, r->scratch, h->raw, stored, h->stored);
    if (ZSTD_isError(n) || n != h->raw)
        return rd_fail(r, OMPF_EFORMAT, "zstd cannot decompress the payload (%s); " MALFORMED,
                    ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short output");
    out->p = r->scratch;
    out->end = r->scratch + h->raw;
    out->bad = 0;
    return 0;
}

int rd_finish_payload(rd_t *r, const fmt_cur_t *c)
{
    if (c->bad)
        return rd_fail(r, OMPF_EFORMAT, "a record is malformed or runs past the end of the payload; " MALFORMED);
    if (c->p != c->end)
        return rd_fail(r, OMPF_EFORMAT, "%zu unexpected bytes after the last record; " MALFORMED,
                    (size_t)(c->end - c->p));
    return 0;
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
            return rd_fail(r, OMPF_EFORMAT, "unknown chunk flags 0x%x; " MALFORMED, h.flags);
        if (!known && !(h.flags & FMT_CF_SKIPPABLE))
            return rd_fail(r, OMPF_EFORMAT, "unknown chunk type %u; " MALFORMED
                        " (a newer writer marks optional chunks skippable)", h.type);
        if (h.raw > FMT_MAX_RAW || h.stored > FMT_MAX_STORED)
            return rd_fail(r, OMPF_ERANGE, "absurd chunk size (%llu bytes stored, %llu decoded; "
                        "the limit is %u MiB); " MALFORMED, (unsigned long long)h.stored,
                        (unsigned long long)h.raw, FMT_MAX_RAW >> 20);
        if (!(h.flags & FMT_CF_ZSTD) && h.raw != h.stored)
            return rd_fail(r, OMPF_EFORMAT, "uncompressed chunk with different stored (%llu) and "
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
            return rd_fail(r, OMPF_ECHECKSUM, "checksum mismatch: the file is damaged; "
                        "re-record the profile or restore an intact copy");
        if (h.type == FMT_CHUNK_END ? h.count != 0
            : columns             ? h.type == FMT_CHUNK_PATHS && h.count > FMT_MAX_COLUMN_RECORDS
                                  : h.count > h.raw)
            return rd_fail(r, OMPF_ERANGE, "absurd record count %u for a %llu-byte payload; "
                        MALFORMED, h.count, (unsigned long long)h.raw);
        r->chunks++;
        int rc = 0;
        fmt_cur_t c;
        if (h.type == FMT_CHUNK_XUS) {
            /* Version 1: every XU has at least FMT_XU_COLUMNS bytes. */
            if (columns ? h.count > FMT_MAX_COLUMN_RECORDS
                        : (uint64_t)h.count * FMT_XU_COLUMNS > h.raw)
                return rd_fail(r, OMPF_ERANGE, "absurd XU count %u for a %llu-byte payload; "
                            MALFORMED, h.count, (unsigned long long)h.raw);
            if (rd_grow((void **)&r->xus, &r->cap_xus, r->n_xus + 1, sizeof *r->xus))
                return rd_oom(r);
            r->xus[r->n_xus++] = (xus_loc_t){off, h, r->chunk_index};
            r->xus_in_chunks += h.count;
        } else if (known) {
            if ((rc = rd_payload(r, &h, stored, &c)))
                return rc;
            switch (h.type) {
            case FMT_CHUNK_META: rc = rd_dec_meta(r, &c, h.count); break;
            case FMT_CHUNK_EVENTS: rc = rd_dec_events(r, &c, h.count); break;
            case FMT_CHUNK_CONSTRUCTS: rc = rd_dec_constructs(r, &c, h.count); break;
            case FMT_CHUNK_LABELS: rc = rd_dec_labels(r, &c, h.count); break;
            case FMT_CHUNK_PATHS: rc = rd_dec_paths(r, &c, h.count); break;
            case FMT_CHUNK_THREADS: rc = rd_dec_threads(r, &c, h.count); break;
            case FMT_CHUNK_SOURCES: rc = rd_dec_sources(r, &c, h.count); break;
            case FMT_CHUNK_END: rc = rd_dec_end(r, &c); break;
            case FMT_CHUNK_EXACT: rc = rd_dec_exact(r, &c, h.count); break;
            case FMT_CHUNK_PARTS:
                rc = rd_dec_parts(r, &c, h.count);
                /* decoded again into their XUs after pass 2 */
                if (!rc && ompf__keeps_parts(r->p)) {
                    if (rd_grow((void **)&r->parts_loc, &r->cap_parts_loc, r->n_parts_loc + 1,
                                sizeof *r->parts_loc))
                        return rd_oom(r);
                    r->parts_loc[r->n_parts_loc++] = (xus_loc_t){off, h, r->chunk_index};
                }
                break;
            default: break;
            }
            if (rc)
                return rc;
        }
        off += FMT_CHUNK_HEADER_SIZE + (size_t)h.stored;
        rd_release(r, off);
        if (r->have_end) {
            r->chunk_type = 0;
            if (off != r->len)
                return rd_fail(r, OMPF_EFORMAT, "%zu bytes follow the END chunk at offset %zu; "
                            MALFORMED, r->len - off, off);
            return 0;
        }
    }
}

/* ---- entry points ----------------------------------------------------- */

static int check_header(rd_t *r)
{
    if (r->len == 0)
        return rd_fail(r, OMPF_EFORMAT, "the file is empty (0 bytes); it is not a profile or its "
                    "writer died before writing anything");
    size_t m = r->len < FMT_MAGIC_LEN ? r->len : FMT_MAGIC_LEN;
    if (memcmp(r->buf, FMT_MAGIC, m))
        return rd_fail(r, OMPF_EFORMAT, "not an ompfuse profile (wrong magic number); pass a "
                    "file written by 'ompfuse run' or 'ompfuse import'");
    if (r->len < FMT_HEADER_SIZE)
        return rd_fail(r, OMPF_EFORMAT, "truncated header: the file has %zu bytes, the header "
                    "needs %u; the writer died at once or the copy is incomplete", r->len,
                    FMT_HEADER_SIZE);
    uint32_t version = fmt_get_u32(r->buf + 8);
    if (version > OMPF_FORMAT_VERSION)
        return rd_fail(r, OMPF_EVERSION, "written in format version %u but this ompfuse reads up "
                    "to version %u; upgrade ompfuse", version, OMPF_FORMAT_VERSION);
    if (version == 0)
        return rd_fail(r, OMPF_EFORMAT, "format version 0 does not exist; " MALFORMED);
    r->version = version;
    if (CRC_MISMATCH(fmt_get_u32(r->buf + 28), (uint32_t)fmt_chunk_crc(r->buf, NULL, 0)))
        return rd_fail(r, OMPF_ECHECKSUM, "header checksum mismatch: the file is damaged; "
                    "re-record the profile or restore an intact copy");
    if (fmt_get_u32(r->buf + 12) != FMT_HEADER_SIZE || fmt_get_u32(r->buf + 16) ||
        fmt_get_u32(r->buf + 20) || fmt_get_u32(r->buf + 24))
        return rd_fail(r, OMPF_EFORMAT, "unknown header size or flags; " MALFORMED);
    return 0;
}

static void rd_free(rd_t *r)
{
    free(r->scratch);
    ZSTD_freeDCtx(r->z);
    free(r->ev_source);
    fmt_idmap_free(&r->con_map);
    fmt_idmap_free(&r->lab_map);
    fmt_idmap_free(&r->lab_wait);
    free(r->lab);
    free(r->lab_in);
    free(r->dup);
    free(r->lab_q);
    for (size_t i = 0; i < r->n_th; i++)
        free(r->th[i].vals);
    free(r->th);
    free(r->xus);
    fmt_exact_free(&r->exact);
    fmt_parts_free(&r->parts);
    free(r->parts_loc);
}

/* flags: 0, or OMPF_LEAN with its options; labels: NULL, or the shared
 * trie (ompf_profile_read_into). */
static int read_mem(const void *buf, size_t len, const char *name, unsigned flags,
                    int own_map, ompf_profile_t *labels, ompf_profile_t **out,
                    ompf_read_info_t *info, ompf_error_t *err)
{
    ompf_read_info_t dummy;
    if (!info)
        info = &dummy;
    memset(info, 0, sizeof *info);
    if (!out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_profile_read_mem: no output pointer");
    *out = NULL;
    rd_t r = {.buf = buf, .len = buf ? len : 0, .name = name ? name : "(memory)", .err = err,
              .own_map = own_map};
    int rc = check_header(&r);
    if (!rc && ompf_profile_create(&r.p))
        rc = rd_oom(&r);
    unsigned lean = flags & ~OMPF_LABELS_LAST;
    if (!rc && lean &&
        (ompf__lean_set(r.p, lean) || ((lean & OMPF_LEAN_PACKED) && ompf__pack_open(r.p))))
        rc = ompf_error_set(err, OMPF_EINVAL, "%s: invalid lean flags 0x%x", r.name, lean);
    r.lt = r.p;
    if (!rc && labels) {
        r.p->label_space = labels;
        r.lt = labels;
        r.labels_last = !!(flags & OMPF_LABELS_LAST);
    }
    if (!rc)
        rc = pass1(&r);
    if (!rc && !r.ev_source && !(r.ev_source = calloc(1, sizeof *r.ev_source)))
        rc = rd_oom(&r);
    if (!rc)
        rc = rd_resolve(&r);
    /* The labels are complete: their hash goes before the XUs come (peak
     * memory), unless a reader looks the shared trie up next; a later
     * lookup rebuilds it. */
    if (!rc && (r.lt == r.p || r.labels_last))
        ompf__label_drop_hash(r.lt);
    if (!rc)
        rc = rd_pass2(&r);
    if (!rc) {
        char why[300];
        r.chunk_type = 0; /* the message names no chunk */
        int erc = fmt_exact_apply(&r.exact, r.p, r.truncated, why, sizeof why);
        rc = erc == OMPF_ENOMEM ? rd_oom(&r) : erc ? rd_fail(&r, erc, "%s; " MALFORMED, why) : 0;
    }
    info->chunks = r.chunks;
    info->xus_read = r.xus_read;
    info->xus_dropped = r.xus_dropped;
    rd_free(&r);
    /* Packed: the records were packed as they came, the parts wait to be
     * packed with them (profile/pack.c). */
    if (!rc && r.p->pk_open && ompf__pack_seal(r.p))
        rc = rd_oom(&r);
    if (rc) {
        rd_labels_abandon(&r);
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

int ompf_profile_read_mem(const void *buf, size_t len, const char *name, ompf_profile_t **out,
                          ompf_read_info_t *info, ompf_error_t *err)
{
    return read_mem(buf, len, name, 0, 0, NULL, out, info, err);
}

static int read_file(const char *path, unsigned flags, ompf_profile_t *labels,
                     ompf_profile_t **out, ompf_read_info_t *info, ompf_error_t *err)
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
    int rc = read_mem(map, len, path, flags, 1, labels, out, info, err);
    if (map)
        munmap(map, len);
    return rc;
}

int ompf_profile_read(const char *path, ompf_profile_t **out, ompf_read_info_t *info,
                      ompf_error_t *err)
{
    return read_file(path, 0, NULL, out, info, err);
}

/* The flags and trie ompf_profile_read_into takes: 0, or the error. */
static int into_args(unsigned flags, ompf_profile_t *labels, ompf_profile_t **out,
                     ompf_read_info_t *info, ompf_error_t *err)
{
    unsigned lean = flags & ~OMPF_LABELS_LAST;
    if ((lean && !(lean & OMPF_LEAN)) ||
        (flags & ~(OMPF_LEAN | OMPF_LEAN_TIMES | OMPF_LEAN_START | OMPF_LEAN_PACKED |
                   OMPF_LABELS_LAST)) ||
        (labels && ompf_profile_label_space(labels) != labels)) {
        if (out)
            *out = NULL;
        if (info)
            memset(info, 0, sizeof *info);
        return ompf_error_set(err, OMPF_EINVAL, "ompf_profile_read_into: invalid flags 0x%x "
                              "or a label trie that is not its own", flags);
    }
    return 0;
}

int ompf_profile_read_mem_into(const void *buf, size_t len, const char *name, unsigned flags,
                               ompf_profile_t *labels, ompf_profile_t **out,
                               ompf_read_info_t *info, ompf_error_t *err)
{
    int rc = into_args(flags, labels, out, info, err);
    return rc ? rc : read_mem(buf, len, name, flags, 0, labels, out, info, err);
}

int ompf_profile_read_into(const char *path, unsigned flags, ompf_profile_t *labels,
                           ompf_profile_t **out, ompf_read_info_t *info, ompf_error_t *err)
{
    int rc = into_args(flags, labels, out, info, err);
    return rc ? rc : read_file(path, flags, labels, out, info, err);
}
