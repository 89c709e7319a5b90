/* Resolution after pass 1, and the salvage of truncated files: event
 * sources, thread records (lost ones become empty threads) and the label
 * trie (parent chains resolved across chunks; a chain lost with a
 * truncated tail drops its labels). */
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

/* The id of label record k, for a message (the records keep none).  The
 * map names the first record of an id; a later record with the same id
 * and content is resolved after the first and fails only where the first
 * did, so a message names a first record. */
static unsigned long long lab_id(const rd_t *r, uint32_t k)
{
    uint64_t id = 0;
    fmt_idmap_key_of(&r->lab_map, k, &id);
    return (unsigned long long)id;
}

/* lab_node marks while resolving; a trie has fewer than UINT32_MAX - 2
 * nodes (label.c), so nodes stay below both, and LABEL_DROPPED is only
 * written afterwards (build_labels). */
#define NEW (UINT32_MAX - 2)      /* a record not yet seen */
#define ON_STACK (UINT32_MAX - 1) /* on the chain being resolved */

/* Walks each label's parent chain up to a resolved node and creates the
 * trie nodes on the way back.  Detects cycles and dangling parents.
 * append: the trie holds the root alone, and the nodes are appended
 * without looking for equal ones (build_labels checks that afterwards). */
static int resolve_labels(rd_t *r, int append)
{
    size_t n = r->n_lab, cap_stack = 256;
    /* A record's state is in lab_node: NEW, ON_STACK, or done (its node,
     * below NEW, or NONE32 when dropped). */
    for (size_t i = 0; i < n; i++)
        r->lab_node[i] = NEW;
    /* the chain being resolved: short, since records mostly come parent
     * first (grown as needed, not n entries) */
    uint32_t *stack = malloc(cap_stack * sizeof *stack);
    /* n records make at most n nodes: the trie never rehashes (a shared
     * trie mostly holds them already: room for the larger of the two).
     * Appending needs no hash. */
    size_t have = ompf_label_count(r->lt);
    if (!stack ||
        (append ? ompf__grow((void **)&r->lt->lab, &r->lt->cap_lab, n + 1, sizeof *r->lt->lab)
                : ompf_label_reserve(r->lt, have > n + 1 ? have : n + 1))) {
        free(stack);
        return rd_oom(r);
    }
    int rc = 0;
    /* The guess for the next lookup (ompf__label_child_hint), and whether
     * the last guess was right. */
    uint32_t guess = NONE32;
    int hit = append; /* nothing to prefetch when appending */
    for (size_t i = 0; i < n && !rc; i++) {
        /* Records mostly come parent first: each is one lookup at a random
         * place of the trie's hash.  Prefetch the slot 16 records ahead and
         * its node 8 ahead (when the parent is resolved), so that the
         * misses overlap (reading was N^1.26 at 10^6 labels without).
         * Not while guesses hit: they read the nodes in order. */
        for (size_t d = 8, s = 1; d <= 16 && !hit; d += 8, s--) {
            size_t a = i + d;
            if (a >= n)
                break;
            uint64_t pid = r->lab[a].parent;
            uint32_t pr = pid ? fmt_idmap_get(&r->lab_map, pid) : NONE32;
            if (!pid)
                ompf_label_prefetch(r->lt, OMPF_LABEL_ROOT, r->lab[a].comp, (int)s);
            else if (pr < n && r->lab_node[pr] < NEW)
                ompf_label_prefetch(r->lt, r->lab_node[pr], r->lab[a].comp, (int)s);
        }
        if (r->lab_node[i] < NEW || r->lab_node[i] == NONE32)
            continue; /* done */
        size_t sp = 0;
        uint32_t cur = (uint32_t)i;
        uint32_t top_node = NONE32; /* node of the resolved ancestor */
        for (;;) {
            if (r->lab_node[cur] < NEW || r->lab_node[cur] == NONE32) {
                top_node = r->lab_node[cur];
                break;
            }
            if (r->lab_node[cur] == ON_STACK) {
                rc = rd_fail(r, OMPF_EFORMAT, "label ids form a cycle through id %llu (a node is "
                          "its own ancestor); " MALFORMED, lab_id(r, cur));
                break;
            }
            if (sp == cap_stack) {
                uint32_t *ns = realloc(stack, 2 * cap_stack * sizeof *ns);
                if (!ns) {
                    rc = rd_oom(r);
                    break;
                }
                stack = ns;
                cap_stack *= 2;
            }
            r->lab_node[cur] = ON_STACK;
            stack[sp++] = cur;
            uint64_t pid = r->lab[cur].parent;
            if (pid == 0) {
                top_node = OMPF_LABEL_ROOT;
                break;
            }
            uint32_t prec = fmt_idmap_get(&r->lab_map, pid);
            if (prec == NONE32) {
                if (!r->truncated) {
                    rc = rd_fail(r, OMPF_EFORMAT, "label id %llu has parent id %llu, which is "
                              "not defined (dangling id); " MALFORMED,
                              lab_id(r, cur), (unsigned long long)pid);
                    break;
                }
                top_node = NONE32; /* lost with the truncated tail */
                break;
            }
            cur = prec;
        }
        if (rc)
            break;
        while (sp > 0) {
            uint32_t k = stack[--sp];
            uint32_t node = NONE32;
            if (top_node != NONE32) {
                int arc = append ? ompf_label_append(r->lt, top_node, r->lab[k].comp, &node)
                                 : ompf__label_child_hint(r->lt, top_node, r->lab[k].comp,
                                                          guess, &node, &hit);
                guess = node + 1;
                if (arc == OMPF_ERANGE && ompf_label_depth(r->lt, top_node) >=
                                              OMPF_MAX_LABEL_DEPTH) {
                    rc = rd_fail(r, OMPF_ERANGE, "label id %llu is deeper than %u components, "
                              "the limit OMPF_MAX_LABEL_DEPTH (docs/format.md, Limits)",
                              lab_id(r, k), OMPF_MAX_LABEL_DEPTH);
                    break;
                }
                if (arc) {
                    rc = arc == OMPF_ENOMEM ? rd_oom(r)
                                            : rd_fail(r, OMPF_EFORMAT, "label id %llu cannot be "
                                                   "added (%s)", lab_id(r, k),
                                                   ompf_strerror(arc));
                    break;
                }
            }
            r->lab_node[k] = node;
            top_node = node;
        }
    }
    free(stack);
    return rc;
}

/* Resolves the labels into the trie.  A trie that holds the root alone
 * (every read into a profile's own trie, and the first input of a shared
 * one) takes the file's nodes as they come, and one pass over them then
 * builds the hash and checks that no two are equal; that is linear where a
 * lookup per node was not (10^7 labels: a random place of a 128 MB hash
 * each).  The tool names a worksharing construct's label once per thread
 * (each thread has ids of its own), so equal nodes are common: they are
 * then merged level by level, also in linear time (label.c,
 * ompf__label_merge_equal), into the trie a lookup per node would give. */
static int append_labels(rd_t *r)
{
    ompf_profile_t *lt = r->lt;
    int rc = resolve_labels(r, 1);
    int u = rc ? 0 : ompf__label_index_unique(lt);
    if (u == 1) {
        uint32_t *remap = malloc(ompf_label_count(lt) * sizeof *remap);
        u = remap ? ompf__label_merge_equal(lt, remap) : OMPF_ENOMEM;
        for (size_t k = 0; !u && k < r->n_lab; k++)
            if (r->lab_node[k] != NONE32)
                r->lab_node[k] = remap[r->lab_node[k]];
        free(remap);
        /* a shared trie is looked up next */
        if (!u && lt != r->p)
            u = ompf__label_index_unique(lt);
    }
    if (u)
        rc = rd_oom(r);
    if (rc) { /* back to the root alone, for a shared trie's next reader */
        lt->n_lab = 1;
        ompf__label_drop_hash(lt);
    }
    return rc;
}

static int build_labels(rd_t *r)
{
    size_t n = r->n_lab;
    r->lab_node = malloc((n + 1) * sizeof *r->lab_node);
    if (!r->lab_node)
        return rd_oom(r);
    int rc = ompf_label_count(r->lt) == 1 ? append_labels(r) : resolve_labels(r, 0);
    if (rc)
        return rc;
    /* From now on the map gives trie nodes directly: the records can go
     * before the XUs are loaded (peak memory). */
    for (size_t i = 0; i < n; i++)
        if (r->lab_node[i] == NONE32)
            r->lab_node[i] = LABEL_DROPPED;
    fmt_idmap_remap(&r->lab_map, r->lab_node);
    free(r->lab);
    free(r->lab_node);
    free(r->lab_in);
    r->lab = NULL;
    r->lab_node = NULL;
    r->lab_in = NULL;
    r->cap_lab_in = 0;
    r->n_lab = r->cap_lab = 0;
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
        rc = build_labels(r);
    return rc;
}
