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
 * a common ancestor is found in O(log depth) steps.
 *
 * Because the jump's depth is a function of the depth (jd[], one entry per
 * level), the walk keeps the depth in a variable, and the table holds the
 * jumps alone: 4 bytes a union node, where parent, depth and the jump's
 * depth beside it were 16 (365 MB at BC's peak on fib -n 33's runs, 22.8
 * million union labels).  Parents come from the trie's nodes (a view). */
#include "fz.h"

struct fz_anc {
    uint32_t *jump;     /* per union node */
    uint32_t *jd;       /* per depth: the depth its nodes jump to */
    size_t n_depth;
    ompf_u32_view_t par, dep; /* the trie's parents and depths */
};

static inline uint32_t par_of(const fz_anc_t *a, uint32_t x)
{
    return a->par.base[x * a->par.stride];
}

static inline uint32_t dep_of(const fz_anc_t *a, uint32_t x)
{
    return a->dep.base[x * a->dep.stride];
}

int fz_lca_build(fz_ctx_t *c)
{
    size_t n = ompf_label_count(c->ut);
    if (n == 0 || n >= FZ_NONE)
        return 0;
    fz_anc_t *a = calloc(1, sizeof *a);
    if (!a)
        return OMPF_ENOMEM;
    a->par = ompf_label_view_u32(c->ut, OMPF_LABEL_PARENT);
    a->dep = ompf_label_view_u32(c->ut, OMPF_LABEL_DEPTH);
    uint32_t maxd = 0;
    for (size_t v = 1; v < n; v++) {
        if (par_of(a, (uint32_t)v) >= v) { /* not in parent-first order: walk the chains */
            free(a);
            return 0;
        }
        if (dep_of(a, (uint32_t)v) > maxd)
            maxd = dep_of(a, (uint32_t)v);
    }
    a->jump = malloc(n * sizeof *a->jump);
    a->jd = malloc(((size_t)maxd + 1) * sizeof *a->jd);
    if (!a->jump || !a->jd) {
        free(a->jump);
        free(a->jd);
        free(a);
        return OMPF_ENOMEM;
    }
    a->n_depth = (size_t)maxd + 1;
    /* depth d's jump: its parent's (d - 1) jump's jump when the parent's two
     * jumps are equally long, else the parent */
    a->jd[0] = 0;
    for (size_t d = 1; d <= maxd; d++) {
        uint32_t p = (uint32_t)d - 1, j = a->jd[p], jj = a->jd[j];
        a->jd[d] = p - j == j - jj ? jj : p;
    }
    a->jump[0] = 0; /* the root is its own jump */
    for (size_t v = 1; v < n; v++) {
        uint32_t p = par_of(a, (uint32_t)v), d = dep_of(a, (uint32_t)v);
        a->jump[v] = a->jd[d] == d - 1 ? p : a->jump[a->jump[p]];
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
    const uint32_t *J = a->jump, *jd = a->jd;
    uint32_t dx = dep_of(a, x), dy = dep_of(a, y);
    if (dx < dy) {
        uint32_t t = x;
        x = y;
        y = t;
        t = dx;
        dx = dy;
        dy = t;
    }
    while (dx > dy) {
        if (jd[dx] >= dy) {
            x = J[x];
            dx = jd[dx];
        } else {
            x = par_of(a, x);
            dx--;
        }
    }
    while (x != y) {
        if (J[x] != J[y]) {
            x = J[x];
            y = J[y];
        } else {
            x = par_of(a, x);
            y = par_of(a, y);
        }
    }
    return x;
}

void fz_lca_free(fz_ctx_t *c)
{
    if (c->anc) {
        free(c->anc->jump);
        free(c->anc->jd);
        free(c->anc);
    }
    c->anc = NULL;
    c->n_anc = 0;
}

void fz_lca_prefetch(const fz_ctx_t *c, uint32_t x)
{
    if (c->anc && x < c->n_anc) {
        __builtin_prefetch(&c->anc->jump[x]);
        __builtin_prefetch(&c->anc->dep.base[x * c->anc->dep.stride]);
    }
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
