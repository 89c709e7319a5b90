/*
 * CounterMiner-style repair of a multiplexed profile (hem.h,
 * docs/hem.md): per type and event, outliers (> mean + sigma*std) and
 * negative counts become missing; every missing value is then the mean of
 * the k nearest XUs of the same type that have the event.
 *
 * Neighbours are searched with k-d trees.  XUs differ in which events are
 * present (HEM windows), so donors are grouped by presence pattern D; for
 * an XU with present set Q, every pattern D gives one tree over the
 * common coordinates C = Q & D, shared by all XUs with the same Q; the
 * donors' values ride along in the tree (cache-friendly reads).  The nan-Euclidean weight |Q| / |C| makes distances
 * over different coordinate sets comparable.  Cost O(n log n) per pattern
 * pair; the number of patterns is capped (MAX_PATTERNS most frequent).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdtree.h"
#include "ompfuse/hem.h"

#define MAX_PATTERNS 64

void ompf_clean_opts_default(ompf_clean_opts_t *o)
{
    o->k = 5;
    o->sigma = 5.0;
    o->keep_negative = 0;
}

typedef struct {
    uint64_t mask;
    uint32_t j; /* index within the type */
} pj_t;

static int cmp_pj(const void *a, const void *b)
{
    const pj_t *x = a, *y = b;
    if (x->mask != y->mask)
        return x->mask < y->mask ? -1 : 1;
    return x->j < y->j ? -1 : (x->j > y->j);
}

typedef struct {
    uint64_t mask;
    size_t start, count; /* range in the sorted donor array */
} pattern_t;

static int cmp_pattern_count(const void *a, const void *b)
{
    const pattern_t *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->mask < y->mask ? -1 : (x->mask > y->mask);
}

typedef struct {
    double w;
    uint32_t j;
    uint64_t D;
    const double *vals; /* the donor's values, stored in the tree */
} cand_t;

static int cmp_cand(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->w != y->w)
        return x->w < y->w ? -1 : 1;
    return x->j < y->j ? -1 : (x->j > y->j);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y);
}

/* Working state of one type. */
typedef struct {
    size_t m;          /* XUs of the type */
    unsigned ne;
    double **rows;     /* value rows */
    uint64_t *pm;      /* present mask after flagging */
    uint64_t *need;    /* missing mask (to fill) */
    uint64_t *orig;    /* originally missing mask */
    double *scale, *median;
    int *has_median;
} ty_t;

static unsigned popcount64(uint64_t x)
{
    return (unsigned)__builtin_popcountll(x);
}

/* Mean and population std of the present values of event e. */
static void moments(const ty_t *t, unsigned e, double *mean, double *sd,
                    size_t *cnt)
{
    size_t n = 0;
    double s = 0.0;
    for (size_t j = 0; j < t->m; j++)
        if (t->pm[j] >> e & 1u) {
            s += t->rows[j][e];
            n++;
        }
    *cnt = n;
    *mean = n ? s / (double)n : 0.0;
    double v = 0.0;
    for (size_t j = 0; j < t->m; j++)
        if (t->pm[j] >> e & 1u) {
            double d = t->rows[j][e] - *mean;
            v += d * d;
        }
    *sd = n ? sqrt(v / (double)n) : 0.0;
}

static int type_stats(ty_t *t, const ompf_clean_opts_t *o,
                      ompf_clean_count_t *cnt)
{
    for (unsigned e = 0; e < t->ne; e++) {
        double mean, sd;
        size_t n;
        moments(t, e, &mean, &sd, &n);
        double thr = mean + o->sigma * sd;
        for (size_t j = 0; j < t->m && n; j++) {
            if (!(t->pm[j] >> e & 1u))
                continue;
            double v = t->rows[j][e];
            int neg = !o->keep_negative && v < 0.0;
            int out = sd > 0.0 && v > thr;
            if (!neg && !out)
                continue;
            if (cnt) {
                if (neg)
                    cnt[e].negative++;
                else
                    cnt[e].outliers++;
            }
            t->rows[j][e] = OMPF_MISSING;
            t->pm[j] &= ~(1ull << e);
            t->need[j] |= 1ull << e;
        }
        moments(t, e, &mean, &sd, &n);
        t->scale[e] = (sd > 0.0 && isfinite(sd)) ? sd : 1.0;
        t->has_median[e] = n > 0;
        if (n) {
            double *tmp = malloc(n * sizeof(double));
            if (!tmp)
                return OMPF_ENOMEM;
            size_t k = 0;
            for (size_t j = 0; j < t->m; j++)
                if (t->pm[j] >> e & 1u)
                    tmp[k++] = t->rows[j][e];
            qsort(tmp, n, sizeof(double), cmp_double);
            t->median[e] = (n % 2) ? tmp[n / 2]
                                   : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
            free(tmp);
        }
    }
    return 0;
}

/* Projects row j on the events of C, scaled. */
static void project(const ty_t *t, size_t j, uint64_t C, double *out)
{
    unsigned d = 0;
    for (unsigned e = 0; e < t->ne; e++)
        if (C >> e & 1u)
            out[d++] = t->rows[j][e] / t->scale[e];
}

/* Tree over the donors of pattern pat, coordinates C, payload: the
 * donors' values of all ne events. */
static ompf_kd_t *tree_for(const ty_t *t, const pj_t *donors,
                           const pattern_t *pat, uint64_t C)
{
    unsigned dim = popcount64(C), stride = dim + t->ne;
    double *rows = malloc(pat->count * stride * sizeof(double) + 1);
    uint32_t *ids = malloc(pat->count * sizeof(uint32_t) + 1);
    ompf_kd_t *kd = NULL;
    if (rows && ids) {
        for (size_t i = 0; i < pat->count; i++) {
            uint32_t j = donors[pat->start + i].j;
            double *r = rows + i * stride;
            project(t, j, C, r);
            memcpy(r + dim, t->rows[j], t->ne * sizeof(double));
            ids[i] = j;
        }
        kd = ompf_kd_build(rows, ids, pat->count, dim, stride);
    }
    free(rows);
    free(ids);
    return kd;
}

static int clean_type(ty_t *t, const ompf_clean_opts_t *o,
                      ompf_clean_count_t *cnt)
{
    int rc = type_stats(t, o, cnt);
    if (rc)
        return rc;
    size_t m = t->m;
    unsigned ne = t->ne;
    pj_t *donors = malloc((m ? m : 1) * sizeof(pj_t));
    pj_t *queries = malloc((m ? m : 1) * sizeof(pj_t));
    pattern_t *pats = malloc((m ? m : 1) * sizeof(pattern_t));
    size_t kq = o->k;
    cand_t *cands = malloc(MAX_PATTERNS * kq * sizeof(cand_t) + 1);
    double *dist = malloc(kq * sizeof(double) + 1);
    uint32_t *ids = malloc(kq * sizeof(uint32_t) + 1);
    double *q = malloc(ne * sizeof(double) + 1);
    ompf_kd_t *qt[MAX_PATTERNS];
    size_t nqt = 0;
    rc = OMPF_ENOMEM;
    if (!donors || !queries || !pats || !cands || !dist || !ids || !q)
        goto out;

    size_t nd = 0, nq = 0;
    uint64_t have_any = 0;
    for (size_t j = 0; j < m; j++) {
        if (t->pm[j]) {
            donors[nd].mask = t->pm[j];
            donors[nd++].j = (uint32_t)j;
            have_any |= t->pm[j];
        }
        if (t->need[j]) {
            queries[nq].mask = t->pm[j];
            queries[nq++].j = (uint32_t)j;
        }
    }
    if (nq == 0) {
        rc = 0;
        goto out;
    }
    qsort(donors, nd, sizeof(pj_t), cmp_pj);
    qsort(queries, nq, sizeof(pj_t), cmp_pj);
    size_t np = 0;
    for (size_t i = 0; i < nd; i++) {
        if (np && pats[np - 1].mask == donors[i].mask) {
            pats[np - 1].count++;
        } else {
            pats[np].mask = donors[i].mask;
            pats[np].start = i;
            pats[np++].count = 1;
        }
    }
    if (np > MAX_PATTERNS) {
        /* Keep the most frequent presence patterns as donors (HEM windows
         * give few patterns; this bounds the trees per query pattern). */
        qsort(pats, np, sizeof(pattern_t), cmp_pattern_count);
        np = MAX_PATTERNS;
    }

    for (size_t qi = 0; qi < nq;) {
        uint64_t Q = queries[qi].mask;
        size_t qe = qi;
        uint64_t need_or = 0;
        while (qe < nq && queries[qe].mask == Q)
            need_or |= t->need[queries[qe++].j];
        /* Trees relevant to this query pattern (rarely shared with
         * another pattern: built per group and freed after it, which
         * bounds memory by one copy of the type's donors). */
        uint64_t qc[MAX_PATTERNS], qd[MAX_PATTERNS];
        for (size_t i = 0; i < nqt; i++)
            ompf_kd_free(qt[i]);
        nqt = 0;
        for (size_t pi = 0; pi < np; pi++) {
            uint64_t C = pats[pi].mask & Q;
            if (!C || !(pats[pi].mask & need_or))
                continue;
            ompf_kd_t *kd = tree_for(t, donors, &pats[pi], C);
            if (!kd)
                goto out;
            qt[nqt] = kd;
            qc[nqt] = C;
            qd[nqt++] = pats[pi].mask;
        }
        unsigned qn = popcount64(Q);
        for (size_t x = qi; x < qe; x++) {
            uint32_t j = queries[x].j;
            size_t nc = 0;
            for (size_t ti = 0; ti < nqt; ti++) {
                project(t, j, qc[ti], q);
                size_t got = ompf_kd_knn(qt[ti], q, kq, dist, ids);
                double w = (double)qn / (double)popcount64(qc[ti]);
                unsigned dim = popcount64(qc[ti]);
                for (size_t g = 0; g < got; g++) {
                    cands[nc].w = dist[g] * w;
                    cands[nc].j = ompf_kd_id(qt[ti], ids[g]);
                    cands[nc].vals = ompf_kd_row(qt[ti], ids[g]) + dim;
                    cands[nc++].D = qd[ti];
                }
            }
            qsort(cands, nc, sizeof(cand_t), cmp_cand);
            uint64_t need = t->need[j];
            for (unsigned e = 0; e < ne; e++) {
                if (!(need >> e & 1u))
                    continue;
                int was_missing = (t->orig[j] >> e & 1u) != 0;
                if (!(have_any >> e & 1u)) {
                    if (cnt)
                        cnt[e].unfilled++;
                    continue;
                }
                double s = 0.0;
                size_t used = 0;
                for (size_t c = 0; c < nc && used < kq; c++)
                    if (cands[c].D >> e & 1u) {
                        s += cands[c].vals[e];
                        used++;
                    }
                double v;
                if (used) {
                    v = s / (double)used;
                } else if (t->has_median[e]) {
                    v = t->median[e];
                    if (cnt)
                        cnt[e].fallback++;
                } else {
                    if (cnt)
                        cnt[e].unfilled++;
                    continue;
                }
                t->rows[j][e] = v;
                if (cnt && was_missing)
                    cnt[e].missing++;
            }
        }
        qi = qe;
    }
    rc = 0;
out:
    for (size_t i = 0; i < nqt; i++)
        ompf_kd_free(qt[i]);
    free(donors);
    free(queries);
    free(pats);
    free(cands);
    free(dist);
    free(ids);
    free(q);
    return rc;
}

int ompf_hem_clean(ompf_profile_t *p, const ompf_clean_opts_t *opts,
                   ompf_clean_count_t *counts, ompf_error_t *err)
{
    ompf_clean_opts_t o;
    if (opts)
        o = *opts;
    else
        ompf_clean_opts_default(&o);
    if (!p)
        return ompf_error_set(err, OMPF_EINVAL, "clean: no profile");
    if (o.k == 0 || o.k > 1000 || !(o.sigma > 0.0))
        return ompf_error_set(err, OMPF_EINVAL,
                              "clean: k must be 1..1000 and sigma > 0 "
                              "(got k=%u, sigma=%g)", o.k, o.sigma);
    size_t ne = ompf_event_count(p);
    if (ne > 64)
        return ompf_error_set(err, OMPF_EUNSUPP,
                              "clean: the profile has %zu events; at most 64 "
                              "are supported", ne);
    if (counts)
        memset(counts, 0, ne * sizeof *counts);
    size_t n = ompf_xu_count(p), nt = ompf_construct_count(p);
    size_t *start = calloc(nt + 2, sizeof(size_t));
    uint32_t *order = malloc((n ? n : 1) * sizeof(uint32_t));
    ty_t t;
    memset(&t, 0, sizeof t);
    t.ne = (unsigned)ne;
    t.rows = malloc((n ? n : 1) * sizeof(double *));
    t.pm = malloc((n ? n : 1) * sizeof(uint64_t));
    t.need = malloc((n ? n : 1) * sizeof(uint64_t));
    t.orig = malloc((n ? n : 1) * sizeof(uint64_t));
    t.scale = malloc((ne ? ne : 1) * sizeof(double));
    t.median = malloc((ne ? ne : 1) * sizeof(double));
    t.has_median = malloc((ne ? ne : 1) * sizeof(int));
    int rc = OMPF_ENOMEM;
    if (!start || !order || !t.rows || !t.pm || !t.need || !t.orig ||
        !t.scale || !t.median || !t.has_median)
        goto out;
    /* Counting sort of XU indices by type (type == nt: out of range). */
    for (size_t i = 0; i < n; i++) {
        uint32_t ty = ompf_xu_get(p, i)->type;
        start[(ty < nt ? ty : nt) + 1]++;
    }
    for (size_t i = 1; i <= nt + 1; i++)
        start[i] += start[i - 1];
    {
        size_t *pos = malloc((nt + 1) * sizeof(size_t));
        if (!pos)
            goto out;
        memcpy(pos, start, (nt + 1) * sizeof(size_t));
        for (size_t i = 0; i < n; i++) {
            uint32_t ty = ompf_xu_get(p, i)->type;
            order[pos[ty < nt ? ty : nt]++] = (uint32_t)i;
        }
        free(pos);
    }
    for (size_t ty = 0; ty <= nt && ne; ty++) {
        size_t lo = start[ty], hi = start[ty + 1];
        t.m = hi - lo;
        if (!t.m)
            continue;
        for (size_t j = 0; j < t.m; j++) {
            double *row = ompf_xu_values(p, order[lo + j]);
            t.rows[j] = row;
            uint64_t pm = 0;
            for (size_t e = 0; e < ne; e++)
                if (!ompf_is_missing(row[e]) && isfinite(row[e]))
                    pm |= 1ull << e;
            t.pm[j] = pm;
            uint64_t all = ne == 64 ? ~0ull : ((1ull << ne) - 1);
            t.need[j] = t.orig[j] = all & ~pm;
        }
        rc = clean_type(&t, &o, counts);
        if (rc)
            goto out;
    }
    char buf[64];
    rc = ompf_meta_set(p, "cleaned", "1");
    snprintf(buf, sizeof buf, "%u", o.k);
    if (!rc)
        rc = ompf_meta_set(p, "clean_k", buf);
    snprintf(buf, sizeof buf, "%g", o.sigma);
    if (!rc)
        rc = ompf_meta_set(p, "clean_sigma", buf);
    if (!rc)
        rc = ompf_meta_set(p, "clean_keep_negative", o.keep_negative ? "1" : "0");
out:
    free(start);
    free(order);
    free(t.rows);
    free(t.pm);
    free(t.need);
    free(t.orig);
    free(t.scale);
    free(t.median);
    free(t.has_median);
    if (rc == OMPF_ENOMEM)
        return ompf_error_set(err, rc, "clean: out of memory");
    if (rc)
        return ompf_error_set(err, rc, "clean: %s", ompf_strerror(rc));
    return 0;
}
