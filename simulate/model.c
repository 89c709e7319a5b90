/* Simulator models: parameters (key = value text), built-in models, and
 * the event definitions derived from them. */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

typedef struct param_def {
    const char *key;
    size_t off;
    double min, max;
    int integer;
    const char *help;
} param_def_t;

#define P(k) offsetof(sim_params_t, k)
static const param_def_t params[] = {
    {"model_seed", P(model_seed), 0, 4294967295.0, 1, "seed of the program: XU latents and event definitions"},
    {"types", P(types), 1, 10000, 1, "XU types (constructs)"},
    {"xus", P(xus), 1, 50000000, 1, "XUs per run, spread over the types"},
    {"type_skew", P(type_skew), 0, 5, 0, "type i gets a share of XUs proportional to 1/(i+1)^type_skew"},
    {"threads", P(threads), 1, 4096, 1, "team size"},
    {"numa_nodes", P(numa_nodes), 1, 4096, 1, "NUMA nodes the CPUs are spread over"},
    {"events", P(events), 1, 1000, 1, "events E"},
    {"dup_events", P(dup_events), 0, 1000, 1, "events that are near duplicates of another (like L1_DCM/L2_DCA)"},
    {"weak_events", P(weak_events), 0, 1000, 1, "events only weakly related to the work"},
    {"modes", P(modes), 1, 16, 1, "maximum modes of a type's latent distribution"},
    {"work_min", P(work_min), 1, 1e12, 0, "smallest type median of instructions per XU"},
    {"work_max", P(work_max), 1, 1e12, 0, "largest type median of instructions per XU"},
    {"mode_gap", P(mode_gap), 0, 5, 0, "log-distance of the work of neighbouring modes of a type"},
    {"mode_sigma", P(mode_sigma), 0, 5, 0, "log-spread between the modes of a type (other latents)"},
    {"xu_sigma", P(xu_sigma), 0, 5, 0, "log-spread of XUs within a mode (static across runs)"},
    {"run_sigma", P(run_sigma), 0, 5, 0, "log-sigma of each XU's latents perturbed per run"},
    {"run_global_sigma", P(run_global_sigma), 0, 5, 0, "log-sigma of a per-run shift of all XUs (machine state)"},
    {"alt_share", P(alt_share), 0, 1, 0, "share of XUs behaving differently in a run (cache-cold, remote NUMA)"},
    {"alt_mem", P(alt_mem), 0.01, 100, 0, "memory-intensity factor of such an XU"},
    {"alt_latency", P(alt_latency), 0.01, 100, 0, "latency factor of such an XU"},
    {"event_noise", P(event_noise), 0, 5, 0, "log-sigma of per-XU, per-run noise of formula events"},
    {"dup_noise", P(dup_noise), 0, 5, 0, "log-sigma of a duplicate event around its source"},
    {"weak_noise", P(weak_noise), 0, 5, 0, "log-sigma of the weakly related events"},
    {"ghz", P(ghz), 0.01, 100, 0, "cycles per ns: XU duration = cycles / ghz"},
    {"gap_mean_ns", P(gap_mean_ns), 0, 1e12, 0, "mean gap between XUs on a thread"},
    {"init_us", P(init_us), 0, 1e9, 0, "serial start of every thread before its first XU (gap)"},
    {"gap_jitter", P(gap_jitter), 0, 1, 0, "0: fixed gaps; 1: exponentially distributed gaps"},
    {"order_jitter", P(order_jitter), 0, 1, 0, "0: fixed program order; 1: order shuffled per run"},
    {"thread_shuffle", P(thread_shuffle), 0, 1, 1, "1: thread numbering and CPUs permuted per run"},
    {"pmu_slots", P(pmu_slots), 1, 1000, 1, "counters per core (run/reference set size, HEM slots)"},
    {"mux_period_us", P(mux_period_us), 0.001, 1e9, 0, "HEM rotation period"},
    {"mux_step", P(mux_step), 1, 1000, 1, "events the HEM rotation advances per period (perf: 1)"},
    {"phases", P(phases), 1, 64, 1, "phases of an XU with different event rates (HEM sees them)"},
    {"phase_sigma", P(phase_sigma), 0, 5, 0, "log-spread of an event's rate across phases"},
};
#undef P
#define N_PARAMS (sizeof params / sizeof params[0])

/* Defaults: a Xeon-32-like machine running a cholesky_b8-sized program. */
static const char base_text[] =
    "name = custom\nmodel_seed = 1\ntypes = 18\nxus = 8080\ntype_skew = 1.5\n"
    "threads = 32\nnuma_nodes = 2\nevents = 33\ndup_events = 4\n"
    "weak_events = 4\nmodes = 3\nwork_min = 1e6\nwork_max = 4e6\n"
    "mode_gap = 0.9\nmode_sigma = 0.3\nxu_sigma = 0.15\nrun_sigma = 0.03\n"
    "run_global_sigma = 0.01\nalt_share = 0.01\nalt_mem = 2\n"
    "alt_latency = 1.5\nevent_noise = 0.01\ndup_noise = 0.002\n"
    "weak_noise = 0.5\nghz = 2.9\ngap_mean_ns = 5000\ninit_us = 20000\ngap_jitter = 1\n"
    "order_jitter = 0.2\nthread_shuffle = 1\npmu_slots = 5\n"
    "mux_period_us = 100\nmux_step = 1\nphases = 4\nphase_sigma = 0.5\n";

typedef struct builtin {
    const char *name, *summary, *text;
} builtin_t;

static const builtin_t builtins[] = {
    {"zero", "no run-to-run variability: every XU has the same counts in every run",
     "name = zero\nrun_sigma = 0\nrun_global_sigma = 0\nalt_share = 0\n"
     "event_noise = 0\ndup_noise = 0\nweak_noise = 0\ngap_jitter = 0\n"
     "order_jitter = 0\nthread_shuffle = 0\n"},
    {"low", "low variability, 32 threads, 5 counters, 0.1 ms HEM period (like Xeon-32)",
     "name = low\n"},
    {"high", "high variability, 192 threads on 24 NUMA nodes, 8 counters, 4 ms HEM period (like Xeon-192)",
     "name = high\nthreads = 192\nnuma_nodes = 24\nrun_sigma = 0.3\n"
     "run_global_sigma = 0.05\nalt_share = 0.25\nalt_mem = 3\nalt_latency = 2.5\n"
     "order_jitter = 1\npmu_slots = 8\nmux_period_us = 4000\ngap_mean_ns = 20000\ninit_us = 200000\n"},
};
#define N_BUILTINS (sizeof builtins / sizeof builtins[0])

static const char *const builtin_names[N_BUILTINS + 1] = {"zero", "low", "high", NULL};

const char *const *ompf_sim_builtin_names(void) { return builtin_names; }

const char *ompf_sim_builtin_summary(const char *name)
{
    for (size_t i = 0; i < N_BUILTINS; i++)
        if (name && !strcmp(name, builtins[i].name))
            return builtins[i].summary;
    return NULL;
}

static const param_def_t *find_param(const char *key)
{
    for (size_t i = 0; i < N_PARAMS; i++)
        if (!strcmp(params[i].key, key))
            return &params[i];
    return NULL;
}

static int set_param(ompf_sim_model_t *m, const char *key, const char *value,
                     const char *origin, int line, ompf_error_t *err)
{
    char where[512];
    if (line > 0)
        snprintf(where, sizeof where, "%s:%d", origin, line);
    else
        snprintf(where, sizeof where, "%s", origin);
    if (!strcmp(key, "name")) {
        size_t n = strlen(value);
        if (n == 0 || n >= sizeof m->p.name)
            return ompf_error_set(err, OMPF_EINVAL,
                                  "%s: model name must have 1 to %zu characters",
                                  where, sizeof m->p.name - 1);
        for (size_t i = 0; i < n; i++)
            if (!isalnum((unsigned char)value[i]) && !strchr("_-.+", value[i]))
                return ompf_error_set(err, OMPF_EINVAL,
                                      "%s: model name '%s' may only use letters, digits and _-.+",
                                      where, value);
        memcpy(m->p.name, value, n + 1);
        return 0;
    }
    const param_def_t *d = find_param(key);
    if (!d)
        return ompf_error_set(err, OMPF_EINVAL,
                              "%s: unknown model key '%s' (docs/simulator.md lists the keys)",
                              where, key);
    char *end = NULL;
    errno = 0;
    double v = strtod(value, &end);
    if (end == value || *end != '\0' || errno || v != v)
        return ompf_error_set(err, OMPF_EINVAL, "%s: %s = '%s' is not a number",
                              where, key, value);
    if (v < d->min || v > d->max || (d->integer && v != floor(v)))
        return ompf_error_set(err, OMPF_EINVAL, "%s: %s = %s must be %s in [%g, %g]",
                              where, key, value, d->integer ? "an integer" : "a number",
                              d->min, d->max);
    *(double *)((char *)&m->p + d->off) = v;
    return 0;
}

/* Applies key = value lines of text to m. */
static int apply_text(ompf_sim_model_t *m, const char *text, const char *origin,
                      ompf_error_t *err)
{
    char *copy = strdup(text);
    if (!copy)
        return ompf_error_set(err, OMPF_ENOMEM, "%s: out of memory", origin);
    int rc = 0, line = 0;
    char *save = NULL;
    for (char *ln = copy; ln && !rc; ln = save) {
        save = strchr(ln, '\n');
        if (save)
            *save++ = '\0';
        line++;
        char *hash = strchr(ln, '#');
        if (hash)
            *hash = '\0';
        char *s = sim_trim(ln);
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            rc = ompf_error_set(err, OMPF_EINVAL,
                                "%s:%d: expected 'key = value', got '%s'", origin, line, s);
            break;
        }
        *eq = '\0';
        rc = set_param(m, sim_trim(s), sim_trim(eq + 1), origin, line, err);
    }
    free(copy);
    return rc;
}

static int model_new(ompf_sim_model_t **out, ompf_error_t *err)
{
    ompf_sim_model_t *m = calloc(1, sizeof *m);
    if (!m)
        return ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory");
    int rc = apply_text(m, base_text, "built-in defaults", err);
    if (rc) {
        free(m);
        return rc;
    }
    *out = m;
    return 0;
}

static int model_check(ompf_sim_model_t *m, const char *origin, ompf_error_t *err)
{
    if (m->p.work_min > m->p.work_max)
        return ompf_error_set(err, OMPF_EINVAL, "%s: work_min (%g) exceeds work_max (%g)",
                              origin, m->p.work_min, m->p.work_max);
    if (m->p.types > m->p.xus)
        return ompf_error_set(err, OMPF_EINVAL,
                              "%s: more types (%g) than XUs (%g); every type needs an XU",
                              origin, m->p.types, m->p.xus);
    return sim_model_build(m, err);
}

int ompf_sim_model_parse(const char *text, const char *origin, ompf_sim_model_t **out,
                         ompf_error_t *err)
{
    if (!text || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_sim_model_parse: NULL argument");
    *out = NULL;
    if (!origin)
        origin = "model";
    ompf_sim_model_t *m = NULL;
    int rc = model_new(&m, err);
    if (rc)
        return rc;
    if ((rc = apply_text(m, text, origin, err)) || (rc = model_check(m, origin, err))) {
        ompf_sim_model_destroy(m);
        return rc;
    }
    *out = m;
    return 0;
}

/* 1 when text has a line that is neither blank nor a comment. */
static int has_setting(const char *text)
{
    for (const char *ln = text; ln && *ln;) {
        const char *s = ln + strspn(ln, " \t\r\f\v");
        if (*s && *s != '\n' && *s != '#')
            return 1;
        ln = strchr(ln, '\n');
        ln = ln ? ln + 1 : NULL;
    }
    return 0;
}

int ompf_sim_model_load(const char *spec, ompf_sim_model_t **out, ompf_error_t *err)
{
    if (!spec || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_sim_model_load: NULL argument");
    *out = NULL;
    if (!strncmp(spec, "builtin:", 8)) {
        for (size_t i = 0; i < N_BUILTINS; i++)
            if (!strcmp(spec + 8, builtins[i].name))
                return ompf_sim_model_parse(builtins[i].text, spec, out, err);
        return ompf_error_set(err, OMPF_ENOTFOUND,
                              "%s: no such built-in model (choose builtin:zero, builtin:low or builtin:high)",
                              spec);
    }
    char *buf;
    int rc = sim_read_text(spec, "model file", 1u << 24, &buf, err);
    if (rc)
        return rc;
    /* An empty file would silently be the default model: a mistake (a
     * failed redirect, a wrong path) that costs a full simulation. */
    if (!has_setting(buf)) {
        free(buf);
        return ompf_error_set(err, OMPF_EINVAL, "%s: the model file sets nothing (it is "
                              "empty or holds only comments); give 'key = value' lines, "
                              "e.g. from `ompfuse simulate --show-model builtin:low`", spec);
    }
    rc = ompf_sim_model_parse(buf, spec, out, err);
    free(buf);
    return rc;
}

int ompf_sim_model_set(ompf_sim_model_t *m, const char *key, const char *value,
                       ompf_error_t *err)
{
    if (!m || !key || !value)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_sim_model_set: NULL argument");
    sim_params_t saved = m->p;
    int rc = set_param(m, key, value, "--set", 0, err);
    if (!rc)
        rc = model_check(m, "--set", err);
    if (rc) {
        m->p = saved;
        sim_model_build(m, NULL);
    }
    return rc;
}

void ompf_sim_model_destroy(ompf_sim_model_t *m)
{
    if (!m)
        return;
    free(m->ev);
    free(m);
}

int ompf_sim_model_write(const ompf_sim_model_t *m, FILE *f)
{
    if (!m || !f)
        return OMPF_EINVAL;
    fprintf(f, "name = %s\n", m->p.name);
    for (size_t i = 0; i < N_PARAMS; i++) {
        double v = *(const double *)((const char *)&m->p + params[i].off);
        /* Shortest form that reads back to the same double. */
        char num[40];
        for (int prec = 6; prec <= 17; prec++) {
            snprintf(num, sizeof num, "%.*g", prec, v);
            if (strtod(num, NULL) == v)
                break;
        }
        fprintf(f, "%-16s = %-10s # %s\n", params[i].key, num, params[i].help);
    }
    return ferror(f) ? OMPF_EIO : 0;
}

const char *ompf_sim_model_name(const ompf_sim_model_t *m) { return m ? m->p.name : NULL; }
uint32_t ompf_sim_model_event_count(const ompf_sim_model_t *m) { return m ? m->n_events : 0; }
uint32_t ompf_sim_model_xu_count(const ompf_sim_model_t *m) { return m ? (uint32_t)m->p.xus : 0; }
uint32_t ompf_sim_model_slots(const ompf_sim_model_t *m) { return m ? (uint32_t)m->p.pmu_slots : 0; }

size_t ompf_sim_event_name(const ompf_sim_model_t *m, uint32_t i, char *buf, size_t len)
{
    if (!m || i >= m->n_events) {
        if (len)
            buf[0] = '\0';
        return 0;
    }
    return (size_t)snprintf(buf, len, "%s", m->ev[i].name);
}

int ompf_sim_event_find(const ompf_sim_model_t *m, const char *name)
{
    if (!m || !name)
        return -1;
    for (uint32_t i = 0; i < m->n_events; i++) {
        const char *full = m->ev[i].name, *shrt = full + 5; /* after "sim::" */
        if (!strcmp(name, full) || !strcmp(name, shrt))
            return (int)i;
        /* "E07" alone */
        if (strlen(name) == 3 && !strncmp(name, shrt, 3) && shrt[3] == '_')
            return (int)i;
    }
    const char *digits = NULL;
    if (!strncmp(name, "ev", 2))
        digits = name + 2;
    else if (name[0] == 'e' || name[0] == 'E')
        digits = name + 1;
    if (digits && *digits) {
        char *end;
        unsigned long v = strtoul(digits, &end, 10);
        if (*end == '\0' && isdigit((unsigned char)*digits) && v < m->n_events)
            return (int)v;
    }
    return -1;
}

/* ---- event definitions ------------------------------------------------- */

typedef struct fixed_event {
    const char *name;
    int kind;
    uint32_t source;
    double scale, a_work, a_mem, a_br, a_lat, a_cpi;
} fixed_event_t;

/* The first events mimic common hardware events; their exponents say
 * which latents drive them (m: misses/1000 instr, b: branches/instr,
 * r: latency factor, cpi: cycles per instruction). */
static const fixed_event_t fixed[] = {
    {"cycles", SIM_EV_FORMULA, 0, 1, 1, 0, 0, 0, 1},
    {"instructions", SIM_EV_FORMULA, 0, 1, 1, 0, 0, 0, 0},
    {"l1_dcm", SIM_EV_FORMULA, 0, 0.001, 1, 1, 0, 0, 0},
    {"l2_dca", SIM_EV_DUP, 2, 1, 0, 0, 0, 0, 0},
    {"branches", SIM_EV_FORMULA, 0, 1, 1, 0, 1, 0, 0},
    {"br_msp", SIM_EV_FORMULA, 0, 0.08, 1, 0, 1.5, 0, 0},
    {"l2_dcm", SIM_EV_FORMULA, 0, 0.0004, 1, 1, 0, 0.5, 0},
    {"l3_tcm", SIM_EV_FORMULA, 0, 0.0001, 1, 1.2, 0, 1, 0},
    {"ref_cycles", SIM_EV_DUP, 0, 1, 0, 0, 0, 0, 0},
    {"stall_cycles", SIM_EV_FORMULA, 0, 0.5, 1, 0.5, 0, 1, 1},
    {"loads", SIM_EV_FORMULA, 0, 0.3, 1, 0.1, 0, 0, 0},
    {"stores", SIM_EV_FORMULA, 0, 0.12, 1, 0.2, -0.3, 0, 0},
    {"tlb_dm", SIM_EV_FORMULA, 0, 0.00002, 1, 1.5, 0, 0.5, 0},
};
#define N_FIXED (sizeof fixed / sizeof fixed[0])

int sim_model_build(ompf_sim_model_t *m, ompf_error_t *err)
{
    uint32_t n = (uint32_t)m->p.events;
    sim_event_t *ev = calloc(n, sizeof *ev);
    if (!ev)
        return ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory for %u events", n);
    uint32_t n_fixed = n < N_FIXED ? n : (uint32_t)N_FIXED, fixed_dups = 0;
    for (uint32_t i = 0; i < n_fixed; i++) {
        const fixed_event_t *f = &fixed[i];
        sim_event_t *e = &ev[i];
        snprintf(e->name, sizeof e->name, "sim::E%02u_%s", i, f->name);
        e->kind = f->kind;
        e->source = f->source;
        e->scale = f->scale;
        e->a_work = f->a_work;
        e->a_mem = f->a_mem;
        e->a_br = f->a_br;
        e->a_lat = f->a_lat;
        e->a_cpi = f->a_cpi;
        e->noise = f->kind == SIM_EV_DUP ? m->p.dup_noise : m->p.event_noise;
        fixed_dups += f->kind == SIM_EV_DUP;
    }
    /* The rest: a seeded mix of duplicates, weak and formula events. */
    uint32_t rest = n - n_fixed;
    uint32_t want_dup = (uint32_t)m->p.dup_events > fixed_dups ? (uint32_t)m->p.dup_events - fixed_dups : 0;
    if (want_dup > rest)
        want_dup = rest;
    uint32_t want_weak = (uint32_t)m->p.weak_events;
    if (want_weak > rest - want_dup)
        want_weak = rest - want_dup;
    int *kinds = calloc(rest ? rest : 1, sizeof *kinds);
    if (!kinds) {
        free(ev);
        return ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory");
    }
    for (uint32_t i = 0; i < rest; i++)
        kinds[i] = i < want_dup ? SIM_EV_DUP : i < want_dup + want_weak ? SIM_EV_WEAK : SIM_EV_FORMULA;
    sim_rng_t r;
    sim_rng_init(&r, (uint64_t)m->p.model_seed, SIM_S_EVENTS, 0);
    for (uint32_t i = rest; i > 1; i--) {
        uint32_t j = sim_below(&r, i);
        int t = kinds[i - 1];
        kinds[i - 1] = kinds[j];
        kinds[j] = t;
    }
    for (uint32_t k = 0; k < rest; k++) {
        uint32_t i = n_fixed + k;
        sim_event_t *e = &ev[i];
        e->kind = kinds[k];
        if (e->kind == SIM_EV_DUP) {
            /* Duplicate a random earlier formula event. */
            uint32_t cand[1024], nc = 0;
            for (uint32_t j = 0; j < i && nc < 1024; j++)
                if (ev[j].kind == SIM_EV_FORMULA)
                    cand[nc++] = j;
            e->source = cand[sim_below(&r, nc)];
            e->scale = 1;
            e->noise = m->p.dup_noise;
            snprintf(e->name, sizeof e->name, "sim::E%02u_dup_E%02u", i, e->source);
        } else if (e->kind == SIM_EV_WEAK) {
            e->scale = exp(log(1.0) + sim_uniform(&r) * log(100.0));
            e->a_work = 0.3;
            e->noise = m->p.weak_noise;
            snprintf(e->name, sizeof e->name, "sim::E%02u_weak", i);
        } else {
            e->scale = exp(log(1e-4) + sim_uniform(&r) * (log(0.5) - log(1e-4)));
            e->a_work = 1;
            e->a_mem = 1.5 * sim_uniform(&r);
            e->a_br = -0.5 + 2.0 * sim_uniform(&r);
            e->a_lat = sim_uniform(&r);
            e->a_cpi = sim_uniform(&r);
            e->noise = m->p.event_noise;
            snprintf(e->name, sizeof e->name, "sim::E%02u_mix", i);
        }
    }
    free(kinds);
    free(m->ev);
    m->ev = ev;
    m->n_events = n;
    return 0;
}

double sim_cpi(const sim_latent_t *l)
{
    return 0.3 + 0.012 * l->m * l->r + 0.6 * l->b;
}

double sim_event_value(const ompf_sim_model_t *m, uint32_t e, const sim_latent_t *l)
{
    const sim_event_t *d = &m->ev[e];
    if (d->kind == SIM_EV_DUP)
        d = &m->ev[d->source];
    double v = d->scale;
    if (d->a_work != 0)
        v *= pow(l->w, d->a_work);
    if (d->a_mem != 0)
        v *= pow(l->m, d->a_mem);
    if (d->a_br != 0)
        v *= pow(l->b, d->a_br);
    if (d->a_lat != 0)
        v *= pow(l->r, d->a_lat);
    if (d->a_cpi != 0)
        v *= pow(sim_cpi(l), d->a_cpi);
    return v;
}
