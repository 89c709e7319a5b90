/* How many bytes `ompfuse simulate` would write, before it writes any (the
 * size check in cli/cmd_simulate.c).  The format compresses, so bytes per
 * value depend on the model: they are measured by serialising probe runs
 * (per role of the plan, one with one event and one with the most events
 * of its role) and a truth of one and of two runs to a temporary file, and
 * extrapolated linearly: runs in their number of events, the truth in its
 * number of runs.  A cheap upper bound
 * skips the probes when even it stays under the caller's limit. */
#include "ompfuse/simulate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ompfuse/file.h"

/* Generous bytes per XU of the format before compression: record, label
 * node, thread, times (fixed) and a value with its provenance (per event). */
#define BOUND_XU 96
#define BOUND_VALUE 24

/* Serialises p to a temporary file: its size in *bytes. */
static int size_of(const ompf_profile_t *p, uint64_t *bytes, ompf_error_t *err)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/ompfuse-sim-probe.%ld.ompf",
             dir && *dir ? dir : "/tmp", (long)getpid());
    int rc = ompf_profile_write(p, path, err);
    struct stat st;
    if (!rc && stat(path, &st) != 0)
        rc = ompf_error_set(err, OMPF_EIO, "%s: %s", path, strerror(errno));
    if (!rc)
        *bytes = (uint64_t)st.st_size;
    unlink(path);
    return rc ? -1 : 0;
}

/* Serialised size of run 0 with role and the first n of events. */
static int probe(ompf_sim_t *s, int role, const uint32_t *events, uint32_t n,
                 uint64_t *bytes, ompf_error_t *err)
{
    ompf_profile_t *p = NULL;
    if (ompf_sim_execute(s, 0, role, events, n, &p, NULL, err))
        return -1;
    int rc = size_of(p, bytes, err);
    ompf_profile_destroy(p);
    return rc;
}

/* Serialised size of a truth holding runs 0 and 0..1 (*one, *two): a truth
 * shares its labels and constructs between runs, so it is probed itself. */
static int probe_truth(ompf_sim_t *s, uint64_t *one, uint64_t *two, ompf_error_t *err)
{
    ompf_profile_t *truth = NULL;
    uint32_t ev0 = 0;
    if (ompf_sim_truth_create(s, &truth, err))
        return -1;
    int rc = 0;
    for (uint32_t r = 0; r < 2 && !rc; r++) {
        ompf_profile_t *p = NULL;
        char file[32];
        snprintf(file, sizeof file, "run-%03u.ompf", r + 1);
        rc = ompf_sim_execute(s, r, OMPF_SIM_RUN, &ev0, 1, &p, truth, err) ||
             ompf_sim_truth_set_file(truth, file) ||
             size_of(truth, r ? two : one, err);
        ompf_profile_destroy(p);
    }
    ompf_profile_destroy(truth);
    return rc ? -1 : 0;
}

int ompf_sim_estimate(const ompf_sim_model_t *m, const ompf_sim_plan_t *plan,
                      uint64_t seed, int truth_mode, uint64_t limit,
                      ompf_sim_estimate_t *out, ompf_error_t *err)
{
    memset(out, 0, sizeof *out);
    uint64_t X = ompf_sim_model_xu_count(m), E = ompf_sim_model_event_count(m);
    uint64_t bound = 0, truth_runs = 0;
    uint32_t most[OMPF_SIM_ROLE_COUNT] = {0};
    const ompf_sim_plan_line_t *widest[OMPF_SIM_ROLE_COUNT] = {0};
    for (size_t i = 0; i < ompf_sim_plan_count(plan); i++) {
        const ompf_sim_plan_line_t *ln = ompf_sim_plan_get(plan, i);
        bound += ln->repeat * X * (BOUND_XU + BOUND_VALUE * (uint64_t)ln->n_events);
        if (truth_mode == OMPF_SIM_TRUTH_ALL ||
            (truth_mode == OMPF_SIM_TRUTH_NO_REFERENCES && ln->role != OMPF_SIM_REFERENCE))
            truth_runs += ln->repeat;
        if (!widest[ln->role] || ln->n_events > most[ln->role]) {
            widest[ln->role] = ln;
            most[ln->role] = ln->n_events;
        }
    }
    out->files = ompf_sim_plan_runs(plan) + (truth_mode != OMPF_SIM_TRUTH_NONE);
    bound += truth_runs * X * (BOUND_XU + BOUND_VALUE * E);
    if (bound <= limit) {
        out->bytes = bound;
        out->bound_only = 1;
        return 0;
    }
    ompf_sim_t *s = NULL;
    if (ompf_sim_create(m, seed, &s, err))
        return -1;
    /* per role: bytes of a run with one event, and per further event
     * (a run has at least one event) */
    double one[OMPF_SIM_ROLE_COUNT] = {0}, per[OMPF_SIM_ROLE_COUNT] = {0};
    int rc = 0;
    for (int r = 0; r < OMPF_SIM_ROLE_COUNT && !rc; r++) {
        if (!widest[r] || !widest[r]->n_events)
            continue;
        const uint32_t *ev = widest[r]->events;
        uint32_t n = widest[r]->n_events;
        uint64_t b1 = 0, bn = 0;
        if (probe(s, r, ev, 1, &b1, err) || (n > 1 && probe(s, r, ev, n, &bn, err))) {
            rc = -1;
            break;
        }
        one[r] = (double)b1;
        per[r] = n > 1 ? ((double)bn - (double)b1) / (n - 1) : 0;
    }
    uint64_t t1 = 0, t2 = 0;
    if (!rc && truth_runs && probe_truth(s, &t1, &t2, err))
        rc = -1;
    ompf_sim_destroy(s);
    if (rc)
        return -1;
    double runs = 0;
    for (size_t i = 0; i < ompf_sim_plan_count(plan); i++) {
        const ompf_sim_plan_line_t *ln = ompf_sim_plan_get(plan, i);
        runs += ln->repeat * (one[ln->role] + per[ln->role] * (ln->n_events - 1.0));
    }
    out->run_bytes = (uint64_t)runs;
    if (truth_runs)
        out->truth_bytes = t1 + (t2 > t1 ? t2 - t1 : 0) * (truth_runs - 1);
    out->bytes = out->run_bytes + out->truth_bytes;
    return 0;
}
