/* Random pairing (a control: what meaningless fusion scores).  Per type,
 * each run's XUs are shuffled with a stream derived from (seed, type, run);
 * XU j of every shuffled list forms fused XU j. */
#include "fz.h"

int fz_random(fz_ctx_t *c)
{
    size_t n = c->n;
    int rc = 0;
    uint32_t *list = malloc(fz_type_max(c) * sizeof *list);
    if (!list)
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
        for (size_t r = 0; r < n; r++) {
            fz_run_t *R = &c->runs[r];
            size_t cnt = R->tstart[t + 1] - R->tstart[t];
            for (size_t j = 0; j < cnt; j++)
                list[j] = fz_typed(R, t, j);
            uint64_t s = fz_stream(c->opts->seed, t, r);
            for (size_t j = cnt; j > 1; j--) { /* Fisher-Yates */
                size_t q = (size_t)fz_below(&s, j);
                uint32_t tmp = list[j - 1];
                list[j - 1] = list[q];
                list[q] = tmp;
            }
            for (size_t j = 0; j < m; j++)
                rows[j * n + r] = list[j];
        }
        c->rep->types[t].fused = m;
        fz_progress_type(c, t);
    }
    free(list);
    return rc;
}
