/* LGL (TACO 2017 Alg. 1-2): join on label.  Labels of all runs live in one
 * union trie (fuse.c), so "same label" is "same union node": per type,
 * every run's XUs are radix-sorted by union node and the sorted lists are
 * merge-joined in O(N).  A label that occurs k_r times in run r (static
 * chunk sets, colliding labels) yields min_r k_r fused XUs, duplicates
 * paired in start order; such groups are counted in the report. */
#include "fz.h"
#include "ompfuse/mem.h"

/* A run's XUs of one type, each as union node << 32 | XU index (8 bytes
 * instead of a key and an index apart), sorted by node; the join gives
 * back the pages behind pos as the tuples grow (gone: bytes given back). */
typedef struct lrun {
    uint64_t *key;
    size_t n, pos, gone;
} lrun_t;

#define NODE(k) ((k) >> 32)
#define XU(k) ((uint32_t)(k))

/* Orders a group of equal labels by (start time, index). */
static int order_dups(const fz_run_t *R, uint64_t *key, size_t m)
{
    fz_key_t *t = malloc(m * sizeof *t);
    if (!t)
        return OMPF_ENOMEM;
    for (size_t j = 0; j < m; j++) {
        t[j].k1 = fz_xu_start(R, XU(key[j]));
        t[j].k2 = XU(key[j]);
        t[j].idx = XU(key[j]);
    }
    fz_sort_keys(t, m);
    for (size_t j = 0; j < m; j++)
        key[j] = (key[j] & ~0xffffffffull) | t[j].idx;
    free(t);
    return 0;
}

int fz_lgl(fz_ctx_t *c)
{
    size_t n = c->n;
    int rc = 0;
    lrun_t *L = calloc(n, sizeof *L);
    size_t *run = calloc(n, sizeof *run);
    uint32_t *tuple = malloc(n * sizeof *tuple);
    uint64_t dup_total = 0, dup_types = 0;
    if (!L || !run || !tuple) {
        rc = OMPF_ENOMEM;
        goto out;
    }
    size_t maxn = fz_type_max(c);
    for (size_t r = 0; r < n; r++) {
        L[r].key = malloc(maxn * sizeof *L[r].key);
        if (!L[r].key) {
            rc = OMPF_ENOMEM;
            goto out;
        }
    }
    for (size_t t = 0; t < c->n_types; t++) {
        uint64_t fused = 0, dups = 0;
        for (size_t r = 0; r < n; r++) {
            fz_run_t *R = &c->runs[r];
            lrun_t *l = &L[r];
            l->n = R->tstart[t + 1] - R->tstart[t];
            l->pos = l->gone = 0;
            for (size_t j = 0; j < l->n; j++) {
                uint32_t i = fz_typed(R, t, j);
                l->key[j] = (uint64_t)fz_xu_ulab(R, i) << 32 | i;
            }
            /* by (node, index), in place: equal nodes keep their ascending
             * index, as a stable sort by node would */
            fz_sort_u64(l->key, l->n);
            for (size_t a = 0; a < l->n;) {
                size_t b = a + 1;
                while (b < l->n && NODE(l->key[b]) == NODE(l->key[a]))
                    b++;
                if (b - a > 1) {
                    dups++;
                    if ((rc = order_dups(R, l->key + a, b - a)))
                        goto out;
                }
                a = b;
            }
        }
        for (;;) {
            /* Largest head label; every run must reach it. */
            uint64_t hi = 0;
            int done = 0;
            for (size_t r = 0; r < n && !done; r++) {
                if (L[r].pos >= L[r].n)
                    done = 1;
                else if (NODE(L[r].key[L[r].pos]) > hi)
                    hi = NODE(L[r].key[L[r].pos]);
            }
            if (done)
                break;
            int all = 1;
            for (size_t r = 0; r < n; r++) {
                lrun_t *l = &L[r];
                while (l->pos < l->n && NODE(l->key[l->pos]) < hi)
                    l->pos++;
                if (l->pos >= l->n || NODE(l->key[l->pos]) != hi)
                    all = 0;
            }
            if (!all)
                continue;
            size_t m = SIZE_MAX;
            for (size_t r = 0; r < n; r++) {
                lrun_t *l = &L[r];
                size_t e = l->pos;
                while (e < l->n && NODE(l->key[e]) == hi)
                    e++;
                run[r] = e - l->pos;
                if (run[r] < m)
                    m = run[r];
            }
            for (size_t j = 0; j < m; j++) {
                for (size_t r = 0; r < n; r++)
                    tuple[r] = XU(L[r].key[L[r].pos + j]);
                if ((rc = fz_tuples_push(&c->res, n, tuple)))
                    goto out;
            }
            fused += m;
            for (size_t r = 0; r < n; r++) {
                L[r].pos += run[r];
                ompf_give_back(L[r].key, &L[r].gone, L[r].pos * sizeof *L[r].key);
            }
        }
        c->rep->types[t].fused = fused;
        c->rep->types[t].label_dups = dups;
        fz_progress_type(c, t);
        dup_total += dups;
        dup_types += dups != 0;
    }
    if (dup_total)
        rc = fz_note(c->rep,
                     "LGL: %llu labels occur more than once within a run "
                     "(in %llu types; static chunk sets or colliding labels): "
                     "such XUs were paired in start order",
                     (unsigned long long)dup_total,
                     (unsigned long long)dup_types);
out:
    if (L)
        for (size_t r = 0; r < n; r++) {
            free(L[r].key);
        }
    free(L);
    free(run);
    free(tuple);
    return rc;
}
