/* The XU pilot's second run, matched to the first by label: what a fusion
 * that pairs the right XUs reproduces.  Two events counted in one run can
 * depend on each other by chance of that run (an interrupt raises a timer
 * tracepoint, a wake-up and TASK-CLOCK of the same XU together); only the
 * dependence that holds between runs, XU by XU, separates a matched
 * pairing from a random one (ompf__auto_dependence). */
#include <stdlib.h>
#include <string.h>

#include "autoevents_internal.h"

static const uint32_t *rank_ctx;
static const ompf_profile_t *prof_ctx;
static int by_label(const void *pa, const void *pb)
{
    uint32_t x = rank_ctx[ompf_xu_get(prof_ctx, *(const uint32_t *)pa)->label];
    uint32_t y = rank_ctx[ompf_xu_get(prof_ctx, *(const uint32_t *)pb)->label];
    return x < y ? -1 : x > y;
}

/* XU indices of p in label order (depth-first rank: the order of
 * ompf_label_compare). */
static uint32_t *sorted(const ompf_profile_t *p)
{
    size_t nx = ompf_xu_count(p);
    uint32_t *idx = malloc((nx ? nx : 1) * sizeof *idx);
    uint32_t *rank = malloc((ompf_label_count(p) + 1) * sizeof *rank);
    if (!idx || !rank || ompf_label_dfs_rank(p, rank)) {
        free(idx);
        free(rank);
        return NULL;
    }
    for (size_t x = 0; x < nx; x++)
        idx[x] = (uint32_t)x;
    rank_ctx = rank;
    prof_ctx = p;
    qsort(idx, nx, sizeof *idx, by_label);
    free(rank);
    return idx;
}

int ompf__auto_cross(ompf_auto_t *a, const ompf_profile_t *p1, const ompf_profile_t *p2)
{
    size_t n1 = ompf_xu_count(p1), n2 = ompf_xu_count(p2);
    uint32_t *s1 = sorted(p1), *s2 = sorted(p2);
    a->match = malloc((n1 ? n1 : 1) * sizeof *a->match);
    a->bin2 = calloc(a->n + 1, sizeof *a->bin2);
    int rc = s1 && s2 && a->match && a->bin2 ? 0 : OMPF_ENOMEM;
    /* merge-join: labels are unique per XU within a run */
    for (size_t x = 0; rc == 0 && x < n1; x++)
        a->match[x] = UINT32_MAX;
    for (size_t i = 0, j = 0; rc == 0 && i < n1 && j < n2;) {
        int c = ompf_label_compare(p1, ompf_xu_get(p1, s1[i])->label, p2,
                                   ompf_xu_get(p2, s2[j])->label);
        if (c == 0)
            a->match[s1[i++]] = s2[j++];
        else if (c < 0)
            i++;
        else
            j++;
    }
    /* each candidate's interval in run 2, on run 1's bounds */
    for (size_t k = 0; rc == 0 && k < a->n; k++) {
        int e = ompf_event_find(p2, a->c[k].name);
        if (!a->bin[k] || e < 0)
            continue;
        if (!(a->bin2[k] = malloc(n1 ? n1 : 1))) {
            rc = OMPF_ENOMEM;
            break;
        }
        for (size_t x = 0; x < n1; x++) {
            double v = 0;
            if (a->match[x] != UINT32_MAX) {
                v = ompf_xu_values_const(p2, a->match[x])[e];
                v = ompf_is_missing(v) ? 0 : v;
            }
            a->bin2[k][x] = ompf__auto_bin(v, a->lo[k], a->hi[k]);
        }
    }
    free(s1);
    free(s2);
    return rc;
}
