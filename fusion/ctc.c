/* CTC (IWOMP 2017 §3): per type, each run's XUs in chronological order of
 * their start time relative to the run's start; XU j of every run forms
 * fused XU j.  Equal start times are ordered by end time, then label
 * order, then XU index, so the result does not depend on record order. */
#include <string.h>

#include "fz.h"

/* XU a of run R before XU b among equal start times: (end, label order,
 * index). */
static int tie_before(const fz_ctx_t *c, const fz_run_t *R, uint32_t a, uint32_t b)
{
    uint64_t ea = fz_xu_end(R, a), eb = fz_xu_end(R, b);
    if (ea != eb)
        return ea < eb;
    uint32_t la = fz_xu_ulab(R, a), lb = fz_xu_ulab(R, b);
    if (la != lb)
        return fz_label_before(c->ut, la, lb);
    return a < b;
}

/* Orders a group of XUs with equal start times (a merge sort: the order
 * is total, indices being distinct). */
static int order_ties(const fz_ctx_t *c, const fz_run_t *R, uint32_t *idx, size_t m)
{
    uint32_t *tmp = malloc(m * sizeof *tmp);
    if (!tmp)
        return OMPF_ENOMEM;
    for (size_t w = 1; w < m; w *= 2) {
        for (size_t lo = 0; lo < m; lo += 2 * w) {
            size_t mid = lo + w < m ? lo + w : m, hi = lo + 2 * w < m ? lo + 2 * w : m;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = tie_before(c, R, idx[j], idx[i]) ? idx[j++] : idx[i++];
            while (i < mid)
                tmp[k++] = idx[i++];
            while (j < hi)
                tmp[k++] = idx[j++];
        }
        memcpy(idx, tmp, m * sizeof *idx);
    }
    free(tmp);
    return 0;
}

/* key[0..cnt) sorted, each an XU index in its low ib bits under a time
 * (and type) above: orders the XUs of equal times (ties) and writes XU j
 * of that order, j < keep, to col[j * stride] (its place in fused XU j:
 * the runs' orders are cut to the shortest). */
static int write_order(const fz_ctx_t *c, const fz_run_t *R, uint64_t *key, size_t cnt,
                       unsigned ib, size_t keep, uint32_t *col, size_t stride)
{
    uint64_t im = ib ? ~0ull >> (64 - ib) : 0;
    int rc = 0;
    for (size_t a = 0; a < cnt && !rc;) {
        size_t b = a + 1;
        while (b < cnt && (key[b] & ~im) == (key[a] & ~im))
            b++;
        if (b - a > 1) { /* rare: ties of nanosecond times */
            uint32_t *idx = malloc((b - a) * sizeof *idx);
            if (!idx)
                return OMPF_ENOMEM;
            for (size_t j = a; j < b; j++)
                idx[j - a] = (uint32_t)(key[j] & im);
            rc = order_ties(c, R, idx, b - a);
            for (size_t j = a; j < b; j++)
                key[j] = (key[j] & ~im) | idx[j - a];
            free(idx);
        }
        a = b;
    }
    for (size_t j = 0; j < keep && !rc; j++)
        col[j * stride] = (uint32_t)(key[j] & im);
    return rc;
}

/* The cnt XUs of type t of run R in chronological order, as write_order
 * writes them.  key: cnt entries of scratch.  When the start times of the
 * type (less the earliest) and the XU indices fit in 64 bits together,
 * each key carries both, sorted in place (indices ascend within a time);
 * else the index goes in an array of its own beside the key, sorted by
 * the radix sort with its scratch. */
static int chrono(const fz_ctx_t *c, const fz_run_t *R, size_t t, uint64_t *key, size_t cnt,
                  size_t keep, uint32_t *col, size_t stride)
{
    if (!cnt)
        return 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t j = 0; j < cnt; j++) {
        uint64_t v = fz_xu_start(R, fz_typed(R, t, j));
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    unsigned ib = fz_bitlen(R->n_xu - 1), sb = fz_bitlen(hi - lo);
    if (sb + ib <= 64) {
        for (size_t j = 0; j < cnt; j++)
            key[j] = (fz_xu_start(R, fz_typed(R, t, j)) - lo) << ib | fz_typed(R, t, j);
        fz_sort_u64(key, cnt); /* (time, index): as stable by time */
        return write_order(c, R, key, cnt, ib, keep, col, stride);
    }
    uint32_t *idx = malloc(cnt * sizeof *idx);
    if (!idx)
        return OMPF_ENOMEM;
    for (size_t j = 0; j < cnt; j++) {
        idx[j] = fz_typed(R, t, j);
        key[j] = fz_xu_start(R, idx[j]);
    }
    int rc = fz_radix_sort(key, idx, cnt);
    for (size_t a = 0; a < cnt && !rc;) {
        size_t b = a + 1;
        while (b < cnt && key[b] == key[a])
            b++;
        if (b - a > 1)
            rc = order_ties(c, R, idx + a, b - a);
        a = b;
    }
    for (size_t j = 0; j < keep && !rc; j++)
        col[j * stride] = idx[j];
    free(idx);
    return rc;
}

/* Every type of run R: its XUs as keys (type, start time, index) when
 * they fit in 64 bits, sorted in place at once, so that no list of each
 * type's XUs is held (fz_group_by_type makes none for CTC: 4 bytes an
 * input XU); else such a list for this run alone, type after type.  Type
 * t's fused XUs are rows at[t] ..; key: the run's XUs of scratch. */
static int chrono_run(const fz_ctx_t *c, fz_run_t *R, uint64_t *key, uint64_t **kbuf,
                      size_t maxn, uint32_t *col, size_t stride, const size_t *at,
                      size_t in_xus)
{
    size_t nx = R->n_xu, nt = c->n_types;
    if (!nx)
        return 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < nx; i++) {
        uint64_t v = fz_xu_start(R, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    unsigned ib = fz_bitlen(nx - 1), sb = fz_bitlen(hi - lo), tb = fz_bitlen(nt - 1);
    int rc = 0;
    if (tb + sb + ib <= 64) {
        for (size_t i = 0; i < nx; i++) {
            uint64_t ty = R->ctype[fz_xu_type(R, i)];
            key[i] = (tb ? ty << (sb + ib) : 0) | (fz_xu_start(R, i) - lo) << ib | i;
        }
        /* In place, unless the radix sort's scratch (8 bytes a key) is at
         * most a byte per input XU (many runs): it is about 2.4 times as
         * fast (docs/benchmarks.md, session 15).  It sorts by type and
         * time alone, stable: the keys were made in index order, so both
         * give one order. */
        if (8 * nx <= in_xus) {
            /* one scratch for every run: a fresh one per run would be
             * faulted in again each time (combine maps large arrays
             * apart, cli/heap.h), 11-16 us a page on the CI VM */
            if (!*kbuf && !(*kbuf = malloc(maxn * sizeof **kbuf)))
                return OMPF_ENOMEM;
            rc = fz_radix_sort_bits(key, nx, ~0ull << ib, *kbuf);
        } else
            fz_sort_u64(key, nx);
        for (size_t t = 0; t < nt && !rc; t++)
            rc = write_order(c, R, key + R->tstart[t], R->tstart[t + 1] - R->tstart[t], ib,
                             fz_type_min(c, t), col + at[t] * stride, stride);
        return rc;
    }
    if (fz_bytype_make(c, R))
        return OMPF_ENOMEM;
    for (size_t t = 0; t < nt && !rc; t++)
        rc = chrono(c, R, t, key, R->tstart[t + 1] - R->tstart[t], fz_type_min(c, t),
                    col + at[t] * stride, stride);
    free(R->bytype);
    R->bytype = NULL;
    return rc;
}

int fz_ctc(fz_ctx_t *c)
{
    size_t n = c->n, nt = c->n_types, total = 0, maxn = 1;
    size_t *at = malloc((nt ? nt : 1) * sizeof *at);
    if (!at)
        return OMPF_ENOMEM;
    for (size_t t = 0; t < nt; t++) {
        at[t] = total;
        total += fz_type_min(c, t);
    }
    size_t in_xus = 0;
    for (size_t r = 0; r < n; r++) {
        maxn = c->runs[r].n_xu > maxn ? c->runs[r].n_xu : maxn;
        in_xus += c->runs[r].n_xu;
    }
    uint32_t *rows = total ? fz_tuples_add(&c->res, n, total) : NULL;
    uint64_t *key = malloc(maxn * sizeof *key), *kbuf = NULL;
    int rc = (total && !rows) || !key ? OMPF_ENOMEM : 0;
    /* run after run, each one's order is held at a time */
    for (size_t r = 0; r < n && !rc && total; r++)
        rc = chrono_run(c, &c->runs[r], key, &kbuf, maxn, rows + r, n, at, in_xus);
    for (size_t t = 0; t < nt && !rc; t++) {
        c->rep->types[t].fused = fz_type_min(c, t);
        fz_progress_type(c, t);
    }
    free(key);
    free(kbuf);
    free(at);
    return rc;
}
