/* The reader's id maps (label, XU, construct ids -> index): direct tables
 * while the ids are dense, an open-addressing hash otherwise.  The OMPT
 * tool gives every thread ids of its own, (thread + 1) << 40 | sequence
 * number, so its ids are dense per thread but far apart: one direct table
 * per thread keeps them at 4 bytes an id and one sequential-ish load a
 * lookup, where a hash of 10^7 ids was half of reading such a file. */
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

#define IDMAP_NONE UINT32_MAX
#define LOW_MASK ((1ull << FMT_IDMAP_SEG_BITS) - 1)

void fmt_idmap_free(fmt_idmap_t *m)
{
    free(m->seg0.dense);
    for (size_t s = 0; m->seg && s < FMT_IDMAP_SEGS; s++)
        free(m->seg[s].dense);
    free(m->seg);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static inline size_t idmap_slot(uint64_t k, size_t mask)
{
    k ^= k >> 33; /* splitmix64 finaliser */
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb3fe1a85ec53ULL;
    k ^= k >> 33;
    return (size_t)k & mask;
}

static int hash_grow(fmt_idmap_t *m, size_t need);

static int hash_put(fmt_idmap_t *m, uint64_t key, uint32_t val, uint32_t *old)
{
    if ((m->n + 1) * 10 > m->cap * 7 && hash_grow(m, m->n + 1))
        return OMPF_ENOMEM;
    size_t mask = m->cap - 1;
    for (size_t s = idmap_slot(key, mask);; s = (s + 1) & mask) {
        if (m->vals[s] == IDMAP_NONE) {
            m->keys[s] = key;
            m->vals[s] = val;
            m->n++;
            *old = IDMAP_NONE;
            return 0;
        }
        if (m->keys[s] == key) {
            *old = m->vals[s];
            return 0;
        }
    }
}

static int hash_grow(fmt_idmap_t *m, size_t need)
{
    size_t cap = m->cap ? m->cap : 1024;
    while (need * 10 > cap * 7)
        cap *= 2;
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint32_t *vals = malloc(cap * sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return OMPF_ENOMEM;
    }
    memset(vals, 0xff, cap * sizeof *vals);
    uint64_t *ok = m->keys;
    uint32_t *ov = m->vals;
    size_t ocap = m->cap;
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    m->n = 0;
    uint32_t dummy;
    for (size_t i = 0; i < ocap; i++)
        if (ov[i] != IDMAP_NONE)
            hash_put(m, ok[i], ov[i], &dummy);
    free(ok);
    free(ov);
    return 0;
}

/* The direct table of key, or NULL when it has none. */
static inline fmt_idmap_seg_t *seg_of(const fmt_idmap_t *m, uint64_t key)
{
    uint64_t s = key >> FMT_IDMAP_SEG_BITS;
    if (!s)
        return (fmt_idmap_seg_t *)&m->seg0;
    return s < FMT_IDMAP_SEGS && m->seg ? &m->seg[s] : NULL;
}

/* Leaves the direct tables: moves every entry into the hash. */
static int idmap_to_hash(fmt_idmap_t *m)
{
    size_t n = m->n;
    m->n = 0;
    m->hashed = 1;
    if (hash_grow(m, n + 1)) {
        m->hashed = 0;
        m->n = n;
        return OMPF_ENOMEM;
    }
    uint32_t dummy;
    for (uint64_t s = 0; s < (m->seg ? FMT_IDMAP_SEGS : 1u); s++) {
        fmt_idmap_seg_t *g = s ? &m->seg[s] : &m->seg0;
        for (size_t i = 0; i < g->cap; i++)
            if (g->dense[i] != IDMAP_NONE)
                hash_put(m, s << FMT_IDMAP_SEG_BITS | i, g->dense[i], &dummy);
        free(g->dense);
        memset(g, 0, sizeof *g);
    }
    free(m->seg);
    m->seg = NULL;
    m->slots = 0;
    return 0;
}

int fmt_idmap_put(fmt_idmap_t *m, uint64_t key, uint32_t val, uint32_t *old)
{
    if (m->hashed)
        return hash_put(m, key, val, old);
    if (key >> FMT_IDMAP_SEG_BITS && key >> FMT_IDMAP_SEG_BITS < FMT_IDMAP_SEGS && !m->seg &&
        !(m->seg = calloc(FMT_IDMAP_SEGS, sizeof *m->seg)))
        return OMPF_ENOMEM;
    fmt_idmap_seg_t *g = seg_of(m, key);
    uint64_t low = key & LOW_MASK, spread = m->spread ? m->spread : 4;
    /* Direct while each table stays within spread slots per entry. */
    if (!g || low >= spread * (g->n + 1) + 65536) {
        if (idmap_to_hash(m))
            return OMPF_ENOMEM;
        return hash_put(m, key, val, old);
    }
    if (low >= g->cap) {
        size_t cap = g->cap ? g->cap : 1024;
        while (cap <= low)
            cap *= 2;
        /* and all tables within spread slots per entry, plus 4 MB: ids
         * spread over many threads' ranges, one or two each, go to the
         * hash */
        if (m->slots - g->cap + cap > spread * (m->n + 1) + ((size_t)1 << 20)) {
            if (idmap_to_hash(m))
                return OMPF_ENOMEM;
            return hash_put(m, key, val, old);
        }
        uint32_t *d = realloc(g->dense, cap * sizeof *d);
        if (!d)
            return OMPF_ENOMEM;
        memset(d + g->cap, 0xff, (cap - g->cap) * sizeof *d);
        m->slots += cap - g->cap;
        g->dense = d;
        g->cap = cap;
    }
    *old = g->dense[low];
    if (*old == IDMAP_NONE) {
        g->dense[low] = val;
        g->n++;
        m->n++;
    }
    return 0;
}

uint32_t fmt_idmap_get(const fmt_idmap_t *m, uint64_t key)
{
    if (!m->hashed) {
        const fmt_idmap_seg_t *g = seg_of(m, key);
        uint64_t low = key & LOW_MASK;
        return g && low < g->cap ? g->dense[low] : IDMAP_NONE;
    }
    if (!m->cap)
        return IDMAP_NONE;
    size_t mask = m->cap - 1;
    for (size_t s = idmap_slot(key, mask);; s = (s + 1) & mask) {
        if (m->vals[s] == IDMAP_NONE)
            return IDMAP_NONE;
        if (m->keys[s] == key)
            return m->vals[s];
    }
}

void fmt_idmap_set(fmt_idmap_t *m, uint64_t key, uint32_t val)
{
    if (!m->hashed) {
        fmt_idmap_seg_t *g = seg_of(m, key);
        uint64_t low = key & LOW_MASK;
        if (g && low < g->cap && g->dense[low] != IDMAP_NONE)
            g->dense[low] = val;
        return;
    }
    if (!m->cap)
        return;
    size_t mask = m->cap - 1;
    for (size_t s = idmap_slot(key, mask);; s = (s + 1) & mask) {
        if (m->vals[s] == IDMAP_NONE)
            return;
        if (m->keys[s] == key) {
            m->vals[s] = val;
            return;
        }
    }
}

/* Every value slot of m, direct tables and hash alike: fn(slot, key). */
#define IDMAP_EACH(m, KEY, VAL, BODY)                                                  \
    do {                                                                               \
        for (uint64_t s_ = 0; !(m)->hashed && s_ < ((m)->seg ? FMT_IDMAP_SEGS : 1u); s_++) { \
            const fmt_idmap_seg_t *g_ = s_ ? &(m)->seg[s_] : &(m)->seg0;               \
            for (size_t i_ = 0; i_ < g_->cap; i_++) {                                  \
                uint32_t *VAL = &g_->dense[i_];                                        \
                uint64_t KEY = s_ << FMT_IDMAP_SEG_BITS | i_;                          \
                if (*VAL != IDMAP_NONE) {                                              \
                    BODY;                                                              \
                }                                                                      \
            }                                                                          \
        }                                                                              \
        for (size_t i_ = 0; (m)->hashed && i_ < (m)->cap; i_++) {                      \
            uint32_t *VAL = &(m)->vals[i_];                                            \
            uint64_t KEY = (m)->keys[i_];                                              \
            if (*VAL != IDMAP_NONE) {                                                  \
                BODY;                                                                  \
            }                                                                          \
        }                                                                              \
    } while (0)

void fmt_idmap_remap(fmt_idmap_t *m, const uint32_t *to, uint32_t n)
{
    IDMAP_EACH(m, key, v, (void)key; if (*v < n) *v = to[*v]);
}

int fmt_idmap_key_of(const fmt_idmap_t *m, uint32_t val, uint64_t *key)
{
    IDMAP_EACH(m, k, v, if (*v == val) {
        *key = k;
        return 1;
    });
    return 0;
}
