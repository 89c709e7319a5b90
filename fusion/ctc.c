/* CTC (IWOMP 2017 §3): per type, each run's XUs in chronological order of
 * their start time relative to the run's start; XU j of every run forms
 * fused XU j.  Equal start times are ordered by end time, then label
 * order, then XU index, so the result does not depend on record order. */
#include <string.h>

#include "fz.h"

/* Sorts the XUs of type t of run R chronologically into idx. */
static int chrono(const fz_ctx_t *c, const fz_run_t *R, size_t t,
                  uint64_t *key, uint32_t *idx, size_t cnt)
{
    for (size_t j = 0; j < cnt; j++) {
        idx[j] = R->bytype[R->tstart[t] + j];
        key[j] = fz_xu_start(R, idx[j]);
    }
    int rc = fz_radix_sort(key, idx, cnt);
    for (size_t a = 0; a < cnt && !rc;) {
        size_t b = a + 1;
        while (b < cnt && key[b] == key[a])
            b++;
        if (b - a > 1) {
            fz_key_t *k = malloc((b - a) * sizeof *k);
            if (!k)
                return OMPF_ENOMEM;
            for (size_t j = a; j < b; j++) {
                k[j - a].k1 = fz_xu_end(R, idx[j]);
                k[j - a].k2 = c->urank[fz_xu_ulab(R, idx[j])];
                k[j - a].idx = idx[j];
            }
            fz_sort_keys(k, b - a);
            for (size_t j = a; j < b; j++)
                idx[j] = k[j - a].idx;
            free(k);
        }
        a = b;
    }
    return rc;
}

int fz_ctc(fz_ctx_t *c)
{
    size_t n = c->n, maxn = fz_type_max(c);
    int rc = 0;
    uint32_t *list = malloc(maxn * sizeof *list);
    uint64_t *key = malloc(maxn * sizeof *key);
    if (!list || !key) {
        rc = OMPF_ENOMEM;
        goto out;
    }
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
            rc = chrono(c, R, t, key, list, R->tstart[t + 1] - R->tstart[t]);
            for (size_t j = 0; j < m && !rc; j++)
                rows[j * n + r] = list[j];
        }
        c->rep->types[t].fused = rc ? 0 : m;
        fz_progress_type(c, t);
    }
out:
    free(list);
    free(key);
    return rc;
}
