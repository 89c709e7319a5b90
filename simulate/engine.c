/* The simulated program and its runs: XU latents, per-run variability,
 * list scheduling onto threads, counts (exact or multiplexed) and the
 * profiles the real tool would write.  One file over 600 lines: each run
 * walks one state (latents, schedule, counts) from XU to XU; split, the
 * steps would share that state through a header for no reader's gain. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_internal.h"

/* Fixed ranges of the type medians of the latents other than work. */
#define SIM_MEM_MIN 2.0
#define SIM_MEM_MAX 60.0
#define SIM_BR_MIN 0.03
#define SIM_BR_MAX 0.3
/* Latents of gap time (runtime, spinning at barriers). */
static const sim_latent_t gap_latent = {1e6, 1.0, 0.25, 1.0};

struct ompf_sim {
    const ompf_sim_model_t *m;
    uint64_t seed;
    uint32_t n_xu, n_types, n_threads, E;
    uint32_t *type_count, *type_first; /* XUs of type t: [first, first+count) */
    uint32_t *xu_type, *xu_inst;
    double *lat;      /* n_xu x 4 static log latents (w, m, b, r) */
    double *pos;      /* static program position in [0, 1) */
    double *gap_rate; /* E counts per ns of gap time */
};

void ompf_sim_destroy(ompf_sim_t *s)
{
    if (!s)
        return;
    free(s->type_count);
    free(s->type_first);
    free(s->xu_type);
    free(s->xu_inst);
    free(s->lat);
    free(s->pos);
    free(s->gap_rate);
    free(s);
}

static double log_uniform(sim_rng_t *r, double lo, double hi)
{
    return log(lo) + sim_uniform(r) * (log(hi) - log(lo));
}

int ompf_sim_create(const ompf_sim_model_t *m, uint64_t seed, ompf_sim_t **out,
                    ompf_error_t *err)
{
    if (!m || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_sim_create: NULL argument");
    *out = NULL;
    ompf_sim_t *s = calloc(1, sizeof *s);
    if (!s)
        return ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory");
    const sim_params_t *p = &m->p;
    s->m = m;
    s->seed = seed;
    s->n_xu = (uint32_t)p->xus;
    s->n_types = (uint32_t)p->types;
    s->n_threads = (uint32_t)p->threads;
    s->E = m->n_events;
    uint32_t X = s->n_xu, T = s->n_types;
    s->type_count = calloc(T, sizeof *s->type_count);
    s->type_first = calloc(T, sizeof *s->type_first);
    s->xu_type = malloc(X * sizeof *s->xu_type);
    s->xu_inst = malloc(X * sizeof *s->xu_inst);
    s->lat = malloc((size_t)X * 4 * sizeof *s->lat);
    s->pos = malloc(X * sizeof *s->pos);
    s->gap_rate = malloc(s->E * sizeof *s->gap_rate);
    double *tl = malloc((size_t)T * 4 * 16 * sizeof *tl); /* type x mode x latent */
    double *tw = malloc((size_t)T * 16 * sizeof *tw);      /* mode weights */
    uint32_t *tm = malloc(T * sizeof *tm);
    if (!s->type_count || !s->type_first || !s->xu_type || !s->xu_inst || !s->lat ||
        !s->pos || !s->gap_rate || !tl || !tw || !tm) {
        free(tl);
        free(tw);
        free(tm);
        ompf_sim_destroy(s);
        return ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory for %u XUs", X);
    }
    /* XUs per type: share 1/(t+1)^skew, at least one each, largest
     * remainders get the rest. */
    double wsum = 0;
    for (uint32_t t = 0; t < T; t++)
        wsum += pow(t + 1.0, -p->type_skew);
    uint32_t assigned = 0;
    double *rem = tw; /* scratch */
    for (uint32_t t = 0; t < T; t++) {
        double share = (X - T) * pow(t + 1.0, -p->type_skew) / wsum;
        s->type_count[t] = 1 + (uint32_t)floor(share);
        rem[t] = share - floor(share);
        assigned += s->type_count[t];
    }
    while (assigned < X) {
        uint32_t best = 0;
        for (uint32_t t = 1; t < T; t++)
            if (rem[t] > rem[best])
                best = t;
        s->type_count[best]++;
        rem[best] = -1;
        assigned++;
    }
    /* Type latent distributions: a few modes around a type median. */
    for (uint32_t t = 0; t < T; t++) {
        sim_rng_t r;
        sim_rng_init(&r, (uint64_t)p->model_seed, SIM_S_TYPES, t);
        double med[4] = {log_uniform(&r, p->work_min, p->work_max),
                         log_uniform(&r, SIM_MEM_MIN, SIM_MEM_MAX),
                         log_uniform(&r, SIM_BR_MIN, SIM_BR_MAX), 0.0};
        tm[t] = 1 + sim_below(&r, (uint32_t)p->modes);
        double ws = 0;
        for (uint32_t k = 0; k < tm[t]; k++) {
            for (int l = 0; l < 4; l++) {
                double sd = l == 3 ? 0.3 * p->mode_sigma : p->mode_sigma;
                tl[((size_t)t * 16 + k) * 4 + l] = med[l] + (k ? sd * sim_normal(&r) : 0.0);
            }
            /* Work modes exactly mode_gap apart (centred on the median), a
             * gap of several xu_sigma: a type's work is visibly
             * multi-modal (e.g. tiles of different sizes). */
            tl[((size_t)t * 16 + k) * 4] = med[0] + ((double)k - 0.5 * (tm[t] - 1)) * p->mode_gap;
            tw[t * 16 + k] = 0.2 + sim_uniform(&r);
            ws += tw[t * 16 + k];
        }
        for (uint32_t k = 0; k < tm[t]; k++)
            tw[t * 16 + k] /= ws;
    }
    uint32_t x = 0;
    for (uint32_t t = 0; t < T; t++) {
        s->type_first[t] = x;
        for (uint32_t i = 0; i < s->type_count[t]; i++, x++) {
            sim_rng_t r;
            sim_rng_init(&r, (uint64_t)p->model_seed, SIM_S_XU, x);
            s->xu_type[x] = t;
            s->xu_inst[x] = i;
            double u = sim_uniform(&r), acc = 0;
            uint32_t k = 0;
            for (; k + 1 < tm[t]; k++) {
                acc += tw[t * 16 + k];
                if (u < acc)
                    break;
            }
            for (int l = 0; l < 4; l++) {
                double sd = l == 3 ? 0.5 * p->xu_sigma : p->xu_sigma;
                s->lat[(size_t)x * 4 + l] = tl[((size_t)t * 16 + k) * 4 + l] + sd * sim_normal(&r);
            }
            s->pos[x] = sim_uniform(&r);
        }
    }
    free(tl);
    free(tw);
    free(tm);
    double gcyc = sim_event_value(m, 0, &gap_latent);
    for (uint32_t e = 0; e < s->E; e++)
        s->gap_rate[e] = sim_event_value(m, e, &gap_latent) / gcyc * p->ghz;
    *out = s;
    return 0;
}

/* ---- one run ----------------------------------------------------------- */

typedef struct run_state {
    uint32_t *order;    /* execution order: XU indices */
    uint32_t *thread;   /* scheduler thread of order[k] */
    double *start, *end; /* of order[k], ns */
    double *val;        /* order[k] x E true values */
    double t_end;       /* common end of all threads */
    uint32_t *perm, *cpu; /* scheduler thread -> profile thread / cpu */
} run_state_t;

static void run_state_free(run_state_t *r)
{
    free(r->order);
    free(r->thread);
    free(r->start);
    free(r->end);
    free(r->val);
    free(r->perm);
    free(r->cpu);
}

typedef struct keyed {
    double key;
    uint32_t x;
} keyed_t;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed_t *p = a, *q = b;
    if (p->key != q->key)
        return p->key < q->key ? -1 : 1;
    return p->x < q->x ? -1 : p->x > q->x;
}

static uint64_t stream(uint32_t run_no, int purpose)
{
    return ((uint64_t)run_no << 8) | (uint64_t)purpose;
}

/* The XU's latents in run run_no (static ones perturbed). */
static void run_latent(const ompf_sim_t *s, uint32_t run_no, uint32_t x,
                       const double *global, sim_latent_t *l, sim_rng_t *r)
{
    const sim_params_t *p = &s->m->p;
    const double *b = s->lat + (size_t)x * 4;
    sim_rng_init(r, s->seed, stream(run_no, SIM_S_RUNXU), x);
    /* Instruction counts vary far less between runs than cache and
     * latency behaviour. */
    double lw = b[0] + 0.2 * p->run_sigma * sim_normal(r);
    double lm = b[1] + p->run_sigma * sim_normal(r) + global[1];
    double lb = b[2] + 0.3 * p->run_sigma * sim_normal(r);
    double lr = b[3] + p->run_sigma * sim_normal(r) + global[3];
    l->w = exp(lw);
    l->m = exp(lm);
    l->b = exp(lb);
    l->r = exp(lr);
    if (sim_uniform(r) < p->alt_share) {
        l->m *= p->alt_mem;
        l->r *= p->alt_latency;
    }
}

static int simulate_run(const ompf_sim_t *s, uint32_t run_no, run_state_t *rs)
{
    const sim_params_t *p = &s->m->p;
    uint32_t X = s->n_xu, E = s->E, T = s->n_threads;
    memset(rs, 0, sizeof *rs);
    rs->order = malloc(X * sizeof *rs->order);
    rs->thread = malloc(X * sizeof *rs->thread);
    rs->start = malloc(X * sizeof *rs->start);
    rs->end = malloc(X * sizeof *rs->end);
    rs->val = malloc((size_t)X * E * sizeof *rs->val);
    rs->perm = malloc(T * sizeof *rs->perm);
    rs->cpu = malloc(T * sizeof *rs->cpu);
    keyed_t *key = malloc(X * sizeof *key);
    double *xval = malloc((size_t)X * E * sizeof *xval); /* by XU index */
    double *freet = malloc(T * sizeof *freet);
    if (!rs->order || !rs->thread || !rs->start || !rs->end || !rs->val || !rs->perm ||
        !rs->cpu || !key || !xval || !freet) {
        free(key);
        free(xval);
        free(freet);
        run_state_free(rs);
        return OMPF_ENOMEM;
    }
    sim_rng_t rr;
    sim_rng_init(&rr, s->seed, stream(run_no, SIM_S_RUN), 0);
    double global[4] = {0, p->run_global_sigma * sim_normal(&rr), 0,
                        p->run_global_sigma * sim_normal(&rr)};
    /* True values: latents -> events, each with its own noise. */
    for (uint32_t x = 0; x < X; x++) {
        sim_latent_t l;
        sim_rng_t r;
        run_latent(s, run_no, x, global, &l, &r);
        double *v = xval + (size_t)x * E;
        for (uint32_t e = 0; e < E; e++) {
            const sim_event_t *d = &s->m->ev[e];
            double z = sim_normal(&r), val;
            if (d->kind == SIM_EV_DUP)
                val = v[d->source]; /* the noisy count of its source */
            else
                val = sim_event_value(s->m, e, &l);
            if (d->noise > 0)
                val *= exp(d->noise * z);
            v[e] = val;
        }
        /* Round after duplicates copied their source's unrounded value. */
        for (uint32_t e = 0; e < E; e++)
            v[e] = floor(v[e] + 0.5);
        if (v[0] < 1)
            v[0] = 1; /* cycles: every XU takes some time */
        key[x].key = (1.0 - p->order_jitter) * s->pos[x] + p->order_jitter * sim_uniform(&rr);
        key[x].x = x;
    }
    qsort(key, X, sizeof *key, cmp_keyed);
    for (uint32_t k = 0; k < X; k++)
        rs->order[k] = key[k].x;
    /* List scheduling: the next XU goes to the thread free first. */
    for (uint32_t t = 0; t < T; t++)
        freet[t] = floor(p->init_us * 1000.0);
    for (uint32_t k = 0; k < X; k++) {
        uint32_t x = rs->order[k], best = 0;
        for (uint32_t t = 1; t < T; t++)
            if (freet[t] < freet[best])
                best = t;
        double gap = p->gap_mean_ns * ((1.0 - p->gap_jitter) +
                                       p->gap_jitter * -log(1.0 - sim_uniform(&rr)));
        double dur = xval[(size_t)x * E] / p->ghz;
        rs->thread[k] = best;
        rs->start[k] = floor(freet[best] + gap);
        rs->end[k] = rs->start[k] + ceil(dur);
        freet[best] = rs->end[k];
        memcpy(rs->val + (size_t)k * E, xval + (size_t)x * E, E * sizeof *xval);
    }
    double mk = 0;
    for (uint32_t t = 0; t < T; t++)
        if (freet[t] > mk)
            mk = freet[t];
    rs->t_end = mk + ceil(p->gap_mean_ns) + 1;
    for (uint32_t t = 0; t < T; t++)
        rs->perm[t] = rs->cpu[t] = t;
    if (p->thread_shuffle > 0) {
        for (uint32_t t = T; t > 1; t--) {
            uint32_t j = sim_below(&rr, t), a = rs->perm[t - 1];
            rs->perm[t - 1] = rs->perm[j];
            rs->perm[j] = a;
        }
        for (uint32_t t = T; t > 1; t--) {
            uint32_t j = sim_below(&rr, t), a = rs->cpu[t - 1];
            rs->cpu[t - 1] = rs->cpu[j];
            rs->cpu[j] = a;
        }
    }
    free(key);
    free(xval);
    free(freet);
    return 0;
}

/* ---- profiles ---------------------------------------------------------- */

static int add_common(const ompf_sim_t *s, ompf_profile_t *p, const char *mode,
                      uint32_t run_no, ompf_error_t *err)
{
    const sim_params_t *mp = &s->m->p;
    char buf[256];
    int rc = 0;
    snprintf(buf, sizeof buf, "sim:%s", mp->name);
    rc |= ompf_meta_set(p, "tool_version", OMPF_VERSION_STRING);
    rc |= ompf_meta_set(p, "program", buf);
    rc |= ompf_meta_set(p, "argv", buf);
    rc |= ompf_meta_set(p, "hostname", "simulator");
    snprintf(buf, sizeof buf, "simulated machine (model %s)", mp->name);
    rc |= ompf_meta_set(p, "cpu_model", buf);
    rc |= ompf_meta_set(p, "kernel", "simulated");
    rc |= ompf_meta_set(p, "omp_runtime", "simulated");
    snprintf(buf, sizeof buf, "%u", s->n_threads);
    rc |= ompf_meta_set(p, "team_size", buf);
    /* Deterministic start times: 2017-01-01 plus one minute per run. */
    time_t t0 = (time_t)1483228800 + (time_t)run_no * 60;
    struct tm tmv;
    gmtime_r(&t0, &tmv);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    rc |= ompf_meta_set(p, "start_time", buf);
    rc |= ompf_meta_set(p, "mode", mode);
    snprintf(buf, sizeof buf, "%u", (uint32_t)mp->pmu_slots);
    rc |= ompf_meta_set(p, "pmu_slots", buf);
    rc |= ompf_meta_set(p, "sim_model", mp->name);
    snprintf(buf, sizeof buf, "%" PRIu64, s->seed);
    rc |= ompf_meta_set(p, "sim_seed", buf);
    if (rc)
        return ompf_error_set(err, OMPF_ENOMEM, "simulator: cannot set metadata");
    for (uint32_t t = 0; t < s->n_types; t++) {
        ompf_construct_t c;
        memset(&c, 0, sizeof c);
        snprintf(buf, sizeof buf, "sim_%s.c", mp->name);
        char fn[64];
        snprintf(fn, sizeof fn, "task_type_%02u", t);
        c.module = "sim";
        c.build_id = "";
        c.offset = 0x1000 + 0x40 * (uint64_t)t;
        c.kind = OMPF_CK_TASK;
        c.file = buf;
        c.line = (int32_t)(100 + 10 * t);
        c.function = fn;
        c.name = NULL;
        if ((rc = ompf_construct_add(p, &c, NULL)))
            return ompf_error_set(err, rc, "simulator: cannot add construct %u: %s", t,
                                  ompf_strerror(rc));
    }
    return 0;
}

static int add_events(const ompf_sim_t *s, ompf_profile_t *p, const uint32_t *events,
                      uint32_t n, int32_t status, ompf_error_t *err)
{
    for (uint32_t i = 0; i < n; i++) {
        ompf_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.name = s->m->ev[events[i]].name;
        ev.pe_type = 4; /* PERF_TYPE_RAW: simulated raw events */
        ev.config = 0x5100 + events[i];
        ev.status = status;
        ev.reason = status == OMPF_EV_ESTIMATED ? "simulated multiplexing" : NULL;
        ev.source = -1;
        int rc = ompf_event_add(p, &ev, NULL);
        if (rc)
            return ompf_error_set(err, rc, "simulator: cannot add event %s: %s", ev.name,
                                  ompf_strerror(rc));
    }
    return 0;
}

/* Label 0.<type rank>.<instance>; nodes[t] caches 0.<t+1>. */
static int xu_label(ompf_profile_t *p, uint32_t *nodes, uint32_t t, uint32_t inst,
                    uint32_t *out)
{
    int rc;
    if (nodes[t] == OMPF_NONE32 &&
        (rc = ompf_label_child(p, OMPF_LABEL_ROOT, (uint64_t)t + 1, &nodes[t])))
        return rc;
    return ompf_label_child(p, nodes[t], (uint64_t)inst + 1, out);
}

static void fill_xu(const ompf_sim_t *s, const run_state_t *rs, uint32_t k, ompf_xu_t *xu)
{
    uint32_t x = rs->order[k], th = rs->thread[k];
    memset(xu, 0, sizeof *xu);
    xu->id = k;
    xu->type = s->xu_type[x];
    xu->thread = rs->perm[th];
    xu->team_thread = rs->perm[th];
    xu->team_size = s->n_threads;
    xu->parts = 1;
    xu->cpu = (int32_t)rs->cpu[th];
    xu->core = xu->cpu;
    xu->numa = (int32_t)((uint64_t)rs->cpu[th] * (uint64_t)s->m->p.numa_nodes / s->n_threads);
    xu->kind = OMPF_XU_TASK;
    xu->start_ns = (uint64_t)rs->start[k];
    xu->end_ns = (uint64_t)rs->end[k];
}

/* Exact per-thread gap values and totals for the given events. */
static void exact_threads(const ompf_sim_t *s, const run_state_t *rs, const uint32_t *events,
                          uint32_t n, double *gap, double *total)
{
    uint32_t T = s->n_threads, E = s->E;
    double *busy = calloc(T, sizeof *busy);
    memset(total, 0, (size_t)T * n * sizeof *total);
    for (uint32_t k = 0; k < s->n_xu; k++) {
        uint32_t th = rs->thread[k];
        if (busy)
            busy[th] += rs->end[k] - rs->start[k];
        for (uint32_t i = 0; i < n; i++)
            total[(size_t)th * n + i] += rs->val[(size_t)k * E + events[i]];
    }
    for (uint32_t th = 0; th < T; th++) {
        double g = rs->t_end - (busy ? busy[th] : 0);
        for (uint32_t i = 0; i < n; i++) {
            gap[(size_t)th * n + i] = floor(s->gap_rate[events[i]] * g + 0.5);
            total[(size_t)th * n + i] += gap[(size_t)th * n + i];
        }
    }
    free(busy);
}

static int add_threads(ompf_profile_t *p, const run_state_t *rs, uint32_t T, uint32_t n,
                       const double *gap, const double *total, const double *running,
                       uint32_t index_base)
{
    /* Profile thread index perm[th] must equal its position: add in
     * profile-index order. */
    uint32_t *inv = malloc(T * sizeof *inv);
    if (!inv)
        return OMPF_ENOMEM;
    for (uint32_t th = 0; th < T; th++)
        inv[rs->perm[th]] = th;
    int rc = 0;
    for (uint32_t pi = 0; pi < T && !rc; pi++) {
        uint32_t th = inv[pi], idx;
        rc = ompf_thread_add(p, (int32_t)(1000 + index_base + pi), &idx);
        if (rc)
            break;
        ompf_thread_t *t = ompf_thread_get(p, idx);
        for (uint32_t i = 0; i < n; i++) {
            t->total[i] = total[(size_t)th * n + i];
            t->gap[i] = gap[(size_t)th * n + i];
            t->enabled_ns[i] = rs->t_end;
            t->running_ns[i] = running ? running[(size_t)th * n + i] : rs->t_end;
        }
    }
    free(inv);
    return rc;
}

/* HEM: per thread, a timeline of gaps and XU phases, counters read at XU
 * bounds, scaled as the mode says.  vals receives X x n estimates. */
static int hem_values(const ompf_sim_t *s, const run_state_t *rs, uint32_t run_no,
                      const uint32_t *events, uint32_t n, int delta, double *vals,
                      double *gap, double *total, double *running)
{
    const sim_params_t *mp = &s->m->p;
    uint32_t X = s->n_xu, E = s->E, T = s->n_threads, P = (uint32_t)mp->phases;
    uint32_t *cnt = calloc(T + 1, sizeof *cnt), *byth = malloc(X * sizeof *byth);
    double *grate = malloc(n * sizeof *grate);
    double *share = malloc((size_t)P * E * sizeof *share);
    int rc = OMPF_ENOMEM;
    sim_seg_t *segs = NULL;
    double *rates = NULL, *times = NULL, *raw = NULL, *run = NULL, *est = NULL;
    if (!cnt || !byth || !grate || !share)
        goto out;
    for (uint32_t i = 0; i < n; i++)
        grate[i] = s->gap_rate[events[i]];
    for (uint32_t k = 0; k < X; k++)
        cnt[rs->thread[k] + 1]++;
    for (uint32_t t = 0; t < T; t++)
        cnt[t + 1] += cnt[t];
    {
        uint32_t *fill = calloc(T, sizeof *fill);
        if (!fill)
            goto out;
        for (uint32_t k = 0; k < X; k++) /* execution order = start order per thread */
            byth[cnt[rs->thread[k]] + fill[rs->thread[k]]++] = k;
        free(fill);
    }
    uint32_t maxn = 0;
    for (uint32_t t = 0; t < T; t++)
        if (cnt[t + 1] - cnt[t] > maxn)
            maxn = cnt[t + 1] - cnt[t];
    size_t max_segs = (size_t)maxn * (P + 1) + 1, max_times = (size_t)maxn * 2 + 1;
    segs = malloc(max_segs * sizeof *segs);
    rates = malloc((size_t)maxn * P * n * sizeof *rates + sizeof *rates);
    times = malloc(max_times * sizeof *times);
    raw = malloc(max_times * n * sizeof *raw);
    run = malloc(max_times * n * sizeof *run);
    est = malloc(((size_t)maxn + 1) * sizeof *est);
    if (!segs || !rates || !times || !raw || !run || !est)
        goto out;
    for (uint32_t t = 0; t < T; t++) {
        sim_rng_t rr;
        sim_rng_init(&rr, s->seed, stream(run_no, SIM_S_PHASE), t);
        sim_mux_t mux;
        /* Rotation ticks are not aligned with the thread's start. */
        if ((rc = sim_mux_init(&mux, n, (uint32_t)mp->pmu_slots, (uint32_t)mp->mux_step,
                               mp->mux_period_us * 1000.0,
                               floor(sim_uniform(&rr) * mp->mux_period_us * 1000.0))))
            goto out;
        size_t ns = 0, nt = 0;
        double prev = 0;
        for (uint32_t j = cnt[t]; j < cnt[t + 1]; j++) {
            uint32_t k = byth[j], x = rs->order[k];
            if (rs->start[k] > prev)
                segs[ns++] = (sim_seg_t){prev, rs->start[k], grate};
            /* Phases: an event's share of the XU's count per phase is a
             * static property of the XU (its code), from the model seed;
             * a duplicate follows its source. */
            sim_rng_t pr;
            sim_rng_init(&pr, (uint64_t)mp->model_seed, SIM_S_PHASE, x);
            for (uint32_t e = 0; e < E; e++) {
                double sum = 0;
                for (uint32_t ph = 0; ph < P; ph++) {
                    share[(size_t)ph * E + e] = exp(mp->phase_sigma * sim_normal(&pr));
                    sum += share[(size_t)ph * E + e];
                }
                for (uint32_t ph = 0; ph < P; ph++)
                    share[(size_t)ph * E + e] /= sum;
            }
            for (uint32_t e = 0; e < E; e++)
                if (s->m->ev[e].kind == SIM_EV_DUP)
                    for (uint32_t ph = 0; ph < P; ph++)
                        share[(size_t)ph * E + e] = share[(size_t)ph * E + s->m->ev[e].source];
            double dur = rs->end[k] - rs->start[k], a = rs->start[k];
            const double *v = rs->val + (size_t)k * E;
            for (uint32_t ph = 0; ph < P; ph++) {
                /* Phase durations follow the cycles event. */
                double b = ph + 1 == P ? rs->end[k] : a + dur * share[(size_t)ph * E];
                double *rt = rates + ((size_t)(j - cnt[t]) * P + ph) * n;
                for (uint32_t i = 0; i < n; i++)
                    rt[i] = b > a ? v[events[i]] * share[(size_t)ph * E + events[i]] / (b - a) : 0;
                if (b > a)
                    segs[ns++] = (sim_seg_t){a, b, rt};
                a = b;
            }
            times[nt++] = rs->start[k];
            times[nt++] = rs->end[k];
            prev = rs->end[k];
        }
        if (rs->t_end > prev)
            segs[ns++] = (sim_seg_t){prev, rs->t_end, grate};
        times[nt++] = rs->t_end;
        sim_mux_read(&mux, segs, ns, times, nt, raw, run);
        sim_mux_free(&mux);
        /* Estimates at the reads (libompfhem's estimators). */
        uint32_t nx = cnt[t + 1] - cnt[t];
        for (uint32_t i = 0; i < n; i++) {
            double tot;
            sim_hem_estimate(raw + i, times, run + i, n, nx, delta, est, &tot);
            double sum = 0;
            for (uint32_t j = 0; j < nx; j++) {
                vals[(size_t)byth[cnt[t] + j] * n + i] = est[j];
                if (!ompf_is_missing(est[j]))
                    sum += est[j];
            }
            total[(size_t)t * n + i] = tot;
            gap[(size_t)t * n + i] = tot - sum;
            running[(size_t)t * n + i] = run[(nt - 1) * n + i];
        }
    }
    rc = 0;
out:
    free(cnt);
    free(byth);
    free(grate);
    free(share);
    free(segs);
    free(rates);
    free(times);
    free(raw);
    free(run);
    free(est);
    return rc;
}

int ompf_sim_truth_create(const ompf_sim_t *s, ompf_profile_t **out, ompf_error_t *err)
{
    if (!s || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_sim_truth_create: NULL argument");
    ompf_profile_t *p;
    int rc = ompf_profile_create(&p);
    if (rc)
        return ompf_error_set(err, rc, "simulator: cannot create the truth profile");
    uint32_t *all = malloc(s->E * sizeof *all);
    if (!all) {
        ompf_profile_destroy(p);
        return ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory");
    }
    for (uint32_t e = 0; e < s->E; e++)
        all[e] = e;
    if (!(rc = add_common(s, p, OMPF_MODE_TRUTH, 0, err)) &&
        !(rc = add_events(s, p, all, s->E, OMPF_EV_COUNTED, err)) &&
        !(rc = ompf_meta_set(p, "truth_runs", "")))
        rc = ompf_profile_set_run_id(p, sim_mix64(s->seed ^ 0x7472757468ull));
    free(all);
    if (rc) {
        ompf_profile_destroy(p);
        return rc < 0 ? rc : OMPF_ENOMEM;
    }
    *out = p;
    return 0;
}

size_t ompf_sim_truth_run_count(const ompf_profile_t *truth)
{
    const char *runs = truth ? ompf_meta_get(truth, "truth_runs") : NULL;
    if (!runs || !*runs)
        return 0;
    size_t n = 1;
    for (const char *c = runs; *c; c++)
        n += *c == ',';
    return n;
}

static int truth_run_count(const ompf_profile_t *truth)
{
    const char *runs = ompf_meta_get(truth, "truth_runs");
    if (!runs || !*runs)
        return 0;
    int n = 1;
    for (const char *c = runs; *c; c++)
        n += *c == ',';
    return n;
}

int ompf_sim_truth_set_file(ompf_profile_t *truth, const char *file)
{
    int k = truth_run_count(truth);
    if (k == 0 || !file)
        return OMPF_EINVAL;
    char key[64];
    snprintf(key, sizeof key, "truth_run.%d", k - 1);
    const char *cur = ompf_meta_get(truth, key);
    if (!cur)
        return OMPF_ENOTFOUND;
    char val[1024];
    /* "<run id> <mode>" + " <file>" */
    char id[32], mode[32];
    if (sscanf(cur, "%31s %31s", id, mode) != 2)
        return OMPF_EFORMAT;
    snprintf(val, sizeof val, "%s %s %s", id, mode, file);
    return ompf_meta_set(truth, key, val);
}

static int truth_append(const ompf_sim_t *s, const run_state_t *rs, uint64_t run_id,
                        const char *mode, ompf_profile_t *truth, ompf_error_t *err)
{
    if ((size_t)ompf_event_count(truth) != s->E)
        return ompf_error_set(err, OMPF_EINVAL,
                              "simulator: the truth profile does not belong to this simulation");
    int k = truth_run_count(truth);
    uint32_t T = s->n_threads, E = s->E;
    char idhex[32], key[64], val[128];
    snprintf(idhex, sizeof idhex, "%016" PRIx64, run_id);
    const char *runs = ompf_meta_get(truth, "truth_runs");
    size_t len = strlen(runs) + 20;
    char *nr = malloc(len);
    if (!nr)
        return ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory");
    snprintf(nr, len, "%s%s%s", runs, k ? "," : "", idhex);
    int rc = ompf_meta_set(truth, "truth_runs", nr);
    free(nr);
    snprintf(key, sizeof key, "truth_run.%d", k);
    snprintf(val, sizeof val, "%s %s", idhex, mode);
    rc |= ompf_meta_set(truth, key, val);
    double *gap = malloc((size_t)T * E * sizeof *gap), *tot = malloc((size_t)T * E * sizeof *tot);
    uint32_t *all = malloc(E * sizeof *all);
    uint32_t *nodes = malloc(s->n_types * sizeof *nodes);
    if (rc || !gap || !tot || !all || !nodes) {
        free(gap);
        free(tot);
        free(all);
        free(nodes);
        return ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory for the truth");
    }
    for (uint32_t e = 0; e < E; e++)
        all[e] = e;
    for (uint32_t t = 0; t < s->n_types; t++)
        nodes[t] = OMPF_NONE32;
    uint32_t base = (uint32_t)ompf_thread_count(truth);
    exact_threads(s, rs, all, E, gap, tot);
    rc = add_threads(truth, rs, T, E, gap, tot, NULL, base);
    if (!rc)
        rc = ompf_xu_reserve(truth, ompf_xu_count(truth) + s->n_xu);
    for (uint32_t j = 0; j < s->n_xu && !rc; j++) {
        ompf_xu_t xu;
        fill_xu(s, rs, j, &xu);
        xu.id = ((uint64_t)k << 32) | xu.id;
        xu.thread += base;
        rc = xu_label(truth, nodes, xu.type, s->xu_inst[rs->order[j]], &xu.label);
        if (!rc)
            rc = ompf_xu_add(truth, &xu, rs->val + (size_t)j * E);
    }
    free(gap);
    free(tot);
    free(all);
    free(nodes);
    if (rc)
        return ompf_error_set(err, rc, "simulator: cannot append run %d to the truth: %s", k,
                              ompf_strerror(rc));
    return 0;
}

int ompf_sim_execute(ompf_sim_t *s, uint32_t run_no, int role, const uint32_t *events,
                     uint32_t n, ompf_profile_t **profile, ompf_profile_t *truth,
                     ompf_error_t *err)
{
    if (!s || !profile || (!events && n) || role < 0 || role >= OMPF_SIM_ROLE_COUNT)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_sim_execute: invalid argument");
    *profile = NULL;
    if (n == 0)
        return ompf_error_set(err, OMPF_EINVAL, "simulator: run %u has no events", run_no);
    for (uint32_t i = 0; i < n; i++)
        if (events[i] >= s->E)
            return ompf_error_set(err, OMPF_ERANGE, "simulator: event %u out of range (model has %u)",
                                  events[i], s->E);
    int hem = role == OMPF_SIM_HEM || role == OMPF_SIM_HEM_DELTA;
    run_state_t rs;
    if (simulate_run(s, run_no, &rs))
        return ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory simulating run %u", run_no);
    uint32_t T = s->n_threads, X = s->n_xu, E = s->E;
    const char *mode = ompf_sim_role_name(role);
    uint64_t run_id = sim_mix64(s->seed + sim_mix64(((uint64_t)run_no << 8) | SIM_S_RUNID));
    ompf_profile_t *p = NULL;
    double *vals = NULL, *gap = malloc(((size_t)T * n + 1) * sizeof *gap);
    double *tot = malloc(((size_t)T * n + 1) * sizeof *tot);
    double *running = malloc(((size_t)T * n + 1) * sizeof *running);
    uint32_t *nodes = malloc(s->n_types * sizeof *nodes);
    int rc = ompf_profile_create(&p);
    if (rc || !gap || !tot || !running || !nodes) {
        rc = ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory");
        goto fail;
    }
    for (uint32_t t = 0; t < s->n_types; t++)
        nodes[t] = OMPF_NONE32;
    if ((rc = add_common(s, p, mode, run_no, err)) ||
        (rc = add_events(s, p, events, n, hem ? OMPF_EV_ESTIMATED : OMPF_EV_COUNTED, err)))
        goto fail;
    char buf[64];
    rc = ompf_meta_set(p, "role", mode);
    snprintf(buf, sizeof buf, "%u", run_no);
    rc |= ompf_meta_set(p, "sim_run", buf);
    if (hem) {
        snprintf(buf, sizeof buf, "%.17g", s->m->p.mux_period_us);
        rc |= ompf_meta_set(p, "mux_period_us", buf);
    }
    rc |= ompf_profile_set_run_id(p, run_id);
    if (rc) {
        rc = ompf_error_set(err, OMPF_ENOMEM, "simulator: cannot set metadata");
        goto fail;
    }
    if (hem) {
        vals = malloc(((size_t)X * n + 1) * sizeof *vals);
        if (!vals || hem_values(s, &rs, run_no, events, n, role == OMPF_SIM_HEM_DELTA, vals,
                                gap, tot, running)) {
            rc = ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory simulating HEM");
            goto fail;
        }
    } else {
        exact_threads(s, &rs, events, n, gap, tot);
    }
    if ((rc = add_threads(p, &rs, T, n, gap, tot, hem ? running : NULL, 0)) ||
        (rc = ompf_xu_reserve(p, X))) {
        rc = ompf_error_set(err, rc, "simulator: cannot add threads: %s", ompf_strerror(rc));
        goto fail;
    }
    double *row = malloc((n + 1) * sizeof *row);
    if (!row) {
        rc = ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory");
        goto fail;
    }
    for (uint32_t k = 0; k < X && !rc; k++) {
        ompf_xu_t xu;
        fill_xu(s, &rs, k, &xu);
        rc = xu_label(p, nodes, xu.type, s->xu_inst[rs.order[k]], &xu.label);
        for (uint32_t i = 0; i < n; i++)
            row[i] = hem ? vals[(size_t)k * n + i] : rs.val[(size_t)k * E + events[i]];
        if (!rc)
            rc = ompf_xu_add(p, &xu, row);
    }
    free(row);
    if (rc) {
        rc = ompf_error_set(err, rc, "simulator: cannot add XUs: %s", ompf_strerror(rc));
        goto fail;
    }
    if (truth && (rc = truth_append(s, &rs, run_id, mode, truth, err)))
        goto fail;
    free(vals);
    free(gap);
    free(tot);
    free(running);
    free(nodes);
    run_state_free(&rs);
    *profile = p;
    return 0;
fail:
    ompf_profile_destroy(p);
    free(vals);
    free(gap);
    free(tot);
    free(running);
    free(nodes);
    run_state_free(&rs);
    return rc ? rc : OMPF_ENOMEM;
}

/* ---- whole plans in memory --------------------------------------------- */

void ompf_sim_output_free(ompf_sim_output_t *out)
{
    if (!out)
        return;
    for (size_t i = 0; i < out->n_runs; i++)
        ompf_profile_destroy(out->runs[i]);
    free(out->runs);
    free(out->lines);
    ompf_profile_destroy(out->truth);
    memset(out, 0, sizeof *out);
}

int ompf_sim_generate(const ompf_sim_model_t *m, const ompf_sim_plan_t *plan, uint64_t seed,
                      int truth_mode, ompf_sim_output_t *out, ompf_error_t *err)
{
    if (!m || !plan || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_sim_generate: NULL argument");
    memset(out, 0, sizeof *out);
    size_t n = ompf_sim_plan_runs(plan);
    ompf_sim_t *s;
    int rc = ompf_sim_create(m, seed, &s, err);
    if (rc)
        return rc;
    out->runs = calloc(n ? n : 1, sizeof *out->runs);
    out->lines = calloc(n ? n : 1, sizeof *out->lines);
    if (!out->runs || !out->lines) {
        rc = ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory");
        goto done;
    }
    if (truth_mode != OMPF_SIM_TRUTH_NONE && (rc = ompf_sim_truth_create(s, &out->truth, err)))
        goto done;
    for (size_t i = 0; i < ompf_sim_plan_count(plan) && !rc; i++) {
        const ompf_sim_plan_line_t *ln = ompf_sim_plan_get(plan, i);
        for (uint32_t r = 0; r < ln->repeat && !rc; r++) {
            size_t k = out->n_runs;
            int skip = truth_mode == OMPF_SIM_TRUTH_NO_REFERENCES && ln->role == OMPF_SIM_REFERENCE;
            rc = ompf_sim_execute(s, (uint32_t)k, ln->role, ln->events, ln->n_events,
                                  &out->runs[k], skip ? NULL : out->truth, err);
            if (!rc) {
                out->lines[k] = ln;
                out->n_runs++;
            }
        }
    }
done:
    ompf_sim_destroy(s);
    if (rc)
        ompf_sim_output_free(out);
    return rc;
}
