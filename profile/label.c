/* The label trie (docs/semantics.md, Labels): node 0 is the root "0"; every
 * other node adds one integer component to its parent's label.  Depth-first
 * order and common prefixes, which fusion needs, follow from the trie
 * directly. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ompfuse/file.h"
#include "profile_internal.h"

static uint64_t mix(uint64_t parent, uint64_t comp)
{
    /* splitmix64 finaliser over both keys: cheap and well spread. */
    uint64_t x = comp ^ (parent * 0x9e3779b97f4a7c15ull);
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static uint64_t slot_of(uint64_t h, uint32_t node)
{
    return (h & 0xffffffff00000000ull) | ((uint64_t)node + 1);
}

/* A node's key is (parent, component); while equal nodes are merged
 * (ompf__label_merge_equal), the parent is taken through canon, which maps
 * every node seen so far to the first node equal to it. */
static inline uint32_t key_parent(const ompf_profile_t *p, uint32_t node, const uint32_t *canon)
{
    uint32_t q = p->lab[node].parent;
    return canon ? canon[q] : q;
}

/* Inserts node into t.  An equal node there already: with canon, node
 * maps to it (canon[node]); without, returns 1. */
static int insert_node(const ompf_profile_t *p, uint64_t *t, size_t mask, uint32_t node,
                       uint64_t h, uint32_t *canon)
{
    uint64_t tag = h >> 32, comp = p->lab[node].comp;
    uint32_t kp = key_parent(p, node, canon);
    size_t i = h & mask;
    for (uint64_t v; (v = t[i]); i = (i + 1) & mask) {
        uint32_t a = (uint32_t)v - 1;
        if ((v >> 32) == tag && p->lab[a].comp == comp && key_parent(p, a, canon) == kp) {
            if (!canon)
                return 1;
            canon[node] = a;
            return 0;
        }
    }
    t[i] = slot_of(h, node);
    if (canon)
        canon[node] = node;
    return 0;
}

/* Inserts the m nodes list[] (ascending; NULL: nodes 1 .. m) into the
 * table t of cap slots.  Inserting 10^7 nodes one after the other writes
 * each at a random place of a table larger than the caches (reading a
 * file grew as N^1.27 above 10^6 labels for that); so large sets go
 * partition by partition: the nodes are first scattered by the high bits
 * of their home slot, then each partition's nodes are inserted into a
 * range of the table that stays in the cache.  Linear probing gives a
 * valid table in any insertion order, and a node still meets the equal
 * nodes before it (the scatter keeps the order within a partition).  The
 * nodes go in four rounds, so that the scattered copy holds a quarter of
 * them (3 bytes a node).  Without canon, returns 1 at the first node
 * equal to an earlier one (going on would make one long cluster of equal
 * keys); else 0, or OMPF_ENOMEM. */
static int fill_nodes(ompf_profile_t *p, uint64_t *t, size_t cap, const uint32_t *list,
                      size_t m, uint32_t *canon)
{
    size_t mask = cap - 1;
    unsigned bits = (unsigned)__builtin_ctzll(cap), pbits = bits > 15 ? bits - 15 : 0;
    if (pbits > 12)
        pbits = 12;
#define NODE_AT(k) (list ? list[k] : (uint32_t)(k) + 1)
#define HASH_OF(x) mix(key_parent(p, (x), canon), p->lab[(x)].comp)
    if (!pbits || m <= 65536) {
        for (size_t k = 0; k < m; k++) {
            uint32_t x = NODE_AT(k);
            if (insert_node(p, t, mask, x, HASH_OF(x), canon))
                return 1;
        }
        return 0;
    }
    size_t np = (size_t)1 << pbits, round = (m + 3) / 4;
    unsigned sh = bits - pbits;
    /* Mapped, not malloc'd: memory that must go back to the system when
     * freed (the heap would keep it in the peak RSS of every later step). */
    size_t blen = round * (sizeof(uint64_t) + sizeof(uint32_t));
    void *buf = mmap(NULL, blen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    size_t *at = malloc((np + 1) * sizeof *at);
    if (buf == MAP_FAILED || !at) {
        if (buf != MAP_FAILED)
            munmap(buf, blen);
        free(at);
        return OMPF_ENOMEM;
    }
    uint64_t *bh = buf;
    uint32_t *bn = (uint32_t *)(bh + round);
    int dup = 0;
    for (size_t lo = 0; lo < m && !dup; lo += round) {
        size_t hi = lo + round < m ? lo + round : m;
        memset(at, 0, (np + 1) * sizeof *at);
        for (size_t k = lo; k < hi; k++)
            at[((HASH_OF(NODE_AT(k)) & mask) >> sh) + 1]++;
        for (size_t q = 0; q < np; q++)
            at[q + 1] += at[q];
        for (size_t k = lo; k < hi; k++) {
            uint32_t x = NODE_AT(k);
            uint64_t h = HASH_OF(x);
            size_t j = at[(h & mask) >> sh]++;
            bh[j] = h;
            bn[j] = x;
        }
        for (size_t j = 0; j < hi - lo && !dup; j++)
            dup = insert_node(p, t, mask, bn[j], bh[j], canon);
    }
#undef NODE_AT
#undef HASH_OF
    munmap(buf, blen);
    free(at);
    return dup;
}

static int hash_fill(ompf_profile_t *p, uint64_t *t, size_t cap)
{
    return fill_nodes(p, t, cap, NULL, p->n_lab > 1 ? p->n_lab - 1 : 0, NULL);
}

static size_t cap_for(size_t n)
{
    size_t cap = 128;
    while (4 * n > 3 * cap)
        cap *= 2;
    return cap;
}

int ompf__label_merge_equal(ompf_profile_t *p, uint32_t *remap)
{
    size_t n = p->n_lab;
    uint32_t maxd = 0;
    for (size_t i = 1; i < n; i++)
        maxd = p->lab[i].depth > maxd ? p->lab[i].depth : maxd;
    /* The nodes by depth (ascending index within a depth): a level's keys
     * are final once the level above is merged. */
    size_t *at = calloc((size_t)maxd + 2, sizeof *at);
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    size_t cap = cap_for(n);
    uint64_t *t = calloc(cap, sizeof *t);
    int rc = !at || !order || !t ? OMPF_ENOMEM : 0;
    if (!rc) {
        for (size_t i = 1; i < n; i++)
            at[p->lab[i].depth + 1]++;
        for (uint32_t d = 0; d <= maxd; d++)
            at[d + 1] += at[d];
        for (size_t i = 1; i < n; i++)
            order[at[p->lab[i].depth]++] = (uint32_t)i;
        /* at[d] is now the end of depth d */
        remap[0] = 0;
        for (uint32_t d = 1; d <= maxd && !rc; d++)
            rc = fill_nodes(p, t, cap, order + at[d - 1], at[d] - at[d - 1], remap);
    }
    free(at);
    free(order);
    free(t);
    if (rc)
        return rc;
    /* Keep the first of equal nodes, in index order (parents come first,
     * so each parent's new index is known); remap[] becomes old -> new. */
    size_t j = 1;
    for (size_t i = 1; i < n; i++) {
        if (remap[i] != i) {
            remap[i] = remap[remap[i]];
            continue;
        }
        ompf__lnode_t x = p->lab[i];
        x.parent = remap[x.parent];
        p->lab[j] = x;
        remap[i] = (uint32_t)j++;
    }
    p->n_lab = j;
    ompf__label_drop_hash(p);
    /* Threads that name every label again leave most of the array unused
     * for the profile's lifetime: give it back when it halved. */
    if (2 * j < p->cap_lab) {
        ompf__lnode_t *l = realloc(p->lab, j * sizeof *l);
        if (l) {
            p->lab = l;
            p->cap_lab = j;
        }
    }
    return 0;
}

/* A new table of cap slots; 1 (and the old table kept) if two nodes are
 * equal, which only a reader's appended nodes can be. */
static int hash_resize(ompf_profile_t *p, size_t cap)
{
    uint64_t *t = calloc(cap, sizeof *t);
    int rc = t ? hash_fill(p, t, cap) : OMPF_ENOMEM;
    if (rc) {
        free(t);
        return rc;
    }
    free(p->lab_hash);
    p->lab_hash = t;
    p->hash_cap = cap;
    return 0;
}

/* Room for n nodes in the node array and the hash (at most 3/4 full). */
static int reserve(ompf_profile_t *p, size_t n)
{
    if (n > p->cap_lab &&
        ompf__grow((void **)&p->lab, &p->cap_lab, n, sizeof *p->lab))
        return OMPF_ENOMEM;
    /* powers of two from 128: never smaller than the table it has */
    size_t cap = cap_for(n) > p->hash_cap ? cap_for(n) : p->hash_cap;
    int rc = cap != p->hash_cap ? hash_resize(p, cap) : 0;
    return rc == 1 ? OMPF_EINVAL : rc; /* ompf_label_append added a child twice */
}

int ompf__label_init(ompf_profile_t *p)
{
    if (reserve(p, 64)) {
        ompf__label_free(p);
        return OMPF_ENOMEM;
    }
    p->lab[0] = (ompf__lnode_t){0, OMPF_NONE32, 0};
    p->n_lab = 1;
    return 0;
}

void ompf__label_free(ompf_profile_t *p)
{
    free(p->lab);
    free(p->lab_hash);
    p->lab = NULL;
    p->lab_hash = NULL;
    p->n_lab = p->cap_lab = p->hash_cap = 0;
}

void ompf__label_drop_hash(ompf_profile_t *p)
{
    free(p->lab_hash);
    p->lab_hash = NULL;
    p->hash_cap = 0;
}

int ompf_label_append(ompf_profile_t *p, uint32_t parent, uint64_t comp, uint32_t *node)
{
    if (!p || parent >= p->n_lab)
        return OMPF_EINVAL;
    if (p->n_lab >= UINT32_MAX - 2 || p->lab[parent].depth >= OMPF_MAX_LABEL_DEPTH)
        return OMPF_ERANGE;
    if (p->hash_cap)
        ompf__label_drop_hash(p); /* it would miss this node */
    if (p->n_lab + 1 > p->cap_lab &&
        ompf__grow((void **)&p->lab, &p->cap_lab, p->n_lab + 1, sizeof *p->lab))
        return OMPF_ENOMEM;
    uint32_t n = (uint32_t)p->n_lab++;
    p->lab[n] = (ompf__lnode_t){comp, parent, p->lab[parent].depth + 1};
    if (node)
        *node = n;
    return 0;
}

int ompf__label_index_unique(ompf_profile_t *p)
{
    return hash_resize(p, cap_for(p->n_lab));
}

int ompf_label_reserve(ompf_profile_t *p, size_t n)
{
    if (!p)
        return OMPF_EINVAL;
    return n >= UINT32_MAX - 2 ? OMPF_ERANGE : reserve(p, n);
}

void ompf_label_prefetch(const ompf_profile_t *p, uint32_t parent, uint64_t comp,
                         int stage)
{
    if (!p || !p->hash_cap)
        return;
    const uint64_t *s = &p->lab_hash[mix(parent, comp) & (p->hash_cap - 1)];
    if (!stage)
        __builtin_prefetch(s);
    else if (*s && (uint32_t)*s - 1 < p->n_lab)
        __builtin_prefetch(&p->lab[(uint32_t)*s - 1]);
}

int ompf_label_child(ompf_profile_t *p, uint32_t parent, uint64_t comp,
                     uint32_t *node)
{
    if (!p || parent >= p->n_lab)
        return OMPF_EINVAL;
    int rc = p->hash_cap ? 0 : reserve(p, p->n_lab + 1); /* dropped after reading */
    if (rc)
        return rc;
    size_t mask = p->hash_cap - 1;
    uint64_t h = mix(parent, comp), tag = h >> 32;
    size_t i = h & mask;
    for (uint64_t v; (v = p->lab_hash[i]); i = (i + 1) & mask) {
        const ompf__lnode_t *q = &p->lab[(uint32_t)v - 1];
        if ((v >> 32) == tag && q->parent == parent && q->comp == comp) {
            if (node)
                *node = (uint32_t)v - 1;
            return 0;
        }
    }
    if (p->n_lab >= UINT32_MAX - 2 || p->lab[parent].depth >= OMPF_MAX_LABEL_DEPTH)
        return OMPF_ERANGE;
    if (p->n_lab + 1 > p->cap_lab || 4 * (p->n_lab + 1) > 3 * p->hash_cap) {
        if ((rc = reserve(p, p->n_lab + 1)))
            return rc;
        /* a new table: find the free slot again */
        mask = p->hash_cap - 1;
        for (i = h & mask; p->lab_hash[i]; i = (i + 1) & mask)
            ;
    }
    uint32_t n = (uint32_t)p->n_lab++;
    p->lab[n] = (ompf__lnode_t){comp, parent, p->lab[parent].depth + 1};
    p->lab_hash[i] = slot_of(h, n);
    if (node)
        *node = n;
    return 0;
}

size_t ompf_label_count(const ompf_profile_t *p)
{
    return p ? p->n_lab : 0;
}

uint32_t ompf_label_parent(const ompf_profile_t *p, uint32_t node)
{
    return (p && node < p->n_lab) ? p->lab[node].parent : OMPF_NONE32;
}

ompf_u32_view_t ompf_label_view_u32(const ompf_profile_t *p, ompf_label_field_t f)
{
    ompf_u32_view_t v = {NULL, 0};
    if (!p || !p->lab || (f != OMPF_LABEL_PARENT && f != OMPF_LABEL_DEPTH))
        return v;
    _Static_assert(sizeof(ompf__lnode_t) % sizeof(uint32_t) == 0, "views step by nodes");
    v.base = f == OMPF_LABEL_PARENT ? &p->lab[0].parent : &p->lab[0].depth;
    v.stride = sizeof(ompf__lnode_t) / sizeof(uint32_t);
    return v;
}

uint64_t ompf_label_component(const ompf_profile_t *p, uint32_t node)
{
    return (p && node < p->n_lab) ? p->lab[node].comp : 0;
}

uint32_t ompf_label_depth(const ompf_profile_t *p, uint32_t node)
{
    return (p && node < p->n_lab) ? p->lab[node].depth : 0;
}

/* Components of node's label from the root down (excluding the root's 0);
 * returns the count, using stack storage when small. */
static size_t path_of(const ompf_profile_t *p, uint32_t node, uint64_t *small,
                      size_t nsmall, uint64_t **out)
{
    size_t d = p->lab[node].depth;
    uint64_t *buf = d <= nsmall ? small : malloc(d * sizeof *buf);
    if (!buf) {
        *out = NULL;
        return 0;
    }
    for (size_t i = d; i > 0; i--) {
        buf[i - 1] = p->lab[node].comp;
        node = p->lab[node].parent;
    }
    *out = buf;
    return d;
}

size_t ompf_label_format(const ompf_profile_t *p, uint32_t node, char *buf,
                         size_t len)
{
    if (!p || node >= p->n_lab) {
        if (buf && len)
            buf[0] = 0;
        return 0;
    }
    uint64_t small[64], *path;
    size_t d = path_of(p, node, small, 64, &path);
    if (!path) {
        if (buf && len)
            buf[0] = 0;
        return 0;
    }
    size_t need = 1; /* "0" */
    if (buf && len > 1) {
        buf[0] = '0';
        buf[1] = 0;
    } else if (buf && len) {
        buf[0] = 0;
    }
    for (size_t i = 0; i < d; i++) {
        char tmp[24];
        int n = 0;
        uint64_t v = path[i];
        char rev[21];
        do {
            rev[n++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        tmp[0] = '.';
        for (int k = 0; k < n; k++)
            tmp[1 + k] = rev[n - 1 - k];
        size_t tl = (size_t)n + 1;
        if (buf && need + tl < len) {
            memcpy(buf + need, tmp, tl);
            buf[need + tl] = 0;
        } else if (buf && len) {
            buf[need < len ? need : len - 1] = 0;
        }
        need += tl;
    }
    if (path != small)
        free(path);
    return need;
}

int ompf_label_parse(ompf_profile_t *p, const char *s, uint32_t *node)
{
    if (!p || !s || s[0] != '0' || (s[1] != 0 && s[1] != '.'))
        return OMPF_EINVAL;
    uint32_t cur = OMPF_LABEL_ROOT;
    const char *q = s + 1;
    while (*q) {
        if (*q != '.' || q[1] < '0' || q[1] > '9')
            return OMPF_EINVAL;
        q++;
        uint64_t v = 0;
        while (*q >= '0' && *q <= '9') {
            uint64_t d = (uint64_t)(*q - '0');
            if (v > (UINT64_MAX - d) / 10)
                return OMPF_ERANGE;
            v = v * 10 + d;
            q++;
        }
        if (*q && *q != '.')
            return OMPF_EINVAL;
        int rc = ompf_label_child(p, cur, v, &cur);
        if (rc)
            return rc;
    }
    if (node)
        *node = cur;
    return 0;
}

static const ompf_profile_t *sort_ctx;

static int cmp_by_comp(const void *a, const void *b)
{
    uint64_t x = sort_ctx->lab[*(const uint32_t *)a].comp;
    uint64_t y = sort_ctx->lab[*(const uint32_t *)b].comp;
    return (x > y) - (x < y);
}

int ompf_label_dfs_rank(const ompf_profile_t *p, uint32_t *rank)
{
    if (!p || !rank)
        return OMPF_EINVAL;
    size_t n = p->n_lab;
    /* Children grouped by parent (counting sort), each group ordered by
     * component, then an explicit-stack pre-order walk. */
    uint32_t *start = calloc(n + 1, sizeof *start);
    uint32_t *kids = malloc(n * sizeof *kids);
    uint32_t *stack = malloc(n * sizeof *stack);
    if (!start || !kids || !stack) {
        free(start);
        free(kids);
        free(stack);
        return OMPF_ENOMEM;
    }
    for (size_t i = 1; i < n; i++)
        start[p->lab[i].parent + 1]++;
    for (size_t i = 0; i < n; i++)
        start[i + 1] += start[i];
    uint32_t *fill = stack; /* reuse as cursor array before the walk */
    memcpy(fill, start, n * sizeof *fill);
    for (size_t i = 1; i < n; i++)
        kids[fill[p->lab[i].parent]++] = (uint32_t)i;
    sort_ctx = p;
    for (size_t i = 0; i < n; i++)
        if (start[i + 1] - start[i] > 1)
            qsort(kids + start[i], start[i + 1] - start[i], sizeof *kids,
                  cmp_by_comp);
    size_t sp = 0, next = 0;
    stack[sp++] = 0;
    while (sp) {
        uint32_t v = stack[--sp];
        rank[v] = (uint32_t)next++;
        /* Push children in reverse so the smallest component pops first. */
        for (uint32_t k = start[v + 1]; k > start[v]; k--)
            stack[sp++] = kids[k - 1];
    }
    free(start);
    free(kids);
    free(stack);
    return 0;
}

int ompf_label_compare(const ompf_profile_t *a, uint32_t na,
                       const ompf_profile_t *b, uint32_t nb)
{
    if (a == b && na == nb)
        return 0;
    uint64_t sa[64], sb[64], *pa, *pb;
    size_t da = path_of(a, na, sa, 64, &pa);
    size_t db = path_of(b, nb, sb, 64, &pb);
    int r = 0;
    if (pa && pb) {
        size_t m = da < db ? da : db;
        for (size_t i = 0; i < m && !r; i++)
            r = (pa[i] > pb[i]) - (pa[i] < pb[i]);
        if (!r)
            r = (da > db) - (da < db);
    }
    if (pa && pa != sa)
        free(pa);
    if (pb && pb != sb)
        free(pb);
    return r;
}

uint32_t ompf_label_common(const ompf_profile_t *p, uint32_t a, uint32_t b)
{
    if (!p || a >= p->n_lab || b >= p->n_lab)
        return OMPF_NONE32;
    while (p->lab[a].depth > p->lab[b].depth)
        a = p->lab[a].parent;
    while (p->lab[b].depth > p->lab[a].depth)
        b = p->lab[b].parent;
    while (a != b) {
        a = p->lab[a].parent;
        b = p->lab[b].parent;
    }
    return a;
}

int ompf_label_import(ompf_profile_t *p, const ompf_profile_t *a, uint32_t na,
                      uint32_t *node)
{
    if (!p || !a || na >= a->n_lab)
        return OMPF_EINVAL;
    uint64_t small[64], *path;
    size_t d = path_of(a, na, small, 64, &path);
    if (!path)
        return OMPF_ENOMEM;
    uint32_t cur = OMPF_LABEL_ROOT;
    int rc = 0;
    for (size_t i = 0; i < d && !rc; i++)
        rc = ompf_label_child(p, cur, path[i], &cur);
    if (path != small)
        free(path);
    if (!rc && node)
        *node = cur;
    return rc;
}
