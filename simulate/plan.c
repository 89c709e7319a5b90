/* Plans in the campaign plan text format: parsing, writing, and automatic
 * LGL / BC / reference / HEM plans for a model. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

struct ompf_sim_plan {
    size_t n, cap;
    ompf_sim_plan_line_t *line;
};

static const char *const role_names[OMPF_SIM_ROLE_COUNT] = {
    OMPF_MODE_RUN, OMPF_MODE_REFERENCE, OMPF_MODE_HEM, OMPF_MODE_HEM_DELTA};

const char *ompf_sim_role_name(int role)
{
    return role >= 0 && role < OMPF_SIM_ROLE_COUNT ? role_names[role] : "?";
}

int ompf_sim_role_parse(const char *s)
{
    for (int i = 0; i < OMPF_SIM_ROLE_COUNT; i++)
        if (s && !strcmp(s, role_names[i]))
            return i;
    return -1;
}

void ompf_sim_plan_destroy(ompf_sim_plan_t *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->line[i].events);
    free(p->line);
    free(p);
}

size_t ompf_sim_plan_count(const ompf_sim_plan_t *p) { return p ? p->n : 0; }

const ompf_sim_plan_line_t *ompf_sim_plan_get(const ompf_sim_plan_t *p, size_t i)
{
    return p && i < p->n ? &p->line[i] : NULL;
}

size_t ompf_sim_plan_runs(const ompf_sim_plan_t *p)
{
    size_t n = 0;
    for (size_t i = 0; p && i < p->n; i++)
        n += p->line[i].repeat;
    return n;
}

/* Appends a line (events copied). */
static int plan_add(ompf_sim_plan_t *p, int role, uint32_t repeat, const uint32_t *ev,
                    uint32_t n, const char *group)
{
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 16;
        ompf_sim_plan_line_t *nl = realloc(p->line, nc * sizeof *nl);
        if (!nl)
            return OMPF_ENOMEM;
        p->line = nl;
        p->cap = nc;
    }
    ompf_sim_plan_line_t *l = &p->line[p->n];
    memset(l, 0, sizeof *l);
    l->events = malloc((n ? n : 1) * sizeof *l->events);
    if (!l->events)
        return OMPF_ENOMEM;
    memcpy(l->events, ev, n * sizeof *ev);
    l->role = role;
    l->repeat = repeat;
    l->n_events = n;
    snprintf(l->group, sizeof l->group, "%s", group && role == OMPF_SIM_RUN ? group : "");
    p->n++;
    return 0;
}

/* plan_add for the automatic planner: failures are out of memory. */
static int auto_add(ompf_sim_plan_t *p, int role, uint32_t repeat, const uint32_t *ev,
                    uint32_t n, const char *group, ompf_error_t *err)
{
    if (plan_add(p, role, repeat, ev, n, group))
        return ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory building a plan");
    return 0;
}

static int parse_line(ompf_sim_plan_t *p, char *s, const char *group, const ompf_sim_model_t *m,
                      const char *origin, int line, ompf_error_t *err)
{
    char *save = NULL;
    char *role_s = strtok_r(s, " \t", &save);
    char *rep_s = strtok_r(NULL, " \t", &save);
    char *ev_s = strtok_r(NULL, " \t", &save);
    if (!role_s || !rep_s || !ev_s)
        return ompf_error_set(err, OMPF_EINVAL,
                              "%s:%d: expected '<role> <repeat> <events>' (e.g. 'run 1 ev0,ev1')",
                              origin, line);
    /* Options of the real planner's format (key=value) do not apply to a
     * simulated machine: its model fixes period and counters. */
    for (char *opt = strtok_r(NULL, " \t", &save); opt; opt = strtok_r(NULL, " \t", &save))
        if (!strchr(opt, '=') || opt[0] == '=')
            return ompf_error_set(err, OMPF_EINVAL,
                                  "%s:%d: unexpected '%s' after the events (only key=value "
                                  "options may follow)", origin, line, opt);
    int role = ompf_sim_role_parse(role_s);
    /* The planner's fusion roles are runs; the role names the group. */
    if (role < 0 && (!strcmp(role_s, "lgl") || !strcmp(role_s, "ctc") || !strcmp(role_s, "bc"))) {
        role = OMPF_SIM_RUN;
        if (!group[0])
            group = role_s;
    }
    if (role < 0)
        return ompf_error_set(err, OMPF_EINVAL,
                              "%s:%d: unknown role '%s' (use run, lgl, ctc, bc, reference, hem "
                              "or hem-delta)",
                              origin, line, role_s);
    char *end;
    errno = 0;
    unsigned long rep = strtoul(rep_s, &end, 10);
    if (*end || errno || rep < 1 || rep > 100000 || !isdigit((unsigned char)*rep_s))
        return ompf_error_set(err, OMPF_EINVAL,
                              "%s:%d: repeat '%s' must be an integer from 1 to 100000", origin,
                              line, rep_s);
    uint32_t E = ompf_sim_model_event_count(m), n = 0;
    uint32_t *ev = malloc(E * sizeof *ev);
    char *seen = calloc(E, 1);
    int rc = 0;
    if (!ev || !seen) {
        rc = ompf_error_set(err, OMPF_ENOMEM, "%s:%d: out of memory", origin, line);
        goto out;
    }
    if (!strcmp(ev_s, "all")) {
        for (uint32_t e = 0; e < E; e++)
            ev[n++] = e;
    } else {
        char *sv = NULL;
        for (char *tok = strtok_r(ev_s, ",", &sv); tok; tok = strtok_r(NULL, ",", &sv)) {
            int e = ompf_sim_event_find(m, tok);
            if (e < 0) {
                rc = ompf_error_set(err, OMPF_ENOTFOUND,
                                    "%s:%d: event '%s' is not an event of model %s (it has %u: "
                                    "ev0..ev%u or names like E00_cycles)",
                                    origin, line, tok, ompf_sim_model_name(m), E, E - 1);
                goto out;
            }
            if (seen[e]) {
                rc = ompf_error_set(err, OMPF_EINVAL, "%s:%d: event '%s' listed twice", origin,
                                    line, tok);
                goto out;
            }
            seen[e] = 1;
            ev[n++] = (uint32_t)e;
        }
        if (n == 0) {
            rc = ompf_error_set(err, OMPF_EINVAL, "%s:%d: no events given", origin, line);
            goto out;
        }
    }
    if ((role == OMPF_SIM_RUN || role == OMPF_SIM_REFERENCE) &&
        n > ompf_sim_model_slots(m)) {
        rc = ompf_error_set(err, OMPF_EINVAL,
                            "%s:%d: %u events do not fit the model's %u counters (pmu_slots); "
                            "split the set or use a hem role",
                            origin, line, n, ompf_sim_model_slots(m));
        goto out;
    }
    /* Groups name fusion runs only: references and HEM runs are named by
     * their role, so that "lgl-*.ompf" never picks up a reference. */
    if (plan_add(p, role, (uint32_t)rep, ev, n, role == OMPF_SIM_RUN ? group : ""))
        rc = ompf_error_set(err, OMPF_ENOMEM, "%s:%d: out of memory", origin, line);
out:
    free(ev);
    free(seen);
    return rc;
}

int ompf_sim_plan_parse(const char *text, const char *origin, const ompf_sim_model_t *m,
                        ompf_sim_plan_t **out, ompf_error_t *err)
{
    if (!text || !m || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_sim_plan_parse: NULL argument");
    *out = NULL;
    if (!origin)
        origin = "plan";
    ompf_sim_plan_t *p = calloc(1, sizeof *p);
    char *copy = strdup(text);
    if (!p || !copy) {
        free(p);
        free(copy);
        return ompf_error_set(err, OMPF_ENOMEM, "%s: out of memory", origin);
    }
    char group[32] = "";
    int rc = 0, line = 0;
    char *next = NULL;
    for (char *ln = copy; ln && !rc; ln = next) {
        next = strchr(ln, '\n');
        if (next)
            *next++ = '\0';
        line++;
        char *hash = strchr(ln, '#');
        if (hash) {
            char *c = sim_trim(hash + 1);
            if (!strncmp(c, "group:", 6)) {
                char *g = sim_trim(c + 6);
                if (strlen(g) >= sizeof group || strpbrk(g, "/ \t")) {
                    rc = ompf_error_set(err, OMPF_EINVAL,
                                        "%s:%d: group name '%s' must be one word under 32 characters",
                                        origin, line, g);
                    break;
                }
                snprintf(group, sizeof group, "%s", g);
            }
            *hash = '\0';
        }
        char *s = sim_trim(ln);
        if (*s)
            rc = parse_line(p, s, group, m, origin, line, err);
    }
    free(copy);
    if (!rc && p->n == 0)
        rc = ompf_error_set(err, OMPF_EINVAL, "%s: the plan has no runs", origin);
    if (rc) {
        ompf_sim_plan_destroy(p);
        return rc;
    }
    *out = p;
    return 0;
}

int ompf_sim_plan_load(const char *path, const ompf_sim_model_t *m, ompf_sim_plan_t **out,
                       ompf_error_t *err)
{
    if (!path)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_sim_plan_load: NULL path");
    char *buf;
    int rc = sim_read_text(path, "plan", 1u << 26, &buf, err);
    if (rc)
        return rc;
    rc = ompf_sim_plan_parse(buf, path, m, out, err);
    free(buf);
    return rc;
}

int ompf_sim_plan_write(const ompf_sim_plan_t *p, const ompf_sim_model_t *m, FILE *f)
{
    if (!p || !m || !f)
        return OMPF_EINVAL;
    const char *group = "";
    fprintf(f, "# ompfuse plan: <role> <repeat> <events>; model %s, %u events\n",
            ompf_sim_model_name(m), ompf_sim_model_event_count(m));
    for (size_t i = 0; i < p->n; i++) {
        const ompf_sim_plan_line_t *l = &p->line[i];
        if (l->role == OMPF_SIM_RUN && strcmp(group, l->group)) {
            fprintf(f, "# group: %s\n", l->group);
            group = l->group;
        }
        int fusion_group = l->role == OMPF_SIM_RUN &&
                           (!strcmp(l->group, "lgl") || !strcmp(l->group, "ctc") ||
                            !strcmp(l->group, "bc"));
        fprintf(f, "%s %u ", fusion_group ? l->group : ompf_sim_role_name(l->role), l->repeat);
        if (l->n_events == ompf_sim_model_event_count(m) &&
            (l->role == OMPF_SIM_HEM || l->role == OMPF_SIM_HEM_DELTA)) {
            fputs("all\n", f);
            continue;
        }
        for (uint32_t j = 0; j < l->n_events; j++) {
            char nm[80];
            ompf_sim_event_name(m, l->events[j], nm, sizeof nm);
            fprintf(f, "%s%s", j ? "," : "", nm + 5); /* short names */
        }
        fputc('\n', f);
    }
    return ferror(f) ? OMPF_EIO : 0;
}

/* ---- automatic plans --------------------------------------------------- */

/* Pearson correlations of log(1 + value) over the XUs of a pilot run. */
static int pilot_corr(const ompf_sim_model_t *m, double *corr, ompf_error_t *err)
{
    uint32_t E = ompf_sim_model_event_count(m);
    ompf_sim_t *s;
    int rc = ompf_sim_create(m, 0x70696c6f74ull, &s, err);
    if (rc)
        return rc;
    uint32_t *all = malloc(E * sizeof *all);
    double *mean = calloc(E, sizeof *mean), *cov = calloc((size_t)E * E, sizeof *cov);
    ompf_profile_t *prof = NULL;
    if (!all || !mean || !cov) {
        rc = ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory");
        goto out;
    }
    for (uint32_t e = 0; e < E; e++)
        all[e] = e;
    /* A pilot reference run: the real planner would use one too. */
    if ((rc = ompf_sim_execute(s, 0, OMPF_SIM_RUN, all, E, &prof, NULL, err)))
        goto out;
    size_t X = ompf_xu_count(prof);
    for (size_t i = 0; i < X; i++) {
        const double *v = ompf_xu_values_const(prof, i);
        for (uint32_t e = 0; e < E; e++)
            mean[e] += log1p(v[e] > 0 ? v[e] : 0) / (double)X;
    }
    for (size_t i = 0; i < X; i++) {
        const double *v = ompf_xu_values_const(prof, i);
        for (uint32_t a = 0; a < E; a++) {
            double da = log1p(v[a] > 0 ? v[a] : 0) - mean[a];
            for (uint32_t b = a; b < E; b++)
                cov[(size_t)a * E + b] += da * (log1p(v[b] > 0 ? v[b] : 0) - mean[b]);
        }
    }
    for (uint32_t a = 0; a < E; a++)
        for (uint32_t b = a; b < E; b++) {
            double d = sqrt(cov[(size_t)a * E + a] * cov[(size_t)b * E + b]);
            double c = d > 0 ? cov[(size_t)a * E + b] / d : 0;
            corr[(size_t)a * E + b] = corr[(size_t)b * E + a] = c;
        }
out:
    ompf_profile_destroy(prof);
    ompf_sim_destroy(s);
    free(all);
    free(mean);
    free(cov);
    return rc;
}

int ompf_sim_plan_auto(const ompf_sim_model_t *m, uint32_t slots, uint32_t ref_repeats,
                       uint32_t hem_repeats, ompf_sim_plan_t **out, ompf_error_t *err)
{
    if (!m || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_sim_plan_auto: NULL argument");
    *out = NULL;
    uint32_t E = ompf_sim_model_event_count(m);
    if (slots < 2)
        return ompf_error_set(err, OMPF_EINVAL,
                              "--plan-auto %u: at least 2 counters are needed (BC overlaps and "
                              "reference pairs)", slots);
    if (slots > ompf_sim_model_slots(m))
        return ompf_error_set(err, OMPF_EINVAL,
                              "--plan-auto %u: the model has only %u counters (pmu_slots)", slots,
                              ompf_sim_model_slots(m));
    if (ref_repeats < 2)
        return ompf_error_set(err, OMPF_EINVAL,
                              "reference repeats must be at least 2 (EPD calibrates on pairs of repeats)");
    ompf_sim_plan_t *p = calloc(1, sizeof *p);
    uint32_t *set = malloc(E * sizeof *set);
    char *covered = calloc(E, 1), *pair = calloc((size_t)E * E, 1);
    double *corr = malloc((size_t)E * E * sizeof *corr);
    int rc = 0;
    if (!p || !set || !covered || !pair || !corr) {
        rc = ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory");
        goto out;
    }
    /* LGL: disjoint sets, first-fit in event order. */
    for (uint32_t e = 0; e < E && !rc; e += slots) {
        uint32_t n = E - e < slots ? E - e : slots;
        for (uint32_t j = 0; j < n; j++)
            set[j] = e + j;
        rc = auto_add(p, OMPF_SIM_RUN, 1, set, n, "lgl", err);
    }
    /* BC: chain of overlapping sets. */
    if (!rc && E > slots && (rc = pilot_corr(m, corr, err)))
        goto out;
    {
        uint32_t n = E < slots ? E : slots, ncov = n;
        for (uint32_t j = 0; j < n; j++) {
            set[j] = j;
            covered[j] = 1;
        }
        if (!rc)
            rc = auto_add(p, OMPF_SIM_RUN, 1, set, n, "bc", err);
        uint32_t ov = (slots + 1) / 3 ? (slots + 1) / 3 : 1;
        while (!rc && ncov < E) {
            uint32_t nn = 0, fresh[1024];
            for (uint32_t e = 0; e < E && nn < slots - ov && nn < 1024; e++)
                if (!covered[e])
                    fresh[nn++] = e;
            /* Overlap: covered events most correlated with the new ones. */
            uint32_t k = 0;
            char *used = calloc(E, 1);
            if (!used) {
                rc = ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory");
                break;
            }
            for (uint32_t o = 0; o < ov && o < ncov; o++) {
                int best = -1;
                double bs = -1;
                for (uint32_t c = 0; c < E; c++) {
                    if (!covered[c] || used[c])
                        continue;
                    double sc = 0;
                    for (uint32_t j = 0; j < nn; j++)
                        sc += fabs(corr[(size_t)c * E + fresh[j]]);
                    if (sc > bs) {
                        bs = sc;
                        best = (int)c;
                    }
                }
                used[best] = 1;
                set[k++] = (uint32_t)best;
            }
            free(used);
            for (uint32_t j = 0; j < nn; j++) {
                set[k++] = fresh[j];
                covered[fresh[j]] = 1;
            }
            ncov += nn;
            rc = auto_add(p, OMPF_SIM_RUN, 1, set, k, "bc", err);
        }
    }
    /* References: greedy pair covering, each set repeated. */
    {
        size_t left = (size_t)E * (E - 1) / 2;
        if (E == 1) {
            set[0] = 0;
            rc = rc ? rc : auto_add(p, OMPF_SIM_REFERENCE, ref_repeats, set, 1, NULL, err);
        }
        while (!rc && left > 0) {
            uint32_t n = 0;
            char *in = calloc(E, 1);
            if (!in) {
                rc = ompf_error_set(err, OMPF_ENOMEM, "simulator: out of memory");
                break;
            }
            for (uint32_t a = 0; a < E && n == 0; a++)
                for (uint32_t b = a + 1; b < E && n == 0; b++)
                    if (!pair[(size_t)a * E + b]) {
                        set[n++] = a;
                        set[n++] = b;
                        in[a] = in[b] = 1;
                    }
            while (n < slots) {
                int best = -1, bg = 0;
                for (uint32_t c = 0; c < E; c++) {
                    if (in[c])
                        continue;
                    int g = 0;
                    for (uint32_t j = 0; j < n; j++) {
                        uint32_t a = c < set[j] ? c : set[j], b = c < set[j] ? set[j] : c;
                        g += !pair[(size_t)a * E + b];
                    }
                    if (g > bg) {
                        bg = g;
                        best = (int)c;
                    }
                }
                if (best < 0)
                    break;
                in[best] = 1;
                set[n++] = (uint32_t)best;
            }
            free(in);
            for (uint32_t i = 0; i < n; i++)
                for (uint32_t j = i + 1; j < n; j++) {
                    uint32_t a = set[i] < set[j] ? set[i] : set[j];
                    uint32_t b = set[i] < set[j] ? set[j] : set[i];
                    if (!pair[(size_t)a * E + b]) {
                        pair[(size_t)a * E + b] = 1;
                        left--;
                    }
                }
            rc = auto_add(p, OMPF_SIM_REFERENCE, ref_repeats, set, n, NULL, err);
        }
    }
    for (uint32_t e = 0; e < E; e++)
        set[e] = e;
    if (!rc && hem_repeats) {
        rc = auto_add(p, OMPF_SIM_HEM, hem_repeats, set, E, NULL, err);
        if (!rc)
            rc = auto_add(p, OMPF_SIM_HEM_DELTA, hem_repeats, set, E, NULL, err);
    }
out:
    free(set);
    free(covered);
    free(pair);
    free(corr);
    if (rc) {
        ompf_sim_plan_destroy(p);
        return rc;
    }
    *out = p;
    return 0;
}
