/* Deep comparison of two profiles, for round-trip and property tests.
 * Label nodes may be numbered differently in the two profiles: labels are
 * compared by value. */
#include <string.h>

#include "profile_internal.h"

static int str_eq(const char *a, const char *b)
{
    if (!a || !b)
        return (!a || !*a) && (!b || !*b);
    return !strcmp(a, b);
}

/* Equal as stored: bitwise for numbers, both missing counts as equal. */
static int val_eq(double a, double b)
{
    if (ompf_is_missing(a) || ompf_is_missing(b))
        return ompf_is_missing(a) && ompf_is_missing(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

#define DIFF(...) return ompf_error_set(err, OMPF_EMISMATCH, __VA_ARGS__)

static int compare_meta(const ompf_profile_t *a, const ompf_profile_t *b,
                        ompf_error_t *err)
{
    if (a->n_meta != b->n_meta)
        DIFF("metadata: %zu vs %zu keys", a->n_meta, b->n_meta);
    for (size_t i = 0; i < a->n_meta; i++) {
        const char *v = ompf_meta_get(b, a->meta_key[i]);
        if (!v || strcmp(v, a->meta_val[i]))
            DIFF("metadata '%s': '%s' vs '%s'", a->meta_key[i], a->meta_val[i],
                 v ? v : "(absent)");
    }
    return 0;
}

static int compare_events(const ompf_profile_t *a, const ompf_profile_t *b,
                          ompf_error_t *err)
{
    if (a->n_ev != b->n_ev)
        DIFF("events: %zu vs %zu", a->n_ev, b->n_ev);
    for (size_t i = 0; i < a->n_ev; i++) {
        const ompf_event_t *x = &a->ev[i], *y = &b->ev[i];
        if (strcmp(x->name, y->name) || x->pe_type != y->pe_type ||
            x->config != y->config || x->config1 != y->config1 ||
            x->config2 != y->config2 || x->pe_flags != y->pe_flags ||
            x->status != y->status || !str_eq(x->reason, y->reason) ||
            x->source != y->source)
            DIFF("event %zu ('%s' vs '%s') differs", i, x->name, y->name);
    }
    return 0;
}

static int compare_constructs(const ompf_profile_t *a, const ompf_profile_t *b,
                              ompf_error_t *err)
{
    if (a->n_con != b->n_con)
        DIFF("constructs: %zu vs %zu", a->n_con, b->n_con);
    for (size_t i = 0; i < a->n_con; i++) {
        const ompf_construct_t *x = &a->con[i], *y = &b->con[i];
        if (!str_eq(x->module, y->module) || !str_eq(x->build_id, y->build_id) ||
            x->offset != y->offset || x->kind != y->kind ||
            !str_eq(x->file, y->file) || x->line != y->line ||
            !str_eq(x->function, y->function) || !str_eq(x->name, y->name))
            DIFF("construct %zu ('%s' vs '%s') differs", i, x->name, y->name);
    }
    return 0;
}

static int compare_xus(const ompf_profile_t *a, const ompf_profile_t *b,
                       ompf_error_t *err)
{
    if (a->n_xu != b->n_xu)
        DIFF("XUs: %zu vs %zu", a->n_xu, b->n_xu);
    if ((a->lean || b->lean) && a->n_xu)
        DIFF("a lean profile (profile.h) cannot be compared XU by XU");
    for (size_t i = 0; i < a->n_xu; i++) {
        ompf_xu_t x = a->xu[i], y = b->xu[i];
        if (ompf_label_compare(a, x.label, b, y.label))
            DIFF("XU %zu (id %llu): labels differ", i, (unsigned long long)x.id);
        x.label = y.label = 0;
        if (x.id != y.id || x.type != y.type || x.thread != y.thread ||
            x.team_thread != y.team_thread || x.team_size != y.team_size ||
            x.parts != y.parts || x.cpu != y.cpu || x.core != y.core ||
            x.numa != y.numa || x.kind != y.kind || x.start_ns != y.start_ns ||
            x.end_ns != y.end_ns || x.iter_start != y.iter_start ||
            x.iter_count != y.iter_count)
            DIFF("XU %zu (id %llu): fields differ", i, (unsigned long long)x.id);
        if (ompf_xu_has_parts(a, i) != ompf_xu_has_parts(b, i))
            DIFF("XU %zu (id %llu): parts recorded in one profile only", i,
                 (unsigned long long)x.id);
        uint32_t npa, npb;
        ompf_part_t oa, ob;
        const ompf_part_t *pa = ompf_xu_parts(a, i, &npa, &oa), *pb = ompf_xu_parts(b, i, &npb, &ob);
        for (uint32_t k = 0; k < npa && npa == npb; k++)
            if (pa[k].thread != pb[k].thread || pa[k].start_ns != pb[k].start_ns ||
                pa[k].end_ns != pb[k].end_ns)
                DIFF("XU %zu (id %llu): part %u differs", i, (unsigned long long)x.id, k);
        const double *va = ompf_xu_values_const(a, i);
        const double *vb = ompf_xu_values_const(b, i);
        for (size_t e = 0; e < a->n_ev; e++) {
            if (!val_eq(va[e], vb[e]))
                DIFF("XU %zu (id %llu) event '%s': %.17g vs %.17g", i,
                     (unsigned long long)x.id, a->ev[e].name, va[e], vb[e]);
            uint64_t ua = 0, ub = 0; /* exact counts above 2^53 */
            if (va[e] >= 9007199254740992.0 &&
                (ompf_xu_value_u64(a, i, (uint32_t)e, &ua) !=
                     ompf_xu_value_u64(b, i, (uint32_t)e, &ub) || ua != ub))
                DIFF("XU %zu (id %llu) event '%s': exact counts %llu vs %llu", i,
                     (unsigned long long)x.id, a->ev[e].name, (unsigned long long)ua,
                     (unsigned long long)ub);
        }
        for (size_t s = 0; s < a->n_src; s++)
            if (a->prov[i * a->n_src + s] != b->prov[i * b->n_src + s])
                DIFF("XU %zu (id %llu): provenance of source %zu differs", i,
                     (unsigned long long)x.id, s);
    }
    return 0;
}

static int compare_threads(const ompf_profile_t *a, const ompf_profile_t *b,
                           ompf_error_t *err)
{
    if (a->n_th != b->n_th)
        DIFF("threads: %zu vs %zu", a->n_th, b->n_th);
    size_t n = a->n_ev ? a->n_ev : 1;
    for (size_t i = 0; i < a->n_th; i++) {
        if (a->th[i].os_tid != b->th[i].os_tid)
            DIFF("thread %zu: os tid %d vs %d", i, a->th[i].os_tid,
                 b->th[i].os_tid);
        for (size_t k = 0; k < 4 * n; k++)
            if (!val_eq(a->th[i].total[k], b->th[i].total[k]))
                DIFF("thread %zu: totals differ", i);
    }
    return 0;
}

static int compare_sources(const ompf_profile_t *a, const ompf_profile_t *b,
                           ompf_error_t *err)
{
    if (a->n_src != b->n_src)
        DIFF("sources: %zu vs %zu", a->n_src, b->n_src);
    for (size_t i = 0; i < a->n_src; i++)
        if (a->src[i].run_id != b->src[i].run_id ||
            !str_eq(a->src[i].path, b->src[i].path))
            DIFF("source %zu differs", i);
    return 0;
}

int ompf_profile_compare(const ompf_profile_t *a, const ompf_profile_t *b,
                         ompf_error_t *err)
{
    if (!a || !b)
        return ompf_error_set(err, OMPF_EINVAL, "no profile to compare");
    int rc;
    if ((rc = compare_meta(a, b, err)) || (rc = compare_events(a, b, err)) ||
        (rc = compare_constructs(a, b, err)) ||
        (rc = compare_sources(a, b, err)) || (rc = compare_xus(a, b, err)) ||
        (rc = compare_threads(a, b, err)))
        return rc;
    return 0;
}
