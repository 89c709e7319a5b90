/* Packed profiles (profile.h, OMPF_LEAN_PACKED): a lean profile that also
 * keeps every other field of each XU and its parts, as varints in one
 * byte array.  combine reads its first input so: the fused XUs take that
 * input's records and parts, and a task program's parts alone (24 bytes
 * each, three or four per task) cost more than the record (80 bytes).
 * Packed, a task of a tool-written profile takes 31-33 bytes beside its
 * columns (BOTS nqueens, sort, fib), and 8 for its offset. */
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "ompfuse/file.h"
#include "profile_internal.h"

/* XU i's record: uv thread, team_thread, team_size, parts << 1 | has
 * parts; sv cpu, core, numa; uv kind; start_ns unless a column holds it,
 * end_ns - start_ns unless a column holds it; uv iter_start, iter_count;
 * then with parts each part's uv thread, start - the previous part's
 * start (the XU's start for the first), end - start.  Differences wrap
 * modulo 2^64, so any values come back exactly. */
static void put_record(fmt_buf_t *b, const ompf_xu_t *x, const ompf_part_t *pt, uint32_t np,
                       unsigned lean)
{
    fmt_buf_uv(b, x->thread);
    fmt_buf_uv(b, x->team_thread);
    fmt_buf_uv(b, x->team_size);
    fmt_buf_uv(b, (uint64_t)x->parts << 1 | (pt != NULL));
    fmt_buf_sv(b, x->cpu);
    fmt_buf_sv(b, x->core);
    fmt_buf_sv(b, x->numa);
    fmt_buf_uv(b, x->kind);
    if (!(lean & (OMPF_LEAN_START | OMPF_LEAN_TIMES)))
        fmt_buf_uv(b, x->start_ns);
    if (!(lean & OMPF_LEAN_TIMES))
        fmt_buf_uv(b, x->end_ns - x->start_ns);
    fmt_buf_uv(b, x->iter_start);
    fmt_buf_uv(b, x->iter_count);
    uint64_t prev = x->start_ns;
    for (uint32_t k = 0; pt && k < np; k++) {
        fmt_buf_uv(b, pt[k].thread);
        fmt_buf_uv(b, pt[k].start_ns - prev);
        fmt_buf_uv(b, pt[k].end_ns - pt[k].start_ns);
        prev = pt[k].start_ns;
    }
}

/* XU i's packed record.  While the reader seals (ompf__pack_seal_upto),
 * the offsets of sealed XUs point into pk_new: nothing reads a record
 * then, and ompf__pack_seal makes pk_new the array. */
static const unsigned char *cursor(const ompf_profile_t *p, size_t i)
{
    return p->pk + p->pk_at[i];
}

/* One varint of the array put_record wrote (no bounds to check: this
 * library made it); most fields take one byte. */
static inline uint64_t get_uv(const unsigned char **pp)
{
    const unsigned char *q = *pp;
    uint64_t v = *q++;
    if (v >= 0x80) {
        v &= 0x7f;
        for (unsigned sh = 7;; sh += 7) {
            uint64_t b = *q++;
            v |= (b & 0x7f) << sh;
            if (b < 0x80)
                break;
        }
    }
    *pp = q;
    return v;
}
static inline int64_t get_sv(const unsigned char **pp) { return fmt_unzz(get_uv(pp)); }

/* Decodes XU i's record, which starts at *c, into *x; its parts follow
 * at *c when it returns 1 (0: it has none recorded). */
static int get_fields(const ompf_profile_t *p, size_t i, ompf_xu_t *x, const unsigned char **c)
{
    memset(x, 0, sizeof *x);
    x->id = p->lx_id[i];
    x->type = p->lx_type[i];
    x->label = p->lx_label[i];
    x->thread = (uint32_t)get_uv(c);
    x->team_thread = (uint32_t)get_uv(c);
    x->team_size = (uint32_t)get_uv(c);
    uint64_t parts = get_uv(c);
    x->parts = (uint32_t)(parts >> 1);
    x->cpu = (int32_t)get_sv(c);
    x->core = (int32_t)get_sv(c);
    x->numa = (int32_t)get_sv(c);
    x->kind = (uint8_t)get_uv(c);
    x->start_ns = p->lx_start ? p->lx_start[i] : get_uv(c);
    x->end_ns = p->lx_end ? p->lx_end[i] : x->start_ns + get_uv(c);
    x->iter_start = get_uv(c);
    x->iter_count = get_uv(c);
    return (int)(parts & 1);
}

static int get_record(const ompf_profile_t *p, size_t i, ompf_xu_t *x, const unsigned char **c)
{
    *c = cursor(p, i);
    return get_fields(p, i, x, c);
}

/* ---- packing as the XUs come (the reader's OMPF_LEAN_PACKED) ----------- */

int ompf__pack_open(ompf_profile_t *p)
{
    if (p->n_xu || !(p->lean & OMPF_LEAN_PACKED))
        return OMPF_EINVAL;
    p->pk_open = 1;
    return 0;
}

int ompf__pack_grow(ompf_profile_t *p, size_t cap)
{
    uint64_t *at = realloc(p->pk_at, (cap ? cap : 1) * sizeof *at);
    if (!at)
        return OMPF_ENOMEM;
    p->pk_at = at;
    return 0;
}

int ompf__pack_add(ompf_profile_t *p, size_t i, const ompf_xu_t *x)
{
    fmt_buf_t b = {p->pk, p->n_pk, p->cap_pk, 0};
    p->pk_at[i] = b.len;
    put_record(&b, x, NULL, 0, p->lean); /* its parts come when sealed */
    p->pk = b.data;
    p->n_pk = b.len;
    p->cap_pk = b.cap;
    return b.oom ? OMPF_ENOMEM : 0;
}

uint32_t ompf__xu_parts_field(const ompf_profile_t *p, size_t i)
{
    if (!p->lean)
        return p->xu[i].parts;
    const unsigned char *c = cursor(p, i);
    for (int k = 0; k < 3; k++)
        get_uv(&c);
    return (uint32_t)(get_uv(&c) >> 1);
}

int ompf__pack_seal_upto(ompf_profile_t *p, size_t upto)
{
    if (!p->n_part || upto <= p->pk_sealed) /* no parts: ompf__pack_seal */
        return 0;
    fmt_buf_t b = {p->pk_new, p->n_pk_new, p->cap_pk_new, 0};
    if (!b.data && fmt_buf_reserve(&b, p->n_pk + p->n_part * 8 + 64))
        return OMPF_ENOMEM;
    /* each record again, now with its parts; each offset is read before
       it is rewritten */
    size_t i = p->pk_sealed;
    for (; i < upto; i++) {
        const unsigned char *c = p->pk + p->pk_at[i];
        size_t at = b.len;
        ompf_xu_t x;
        get_fields(p, i, &x, &c);
        const ompf_part_t *pt = NULL;
        if (i < p->n_part_at && p->part_at[i]) {
            pt = p->part + p->part_at[i] - 1;
            p->part_end = p->part_at[i] - 1 + x.parts;
        }
        put_record(&b, &x, pt, x.parts, p->lean);
        if (b.oom)
            break;
        p->pk_at[i] = at;
    }
    p->pk_new = b.data;
    p->n_pk_new = b.len;
    p->cap_pk_new = b.cap;
    p->pk_sealed = i;
    if (b.oom)
        return OMPF_ENOMEM;
    ompf_give_back(p->pk, &p->pk_gone, i < p->n_xu ? p->pk_at[i] : p->n_pk);
    ompf_give_back(p->part, &p->part_gone, p->part_end * sizeof *p->part);
    return 0;
}

int ompf__pack_seal(ompf_profile_t *p)
{
    int rc = ompf__pack_seal_upto(p, p->n_xu);
    if (rc)
        return rc;
    if (p->pk_new) { /* the records with their parts replace those without */
        free(p->pk);
        p->pk = p->pk_new;
        p->n_pk = p->n_pk_new;
        p->pk_new = NULL;
    }
    unsigned char *fit = p->pk ? realloc(p->pk, p->n_pk ? p->n_pk : 1) : malloc(1);
    if (!fit)
        return OMPF_ENOMEM;
    p->pk = fit;
    p->cap_pk = p->n_pk;
    free(p->part);
    free(p->part_at);
    p->part = NULL;
    p->part_at = NULL;
    p->n_part = p->cap_part = p->n_part_at = p->cap_part_at = 0;
    p->n_pk_new = p->cap_pk_new = p->pk_sealed = p->pk_gone = p->part_end = p->part_gone = 0;
    p->pk_open = 0;
    return 0;
}

int ompf_profile_pack(ompf_profile_t *p, unsigned flags)
{
    if (!p || p->lean || !(flags & OMPF_LEAN) || !(flags & OMPF_LEAN_PACKED) ||
        (flags & ~(OMPF_LEAN | OMPF_LEAN_TIMES | OMPF_LEAN_START | OMPF_LEAN_PACKED)))
        return OMPF_EINVAL;
    size_t n = p->n_xu;
    ompf_profile_t q; /* the new columns, in a copy until all is made */
    memset(&q, 0, sizeof q);
    q.lean = flags;
    fmt_buf_t b = {0};
    q.pk_at = malloc((n ? n : 1) * sizeof *q.pk_at);
    /* the columns at their final size: nothing is added to a packed profile */
    size_t m = n ? n : 1;
    q.lx_id = malloc(m * sizeof *q.lx_id);
    q.lx_type = malloc(m * sizeof *q.lx_type);
    q.lx_label = malloc(m * sizeof *q.lx_label);
    if (flags & (OMPF_LEAN_START | OMPF_LEAN_TIMES))
        q.lx_start = malloc(m * sizeof *q.lx_start);
    if (flags & OMPF_LEAN_TIMES)
        q.lx_end = malloc(m * sizeof *q.lx_end);
    int rc = q.pk_at && q.lx_id && q.lx_type && q.lx_label &&
                     (q.lx_start || !(flags & (OMPF_LEAN_START | OMPF_LEAN_TIMES))) &&
                     (q.lx_end || !(flags & OMPF_LEAN_TIMES)) &&
                     !fmt_buf_reserve(&b, n * 16 + 64)
                 ? 0
                 : OMPF_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) {
        const ompf_xu_t *x = &p->xu[i];
        q.pk_at[i] = b.len;
        ompf__lean_store(&q, i, x);
        uint32_t np = 0;
        const ompf_part_t *pt = NULL;
        if (ompf_xu_has_parts(p, i)) {
            pt = p->part + p->part_at[i] - 1;
            np = x->parts;
        }
        put_record(&b, x, pt, np, flags);
        rc = b.oom ? OMPF_ENOMEM : 0;
    }
    if (rc) {
        ompf__lean_free(&q); /* its pk_at too */
        fmt_buf_free(&b);
        return rc;
    }
    unsigned char *fit = realloc(b.data, b.len ? b.len : 1);
    /* the full records, parts and provenance go; values, labels and the
       rest stay */
    free(p->xu);
    free(p->part);
    free(p->part_at);
    free(p->prov);
    p->xu = NULL;
    p->part = NULL;
    p->part_at = NULL;
    p->prov = NULL;
    p->n_part = p->cap_part = p->n_part_at = p->cap_part_at = 0;
    p->cap_prov = 0;
    p->lean = flags;
    p->lx_id = q.lx_id;
    p->lx_type = q.lx_type;
    p->lx_label = q.lx_label;
    p->lx_start = q.lx_start;
    p->lx_end = q.lx_end;
    p->cap_xu = n;
    p->pk = fit ? fit : b.data;
    p->n_pk = b.len;
    p->pk_at = q.pk_at;
    return 0;
}

int ompf_xu_record(const ompf_profile_t *p, size_t i, ompf_xu_t *out)
{
    if (!p || !out)
        return OMPF_EINVAL;
    if (i >= p->n_xu)
        return OMPF_ERANGE;
    if (!p->lean) {
        *out = p->xu[i];
        return 0;
    }
    if (!p->pk)
        return OMPF_EINVAL;
    const unsigned char *c;
    get_record(p, i, out, &c);
    return 0;
}

int ompf__packed_has_parts(const ompf_profile_t *p, size_t i)
{
    const unsigned char *c = cursor(p, i);
    for (int k = 0; k < 3; k++)
        get_uv(&c);
    return (int)(get_uv(&c) & 1);
}

int ompf_xu_parts_copy(const ompf_profile_t *p, size_t i, ompf_part_t *buf, uint32_t cap,
                       uint32_t *n)
{
    if (!n)
        return OMPF_EINVAL;
    *n = 0;
    if (!p || (cap && !buf))
        return OMPF_EINVAL;
    if (i >= p->n_xu)
        return OMPF_ERANGE;
    if (p->lean && !p->pk)
        return OMPF_EINVAL;
    if (!p->lean) {
        ompf_part_t one;
        const ompf_part_t *pt = ompf_xu_parts(p, i, n, &one);
        if (*n > cap)
            return OMPF_ERANGE;
        memcpy(buf, pt, *n * sizeof *pt);
        return 0;
    }
    ompf_xu_t x;
    const unsigned char *c;
    if (!get_record(p, i, &x, &c)) {
        *n = 1;
        if (!cap)
            return OMPF_ERANGE;
        memset(buf, 0, sizeof *buf);
        buf[0].thread = x.thread;
        buf[0].start_ns = x.start_ns;
        buf[0].end_ns = x.end_ns;
        return 0;
    }
    *n = x.parts;
    if (x.parts > cap)
        return OMPF_ERANGE;
    uint64_t prev = x.start_ns;
    for (uint32_t k = 0; k < x.parts; k++) {
        memset(&buf[k], 0, sizeof buf[k]); /* the padding too */
        buf[k].thread = (uint32_t)get_uv(&c);
        buf[k].start_ns = prev += get_uv(&c);
        buf[k].end_ns = buf[k].start_ns + get_uv(&c);
    }
    return 0;
}
