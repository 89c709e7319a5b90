/* PARTS chunks (docs/format.md, 2.4): decoded in the reader's first pass,
 * attached to the XUs by id once every XUS chunk is read (a part may come
 * from another stream than its XU, before or after it). */
#include <stdio.h>
#include <stdlib.h>

#include "fmt.h"
#include "profile_internal.h"

int fmt_parts_decode(fmt_parts_t *ps, fmt_cur_t *c, uint32_t count, const char **what)
{
    if (ps && ompf__grow((void **)&ps->rec, &ps->cap, ps->n + count, sizeof *ps->rec))
        return OMPF_ENOMEM;
    for (uint32_t k = 0; k < count; k++) {
        fmt_part_rec_t r;
        r.xu_id = fmt_cur_uv(c);
        uint64_t th = fmt_cur_uv(c);
        r.part.start_ns = fmt_cur_uv(c);
        uint64_t dur = fmt_cur_uv(c);
        if (c->bad) {
            *what = "record past the payload end";
            return OMPF_EFORMAT;
        }
        if (th >= OMPF_MAX_THREADS) {
            *what = "thread index at or above OMPF_MAX_THREADS";
            return OMPF_ERANGE;
        }
        r.part.thread = (uint32_t)th;
        r.part.end_ns = r.part.start_ns + dur;
        if (r.part.end_ns < r.part.start_ns) {
            *what = "part ends beyond 2^64-1 ns";
            return OMPF_EFORMAT;
        }
        if (ps)
            ps->rec[ps->n++] = r;
    }
    return 0;
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
    if (n > 32) {
        seq_part_t *t = malloc(n * sizeof *t);
        if (!t)
            return OMPF_ENOMEM;
        for (size_t i = 0; i < n; i++)
            t[i] = (seq_part_t){r[i], i};
        qsort(t, n, sizeof *t, seq_cmp);
        for (size_t i = 0; i < n; i++)
            r[i] = t[i].part;
        free(t);
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        ompf_part_t x = r[i];
        size_t j = i;
        for (; j > 0 && part_before(&x, &r[j - 1]); j--)
            r[j] = r[j - 1];
        r[j] = x;
    }
    return 0;
}

#define NO_REC UINT32_MAX

int fmt_parts_attach(fmt_parts_t *ps, ompf_profile_t *p, int truncated, uint64_t *dropped,
                     char *msg, size_t msglen)
{
    if (!ps->n)
        return 0;
    /* Each XU id's records chained in file order through an id map (16
     * slots an id: the tool's ids with parts are one in six of a thread's
     * sequence), then one pass over the XUs takes each one's chain: time
     * and memory per part record (4 bytes, and 16 per XU id), not per XU.
     * A qsort of all records by (id, start) and a hash of the ids were
     * 40 % of reading a task program's profile (fib: 3 parts per task). */
    fmt_idmap_t grp = {.spread = 16};
    size_t n = ps->n, ng = 0, cap_ends = 0, cap_run = 0;
    uint32_t *next = malloc(n * sizeof *next); /* the id's next record */
    uint32_t *ends = NULL;                     /* per id: first, last record */
    ompf_part_t *run = NULL;
    int rc = next && n < NO_REC ? 0 : OMPF_ENOMEM;
    for (size_t a = 0; a < n && !rc; a++) {
        uint32_t old;
        if ((rc = fmt_idmap_put(&grp, ps->rec[a].xu_id, (uint32_t)ng, &old)))
            break;
        next[a] = NO_REC;
        if (old == NO_REC) {
            if ((rc = ompf__grow((void **)&ends, &cap_ends, 2 * (ng + 1), sizeof *ends)))
                break;
            ends[2 * ng] = ends[2 * ng + 1] = (uint32_t)a;
            ng++;
        } else {
            next[ends[(size_t)2 * old + 1]] = (uint32_t)a;
            ends[(size_t)2 * old + 1] = (uint32_t)a;
        }
    }
    /* the profile's part array at its final size at once, not by doubling */
    if (!rc && ompf__reserve_parts(p, n))
        rc = OMPF_ENOMEM;
    size_t nxu = ompf_xu_count(p);
    for (size_t i = 0; i < nxu && !rc; i++) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        uint32_t g = fmt_idmap_get(&grp, x->id);
        if (g == NO_REC || ends[(size_t)2 * g] == NO_REC)
            continue; /* no parts, or an id an earlier XU took */
        size_t k = 0;
        for (uint32_t r = ends[(size_t)2 * g]; r != NO_REC && !rc; r = next[r]) {
            if (k == cap_run)
                rc = ompf__grow((void **)&run, &cap_run, k + 1, sizeof *run);
            if (!rc)
                run[k++] = ps->rec[r].part;
        }
        ends[(size_t)2 * g] = NO_REC;
        if (rc)
            break;
        if ((rc = order_parts(run, k)))
            break;
        if (x->parts != k) {
            if (!truncated) {
                snprintf(msg, msglen, "XU id %llu has %zu parts recorded but a parts "
                         "count of %u", (unsigned long long)x->id, k, x->parts);
                rc = OMPF_EFORMAT;
            } else {
                ++*dropped; /* some of its parts were lost: drawn as one span */
            }
            continue;
        }
        rc = ompf_xu_set_parts(p, i, run, (uint32_t)k);
        if (rc == OMPF_ERANGE)
            snprintf(msg, msglen, "XU id %llu has %zu parts, more than the limit "
                     "OMPF_MAX_PARTS_PER_XU = %u (docs/format.md, Limits)",
                     (unsigned long long)x->id, k, OMPF_MAX_PARTS_PER_XU);
    }
    /* parts of an id no XU has: a task that never completed (the program
     * ended inside it); ignored */
    fmt_idmap_free(&grp);
    free(next);
    free(ends);
    free(run);
    return rc;
}

void fmt_parts_free(fmt_parts_t *ps)
{
    free(ps->rec);
    *ps = (fmt_parts_t){0};
}
