/* sim_bench: simulate a campaign of a model (automatic plan), fuse with
 * every strategy, evaluate EPD against the simulated references and the
 * per-XU error against the truth; one table row per strategy / HEM mode.
 *
 *   sim_bench [--model SPEC] [--set KEY=VALUE]... [--seed N] [--slots N]
 *             [--ref-repeats R] [--threads N]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ompfuse/evaluate.h"
#include "ompfuse/fusion.h"
#include "ompfuse/simulate.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what, const ompf_error_t *err)
{
    fprintf(stderr, "sim_bench: %s: %s\n", what, err->msg);
    exit(1);
}

typedef struct row {
    char name[32];
    size_t runs;
    double t_make, epd, t_eval;
    size_t pairs;
    ompf_sim_score_t sc;
} row_t;

int main(int argc, char **argv)
{
    const char *spec = "builtin:high";
    uint64_t seed = 1;
    unsigned slots = 0, refrep = 3, threads = 0;
    const char *setk[64], *setv[64];
    int nset = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--model") && i + 1 < argc)
            spec = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--slots") && i + 1 < argc)
            slots = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ref-repeats") && i + 1 < argc)
            refrep = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--set") && i + 1 < argc && nset < 64) {
            char *kv = argv[++i], *eq = strchr(kv, '=');
            if (!eq) {
                fprintf(stderr, "sim_bench: --set %s: expected KEY=VALUE\n", kv);
                return 2;
            }
            *eq = '\0';
            setk[nset] = kv;
            setv[nset++] = eq + 1;
        } else {
            fprintf(stderr, "usage: sim_bench [--model SPEC] [--set KEY=VALUE]... [--seed N] "
                            "[--slots N] [--ref-repeats R] [--threads N]\n");
            return 2;
        }
    }
    ompf_error_t err = {0, ""};
    ompf_sim_model_t *m;
    if (ompf_sim_model_load(spec, &m, &err))
        die(spec, &err);
    for (int i = 0; i < nset; i++)
        if (ompf_sim_model_set(m, setk[i], setv[i], &err))
            die("--set", &err);
    if (!slots)
        slots = ompf_sim_model_slots(m);
    ompf_sim_plan_t *plan;
    if (ompf_sim_plan_auto(m, slots, refrep, 1, &plan, &err))
        die("plan", &err);
    double t0 = now();
    ompf_sim_output_t out;
    if (ompf_sim_generate(m, plan, seed, OMPF_SIM_TRUTH_NO_REFERENCES, &out, &err))
        die("simulate", &err);
    double t_sim = now() - t0;
    /* Group the runs. */
    const ompf_profile_t **lgl = calloc(out.n_runs, sizeof *lgl), **bc = calloc(out.n_runs, sizeof *bc);
    const ompf_profile_t **refs = calloc(out.n_runs, sizeof *refs);
    const ompf_profile_t *hem = NULL, *hemd = NULL;
    size_t nl = 0, nb = 0, nr = 0;
    for (size_t i = 0; i < out.n_runs; i++) {
        const ompf_sim_plan_line_t *ln = out.lines[i];
        if (ln->role == OMPF_SIM_REFERENCE)
            refs[nr++] = out.runs[i];
        else if (ln->role == OMPF_SIM_HEM)
            hem = out.runs[i];
        else if (ln->role == OMPF_SIM_HEM_DELTA)
            hemd = out.runs[i];
        else if (!strcmp(ln->group, "lgl"))
            lgl[nl++] = out.runs[i];
        else
            bc[nb++] = out.runs[i];
    }
    printf("model %s: %u XUs, %u events, %u counters, seed %" PRIu64 "; plan: %zu lgl, %zu bc, "
           "%zu reference runs (%u repeats), hem, hem-delta; simulated in %.2f s\n",
           ompf_sim_model_name(m), ompf_sim_model_xu_count(m), ompf_sim_model_event_count(m), slots,
           seed, nl, nb, nr, refrep, t_sim);
    fflush(stdout);
    ompf_eval_opts_t eo;
    ompf_eval_opts_default(&eo);
    eo.threads = threads;
    /* hem-delta leaves values missing: evaluate the pairs that can be. */
    eo.allow_partial = 1;
    ompf_eval_t *ev;
    t0 = now();
    if (ompf_eval_create(refs, NULL, nr, &eo, &ev, &err))
        die("references", &err);
    double t_ref = now() - t0;
    row_t rows[16];
    size_t nrow = 0;
    const char *strat[] = {"ctc", "lgl", "random", "bc", "bc-unlabeled"};
    ompf_profile_t *keep[16] = {0};
    for (size_t s = 0; s < 5; s++) {
        int st = ompf_fuse_strategy_parse(strat[s]);
        int is_bc = st == OMPF_FUSE_BC || st == OMPF_FUSE_BC_UNLABELED;
        ompf_fuse_opts_t fo;
        ompf_fuse_opts_init(&fo);
        fo.strategy = st;
        fo.seed = seed;
        row_t *r = &rows[nrow];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", strat[s]);
        r->runs = is_bc ? nb : nl;
        t0 = now();
        if (ompf_fuse(is_bc ? bc : lgl, NULL, r->runs, &fo, &keep[nrow], NULL, &err))
            die(strat[s], &err);
        r->t_make = now() - t0;
        nrow++;
    }
    /* HEM and the ideal (one run with a counter per event). */
    ompf_profile_t *ideal;
    if (ompf_sim_truth_extract(out.truth, 0, &ideal, &err))
        die("ideal", &err);
    const ompf_profile_t *extra[3] = {hem, hemd, ideal};
    const char *extra_name[3] = {"hem", "hem-delta", "ideal (all counters)"};
    for (size_t i = 0; i < 3; i++) {
        memset(&rows[nrow], 0, sizeof rows[nrow]);
        snprintf(rows[nrow].name, sizeof rows[nrow].name, "%s", extra_name[i]);
        rows[nrow].runs = 1;
        keep[nrow] = NULL;
        nrow++;
    }
    for (size_t i = 0; i < nrow; i++) {
        const ompf_profile_t *p = keep[i] ? keep[i] : extra[i - 5];
        row_t *r = &rows[i];
        ompf_eval_result_t *res;
        t0 = now();
        if (ompf_eval_target(ev, p, r->name, &res, &err))
            die(r->name, &err);
        r->t_eval = now() - t0;
        r->epd = res->epd;
        r->pairs = res->pairs_evaluated;
        ompf_eval_result_free(res);
        if (ompf_sim_score(p, out.truth, &r->sc, &err))
            die(r->name, &err);
    }
    printf("references: %zu pairs, read in %.2f s\n", ompf_eval_pair_count(ev), t_ref);
    printf("| %-20s | %4s | %8s | %8s | %6s | %7s | %10s | %10s | %8s |\n", "strategy", "runs",
           "fuse s", "EPD", "pairs", "eval s", "xu-err med", "xu-err p90", "missing");
    printf("|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", "----------------------", "------:", "---------:",
           "---------:", "-------:", "--------:", "-----------:", "-----------:", "---------:");
    for (size_t i = 0; i < nrow; i++)
        printf("| %-20s | %4zu | %8.3f | %8.3f | %6zu | %7.2f | %10.4f | %10.4f | %8" PRIu64 " |\n",
               rows[i].name, rows[i].runs, rows[i].t_make, rows[i].epd, rows[i].pairs,
               rows[i].t_eval, rows[i].sc.median, rows[i].sc.p90, rows[i].sc.missing);
    for (size_t i = 0; i < nrow; i++)
        ompf_profile_destroy(keep[i]);
    ompf_profile_destroy(ideal);
    ompf_eval_destroy(ev);
    free(lgl);
    free(bc);
    free(refs);
    ompf_sim_output_free(&out);
    ompf_sim_plan_destroy(plan);
    ompf_sim_model_destroy(m);
    return 0;
}
