/* The planners (docs/semantics.md, Planning): disjoint first-fit sets
 * (LGL/CTC), an overlapping chain (BC), a greedy pair-covering design
 * (references). */
#include "ompfuse/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ompf_plan_opts_init(ompf_plan_opts_t *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->slots = 0;
    o->for_lgl = 1;
    o->for_bc = 1;
    o->references = 3;
    o->hem_repeats = 1;
    o->bc_overlap = 1;
}

int ompf_plan_assume_compat(const char *const *events, size_t n, void *ctx,
                            char *why, size_t whylen)
{
    (void)events;
    (void)n;
    (void)ctx;
    if (why && whylen)
        why[0] = '\0';
    return 1;
}

/* Slot limit first (cheap, and the oracle need not know it), then the
 * oracle. */
static int compat(const ompf_plan_opts_t *o, const char *const *ev, size_t n,
                  ompf_plan_stats_t *st, char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    if (n > o->slots) {
        if (why)
            snprintf(why, whylen, "%zu events exceed the %u counter slots", n,
                     o->slots);
        return 0;
    }
    if (st)
        st->oracle_calls++;
    ompf_plan_compat_fn fn = o->compat ? o->compat : ompf_plan_probe_compat;
    return fn(ev, n, o->compat_ctx, why, whylen);
}

static int check_args(const char *const *events, size_t n,
                      const ompf_plan_opts_t *o, ompf_error_t *err)
{
    if (!events || !n || !o)
        return ompf_error_set(err, OMPF_EINVAL, "no events to plan");
    if (o->slots < 1)
        return ompf_error_set(err, OMPF_EINVAL,
                              "the counter limit (slots) must be at least 1");
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(events[i], events[j]))
                return ompf_error_set(err, OMPF_EINVAL,
                                      "event %s is listed twice; list each "
                                      "event once",
                                      events[i]);
    return 0;
}

/* Every event on its own must be countable, else nothing can be planned. */
static int check_singletons(const char *const *events, size_t n,
                            const ompf_plan_opts_t *o, ompf_plan_stats_t *st,
                            ompf_error_t *err)
{
    char why[512];
    for (size_t i = 0; i < n; i++)
        if (!compat(o, &events[i], 1, st, why, sizeof why))
            return ompf_error_set(err, OMPF_EUNSUPP,
                                  "event %s cannot be counted on this machine: "
                                  "%s; remove it from the list (see `ompfuse "
                                  "events --probe`)",
                                  events[i], why[0] ? why : "the group does not open");
    return 0;
}

int ompf_plan_disjoint(ompf_plan_t *p, int role, const char *const *events,
                       size_t n, const ompf_plan_opts_t *o,
                       ompf_plan_stats_t *st, ompf_error_t *err)
{
    int rc = check_args(events, n, o, err);
    if (rc)
        return rc;
    const char **sets = calloc(n * n, sizeof *sets); /* set s: sets[s*n..] */
    size_t *size = calloc(n, sizeof *size);
    size_t nsets = 0;
    if (!sets || !size) {
        free(sets);
        free(size);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    char why[512];
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t s;
        for (s = 0; s < nsets; s++) {
            if (size[s] >= o->slots)
                continue;
            sets[s * n + size[s]] = events[i];
            if (compat(o, &sets[s * n], size[s] + 1, st, NULL, 0)) {
                size[s]++;
                break;
            }
        }
        if (s == nsets) {
            sets[s * n] = events[i];
            if (!compat(o, &sets[s * n], 1, st, why, sizeof why)) {
                rc = ompf_error_set(err, OMPF_EUNSUPP,
                                    "event %s cannot be counted on this "
                                    "machine: %s; remove it from the list",
                                    events[i], why);
                break;
            }
            size[s] = 1;
            nsets++;
        }
    }
    for (size_t s = 0; s < nsets && rc == 0; s++)
        rc = ompf_plan_add(p, role, 1, &sets[s * n], size[s], NULL, 0);
    if (st && rc == 0)
        st->lgl_sets += nsets;
    free(sets);
    free(size);
    return rc;
}

/* Default overlap anchors, best first: events every PMU counts and that
 * scale with the work of an XU. */
static const char *const default_anchors[] = {
    "cycles", "perf::CYCLES", "perf::CPU-CYCLES", "perf::PERF_COUNT_HW_CPU_CYCLES",
    "instructions", "perf::INSTRUCTIONS", "perf::PERF_COUNT_HW_INSTRUCTIONS",
    "perf::TASK-CLOCK", "perf::PERF_COUNT_SW_TASK_CLOCK",
    "perf::CPU-CLOCK", "perf::PERF_COUNT_SW_CPU_CLOCK",
};
#define N_ANCHORS (sizeof default_anchors / sizeof default_anchors[0])

static int anchor_rank(const char *e)
{
    for (size_t k = 0; k < N_ANCHORS; k++)
        if (!strcmp(e, default_anchors[k]))
            return (int)k;
    return (int)N_ANCHORS;
}

int ompf_plan_chain(ompf_plan_t *p, const char *const *events, size_t n,
                    const ompf_plan_opts_t *o, ompf_plan_stats_t *st,
                    ompf_error_t *err)
{
    int rc = check_args(events, n, o, err);
    if (rc)
        return rc;
    unsigned ov = o->bc_overlap ? o->bc_overlap : 1;
    if (n > 1 && o->slots <= ov)
        return ompf_error_set(err, OMPF_EINVAL,
                              "a BC chain with %u overlapping event%s needs "
                              "at least %u counter slots (have %u)",
                              ov, ov == 1 ? "" : "s", ov + 1, o->slots);
    /* Event order: the default anchor first so that it is in the first
     * set and available as overlap for every later set. */
    size_t *order = malloc(n * sizeof *order);
    int *covered = calloc(n, sizeof *covered);
    size_t *set = malloc((o->slots + 1) * sizeof *set);
    const char **names = malloc((o->slots + 1) * sizeof *names);
    if (!order || !covered || !set || !names) {
        rc = ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (!o->corr) {
        size_t best = 0;
        for (size_t i = 1; i < n; i++)
            if (anchor_rank(events[i]) < anchor_rank(events[best]))
                best = i;
        order[0] = best;
        for (size_t i = 0, k = 1; i < n; i++)
            if (i != best)
                order[k++] = i;
    }
    size_t ncovered = 0, nsets = 0;
    while (ncovered < n && rc == 0) {
        /* new events: first-fit among the uncovered, leaving room for the
         * overlap (none for the first set) */
        size_t room = nsets == 0 ? o->slots : o->slots - ov;
        size_t nn = 0;
        for (size_t k = 0; k < n && nn < room; k++) {
            size_t e = order[k];
            if (covered[e])
                continue;
            set[nn] = e;
            for (size_t j = 0; j <= nn; j++)
                names[j] = events[set[j]];
            if (compat(o, names, nn + 1, st, NULL, 0))
                nn++;
        }
        if (nn == 0) { /* cannot happen after check_singletons */
            rc = ompf_error_set(err, OMPF_EUNSUPP, "no event fits a new BC set");
            break;
        }
        if (nsets > 0) {
            /* rank covered events as overlap candidates */
            size_t nc = 0;
            size_t *cand = malloc(ncovered * sizeof *cand);
            double *score = malloc(ncovered * sizeof *score);
            if (!cand || !score) {
                free(cand);
                free(score);
                rc = ompf_error_set(err, OMPF_ENOMEM, "out of memory");
                break;
            }
            for (size_t c = 0; c < n; c++) {
                if (!covered[c])
                    continue;
                double s = 0;
                size_t cnt = 0;
                if (o->corr)
                    for (size_t j = 0; j < nn; j++) {
                        double v = o->corr[c * n + set[j]];
                        if (!isnan(v)) {
                            s += fabs(v);
                            cnt++;
                        }
                    }
                /* without correlations, anchors first then plan order */
                score[nc] = cnt ? s / (double)cnt
                                : -1.0 - (double)anchor_rank(events[c]) / 1000.0;
                cand[nc++] = c;
            }
            for (size_t a = 1; a < nc; a++) /* stable insertion sort by score */
                for (size_t b = a; b > 0 && score[b] > score[b - 1]; b--) {
                    double ts = score[b];
                    score[b] = score[b - 1];
                    score[b - 1] = ts;
                    size_t tc = cand[b];
                    cand[b] = cand[b - 1];
                    cand[b - 1] = tc;
                }
            /* pick ov overlapping events that fit with the new ones; shrink
             * the new part when nothing fits */
            size_t got = 0;
            for (;;) {
                got = 0;
                for (size_t k = 0; k < nc && got < ov; k++) {
                    set[nn + got] = cand[k];
                    for (size_t j = 0; j < nn + got + 1; j++)
                        names[j] = events[set[j]];
                    if (compat(o, names, nn + got + 1, st, NULL, 0))
                        got++;
                }
                if (got == ov || (got > 0 && got == nc) || nn == 1)
                    break;
                nn--;
            }
            free(cand);
            free(score);
            if (got == 0) {
                rc = ompf_error_set(err, OMPF_EUNSUPP,
                                    "event %s cannot be counted together with "
                                    "any event of the earlier BC sets, so BC "
                                    "cannot overlap it; plan it for LGL only "
                                    "(--for lgl)",
                                    events[set[0]]);
                break;
            }
            nn += got;
        }
        for (size_t j = 0; j < nn; j++) {
            names[j] = events[set[j]];
            if (!covered[set[j]]) {
                covered[set[j]] = 1;
                ncovered++;
            }
        }
        rc = ompf_plan_add(p, OMPF_ROLE_BC, 1, names, nn, NULL, 0);
        nsets++;
    }
    if (st && rc == 0)
        st->bc_sets += nsets;
out:
    free(order);
    free(covered);
    free(set);
    free(names);
    return rc;
}

int ompf_plan_pairs(ompf_plan_t *p, const char *const *events, size_t n,
                    const ompf_plan_opts_t *o, ompf_plan_stats_t *st,
                    ompf_error_t *err)
{
    int rc = check_args(events, n, o, err);
    if (rc)
        return rc;
    unsigned R = o->references;
    if (R < 2)
        return ompf_error_set(err, OMPF_EINVAL,
                              "reference sets must be repeated at least twice "
                              "(EPD calibrates with pairs of repeats); use "
                              "--references 2 or more");
    if (n < 2)
        return ompf_error_set(err, OMPF_EINVAL,
                              "references cover pairs of events: give at "
                              "least two events");
    if (o->slots < 2)
        return ompf_error_set(err, OMPF_EINVAL,
                              "references need at least 2 counter slots to "
                              "count a pair at once");
    /* covered[i*n+j]: 0 uncovered, 1 covered, 2 uncoverable */
    unsigned char *cov = calloc(n * n, 1);
    size_t *deg = calloc(n, sizeof *deg); /* uncovered pairs per event */
    size_t *set = malloc(o->slots * sizeof *set);
    const char **names = malloc(o->slots * sizeof *names);
    int *in = calloc(n, sizeof *in);
    if (!cov || !deg || !set || !names || !in) {
        rc = ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        goto out;
    }
    size_t left = n * (n - 1) / 2, nsets = 0, bad = 0;
    for (size_t i = 0; i < n; i++)
        deg[i] = n - 1;
    if (st) {
        st->pairs += left;
        st->naive_ref_sets += left;
    }
    while (left > 0) {
        /* seed: the uncovered pair whose events have most uncovered pairs */
        size_t ba = 0, bb = 0, bs = 0;
        int found = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                if (!cov[i * n + j] && (!found || deg[i] + deg[j] > bs)) {
                    ba = i;
                    bb = j;
                    bs = deg[i] + deg[j];
                    found = 1;
                }
        set[0] = ba;
        set[1] = bb;
        names[0] = events[ba];
        names[1] = events[bb];
        if (!compat(o, names, 2, st, NULL, 0)) {
            cov[ba * n + bb] = cov[bb * n + ba] = 2;
            deg[ba]--;
            deg[bb]--;
            left--;
            bad++;
            continue;
        }
        size_t k = 2;
        memset(in, 0, n * sizeof *in);
        in[ba] = in[bb] = 1;
        while (k < o->slots) {
            /* add the event covering most new pairs that still fits */
            size_t best = n, bgain = 0;
            for (int tries = 0; tries < 64; tries++) {
                best = n;
                bgain = 0;
                for (size_t e = 0; e < n; e++) {
                    if (in[e])
                        continue;
                    size_t g = 0;
                    for (size_t j = 0; j < k; j++)
                        g += cov[e * n + set[j]] == 0;
                    if (g > bgain ||
                        (g == bgain && g > 0 && best < n && deg[e] > deg[best]))
                        best = e, bgain = g;
                }
                if (best == n || bgain == 0)
                    break;
                set[k] = best;
                names[k] = events[best];
                if (compat(o, names, k + 1, st, NULL, 0))
                    break;
                in[best] = 2; /* does not fit this set: skip it */
                best = n;
            }
            if (best == n || bgain == 0)
                break;
            in[best] = 1;
            k++;
        }
        for (size_t a = 0; a < k; a++)
            for (size_t b = a + 1; b < k; b++) {
                size_t x = set[a], y = set[b];
                if (cov[x * n + y] == 0) {
                    cov[x * n + y] = cov[y * n + x] = 1;
                    deg[x]--;
                    deg[y]--;
                    left--;
                }
            }
        rc = ompf_plan_add(p, OMPF_ROLE_REFERENCE, R, names, k, NULL, 0);
        if (rc)
            break;
        nsets++;
    }
    if (st && rc == 0) {
        st->ref_sets += nsets;
        st->ref_runs += nsets * R;
        st->pairs_uncoverable += bad;
    }
out:
    free(cov);
    free(deg);
    free(set);
    free(names);
    free(in);
    return rc;
}

int ompf_plan_build(const char *const *events, size_t n,
                    const ompf_plan_opts_t *o, ompf_plan_t **out,
                    ompf_plan_stats_t *st, ompf_error_t *err)
{
    ompf_plan_stats_t local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    if (!out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_plan_build: no output");
    *out = NULL;
    int rc = check_args(events, n, o, err);
    if (rc)
        return rc;
    if (!o->for_lgl && !o->for_bc && !o->references && !o->hem)
        return ompf_error_set(err, OMPF_EINVAL,
                              "nothing to plan: ask for fusion runs, "
                              "references or HEM runs");
    rc = check_singletons(events, n, o, st, err);
    if (rc)
        return rc;
    ompf_plan_t *p;
    if (ompf_plan_create(&p))
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    ompf_plan_set_slots(p, o->slots);
    ompf_plan_comment(p, "ompfuse plan: %zu event%s, %u counter slot%s", n,
                      n == 1 ? "" : "s", o->slots, o->slots == 1 ? "" : "s");
    ompf_plan_comment(p, "line format: <role> <repeat> <events> [key=value ...]");
    ompf_plan_comment(p, "slots: %u", o->slots);
    if (o->for_lgl) {
        ompf_plan_comment(p, "group: lgl");
        ompf_plan_comment(p, "disjoint sets (first-fit) for LGL, CTC and random");
        rc = ompf_plan_disjoint(p, OMPF_ROLE_LGL, events, n, o, st, err);
    }
    if (rc == 0 && o->for_bc) {
        ompf_plan_comment(p, "group: bc");
        ompf_plan_comment(p, "a chain: each set shares %u event%s with its "
                             "predecessors (%s)",
                          o->bc_overlap ? o->bc_overlap : 1,
                          (o->bc_overlap ? o->bc_overlap : 1) == 1 ? "" : "s",
                          o->corr ? "chosen by correlation in the pilot runs"
                                  : "default anchor: cycles/instructions, "
                                    "else perf::TASK-CLOCK");
        rc = ompf_plan_chain(p, events, n, o, st, err);
    }
    if (rc == 0 && o->references && n >= 2) {
        size_t before = st->ref_sets;
        ompf_plan_comment(p, "group: ref");
        rc = ompf_plan_pairs(p, events, n, o, st, err);
        if (rc == 0) {
            size_t sets = st->ref_sets - before;
            ompf_plan_comment(p, "references: %zu set%s x %u repeats cover all "
                                 "%zu event pairs (one set per pair would be "
                                 "%zu sets)",
                              sets, sets == 1 ? "" : "s", o->references,
                              st->pairs, st->naive_ref_sets);
            if (st->pairs_uncoverable)
                ompf_plan_comment(p, "WARNING: %zu pair%s cannot be counted at "
                                     "once and cannot be evaluated",
                                  st->pairs_uncoverable,
                                  st->pairs_uncoverable == 1 ? "" : "s");
        }
    } else if (rc == 0 && o->references && n < 2) {
        ompf_plan_comment(p, "no reference runs: one event has no pair");
    }
    if (rc == 0 && o->hem) {
        unsigned hr = o->hem_repeats ? o->hem_repeats : 1;
        ompf_plan_comment(p, "group: hem");
        ompf_plan_comment(p, "hardware event multiplexing: all events at once, "
                             "rotated over the %u slots", o->slots);
        rc = ompf_plan_add(p, OMPF_ROLE_HEM, hr, events, n, NULL, 0);
        if (rc == 0)
            rc = ompf_plan_add(p, OMPF_ROLE_HEM_DELTA, hr, events, n, NULL, 0);
        if (rc)
            ompf_error_set(err, rc, "out of memory");
    }
    if (rc) {
        ompf_plan_destroy(p);
        return rc;
    }
    *out = p;
    return 0;
}

/* ---- checks ---------------------------------------------------------------- */

static int has(const ompf_plan_run_t *r, const char *e)
{
    for (size_t i = 0; i < r->n_events; i++)
        if (!strcmp(r->events[i], e))
            return 1;
    return 0;
}

int ompf_plan_check_pairs(const ompf_plan_t *p, unsigned slots,
                          ompf_error_t *err)
{
    /* events of the reference lines only */
    size_t nev = ompf_plan_event_count(p);
    for (size_t i = 0; i < ompf_plan_count(p); i++) {
        const ompf_plan_run_t *r = ompf_plan_get(p, i);
        if (r->role != OMPF_ROLE_REFERENCE)
            continue;
        if (slots && r->n_events > slots)
            return ompf_error_set(err, OMPF_EINVAL,
                                  "reference line %zu has %zu events, more "
                                  "than the %u slots",
                                  i + 1, r->n_events, slots);
        if (r->repeat < 2)
            return ompf_error_set(err, OMPF_EINVAL,
                                  "reference line %zu is repeated %u time(s); "
                                  "EPD needs at least 2",
                                  i + 1, r->repeat);
    }
    for (size_t a = 0; a < nev; a++)
        for (size_t b = a + 1; b < nev; b++) {
            const char *ea = ompf_plan_event(p, a), *eb = ompf_plan_event(p, b);
            int ok = 0;
            for (size_t i = 0; i < ompf_plan_count(p) && !ok; i++) {
                const ompf_plan_run_t *r = ompf_plan_get(p, i);
                ok = r->role == OMPF_ROLE_REFERENCE && has(r, ea) && has(r, eb);
            }
            if (!ok)
                return ompf_error_set(err, OMPF_EINVAL,
                                      "no reference run counts %s together "
                                      "with %s",
                                      ea, eb);
        }
    return 0;
}

int ompf_plan_check_chain(const ompf_plan_t *p, ompf_error_t *err)
{
    const ompf_plan_run_t *prev[1024];
    size_t np = 0;
    for (size_t i = 0; i < ompf_plan_count(p); i++) {
        const ompf_plan_run_t *r = ompf_plan_get(p, i);
        if (r->role != OMPF_ROLE_BC)
            continue;
        if (np > 0) {
            int ok = 0;
            for (size_t e = 0; e < r->n_events && !ok; e++)
                for (size_t k = 0; k < np && !ok; k++)
                    ok = has(prev[k], r->events[e]);
            if (!ok)
                return ompf_error_set(err, OMPF_EINVAL,
                                      "BC line %zu shares no event with the "
                                      "BC lines before it",
                                      i + 1);
            int fresh = 0;
            for (size_t e = 0; e < r->n_events && !fresh; e++) {
                int seen = 0;
                for (size_t k = 0; k < np && !seen; k++)
                    seen = has(prev[k], r->events[e]);
                fresh = !seen;
            }
            if (!fresh)
                return ompf_error_set(err, OMPF_EINVAL,
                                      "BC line %zu adds no new event", i + 1);
        }
        if (np == sizeof prev / sizeof prev[0])
            return ompf_error_set(err, OMPF_ERANGE, "too many BC lines");
        prev[np++] = r;
    }
    return 0;
}
