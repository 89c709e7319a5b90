/* PARTS chunks (docs/format.md, 2.4): counted by XU id in the reader's
 * first pass, and decoded again into their XUs' places once every XUS
 * chunk is read (a part may come from another stream than its XU, before
 * or after it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "profile_internal.h"

#define NO_REC UINT32_MAX
/* The second decode met other records than the first: the file changed
 * under the reader (the first pass checked every chunk's checksum). */
#define CHANGED "the PARTS records differ from those first read (was the file written " \
                "while it was read?)"

/* One record; 0 or OMPF_EFORMAT / OMPF_ERANGE (*what says why). */
static inline int dec_one(fmt_cur_t *c, uint64_t *id, ompf_part_t *pt, const char **what)
{
    memset(pt, 0, sizeof *pt); /* its padding too: parts are compared bytewise */
    *id = fmt_cur_uv_hot(c);
    uint64_t th = fmt_cur_uv_hot(c);
    pt->start_ns = fmt_cur_uv_hot(c);
    uint64_t dur = fmt_cur_uv_hot(c);
    if (c->bad) {
        *what = "record past the payload end";
        return OMPF_EFORMAT;
    }
    if (th >= OMPF_MAX_THREADS) {
        *what = "thread index at or above OMPF_MAX_THREADS";
        return OMPF_ERANGE;
    }
    pt->thread = (uint32_t)th;
    pt->end_ns = pt->start_ns + dur;
    if (pt->end_ns < pt->start_ns) {
        *what = "part ends beyond 2^64-1 ns";
        return OMPF_EFORMAT;
    }
    return 0;
}

/* Both passes over one chunk's records: without p, counts them by XU id
 * (or only checks them, without ps); with p, writes each to its XU's
 * place (fmt_parts_claim). */
static int walk(fmt_parts_t *ps, ompf_profile_t *p, fmt_cur_t *c, uint32_t count,
                const char **what)
{
    /* the part array and the places are 32-bit indexed, below the marks */
    if (ps && !p && ps->n + count >= NO_REC - 1)
        return OMPF_ENOMEM;
    for (uint32_t k = 0; k < count; k++) {
        uint64_t id;
        ompf_part_t pt;
        int rc = dec_one(c, &id, &pt, what);
        if (rc)
            return rc;
        if (!ps)
            continue;
        if (p) {
            uint32_t g = fmt_idmap_get(&ps->grp, id);
            if (g == NO_REC || ps->slot[g] >= NO_REC - 1)
                continue; /* an XU that takes no parts */
            if (ps->slot[g] == ps->cnt[g]) {
                *what = CHANGED;
                return OMPF_EFORMAT;
            }
            /* file order within an XU; memcpy: the padding too (zeroed) */
            memcpy(&p->part[ps->base + ps->slot[g]++], &pt, sizeof pt);
            continue;
        }
        if (!ps->ng) /* before the first put: the tool's ids with parts are
                        one in six of a thread's sequence */
            ps->grp.spread = 16;
        uint32_t old;
        if (fmt_idmap_put(&ps->grp, id, (uint32_t)ps->ng, &old))
            return OMPF_ENOMEM;
        if (old == NO_REC) {
            if (ompf__grow((void **)&ps->cnt, &ps->cap, ps->ng + 1, sizeof *ps->cnt))
                return OMPF_ENOMEM;
            ps->cnt[old = (uint32_t)ps->ng++] = 0;
        }
        ps->cnt[old]++;
        ps->n++;
    }
    return 0;
}

int fmt_parts_decode(fmt_parts_t *ps, fmt_cur_t *c, uint32_t count, const char **what)
{
    return walk(ps, NULL, c, count, what);
}

static inline int part_before(const ompf_part_t *x, const ompf_part_t *y)
{
    return x->start_ns != y->start_ns ? x->start_ns < y->start_ns : x->end_ns < y->end_ns;
}

typedef struct {
    ompf_part_t part;
    size_t seq; /* file order: the last key */
} seq_part_t;

static int seq_cmp(const void *a, const void *b)
{
    const seq_part_t *x = a, *y = b;
    if (part_before(&x->part, &y->part))
        return -1;
    if (part_before(&y->part, &x->part))
        return 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* One XU's parts by start, then end, in file order where both are equal.
 * A task has a few parts (insertion sort); above 32, qsort with the file
 * position as the last key, since qsort need not be stable (glibc 2.37's
 * is not).  0 or OMPF_ENOMEM. */
static int order_parts(ompf_part_t *r, size_t n)
{
    /* Moved by memcpy: a struct assignment need not copy the padding,
     * which the decoder zeroed (parts are compared bytewise). */
    if (n > 32) {
        seq_part_t *t = malloc(n * sizeof *t);
        if (!t)
            return OMPF_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            memcpy(&t[i].part, &r[i], sizeof *r);
            t[i].seq = i;
        }
        qsort(t, n, sizeof *t, seq_cmp);
        for (size_t i = 0; i < n; i++)
            memcpy(&r[i], &t[i].part, sizeof *r);
        free(t);
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        ompf_part_t x;
        memcpy(&x, &r[i], sizeof x);
        size_t j = i;
        for (; j > 0 && part_before(&x, &r[j - 1]); j--)
            memcpy(&r[j], &r[j - 1], sizeof x);
        memcpy(&r[j], &x, sizeof x);
    }
    return 0;
}

int fmt_parts_claim(fmt_parts_t *ps, ompf_profile_t *p, int truncated, uint64_t *dropped,
                    char *msg, size_t msglen)
{
    if (!ps->n)
        return 0;
    ps->slot = malloc(ps->ng * sizeof *ps->slot);
    if (!ps->slot || ompf__part_at_all(p))
        return OMPF_ENOMEM;
    for (size_t g = 0; g < ps->ng; g++)
        ps->slot[g] = NO_REC - 1; /* not yet claimed */
    ps->base = p->n_part;
    size_t nxu = ompf_xu_count(p), total = 0;
    for (size_t i = 0; i < nxu; i++) {
        uint64_t id = ompf__xu_id(p, i);
        uint32_t g = fmt_idmap_get(&ps->grp, id);
        if (g == NO_REC || ps->slot[g] != NO_REC - 1)
            continue; /* no parts, or an id an earlier XU took */
        size_t k = ps->cnt[g];
        uint32_t count = ompf__xu_parts_field(p, i); /* full or being packed */
        ps->slot[g] = NO_REC;
        if (count != k) {
            if (!truncated) {
                snprintf(msg, msglen, "XU id %llu has %zu parts recorded but a parts "
                         "count of %u", (unsigned long long)id, k, count);
                return OMPF_EFORMAT;
            }
            ++*dropped; /* some of its parts were lost: drawn as one span */
            continue;
        }
        if (k > OMPF_MAX_PARTS_PER_XU) {
            snprintf(msg, msglen, "XU id %llu has %zu parts, more than the limit "
                     "OMPF_MAX_PARTS_PER_XU = %u (docs/format.md, Limits)",
                     (unsigned long long)id, k, OMPF_MAX_PARTS_PER_XU);
            return OMPF_ERANGE;
        }
        ps->slot[g] = (uint32_t)total;
        p->part_at[i] = ps->base + total + 1;
        total += k;
        ps->cnt[g] = (uint32_t)total; /* from now on: where its places end */
    }
    /* records of an id no XU has (a task that never completed: the program
     * ended inside it) keep no place, and fmt_parts_fill skips them */
    /* the profile's part array at its final size at once, not by doubling */
    return ompf__parts_append(p, total);
}

int fmt_parts_fill(fmt_parts_t *ps, ompf_profile_t *p, fmt_cur_t *c, uint32_t count,
                   const char **what)
{
    return walk(ps, p, c, count, what);
}

int fmt_parts_ready(fmt_parts_t *ps, ompf_profile_t *p, size_t *next)
{
    size_t nxu = ompf_xu_count(p), i = *next;
    int rc = 0;
    for (; i < nxu && !rc; i++) {
        if (i >= p->n_part_at || !p->part_at[i])
            continue; /* takes no parts */
        uint32_t g = fmt_idmap_get(&ps->grp, ompf__xu_id(p, i));
        if (ps->slot[g] != ps->cnt[g])
            break; /* places still empty */
        rc = order_parts(p->part + p->part_at[i] - 1, ompf__xu_parts_field(p, i));
    }
    *next = rc ? *next : i;
    return rc;
}

int fmt_parts_order(fmt_parts_t *ps, ompf_profile_t *p, size_t from, const char **what)
{
    if (!ps->n)
        return 0;
    for (size_t g = 0; g < ps->ng; g++)
        if (ps->slot[g] < NO_REC - 1 && ps->slot[g] != ps->cnt[g]) {
            *what = CHANGED; /* places left unfilled */
            return OMPF_EFORMAT;
        }
    size_t nxu = ompf_xu_count(p);
    int rc = 0;
    for (size_t i = from; i < nxu && !rc; i++)
        if (ompf_xu_has_parts(p, i))
            rc = order_parts(p->part + p->part_at[i] - 1, ompf__xu_parts_field(p, i));
    return rc;
}

void fmt_parts_free(fmt_parts_t *ps)
{
    fmt_idmap_free(&ps->grp);
    free(ps->cnt);
    free(ps->slot);
    *ps = (fmt_parts_t){0};
}
