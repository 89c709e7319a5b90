/* The per-benchmark driver of `ompfuse campaign` (libompfbench): plans a
 * benchmark's runs in the order below, executes them (libompfcampaign),
 * then fuses, cleans and evaluates through steps.c. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "ompfuse/campaign.h"
#include "ompfuse/file.h"
#include "ompfuse/plan.h"


static int execute(const ompf_plan_t *plan, char *const *argv, const settings_t *s,
                   const char *dir, const char *const *env, size_t nenv, int check,
                   ompf_campaign_t **out, ompf_error_t *err)
{
    ompf_campaign_opts_t o;
    ompf_campaign_opts_init(&o);
    o.out_dir = dir;
    o.jobs = s->jobs;
    o.timeout_s = s->timeout;
    o.env = env;
    o.n_env = nenv;
    o.check_plain = check;
    o.exit_ok = s->exit_ok;
    o.hold = s->hold;
    ompf_campaign_t *c;
    int rc = ompf_campaign_create(plan, argv, &o, &c, err);
    if (rc)
        return rc;
    /* runs kept from an earlier campaign here must share its OpenMP
     * environment (--threads, --schedule, the caller's OMP_*) */
    rc = ompf_campaign_check_env(c, err);
    if (rc == 0)
        rc = ompf_campaign_execute(c, err);
    *out = c;
    return rc;
}

/* Run order.  `ompf_plan_build` writes each reference set with its R
 * repeats on one line, so the repeats of a set run back to back, and the
 * fusion and HEM runs before or after all of them.  On a shared machine the
 * load drifts over minutes, and consecutive runs resemble each other more
 * than runs made at another time: the calibration (median distance between
 * repeats) then understates the run-to-run variability that every target
 * run is exposed to, and whichever strategy's runs happened to fall in a
 * calmer or busier moment wins or loses by that alone.  So the campaign
 * makes R rounds of the reference sets (one repeat of each set per round)
 * and puts the fusion and HEM runs between the rounds:
 *   phase 1: round 1, lgl sets, hem           (round 1 is the BC pilot)
 *   phase 2: round 2, bc chain, hem-delta, rounds 3..R
 * Each set is still repeated R times (docs/semantics.md, Planning); only
 * the order changes. */
static int copy_runs(ompf_plan_t *dst, const ompf_plan_t *src, int role, uint32_t repeat)
{
    for (size_t i = 0; i < ompf_plan_count(src); i++) {
        const ompf_plan_run_t *r = ompf_plan_get(src, i);
        if (role >= 0 && r->role != role)
            continue;
        int rc = ompf_plan_add(dst, r->role, repeat ? repeat : r->repeat,
                               (const char *const *)r->events, r->n_events,
                               (const char *const *)r->opts, r->n_opts);
        if (rc)
            return rc;
    }
    return 0;
}

static int reference_round(ompf_plan_t *dst, const ompf_plan_t *built, unsigned round,
                           unsigned repeats)
{
    ompf_plan_comment(dst, "group: ref");
    ompf_plan_comment(dst, "reference round %u of %u: one repeat of every set", round, repeats);
    return copy_runs(dst, built, OMPF_ROLE_REFERENCE, 1);
}

static int interleave_phase1(const ompf_plan_t *built, const settings_t *s, ompf_plan_t **out)
{
    ompf_plan_t *p;
    if (ompf_plan_create(&p))
        return OMPF_ENOMEM;
    ompf_plan_set_slots(p, s->slots);
    ompf_plan_comment(p, "ompfuse campaign: %zu events, %u counter slots", s->nevents, s->slots);
    ompf_plan_comment(p, "line format: <role> <repeat> <events> [key=value ...]");
    ompf_plan_comment(p, "slots: %u", s->slots);
    ompf_plan_comment(p, "reference sets run in %u rounds with the fusion and HEM runs between "
                         "them (docs/guide.md, ompfuse campaign, step 2)", s->repeats);
    int rc = reference_round(p, built, 1, s->repeats);
    if (rc == 0) {
        ompf_plan_comment(p, "group: lgl");
        ompf_plan_comment(p, "disjoint sets (first-fit) for LGL, CTC and random");
        rc = copy_runs(p, built, OMPF_ROLE_LGL, 0);
    }
    if (rc == 0) {
        ompf_plan_comment(p, "group: hem");
        rc = copy_runs(p, built, OMPF_ROLE_HEM, 0);
    }
    if (rc) {
        ompf_plan_destroy(p);
        return rc;
    }
    *out = p;
    return 0;
}

static int interleave_phase2(ompf_plan_t *full, const ompf_plan_t *phase1,
                             const ompf_plan_t *built, const ompf_plan_t *chain,
                             const settings_t *s, int by_correlation)
{
    int rc = ompf_plan_append(full, phase1);
    if (rc == 0 && s->repeats >= 2)
        rc = reference_round(full, built, 2, s->repeats);
    if (rc == 0) {
        ompf_plan_comment(full, "group: bc");
        ompf_plan_comment(full, "a chain: each set shares one event with its predecessors, %s",
                          by_correlation ? "the one most correlated (|Spearman| over the "
                                           "reference runs of round 1) with the new events"
                                         : "default anchor perf::TASK-CLOCK (no reference runs)");
        rc = copy_runs(full, chain, -1, 0);
    }
    if (rc == 0) {
        ompf_plan_comment(full, "group: hem");
        rc = copy_runs(full, built, OMPF_ROLE_HEM_DELTA, 0);
    }
    for (unsigned r = 3; rc == 0 && r <= s->repeats; r++)
        rc = reference_round(full, built, r, s->repeats);
    return rc;
}

/* Runs whose profile was there before this campaign made it (kept). */
static size_t kept_runs(const ompf_campaign_t *c)
{
    size_t k = 0;
    for (size_t i = 0; i < ompf_campaign_run_count(c); i++) {
        const ompf_campaign_run_t *r = ompf_campaign_run_get(c, i);
        k += r->status == OMPF_RUN_OK && r->resumed;
    }
    return k;
}

/* A failed execution that ends this benchmark (not one with runs that
 * failed, which goes on): the note, and c destroyed.  EPERM: interrupted
 * once running, or the directory is locked. */
static int stopped(result_t *res, const char *name, int rc, ompf_campaign_t *c,
                   const ompf_error_t *err)
{
    if (!rc || rc == OMPF_CAMPAIGN_INCOMPLETE)
        return 0;
    snprintf(res->note, sizeof res->note, "%.500s", err->msg);
    fprintf(stderr, "%s: %s: %s\n", PROG, name, err->msg);
    res->interrupted = rc == OMPF_EPERM && c;
    res->error = !res->interrupted;
    ompf_campaign_destroy(c);
    return 1;
}

/* One benchmark: plan, run, combine, clean, evaluate. */
static void do_bench_events(const char *name, char *const *argv, const char *schedule,
                     const settings_t *given, result_t *res, char ***chosen_out,
                     size_t *nchosen)
{
    double t0 = ompf_cmpi_now();
    settings_t local = *given; /* with --events auto: this benchmark's events */
    const settings_t *s = &local;
    char **chosen = NULL;
    snprintf(res->name, sizeof res->name, "%s", name);
    for (int t = 0; t < N_T; t++) {
        res->epd[t] = NAN;
        snprintf(res->problem[t], sizeof res->problem[t], "not produced");
    }
    snprintf(res->dir, sizeof res->dir, "%s/%s", s->out, name);
    fprintf(stderr, "\n== %s: %s", name, argv[0]);
    for (size_t i = 1; argv[i]; i++)
        fprintf(stderr, " %s", argv[i]);
    if (schedule)
        fprintf(stderr, "   (OMP_SCHEDULE=%s)", schedule);
    fprintf(stderr, "\n");

    char env_threads[64], env_sched[128], env_slots[64];
    const char *env[3];
    size_t nenv = 0;
    snprintf(env_threads, sizeof env_threads, "OMP_NUM_THREADS=%u", s->threads);
    env[nenv++] = env_threads;
    snprintf(env_slots, sizeof env_slots, "OMPFUSE_PMU_SLOTS=%u", s->slots);
    env[nenv++] = env_slots;
    if (schedule) {
        snprintf(env_sched, sizeof env_sched, "OMP_SCHEDULE=%s", schedule);
        env[nenv++] = env_sched;
    }
    if (s->auto_want) {
        /* the events of this program, chosen once (or read back on resume) */
        if (mkdir(res->dir, 0777) != 0 && errno != EEXIST) {
            snprintf(res->note, sizeof res->note, "cannot create %.400s: %s", res->dir,
                     strerror(errno));
            fprintf(stderr, "%s: %s\n", PROG, res->note);
            res->error = 1;
            return;
        }
        if (s->choose_events(PROG, argv, res->dir, s->auto_want, s->slots, env, nenv,
                             &s->exit_ok, &chosen, &local.nevents)) {
            snprintf(res->note, sizeof res->note, "--events auto could not choose events "
                                                  "(see above)");
            res->error = 1;
            return;
        }
        local.events = chosen;
        *chosen_out = chosen; /* freed by do_bench */
        *nchosen = local.nevents;
    }

    /* phase 1: fusion runs for LGL/CTC, references, HEM */
    ompf_plan_opts_t po;
    ompf_plan_opts_init(&po);
    po.slots = s->slots;
    po.for_lgl = 1;
    po.for_bc = 0;
    po.references = s->repeats;
    po.hem = 1;
    ompf_plan_t *built = NULL, *plan = NULL;
    ompf_plan_stats_t st;
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    if (ompf_plan_build((const char *const *)s->events, s->nevents, &po, &built, &st, &err) ||
        interleave_phase1(built, s, &plan)) {
        snprintf(res->note, sizeof res->note, "planning failed: %.480s",
                 err.msg[0] ? err.msg : "out of memory");
        res->step_failed = 1;
        fprintf(stderr, "%s: %s\n", PROG, res->note);
        ompf_plan_destroy(built);
        return;
    }
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/plan.txt", res->dir);
    ompf_campaign_t *c = NULL;
    int rc = 0;
    if (mkdir(res->dir, 0777) != 0 && errno != EEXIST)
        rc = ompf_error_set(&err, OMPF_EIO, "cannot create %s: %s", res->dir, strerror(errno));
    if (rc == 0)
        rc = ompf_plan_save(plan, path, &err);
    if (rc == 0)
        rc = execute(plan, argv, s, res->dir, env, nenv, 1, &c, &err);
    if (stopped(res, name, rc, c, &err)) {
        ompf_plan_destroy(plan);
        ompf_plan_destroy(built);
        return;
    }

    if (ompf_campaign_count_status(c, OMPF_RUN_OK) == 0) {
        /* nothing to plan BC from or to fuse: do not fail every run twice */
        res->runs_failed = ompf_campaign_count_status(c, OMPF_RUN_FAILED) +
                           ompf_campaign_count_status(c, OMPF_RUN_TIMEOUT);
        snprintf(res->note, sizeof res->note,
                 "every run failed (see %.400s/manifest.tsv): nothing to evaluate",
                 res->dir);
        fprintf(stderr, "%s: %s: %s\n", PROG, name, res->note);
        ompf_campaign_destroy(c);
        ompf_plan_destroy(plan);
        ompf_plan_destroy(built);
        return;
    }

    /* runs kept from an earlier campaign: phase 1's now; phase 2 keeps
     * phase 1's ok runs too, which are subtracted below */
    size_t kept1 = kept_runs(c), ok1 = ompf_campaign_count_status(c, OMPF_RUN_OK);
    res->runs_kept = kept1;

    /* phase 2: the BC chain, overlap chosen from the reference runs */
    const char *refs[256];
    size_t nref = ompf_cmpc_runs_of(c, OMPF_ROLE_REFERENCE, refs, 256);
    ompf_profile_t *pilot[256];
    size_t npilot = 0;
    for (size_t i = 0; i < nref; i++) {
        ompf_read_info_t info;
        if (ompf_profile_read(refs[i], &pilot[npilot], &info, NULL) == 0)
            npilot++;
    }
    double *corr = malloc(s->nevents * s->nevents * sizeof *corr);
    if (corr && npilot &&
        ompf_plan_correlation((const ompf_profile_t *const *)pilot, npilot,
                              (const char *const *)s->events, s->nevents, corr) == 0)
        po.corr = corr;
    for (size_t i = 0; i < npilot; i++)
        ompf_profile_destroy(pilot[i]);
    ompf_plan_t *full = NULL, *chain = NULL;
    ompf_plan_create(&full);
    ompf_plan_create(&chain);
    rc = full && chain ? ompf_plan_chain(chain, (const char *const *)s->events, s->nevents,
                                         &po, NULL, &err)
                       : OMPF_ENOMEM;
    if (rc == 0)
        rc = interleave_phase2(full, plan, built, chain, s, po.corr != NULL);
    ompf_plan_destroy(chain);
    if (rc && full) {
        /* BC cannot be planned: keep phase 1 as it was, report below */
        ompf_plan_destroy(full);
        full = NULL;
        if (ompf_plan_create(&full) == 0)
            ompf_plan_append(full, plan);
    }
    free(corr);
    if (rc) {
        fprintf(stderr, "%s: %s: BC planning failed: %s\n", PROG, name, err.msg);
        res->step_failed = 1;
    } else {
        ompf_campaign_destroy(c);
        c = NULL;
        rc = ompf_plan_save(full, path, &err);
        if (rc == 0)
            rc = execute(full, argv, s, res->dir, env, nenv, 0, &c, &err);
        if (stopped(res, name, rc, c, &err)) {
            ompf_plan_destroy(plan);
            ompf_plan_destroy(built);
            ompf_plan_destroy(full);
            return;
        }
    }
    if (!c) {
        snprintf(res->note, sizeof res->note, "%.500s", err.msg);
        ompf_plan_destroy(plan);
        ompf_plan_destroy(built);
        ompf_plan_destroy(full);
        return;
    }
    res->runs_ok = ompf_campaign_count_status(c, OMPF_RUN_OK);
    res->runs_failed = ompf_campaign_count_status(c, OMPF_RUN_FAILED) +
                       ompf_campaign_count_status(c, OMPF_RUN_TIMEOUT);
    if (full && c) {
        size_t k2 = kept_runs(c);
        res->runs_kept = kept1 + (k2 > ok1 ? k2 - ok1 : 0);
    }

    ompf_cmpc_fuse_and_evaluate(res, c, full, name);
    ompf_campaign_destroy(c);
    ompf_plan_destroy(plan);
    ompf_plan_destroy(built);
    ompf_plan_destroy(full);
    res->seconds = ompf_cmpi_now() - t0;
}

void ompf_cmpc_do_bench(const char *name, char *const *argv, const char *schedule,
                     const settings_t *s, result_t *res)
{
    char **chosen = NULL;
    size_t n = 0;
    do_bench_events(name, argv, schedule, s, res, &chosen, &n);
    for (size_t i = 0; i < n; i++)
        free(chosen[i]);
    free(chosen);
}

