/* Perfetto counter tracks (ompfuse export --format perfetto --counters):
 * one per thread and event, "thread T <event>", stepping at every XU end
 * to the sum of that thread's XU values so far (missing values add
 * nothing).  The slope between two steps is the rate inside XUs; the gap
 * is not in it (its total is in the thread-totals instant). */
#include <stdlib.h>

#include "jsonw.h"
#include "perfetto_int.h"

static int by_thread_end(const void *a, const void *b, void *ctx)
{
    const ompf_profile_t *p = ctx;
    const ompf_xu_t *x = ompf_xu_get(p, *(const size_t *)a), *y = ompf_xu_get(p, *(const size_t *)b);
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->end_ns != y->end_ns)
        return x->end_ns < y->end_ns ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

int ompf_perfetto_counters(FILE *f, const ompf_profile_t *p, unsigned pid)
{
    size_t nxu = ompf_xu_count(p), nev = ompf_event_count(p);
    size_t *order = malloc((nxu ? nxu : 1) * sizeof *order);
    double *sum = calloc(nev ? nev : 1, sizeof *sum);
    if (!order || !sum) {
        free(order), free(sum);
        return OMPF_ENOMEM;
    }
    for (size_t i = 0; i < nxu; i++)
        order[i] = i;
    qsort_r(order, nxu, sizeof *order, by_thread_end, (void *)p);
    for (size_t k = 0; k < nxu; k++) {
        const ompf_xu_t *x = ompf_xu_get(p, order[k]);
        if (k == 0 || ompf_xu_get(p, order[k - 1])->thread != x->thread)
            for (size_t e = 0; e < nev; e++)
                sum[e] = 0;
        const double *v = ompf_xu_values_const(p, order[k]);
        for (size_t e = 0; e < nev; e++) {
            if (ompf_is_missing(v[e]))
                continue;
            sum[e] += v[e];
            fputs(",\n{\"ph\":\"C\",\"pid\":", f);
            ompf_jw_u64(f, pid);
            fputs(",\"ts\":", f);
            ompf_jw_us(f, x->end_ns);
            char name[600];
            snprintf(name, sizeof name, "thread %u %s", x->thread,
                     ompf_event_get(p, (uint32_t)e)->name);
            fputs(",\"name\":", f);
            ompf_json_string(f, name);
            fputs(",\"args\":{\"sum over XUs\":", f);
            ompf_jw_num(f, sum[e]);
            fputs("}}", f);
        }
    }
    free(order);
    free(sum);
    return 0;
}
