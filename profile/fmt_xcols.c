/* The XUS chunk encoder fed a few rows at a time: the same bytes as
 * fmt_enc_xus (fmt_codec.c) of all a chunk's rows at once, without
 * holding them.  ompf_profile_write_feed produces a fused profile's rows
 * on demand; staging a whole chunk of 65,536 rows (the rows, their XUs,
 * values and provenance) was about 20 MB, a fifth of combine's peak at
 * 10^5 XUs per run.  Here each column is encoded as its rows arrive, and
 * the chunk's payload is the columns put end to end.
 *
 * A scalar column is a mode column (docs/format.md 1.3): mode 1 when its
 * items 1.. are all equal (item 0 and item 1 stored), else mode 0 and
 * every item.  Items are held back while they are all equal, so a
 * constant column costs nothing until it ends or changes. */
#include <stdlib.h>

#include "fmt.h"
#include "fmt_put.h"

/* fmt_enc_xus's scalar columns, in its order */
enum { C_ID, C_CID, C_LID, C_THREAD, C_TT, C_TS, C_PARTS, C_CPU, C_CORE, C_NUMA,
       C_KIND, C_START, C_DUR, C_ISTART, C_ICOUNT, C_SCALAR };

static const unsigned char sgn[C_SCALAR] = {[C_ID] = 1, [C_CID] = 1, [C_LID] = 1,
                                            [C_CPU] = 1, [C_CORE] = 1, [C_NUMA] = 1,
                                            [C_START] = 1, [C_DUR] = 1, [C_ISTART] = 1};

typedef struct xcol {
    fmt_buf_t buf;   /* varints from item 0 on, once the items differ */
    uint64_t first, second, prev;
    size_t n;
    int differ;
} xcol_t;

struct fmt_xcols {
    uint32_t n_events, n_prov;
    xcol_t *col; /* C_SCALAR scalar, n_events value, n_prov provenance */
    uint64_t *tmp;
    size_t tmp_cap;
};

fmt_xcols_t *fmt_xcols_create(uint32_t n_events, uint32_t n_prov)
{
    fmt_xcols_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->n_events = n_events;
    c->n_prov = n_prov;
    c->col = calloc((size_t)C_SCALAR + n_events + n_prov, sizeof *c->col);
    if (!c->col) {
        free(c);
        return NULL;
    }
    return c;
}

void fmt_xcols_destroy(fmt_xcols_t *c)
{
    if (!c)
        return;
    for (size_t k = 0; k < (size_t)C_SCALAR + c->n_events + c->n_prov; k++)
        fmt_buf_free(&c->col[k].buf);
    free(c->col);
    free(c->tmp);
    free(c);
}

/* Items of scalar column k of n rows, raw (before the zigzag), into out. */
static void extract(int k, const fmt_xu_row_t *r, size_t n, uint64_t *prev, uint64_t *out)
{
    switch (k) {
#define EACH(EXPR)                                                          \
    for (size_t i = 0; i < n; i++)                                          \
        out[i] = (uint64_t)(EXPR);                                          \
    break
#define EACH_DELTA(EXPR)                                                    \
    for (size_t i = 0; i < n; i++) {                                        \
        uint64_t v_ = (uint64_t)(EXPR);                                     \
        out[i] = v_ - *prev;                                                \
        *prev = v_;                                                         \
    }                                                                       \
    break
    case C_ID: EACH_DELTA(r[i].xu->id);
    case C_CID: EACH_DELTA(r[i].cid);
    case C_LID: EACH_DELTA(r[i].lid);
    case C_THREAD: EACH(r[i].xu->thread);
    case C_TT: EACH(r[i].xu->team_thread);
    case C_TS: EACH(r[i].xu->team_size);
    case C_PARTS: EACH(r[i].xu->parts);
    case C_CPU: EACH((int64_t)r[i].xu->cpu);
    case C_CORE: EACH((int64_t)r[i].xu->core);
    case C_NUMA: EACH((int64_t)r[i].xu->numa);
    case C_KIND: EACH(r[i].xu->kind);
    case C_START: EACH_DELTA(r[i].xu->start_ns);
    case C_DUR: EACH((int64_t)(r[i].xu->end_ns - r[i].xu->start_ns));
    case C_ISTART: EACH_DELTA(r[i].xu->iter_start);
    case C_ICOUNT: EACH(r[i].xu->iter_count);
    default: break;
#undef EACH
#undef EACH_DELTA
    }
}

/* Appends n raw items to scalar column c. */
static int mode_add(xcol_t *c, int sg, const uint64_t *it, size_t n)
{
    size_t j = 0;
    if (c->n == 0 && j < n) {
        c->first = it[j++];
        c->n = 1;
    }
    if (c->n == 1 && j < n) {
        c->second = it[j++];
        c->n = 2;
    }
    if (!c->differ) {
        size_t k = j;
        while (k < n && it[k] == c->second)
            k++;
        c->n += k - j;
        if (k == n)
            return 0;
        /* the first item that differs: item 0, the equal ones, then on */
        if (fmt_buf_reserve(&c->buf, (c->n + n - k) * UV_MAX))
            return OMPF_ENOMEM;
        unsigned char *o = c->buf.data + c->buf.len;
        o = put_uv(o, MCOL_ITEM_(sg, c->first));
        uint64_t s = MCOL_ITEM_(sg, c->second);
        for (size_t i = 1; i < c->n; i++)
            o = put_uv(o, s);
        c->buf.len = (size_t)(o - c->buf.data);
        c->differ = 1;
        j = k;
    }
    if (fmt_buf_reserve(&c->buf, (n - j) * UV_MAX))
        return OMPF_ENOMEM;
    unsigned char *o = c->buf.data + c->buf.len;
    for (size_t i = j; i < n; i++)
        o = put_uv(o, MCOL_ITEM_(sg, it[i]));
    c->buf.len = (size_t)(o - c->buf.data);
    c->n += n - j;
    return 0;
}

int fmt_xcols_add(fmt_xcols_t *c, const fmt_xu_row_t *r, size_t n)
{
    if (!n)
        return 0;
    if (n > c->tmp_cap) {
        uint64_t *t = realloc(c->tmp, n * sizeof *t);
        if (!t)
            return OMPF_ENOMEM;
        c->tmp = t;
        c->tmp_cap = n;
    }
    for (int k = 0; k < C_SCALAR; k++) {
        extract(k, r, n, &c->col[k].prev, c->tmp);
        if (mode_add(&c->col[k], sgn[k], c->tmp, n))
            return OMPF_ENOMEM;
    }
    for (uint32_t e = 0; e < c->n_events; e++) {
        fmt_buf_t *b = &c->col[C_SCALAR + e].buf;
        if (fmt_buf_reserve(b, n * UV_MAX))
            return OMPF_ENOMEM;
        unsigned char *o = b->data + b->len;
        for (size_t i = 0; i < n; i++)
            o = put_value(o, r[i].values[e]);
        b->len = (size_t)(o - b->data);
    }
    for (uint32_t s = 0; s < c->n_prov; s++) {
        xcol_t *x = &c->col[C_SCALAR + c->n_events + s];
        if (fmt_buf_reserve(&x->buf, n * UV_MAX))
            return OMPF_ENOMEM;
        unsigned char *o = x->buf.data + x->buf.len;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = r[i].prov[s] + 1; /* "none" (UINT64_MAX) becomes 0 */
            o = put_uv(o, fmt_zz((int64_t)(v - x->prev)));
            x->prev = v;
        }
        x->buf.len = (size_t)(o - x->buf.data);
    }
    return 0;
}

int fmt_xcols_finish(fmt_xcols_t *c, fmt_buf_t *out)
{
    size_t total = 2 * UV_MAX, ncol = (size_t)C_SCALAR + c->n_events + c->n_prov;
    for (size_t k = 0; k < ncol; k++)
        total += c->col[k].buf.len + 1 + 2 * UV_MAX;
    int rc = fmt_buf_reserve(out, total);
    if (!rc) {
        unsigned char *o = out->data + out->len;
        o = put_uv(o, c->n_events);
        o = put_uv(o, c->n_prov);
        for (int k = 0; k < C_SCALAR; k++) {
            const xcol_t *x = &c->col[k];
            if (x->n >= 2 && !x->differ) {
                *o++ = 1;
                o = put_uv(o, MCOL_ITEM_(sgn[k], x->first));
                o = put_uv(o, MCOL_ITEM_(sgn[k], x->second));
            } else if (x->n == 1) {
                *o++ = 0;
                o = put_uv(o, MCOL_ITEM_(sgn[k], x->first));
            } else {
                *o++ = 0;
                if (x->buf.len) /* empty when n == 0 */
                    memcpy(o, x->buf.data, x->buf.len);
                o += x->buf.len;
            }
        }
        for (size_t k = C_SCALAR; k < ncol; k++) {
            if (c->col[k].buf.len)
                memcpy(o, c->col[k].buf.data, c->col[k].buf.len);
            o += c->col[k].buf.len;
        }
        out->len = (size_t)(o - out->data);
    }
    for (size_t k = 0; k < ncol; k++) {
        xcol_t *x = &c->col[k];
        x->buf.len = 0;
        x->n = 0;
        x->differ = 0;
        x->prev = 0;
    }
    return rc;
}
