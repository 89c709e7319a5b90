/* `--events auto`: the pilots (see include/ompfuse/autoevents.h for the
 * steps).  This file drives them: the candidates (candidates.c), the
 * rounds of the rate pilot (each run by ratepilot.c), the XU pilot and the
 * check under the tool (small campaigns in work_dir); choose.c chooses,
 * report.c prints and saves. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "autoevents_internal.h"
#include "ompfuse/campaign.h"
#include "ompfuse/counters.h"
#include "ompfuse/file.h"
#include "ompfuse/plan.h"
#include "ompfuse/uphold.h"

#define MAX_UPROBES 160  /* candidates from the line table */
#define MAX_PILOT 40     /* uprobes that reach the XU pilot */
#define ROUNDS 40        /* rate pilot rounds at most */

void ompf_auto_opts_init(ompf_auto_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->want = 4;
    o->max_slowdown = 0.10;
    o->min_cv = 0.10;
    o->max_corr = 0.98;
    o->min_inside = 0.2;
    o->timeout_s = 600;
}

static int add_cand(ompf_auto_t *a, const char *name, const char *where, int kind,
                    int emulated)
{
    ompf_auto_cand_t *g = realloc(a->c, (a->n + 1) * sizeof *g);
    if (!g)
        return OMPF_ENOMEM;
    a->c = g;
    ompf_auto_cand_t *c = &a->c[a->n];
    memset(c, 0, sizeof *c);
    c->name = strdup(name);
    c->where = strdup(where ? where : "");
    c->kind = kind;
    c->emulated = emulated;
    if (!c->name || !c->where)
        return OMPF_ENOMEM;
    a->n++;
    return 0;
}

/* Holds exactly names[0..n) (the uprobes a rate round counts on every
 * CPU): their opens and closes then skip the kernel's registering and
 * unregistering, which waits for RCU grace periods under a mutex every
 * tracepoint user on the machine needs (docs/events.md, Held uprobes). */
static void hold_only(ompf_uphold_t *h, char *const *names, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; h && i < n; i++)
        len += strlen(names[i]) + 1;
    char *list = h ? malloc(len) : NULL;
    if (!list)
        return; /* not held: the rounds go through the uprobe PMU */
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += (size_t)snprintf(list + k, len - k, "%s%s", i ? "," : "", names[i]);
    list[k] = '\0';
    ompf_uphold_only(h, list);
    free(list);
}

/* Rounds of the rate pilot over the uprobe candidates, until one round
 * runs to the end.  The rule is exact, not an estimate: a whole run may
 * afford max_slowdown x T / (cost of a hit) hits of one probe, so a
 * candidate that counted more than that, even in a round stopped early,
 * is too hot.  A round may take 2T + 1 s plus what MAX_PILOT survivors may
 * cost (each at most max_slowdown x T); one stopped without a candidate
 * over the limit (a loaded machine, or hits dearer than assumed) drops
 * its hottest until the rest had at most half of its hits. */
static int rate_pilot(ompf_auto_t *a, char *const *argv, const ompf_auto_opts_t *o,
                      ompf_error_t *err)
{
    ompf_auto_round_t r;
    /* the program alone, twice: the time the budget is relative to */
    double plain = INFINITY, plain_cpu = INFINITY;
    for (int k = 0; k < 2; k++) {
        int rc = ompf_auto_rate_round(argv, o->env, o->n_env, &o->exit_ok, NULL, 0,
                                      o->timeout_s, &r, err);
        int killed = r.killed, failed = r.failed, st = r.status;
        double sec = r.seconds, cpu = r.cpu;
        ompf_auto_round_free(&r);
        if (rc)
            return rc;
        if (killed)
            return ompf_error_set(err, OMPF_EINVAL, "%s fails without the tool: it ran longer "
                                  "than %.0f s; nothing to choose events from", argv[0],
                                  o->timeout_s);
        if (failed && WIFEXITED(st)) {
            char hint[1200];
            ompf_exit_set_hint(&o->exit_ok, WEXITSTATUS(st), hint, sizeof hint);
            return ompf_error_set(err, OMPF_EINVAL, "%s fails without the tool: it exited "
                                  "with code %d; nothing to choose events from (%s)", argv[0],
                                  WEXITSTATUS(st), hint);
        }
        if (failed)
            return ompf_error_set(err, OMPF_EINVAL, "%s fails without the tool: killed by "
                                  "signal %d; nothing to choose events from", argv[0],
                                  WTERMSIG(st));
        plain = fmin(plain, sec);
        plain_cpu = fmin(plain_cpu, cpu > 0 ? cpu : sec);
    }
    a->plain_s = plain;
    /* what a hit costs now (a loaded machine traps slower: 15 us idle, 90
     * at load 12 here); never below the documented figure */
    a->uprobe_cost = fmax(UPROBE_COST, ompf_auto_hit_cost(3000, 0));
    a->uprobe_cost_measured = a->uprobe_cost > UPROBE_COST;
    a->emu_cost = fmin(a->uprobe_cost, fmax(EMULATED_COST, ompf_auto_hit_cost(3000, 1)));
    char **alive = calloc(a->n + 1, sizeof *alive);
    size_t *idx = calloc(a->n + 1, sizeof *idx);
    if (!alive || !idx) {
        free(alive);
        free(idx);
        return OMPF_ENOMEM;
    }
    int rc = 0;
    for (int round = 1; round <= ROUNDS; round++) {
        size_t na = 0;
        for (size_t i = 0; i < a->n; i++)
            if (a->c[i].kind == OMPF_AUTO_UPROBE && !a->c[i].why[0]) {
                idx[na] = i;
                alive[na++] = a->c[i].name;
            }
        if (na == 0)
            break;
        /* room for what MAX_PILOT acceptable probes cost, no more: a round
         * of many hot ones is stopped soon, and what it counted decides */
        double budget = 2.0 * plain + 1.0 +
                        (double)(na < MAX_PILOT ? na : MAX_PILOT) * o->max_slowdown * plain;
        hold_only(o->hold, alive, na);
        rc = ompf_auto_rate_round(argv, o->env, o->n_env, &o->exit_ok, alive, na, budget, &r, err);
        if (rc) {
            ompf_auto_round_free(&r);
            break;
        }
        double hits = 0;
        for (size_t k = 0; k < na; k++)
            hits += r.count[k];
        fprintf(o->log, "ompfuse: auto: rate pilot round %d: %zu uprobes, %.0f hits in %.2f s%s\n",
                round, na, hits, r.seconds, r.killed ? " (stopped at the budget)" : "");
        if (!r.killed && r.failed) {
            rc = ompf_error_set(err, OMPF_EINVAL, "%s fails with uprobes in it (rate pilot: "
                                "%s %d)", argv[0], WIFSIGNALED(r.status) ? "signal" : "exit",
                                WIFSIGNALED(r.status) ? WTERMSIG(r.status)
                                                      : WEXITSTATUS(r.status));
            ompf_auto_round_free(&r);
            break;
        }
        if (!r.killed && hits * UPROBE_COST > 0.5 * plain_cpu && r.cpu > plain_cpu) {
            /* the probes took most of the round: the rest of the CPU time
             * is theirs.  This is noisy, so it only ever raises the
             * documented figure (fewer probes, never more). */
            double c = (r.cpu - plain_cpu) / hits;
            if (c > a->uprobe_cost && c < 1e-3) {
                a->uprobe_cost = c;
                a->uprobe_cost_measured = 1;
            }
        }
        size_t dropped = ompf__auto_rate_verdicts(a, idx, na, &r, plain_cpu, o->max_slowdown);
        if (r.killed && dropped == 0) {
            double left = hits;
            while (left > 0.5 * hits) {
                size_t h = na;
                for (size_t k = 0; k < na; k++)
                    if (!a->c[idx[k]].why[0] && (h == na || r.count[k] > r.count[h]))
                        h = k;
                if (h == na || r.count[h] == 0)
                    break;
                ompf__auto_reject(&a->c[idx[h]], "too hot together with the others: %.0f "
                                  "hits in a round stopped after %.2f s", r.count[h], r.seconds);
                left -= r.count[h];
            }
        }
        int done = !r.killed;
        ompf_auto_round_free(&r);
        if (done)
            break;
        if (round == ROUNDS)
            for (size_t k = 0; k < na; k++)
                ompf__auto_reject(&a->c[idx[k]], "the rate pilot did not finish in %d rounds", ROUNDS);
    }
    /* keep at most MAX_PILOT for the XU pilot (its group has 64 counters):
     * when there are more, a line of a function with exactly the count of
     * one before it is most likely in the same block, a twin */
    size_t kept = 0;
    for (size_t i = 0; i < a->n; i++)
        kept += a->c[i].kind == OMPF_AUTO_UPROBE && !a->c[i].why[0];
    for (size_t i = 0; i < a->n && kept > MAX_PILOT; i++) {
        ompf_auto_cand_t *c = &a->c[i];
        const char *plus = strrchr(c->name, '+');
        for (size_t j = 0; j < i && plus && c->kind == OMPF_AUTO_UPROBE && !c->why[0]; j++)
            if (a->c[j].kind == OMPF_AUTO_UPROBE && !a->c[j].why[0] &&
                a->c[j].total == c->total && !strncmp(a->c[j].name, c->name, (size_t)(plus - c->name + 1))) {
                ompf__auto_reject(c, "the same count as %.100s in the rate pilot (%.0f): "
                                  "most likely the same block", a->c[j].name, c->total);
                kept--;
            }
    }
    kept = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->c[i].kind == OMPF_AUTO_UPROBE && !a->c[i].why[0] && ++kept > MAX_PILOT)
            ompf__auto_reject(&a->c[i], "beyond the %d uprobes the XU pilot counts", MAX_PILOT);
    free(alive);
    free(idx);
    return rc;
}

/* Runs the plan's lines in work_dir with every event counted at once. */
static int run_pilot(const ompf_plan_t *plan, const char *dir, char *const *argv,
                     const ompf_auto_opts_t *o, ompf_campaign_t **out, ompf_error_t *err)
{
    ompf_campaign_opts_t co;
    ompf_campaign_opts_init(&co);
    co.out_dir = dir;
    co.timeout_s = o->timeout_s;
    co.env = o->env;
    co.n_env = o->n_env;
    co.exit_ok = o->exit_ok;
    co.check_plain = 0;
    co.tool_path = o->tool_path;
    co.progress = -1; /* the runs as they end: the pilots take a minute or more */
    co.log = o->log;
    co.slots = 64; /* the pilots count everything at once: no emulated limit */
    co.hold = o->hold;
    co.hold_own_only = 1; /* timed: a run traps only at what it counts */
    int rc = ompf_campaign_create(plan, argv, &co, out, err);
    if (rc == 0)
        rc = ompf_campaign_execute(*out, err);
    if (rc == OMPF_CAMPAIGN_INCOMPLETE)
        ompf_error_set(err, OMPF_EINVAL, "a pilot run of %s failed (see %s/manifest.tsv)",
                       argv[0], dir);
    return rc;
}

static double best_seconds(const ompf_campaign_t *c, size_t line)
{
    double best = INFINITY;
    for (size_t i = 0; i < ompf_campaign_run_count(c); i++) {
        const ompf_campaign_run_t *r = ompf_campaign_run_get(c, i);
        if (r->line == line && r->status == OMPF_RUN_OK && r->seconds > 0)
            best = fmin(best, r->seconds);
    }
    return best;
}

/* The least CPU time (perf::TASK-CLOCK summed over the threads) of the
 * runs of a line: less disturbed by other load than wall time, which on a
 * shared machine swings by more than the probes cost. */
static double best_cpu(const ompf_campaign_t *c, size_t line)
{
    double best = INFINITY;
    for (size_t i = 0; i < ompf_campaign_run_count(c); i++) {
        const ompf_campaign_run_t *r = ompf_campaign_run_get(c, i);
        ompf_profile_t *p;
        ompf_read_info_t info;
        if (r->line != line || r->status != OMPF_RUN_OK ||
            ompf_profile_read(r->profile, &p, &info, NULL))
            continue;
        int e = ompf_event_find(p, BASE_EVENT);
        double sum = 0;
        for (size_t t = 0; e >= 0 && t < ompf_thread_count(p); t++) {
            double v = ompf_thread_get_const(p, (uint32_t)t)->total[e];
            sum += ompf_is_missing(v) ? 0 : v;
        }
        if (e >= 0 && sum > 0)
            best = fmin(best, sum * 1e-9);
        ompf_profile_destroy(p);
    }
    return isinf(best) ? 0 : best;
}

/* The XU pilot's profile: a run whose program succeeded counts as one
 * even when some candidates failed to open (a uprobe the kernel cannot
 * place on that instruction, ENOTSUPP, is only found in the process). */
static const char *profile_of(const ompf_campaign_t *c, const ompf_exit_set_t *ok, size_t line,
                              size_t skip)
{
    for (size_t i = 0; i < ompf_campaign_run_count(c); i++) {
        const ompf_campaign_run_t *r = ompf_campaign_run_get(c, i);
        if (r->line == line && (r->status == OMPF_RUN_OK ||
                                (r->status == OMPF_RUN_FAILED &&
                                 ompf_exit_set_has(ok, r->exit_code) &&
                                 !r->signal && access(r->profile, R_OK) == 0)) &&
            skip-- == 0)
            return r->profile;
    }
    return NULL;
}

int ompf_auto_select(char *const *argv, const ompf_auto_opts_t *o, ompf_auto_t **out,
                     ompf_error_t *err)
{
    ompf_auto_opts_t d;
    if (!o) {
        ompf_auto_opts_init(&d);
        o = &d;
    }
    ompf_auto_opts_t oo = *o;
    if (!oo.log)
        oo.log = stderr;
    o = &oo;
    *out = NULL;
    if (!o->work_dir || !argv || !argv[0])
        return ompf_error_set(err, OMPF_EINVAL, "auto: no program or work directory");
    if (mkdir(o->work_dir, 0777) && errno != EEXIST)
        return ompf_error_set(err, OMPF_EIO, "cannot create %s: %s", o->work_dir,
                              strerror(errno));
    ompf_auto_t *a = calloc(1, sizeof *a);
    if (!a)
        return OMPF_ENOMEM;
    char **names = NULL, **where = NULL;
    unsigned char *emulated = NULL;
    size_t nu = 0;
    /* absolute: the names are saved and used from other directories */
    char bin[PATH_MAX];
    int rc = realpath(argv[0], bin) ? 0 : ompf_error_set(err, OMPF_EIO, "%s: %s", argv[0],
                                                         strerror(errno));
    if (rc == 0)
        rc = ompf_auto_uprobe_candidates(bin, MAX_UPROBES, &names, &where, &emulated, &nu, err);
    for (size_t i = 0; rc == 0 && i < nu; i++)
        rc = add_cand(a, names[i], where[i], OMPF_AUTO_UPROBE, emulated[i]);
    ompf_auto_free_list(names, nu);
    ompf_auto_free_list(where, nu);
    free(emulated);
    a->tracefs = ompf_cnt_tracefs() != NULL;
    a->uprobe_fixed = o->hold && ompf_uphold_status(o->hold) == 0 ? UPROBE_FIXED_HELD
                                                                   : UPROBE_FIXED_PMU;
    const char *const *list;
    size_t nt = a->tracefs ? ompf_auto_tracepoint_candidates(&list) : 0;
    for (size_t i = 0; rc == 0 && i < nt; i++)
        rc = add_cand(a, list[i], NULL, OMPF_AUTO_TRACEPOINT, 0);
    size_t ns = ompf_auto_software_candidates(&list);
    for (size_t i = 0; rc == 0 && i < ns; i++)
        rc = add_cand(a, list[i], NULL, OMPF_AUTO_SOFTWARE, 0);
    if (rc == 0) {
        fprintf(o->log, "ompfuse: auto: %zu uprobe, %zu tracepoint, %zu software candidates "
                        "for %s\n", nu, nt, ns, argv[0]);
        rc = rate_pilot(a, argv, o, err);
    }
    /* after the rate pilot, which stops a user without the privileges
     * (who cannot read tracefs either) with the sentence that matters */
    if (rc == 0 && !a->tracefs)
        fprintf(o->log, "ompfuse: auto: tracefs is not mounted, so no tracepoint is a "
                        "candidate (as root: mount -t tracefs nodev /sys/kernel/tracing); "
                        "choosing from uprobes and software events\n");

    /* the XU pilot: line 1 the base (software only, twice), line 2 all */
    ompf_plan_t *plan = NULL;
    ompf_campaign_t *c = NULL;
    ompf_profile_t *p = NULL, *p2 = NULL;
    double **vals = NULL;
    const char **ev = calloc(a->n + 1, sizeof *ev);
    size_t ne = 0;
    for (size_t i = 0; ev && i < a->n; i++)
        if (!a->c[i].why[0])
            ev[ne++] = a->c[i].name;
    const char *base[] = {BASE_EVENT};
    if (rc == 0 && !ev)
        rc = OMPF_ENOMEM;
    if (rc == 0 && (rc = ompf_plan_create(&plan)) == 0) {
        ompf_plan_set_slots(plan, 64);
        ompf_plan_comment(plan, "ompfuse --events auto: pilot runs (line 1 the base, line 2 "
                                "the candidates, twice: what holds between runs)");
        rc = ompf_plan_add(plan, OMPF_ROLE_REFERENCE, 2, base, 1, NULL, 0);
        if (rc == 0)
            rc = ompf_plan_add(plan, OMPF_ROLE_REFERENCE, 2, ev, ne, NULL, 0);
    }
    if (rc == 0) {
        fprintf(o->log, "ompfuse: auto: XU pilot with %zu events under the tool\n", ne);
        rc = run_pilot(plan, o->work_dir, argv, o, &c, err);
        if (rc == OMPF_CAMPAIGN_INCOMPLETE && profile_of(c, &o->exit_ok, 2, 0) &&
            best_seconds(c, 1) < INFINITY)
            rc = 0; /* candidates that did not open are rejected below */
        else if (rc == OMPF_CAMPAIGN_INCOMPLETE)
            rc = OMPF_EINVAL;
    }
    if (rc == 0) {
        a->base_s = best_seconds(c, 1);
        a->base_cpu = best_cpu(c, 1);
        const char *pp = profile_of(c, &o->exit_ok, 2, 0);
        const char *pp2 = profile_of(c, &o->exit_ok, 2, 1);
        ompf_read_info_t info;
        rc = pp ? ompf_profile_read(pp, &p, &info, err)
                : ompf_error_set(err, OMPF_EINVAL, "the XU pilot left no profile");
        if (rc == 0 && pp2 && ompf_profile_read(pp2, &p2, &info, NULL))
            p2 = NULL; /* then dependence within one run, as a fallback */
    }
    ompf_campaign_destroy(c);
    c = NULL;
    if (rc == 0) {
        vals = calloc(a->n + 1, sizeof *vals);
        rc = vals ? ompf__auto_xu_stats(a, p, vals) : OMPF_ENOMEM;
    }
    if (rc == 0 && p2)
        rc = ompf__auto_cross(a, p, p2);
    if (rc == 0)
        rc = ompf__auto_choose(a, vals, o, 1);
    if (rc == 0 && a->nchosen < 2) {
        fprintf(o->log, "ompfuse: auto: only %zu candidate%s pass%s the thresholds; adding the "
                        "best of the rest (FALLBACK)\n", a->nchosen,
                a->nchosen == 1 ? "" : "s", a->nchosen == 1 ? "es" : "");
        rc = ompf__auto_choose(a, vals, o, 0);
    }
    if (rc == 0 && a->nchosen < 2)
        rc = ompf_error_set(err, OMPF_EUNSUPP, "auto: only %zu event%s of %s vary per XU "
                            "(EPD compares pairs; see the reasons above)", a->nchosen,
                            a->nchosen == 1 ? "" : "s", argv[0]);
    /* the check: the chosen set counted at once, timed against the base
     * runs made next to it (DIR/check: line 1 the base, line 2 the set) */
    if (rc == 0) {
        ompf_plan_destroy(plan);
        plan = NULL;
        rc = ompf_plan_create(&plan);
        if (rc == 0) {
            ompf_plan_set_slots(plan, 64);
            rc = ompf_plan_add(plan, OMPF_ROLE_REFERENCE, CHECK_RUNS, base, 1, NULL, 0);
        }
    }
    if (rc == 0) {
        const char **ch = calloc(a->nchosen + 1, sizeof *ch);
        rc = ch ? 0 : OMPF_ENOMEM;
        size_t nch = 0;
        int has_base = 0;
        for (size_t k = 0; rc == 0 && k < a->nchosen; k++) {
            ch[nch++] = a->c[a->order[k]].name;
            has_base |= !strcmp(a->c[a->order[k]].name, BASE_EVENT);
        }
        if (rc == 0 && !has_base)
            ch[nch++] = BASE_EVENT; /* the CPU time of the check runs */
        if (rc == 0)
            /* the campaign runs repeat 1 of both lines, then 2, ...: base
             * and set alternate, side by side; the set's uprobes are held
             * only during its runs (hold_own_only), so the base runs of the
             * same binary do not trap at them */
            rc = ompf_plan_add(plan, OMPF_ROLE_REFERENCE, CHECK_RUNS, ch, nch, NULL, 0);
        free(ch);
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/check", o->work_dir);
        if (rc == 0)
            rc = run_pilot(plan, dir, argv, o, &c, err);
        if (rc == OMPF_CAMPAIGN_INCOMPLETE)
            rc = OMPF_EINVAL;
        if (rc == 0) {
            a->base_s = best_seconds(c, 1);
            a->check_s = best_seconds(c, 2);
            a->base_cpu = best_cpu(c, 1);
            a->check_cpu = best_cpu(c, 2);
        }
        ompf_campaign_destroy(c);
    }
    if (rc && a->xus)
        ompf_auto_print(a, o->log); /* the reasons behind "only N vary" */
    for (size_t i = 0; vals && i < a->n; i++)
        free(vals[i]);
    free(vals);
    free(ev);
    ompf_profile_destroy(p);
    ompf_profile_destroy(p2);
    ompf_plan_destroy(plan);
    if (rc) {
        ompf_auto_destroy(a);
        return rc;
    }
    *out = a;
    return 0;
}

void ompf_auto_destroy(ompf_auto_t *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++) {
        free(a->c[i].name);
        free(a->c[i].where);
    }
    for (size_t i = 0; a->bin && i < a->n; i++)
        free(a->bin[i]);
    for (size_t i = 0; a->bin2 && i < a->n; i++)
        free(a->bin2[i]);
    free(a->bin);
    free(a->bin2);
    free(a->match);
    free(a->lo);
    free(a->hi);
    free(a->xtype);
    free(a->c);
    free(a->order);
    free(a);
}
