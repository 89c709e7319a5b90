/* The common prefix of two union labels, their lowest common ancestor in
 * the union trie: BC names each pair by it, and CTC's and random's fused
 * XUs are named by that of their members.  Walking both parent chains
 * costs a dependent load per level; a task program's labels are as deep
 * as its task tree (27 levels for fib(27)), and there the walk took 18 %
 * of BC and 30 % of BC without labels.  Each node gets one jump pointer
 * (Myers' applicative random-access stacks, 1983): a node's jump goes to
 * its parent's jump's jump when the parent's two jumps have equal lengths
 * and to the parent otherwise.  The jump's depth then depends on the depth
 * alone, so two nodes at one depth jump to one depth, and an ancestor or
 * a common ancestor is found in O(log depth) steps. */
#include "fz.h"

struct fz_anc {
    uint32_t parent, jump, depth, jdepth; /* one cache line per step */
};

int fz_lca_build(fz_ctx_t *c)
{
    size_t n = ompf_label_count(c->ut);
    if (n == 0 || n >= FZ_NONE)
        return 0;
    fz_anc_t *a = malloc(n * sizeof *a);
    if (!a)
        return OMPF_ENOMEM;
    a[0] = (fz_anc_t){0, 0, 0, 0}; /* the root is its own parent and jump */
    for (size_t v = 1; v < n; v++) {
        uint32_t p = ompf_label_parent(c->ut, (uint32_t)v);
        if (p >= v) { /* a trie not in parent-first order: walk the chains */
            free(a);
            return 0;
        }
        uint32_t j = a[p].jump, jj = a[j].jump;
        uint32_t jump = a[p].depth - a[j].depth == a[j].depth - a[jj].depth ? jj : p;
        a[v] = (fz_anc_t){p, jump, a[p].depth + 1, a[jump].depth};
    }
    c->anc = a;
    c->n_anc = n;
    return 0;
}

uint32_t fz_lca(const fz_ctx_t *c, uint32_t x, uint32_t y)
{
    const fz_anc_t *a = c->anc;
    if (!a || x >= c->n_anc || y >= c->n_anc)
        return ompf_label_common(c->ut, x, y);
    if (a[x].depth < a[y].depth) {
        uint32_t t = x;
        x = y;
        y = t;
    }
    uint32_t d = a[y].depth;
    while (a[x].depth > d)
        x = a[x].jdepth >= d ? a[x].jump : a[x].parent;
    while (x != y) {
        if (a[x].jump != a[y].jump) {
            x = a[x].jump;
            y = a[y].jump;
        } else {
            x = a[x].parent;
            y = a[y].parent;
        }
    }
    return x;
}

void fz_lca_free(fz_ctx_t *c)
{
    free(c->anc);
    c->anc = NULL;
    c->n_anc = 0;
}

void fz_lca_prefetch(const fz_ctx_t *c, uint32_t x)
{
    if (c->anc && x < c->n_anc)
        __builtin_prefetch(&c->anc[x]);
}

/* See fz.h.  A walk up both: CTC's ties are rare, and a rank table of
 * every union node would be 4 bytes a label at CTC's peak. */
int fz_label_before(const ompf_profile_t *u, uint32_t x, uint32_t y)
{
    uint32_t dx = ompf_label_depth(u, x), dy = ompf_label_depth(u, y);
    for (; dx > dy; dx--) {
        uint32_t p = ompf_label_parent(u, x);
        if (p == y)
            return 0; /* y is an ancestor of x */
        x = p;
    }
    for (; dy > dx; dy--) {
        uint32_t p = ompf_label_parent(u, y);
        if (p == x)
            return 1;
        y = p;
    }
    if (x == y)
        return 0;
    for (uint32_t px, py; (px = ompf_label_parent(u, x)) != (py = ompf_label_parent(u, y));) {
        x = px;
        y = py;
    }
    return ompf_label_component(u, x) < ompf_label_component(u, y);
}
