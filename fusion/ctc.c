/* CTC (IWOMP 2017 §3): per type, each run's XUs in chronological order of
 * their start time relative to the run's start; XU j of every run forms
 * fused XU j.  Equal start times are ordered by end time, then label
 * order, then XU index, so the result does not depend on record order. */
#include <string.h>

#include "fz.h"

/* Orders a group of XUs with equal start times by (end, label order,
 * index). */
static int order_ties(const fz_ctx_t *c, const fz_run_t *R, uint32_t *idx, size_t m)
{
    fz_key_t *k = malloc(m * sizeof *k);
    if (!k)
        return OMPF_ENOMEM;
    for (size_t j = 0; j < m; j++) {
        k[j].k1 = fz_xu_end(R, idx[j]);
        k[j].k2 = c->urank[fz_xu_ulab(R, idx[j])];
        k[j].idx = idx[j];
    }
    fz_sort_keys(k, m);
    for (size_t j = 0; j < m; j++)
        idx[j] = k[j].idx;
    free(k);
    return 0;
}

/* Sorts the cnt XUs of type t of run R chronologically and writes XU j of
 * that order, j < keep, to col[j * stride] (its place in fused XU j: the
 * runs' orders are cut to the shortest).  key: cnt
 * entries of scratch.  When the start times of the type (less the
 * earliest) and the XU indices fit in 64 bits together, each key carries
 * both and is sorted by its time bits alone (stable: indices ascend within
 * a time), 16 bytes an XU with the sort's scratch; else the index goes in
 * an array of its own beside the key, 24. */
static int chrono(const fz_ctx_t *c, const fz_run_t *R, size_t t, uint64_t *key, size_t cnt,
                  size_t keep, uint32_t *col, size_t stride)
{
    const uint32_t *bt = R->bytype + R->tstart[t];
    if (!cnt)
        return 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t j = 0; j < cnt; j++) {
        uint64_t v = fz_xu_start(R, bt[j]);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    unsigned ib = fz_bitlen(R->n_xu - 1), sb = fz_bitlen(hi - lo);
    /* the time's bits from a 16-bit digit's edge when they fit so: a time
     * split across digits costs the sort a pass */
    if (sb + ((ib + 15) & ~15u) <= 64)
        ib = (ib + 15) & ~15u;
    int rc = 0;
    if (sb + ib <= 64) {
        uint64_t im = ib ? ~0ull >> (64 - ib) : 0;
        for (size_t j = 0; j < cnt; j++)
            key[j] = (fz_xu_start(R, bt[j]) - lo) << ib | bt[j];
        rc = fz_radix_sort_bits(key, cnt, ~im);
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
    uint32_t *idx = malloc(cnt * sizeof *idx);
    if (!idx)
        return OMPF_ENOMEM;
    for (size_t j = 0; j < cnt; j++) {
        idx[j] = bt[j];
        key[j] = fz_xu_start(R, idx[j]);
    }
    rc = fz_radix_sort(key, idx, cnt);
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

int fz_ctc(fz_ctx_t *c)
{
    size_t n = c->n;
    int rc = 0;
    uint64_t *key = malloc(fz_type_max(c) * sizeof *key);
    if (!key)
        return OMPF_ENOMEM;
    for (size_t t = 0; t < c->n_types && !rc; t++) {
        size_t m = fz_type_min(c, t);
        if (m == 0)
            continue;
        uint32_t *rows = fz_tuples_add(&c->res, n, m);
        if (!rows) {
            rc = OMPF_ENOMEM;
            break;
        }
        for (size_t r = 0; r < n && !rc; r++) {
            const fz_run_t *R = &c->runs[r];
            rc = chrono(c, R, t, key, R->tstart[t + 1] - R->tstart[t], m, rows + r, n);
        }
        c->rep->types[t].fused = rc ? 0 : m;
        fz_progress_type(c, t);
    }
    free(key);
    return rc;
}
