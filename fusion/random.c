/* Random pairing (a control: what meaningless fusion scores).  Per type,
 * each run's XUs are shuffled with a stream derived from (seed, type, run);
 * XU j of every shuffled list forms fused XU j. */
#include "fz.h"

int fz_random(fz_ctx_t *c)
{
    size_t n = c->n;
    int rc = 0;
    uint32_t **lists = calloc(n, sizeof *lists);
    uint32_t *tuple = malloc(n * sizeof *tuple);
    if (!lists || !tuple) {
        rc = OMPF_ENOMEM;
        goto out;
    }
    for (size_t t = 0; t < c->n_types && !rc; t++) {
        size_t m = fz_type_min(c, t);
        if (m == 0)
            continue;
        for (size_t r = 0; r < n; r++) {
            fz_run_t *R = &c->runs[r];
            size_t cnt = R->tstart[t + 1] - R->tstart[t];
            free(lists[r]);
            if (!(lists[r] = malloc(cnt * sizeof **lists))) {
                rc = OMPF_ENOMEM;
                break;
            }
            for (size_t j = 0; j < cnt; j++)
                lists[r][j] = R->bytype[R->tstart[t] + j];
            uint64_t s = fz_stream(c->opts->seed, t, r);
            for (size_t j = cnt; j > 1; j--) { /* Fisher-Yates */
                size_t q = (size_t)fz_below(&s, j);
                uint32_t tmp = lists[r][j - 1];
                lists[r][j - 1] = lists[r][q];
                lists[r][q] = tmp;
            }
        }
        if (!rc)
            rc = fz_tuples_push_positional(&c->res, n, lists, m, tuple);
        c->rep->types[t].fused = rc ? 0 : m;
        fz_progress_type(c, t);
    }
out:
    if (lists)
        for (size_t r = 0; r < n; r++)
            free(lists[r]);
    free(lists);
    free(tuple);
    return rc;
}
