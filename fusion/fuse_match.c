/* Matching across inputs: global types by construct key, global events by
 * name (and which inputs really have values), the union label trie, and
 * every run's XUs grouped by type. */
#include <stdio.h>
#include <string.h>

#include "fz.h"

/* ---- matching types and events ------------------------------------------ */

typedef struct {
    char *key;
    uint32_t run, cidx, grp;
} tentry_t;

static int cmp_tentry(const void *a, const void *b)
{
    const tentry_t *x = a, *y = b;
    int s = strcmp(x->key, y->key);
    if (s)
        return s;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    return (x->cidx > y->cidx) - (x->cidx < y->cidx);
}

static int cmp_tentry_first(const void *a, const void *b)
{
    const tentry_t *x = a, *y = b;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    return (x->cidx > y->cidx) - (x->cidx < y->cidx);
}

/* Global types = distinct construct keys, in order of first appearance. */
int fz_match_types(fz_ctx_t *c)
{
    size_t total = 0;
    for (size_t r = 0; r < c->n; r++)
        total += ompf_construct_count(c->runs[r].p);
    tentry_t *e = calloc(total ? total : 1, sizeof *e);
    tentry_t *firsts = calloc(total ? total : 1, sizeof *firsts);
    int rc = OMPF_ENOMEM;
    if (!e || !firsts)
        goto out;
    size_t k = 0;
    for (size_t r = 0; r < c->n; r++) {
        size_t nc = ompf_construct_count(c->runs[r].p);
        c->runs[r].ctype = malloc((nc ? nc : 1) * sizeof(uint32_t));
        if (!c->runs[r].ctype)
            goto out;
        for (size_t i = 0; i < nc; i++, k++) {
            char buf[1024];
            if (ompf_construct_key(c->runs[r].p, (uint32_t)i, buf, sizeof buf))
                snprintf(buf, sizeof buf, "?%zu", i);
            if (!(e[k].key = fz_strdup(buf)))
                goto out;
            e[k].run = (uint32_t)r;
            e[k].cidx = (uint32_t)i;
        }
    }
    qsort(e, total, sizeof *e, cmp_tentry);
    size_t ng = 0;
    for (size_t i = 0; i < total; i++)
        if (!i || strcmp(e[i].key, e[i - 1].key)) {
            firsts[ng] = e[i];
            firsts[ng].grp = (uint32_t)ng;
            ng++;
        }
    qsort(firsts, ng, sizeof *firsts, cmp_tentry_first);
    c->types = calloc(ng ? ng : 1, sizeof *c->types);
    if (!c->types)
        goto out;
    c->n_types = ng;
    for (size_t g = 0; g < ng; g++) {
        if (!(c->types[g].key = fz_strdup(firsts[g].key)))
            goto out;
        c->types[g].run = firsts[g].run;
        c->types[g].cidx = firsts[g].cidx;
    }
    /* Map every construct to its type: group (key order) -> type. */
    uint32_t *gtype = malloc((ng ? ng : 1) * sizeof *gtype);
    if (!gtype)
        goto out;
    for (size_t t = 0; t < ng; t++)
        gtype[firsts[t].grp] = (uint32_t)t;
    for (size_t i = 0, g = 0; i < total; i++) {
        if (i && strcmp(e[i].key, e[i - 1].key))
            g++;
        c->runs[e[i].run].ctype[e[i].cidx] = gtype[g];
    }
    free(gtype);
    rc = 0;
out:
    if (e)
        for (size_t i = 0; i < total; i++)
            free(e[i].key);
    free(e);
    free(firsts);
    return rc;
}

/* Whether any XU has a value for event e (stops at the first one). */
static int has_values(const ompf_profile_t *p, size_t n_xu, uint32_t e)
{
    for (size_t i = 0; i < n_xu; i++)
        if (!ompf_is_missing(ompf_xu_values_const(p, i)[e]))
            return 1;
    return 0;
}

int fz_match_events(fz_ctx_t *c)
{
    size_t cap = 0;
    for (size_t r = 0; r < c->n; r++)
        cap += ompf_event_count(c->runs[r].p);
    c->events = calloc(cap ? cap : 1, sizeof *c->events);
    if (!c->events)
        return OMPF_ENOMEM;
    for (size_t r = 0; r < c->n; r++) {
        const ompf_profile_t *p = c->runs[r].p;
        for (uint32_t i = 0; i < ompf_event_count(p); i++) {
            const char *name = ompf_event_get(p, i)->name;
            size_t g = 0;
            while (g < c->n_events && strcmp(c->events[g].name, name))
                g++;
            if (g == c->n_events) {
                if (!(c->events[g].name = fz_strdup(name)))
                    return OMPF_ENOMEM;
                c->events[g].first = (uint32_t)r;
                c->events[g].provider = FZ_NONE;
                c->n_events++;
            }
        }
    }
    for (size_t r = 0; r < c->n; r++) {
        fz_run_t *R = &c->runs[r];
        R->ev = malloc((c->n_events ? c->n_events : 1) * sizeof(int32_t));
        R->novals = calloc(c->n_events ? c->n_events : 1, 1);
        if (!R->ev || !R->novals)
            return OMPF_ENOMEM;
        for (size_t g = 0; g < c->n_events; g++) {
            int i = ompf_event_find(R->p, c->events[g].name);
            if (i >= 0 &&
                ompf_event_get(R->p, (uint32_t)i)->status == OMPF_EV_FAILED)
                i = -1;
            /* The status says measured, but the data decides: a column
             * without a single value (an empty CSV column) provides
             * nothing, so the event must come from another input. */
            if (i >= 0 && R->n_xu && !has_values(R->p, R->n_xu, (uint32_t)i)) {
                R->novals[g] = 1;
                i = -1;
            }
            R->ev[g] = i;
        }
    }
    return 0;
}

/* Union trie: every label of every input, so that labels of different runs
 * compare as integers (same node = same label; depth-first rank = label
 * order). */
int fz_build_union_trie(fz_ctx_t *c)
{
    /* Inputs that share one trie (profile.h, "Shared labels": combine
     * reads them so) need no other: their labels are its nodes. */
    const ompf_profile_t *sp = ompf_profile_label_space(c->runs[0].p);
    int shared = sp != c->runs[0].p;
    for (size_t r = 1; r < c->n; r++)
        shared &= ompf_profile_label_space(c->runs[r].p) == sp;
    if (shared) {
        c->ut = sp;
        goto rank;
    }
    int rc = ompf_profile_create(&c->ut_own);
    if (rc)
        return rc;
    c->ut = c->ut_own;
    /* Runs mostly share labels: the largest one is a good first size. */
    size_t most = 0;
    for (size_t r = 0; r < c->n; r++)
        if (ompf_label_count(ompf_profile_label_space(c->runs[r].p)) > most)
            most = ompf_label_count(ompf_profile_label_space(c->runs[r].p));
    if ((rc = ompf_label_reserve(c->ut_own, most)))
        return rc;
    for (size_t r = 0; r < c->n; r++) {
        const ompf_profile_t *p = ompf_profile_label_space(c->runs[r].p);
        size_t nl = ompf_label_count(p);
        uint32_t *m = malloc((nl ? nl : 1) * sizeof *m);
        if (!m)
            return OMPF_ENOMEM;
        c->runs[r].ulab = m;
        if ((rc = ompf_label_map_into(p, c->ut_own, m)))
            return rc == OMPF_EFORMAT
                       ? ompf_error_set(c->err, rc, "%s: a label node has a later parent",
                                        c->rep->in_name[r])
                       : rc;
    }
rank:
    /* Label order: BC's cells need it (CTC's rare ties compare labels) */
    if (c->opts->strategy != OMPF_FUSE_BC && c->opts->strategy != OMPF_FUSE_BC_UNLABELED)
        return 0;
    size_t nu = ompf_label_count(c->ut);
    c->urank = malloc(nu * sizeof *c->urank);
    if (!c->urank)
        return OMPF_ENOMEM;
    return ompf_label_dfs_rank(c->ut, c->urank);
}

int fz_group_by_type(fz_ctx_t *c)
{
    for (size_t r = 0; r < c->n; r++) {
        fz_run_t *R = &c->runs[r];
        R->tstart = calloc(c->n_types + 1, sizeof *R->tstart);
        if (!R->tstart)
            return OMPF_ENOMEM;
        int sorted = 1; /* the XUs in type order: no index list needed */
        for (size_t i = 0, prev = 0; i < R->n_xu; i++) {
            uint32_t ct = fz_xu_type(R, i);
            if (ct >= ompf_construct_count(R->p))
                return ompf_error_set(c->err, OMPF_EFORMAT,
                                      "%s: XU %zu refers to a missing construct",
                                      c->rep->in_name[r], i);
            R->tstart[R->ctype[ct] + 1]++;
            sorted &= R->ctype[ct] >= prev;
            prev = R->ctype[ct];
        }
        for (size_t t = 0; t < c->n_types; t++)
            R->tstart[t + 1] += R->tstart[t];
        /* CTC sorts each run's XUs by type and time at once */
        if (!sorted && c->opts->strategy != OMPF_FUSE_CTC && fz_bytype_make(c, R))
            return OMPF_ENOMEM;
    }
    return 0;
}

int fz_bytype_make(const fz_ctx_t *c, fz_run_t *R)
{
    R->bytype = malloc((R->n_xu ? R->n_xu : 1) * sizeof *R->bytype);
    uint32_t *pos = malloc((c->n_types ? c->n_types : 1) * sizeof *pos);
    if (!R->bytype || !pos) {
        free(pos);
        return OMPF_ENOMEM; /* R->bytype is freed with the context */
    }
    memcpy(pos, R->tstart, c->n_types * sizeof *pos);
    for (size_t i = 0; i < R->n_xu; i++)
        R->bytype[pos[R->ctype[fz_xu_type(R, i)]]++] = (uint32_t)i;
    free(pos);
    return 0;
}
