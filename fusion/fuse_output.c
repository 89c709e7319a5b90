/* Building the fused profile from the tuples: metadata and provenance,
 * events, constructs, threads, and the XUs in the base run's order with
 * each event's values from its provider and the common label prefix;
 * either in memory (ompf_fuse) or streamed to the file chunk by chunk
 * (ompf_fuse_write: the fused XUs are never all in memory). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fz.h"
#include "ompfuse/file.h"

/* ---- building the result -------------------------------------------------- */

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

/* Everything of the fused profile but its XUs: metadata, sources, events,
 * constructs and threads. */
static int build_header(fz_ctx_t *c, const char *forced, ompf_profile_t **outp)
{
    ompf_profile_t *out = NULL;
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
    *outp = out;
    return 0;
fail:
    ompf_profile_destroy(out);
    return rc;
}

/* The fused XUs: tuples in the base run's order and each one's label in
 * the output profile; built before any XU is added or written, so that
 * the labels (written before the XUs) are complete. */
typedef struct fz_rows {
    fz_ctx_t *c;
    uint32_t *tup;    /* nt tuples of n XU indices, in the strategy's order */
    uint32_t *ord;    /* output XU i is tuple ord[i]: base-run order */
    uint32_t *olab;   /* output label node of each */
    /* The output's label trie, by reference to the union trie: output
     * node j is union node rev[j], union node u output node memo[u]
     * (FZ_NONE: not in the output).  8 bytes a node where a copy of the
     * trie took 16 (the streamed output never builds one). */
    uint32_t *memo, *rev;
    size_t n_olab;
    size_t nt;
    uint64_t *ex;     /* exact counts (XU id, event, count) when streaming */
    size_t n_ex, cap_ex;
    ompf_part_t *pbuf; /* a packed base XU's parts, unpacked */
    uint32_t cap_pbuf;
} fz_rows_t;

/* Output XU i's tuple. */
static inline const uint32_t *row(const fz_rows_t *R, size_t i)
{
    return R->tup + (size_t)R->ord[i] * R->c->n;
}

/* The output node of union node u: its path from the nearest node
 * already in the output gets nodes, top-down, as XUs in the output's
 * order reach them (the order a trie built label by label would have).
 * Each union node once, and the union trie holds each label once. */
static int out_label(const fz_ctx_t *c, fz_rows_t *R, uint32_t u, uint32_t *node)
{
    uint32_t path[256], *big = NULL, *pth = path;
    size_t n = 0, cap = 256;
    while (R->memo[u] == FZ_NONE) {
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
        u = pth[--n];
        R->rev[R->n_olab] = u;
        R->memo[u] = (uint32_t)R->n_olab++;
    }
    free(big);
    *node = R->memo[u];
    return 0;
}

static int prepare_rows(fz_ctx_t *c, fz_rows_t *R)
{
    size_t n = c->n, b = c->order[0], nt = c->res.n;
    memset(R, 0, sizeof *R);
    R->c = c;
    R->nt = nt;
    /* The output goes in base-run order: through a position table (base
     * indices are unique), each output XU's tuple.  A sorted copy of the
     * tuples would hold them twice (the peak of CTC and random on a
     * one-type program). */
    size_t nb = c->runs[b].n_xu;
    uint32_t *pos = malloc((nb ? nb : 1) * sizeof *pos);
    R->ord = malloc((nt ? nt : 1) * sizeof *R->ord);
    if (!pos || !R->ord) {
        free(pos);
        return OMPF_ENOMEM;
    }
    for (size_t i = 0; i < nb; i++)
        pos[i] = FZ_NONE;
    for (size_t i = 0; i < nt; i++)
        pos[c->res.v[i * n + b]] = (uint32_t)i;
    size_t k = 0;
    for (size_t i = 0; i < nb; i++)
        if (pos[i] != FZ_NONE)
            R->ord[k++] = pos[i];
    free(pos);
    R->tup = c->res.v;
    /* the union labels the strategy found, by tuple */
    uint32_t *ul = c->res.lab;
    c->res.v = NULL;
    c->res.lab = NULL;
    c->res.cap = 0;
    /* Each fused XU's union label first (the strategy's, or the common
     * prefix of its members'), then its output label: the common-prefix
     * table (4 bytes a union node) and the output's label map (8) are
     * never held together, nor the strategy's labels and the map. */
    R->olab = malloc((nt ? nt : 1) * sizeof *R->olab);
    if (!R->olab) {
        free(ul);
        return OMPF_ENOMEM;
    }
    int named = ul != NULL; /* BC named its pairs */
    for (size_t i = 0; named && i < nt; i++) {
        if (i + 16 < nt)
            __builtin_prefetch(&ul[R->ord[i + 16]]);
        R->olab[i] = ul[R->ord[i]];
    }
    free(ul);
    /* LGL joins on the union node: every member of a tuple has the base's
     * label, and their common prefix is that label. */
    int same = c->opts->strategy == OMPF_FUSE_LGL;
    for (size_t i = 0; !named && i < nt; i++) {
        /* Other runs' XUs are in random places: fetch the records 16
         * tuples ahead and the label maps 8 ahead, so the misses overlap
         * (and the tuples themselves 32 ahead). */
        if (i + 32 < nt)
            __builtin_prefetch(row(R, i + 32));
        if (i + 16 < nt) {
            const uint32_t *ta = row(R, i + 16);
            for (size_t r = 0; r < n; r++)
                if (!same || r == b)
                    __builtin_prefetch(&c->runs[r].vlabel.base[ta[r] * c->runs[r].vlabel.stride]);
        }
        if (i + 8 < nt) {
            const uint32_t *ta = row(R, i + 8);
            for (size_t r = 0; r < n; r++)
                if (!same || r == b)
                    if (c->runs[r].ulab)
                        __builtin_prefetch(&c->runs[r].ulab[fz_xu_label(&c->runs[r], ta[r])]);
        }
        const uint32_t *tp = row(R, i);
        uint32_t u = fz_xu_ulab(&c->runs[b], tp[b]);
        for (size_t r = 0; r < n && !same; r++)
            u = fz_lca(c, u, fz_xu_ulab(&c->runs[r], tp[r]));
        R->olab[i] = u;
    }
    fz_lca_free(c);
    size_t nu = ompf_label_count(c->ut);
    R->memo = malloc(nu * sizeof *R->memo);
    R->rev = malloc(nu * sizeof *R->rev); /* at most every union node */
    if (!R->memo || !R->rev)
        return OMPF_ENOMEM;
    for (size_t i = 0; i < nu; i++)
        R->memo[i] = FZ_NONE;
    R->memo[OMPF_LABEL_ROOT] = OMPF_LABEL_ROOT;
    R->rev[0] = OMPF_LABEL_ROOT;
    R->n_olab = 1;
    int rc = 0;
    for (size_t i = 0; i < nt && !rc; i++)
        rc = out_label(c, R, R->olab[i], &R->olab[i]);
    return rc;
}

static void free_rows(fz_rows_t *R)
{
    free(R->tup);
    free(R->ord);
    free(R->olab);
    free(R->memo);
    free(R->rev);
    free(R->ex);
    free(R->pbuf);
}

/* The recorded parts of base XU bi (NULL: none), in place for a full base
 * and unpacked into R->pbuf for a packed one (profile.h,
 * OMPF_LEAN_PACKED); *rc is OMPF_ENOMEM when that buffer cannot grow. */
static const ompf_part_t *base_parts(fz_rows_t *R, uint32_t bi, uint32_t *np, int *rc)
{
    const ompf_profile_t *base = R->c->runs[R->c->order[0]].p;
    *rc = 0;
    if (!ompf_xu_has_parts(base, bi))
        return NULL;
    if (!ompf_profile_lean(base)) {
        ompf_part_t one;
        return ompf_xu_parts(base, bi, np, &one);
    }
    if (ompf_xu_parts_copy(base, bi, R->pbuf, R->cap_pbuf, np) == 0)
        return R->pbuf;
    ompf_part_t *nb = *np > R->cap_pbuf ? realloc(R->pbuf, (size_t)*np * sizeof *nb) : NULL;
    if (nb) {
        R->pbuf = nb;
        R->cap_pbuf = *np;
    }
    if (!nb || ompf_xu_parts_copy(base, bi, R->pbuf, R->cap_pbuf, np)) {
        *rc = OMPF_ENOMEM;
        return NULL;
    }
    return R->pbuf;
}

/* Output XU i: record, values and provenance; *exact set when a value
 * needs its exact count looked up (rare: counts above 2^53). */
static void make_row(const fz_rows_t *R, size_t i, ompf_xu_t *x, double *vals,
                     uint64_t *prov, int *exact)
{
    fz_ctx_t *c = R->c;
    size_t n = c->n, b = c->order[0], nt = R->nt;
    if (i + 32 < nt)
        __builtin_prefetch(row(R, i + 32));
    if (i + 16 < nt) {
        const uint32_t *ta = row(R, i + 16);
        for (size_t r = 0; r < n; r++)
            __builtin_prefetch(r == b ? (const void *)ompf_xu_get(c->runs[r].p, ta[r])
                                      : (const void *)&c->runs[r].vid.base[ta[r] * c->runs[r].vid.stride]);
        for (size_t g = 0; g < c->n_events; g++) {
            uint32_t q = c->events[g].provider;
            if (q != FZ_NONE)
                __builtin_prefetch(ompf_xu_values_const(c->runs[q].p, ta[q]) +
                                   c->runs[q].ev[g]);
        }
    }
    const uint32_t *tp = row(R, i);
    ompf_xu_record(c->runs[b].p, tp[b], x); /* full or packed (fuse.c, lean_ok) */
    x->type = c->runs[b].ctype[x->type];
    x->label = R->olab[i];
    *exact = 0;
    for (size_t g = 0; g < c->n_events; g++) {
        uint32_t q = c->events[g].provider;
        vals[g] = q == FZ_NONE
                      ? OMPF_MISSING
                      : ompf_xu_values_const(c->runs[q].p, tp[q])[c->runs[q].ev[g]];
        *exact |= vals[g] >= 9007199254740992.0;
    }
    for (size_t r = 0; r < n; r++)
        prov[r] = fz_xu_id(&c->runs[r], tp[r]);
}

/* Calls fn(ctx, g, count) for every event of output XU i whose input
 * holds an exact count above 2^53 (profile.h, "Exact counts"). */
static int row_exact(const fz_rows_t *R, size_t i, const double *vals,
                     int (*fn)(void *, size_t, uint32_t, uint64_t), void *ctx)
{
    fz_ctx_t *c = R->c;
    const uint32_t *tp = row(R, i);
    int rc = 0;
    for (size_t g = 0; g < c->n_events && !rc; g++) {
        uint32_t q = c->events[g].provider;
        uint64_t ex;
        if (vals[g] >= 9007199254740992.0 &&
            ompf_xu_value_u64(c->runs[q].p, tp[q], (uint32_t)c->runs[q].ev[g], &ex))
            rc = fn(ctx, i, (uint32_t)g, ex);
    }
    return rc;
}

static int set_exact(void *out, size_t i, uint32_t g, uint64_t ex)
{
    return ompf_xu_value_set_u64(out, i, g, ex);
}

/* Node parent and component of the output trie (prepare_rows). */
static void label_of(const fz_rows_t *R, uint32_t node, uint32_t *parent, uint64_t *comp)
{
    uint32_t u = R->rev[node];
    *parent = R->memo[ompf_label_parent(R->c->ut, u)];
    *comp = ompf_label_component(R->c->ut, u);
}

/* The output trie into out's own (a profile in memory holds its labels);
 * node j there is node j of prepare_rows. */
static int copy_labels(const fz_rows_t *R, ompf_profile_t *out)
{
    int rc = 0;
    for (uint32_t j = 1; j < R->n_olab && !rc; j++) {
        uint32_t parent;
        uint64_t comp;
        label_of(R, j, &parent, &comp);
        rc = ompf_label_append(out, parent, comp, NULL);
    }
    return rc;
}

int fz_build_output(fz_ctx_t *c, const char *forced, ompf_profile_t **outp)
{
    ompf_profile_t *out = NULL;
    double *vals = NULL;
    fz_rows_t R;
    memset(&R, 0, sizeof R);
    int rc = build_header(c, forced, &out);
    if (rc)
        return rc;
    size_t nt = c->res.n, b = c->order[0];
    vals = malloc((c->n_events ? c->n_events : 1) * sizeof *vals);
    uint64_t *prov = malloc(c->n * sizeof *prov);
    if (!vals || !prov || (rc = prepare_rows(c, &R)) || (rc = copy_labels(&R, out)) ||
        (rc = ompf_xu_reserve(out, nt))) {
        rc = rc ? rc : OMPF_ENOMEM;
        goto fail;
    }
    for (size_t i = 0; i < nt; i++) {
        ompf_xu_t x;
        int exact;
        make_row(&R, i, &x, vals, prov, &exact);
        if ((rc = ompf_xu_add(out, &x, vals)))
            break;
        /* Counts above 2^53 keep their exact value (profile.h). */
        if (exact && (rc = row_exact(&R, i, vals, set_exact, out)))
            break;
        /* the parts come with the timing: both from the base run */
        uint32_t np;
        const ompf_part_t *pt = base_parts(&R, row(&R, i)[b], &np, &rc);
        if (rc || (pt && (rc = ompf_xu_set_parts(out, i, pt, np))))
            break;
        memcpy(ompf_xu_provenance(out, i), prov, c->n * sizeof *prov);
        ompf_progress_add(c->opts->progress, c->n);
    }
    if (rc)
        goto fail;
    free_rows(&R);
    free(vals);
    free(prov);
    *outp = out;
    return 0;
fail:
    free_rows(&R);
    free(vals);
    free(prov);
    ompf_profile_destroy(out);
    return rc;
}

/* ---- streaming: the XUs go to the file chunk by chunk ---------------------- */

static int push_exact(void *ctx, size_t i, uint32_t g, uint64_t ex)
{
    fz_rows_t *R = ctx;
    double d = (double)ex; /* 2^64 itself is no uint64_t: compare in double first */
    if (d < 18446744073709551616.0 && (uint64_t)d == ex)
        return 0; /* a double holds it: no entry, as ompf_xu_value_set_u64 */
    if (R->n_ex + 3 > R->cap_ex) {
        size_t cap = R->cap_ex ? 2 * R->cap_ex : 96;
        uint64_t *v = realloc(R->ex, cap * sizeof *v);
        if (!v)
            return OMPF_ENOMEM;
        R->ex = v;
        R->cap_ex = cap;
    }
    const fz_ctx_t *c = R->c;
    R->ex[R->n_ex++] = fz_xu_id(&c->runs[c->order[0]], row(R, i)[c->order[0]]);
    R->ex[R->n_ex++] = g;
    R->ex[R->n_ex++] = ex;
    return 0;
}

static int feed_rows(void *ctx, size_t first, size_t k, ompf_xu_t *xu,
                     double *values, uint64_t *prov)
{
    fz_rows_t *R = ctx;
    size_t ne = R->c->n_events;
    int rc = 0;
    for (size_t j = 0; j < k && !rc; j++) {
        int exact;
        make_row(R, first + j, &xu[j], values + j * ne, prov + j * R->c->n, &exact);
        if (exact)
            rc = row_exact(R, first + j, values + j * ne, push_exact, R);
    }
    ompf_progress_add(R->c->opts->progress, k * R->c->n);
    return rc;
}

static void feed_exact(void *ctx, const uint64_t **triples, size_t *n)
{
    fz_rows_t *R = ctx;
    *triples = R->ex;
    *n = R->n_ex / 3;
}

static const ompf_part_t *feed_parts(void *ctx, size_t i, uint32_t *np,
                                     ompf_part_t *one, uint64_t *id)
{
    (void)one;
    fz_rows_t *R = ctx;
    const fz_ctx_t *c = R->c;
    uint32_t bi = row(R, i)[c->order[0]];
    int rc;
    const ompf_part_t *pt = base_parts(R, bi, np, &rc);
    *id = fz_xu_id(&c->runs[c->order[0]], bi);
    if (rc && !*np)
        *np = 1; /* NULL with a count: the write fails (file.h) */
    return pt;
}

static void feed_label(void *ctx, uint32_t node, uint32_t *parent, uint64_t *comp)
{
    label_of(ctx, node, parent, comp);
}

int fz_write_output(fz_ctx_t *c, const char *forced, const char *path)
{
    ompf_profile_t *hdr = NULL;
    fz_rows_t R;
    memset(&R, 0, sizeof R);
    int rc = build_header(c, forced, &hdr);
    if (rc)
        return rc;
    if (!(rc = prepare_rows(c, &R))) {
        ompf_xu_feed_t f = {R.nt, &R, feed_rows, feed_exact, feed_parts, R.n_olab, feed_label};
        rc = ompf_profile_write_feed(hdr, &f, path, c->err);
    }
    free_rows(&R);
    ompf_profile_destroy(hdr);
    return rc;
}
