/* Building the fused profile from the tuples: metadata and provenance,
 * events, constructs, threads, and the XUs in the base run's order with
 * each event's values from its provider and the common label prefix. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fz.h"

/* ---- building the result -------------------------------------------------- */

/* Node of the output profile for union node u (created on demand). */
static int out_label(fz_ctx_t *c, ompf_profile_t *out, uint32_t *memo,
                     uint32_t u, uint32_t *node)
{
    uint32_t path[256], *big = NULL, *pth = path;
    size_t n = 0, cap = 256;
    int rc = 0;
    while (memo[u] == FZ_NONE) {
        if (n == cap) {
            uint32_t *nb = realloc(big, 2 * cap * sizeof *nb);
            if (!nb) {
                free(big);
                return OMPF_ENOMEM;
            }
            if (!big)
                memcpy(nb, path, n * sizeof *nb);
            big = pth = nb;
            cap *= 2;
        }
        pth[n++] = u;
        u = ompf_label_parent(c->ut, u);
    }
    while (n) {
        uint32_t v = pth[--n];
        if ((rc = ompf_label_child(out, memo[u], ompf_label_component(c->ut, v),
                                   &memo[v])))
            break;
        u = v;
    }
    free(big);
    *node = memo[u];
    return rc;
}

static int copy_meta(fz_ctx_t *c, ompf_profile_t *out, const char *forced)
{
    const ompf_profile_t *base = c->runs[c->order[0]].p;
    static const char *const skip[] = {"run_id", "mode", "strategy",
                                       "strategy_params", "seed", "forced",
                                       "forced_checks", "role"};
    int rc;
    for (size_t i = 0; i < ompf_meta_count(base); i++) {
        const char *k, *v;
        ompf_meta_at(base, i, &k, &v);
        size_t s = 0;
        while (s < sizeof skip / sizeof *skip && strcmp(skip[s], k))
            s++;
        if (s < sizeof skip / sizeof *skip)
            continue;
        if ((rc = ompf_meta_set(out, k, v)))
            return rc;
    }
    char params[256], seed[32];
    int bc = c->opts->strategy == OMPF_FUSE_BC ||
             c->opts->strategy == OMPF_FUSE_BC_UNLABELED;
    size_t l = 0;
    l += (size_t)snprintf(params, sizeof params, "order=");
    for (size_t k = 0; k < c->n && l + 1 < sizeof params; k++)
        l += (size_t)snprintf(params + l, sizeof params - l, "%s%u",
                              k ? "," : "", c->order[k]);
    if (bc && l + 1 < sizeof params)
        snprintf(params + l, sizeof params - l,
                 ";grid=dyadic;coarsen=2;order_mode=%s",
                 c->opts->order_given ? "given" : "auto");
    snprintf(seed, sizeof seed, "%" PRIu64, c->opts->seed);
    uint64_t id = fz_stream(c->opts->seed, (uint64_t)c->opts->strategy, c->n);
    for (size_t r = 0; r < c->n; r++) {
        uint64_t s = id ^ c->rep->in_run_id[r];
        id = fz_rand(&s);
    }
    if ((rc = ompf_meta_set(out, "mode", OMPF_MODE_FUSED)) ||
        (rc = ompf_meta_set(out, "strategy",
                            ompf_fuse_strategy_name(c->opts->strategy))) ||
        (rc = ompf_meta_set(out, "strategy_params", params)) ||
        (rc = ompf_meta_set(out, "seed", seed)) ||
        (rc = ompf_meta_set(out, "forced", forced[0] ? "1" : "0")) ||
        (forced[0] && (rc = ompf_meta_set(out, "forced_checks", forced))) ||
        (rc = ompf_profile_set_run_id(out, id)))
        return rc;
    return 0;
}

int fz_build_output(fz_ctx_t *c, const char *forced, ompf_profile_t **outp)
{
    ompf_profile_t *out = NULL;
    uint32_t *memo = NULL;
    double *vals = NULL;
    int rc = ompf_profile_create(&out);
    if (rc)
        return rc;
    if ((rc = copy_meta(c, out, forced)))
        goto fail;
    for (size_t r = 0; r < c->n; r++) {
        ompf_source_t s = {c->rep->in_run_id[r], c->runs[r].path};
        if ((rc = ompf_source_add(out, &s, NULL)))
            goto fail;
    }
    for (size_t g = 0; g < c->n_events; g++) {
        fz_event_t *E = &c->events[g];
        uint32_t from = E->provider != FZ_NONE ? E->provider : E->first;
        const ompf_profile_t *p = c->runs[from].p;
        ompf_event_t ev = *ompf_event_get(p, (uint32_t)ompf_event_find(p, E->name));
        char why[512];
        int novals = 0;
        for (size_t r = 0; r < c->n; r++)
            novals |= c->runs[r].novals[g];
        if (E->provider == FZ_NONE) {
            if (novals)
                snprintf(why, sizeof why, "no value in any input");
            else
                snprintf(why, sizeof why, "failed in every input%s%s",
                         ev.reason ? ": " : "", ev.reason ? ev.reason : "");
            ev.status = OMPF_EV_FAILED;
            ev.reason = why;
            ev.source = -1;
        } else {
            ev.source = (int32_t)E->provider;
        }
        if ((rc = ompf_event_add(out, &ev, NULL)))
            goto fail;
    }
    for (size_t t = 0; t < c->n_types; t++) {
        const ompf_construct_t *ct =
            ompf_construct_get(c->runs[c->types[t].run].p, c->types[t].cidx);
        if ((rc = ompf_construct_add(out, ct, NULL)))
            goto fail;
    }
    /* Threads of the base run; each event's totals from the same thread
     * index of the run that provided the event. */
    const ompf_profile_t *base = c->runs[c->order[0]].p;
    for (uint32_t i = 0; i < ompf_thread_count(base); i++) {
        uint32_t idx;
        if ((rc = ompf_thread_add(out, ompf_thread_get_const(base, i)->os_tid,
                                  &idx)))
            goto fail;
        ompf_thread_t *ot = ompf_thread_get(out, idx);
        for (size_t g = 0; g < c->n_events; g++) {
            uint32_t q = c->events[g].provider;
            if (q == FZ_NONE)
                continue;
            const ompf_thread_t *st = ompf_thread_get_const(c->runs[q].p, i);
            if (!st)
                continue;
            int32_t ei = c->runs[q].ev[g];
            ot->total[g] = st->total[ei];
            ot->gap[g] = st->gap[ei];
            ot->enabled_ns[g] = st->enabled_ns[ei];
            ot->running_ns[g] = st->running_ns[ei];
        }
    }
    /* XUs in the base run's order. */
    size_t n = c->n, b = c->order[0], nt = c->res.n;
    uint32_t *sorted = malloc((nt ? nt : 1) * n * sizeof *sorted);
    if (!sorted) {
        rc = OMPF_ENOMEM;
        goto fail;
    }
    {
        /* Radix-free: sort base indices, then scatter through a position
         * table (base indices are unique). */
        uint32_t *pos = malloc((c->runs[b].n_xu ? c->runs[b].n_xu : 1) *
                               sizeof *pos);
        if (!pos) {
            free(sorted);
            rc = OMPF_ENOMEM;
            goto fail;
        }
        for (size_t i = 0; i < c->runs[b].n_xu; i++)
            pos[i] = FZ_NONE;
        for (size_t i = 0; i < nt; i++)
            pos[c->res.v[i * n + b]] = (uint32_t)i;
        size_t k = 0;
        for (size_t i = 0; i < c->runs[b].n_xu; i++)
            if (pos[i] != FZ_NONE)
                memcpy(sorted + (k++) * n, c->res.v + (size_t)pos[i] * n,
                       n * sizeof *sorted);
        free(pos);
    }
    size_t nu = ompf_label_count(c->ut);
    memo = malloc(nu * sizeof *memo);
    vals = malloc((c->n_events ? c->n_events : 1) * sizeof *vals);
    if (!memo || !vals || (rc = ompf_xu_reserve(out, nt))) {
        free(sorted);
        rc = rc ? rc : OMPF_ENOMEM;
        goto fail;
    }
    for (size_t i = 0; i < nu; i++)
        memo[i] = FZ_NONE;
    memo[OMPF_LABEL_ROOT] = OMPF_LABEL_ROOT;
    for (size_t i = 0; i < nt; i++) {
        /* Other runs' XUs are in random places: fetch the records and
         * values 16 tuples ahead and the label maps 8 ahead, so that the
         * misses overlap (this loop was a quarter of combine lgl). */
        if (i + 16 < nt) {
            const uint32_t *ta = sorted + (i + 16) * n;
            for (size_t r = 0; r < n; r++)
                __builtin_prefetch(ompf_xu_get(c->runs[r].p, ta[r]));
            for (size_t g = 0; g < c->n_events; g++) {
                uint32_t q = c->events[g].provider;
                if (q != FZ_NONE)
                    __builtin_prefetch(ompf_xu_values_const(c->runs[q].p, ta[q]) +
                                       c->runs[q].ev[g]);
            }
        }
        if (i + 8 < nt) {
            const uint32_t *ta = sorted + (i + 8) * n;
            for (size_t r = 0; r < n; r++)
                __builtin_prefetch(&c->runs[r].ulab[ompf_xu_get(c->runs[r].p, ta[r])->label]);
        }
        const uint32_t *tp = sorted + i * n;
        const ompf_xu_t *bx = ompf_xu_get(base, tp[b]);
        ompf_xu_t x = *bx;
        x.type = c->runs[b].ctype[bx->type];
        uint32_t u = c->runs[b].ulab[bx->label];
        for (size_t r = 0; r < n; r++) {
            const ompf_xu_t *rx = ompf_xu_get(c->runs[r].p, tp[r]);
            u = ompf_label_common(c->ut, u, c->runs[r].ulab[rx->label]);
        }
        if ((rc = out_label(c, out, memo, u, &x.label)))
            break;
        for (size_t g = 0; g < c->n_events; g++) {
            uint32_t q = c->events[g].provider;
            vals[g] = q == FZ_NONE
                          ? OMPF_MISSING
                          : ompf_xu_values_const(c->runs[q].p, tp[q])[c->runs[q].ev[g]];
        }
        if ((rc = ompf_xu_add(out, &x, vals)))
            break;
        /* Counts above 2^53 keep their exact value (profile.h); the test
         * is one compare per value, the lookup only for such counts. */
        for (size_t g = 0; g < c->n_events && !rc; g++) {
            uint32_t q = c->events[g].provider;
            uint64_t ex;
            if (vals[g] >= 9007199254740992.0 &&
                ompf_xu_value_u64(c->runs[q].p, tp[q], (uint32_t)c->runs[q].ev[g], &ex))
                rc = ompf_xu_value_set_u64(out, i, (uint32_t)g, ex);
        }
        if (rc)
            break;
        /* the parts come with the timing: both from the base run */
        if (ompf_xu_has_parts(base, tp[b])) {
            uint32_t np;
            ompf_part_t one;
            const ompf_part_t *pt = ompf_xu_parts(base, tp[b], &np, &one);
            if ((rc = ompf_xu_set_parts(out, i, pt, np)))
                break;
        }
        uint64_t *pv = ompf_xu_provenance(out, i);
        for (size_t r = 0; r < n; r++)
            pv[r] = ompf_xu_get(c->runs[r].p, tp[r])->id;
        ompf_progress_add(c->opts->progress, n);
    }
    free(sorted);
    if (rc)
        goto fail;
    free(memo);
    free(vals);
    *outp = out;
    return 0;
fail:
    free(memo);
    free(vals);
    ompf_profile_destroy(out);
    return rc;
}
