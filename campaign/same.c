/* Whether the runs already in a campaign's directory belong to this
 * campaign.  `ompfuse run` keeps every complete profile it finds there
 * (the resume rule, manifest.c); a profile made under another plan or
 * another OpenMP environment would then be fused and evaluated as a run
 * of this one, and nothing would say so.  What the earlier runs were
 * made with is in the directory: the plan snapshot DIR/plan.txt
 * (cli/cmd_run.c) and DIR/run.env, the OpenMP environment they got. */
#include "campaign_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ompfuse/plan.h"

extern char **environ;

int ompf_campaign_has_profiles(const ompf_campaign_t *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (access(c->runs[i].profile, F_OK) == 0)
            return 1;
    return 0;
}

/* ---- the plan ------------------------------------------------------------ */

static const ompf_campaign_run_t *run_named(const ompf_campaign_t *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->runs[i].name, name))
            return &c->runs[i];
    return NULL;
}

int ompf_campaign_check_plan(const ompf_campaign_t *c, ompf_error_t *err)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/plan.txt", c->dir);
    if (access(path, F_OK) != 0)
        return 0; /* a new directory, or one of an earlier ompfuse */
    ompf_plan_t *old = NULL;
    ompf_error_t e;
    memset(&e, 0, sizeof e);
    if (ompf_plan_load(path, &old, &e) != 0)
        return ompf_error_set(err, OMPF_EFORMAT,
                              "%s, the plan of the runs in %s, cannot be read (%s); "
                              "remove %s or choose another --out",
                              path, c->dir, e.msg, c->dir);
    int rc = 0;
    for (size_t l = 0; l < ompf_plan_count(old) && !rc; l++) {
        const ompf_plan_run_t *pr = ompf_plan_get(old, l);
        size_t el = 1;
        for (size_t k = 0; k < pr->n_events; k++)
            el += strlen(pr->events[k]) + 1;
        char *events = malloc(el);
        if (!events) {
            rc = ompf_error_set(err, OMPF_ENOMEM, "out of memory");
            break;
        }
        size_t o = 0;
        events[0] = 0;
        for (size_t k = 0; k < pr->n_events; k++)
            o += (size_t)snprintf(events + o, el - o, "%s%s", k ? "," : "", pr->events[k]);
        for (uint32_t r = 1; r <= pr->repeat && !rc; r++) {
            char name[128], prof[PATH_MAX + 160];
            snprintf(name, sizeof name, "%s-%zu-r%u", ompf_plan_role_name(pr->role), l + 1, r);
            snprintf(prof, sizeof prof, "%s/%s.ompf", c->dir, name);
            if (access(prof, F_OK) != 0)
                continue; /* not run: nothing to mix up */
            const ompf_campaign_run_t *now = run_named(c, name);
            if (now && !strcmp(now->events, events))
                continue;
            char why[PATH_MAX + 1300];
            if (now)
                snprintf(why, sizeof why, "%s counted %.300s; this plan's run %s counts %.300s",
                         prof, events, name, now->events);
            else
                snprintf(why, sizeof why, "%s is run %s of that plan (%.300s), which this plan "
                         "does not have", prof, name, events);
            rc = ompf_error_set(err, OMPF_EMISMATCH,
                                "%s holds the runs of another plan (%s): %s.  Keeping them "
                                "would mix two campaigns: choose another --out, remove %s, "
                                "or continue that campaign with 'ompfuse run --resume %s'",
                                c->dir, path, why, c->dir, c->dir);
        }
        free(events);
    }
    ompf_plan_destroy(old);
    return rc;
}

/* ---- the OpenMP environment -------------------------------------------- */

/* The OpenMP environment a run gets (child.c: this process's environment
 * with the --env settings applied in order), as ompf_omp_env gives it. */
static char *child_omp_env(const ompf_campaign_t *c)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **v = malloc((n + c->o.n_env + 1) * sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n + c->o.n_env; i++) {
        char *kv = i < n ? environ[i] : (char *)c->o.env[i - n];
        const char *eq = strchr(kv, '=');
        if (!eq)
            continue;
        size_t kl = (size_t)(eq - kv) + 1;
        int later = 0; /* set again by a --env after it: that one wins */
        for (size_t j = i < n ? 0 : i - n + 1; j < c->o.n_env && !later; j++)
            later = !strncmp(c->o.env[j], kv, kl);
        if (!later)
            v[k++] = kv;
    }
    v[k] = NULL;
    size_t need = ompf_omp_env(v, NULL, 0);
    char *s = malloc(need + 1);
    if (s)
        ompf_omp_env(v, s, need + 1);
    free(v);
    return s;
}

int ompf_campaign_check_env(const ompf_campaign_t *c, ompf_error_t *err)
{
    char path[PATH_MAX + 16], tmp[PATH_MAX + 48];
    snprintf(path, sizeof path, "%s/run.env", c->dir);
    char *now = child_omp_env(c);
    if (!now)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    /* the whole file, less the newline written after it */
    char *then = NULL;
    size_t cap = 0;
    FILE *f = fopen(path, "r");
    int had = f != NULL;
    if (f) {
        ssize_t got = getdelim(&then, &cap, '\0', f);
        if (got > 0 && then[got - 1] == '\n')
            then[got - 1] = 0;
        fclose(f);
    }
    if (!then && !(then = calloc(1, 1))) {
        free(now);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    int rc = 0;
    if (had && strcmp(now, then) && ompf_campaign_has_profiles(c)) {
        char diff[2048];
        ompf_omp_env_diff(now, then, "now", "then", diff, sizeof diff);
        rc = ompf_error_set(err, OMPF_EMISMATCH,
                            "the runs in %s were made in another OpenMP environment "
                            "(%s): %s.  Runs of different environments must not be "
                            "fused: set it as it was (%s), choose another --out, or "
                            "remove %s",
                            c->dir, path, diff, path, c->dir);
    } else if (!had || strcmp(now, then)) {
        /* the first runs here (or none kept): this environment is theirs */
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
        f = fopen(tmp, "w");
        int bad = !f || fprintf(f, "%s\n", now) < 0;
        if (f && fclose(f) != 0)
            bad = 1;
        if (bad || rename(tmp, path) != 0) {
            rc = ompf_error_set(err, OMPF_EIO, "cannot write %s: %s", path,
                                strerror(errno));
            unlink(tmp);
        }
    }
    free(now);
    free(then);
    return rc;
}
