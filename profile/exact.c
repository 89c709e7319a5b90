/* Exact counts above 2^53 (profile.h, "Exact counts"): a sparse side
 * table beside the rows of doubles.  Values up to 2^53 never touch it, so
 * arithmetic, memory per XU and the common paths of readers and writers
 * stay as they were; only the rare count a double cannot hold pays. */
#include <stdlib.h>
#include <string.h>

#include "profile_internal.h"

#define TWO53 9007199254740992.0
#define TWO64 18446744073709551616.0

void ompf__exact_free(ompf_profile_t *p)
{
    free(p->ex_key);
    free(p->ex_val);
    p->ex_key = p->ex_val = NULL;
    p->ex_n = p->ex_cap = 0;
}

static size_t hash_slot(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

/* Position of key k (slot + 1) or of the empty place where it goes. */
static size_t find(const ompf_profile_t *p, uint64_t k)
{
    size_t h = hash_slot(k, p->ex_cap);
    while (p->ex_key[h] && p->ex_key[h] != k)
        h = (h + 1) & (p->ex_cap - 1);
    return h;
}

static int rehash(ompf_profile_t *p, size_t cap)
{
    uint64_t *key = calloc(cap, sizeof *key), *val = calloc(cap, sizeof *val);
    if (!key || !val) {
        free(key);
        free(val);
        return OMPF_ENOMEM;
    }
    uint64_t *ok = p->ex_key, *ov = p->ex_val;
    size_t ocap = p->ex_cap;
    p->ex_key = key;
    p->ex_val = val;
    p->ex_cap = cap;
    p->ex_n = 0;
    for (size_t i = 0; i < ocap; i++) {
        if (!ok[i] || !ov[i]) /* removed entries are dropped here */
            continue;
        size_t h = find(p, ok[i]);
        key[h] = ok[i];
        val[h] = ov[i];
        p->ex_n++;
    }
    free(ok);
    free(ov);
    return 0;
}

/* Whether a double holds v exactly (then no entry is needed). */
int ompf__double_exact(uint64_t v)
{
    double d = (double)v; /* 2^64 itself is no uint64_t: compare in double first */
    return d < TWO64 && (uint64_t)d == v;
}

int ompf_xu_value_set_u64(ompf_profile_t *p, size_t i, uint32_t e, uint64_t v)
{
    if (!p || i >= p->n_xu || e >= p->n_ev)
        return OMPF_EINVAL;
    uint64_t k = (uint64_t)(i * p->n_ev + e) + 1;
    if (ompf__double_exact(v)) {
        if (p->ex_cap) {
            size_t h = find(p, k);
            if (p->ex_key[h])
                p->ex_val[h] = 0; /* an older count would apply again */
        }
        p->values[i * p->n_ev + e] = (double)v;
        return 0;
    }
    /* Keep the table at most half full (counting removed entries). */
    if ((p->ex_n + 1) * 2 > p->ex_cap &&
        rehash(p, p->ex_cap ? p->ex_cap * 2 : 16))
        return OMPF_ENOMEM;
    size_t h = find(p, k);
    if (!p->ex_key[h]) {
        p->ex_key[h] = k;
        p->ex_n++;
    }
    p->ex_val[h] = v;
    p->values[i * p->n_ev + e] = (double)v;
    return 0;
}

/* The exact count of slot k - 1 if it still applies to double d. */
static int lookup(const ompf_profile_t *p, uint64_t k, double d, uint64_t *v)
{
    if (!p->ex_cap || d < TWO53)
        return 0;
    size_t h = find(p, k);
    uint64_t u = p->ex_val[h];
    if (!p->ex_key[h] || !u || (double)u != d)
        return 0;
    *v = u;
    return 1;
}

int ompf_xu_value_u64(const ompf_profile_t *p, size_t i, uint32_t e, uint64_t *v)
{
    if (!p || i >= p->n_xu || e >= p->n_ev || !v)
        return 0;
    double d = p->values[i * p->n_ev + e];
    if (lookup(p, (uint64_t)(i * p->n_ev + e) + 1, d, v))
        return 1;
    if (!(d >= 0 && d < TWO64) || d != (double)(uint64_t)d)
        return 0; /* missing, negative, fractional or too large */
    *v = (uint64_t)d;
    return 1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int ompf__exact_sorted(const ompf_profile_t *p, uint64_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!p->ex_n)
        return 0;
    uint64_t *a = malloc(2 * p->ex_n * sizeof *a);
    if (!a)
        return OMPF_ENOMEM;
    size_t m = 0;
    for (size_t h = 0; h < p->ex_cap; h++) {
        uint64_t k = p->ex_key[h], v;
        if (k && lookup(p, k, p->values[k - 1], &v)) {
            a[2 * m] = k - 1;
            a[2 * m + 1] = v;
            m++;
        }
    }
    /* Pairs sort by slot: the first member decides (slots are unique). */
    qsort(a, m, 2 * sizeof *a, cmp_u64);
    *out = a;
    *n = m;
    return 0;
}

size_t ompf_xu_exact_count(const ompf_profile_t *p)
{
    uint64_t *a;
    size_t n;
    if (!p || ompf__exact_sorted(p, &a, &n))
        return 0;
    free(a);
    return n;
}
