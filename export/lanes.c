/* Lanes of nested XU spans per thread (see lanes.h). */
#include <stdio.h>
#include <stdlib.h>

#include "lanes.h"

typedef struct span {
    uint64_t start, end;
    size_t sl; /* slice */
    int multi; /* an XU that ran in several parts drawn as one span */
} span_t;

static int span_cmp(const void *a, const void *b)
{
    const span_t *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* the enclosing one first */
    return x->sl < y->sl ? -1 : x->sl > y->sl;
}

/* The slices: every part of every XU (ompf_xu_parts). */
static int slices_build(const ompf_profile_t *p, ompf_lanes_t *l)
{
    size_t nxu = ompf_xu_count(p), n = 0;
    l->first = malloc((nxu + 1) * sizeof *l->first);
    if (!l->first)
        return OMPF_ENOMEM;
    for (size_t i = 0; i < nxu; i++) {
        l->first[i] = n;
        n += ompf_xu_has_parts(p, i) ? ompf_xu_get(p, i)->parts : 1;
    }
    l->first[nxu] = l->nslices = n;
    l->xu = malloc((n ? n : 1) * sizeof *l->xu);
    l->part = malloc((n ? n : 1) * sizeof *l->part);
    if (!l->xu || !l->part)
        return OMPF_ENOMEM;
    for (size_t i = 0; i < nxu; i++) {
        uint32_t np;
        ompf_part_t one;
        const ompf_part_t *pt = ompf_xu_parts(p, i, &np, &one);
        for (uint32_t k = 0; k < np; k++) {
            l->xu[l->first[i] + k] = i;
            l->part[l->first[i] + k] = pt[k];
            if (pt[k].end_ns < pt[k].start_ns)
                l->part[l->first[i] + k].end_ns = pt[k].start_ns;
        }
    }
    return 0;
}

/* Spans grouped by key (thread or track), each group sorted; starts from
 * start[] when given, else the part's start. */
static int group_spans(const ompf_profile_t *p, const ompf_lanes_t *l, uint32_t ngroups,
                       const uint32_t *key, const uint64_t *start, size_t *first, span_t *sp)
{
    size_t n = l->nslices;
    for (size_t i = 0; i <= ngroups; i++)
        first[i] = 0;
    for (size_t i = 0; i < n; i++)
        first[(key ? key[i] : l->part[i].thread) + 1]++;
    for (uint32_t g = 0; g < ngroups; g++)
        first[g + 1] += first[g];
    size_t *fill = calloc(ngroups ? ngroups : 1, sizeof *fill);
    if (!fill)
        return OMPF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const ompf_part_t *pt = &l->part[i];
        uint32_t g = key ? key[i] : pt->thread;
        uint64_t st = start ? start[i] : pt->start_ns;
        int multi = ompf_xu_get(p, l->xu[i])->parts > 1 && !ompf_xu_has_parts(p, l->xu[i]);
        sp[first[g] + fill[g]++] = (span_t){st, pt->end_ns < st ? st : pt->end_ns, i, multi};
    }
    free(fill);
    for (uint32_t g = 0; g < ngroups; g++)
        qsort(sp + first[g], first[g + 1] - first[g], sizeof *sp, span_cmp);
    return 0;
}

/* Open spans of one lane: a stack of ends (and whether each ran in parts). */
typedef struct lane {
    uint64_t *end;
    unsigned char *multi;
    size_t n, cap;
} lane_t;

static int lane_push(lane_t *l, uint64_t end, int multi)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        uint64_t *e = realloc(l->end, cap * sizeof *e);
        if (e)
            l->end = e;
        unsigned char *m = e ? realloc(l->multi, cap) : NULL;
        if (!m)
            return OMPF_ENOMEM;
        l->multi = m, l->cap = cap;
    }
    l->multi[l->n] = (unsigned char)multi;
    l->end[l->n++] = end;
    return 0;
}

/* Lane of each span of one thread; *nl grows to the lanes used.  A
 * one-part span that starts inside a one-part one and ends after it
 * (the boundary-read overlap, lanes.h) is drawn from that one's end. */
static int assign(span_t *sp, size_t n, uint32_t *lane_of_sl, uint64_t *start,
                  lane_t **lanes, uint32_t *nl, uint32_t *cap)
{
    for (uint32_t k = 0; k < *nl; k++)
        (*lanes)[k].n = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = 0;
        for (;; k++) {
            if (k == *nl) {
                if (*nl == *cap) {
                    uint32_t c = *cap ? 2 * *cap : 4;
                    lane_t *nlns = realloc(*lanes, c * sizeof *nlns);
                    if (!nlns)
                        return OMPF_ENOMEM;
                    for (uint32_t j = *cap; j < c; j++)
                        nlns[j] = (lane_t){0};
                    *lanes = nlns, *cap = c;
                }
                (*lanes)[(*nl)++].n = 0;
            }
            lane_t *l = &(*lanes)[k];
            while (l->n && l->end[l->n - 1] <= sp[i].start)
                l->n--;
            if (k == 0 && l->n && !sp[i].multi && !l->multi[l->n - 1] &&
                l->end[l->n - 1] < sp[i].end) {
                sp[i].start = start[sp[i].sl] = l->end[l->n - 1];
                while (l->n && l->end[l->n - 1] <= sp[i].start)
                    l->n--;
            }
            if (!l->n || l->end[l->n - 1] >= sp[i].end)
                break; /* after the open spans, or inside the innermost */
        }
        if (lane_push(&(*lanes)[k], sp[i].end, sp[i].multi))
            return OMPF_ENOMEM;
        lane_of_sl[sp[i].sl] = k;
    }
    return 0;
}

int ompf_lanes_build(const ompf_profile_t *p, ompf_lanes_t *l)
{
    *l = (ompf_lanes_t){0};
    int rc = slices_build(p, l);
    size_t ns = l->nslices;
    uint32_t nth = (uint32_t)ompf_thread_count(p);
    for (size_t i = 0; i < ns && !rc; i++)
        if (l->part[i].thread >= nth)
            nth = l->part[i].thread + 1;
    if (!nth)
        nth = 1; /* an empty profile still gets a track: an OTF2 archive
                    without locations cannot be read */
    size_t *first = calloc((size_t)nth + 1, sizeof *first);
    span_t *sp = malloc((ns ? ns : 1) * sizeof *sp);
    uint32_t *lane = malloc((ns ? ns : 1) * sizeof *lane);
    uint32_t *nlanes = calloc(nth ? nth : 1, sizeof *nlanes);
    l->start = malloc((ns ? ns : 1) * sizeof *l->start);
    lane_t *lanes = NULL;
    uint32_t cap = 0;
    if (!rc)
        rc = !first || !sp || !lane || !nlanes || !l->start
                 ? OMPF_ENOMEM
                 : group_spans(p, l, nth, NULL, NULL, first, sp);
    for (size_t i = 0; i < ns && !rc; i++)
        l->start[i] = l->part[i].start_ns;
    for (uint32_t t = 0; t < nth && !rc; t++) {
        nlanes[t] = 0;
        rc = assign(sp + first[t], first[t + 1] - first[t], lane, l->start, &lanes, &nlanes[t],
                    &cap);
        if (!nlanes[t])
            nlanes[t] = 1;
    }
    for (uint32_t k = 0; k < cap; k++)
        free(lanes[k].end), free(lanes[k].multi);
    free(lanes);
    free(sp);
    free(first);
    uint32_t ntracks = nth;
    for (uint32_t t = 0; t < nth && !rc; t++)
        ntracks += nlanes[t] - 1;
    l->nthreads = nth, l->ntracks = ntracks;
    l->track = lane;
    l->thread_of = rc ? NULL : malloc((ntracks ? ntracks : 1) * sizeof *l->thread_of);
    l->lane_of = rc ? NULL : malloc((ntracks ? ntracks : 1) * sizeof *l->lane_of);
    uint32_t *base = rc ? NULL : malloc((nth ? nth : 1) * sizeof *base);
    if (!rc && (!l->thread_of || !l->lane_of || !base))
        rc = OMPF_ENOMEM;
    if (!rc) {
        uint32_t next = nth;
        for (uint32_t t = 0; t < nth; t++) {
            l->thread_of[t] = t, l->lane_of[t] = 0;
            base[t] = next; /* extra lanes of thread t: base[t] .. */
            for (uint32_t k = 1; k < nlanes[t]; k++, next++)
                l->thread_of[next] = t, l->lane_of[next] = k;
        }
        for (size_t i = 0; i < ns; i++) {
            uint32_t t = l->part[i].thread;
            l->track[i] = l->track[i] ? base[t] + l->track[i] - 1 : t;
        }
    }
    free(base);
    free(nlanes);
    if (rc)
        ompf_lanes_free(l);
    return rc;
}

void ompf_lanes_free(ompf_lanes_t *l)
{
    free(l->first);
    free(l->xu);
    free(l->part);
    free(l->track);
    free(l->thread_of);
    free(l->lane_of);
    free(l->start);
    *l = (ompf_lanes_t){0};
}

int ompf_track_order_build(const ompf_profile_t *p, const ompf_lanes_t *l,
                           ompf_track_order_t *o)
{
    size_t ns = l->nslices;
    o->first = calloc((size_t)l->ntracks + 1, sizeof *o->first);
    o->order = malloc((ns ? ns : 1) * sizeof *o->order);
    span_t *sp = malloc((ns ? ns : 1) * sizeof *sp);
    int rc = !o->first || !o->order || !sp ? OMPF_ENOMEM
                                           : group_spans(p, l, l->ntracks, l->track, l->start,
                                                         o->first, sp);
    for (size_t i = 0; i < ns && !rc; i++)
        o->order[i] = sp[i].sl;
    free(sp);
    if (rc)
        ompf_track_order_free(o);
    return rc;
}

void ompf_track_order_free(ompf_track_order_t *o)
{
    free(o->first);
    free(o->order);
    o->first = NULL, o->order = NULL;
}

void ompf_track_name(char *buf, size_t len, uint32_t thread, int32_t os_tid, uint32_t lane)
{
    if (!lane)
        snprintf(buf, len, "thread %u (tid %d)", thread, os_tid);
    else
        snprintf(buf, len, "thread %u (tid %d) multi-part XUs, lane %u", thread, os_tid, lane);
}
