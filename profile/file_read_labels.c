/* The profile reader's labels: each record goes into the trie as pass 1
 * decodes it, and what pass 1 leaves is settled after it (records whose
 * parent never came, ids defined twice, equal nodes of a file appended
 * whole).
 *
 * A record whose parent is resolved is resolved at once, so the reader
 * holds an id -> trie node map (4 bytes a label) instead of every record
 * (16 bytes a label besides the map: 74 MB of BOTS nqueens' third run
 * while combine read it).  A record whose parent is not resolved yet
 * waits, in a list per parent id, and is resolved when its parent is
 * (then its own waiting children, and so on).  The OMPT tool writes a
 * thread's labels parent first, but a task's parent may be in another
 * thread's chunk further on: a few chunks' records wait at a time.  The
 * trie's nodes are so created in the order their records became
 * resolvable; records still waiting when the file ends form a cycle, name
 * a parent that is not defined, or (truncated file) lost their chain. */
#include <stdio.h>
#include <stdlib.h>

#include "file_read.h"
#include "profile_internal.h"

enum { LAB_APPEND = 1, LAB_LOOKUP = 2 };
#define WAIT_DONE (UINT32_MAX - 1) /* lab_wait: the parent was resolved */

/* The node of the label with id pid: NONE32 while it is not resolved. */
static uint32_t resolved(const rd_t *r, uint64_t pid)
{
    return pid ? fmt_idmap_get(&r->lab_map, pid) : OMPF_LABEL_ROOT;
}

/* A node for comp under top: appended (a file read into a trie that held
 * the root alone; equal nodes are merged afterwards), or looked up. */
static int make_node(rd_t *r, uint32_t top, uint64_t comp, uint32_t *node)
{
    if (r->lab_mode == LAB_APPEND)
        return ompf_label_append(r->lt, top, comp, node);
    int rc = ompf__label_child_hint(r->lt, top, comp, r->lab_guess, node, &r->lab_hit);
    r->lab_guess = rc ? NONE32 : *node + 1;
    return rc;
}

/* The error of a node make_node refused for label id. */
static int refused(rd_t *r, int arc, uint32_t top, uint64_t id)
{
    if (arc == OMPF_ENOMEM)
        return rd_oom(r);
    if (arc == OMPF_ERANGE && ompf_label_depth(r->lt, top) >= OMPF_MAX_LABEL_DEPTH)
        return rd_fail(r, OMPF_ERANGE, "label id %llu is deeper than %u components, the limit "
                    "OMPF_MAX_LABEL_DEPTH (docs/format.md, Limits)", (unsigned long long)id,
                    OMPF_MAX_LABEL_DEPTH);
    return rd_fail(r, OMPF_EFORMAT, "label id %llu cannot be added (%s)",
                (unsigned long long)id, ompf_strerror(arc));
}

static int push_dup(rd_t *r, uint64_t id, uint64_t parent, uint64_t comp)
{
    if (rd_grow((void **)&r->dup, &r->cap_dup, r->n_dup + 1, sizeof *r->dup))
        return rd_oom(r);
    r->dup[r->n_dup++] = (rd_lab_t){id, parent, comp, 0, 0};
    return 0;
}

/* Record l (the seq-th of the file) waits for its parent: into a free
 * slot, at the end of its parent's ring. */
static int wait_for_parent(rd_t *r, const fmt_label_rec_t *l, uint32_t seq)
{
    uint32_t k = r->lab_free;
    if (k != NONE32) {
        r->lab_free = r->lab[k].next;
    } else {
        if (r->n_lab >= WAIT_DONE ||
            rd_grow((void **)&r->lab, &r->cap_lab, r->n_lab + 1, sizeof *r->lab))
            return rd_oom(r);
        k = (uint32_t)r->n_lab++;
    }
    rd_lab_t *w = &r->lab[k];
    *w = (rd_lab_t){l->id, l->parent, l->comp, seq, k};
    uint32_t last = fmt_idmap_get(&r->lab_wait, l->parent), old;
    if (last == NONE32) {
        if (fmt_idmap_put(&r->lab_wait, l->parent, k, &old))
            return rd_oom(r);
    } else if (last == WAIT_DONE) {
        /* a resolved parent, for which no record waits: not reached */
        fmt_idmap_set(&r->lab_wait, l->parent, k);
    } else {
        w->next = r->lab[last].next;
        r->lab[last].next = k;
        fmt_idmap_set(&r->lab_wait, l->parent, k);
    }
    r->n_wait++;
    return 0;
}

/* Queues the records waiting for label id, now resolved to node. */
static int queue_children(rd_t *r, uint64_t id, uint32_t node, size_t *nq)
{
    uint32_t last = fmt_idmap_get(&r->lab_wait, id);
    if (last >= WAIT_DONE)
        return 0;
    fmt_idmap_set(&r->lab_wait, id, WAIT_DONE);
    if (rd_grow((void **)&r->lab_q, &r->cap_lab_q, *nq + 1, sizeof *r->lab_q))
        return rd_oom(r);
    r->lab_q[(*nq)++] = (uint64_t)last << 32 | node;
    return 0;
}

/* Label id was resolved to node: the records waiting for it are resolved
 * too, in the order they came, then theirs (breadth first). */
static int release(rd_t *r, uint64_t id, uint32_t node)
{
    size_t nq = 0;
    int rc = queue_children(r, id, node, &nq);
    for (size_t q = 0; q < nq && !rc; q++) {
        uint32_t last = (uint32_t)(r->lab_q[q] >> 32), pnode = (uint32_t)r->lab_q[q];
        uint32_t k = r->lab[last].next, end;
        do {
            rd_lab_t w = r->lab[k];
            end = k == last;
            r->lab[k].id = 0; /* free (ids are never 0) */
            r->lab[k].next = r->lab_free;
            r->lab_free = k;
            r->n_wait--;
            uint32_t cn, old;
            int arc = make_node(r, pnode, w.comp, &cn);
            if (arc)
                return refused(r, arc, pnode, w.id);
            if (fmt_idmap_put(&r->lab_map, w.id, cn, &old))
                return rd_oom(r);
            rc = old != NONE32 ? push_dup(r, w.id, w.parent, w.comp)
                               : queue_children(r, w.id, cn, &nq);
            k = w.next;
        } while (!end && !rc);
    }
    return rc;
}

int rd_add_labels(rd_t *r, const fmt_label_rec_t *l, size_t count)
{
    if (!r->lab_mode) {
        r->lab_start = ompf_label_count(r->lt);
        r->lab_mode = r->lab_start == 1 ? LAB_APPEND : LAB_LOOKUP;
        r->lab_guess = r->lab_free = NONE32;
        r->lab_hit = r->lab_mode == LAB_APPEND; /* nothing to prefetch */
    }
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        /* A lookup is at a random place of the trie's hash: prefetch the
         * slot 16 records ahead and its node 8 ahead, so that the misses
         * overlap (reading was N^1.26 at 10^6 labels without).  Not while
         * guesses hit: they read the nodes in order. */
        for (size_t d = 8, s = 1; d <= 16 && !r->lab_hit; d += 8, s--) {
            if (i + d >= count)
                break;
            uint32_t pn = resolved(r, l[i + d].parent);
            if (pn != NONE32)
                ompf_label_prefetch(r->lt, pn, l[i + d].comp, (int)s);
        }
        uint32_t seq = r->lab_seq < UINT32_MAX ? r->lab_seq++ : UINT32_MAX;
        uint32_t top = resolved(r, l[i].parent), node, old;
        if (top == NONE32) {
            /* an id met before: checked once every label is resolved */
            if (fmt_idmap_get(&r->lab_map, l[i].id) != NONE32)
                rc = push_dup(r, l[i].id, l[i].parent, l[i].comp);
            else
                rc = wait_for_parent(r, &l[i], seq);
            if (rc)
                return rc;
            continue;
        }
        /* One lookup of the id, by the insertion: an id met before (rare)
         * keeps its node; the one made here is then the same (looked up)
         * or merged away (appended), or the check fails. */
        int arc = make_node(r, top, l[i].comp, &node);
        if (arc)
            return refused(r, arc, top, l[i].id);
        if (fmt_idmap_put(&r->lab_map, l[i].id, node, &old))
            return rd_oom(r);
        if (old != NONE32)
            rc = push_dup(r, l[i].id, l[i].parent, l[i].comp);
        else if (r->n_wait)
            rc = release(r, l[i].id, node);
        if (rc)
            return rc;
    }
    return 0;
}

static int by_seq(const void *a, const void *b)
{
    const rd_lab_t *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The records still waiting when pass 1 ends never reach a resolved
 * label: each one's chain of waiting parents ends in a cycle or at a
 * parent id that no record defines.  The first of them in file order is
 * the error; in a truncated file, where the parent may have been lost
 * with the tail, a cycle still is, and the other labels are dropped. */
static int leftovers(rd_t *r)
{
    size_t n = 0;
    for (size_t k = 0; k < r->n_lab; k++)
        if (r->lab[k].id) /* not a free slot */
            r->lab[n++] = r->lab[k];
    qsort(r->lab, n, sizeof *r->lab, by_seq);
    r->n_lab = n;
    fmt_idmap_free(&r->lab_wait); /* now: id -> place among them */
    /* walk[k]: 0, or 1 + the place whose chain went through record k */
    uint32_t *walk = calloc(n, sizeof *walk), old;
    if (!walk)
        return rd_oom(r);
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++)
        if (fmt_idmap_put(&r->lab_wait, r->lab[k].id, (uint32_t)k, &old))
            rc = rd_oom(r);
    for (size_t i = 0; i < n && !rc; i++) {
        for (uint32_t cur = (uint32_t)i; !walk[cur];) {
            walk[cur] = (uint32_t)i + 1;
            uint32_t p = fmt_idmap_get(&r->lab_wait, r->lab[cur].parent);
            if (p == NONE32) {
                if (!r->truncated)
                    rc = rd_fail(r, OMPF_EFORMAT, "label id %llu has parent id %llu, which is "
                              "not defined (dangling id); " MALFORMED,
                              (unsigned long long)r->lab[cur].id,
                              (unsigned long long)r->lab[cur].parent);
                break;
            }
            if (walk[p] == i + 1)
                rc = rd_fail(r, OMPF_EFORMAT, "label ids form a cycle through id %llu (a node "
                          "is its own ancestor); " MALFORMED, (unsigned long long)r->lab[p].id);
            cur = p;
        }
    }
    free(walk);
    /* truncated: dropped, where the XUs look them up */
    for (size_t k = 0; k < n && !rc; k++) {
        const rd_lab_t *w = &r->lab[k];
        if (fmt_idmap_get(&r->lab_wait, w->id) != k)
            rc = push_dup(r, w->id, w->parent, w->comp);
        else if (fmt_idmap_put(&r->lab_map, w->id, LABEL_DROPPED, &old))
            rc = rd_oom(r);
        else if (old != NONE32)
            rc = push_dup(r, w->id, w->parent, w->comp);
    }
    return rc;
}

/* A file appended whole to a trie that held the root alone: one pass
 * builds the hash and checks that no two nodes are equal, which is linear
 * where a lookup per node was not (10^7 labels: a random place of a 128 MB
 * hash each).  The tool names a worksharing construct's label once per
 * thread (each thread has ids of its own), so equal nodes are common:
 * they are then merged level by level, also in linear time (label.c,
 * ompf__label_merge_equal), into the trie lookups would have given. */
static int merge_appended(rd_t *r)
{
    ompf_profile_t *lt = r->lt;
    int u = ompf__label_index_unique(lt);
    if (u == 1) {
        size_t n = ompf_label_count(lt);
        uint32_t *remap = malloc(n * sizeof *remap);
        u = remap ? ompf__label_merge_equal(lt, remap) : OMPF_ENOMEM;
        if (!u) /* LABEL_DROPPED stays */
            fmt_idmap_remap(&r->lab_map, remap, (uint32_t)n);
        free(remap);
        /* a shared trie is looked up next */
        if (!u && lt != r->p && !r->labels_last)
            u = ompf__label_index_unique(lt);
    }
    if (u == 0 && r->labels_last)
        ompf__label_drop_hash(lt);
    return u ? rd_oom(r) : 0;
}

/* An id defined twice must name one label both times: the same parent
 * label and component (a writer may emit a record again from another
 * stream).  Checked on the finished trie, where equal labels are one
 * node. */
static int check_twice(rd_t *r)
{
    for (size_t k = 0; k < r->n_dup; k++) {
        const rd_lab_t *d = &r->dup[k];
        uint32_t n = fmt_idmap_get(&r->lab_map, d->id), pn = resolved(r, d->parent);
        int lost = n == LABEL_DROPPED, plost = pn == NONE32 || pn == LABEL_DROPPED;
        int same = lost || plost ? lost && plost && r->truncated
                                 : ompf_label_parent(r->lt, n) == pn &&
                                       ompf_label_component(r->lt, n) == d->comp;
        if (!same)
            return rd_fail(r, OMPF_EFORMAT, "label id %llu is defined twice, as two different "
                        "labels; " MALFORMED, (unsigned long long)d->id);
    }
    return 0;
}

int rd_resolve_labels(rd_t *r)
{
    int rc = 0;
    if (r->lab_mode) {
        rc = r->n_wait ? leftovers(r) : 0;
        if (!rc && r->lab_mode == LAB_APPEND)
            rc = merge_appended(r);
        if (!rc)
            rc = check_twice(r);
    }
    /* from now on only the map is needed (peak memory before pass 2) */
    free(r->lab);
    free(r->lab_in);
    free(r->lab_q);
    free(r->dup);
    fmt_idmap_free(&r->lab_wait);
    r->lab = r->dup = NULL;
    r->lab_in = NULL;
    r->lab_q = NULL;
    r->n_lab = r->cap_lab = r->n_dup = r->cap_dup = r->cap_lab_in = r->cap_lab_q = 0;
    return rc;
}

void rd_labels_abandon(rd_t *r)
{
    /* A shared trie is left as it was: the nodes this read added are the
     * last ones, and its hash is built again by the next lookup. */
    if (r->lab_mode && r->lt != r->p && ompf_label_count(r->lt) > r->lab_start) {
        r->lt->n_lab = r->lab_start;
        ompf__label_drop_hash(r->lt);
    }
}
