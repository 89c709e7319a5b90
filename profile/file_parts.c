/* PARTS chunks (docs/format.md, 2.4): decoded in the reader's first pass,
 * attached to the XUs by id once every XUS chunk is read (a part may come
 * from another stream than its XU, before or after it). */
#include <stdio.h>
#include <stdlib.h>

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

static int rec_cmp(const void *a, const void *b)
{
    const fmt_part_rec_t *x = a, *y = b;
    if (x->xu_id != y->xu_id)
        return x->xu_id < y->xu_id ? -1 : 1;
    if (x->part.start_ns != y->part.start_ns)
        return x->part.start_ns < y->part.start_ns ? -1 : 1;
    return (x->part.end_ns > y->part.end_ns) - (x->part.end_ns < y->part.end_ns);
}

int fmt_parts_attach(fmt_parts_t *ps, ompf_profile_t *p, int truncated, uint64_t *dropped,
                     char *msg, size_t msglen)
{
    if (!ps->n)
        return 0;
    /* The records sorted by XU id then start; each id's run found through
     * an id map, so that one pass over the XUs places them (no index of
     * every XU): memory and time per part record, not per XU. */
    qsort(ps->rec, ps->n, sizeof *ps->rec, rec_cmp);
    fmt_idmap_t first = {0};
    unsigned char *used = calloc(ps->n, 1);
    ompf_part_t *run = malloc(ps->n * sizeof *run);
    int rc = used && run && ps->n < UINT32_MAX ? 0 : OMPF_ENOMEM;
    for (size_t a = 0; a < ps->n && !rc; a++) {
        uint32_t old;
        if ((!a || ps->rec[a].xu_id != ps->rec[a - 1].xu_id) &&
            fmt_idmap_put(&first, ps->rec[a].xu_id, (uint32_t)a, &old))
            rc = OMPF_ENOMEM;
    }
    size_t nxu = ompf_xu_count(p);
    for (size_t i = 0; i < nxu && !rc; i++) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        uint32_t a = fmt_idmap_get(&first, x->id);
        if (a == UINT32_MAX || used[a])
            continue; /* no parts, or an id an earlier XU took */
        used[a] = 1;
        size_t b = a;
        while (b < ps->n && ps->rec[b].xu_id == x->id)
            run[b - a] = ps->rec[b].part, b++;
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
    fmt_idmap_free(&first);
    free(used);
    free(run);
    return rc;
}

void fmt_parts_free(fmt_parts_t *ps)
{
    free(ps->rec);
    *ps = (fmt_parts_t){0};
}
