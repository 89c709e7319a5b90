/* Sorting helpers of the strategies: an introsort of three-key records; an
 * in-place sort of 64-bit keys (fz_sort_u64, at the end); and a stable
 * radix sort of 64-bit keys with an optional 32-bit payload: least
 * significant digit first (16-bit digits) up to 2^18 keys, or up to 2^22
 * when that takes at most two passes; else 8-bit digits most significant
 * first down to cache-sized buckets, sorted LSD within.  Digits that are
 * the same for all keys are skipped.  The limits are measured
 * (bench_sort, docs/benchmarks.md), not derived. */
#include <stdint.h>
#include <string.h>

#include "fz.h"

static inline int key_lt(const fz_key_t *x, const fz_key_t *y)
{
    if (x->k1 != y->k1)
        return x->k1 < y->k1;
    if (x->k2 != y->k2)
        return x->k2 < y->k2;
    return x->idx < y->idx;
}

static inline void key_swap(fz_key_t *a, fz_key_t *b)
{
    fz_key_t t = *a;
    *a = *b;
    *b = t;
}

static void insertion_keys(fz_key_t *k, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        fz_key_t x = k[i];
        size_t j = i;
        for (; j > 0 && key_lt(&x, &k[j - 1]); j--)
            k[j] = k[j - 1];
        k[j] = x;
    }
}

static void heap_keys(fz_key_t *k, size_t n)
{
    for (size_t e = n / 2; e-- > 0;) { /* heapify, then pop n - 1 times */
        for (size_t i = e;;) {
            size_t c = 2 * i + 1;
            if (c >= n)
                break;
            if (c + 1 < n && key_lt(&k[c], &k[c + 1]))
                c++;
            if (!key_lt(&k[i], &k[c]))
                break;
            key_swap(&k[i], &k[c]);
            i = c;
        }
    }
    for (size_t m = n; m > 1; m--) {
        key_swap(&k[0], &k[m - 1]);
        for (size_t i = 0;;) {
            size_t c = 2 * i + 1;
            if (c >= m - 1)
                break;
            if (c + 1 < m - 1 && key_lt(&k[c], &k[c + 1]))
                c++;
            if (!key_lt(&k[i], &k[c]))
                break;
            key_swap(&k[i], &k[c]);
            i = c;
        }
    }
}

/* Quicksort (median of three, Hoare partition), heapsort past depth
 * levels, insertion sort for small ranges.  Not stable; that does not
 * matter, as records equal in (k1, k2, idx) cannot be told apart. */
static void intro_keys(fz_key_t *k, size_t n, unsigned depth)
{
    while (n > 16) {
        if (!depth--) {
            heap_keys(k, n);
            return;
        }
        size_t m = n / 2;
        if (key_lt(&k[m], &k[0]))
            key_swap(&k[m], &k[0]);
        if (key_lt(&k[n - 1], &k[m])) {
            key_swap(&k[n - 1], &k[m]);
            if (key_lt(&k[m], &k[0]))
                key_swap(&k[m], &k[0]);
        }
        fz_key_t p = k[m];
        size_t i = 0, j = n - 1;
        for (;;) {
            while (key_lt(&k[i], &p))
                i++;
            while (key_lt(&p, &k[j]))
                j--;
            if (i >= j)
                break;
            key_swap(&k[i], &k[j]);
            i++;
            j--;
        }
        /* [0, j] <= p <= [j + 1, n): both sides non-empty */
        size_t left = j + 1;
        if (left < n - left) {
            intro_keys(k, left, depth);
            k += left;
            n -= left;
        } else {
            intro_keys(k + left, n - left, depth);
            n = left;
        }
    }
    insertion_keys(k, n);
}

void fz_sort_keys(fz_key_t *k, size_t n)
{
    /* glibc's qsort (a merge sort calling a comparison function) took 18 %
     * of BC on a task program's runs, whose cells hold thousands of XUs. */
    unsigned depth = 0;
    for (size_t m = n; m > 1; m >>= 1)
        depth += 2;
    intro_keys(k, n, depth);
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
 * an introsort by (key's bits, position) keeps ties in input order. */
static int small_sort(uint64_t *key, uint32_t *idx, size_t n, uint64_t bits)
{
    fz_key_t *t = malloc(n * sizeof *t);
    if (!t)
        return OMPF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        t[i].k1 = key[i] & bits;
        t[i].k2 = i;
        t[i].idx = idx ? idx[i] : 0;
    }
    fz_sort_keys(t, n);
    for (size_t i = 0; i < n; i++)
        t[i].k1 = key[t[i].k2]; /* the whole key, read before it is moved */
    for (size_t i = 0; i < n; i++) {
        key[i] = t[i].k1;
        if (idx)
            idx[i] = t[i].idx;
    }
    free(t);
    return 0;
}

/* Bits in which the keys differ: digits outside them need no pass. */
static uint64_t varying_bits(const uint64_t *key, size_t n)
{
    uint64_t all_or = 0, all_and = ~0ull;
    for (size_t i = 0; i < n; i++) {
        all_or |= key[i];
        all_and &= key[i];
    }
    return all_or ^ all_and;
}

/* A bucket of at most LEAF keys stays in the L2 cache (1 MB here) while
 * it is sorted: 12 bytes a key and as much scratch, touched a pass at a
 * time. */
#define LEAF 65536

/* One stable counting pass: keys (and payload) from ks/is to kd/id by the
 * digit ((key & bits) >> shift) & mask (bits: those sorted by; the others
 * ride along even where they share a digit); cnt (mask + 1 entries) ends
 * holding each digit's end in kd. */
static void scatter(const uint64_t *ks, const uint32_t *is, uint64_t *kd, uint32_t *id,
                    size_t n, unsigned shift, size_t mask, size_t *cnt, uint64_t bits)
{
    memset(cnt, 0, (mask + 1) * sizeof *cnt);
    for (size_t i = 0; i < n; i++)
        cnt[((ks[i] & bits) >> shift) & mask]++;
    size_t sum = 0;
    for (size_t d = 0; d <= mask; d++) {
        size_t c = cnt[d];
        cnt[d] = sum;
        sum += c;
    }
    for (size_t i = 0; i < n; i++) {
        size_t p = cnt[((ks[i] & bits) >> shift) & mask]++;
        kd[p] = ks[i];
        if (is)
            id[p] = is[i];
    }
}

/* LSD with digits of w bits (8, 11 or 16) over the bits set in varying;
 * stable.  cnt holds 2^w entries. */
static void lsd(uint64_t *key, uint32_t *idx, uint64_t *k2, uint32_t *i2, size_t n,
                uint64_t varying, unsigned w, size_t *cnt, uint64_t bits)
{
    size_t mask = ((size_t)1 << w) - 1;
    uint64_t *ks = key, *kd = k2;
    uint32_t *is = idx, *id = i2;
    for (unsigned shift = 0; shift < 64 && (varying >> shift); shift += w) {
        if (!((varying >> shift) & mask))
            continue;
        scatter(ks, is, kd, id, n, shift, mask, cnt, bits);
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
}

/* Passes of w-bit digits (aligned at bit 0, as lsd() takes them) that
 * the varying bits need. */
static unsigned passes(uint64_t varying, unsigned w)
{
    unsigned p = 0;
    for (unsigned shift = 0; shift < 64; shift += w)
        p += ((varying >> shift) & (((uint64_t)1 << w) - 1)) != 0;
    return p;
}

/* The digit width for an in-cache bucket of m keys: a pass moves every
 * key (about 3 units) and clears and sums 2^w counters (1 unit). */
static unsigned leaf_width(size_t m, uint64_t varying)
{
    static const unsigned ws[] = {8, 11, 16};
    unsigned best = 8;
    double cost = 0;
    for (size_t i = 0; i < 3; i++) {
        double c = passes(varying, ws[i]) * (3.0 * (double)m + (double)((size_t)1 << ws[i]));
        if (i == 0 || c < cost) {
            cost = c;
            best = ws[i];
        }
    }
    return best;
}

/* Sorts key (and idx) in place, k2/i2 scratch of n.  Above LEAF keys, one
 * stable MSD pass on the 8 bits below the highest varying one splits them
 * into buckets, each sorted the same way (with its own varying bits) until
 * it is small enough for the cache: each key moves over the whole array a
 * bounded number of times (at most 8 levels), with 256 write streams that
 * stay in the TLB.  A 16-bit LSD pass over a large array scatters to 65536
 * pages: with 60 varying bits (BC's Morton keys) it took 62 ns per key at
 * 10^7 keys, this 24 (bench_sort). */
static void msd8(uint64_t *key, uint32_t *idx, uint64_t *k2, uint32_t *i2, size_t n,
                 uint64_t varying, size_t *cnt, uint64_t bits)
{
    if (!varying || n < 2)
        return;
    if (n <= LEAF) {
        lsd(key, idx, k2, i2, n, varying, leaf_width(n, varying), cnt, bits);
        return;
    }
    unsigned hi = 64 - (unsigned)__builtin_clzll(varying);
    unsigned sh = hi > 8 ? hi - 8 : 0;
    size_t end[256];
    scatter(key, idx, k2, i2, n, sh, 255, end, bits);
    uint64_t low = sh ? varying & ((1ull << sh) - 1) : 0;
    for (size_t d = 0; d < 256 && low; d++) {
        size_t a = d ? end[d - 1] : 0, m = end[d] - a;
        if (m > 1)
            msd8(k2 + a, idx ? i2 + a : NULL, key + a, idx ? idx + a : NULL, m,
                 varying_bits(k2 + a, m) & low, cnt, bits);
    }
    memcpy(key, k2, n * sizeof *key);
    if (idx)
        memcpy(idx, i2, n * sizeof *idx);
}

static int radix(uint64_t *key, uint32_t *idx, size_t n, uint64_t *kbuf, uint32_t *ibuf,
                 uint64_t bits)
{
    if (n < 2)
        return 0;
    if (n < 2048)
        return small_sort(key, idx, n, bits);
    uint64_t varying = varying_bits(key, n) & bits;
    if (!varying)
        return 0;
    uint64_t *k2 = kbuf ? kbuf : malloc(n * sizeof *k2);
    uint32_t *i2 = !idx ? NULL : ibuf ? ibuf : malloc(n * sizeof *i2);
    size_t *cnt = malloc(65536 * sizeof *cnt);
    int ok = k2 && (!idx || i2) && cnt;
    if (ok) {
        /* Up to 4 LEAFs, or up to 64 when two 16-bit passes cover the
         * varying bits (LGL's label nodes, CTC's start times within 4 s,
         * BC's values when they span few binades), plain 16-bit LSD is as
         * fast or faster (bench_sort). */
        if (n <= 4 * LEAF || (passes(varying, 16) <= 2 && n <= 64 * LEAF))
            lsd(key, idx, k2, i2, n, varying, 16, cnt, bits);
        else
            msd8(key, idx, k2, i2, n, varying, cnt, bits);
    }
    if (k2 != kbuf)
        free(k2);
    if (i2 != ibuf)
        free(i2);
    free(cnt);
    return ok ? 0 : OMPF_ENOMEM;
}

int fz_radix_sort(uint64_t *key, uint32_t *idx, size_t n)
{
    return radix(key, idx, n, NULL, NULL, ~0ull);
}

int fz_radix_sort_buf(uint64_t *key, uint32_t *idx, size_t n, uint64_t *kbuf,
                      uint32_t *ibuf)
{
    return radix(key, idx, n, kbuf, ibuf, ~0ull);
}

int fz_radix_sort_bits(uint64_t *key, size_t n, uint64_t bits, uint64_t *kbuf)
{
    return radix(key, NULL, n, kbuf, NULL, bits);
}

/* ---- in place ---------------------------------------------------------- */

/* The in-place sorts carry an optional payload (idx NULL: keys alone). */
static void insertion_u64(uint64_t *a, uint32_t *idx, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t x = a[i];
        uint32_t p = idx ? idx[i] : 0;
        size_t j = i;
        for (; j > 0 && x < a[j - 1]; j--) {
            a[j] = a[j - 1];
            if (idx)
                idx[j] = idx[j - 1];
        }
        a[j] = x;
        if (idx)
            idx[j] = p;
    }
}

/* American flag sort: the digit (bits of mask, at shift) of every key
 * counted, the keys moved to their digit's bucket by cycles of swaps,
 * each bucket sorted by the 8-bit digit below.  Bits above the digit are
 * the same for every key.  cnt, head, end: room for the digit's values. */
static void flag_pass(uint64_t *a, uint32_t *idx, size_t n, unsigned shift, uint64_t mask,
                      size_t *cnt, size_t *head, size_t *end);

static void flag_sort(uint64_t *a, uint32_t *idx, size_t n, unsigned shift)
{
    if (n <= 32) {
        insertion_u64(a, idx, n);
        return;
    }
    size_t cnt[256], head[256], end[256];
    flag_pass(a, idx, n, shift, 255, cnt, head, end);
}

static void flag_pass(uint64_t *a, uint32_t *idx, size_t n, unsigned shift, uint64_t mask,
                      size_t *cnt, size_t *head, size_t *end)
{
    size_t nb = (size_t)mask + 1;
    memset(cnt, 0, nb * sizeof *cnt);
    for (size_t i = 0; i < n; i++)
        cnt[(a[i] >> shift) & mask]++;
    for (size_t b = 0, at = 0; b < nb; b++) {
        head[b] = at;
        at += cnt[b];
        end[b] = at;
    }
    for (size_t b = 0; b < nb; b++)
        while (head[b] < end[b]) {
            uint64_t v = a[head[b]];
            uint32_t p = idx ? idx[head[b]] : 0;
            for (size_t d = (v >> shift) & mask; d != b; d = (v >> shift) & mask) {
                uint64_t t = a[head[d]];
                a[head[d]] = v;
                v = t;
                if (idx) {
                    uint32_t q = idx[head[d]];
                    idx[head[d]] = p;
                    p = q;
                }
                head[d]++;
            }
            if (idx)
                idx[head[b]] = p;
            a[head[b]++] = v;
        }
    if (shift == 0)
        return;
    unsigned next = shift > 8 ? shift - 8 : 0;
    for (size_t b = 0, at = 0; b < nb; at += cnt[b++])
        if (cnt[b] > 1)
            flag_sort(a + at, idx ? idx + at : NULL, cnt[b], next);
}

static void sort_in_place(uint64_t *key, uint32_t *idx, size_t n)
{
    if (n < 2)
        return;
    uint64_t lo = key[0], hi = key[0];
    int sorted = 1; /* as a run's XUs often come, in time order */
    for (size_t i = 1; i < n; i++) {
        sorted &= key[i] >= key[i - 1];
        lo = key[i] < lo ? key[i] : lo;
        hi = key[i] > hi ? key[i] : hi;
    }
    unsigned top = fz_bitlen(lo ^ hi); /* the bits above are all alike */
    if (!top || sorted)
        return;
    /* A wider first digit for many keys: its buckets then need about one
     * 8-bit pass each, not two ending in insertion sorts (measured: CTC's
     * sorts of 10^6 keys took 3 times the LSD radix sort with 8 bits). */
    unsigned w = n >= (1u << 16) ? 11 : 8;
    size_t *t = w > 8 ? malloc(3 * ((size_t)1 << w) * sizeof *t) : NULL;
    if (!t) {
        flag_sort(key, idx, n, top > 8 ? top - 8 : 0);
        return;
    }
    flag_pass(key, idx, n, top > w ? top - w : 0, ((uint64_t)1 << w) - 1, t,
              t + ((size_t)1 << w), t + ((size_t)2 << w));
    free(t);
}

void fz_sort_u64(uint64_t *key, size_t n)
{
    sort_in_place(key, NULL, n);
}

void fz_sort_u64_idx(uint64_t *key, uint32_t *idx, size_t n)
{
    sort_in_place(key, idx, n);
}
