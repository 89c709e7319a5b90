/* PARTS chunks (docs/format.md, 2.4): decoded in the reader's first pass,
 * attached to the XUs by id once every XUS chunk is read (a part may come
 * from another stream than its XU, before or after it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "profile_internal.h"

int fmt_parts_decode(fmt_parts_t *ps, fmt_cur_t *c, uint32_t count, const char **what)
{
    if (ompf__grow((void **)&ps->rec, &ps->cap, ps->n + count, sizeof *ps->rec))
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
        ps->rec[ps->n++] = r;
    }
    return 0;
}

static inline int part_before(const ompf_part_t *x, const ompf_part_t *y)
{
    return x->start_ns != y->start_ns ? x->start_ns < y->start_ns : x->end_ns < y->end_ns;
}

static int part_cmp(const void *a, const void *b)
{
    const fmt_part_rec_t *x = a, *y = b;
    return part_before(&x->part, &y->part) ? -1 : part_before(&y->part, &x->part);
}

/* One XU's records by start, then end; stable (glibc's qsort is a merge
 * sort while memory allows).  A task has a few parts, and at most
 * OMPF_MAX_PARTS_PER_XU are kept. */
static void order_group(fmt_part_rec_t *r, size_t n)
{
    if (n > 32) {
        qsort(r, n, sizeof *r, part_cmp);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        fmt_part_rec_t x = r[i];
        size_t j = i;
        for (; j > 0 && part_before(&x.part, &r[j - 1].part); j--)
            r[j] = r[j - 1];
        r[j] = x;
    }
}

int fmt_parts_attach(fmt_parts_t *ps, ompf_profile_t *p, int truncated, uint64_t *dropped,
                     char *msg, size_t msglen)
{
    if (!ps->n)
        return 0;
    /* The records grouped by XU id with a counting sort through an id map
     * (group numbers in order of first appearance), each group ordered by
     * start; then one pass over the XUs finds each one's group: memory
     * and time per part record, not per XU.  A qsort of all records by
     * (id, start) and a hash of the ids were 40 % of reading a task
     * program's profile (fib: 3 parts per task, ids with parts 1 in 6 of
     * the tool's per-thread sequence, so the map allows 16 slots an id). */
    fmt_idmap_t grp = {.spread = 16};
    size_t n = ps->n, ng = 0;
    uint32_t *at = malloc((n + 1) * sizeof *at);   /* group g: at[g] .. at[g + 1] */
    uint32_t *gof = malloc(n * sizeof *gof);       /* each record's group */
    fmt_part_rec_t *rec = malloc(n * sizeof *rec); /* grouped */
    unsigned char *used = NULL;
    ompf_part_t *run = malloc(n * sizeof *run);
    int rc = at && gof && rec && run && n < UINT32_MAX ? 0 : OMPF_ENOMEM;
    for (size_t a = 0; a < n && !rc; a++) {
        uint32_t old;
        if (fmt_idmap_put(&grp, ps->rec[a].xu_id, (uint32_t)ng, &old)) {
            rc = OMPF_ENOMEM;
            break;
        }
        if (old == UINT32_MAX)
            at[old = (uint32_t)ng++] = 0;
        at[old]++;
        gof[a] = old;
    }
    if (!rc && !(used = calloc(ng ? ng : 1, 1)))
        rc = OMPF_ENOMEM;
    if (!rc) {
        uint32_t sum = 0;
        for (size_t g = 0; g < ng; g++) {
            uint32_t c = at[g];
            at[g] = sum;
            sum += c;
        }
        for (size_t a = 0; a < n; a++)
            rec[at[gof[a]]++] = ps->rec[a]; /* at[g] ends at group g's end */
        memmove(at + 1, at, ng * sizeof *at);
        at[0] = 0;
        for (size_t g = 0; g < ng; g++)
            order_group(rec + at[g], at[g + 1] - at[g]);
    }
    size_t nxu = ompf_xu_count(p);
    for (size_t i = 0; i < nxu && !rc; i++) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        uint32_t g = fmt_idmap_get(&grp, x->id);
        if (g == UINT32_MAX || used[g])
            continue; /* no parts, or an id an earlier XU took */
        used[g] = 1;
        size_t a = at[g], b = at[g + 1];
        for (size_t k = a; k < b; k++)
            run[k - a] = rec[k].part;
        if (x->parts != b - a) {
            if (!truncated) {
                snprintf(msg, msglen, "XU id %llu has %zu parts recorded but a parts "
                         "count of %u", (unsigned long long)x->id, b - a, x->parts);
                rc = OMPF_EFORMAT;
            } else {
                ++*dropped; /* some of its parts were lost: drawn as one span */
            }
            continue;
        }
        rc = ompf_xu_set_parts(p, i, run, (uint32_t)(b - a));
        if (rc == OMPF_ERANGE)
            snprintf(msg, msglen, "XU id %llu has %zu parts, more than the limit "
                     "OMPF_MAX_PARTS_PER_XU = %u (docs/format.md, Limits)",
                     (unsigned long long)x->id, b - a, OMPF_MAX_PARTS_PER_XU);
    }
    /* parts of an id no XU has: a task that never completed (the program
     * ended inside it); ignored */
    fmt_idmap_free(&grp);
    free(at);
    free(gof);
    free(rec);
    free(used);
    free(run);
    return rc;
}

void fmt_parts_free(fmt_parts_t *ps)
{
    free(ps->rec);
    *ps = (fmt_parts_t){0};
}
