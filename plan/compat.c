/* The real compatibility oracle: open the set as one group and read it. */
#include "ompfuse/plan.h"
#include "ompfuse/counters.h"

#include <stdio.h>
#include <string.h>

int ompf_plan_probe_compat(const char *const *events, size_t n, void *ctx,
                           char *why, size_t whylen)
{
    (void)ctx;
    if (why && whylen)
        why[0] = '\0';
    ompf_cnt_set_t *s = NULL;
    ompf_error_t e;
    memset(&e, 0, sizeof e);
    if (ompf_cnt_set_create(events, n, &s, &e) != 0) {
        if (why)
            snprintf(why, whylen, "%s", e.msg);
        return 0;
    }
    int rc = ompf_cnt_probe(s, &e);
    ompf_cnt_set_destroy(s);
    if (rc != 0) {
        if (why)
            snprintf(why, whylen, "%s", e.msg);
        return 0;
    }
    return 1;
}

size_t ompf_plan_measure_slots(const char *const *events, size_t n,
                               unsigned max, ompf_plan_compat_fn compat,
                               void *ctx)
{
    const char *set[64];
    size_t k = 0;
    if (!compat)
        compat = ompf_plan_probe_compat;
    if (max > 64)
        max = 64;
    for (size_t i = 0; i < n && k < max; i++) {
        set[k] = events[i];
        if (compat(set, k + 1, ctx, NULL, 0))
            k++;
    }
    return k;
}
