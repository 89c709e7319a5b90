/* The parts of XUs (profile.h, "Parts"): kept apart from the XU records,
 * since most XUs run in one part and most profiles record none. */
#include <stdlib.h>
#include <string.h>

#include "ompfuse/file.h"
#include "profile_internal.h"

int ompf_xu_set_parts(ompf_profile_t *p, size_t i, const ompf_part_t *parts, uint32_t n)
{
    if (!p || (n && !parts))
        return OMPF_EINVAL;
    if (i >= p->n_xu || n > OMPF_MAX_PARTS_PER_XU)
        return OMPF_ERANGE;
    if (p->lean) /* a lean profile keeps no parts (profile.h) */
        return OMPF_EINVAL;
    if (!n) {
        if (i < p->n_part_at)
            p->part_at[i] = 0;
        return 0;
    }
    if (i >= p->n_part_at && ompf__part_at_all(p))
        return OMPF_ENOMEM;
    /* a second call for the same XU appends anew (rare: the old ones stay
       unused) */
    if (p->n_part + n < p->n_part ||
        ompf__grow((void **)&p->part, &p->cap_part, p->n_part + n, sizeof *p->part))
        return OMPF_ENOMEM;
    memcpy(p->part + p->n_part, parts, n * sizeof *parts);
    p->part_at[i] = p->n_part + 1;
    p->n_part += n;
    p->xu[i].parts = n;
    return 0;
}

int ompf__part_at_all(ompf_profile_t *p)
{
    if (p->n_part_at < p->n_xu) {
        if (ompf__grow((void **)&p->part_at, &p->cap_part_at, p->n_xu, sizeof *p->part_at))
            return OMPF_ENOMEM;
        memset(p->part_at + p->n_part_at, 0, (p->n_xu - p->n_part_at) * sizeof *p->part_at);
        p->n_part_at = p->n_xu;
    }
    return 0;
}

int ompf__parts_append(ompf_profile_t *p, size_t n)
{
    if (p->n_part + n < p->n_part)
        return OMPF_ENOMEM;
    if (p->n_part + n > p->cap_part) {
        ompf_part_t *a = realloc(p->part, (p->n_part + n) * sizeof *a);
        if (!a)
            return OMPF_ENOMEM;
        p->part = a;
        p->cap_part = p->n_part + n;
    }
    p->n_part += n;
    return 0;
}

int ompf_xu_has_parts(const ompf_profile_t *p, size_t i)
{
    if (p && p->pk && !p->pk_open && i < p->n_xu)
        return ompf__packed_has_parts(p, i);
    return p && i < p->n_part_at && p->part_at[i] && i < p->n_xu;
}

const ompf_part_t *ompf_xu_parts(const ompf_profile_t *p, size_t i, uint32_t *n,
                                 ompf_part_t *one)
{
    if (!p || i >= p->n_xu || p->lean) {
        *n = 0;
        return NULL;
    }
    if (ompf_xu_has_parts(p, i)) {
        *n = p->xu[i].parts;
        return p->part + p->part_at[i] - 1;
    }
    const ompf_xu_t *x = &p->xu[i];
    *one = (ompf_part_t){x->thread, x->start_ns, x->end_ns};
    *n = 1;
    return one;
}

size_t ompf_part_count(const ompf_profile_t *p)
{
    size_t n = 0;
    if (p && p->pk && !p->pk_open) { /* packed: the records say */
        for (size_t i = 0; i < p->n_xu; i++)
            if (ompf__packed_has_parts(p, i))
                n += ompf__xu_parts_field(p, i);
        return n;
    }
    for (size_t i = 0; p && i < p->n_part_at && i < p->n_xu; i++)
        if (p->part_at[i])
            n += ompf__xu_parts_field(p, i);
    return n;
}
