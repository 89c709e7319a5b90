/* Moving a profile's labels into another profile's trie (profile.h,
 * "Shared labels"): combine reads many runs whose labels are mostly the
 * same, and holds each label once instead of once per run. */
#include <stdlib.h>

#include "profile_internal.h"

int ompf_label_map_into(const ompf_profile_t *p, ompf_profile_t *dst, uint32_t *map)
{
    if (!p || !dst || !map || p == dst)
        return OMPF_EINVAL;
    size_t nl = p->n_lab;
    map[0] = OMPF_LABEL_ROOT;
    int rc = 0, hit = 0;
    /* A node's parent precedes it (nodes are appended).  A lookup whose
     * guess (ompf__label_child_hint) misses hits random memory: unless the
     * last guess hit, prefetch the slots 16 nodes ahead and their nodes 8
     * ahead, whose parents are mapped by then. */
    for (size_t i = 1; i < nl && !rc; i++) {
        for (size_t d = 8, s = 1; d <= 16 && !hit; d += 8, s--) {
            size_t a = i + d;
            uint32_t pa = a < nl ? p->lab[a].parent : OMPF_NONE32;
            if (pa < i)
                ompf_label_prefetch(dst, map[pa], p->lab[a].comp, (int)s);
        }
        uint32_t par = p->lab[i].parent;
        rc = par < i ? ompf__label_child_hint(dst, map[par], p->lab[i].comp, map[i - 1] + 1,
                                              &map[i], &hit)
                     : OMPF_EFORMAT;
    }
    return rc;
}

int ompf_profile_move_labels(ompf_profile_t *p, ompf_profile_t *space)
{
    if (!p || !space || p == space || p->label_space)
        return OMPF_EINVAL;
    uint32_t *m = malloc((p->n_lab ? p->n_lab : 1) * sizeof *m);
    if (!m)
        return OMPF_ENOMEM;
    int rc = ompf_label_map_into(p, space, m);
    if (rc) {
        free(m);
        return rc;
    }
    for (size_t i = 0; i < p->n_xu; i++) {
        uint32_t *l = p->lean ? &p->lx_label[i] : &p->xu[i].label;
        *l = m[*l];
    }
    free(m);
    ompf__label_free(p);
    if (ompf__label_init(p))
        return OMPF_ENOMEM;
    p->label_space = space;
    return 0;
}

const ompf_profile_t *ompf_profile_label_space(const ompf_profile_t *p)
{
    return p && p->label_space ? p->label_space : p;
}

void ompf_label_drop_index(ompf_profile_t *p)
{
    if (p)
        ompf__label_drop_hash(p);
}
