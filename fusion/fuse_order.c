/* BC's combination order: each run must share a counted event with the
 * runs before it (the given order if valid, else a greedy valid one). */
#include <stdio.h>
#include <string.h>

#include "fz.h"

/* ---- BC order ------------------------------------------------------------ */

static int overlaps(const fz_ctx_t *c, const uint8_t *have, size_t r)
{
    for (size_t g = 0; g < c->n_events; g++)
        if (have[g] && c->runs[r].ev[g] >= 0)
            return 1;
    return 0;
}

static void event_list(const fz_ctx_t *c, size_t r, char *buf, size_t len)
{
    size_t l = 0;
    buf[0] = 0;
    for (size_t g = 0; g < c->n_events && l + 1 < len; g++)
        if (c->runs[r].ev[g] >= 0)
            l += (size_t)snprintf(buf + l, len - l, "%s%s", l ? ", " : "",
                                  c->events[g].name);
    if (!l)
        snprintf(buf, len, "none");
}

/* A valid order: each run's counted events overlap the union of its
 * predecessors'.  One exists iff the runs' overlap graph is connected, and
 * then the greedy choice (lowest-index overlapping run) always finds one. */
int fz_bc_order(fz_ctx_t *c)
{
    uint8_t *have = calloc(c->n_events ? c->n_events : 1, 1);
    uint8_t *used = calloc(c->n, 1);
    int rc = OMPF_ENOMEM;
    if (!have || !used)
        goto out;
    for (size_t r = 0; r < c->n; r++)
        c->order[r] = (uint32_t)r;
    for (size_t g = 0; g < c->n_events; g++)
        have[g] = c->runs[0].ev[g] >= 0;
    used[0] = 1;
    int given_ok = 1;
    size_t broken = 0;
    for (size_t k = 1; k < c->n && given_ok; k++) {
        if (!overlaps(c, have, k)) {
            given_ok = 0;
            broken = k;
            break;
        }
        for (size_t g = 0; g < c->n_events; g++)
            have[g] |= c->runs[k].ev[g] >= 0;
    }
    if (given_ok) {
        rc = 0;
        goto out;
    }
    char mine[512], before[512];
    event_list(c, broken, mine, sizeof mine);
    {
        size_t l = 0;
        before[0] = 0;
        for (size_t g = 0; g < c->n_events && l + 1 < sizeof before; g++)
            if (have[g])
                l += (size_t)snprintf(before + l, sizeof before - l, "%s%s",
                                      l ? ", " : "", c->events[g].name);
    }
    if (c->opts->order_given) {
        rc = ompf_error_set(
            c->err, OMPF_EMISMATCH,
            "BC needs each run to share a counted event with the runs before "
            "it, but %s (events: %s) shares none with the inputs before it "
            "(events: %s); reorder the inputs or use --order auto",
            c->rep->in_name[broken], mine, before);
        goto out;
    }
    for (size_t g = 0; g < c->n_events; g++)
        have[g] = c->runs[0].ev[g] >= 0;
    for (size_t k = 1; k < c->n; k++) {
        size_t pick = c->n;
        for (size_t r = 1; r < c->n && pick == c->n; r++)
            if (!used[r] && overlaps(c, have, r))
                pick = r;
        if (pick == c->n) {
            size_t l = 0;
            char left[512];
            left[0] = 0;
            for (size_t r = 1; r < c->n && l + 1 < sizeof left; r++)
                if (!used[r])
                    l += (size_t)snprintf(left + l, sizeof left - l, "%s%s",
                                          l ? ", " : "", c->rep->in_name[r]);
            rc = ompf_error_set(
                c->err, OMPF_EMISMATCH,
                "BC needs overlapping event sets, but no valid order "
                "exists: no counted event connects %s to the other inputs; "
                "add a run that counts an event of both groups",
                left);
            goto out;
        }
        used[pick] = 1;
        c->order[k] = (uint32_t)pick;
        for (size_t g = 0; g < c->n_events; g++)
            have[g] |= c->runs[pick].ev[g] >= 0;
    }
    rc = fz_note(c->rep,
                 "the given order is not valid for BC (%s shares no counted "
                 "event with the inputs before it); combined in a valid "
                 "order instead",
                 c->rep->in_name[broken]);
out:
    free(have);
    free(used);
    return rc;
}
