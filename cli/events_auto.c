/* `--events auto[:N]` for plan and campaign: choose the events of one
 * program (libompfauto), or reuse the choice saved in DIR/events-auto.txt
 * so that a resumed campaign or a later plan uses the same set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "ompfuse/autoevents.h"
#include "ompfuse/uphold.h"

static int choose_or_load(const char *prog, char *const *argv, const char *dir,
                                unsigned want, const char *const *env, size_t nenv,
                                const ompf_exit_set_t *exit_ok, char ***events, size_t *n);

ompf_uphold_t *ompf_cli_uphold;

int ompf_cli_auto_want(const char *events)
{
    if (!strcmp(events, "auto"))
        return 4;
    if (strncmp(events, "auto:", 5))
        return 0;
    char *end;
    long n = strtol(events + 5, &end, 10);
    return *end || n < 2 || n > 16 ? -1 : (int)n;
}

/* Deals the events, best first, over the ceil(n / slots) first-fit sets
 * that LGL's planner makes of the list (slots events each, in list order),
 * so that the best ones (the deterministic uprobes) land in different runs
 * and every strategy has to bring them together: counted in one run, a
 * pair is the same for LGL and random, and tells nothing. */
static void deal(char **ev, size_t n, unsigned slots)
{
    size_t sets = slots ? (n + slots - 1) / slots : 1;
    char *tmp[64];
    size_t k = 0;
    if (n > 64 || sets < 2)
        return;
    for (size_t s = 0; s < sets; s++)
        for (size_t i = s; i < n; i += sets)
            tmp[k++] = ev[i];
    memcpy(ev, tmp, n * sizeof *ev);
}

int ompf_cli_auto_events(const char *prog, char *const *argv, const char *dir, unsigned want,
                         unsigned slots, const char *const *env, size_t nenv,
                         const ompf_exit_set_t *exit_ok, char ***events, size_t *n)
{
    int rc = choose_or_load(prog, argv, dir, want, env, nenv, exit_ok, events, n);
    if (rc == 0 && *n > slots) {
        deal(*events, *n, slots);
        fprintf(stderr, "%s: auto: in the order of the plan (the best spread over the %u-event "
                        "runs):", prog, slots);
        for (size_t i = 0; i < *n; i++)
            fprintf(stderr, "%s %s", i ? "," : "", (*events)[i]);
        fprintf(stderr, "\n");
    }
    return rc;
}

static int choose_or_load(const char *prog, char *const *argv, const char *dir,
                                unsigned want, const char *const *env, size_t nenv,
                                const ompf_exit_set_t *exit_ok, char ***events, size_t *n)
{
    char saved[4096], work[4096];
    snprintf(saved, sizeof saved, "%s/events-auto.txt", dir);
    snprintf(work, sizeof work, "%s/auto-pilot", dir);
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    if (access(saved, F_OK) == 0) {
        if (ompf_auto_load(saved, events, n, &err)) {
            fprintf(stderr, "%s: %s (remove it to choose again)\n", prog, err.msg);
            return -1;
        }
        fprintf(stderr, "%s: auto: using the %zu events chosen before (%s)\n", prog, *n, saved);
        return 0;
    }
    ompf_auto_opts_t o;
    ompf_auto_opts_init(&o);
    o.want = want;
    o.work_dir = work;
    o.env = env;
    o.n_env = nenv;
    if (exit_ok)
        o.exit_ok = *exit_ok;
    /* the pilots' uprobes held (`plan` has no holder of its own) */
    ompf_uphold_t *own = NULL;
    if (!ompf_cli_uphold && ompf_uphold_create(stderr, &own)) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return -1;
    }
    o.hold = own ? own : ompf_cli_uphold;
    ompf_auto_t *a;
    int sel = ompf_auto_select(argv, &o, &a, &err);
    ompf_uphold_destroy(own);
    if (sel) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        return -1;
    }
    ompf_auto_print(a, stderr);
    int rc = ompf_auto_save(a, saved, &err);
    if (rc == 0) {
        const char *names[64];
        size_t k = ompf_auto_chosen(a, names, 64);
        *events = calloc(k + 1, sizeof **events);
        for (size_t i = 0; *events && i < k; i++)
            (*events)[i] = strdup(names[i]);
        *n = *events ? k : 0;
        if (!*events)
            rc = -1;
        fprintf(stderr, "%s: auto: the choice is saved in %s\n", prog, saved);
    } else
        fprintf(stderr, "%s: %s\n", prog, err.msg);
    ompf_auto_destroy(a);
    return rc ? -1 : 0;
}
