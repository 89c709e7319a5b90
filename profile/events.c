/* Events of the in-memory profile: a table with a hash of the names, so
 * that adding n events (a file or CSV header declaring them) costs O(n)
 * name compares, not O(n^2). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile_internal.h"

/* ---- events ------------------------------------------------------------- */

static size_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)(h ^ (h >> 29));
}

/* Slot of name in the event hash: its entry, or the empty slot where it
 * belongs. */
static size_t ev_slot(const ompf_profile_t *p, const char *name)
{
    size_t m = p->ev_hash_cap - 1, i = name_hash(name) & m;
    while (p->ev_hash[i] && strcmp(p->ev[p->ev_hash[i] - 1].name, name))
        i = (i + 1) & m;
    return i;
}

/* Makes room for one more event in the hash (rebuilt when it grows). */
static int ev_hash_reserve(ompf_profile_t *p)
{
    if ((p->n_ev + 1) * 2 <= p->ev_hash_cap)
        return 0;
    size_t cap = p->ev_hash_cap ? p->ev_hash_cap * 2 : 64;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return OMPF_ENOMEM;
    free(p->ev_hash);
    p->ev_hash = h;
    p->ev_hash_cap = cap;
    for (size_t e = 0; e < p->n_ev; e++)
        h[ev_slot(p, p->ev[e].name)] = (uint32_t)e + 1;
    return 0;
}

int ompf_event_add(ompf_profile_t *p, const ompf_event_t *ev, uint32_t *idx)
{
    if (!p || !ev || !ev->name || !*ev->name)
        return OMPF_EINVAL;
    /* Values are stored row-major with a fixed row length. */
    if (p->n_xu || p->n_th)
        return OMPF_EINVAL;
    if (ompf_event_find(p, ev->name) >= 0)
        return OMPF_EINVAL;
    if (p->n_ev >= UINT32_MAX - 1)
        return OMPF_ERANGE;
    if (ompf__grow((void **)&p->ev, &p->cap_ev, p->n_ev + 1, sizeof *p->ev) ||
        ev_hash_reserve(p))
        return OMPF_ENOMEM;
    ompf_event_t e = *ev;
    e.name = ompf__strdup(ev->name);
    e.reason = ompf__strdup(ev->reason);
    if (!e.name || (ev->reason && !e.reason)) {
        ompf__free_event(&e);
        return OMPF_ENOMEM;
    }
    p->ev[p->n_ev] = e;
    p->ev_hash[ev_slot(p, e.name)] = (uint32_t)p->n_ev + 1;
    if (idx)
        *idx = (uint32_t)p->n_ev;
    p->n_ev++;
    return 0;
}

size_t ompf_event_count(const ompf_profile_t *p)
{
    return p ? p->n_ev : 0;
}

const ompf_event_t *ompf_event_get(const ompf_profile_t *p, uint32_t idx)
{
    return (p && idx < p->n_ev) ? &p->ev[idx] : NULL;
}

int ompf_event_find(const ompf_profile_t *p, const char *name)
{
    if (!p || !name || !p->ev_hash_cap)
        return -1;
    uint32_t e = p->ev_hash[ev_slot(p, name)];
    return e ? (int)(e - 1) : -1;
}

int ompf_event_set_status(ompf_profile_t *p, uint32_t idx, int32_t status,
                          const char *reason)
{
    if (!p || idx >= p->n_ev || status < 0 || status >= OMPF_EV_STATUS_COUNT)
        return OMPF_EINVAL;
    char *r = ompf__strdup(reason);
    if (reason && !r)
        return OMPF_ENOMEM;
    free((char *)p->ev[idx].reason);
    p->ev[idx].reason = r;
    p->ev[idx].status = status;
    return 0;
}

int ompf_event_set_source(ompf_profile_t *p, uint32_t idx, int32_t source)
{
    if (!p || idx >= p->n_ev)
        return OMPF_EINVAL;
    p->ev[idx].source = source;
    return 0;
}
