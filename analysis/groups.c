/*
 * Groups: XUs keyed by the chosen dimensions (hash table), their
 * statistics per column, and the gap rows that make shares add up to
 * 100 % (order.c sorts them).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis_internal.h"

#define NOMEM(err) ompf_error_set(err, OMPF_ENOMEM, "out of memory")

uint32_t aancestor_at(const ompf_profile_t *p, uint32_t node, uint32_t depth)
{
    uint32_t d = ompf_label_depth(p, node);
    while (d > depth) {
        node = ompf_label_parent(p, node);
        d--;
    }
    return node;
}

static int64_t dim_value(const ompf_aresult_t *r, const ompf_xu_t *x, int d)
{
    switch (d) {
    case ADIM_CONSTRUCT: return r->canon[x->type];
    case ADIM_THREAD: return x->thread;
    case ADIM_CORE: return x->core;
    case ADIM_NUMA: return x->numa;
    case ADIM_KIND: return x->kind;
    default: /* subtree: XUs above the depth form groups of their own */
        return aancestor_at(r->p, x->label, r->depth);
    }
}

static uint64_t key_hash(const int64_t *k, int n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)k[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ull;
    }
    return h ^ (h >> 31);
}

static const ompf_aresult_t *key_r;
static int key_cmp(const void *a, const void *b)
{
    const agroup_t *x = a, *y = b;
    for (int d = 0; d < key_r->ndims; d++) {
        int dim = key_r->dims[d];
        if (x->key[dim] != y->key[dim]) {
            if (dim == ADIM_SUBTREE)
                return ompf_label_compare(key_r->p, (uint32_t)x->key[dim], key_r->p,
                                          (uint32_t)y->key[dim]);
            return x->key[dim] < y->key[dim] ? -1 : 1;
        }
    }
    return 0;
}

static int group_name(const ompf_aresult_t *r, agroup_t *g)
{
    char buf[4096];
    size_t len = 0;
    for (int d = 0; d < r->ndims && len < sizeof buf; d++) {
        int dim = r->dims[d];
        int64_t v = g->key[dim];
        const char *sep = d ? " " : "";
        size_t room = sizeof buf - len;
        switch (dim) {
        case ADIM_CONSTRUCT:
            len += (size_t)snprintf(buf + len, room, "%s%s", sep,
                                    ares_construct_name(r->p, (uint32_t)v));
            break;
        case ADIM_KIND:
            len += (size_t)snprintf(buf + len, room, "%s%s", sep,
                                    ompf_xu_kind_name((ompf_xu_kind_t)v));
            break;
        case ADIM_SUBTREE:
            len += (size_t)snprintf(buf + len, room, "%s", sep);
            if (len < sizeof buf)
                len += ompf_label_format(r->p, (uint32_t)v, buf + len, sizeof buf - len);
            break;
        default:
            if (v < 0)
                len += (size_t)snprintf(buf + len, room, "%s%s ?", sep, adim_names[dim]);
            else
                len += (size_t)snprintf(buf + len, room, "%s%s %lld", sep, adim_names[dim],
                                        (long long)v);
        }
    }
    g->name = strdup(len ? buf : "all");
    return g->name ? 0 : OMPF_ENOMEM;
}

static int group_alloc(agroup_t *g, size_t ncols)
{
    g->st = calloc(ncols, sizeof *g->st);
    g->share = malloc(ncols * sizeof *g->share);
    g->ratio = malloc(ncols * sizeof *g->ratio);
    g->excl_sum = calloc(ncols, sizeof *g->excl_sum);
    g->excl_n = calloc(ncols, sizeof *g->excl_n);
    if (!g->st || !g->share || !g->ratio || !g->excl_sum || !g->excl_n)
        return OMPF_ENOMEM;
    for (size_t c = 0; c < ncols; c++)
        g->share[c] = g->ratio[c] = NAN;
    return 0;
}

/* Keys every selected XU; groups come out in key order, gid[s] is the
 * group of r->sel[s]. */
static int key_xus(ompf_aresult_t *r, uint32_t *gid, size_t *ngroups)
{
    size_t cap = 64, ng = 0, tsize = 128;
    agroup_t *g = calloc(cap, sizeof *g);
    uint32_t *table = malloc(tsize * sizeof *table);
    if (!g || !table)
        goto nomem;
    memset(table, 0xff, tsize * sizeof *table);
    int64_t key[ADIM_COUNT] = {0}, k[ADIM_COUNT];
    for (size_t s = 0; s < r->nsel; s++) {
        const ompf_xu_t *x = ompf_xu_get(r->p, r->sel[s]);
        for (int d = 0; d < r->ndims; d++)
            k[d] = key[r->dims[d]] = dim_value(r, x, r->dims[d]);
        size_t h = (size_t)key_hash(k, r->ndims) & (tsize - 1);
        for (;;) {
            uint32_t gi = table[h];
            if (gi == UINT32_MAX)
                break;
            int same = 1;
            for (int d = 0; d < r->ndims && same; d++)
                same = g[gi].key[r->dims[d]] == key[r->dims[d]];
            if (same)
                break;
            h = (h + 1) & (tsize - 1);
        }
        if (table[h] == UINT32_MAX) {
            if (ng == cap) {
                agroup_t *ng2 = realloc(g, 2 * cap * sizeof *g);
                if (!ng2)
                    goto nomem;
                g = ng2;
                memset(g + cap, 0, cap * sizeof *g);
                cap *= 2;
            }
            memcpy(g[ng].key, key, sizeof key);
            table[h] = (uint32_t)ng++;
            if (2 * ng > tsize) { /* grow and rehash */
                size_t nt = 4 * tsize;
                uint32_t *t2 = malloc(nt * sizeof *t2);
                if (!t2)
                    goto nomem;
                memset(t2, 0xff, nt * sizeof *t2);
                for (uint32_t gi = 0; gi < ng; gi++) {
                    for (int d = 0; d < r->ndims; d++)
                        k[d] = g[gi].key[r->dims[d]];
                    size_t h2 = (size_t)key_hash(k, r->ndims) & (nt - 1);
                    while (t2[h2] != UINT32_MAX)
                        h2 = (h2 + 1) & (nt - 1);
                    t2[h2] = gi;
                }
                free(table);
                table = t2;
                tsize = nt;
                for (int d = 0; d < r->ndims; d++)
                    k[d] = key[r->dims[d]];
                h = (size_t)key_hash(k, r->ndims) & (tsize - 1);
                while (table[h] != (uint32_t)(ng - 1))
                    h = (h + 1) & (tsize - 1);
            }
        }
        gid[s] = table[h];
    }
    free(table);
    /* key order: sort, then renumber */
    for (size_t i = 0; i < ng; i++)
        g[i].xus = i; /* old index, temporarily */
    key_r = r;
    qsort(g, ng, sizeof *g, key_cmp);
    uint32_t *renum = malloc((ng + 1) * sizeof *renum);
    if (!renum) {
        free(g);
        return OMPF_ENOMEM;
    }
    for (size_t i = 0; i < ng; i++) {
        renum[g[i].xus] = (uint32_t)i;
        g[i].xus = 0;
    }
    for (size_t s = 0; s < r->nsel; s++)
        gid[s] = renum[gid[s]];
    free(renum);
    r->groups = g;
    *ngroups = ng;
    return 0;
nomem:
    free(g);
    free(table);
    return OMPF_ENOMEM;
}

/* Statistics of one group over its XUs idx[0..n).  The XUs are visited
 * in row order once per batch of columns (not once per column): the
 * selection is in group order, so rows are far apart in memory and each
 * visit is a cache miss.  block holds cap values: a batch's columns,
 * n values each. */
/* Statistics of every group, column by column in batches.  The selected
 * XUs are read in their order in the profile and their values scattered
 * into per-group runs of a block (group g's run of column j starts at
 * start[g]): reading them group by group instead would make every row
 * read a cache miss.  A batch is as many columns as fit in 32 MiB;
 * batches are independent (each writes its own columns' statistics), so
 * worker threads take them in turn, and the first batch also sums the
 * metrics' inputs for the ratios of sums. */
typedef struct gjob {
    ompf_aresult_t *r;
    size_t ng, per, nthreads, t;
    const uint32_t *gid;
    const size_t *start;
    double *acc;  /* per group and metric: sums of its variables */
    size_t *used; /* per group and metric: XUs in those sums */
    int rc;
} gjob_t;

/* XUs a worker handles at once: metrics are evaluated over such chunks
 * (one pass of the expression per chunk, not per XU). */
#define CHUNK 256

static void *group_worker(void *arg)
{
    gjob_t *jb = arg;
    ompf_aresult_t *r = jb->r;
    size_t nev = ompf_event_count(r->p), nc = r->ncols, n = r->nsel, ng = jb->ng;
    size_t nm = nc - 1 - nev, nv = nev + 2, per = jb->per;
    const uint32_t *gid = jb->gid;
    const size_t *start = jb->start;
    double *acc = jb->acc;
    size_t *used = jb->used;
    int sub = 0, depth = 1;
    for (int d = 0; d < r->ndims; d++)
        sub |= r->dims[d] == ADIM_SUBTREE;
    for (size_t c = 1 + nev; c < nc; c++)
        depth = r->cols[c].expr.depth > depth ? r->cols[c].expr.depth : depth;
    double *block = malloc((per * n + 1) * sizeof *block);
    size_t *cnt = malloc((ng * per + 1) * sizeof *cnt);
    double *vm = malloc(nv * CHUNK * sizeof *vm);           /* variables */
    double *mval = malloc((per * CHUNK + 1) * sizeof *mval); /* metric values */
    unsigned char *mst = malloc(per * CHUNK + 1);
    double *stack = malloc((size_t)depth * CHUNK * sizeof *stack);
    if (!block || !cnt || !vm || !mval || !mst || !stack) {
        free(block), free(cnt), free(vm), free(mval), free(mst), free(stack);
        jb->rc = OMPF_ENOMEM;
        return NULL;
    }
    for (size_t c0 = jb->t * per; c0 < nc; c0 += per * jb->nthreads) {
        size_t cb = nc - c0 < per ? nc - c0 : per;
        int need_vars = c0 == 0 || c0 + cb > 1 + nev; /* ratios or metrics */
        memset(cnt, 0, ng * per * sizeof *cnt);
        for (size_t s0 = 0; s0 < n; s0 += CHUNK) {
            size_t m = n - s0 < CHUNK ? n - s0 : CHUNK;
            if (need_vars) {
                for (size_t k = 0; k < m; k++) {
                    const ompf_xu_t *x = ompf_xu_get(r->p, r->sel[s0 + k]);
                    const double *row = ompf_xu_values_const(r->p, r->sel[s0 + k]);
                    for (size_t e = 0; e < nev; e++)
                        vm[e * CHUNK + k] = row[e];
                    vm[AV_DURATION(nev) * CHUNK + k] = axu_time(r->p, r->sel[s0 + k], x);
                    vm[AV_ITERATIONS(nev) * CHUNK + k] = (double)x->iter_count;
                }
                for (size_t j = 0; j < cb; j++)
                    if (r->cols[c0 + j].kind == ACOL_METRIC)
                        aexpr_eval_many(&r->cols[c0 + j].expr, vm, CHUNK, m,
                                        mval + j * CHUNK, mst + j * CHUNK, stack);
            }
            for (size_t k = 0; k < m; k++) {
                size_t s = s0 + k, i = r->sel[s];
                agroup_t *g = &r->groups[gid[s]];
                const ompf_xu_t *x = ompf_xu_get(r->p, i);
                const double *row = ompf_xu_values_const(r->p, i);
                int excl = sub && x->label == (uint32_t)g->key[ADIM_SUBTREE];
                if (c0 == 0) {
                    g->xus++;
                    g->excl_xus += (size_t)excl;
                    /* a metric's sums take the XUs that have all its inputs */
                    for (size_t j = 0; j < nm; j++) {
                        const aexpr_t *e = &r->cols[1 + nev + j].expr;
                        int all = 1;
                        for (int v = 0; v < e->n_vars && all; v++)
                            all = !isnan(vm[e->vars[v] * CHUNK + k]);
                        if (!all)
                            continue;
                        used[gid[s] * nm + j]++;
                        double *ac = acc + (gid[s] * nm + j) * nv;
                        for (int v = 0; v < e->n_vars; v++)
                            ac[e->vars[v]] += vm[e->vars[v] * CHUNK + k];
                    }
                }
                for (size_t j = 0; j < cb; j++) {
                    const acol_t *col = &r->cols[c0 + j];
                    double v;
                    int st = AEV_OK;
                    if (col->kind == ACOL_TIME)
                        v = axu_time(r->p, i, x);
                    else if (col->kind == ACOL_EVENT) {
                        v = row[col->event];
                        if (isnan(v)) /* the missing value is a NaN */
                            st = AEV_MISSING;
                    } else {
                        v = mval[j * CHUNK + k];
                        st = mst[j * CHUNK + k];
                    }
                    if (st == AEV_OK) {
                        block[j * n + start[gid[s]] + cnt[gid[s] * per + j]++] = v;
                        if (excl) {
                            g->excl_sum[c0 + j] += v;
                            g->excl_n[c0 + j]++;
                        }
                    } else if (st == AEV_MISSING)
                        g->st[c0 + j].missing++;
                    else
                        g->st[c0 + j].zero_den++;
                }
            }
        }
        for (size_t gi = 0; gi < ng; gi++)
            for (size_t j = 0; j < cb; j++) {
                size_t c = c0 + j, m = cnt[gi * per + j];
                agroup_t *g = &r->groups[gi];
                astats_compute(block + j * n + start[gi], m, &g->st[c]);
                if (r->cols[c].kind != ACOL_METRIC)
                    g->share[c] = r->total[c] != 0 && m ? g->st[c].sum / r->total[c] : NAN;
            }
    }
    free(block), free(cnt), free(vm), free(mval), free(mst), free(stack);
    return NULL;
}

static int group_stats(ompf_aresult_t *r, size_t ng, const uint32_t *gid, const size_t *start)
{
    size_t nev = ompf_event_count(r->p), nc = r->ncols, n = r->nsel;
    size_t nm = nc - 1 - nev, nv = nev + 2;
    size_t per = n ? ((size_t)4 << 20) / n : nc;
    per = per < 1 ? 1 : per > nc ? nc : per;
    size_t batches = (nc + per - 1) / per;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = cpus < 1 ? 1 : cpus > 8 ? 8 : (size_t)cpus;
    if (nt > batches)
        nt = batches;
    if (n < 100000)
        nt = 1; /* threads cost more than they save */
    double *acc = calloc(ng * nm * nv + 1, sizeof *acc);
    size_t *used = calloc(ng * nm + 1, sizeof *used);
    gjob_t *jobs = calloc(nt, sizeof *jobs);
    pthread_t *tid = calloc(nt, sizeof *tid);
    if (!acc || !used || !jobs || !tid) {
        free(acc), free(used), free(jobs), free(tid);
        return OMPF_ENOMEM;
    }
    int rc = 0;
    unsigned char *threaded = calloc(nt, 1);
    for (size_t t = 0; t < nt; t++) {
        jobs[t] = (gjob_t){.r = r, .ng = ng, .per = per, .nthreads = nt, .t = t, .gid = gid,
                           .start = start, .acc = acc, .used = used};
        /* a job whose thread cannot start runs here below: jobs are independent */
        if (t && threaded && !pthread_create(&tid[t], NULL, group_worker, &jobs[t]))
            threaded[t] = 1;
    }
    for (size_t t = 0; t < nt; t++)
        if (!threaded || !threaded[t])
            group_worker(&jobs[t]);
    for (size_t t = 0; t < nt; t++) {
        if (threaded && threaded[t])
            pthread_join(tid[t], NULL);
        if (jobs[t].rc)
            rc = jobs[t].rc;
    }
    free(threaded);
    for (size_t gi = 0; gi < ng && !rc; gi++)
        for (size_t j = 0; j < nm; j++) {
            double q;
            if (used[gi * nm + j] &&
                aexpr_eval(&r->cols[1 + nev + j].expr, acc + (gi * nm + j) * nv, &q) == AEV_OK)
                r->groups[gi].ratio[1 + nev + j] = q;
        }
    free(acc), free(used), free(jobs), free(tid);
    return rc;
}

typedef struct { uint64_t a, b; uint32_t t; } apart_t;

static int cmp_part(const void *x, const void *y)
{
    const apart_t *p = x, *q = y;
    if (p->t != q->t)
        return p->t < q->t ? -1 : 1;
    return (p->a > q->a) - (p->a < q->a);
}

/* Per thread, the time it spent inside XUs: the length of the union of
 * the parts that ran on it.  Adjacent parts overlap by a counter read (a
 * part is bounded by the clock readings around the reads, docs/tool.md
 * "Parts"), so their plain sum can exceed the thread's time. */
static int thread_busy(const ompf_aresult_t *r, double *busy)
{
    size_t n = ompf_xu_count(r->p), np = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = ompf_xu_get(r->p, i)->parts;
        np += k > 1 ? k : 1;
    }
    apart_t *v = malloc((np ? np : 1) * sizeof *v);
    if (!v)
        return OMPF_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = 0;
        ompf_part_t one;
        const ompf_part_t *pt = ompf_xu_parts(r->p, i, &k, &one);
        for (uint32_t j = 0; pt && j < k && m < np; j++)
            if (pt[j].thread < r->nthreads)
                v[m++] = (apart_t){pt[j].start_ns, pt[j].end_ns, pt[j].thread};
    }
    qsort(v, m, sizeof *v, cmp_part);
    for (size_t i = 0; i < m;) {
        uint32_t t = v[i].t;
        uint64_t lo = v[i].a, hi = v[i].b;
        for (i++; i < m && v[i].t == t; i++) {
            if (v[i].a > hi) {
                busy[t] += (double)(hi - lo);
                lo = v[i].a;
            }
            hi = v[i].b > hi ? v[i].b : hi;
        }
        busy[t] += (double)(hi - lo);
    }
    free(v);
    return 0;
}

/* Σ over all XUs plus the threads' gaps, per column; gap rows.  The time's
 * gap is each thread's time outside its XUs' parts, never negative. */
static int totals_and_gaps(const ompf_analysis_t *a, ompf_aresult_t *r, size_t *ng)
{
    size_t nev = ompf_event_count(r->p), n = ompf_xu_count(r->p);
    size_t nth = ompf_thread_count(r->p);
    r->total = calloc(r->ncols, sizeof *r->total);
    r->gap_missing = calloc(r->ncols, sizeof *r->gap_missing);
    double *gapsum = calloc(r->ncols, sizeof *gapsum);
    double *thdur = calloc(r->nthreads + 1, sizeof *thdur);
    if (!r->total || !r->gap_missing || !gapsum || !thdur || thread_busy(r, thdur)) {
        free(gapsum);
        free(thdur);
        return OMPF_ENOMEM;
    }
    double dur_all = 0, span = (double)(r->t1 - r->t0);
    for (size_t i = 0; i < n; i++) {
        const ompf_xu_t *x = ompf_xu_get(r->p, i);
        const double *v = ompf_xu_values_const(r->p, i);
        dur_all += axu_time(r->p, i, x);
        for (size_t e = 0; e < nev; e++)
            if (!ompf_is_missing(v[e]))
                r->total[1 + e] += v[e];
    }
    for (size_t t = 0; t < r->nthreads; t++) {
        thdur[t] = span > thdur[t] ? span - thdur[t] : 0; /* now the gap */
        gapsum[0] += thdur[t];
    }
    r->total[0] = dur_all + gapsum[0];
    for (size_t t = 0; t < nth; t++) {
        const ompf_thread_t *th = ompf_thread_get_const(r->p, (uint32_t)t);
        for (size_t e = 0; e < nev; e++) {
            if (ompf_is_missing(th->gap[e]))
                r->gap_missing[1 + e]++;
            else
                gapsum[1 + e] += th->gap[e];
        }
    }
    for (size_t e = 0; e < nev; e++)
        r->total[1 + e] += gapsum[1 + e];
    if (!nth)
        for (size_t e = 0; e < nev; e++)
            r->gap_missing[1 + e] = r->nthreads; /* no thread table: gap unknown */
    int rc = 0;
    if (!a->nwhere) { /* a filtered view has no meaningful gap */
        int per_thread = r->ndims == 1 && r->dims[0] == ADIM_THREAD && nth;
        size_t rows = per_thread ? nth : 1;
        agroup_t *g = realloc(r->groups, (*ng + rows) * sizeof *g);
        if (!g)
            rc = OMPF_ENOMEM;
        else
            r->groups = g;
        for (size_t k = 0; k < rows && !rc; k++) {
            agroup_t *gr = &r->groups[(*ng)++];
            memset(gr, 0, sizeof *gr);
            gr->gap = 1;
            gr->key[ADIM_THREAD] = (int64_t)k;
            char name[64];
            if (per_thread)
                snprintf(name, sizeof name, "[gap] thread %zu", k);
            else
                snprintf(name, sizeof name, "[gap]");
            if (group_alloc(gr, r->ncols) || !(gr->name = strdup(name))) {
                rc = OMPF_ENOMEM;
                break;
            }
            for (size_t c = 0; c < 1 + nev; c++) {
                astats_t *st = &gr->st[c];
                st->mean = st->median = st->p5 = st->p95 = st->cv = NAN;
                double v;
                if (c == 0)
                    v = per_thread ? thdur[k] : gapsum[0];
                else if (per_thread) {
                    v = ompf_thread_get_const(r->p, (uint32_t)k)->gap[c - 1];
                    if (ompf_is_missing(v)) {
                        st->missing = 1;
                        st->sum = NAN;
                        continue;
                    }
                } else {
                    v = gapsum[c];
                    st->missing = r->gap_missing[c];
                    if (nth && r->gap_missing[c] == nth) {
                        st->sum = NAN;
                        continue;
                    }
                    if (!nth) {
                        st->sum = NAN;
                        continue;
                    }
                }
                st->n = per_thread ? 1 : (c == 0 ? r->nthreads : nth - r->gap_missing[c]);
                st->sum = v;
                gr->share[c] = r->total[c] != 0 ? v / r->total[c] : NAN;
            }
            for (size_t c = 1 + nev; c < r->ncols; c++) {
                astats_t *st = &gr->st[c];
                st->sum = st->mean = st->median = st->p5 = st->p95 = st->cv = NAN;
            }
        }
    }
    free(gapsum);
    free(thdur);
    return rc;
}

int agroups_build(const ompf_analysis_t *a, ompf_aresult_t *r, ompf_error_t *err)
{
    size_t ng = 0;
    uint32_t *gid = malloc((r->nsel + 1) * sizeof *gid);
    if (!gid || key_xus(r, gid, &ng)) {
        free(gid);
        return NOMEM(err);
    }
    r->ngroups = ng;
    /* group g's values start at start[g] of each column's run */
    size_t *start = calloc(ng + 2, sizeof *start);
    int rc = !start ? OMPF_ENOMEM : 0;
    if (!rc) {
        for (size_t s = 0; s < r->nsel; s++)
            start[gid[s] + 1]++;
        for (size_t g = 0; g < ng; g++)
            start[g + 1] += start[g];
        rc = totals_and_gaps(a, r, &r->ngroups);
    }
    for (size_t g = 0; g < ng && !rc; g++)
        if (group_alloc(&r->groups[g], r->ncols) || group_name(r, &r->groups[g]))
            rc = OMPF_ENOMEM;
    if (!rc)
        rc = group_stats(r, ng, gid, start);
    free(start);
    free(gid);
    if (rc)
        return NOMEM(err);
    return agroups_sort(a, r, ng, err);
}

