/* Sorting helpers of the strategies: qsort of two-key records, and a stable
 * LSD radix sort of 64-bit keys with an optional 32-bit payload (16-bit
 * digits; passes whose digit is the same for all keys are skipped). */
#include <stdint.h>
#include <string.h>

#include "fz.h"

static int cmp_key(const void *a, const void *b)
{
    const fz_key_t *x = a, *y = b;
    if (x->k1 != y->k1)
        return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2)
        return x->k2 < y->k2 ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

void fz_sort_keys(fz_key_t *k, size_t n)
{
    if (n > 1)
        qsort(k, n, sizeof *k, cmp_key);
}

size_t fz_type_min(const fz_ctx_t *c, size_t t)
{
    size_t m = SIZE_MAX;
    for (size_t r = 0; r < c->n; r++) {
        size_t cnt = c->runs[r].tstart[t + 1] - c->runs[r].tstart[t];
        if (cnt < m)
            m = cnt;
    }
    return c->n ? m : 0;
}

size_t fz_type_max(const fz_ctx_t *c)
{
    size_t m = 1;
    for (size_t r = 0; r < c->n; r++)
        for (size_t t = 0; t < c->n_types; t++)
            if (c->runs[r].tstart[t + 1] - c->runs[r].tstart[t] > m)
                m = c->runs[r].tstart[t + 1] - c->runs[r].tstart[t];
    return m;
}

/* Small lists: a 65536-bucket pass would cost more than the sort itself;
 * qsort by (key, position) keeps ties in input order. */
static int small_sort(uint64_t *key, uint32_t *idx, size_t n)
{
    fz_key_t *t = malloc(n * sizeof *t);
    if (!t)
        return OMPF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        t[i].k1 = key[i];
        t[i].k2 = i;
        t[i].idx = idx ? idx[i] : 0;
    }
    fz_sort_keys(t, n);
    for (size_t i = 0; i < n; i++) {
        key[i] = t[i].k1;
        if (idx)
            idx[i] = t[i].idx;
    }
    free(t);
    return 0;
}

int fz_radix_sort(uint64_t *key, uint32_t *idx, size_t n)
{
    if (n < 2)
        return 0;
    if (n < 2048)
        return small_sort(key, idx, n);
    uint64_t *k2 = malloc(n * sizeof *k2);
    uint32_t *i2 = idx ? malloc(n * sizeof *i2) : NULL;
    size_t *cnt = malloc(65536 * sizeof *cnt);
    if (!k2 || (idx && !i2) || !cnt) {
        free(k2);
        free(i2);
        free(cnt);
        return OMPF_ENOMEM;
    }
    uint64_t all_or = 0, all_and = ~0ull;
    for (size_t i = 0; i < n; i++) {
        all_or |= key[i];
        all_and &= key[i];
    }
    uint64_t varying = all_or ^ all_and;
    uint64_t *ks = key, *kd = k2;
    uint32_t *is = idx, *id = i2;
    for (unsigned shift = 0; shift < 64; shift += 16) {
        if (!((varying >> shift) & 0xffff))
            continue;
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(ks[i] >> shift) & 0xffff]++;
        size_t sum = 0;
        for (size_t d = 0; d < 65536; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t p = cnt[(ks[i] >> shift) & 0xffff]++;
            kd[p] = ks[i];
            if (idx)
                id[p] = is[i];
        }
        uint64_t *tk = ks;
        ks = kd;
        kd = tk;
        uint32_t *ti = is;
        is = id;
        id = ti;
    }
    if (ks != key) {
        memcpy(key, ks, n * sizeof *key);
        if (idx)
            memcpy(idx, is, n * sizeof *idx);
    }
    free(k2);
    free(i2);
    free(cnt);
    return 0;
}
