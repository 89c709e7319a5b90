/* The EXACT chunk (docs/format.md, 2.4): exact counts above 2^53 that the
 * XUS value columns can only hold as their nearest doubles.  Written by
 * ompf_profile_write after the XUS chunks, read by the reader after them;
 * skippable, so that older readers still read the file (rounded). */
#include <stdio.h>
#include <stdlib.h>

#include "fmt.h"
#include "profile_internal.h"


void fmt_enc_exact(fmt_buf_t *b, const ompf_profile_t *p, const uint64_t *pairs, size_t n)
{
    size_t nev = p->n_ev;
    for (size_t i = 0; i < n; i++) {
        uint64_t slot = pairs[2 * i];
        fmt_buf_uv(b, ompf__xu_id(p, slot / nev));
        fmt_buf_uv(b, slot % nev);
        fmt_buf_uv(b, pairs[2 * i + 1]);
    }
}

void fmt_exact_free(fmt_exact_t *x)
{
    free(x->rec);
    x->rec = NULL;
    x->n = x->cap = 0;
}

int fmt_exact_decode(fmt_exact_t *x, fmt_cur_t *c, uint32_t count, char *why, size_t len)
{
    /* A record takes at least 3 bytes: memory stays bounded by the payload. */
    if ((uint64_t)count * 3 > (uint64_t)(c->end - c->p)) {
        c->bad = 1;
        return 0;
    }
    if (x->n + count > x->cap) {
        size_t cap = x->cap ? x->cap : 16;
        while (cap < x->n + count)
            cap *= 2;
        fmt_exact_rec_t *r = realloc(x->rec, cap * sizeof *r);
        if (!r)
            return OMPF_ENOMEM;
        x->rec = r;
        x->cap = cap;
    }
    for (uint32_t i = 0; i < count; i++) {
        fmt_exact_rec_t r;
        r.xu = fmt_cur_uv(c);
        r.event = fmt_cur_uv(c);
        r.value = fmt_cur_uv(c);
        if (c->bad)
            return 0; /* the caller reports the cursor */
        /* Only counts no double holds: one representation per value. */
        if (ompf__double_exact(r.value)) {
            snprintf(why, len, "XU id %llu event %llu: exact count %llu is one a value "
                     "holds (only counts no 64-bit float holds belong here)",
                     (unsigned long long)r.xu, (unsigned long long)r.event,
                     (unsigned long long)r.value);
            return OMPF_EFORMAT;
        }
        x->rec[x->n++] = r;
    }
    return 0;
}

static int cmp_rec(const void *a, const void *b)
{
    const fmt_exact_rec_t *x = a, *y = b;
    if (x->xu != y->xu)
        return x->xu < y->xu ? -1 : 1;
    return x->event < y->event ? -1 : x->event > y->event;
}

int fmt_exact_apply(const fmt_exact_t *x, ompf_profile_t *p, int truncated, char *why,
                    size_t len)
{
    if (!x->n)
        return 0;
    qsort(x->rec, x->n, sizeof *x->rec, cmp_rec);
    /* XU id -> its first record; then one pass over the XUs, so the cost
     * is one lookup per XU and memory per record, never per XU. */
    fmt_idmap_t first = {0};
    unsigned char *used = calloc(x->n, 1);
    int rc = used ? 0 : OMPF_ENOMEM;
    for (size_t i = 0; i < x->n && !rc; i++) {
        if (i && x->rec[i].xu == x->rec[i - 1].xu) {
            if (x->rec[i].event == x->rec[i - 1].event) {
                snprintf(why, len, "XU id %llu event %llu has two exact counts",
                         (unsigned long long)x->rec[i].xu,
                         (unsigned long long)x->rec[i].event);
                rc = OMPF_EFORMAT;
            }
            continue;
        }
        uint32_t old;
        if (i >= UINT32_MAX - 1 || fmt_idmap_put(&first, x->rec[i].xu, (uint32_t)i, &old))
            rc = OMPF_ENOMEM;
    }
    for (size_t i = 0; i < p->n_xu && !rc; i++) {
        uint32_t k = fmt_idmap_get(&first, ompf__xu_id(p, i));
        if (k == UINT32_MAX)
            continue;
        if (used[k]) {
            snprintf(why, len, "exact counts refer to XU id %llu, which several XUs have",
                     (unsigned long long)ompf__xu_id(p, i));
            rc = OMPF_EFORMAT;
            break;
        }
        for (size_t j = k; j < x->n && x->rec[j].xu == ompf__xu_id(p, i) && !rc; j++) {
            const fmt_exact_rec_t *r = &x->rec[j];
            used[j] = 1;
            double d = r->event < p->n_ev ? p->values[i * p->n_ev + r->event] : 0;
            if (r->event >= p->n_ev || d != (double)r->value) {
                snprintf(why, len, "XU id %llu event %llu: exact count %llu %s",
                         (unsigned long long)r->xu, (unsigned long long)r->event,
                         (unsigned long long)r->value,
                         r->event >= p->n_ev ? "names no event of the profile"
                                             : "disagrees with the value in the XUS chunk");
                rc = OMPF_EFORMAT;
            } else {
                rc = ompf_xu_value_set_u64(p, i, (uint32_t)r->event, r->value);
            }
        }
    }
    /* A truncated file may have lost the XUs (lost references); a complete
     * one must define every XU it gives an exact count. */
    for (size_t j = 0; j < x->n && !rc && !truncated; j++)
        if (!used[j]) {
            snprintf(why, len, "exact count %llu refers to XU id %llu, which is not in the "
                     "file", (unsigned long long)x->rec[j].value,
                     (unsigned long long)x->rec[j].xu);
            rc = OMPF_EFORMAT;
        }
    free(used);
    fmt_idmap_free(&first);
    return rc;
}
