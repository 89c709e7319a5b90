/* Resolution after pass 1, and the salvage of truncated files: event
 * sources, thread records (lost ones become empty threads), then the
 * labels (file_read_labels.c). */
#include <stdio.h>
#include <stdlib.h>

#include "file_read.h"
#include "profile_internal.h"

/* ---- resolution ------------------------------------------------------- */

static int cmp_thread(const void *a, const void *b)
{
    const thread_rec_t *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int build_threads(rd_t *r)
{
    size_t nev = ompf_event_count(r->p);
    if (r->n_th)
        qsort(r->th, r->n_th, sizeof *r->th, cmp_thread);
    for (size_t i = 0; i < r->n_th; i++) {
        const thread_rec_t *t = &r->th[i];
        if (i > 0 && t->index == r->th[i - 1].index)
            return rd_fail(r, OMPF_EFORMAT, "thread index %llu is recorded twice; " MALFORMED,
                        (unsigned long long)t->index);
        if (t->index >= OMPF_MAX_THREADS)
            return rd_fail(r, OMPF_ERANGE, "thread index %llu is not below the limit "
                        "OMPF_MAX_THREADS = %u (docs/format.md, Limits)",
                        (unsigned long long)t->index, OMPF_MAX_THREADS);
        if (t->index >= r->n_th + FMT_MAX_SALVAGE_THREADS)
            return rd_fail(r, OMPF_ERANGE, "thread index %llu is out of range (%zu thread "
                        "records); " MALFORMED, (unsigned long long)t->index, r->n_th);
        /* A thread whose record was lost (truncation, or a writer that could
         * not profile it) gets an empty record: indices are positions. */
        while (ompf_thread_count(r->p) < t->index) {
            uint32_t idx;
            if (ompf_thread_add(r->p, -1, &idx))
                return rd_oom(r);
        }
        uint32_t idx;
        if (ompf_thread_add(r->p, t->os_tid, &idx))
            return rd_oom(r);
        ompf_thread_t *pt = ompf_thread_get(r->p, idx);
        for (size_t e = 0; e < nev; e++) {
            pt->total[e] = t->vals[e];
            pt->gap[e] = t->vals[nev + e];
            pt->enabled_ns[e] = t->vals[2 * nev + e];
            pt->running_ns[e] = t->vals[3 * nev + e];
        }
    }
    return 0;
}

int rd_resolve(rd_t *r)
{
    r->chunk_type = 0;
    size_t nev = ompf_event_count(r->p), nsrc = ompf_source_count(r->p);
    for (size_t e = 0; e < nev; e++) {
        int32_t s = r->ev_source[e];
        if (s >= 0 && (size_t)s >= nsrc && r->truncated)
            s = -1; /* the SOURCES chunk was lost with the tail */
        if (s >= 0 && (size_t)s >= nsrc)
            return rd_fail(r, OMPF_ERANGE, "event '%s' refers to source %d but the profile has "
                        "%zu sources; " MALFORMED, ompf_event_get(r->p, (uint32_t)e)->name, s,
                        nsrc);
        if (ompf_event_set_source(r->p, (uint32_t)e, s))
            return rd_fail(r, OMPF_EFORMAT, "event '%s': source %d rejected",
                        ompf_event_get(r->p, (uint32_t)e)->name, s);
    }
    int rc = build_threads(r);
    if (!rc)
        rc = rd_resolve_labels(r);
    return rc;
}
