/* Lean profiles (profile.h, "Lean profiles"): XUs held as a few columns
 * instead of 80-byte records, and strided views of XU fields that work on
 * lean and full profiles alike. */
#include <stddef.h>
#include <stdlib.h>

#include "ompfuse/file.h"
#include "profile_internal.h"

int ompf__lean_set(ompf_profile_t *p, unsigned flags)
{
    if (!p || p->n_xu || p->cap_xu || !(flags & OMPF_LEAN))
        return OMPF_EINVAL;
    p->lean = flags;
    return 0;
}

static int grow(void **a, size_t n, size_t elem)
{
    void *q = realloc(*a, n * elem);
    if (!q)
        return OMPF_ENOMEM;
    *a = q;
    return 0;
}

/* Room for need XUs in every column: the id column grows by ompf__grow's
 * rule, the others follow its capacity. */
int ompf__lean_reserve(ompf_profile_t *p, size_t need)
{
    size_t n = p->cap_xu;
    if (ompf__grow((void **)&p->lx_id, &n, need, sizeof *p->lx_id))
        return OMPF_ENOMEM;
    if (n == p->cap_xu)
        return 0;
    if (grow((void **)&p->lx_type, n, sizeof *p->lx_type) ||
        grow((void **)&p->lx_label, n, sizeof *p->lx_label) ||
        ((p->lean & (OMPF_LEAN_START | OMPF_LEAN_TIMES)) &&
         grow((void **)&p->lx_start, n, sizeof *p->lx_start)) ||
        ((p->lean & OMPF_LEAN_TIMES) && grow((void **)&p->lx_end, n, sizeof *p->lx_end)) ||
        (p->pk_open && ompf__pack_grow(p, n)))
        return OMPF_ENOMEM;
    p->cap_xu = n;
    return 0;
}

void ompf__lean_store(ompf_profile_t *p, size_t i, const ompf_xu_t *xu)
{
    p->lx_id[i] = xu->id;
    p->lx_type[i] = xu->type;
    p->lx_label[i] = xu->label;
    if (p->lx_start)
        p->lx_start[i] = xu->start_ns;
    if (p->lx_end)
        p->lx_end[i] = xu->end_ns;
}

void ompf__lean_free(ompf_profile_t *p)
{
    free(p->lx_id);
    free(p->lx_type);
    free(p->lx_label);
    free(p->lx_start);
    free(p->lx_end);
    free(p->pk);
    free(p->pk_new);
    free(p->pk_at);
}

int ompf_profile_lean_narrow(ompf_profile_t *p, unsigned flags)
{
    const unsigned times = OMPF_LEAN_START | OMPF_LEAN_TIMES;
    if (!p || !p->lean || (p->lean & OMPF_LEAN_PACKED) || !(flags & OMPF_LEAN) ||
        (flags & ~(OMPF_LEAN | times | OMPF_LEAN_NO_TYPE)) ||
        ((p->lean & OMPF_LEAN_NO_TYPE) && !(flags & OMPF_LEAN_NO_TYPE)))
        return OMPF_EINVAL;
    int start = (flags & times) != 0, end = (flags & OMPF_LEAN_TIMES) != 0;
    if ((start && !(p->lean & times)) || (end && !(p->lean & OMPF_LEAN_TIMES)))
        return OMPF_EINVAL; /* a column it does not have */
    if (!end) {
        free(p->lx_end);
        p->lx_end = NULL;
    }
    if (!start) {
        free(p->lx_start);
        p->lx_start = NULL;
    }
    if (flags & OMPF_LEAN_NO_TYPE) {
        free(p->lx_type);
        p->lx_type = NULL;
    }
    p->lean = flags;
    return 0;
}

unsigned ompf_profile_lean(const ompf_profile_t *p)
{
    return p ? p->lean : 0;
}

/* ---- views ----------------------------------------------------------------- */

#define XU_STRIDE(T) (sizeof(ompf_xu_t) / sizeof(T))

ompf_u32_view_t ompf_xu_view_u32(const ompf_profile_t *p, ompf_xu_field_t f)
{
    ompf_u32_view_t v = {NULL, 0};
    if (!p || (!p->xu && !p->lean))
        return v;
    if (p->lean) {
        v.base = f == OMPF_XU_TYPE ? p->lx_type : f == OMPF_XU_LABEL ? p->lx_label : NULL;
        v.stride = v.base ? 1 : 0;
        return v;
    }
    _Static_assert(sizeof(ompf_xu_t) % sizeof(uint64_t) == 0, "views step by whole records");
    if (f == OMPF_XU_TYPE)
        v.base = &p->xu[0].type;
    else if (f == OMPF_XU_LABEL)
        v.base = &p->xu[0].label;
    v.stride = v.base ? XU_STRIDE(uint32_t) : 0;
    return v;
}

ompf_u64_view_t ompf_xu_view_u64(const ompf_profile_t *p, ompf_xu_field_t f)
{
    ompf_u64_view_t v = {NULL, 0};
    if (!p || (!p->xu && !p->lean))
        return v;
    if (p->lean) {
        v.base = f == OMPF_XU_ID      ? p->lx_id
                 : f == OMPF_XU_START ? p->lx_start
                 : f == OMPF_XU_END   ? p->lx_end
                                      : NULL;
        v.stride = v.base ? 1 : 0;
        return v;
    }
    if (f == OMPF_XU_ID)
        v.base = &p->xu[0].id;
    else if (f == OMPF_XU_START)
        v.base = &p->xu[0].start_ns;
    else if (f == OMPF_XU_END)
        v.base = &p->xu[0].end_ns;
    v.stride = v.base ? XU_STRIDE(uint64_t) : 0;
    return v;
}
