/* sim_bench: simulate a campaign of a model (automatic plan), fuse with
 * every strategy, evaluate EPD against the simulated references and the
 * per-XU error against the truth; one table row per strategy / HEM mode
 * (as recorded and cleaned like `ompfuse clean`).
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
#include "ompfuse/hem.h"
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
    /* Simulate run by run (run_no = position, as ompf_sim_generate and
     * `ompfuse simulate` number them) to time the HEM runs. */
    double t0 = now(), t_hem[2] = {0, 0};
    ompf_sim_t *sim;
    ompf_sim_output_t out;
    memset(&out, 0, sizeof out);
    size_t n_runs = ompf_sim_plan_runs(plan);
    out.runs = calloc(n_runs, sizeof *out.runs);
    out.lines = calloc(n_runs, sizeof *out.lines);
    if (!out.runs || !out.lines) {
        fprintf(stderr, "sim_bench: out of memory\n");
        return 1;
    }
    if (ompf_sim_create(m, seed, &sim, &err) || ompf_sim_truth_create(sim, &out.truth, &err))
        die("simulate", &err);
    uint32_t hem_run[2] = {0, 0};
    for (size_t li = 0; li < ompf_sim_plan_count(plan); li++) {
        const ompf_sim_plan_line_t *ln = ompf_sim_plan_get(plan, li);
        for (uint32_t r = 0; r < ln->repeat; r++) {
            size_t k = out.n_runs;
            int h = ln->role == OMPF_SIM_HEM ? 0 : ln->role == OMPF_SIM_HEM_DELTA ? 1 : -1;
            double t1 = now();
            if (ompf_sim_execute(sim, (uint32_t)k, ln->role, ln->events, ln->n_events,
                                 &out.runs[k], ln->role == OMPF_SIM_REFERENCE ? NULL : out.truth,
                                 &err))
                die("simulate", &err);
            if (h >= 0) {
                t_hem[h] = now() - t1;
                hem_run[h] = (uint32_t)k;
            }
            out.lines[k] = ln;
            out.n_runs++;
        }
    }
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
    /* HEM as recorded, cleaned as `ompfuse clean` and the campaign do
     * (default options) on copies (the same run simulated again: runs are
     * deterministic), and the ideal (one run with a counter per event). */
    ompf_profile_t *cleaned[2] = {NULL, NULL};
    double t_clean[2] = {0, 0};
    ompf_clean_opts_t co;
    ompf_clean_opts_default(&co);
    for (int h = 0; h < 2; h++) {
        const ompf_sim_plan_line_t *ln = out.lines[hem_run[h]];
        if (ompf_sim_execute(sim, hem_run[h], ln->role, ln->events, ln->n_events, &cleaned[h],
                             NULL, &err))
            die("hem copy", &err);
        t0 = now();
        if (ompf_hem_clean(cleaned[h], &co, NULL, &err))
            die("clean", &err);
        t_clean[h] = now() - t0;
    }
    ompf_profile_t *ideal;
    if (ompf_sim_truth_extract(out.truth, 0, &ideal, &err))
        die("ideal", &err);
    const ompf_profile_t *extra[5] = {hem, hemd, cleaned[0], cleaned[1], ideal};
    const char *extra_name[5] = {"hem", "hem-delta", "hem-cleaned", "hem-delta-cleaned",
                                 "ideal (all counters)"};
    double extra_t[5] = {t_hem[0], t_hem[1], t_clean[0], t_clean[1], -1};
    for (size_t i = 0; i < 5; i++) {
        memset(&rows[nrow], 0, sizeof rows[nrow]);
        snprintf(rows[nrow].name, sizeof rows[nrow].name, "%s", extra_name[i]);
        rows[nrow].runs = 1;
        rows[nrow].t_make = extra_t[i];
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
    /* Markdown table: every column padded to its width, the separator
     * row as wide as the column, numbers right-aligned. */
    static const char *const head[9] = {"strategy", "runs", "make s", "EPD", "pairs",
                                        "eval s", "xu-err med", "xu-err p90", "missing"};
    static const int width[9] = {20, 4, 8, 9, 6, 7, 10, 10, 8};
    for (int c = 0; c < 9; c++)
        printf("| %*s ", c ? width[c] : -width[c], head[c]);
    printf("|\n");
    for (int c = 0; c < 9; c++) {
        putchar('|');
        for (int k = 0; k < width[c] + 2; k++)
            putchar(c && k == width[c] + 1 ? ':' : '-');
    }
    printf("|\n");
    for (size_t i = 0; i < nrow; i++) {
        const row_t *r = &rows[i];
        char mk[32];
        if (r->t_make < 0)
            snprintf(mk, sizeof mk, "-");
        else
            snprintf(mk, sizeof mk, "%.3f", r->t_make);
        printf("| %-*s | %*zu | %*s | %*.3f | %*zu | %*.2f | %*.4f | %*.4f | %*" PRIu64 " |\n",
               width[0], r->name, width[1], r->runs, width[2], mk, width[3], r->epd, width[4],
               r->pairs, width[5], r->t_eval, width[6], r->sc.median, width[7], r->sc.p90,
               width[8], r->sc.missing);
    }
    printf("make s: ompf_fuse for the strategies; simulating the multiplexed run for hem and "
           "hem-delta; ompf_hem_clean (k %u, sigma %g) for the cleaned rows\n",
           co.k, co.sigma);
    for (size_t i = 0; i < nrow; i++)
        ompf_profile_destroy(keep[i]);
    ompf_profile_destroy(cleaned[0]);
    ompf_profile_destroy(cleaned[1]);
    ompf_sim_destroy(sim);
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
