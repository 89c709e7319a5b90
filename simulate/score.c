/* Per-XU error of a profile against the simulator's truth. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v); the mean of the middle two when n is even. */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct idmap {
    size_t cap; /* power of two */
    uint64_t *key;
    size_t *val; /* row + 1; 0 = empty */
} idmap_t;

static size_t hash_id(uint64_t k) { return (size_t)sim_mix64(k); }

static int idmap_build(idmap_t *m, const ompf_profile_t *p)
{
    size_t n = ompf_xu_count(p);
    m->cap = 16;
    while (m->cap < 2 * n)
        m->cap *= 2;
    m->key = malloc(m->cap * sizeof *m->key);
    m->val = calloc(m->cap, sizeof *m->val);
    if (!m->key || !m->val)
        return OMPF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = ompf_xu_get(p, i)->id;
        size_t h = hash_id(k) & (m->cap - 1);
        while (m->val[h] && m->key[h] != k)
            h = (h + 1) & (m->cap - 1);
        m->key[h] = k;
        m->val[h] = i + 1;
    }
    return 0;
}

static long idmap_get(const idmap_t *m, uint64_t k)
{
    size_t h = hash_id(k) & (m->cap - 1);
    while (m->val[h]) {
        if (m->key[h] == k)
            return (long)(m->val[h] - 1);
        h = (h + 1) & (m->cap - 1);
    }
    return -1;
}

/* Index of run id in the truth's "truth_runs" list, or -1. */
static long truth_run_index(const ompf_profile_t *truth, uint64_t run_id)
{
    const char *s = ompf_meta_get(truth, "truth_runs");
    long k = 0;
    while (s && *s) {
        char *end;
        uint64_t id = strtoull(s, &end, 16);
        if (end == s)
            return -1;
        if (id == run_id)
            return k;
        k++;
        s = *end == ',' ? end + 1 : end;
    }
    return -1;
}

int ompf_sim_score(const ompf_profile_t *target, const ompf_profile_t *truth,
                   ompf_sim_score_t *out, ompf_error_t *err)
{
    if (!target || !truth || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_sim_score: NULL argument");
    memset(out, 0, sizeof *out);
    const char *mode = ompf_meta_get(truth, "mode");
    if (!mode || strcmp(mode, OMPF_MODE_TRUTH))
        return ompf_error_set(err, OMPF_EINVAL,
                              "the truth profile has mode '%s', not 'truth': give the truth.ompf "
                              "written by ompfuse simulate",
                              mode ? mode : "(none)");
    size_t nev = ompf_event_count(target), nsrc = ompf_source_count(target);
    uint64_t base_run;
    size_t base_src = 0;
    if (nsrc > 0) {
        const ompf_event_t *e0 = nev ? ompf_event_get(target, 0) : NULL;
        if (e0 && e0->source >= 0 && (size_t)e0->source < nsrc)
            base_src = (size_t)e0->source;
        base_run = ompf_source_get(target, (uint32_t)base_src)->run_id;
    } else {
        base_run = ompf_profile_run_id(target);
    }
    long k = truth_run_index(truth, base_run);
    if (k < 0)
        return ompf_error_set(err, OMPF_ENOTFOUND,
                              "run %016" PRIx64 " (the base run of the profile) is not in the truth; "
                              "score profiles against the truth.ompf of the same simulation",
                              base_run);
    int *tmap = malloc((nev ? nev : 1) * sizeof *tmap);
    double *xerr = malloc((ompf_xu_count(target) + 1) * sizeof *xerr);
    double *eerr = malloc((nev + 1) * sizeof *eerr);
    idmap_t map = {0, NULL, NULL};
    int rc = 0;
    if (!tmap || !xerr || !eerr || idmap_build(&map, truth)) {
        rc = ompf_error_set(err, OMPF_ENOMEM, "scoring: out of memory");
        goto out;
    }
    for (size_t i = 0; i < nev; i++) {
        tmap[i] = ompf_event_find(truth, ompf_event_get(target, (uint32_t)i)->name);
        out->events += tmap[i] >= 0;
    }
    if (out->events == 0) {
        rc = ompf_error_set(err, OMPF_EMISMATCH,
                            "the profile has no event of the truth; is it from this simulation?");
        goto out;
    }
    size_t nx = ompf_xu_count(target), ns = 0;
    out->xus = nx;
    for (size_t i = 0; i < nx; i++) {
        uint64_t id = nsrc ? ompf_xu_provenance_const(target, i)[base_src]
                           : ompf_xu_get(target, i)->id;
        long row = id == OMPF_NONE64 || id > UINT32_MAX
                       ? -1
                       : idmap_get(&map, ((uint64_t)k << 32) | id);
        if (row < 0) {
            out->unmatched++;
            continue;
        }
        const double *v = ompf_xu_values_const(target, i);
        const double *t = ompf_xu_values_const(truth, (size_t)row);
        size_t ne = 0;
        for (size_t e = 0; e < nev; e++) {
            if (tmap[e] < 0)
                continue;
            double tv = t[tmap[e]];
            if (ompf_is_missing(v[e])) {
                eerr[ne++] = 1.0;
                out->missing++;
            } else {
                eerr[ne++] = fabs(v[e] - tv) / (fabs(tv) > 1 ? fabs(tv) : 1.0);
            }
            if (eerr[ne - 1] > out->worst)
                out->worst = eerr[ne - 1];
        }
        xerr[ns++] = median(eerr, ne);
    }
    out->scored = ns;
    if (ns) {
        double sum = 0;
        for (size_t i = 0; i < ns; i++)
            sum += xerr[i];
        out->mean = sum / (double)ns;
        out->median = median(xerr, ns); /* sorts */
        size_t r = (size_t)ceil(0.9 * (double)ns);
        out->p90 = xerr[(r ? r : 1) - 1];
    }
out:
    free(tmap);
    free(xerr);
    free(eerr);
    free(map.key);
    free(map.val);
    return rc;
}

int ompf_sim_truth_extract(const ompf_profile_t *truth, size_t k, ompf_profile_t **out,
                           ompf_error_t *err)
{
    if (!truth || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_sim_truth_extract: NULL argument");
    *out = NULL;
    size_t nruns = ompf_sim_truth_run_count(truth);
    const char *mode = ompf_meta_get(truth, "mode");
    if (!mode || strcmp(mode, OMPF_MODE_TRUTH) || k >= nruns)
        return ompf_error_set(err, OMPF_EINVAL,
                              "truth run %zu does not exist (the truth profile has %zu runs)", k,
                              nruns);
    /* Run id: k-th entry of truth_runs. */
    const char *s = ompf_meta_get(truth, "truth_runs");
    for (size_t i = 0; i < k; i++)
        s = strchr(s, ',') + 1;
    uint64_t run_id = strtoull(s, NULL, 16);
    const char *ts = ompf_meta_get(truth, "team_size");
    size_t T = ts ? strtoull(ts, NULL, 10) : 0;
    ompf_profile_t *p;
    int rc = ompf_profile_create(&p);
    if (rc)
        return ompf_error_set(err, rc, "out of memory");
    for (size_t i = 0; i < ompf_meta_count(truth) && !rc; i++) {
        const char *key, *val;
        ompf_meta_at(truth, i, &key, &val);
        if (!strcmp(key, "truth_runs") || !strncmp(key, "truth_run.", 10) || !strcmp(key, "run_id"))
            continue;
        rc = ompf_meta_set(p, key, !strcmp(key, "mode") ? OMPF_MODE_RUN : val);
    }
    if (!rc)
        rc = ompf_profile_set_run_id(p, run_id);
    size_t E = ompf_event_count(truth);
    for (uint32_t e = 0; e < E && !rc; e++)
        rc = ompf_event_add(p, ompf_event_get(truth, e), NULL);
    for (uint32_t c = 0; c < ompf_construct_count(truth) && !rc; c++)
        rc = ompf_construct_add(p, ompf_construct_get(truth, c), NULL);
    size_t base = k * T;
    for (size_t t = 0; t < T && !rc; t++) {
        const ompf_thread_t *src = ompf_thread_get_const(truth, (uint32_t)(base + t));
        uint32_t idx;
        if (!src) {
            rc = OMPF_EFORMAT;
            break;
        }
        if ((rc = ompf_thread_add(p, src->os_tid, &idx)))
            break;
        ompf_thread_t *dst = ompf_thread_get(p, idx);
        memcpy(dst->total, src->total, E * sizeof *dst->total);
        memcpy(dst->gap, src->gap, E * sizeof *dst->gap);
        memcpy(dst->enabled_ns, src->enabled_ns, E * sizeof *dst->enabled_ns);
        memcpy(dst->running_ns, src->running_ns, E * sizeof *dst->running_ns);
    }
    for (size_t i = 0; i < ompf_xu_count(truth) && !rc; i++) {
        const ompf_xu_t *x = ompf_xu_get(truth, i);
        if ((x->id >> 32) != k)
            continue;
        ompf_xu_t y = *x;
        y.id = x->id & 0xffffffffu;
        y.thread = (uint32_t)(x->thread - base);
        rc = ompf_label_import(p, truth, x->label, &y.label);
        if (!rc)
            rc = ompf_xu_add(p, &y, ompf_xu_values_const(truth, i));
    }
    if (rc) {
        ompf_profile_destroy(p);
        return ompf_error_set(err, rc, "cannot extract truth run %zu: %s", k, ompf_strerror(rc));
    }
    *out = p;
    return 0;
}
