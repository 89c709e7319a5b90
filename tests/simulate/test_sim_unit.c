/* Simulator unit tests: models, plans, multiplexing against a brute-force
 * oracle, truth consistency, determinism, scoring. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ompfuse/file.h"
#include "ompfuse/simulate.h"
#include "sim_internal.h"

/* A small model: fast, also under ASan. */
static const char small_text[] =
    "name = small\nxus = 300\ntypes = 5\nthreads = 4\nevents = 14\npmu_slots = 4\n"
    "run_sigma = 0.2\nalt_share = 0.1\nmux_period_us = 50\n";

static ompf_sim_model_t *small_model(void)
{
    ompf_error_t err = {0, ""};
    ompf_sim_model_t *m = NULL;
    int rc = ompf_sim_model_parse(small_text, "small", &m, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    return m;
}

static void test_model_parse(void **state)
{
    (void)state;
    ompf_error_t err = {0, ""};
    ompf_sim_model_t *m = small_model();
    assert_int_equal(ompf_sim_model_event_count(m), 14);
    assert_int_equal(ompf_sim_model_xu_count(m), 300);
    char nm[80];
    ompf_sim_event_name(m, 0, nm, sizeof nm);
    assert_string_equal(nm, "sim::E00_cycles");
    ompf_sim_event_name(m, 3, nm, sizeof nm);
    assert_string_equal(nm, "sim::E03_l2_dca");
    assert_int_equal(ompf_sim_event_find(m, "sim::E02_l1_dcm"), 2);
    assert_int_equal(ompf_sim_event_find(m, "E02_l1_dcm"), 2);
    assert_int_equal(ompf_sim_event_find(m, "E02"), 2);
    assert_int_equal(ompf_sim_event_find(m, "ev13"), 13);
    assert_int_equal(ompf_sim_event_find(m, "e5"), 5);
    assert_int_equal(ompf_sim_event_find(m, "ev14"), -1);
    assert_int_equal(ompf_sim_event_find(m, "bogus"), -1);
    /* Overrides are checked; a failed one changes nothing. */
    assert_int_equal(ompf_sim_model_set(m, "xus", "-3", &err), OMPF_EINVAL);
    assert_non_null(strstr(err.msg, "xus"));
    assert_int_equal(ompf_sim_model_xu_count(m), 300);
    assert_int_equal(ompf_sim_model_set(m, "events", "20", &err), 0);
    assert_int_equal(ompf_sim_model_event_count(m), 20);
    ompf_sim_model_destroy(m);

    m = NULL;
    assert_int_equal(ompf_sim_model_parse("xus = 10\nfoo = 1\n", "f.txt", &m, &err), OMPF_EINVAL);
    assert_non_null(strstr(err.msg, "f.txt:2"));
    assert_non_null(strstr(err.msg, "foo"));
    assert_null(m);
    assert_int_equal(ompf_sim_model_parse("xus = ten\n", "f.txt", &m, &err), OMPF_EINVAL);
    assert_non_null(strstr(err.msg, "not a number"));
    assert_int_equal(ompf_sim_model_parse("just words\n", "f.txt", &m, &err), OMPF_EINVAL);
    assert_int_equal(ompf_sim_model_parse("types = 10\nxus = 5\n", "f.txt", &m, &err), OMPF_EINVAL);
    assert_int_equal(ompf_sim_model_load("builtin:nope", &m, &err), OMPF_ENOTFOUND);
    assert_int_equal(ompf_sim_model_load("/nonexistent/model.txt", &m, &err), OMPF_EIO);
    for (const char *const *n = ompf_sim_builtin_names(); *n; n++) {
        char spec[64];
        snprintf(spec, sizeof spec, "builtin:%s", *n);
        assert_int_equal(ompf_sim_model_load(spec, &m, &err), 0);
        assert_string_equal(ompf_sim_model_name(m), *n);
        assert_int_equal(ompf_sim_model_event_count(m), 33);
        ompf_sim_model_destroy(m);
    }
}

/* The parameters written out load back to the same model. */
static void test_model_roundtrip(void **state)
{
    (void)state;
    ompf_sim_model_t *m = small_model(), *m2 = NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(ompf_sim_model_write(m, f), 0);
    fclose(f);
    ompf_error_t err = {0, ""};
    assert_int_equal(ompf_sim_model_parse(buf, "written", &m2, &err), 0);
    assert_memory_equal(&m->p, &m2->p, sizeof m->p);
    free(buf);
    ompf_sim_model_destroy(m);
    ompf_sim_model_destroy(m2);
}

static void test_plan_parse(void **state)
{
    (void)state;
    ompf_sim_model_t *m = small_model();
    ompf_error_t err = {0, ""};
    ompf_sim_plan_t *p = NULL;
    const char *text = "# a plan\nrun 1 ev0,ev1,ev2,ev3\n# group: extra\n"
                       "reference 2 E00_cycles,sim::E05_br_msp  # trailing comment\n"
                       "hem 1 all\nhem-delta 3 all\nbc 1 ev0,ev4 period_us=10\n";
    assert_int_equal(ompf_sim_plan_parse(text, "p.txt", m, &p, &err), 0);
    assert_int_equal(ompf_sim_plan_count(p), 5);
    assert_int_equal(ompf_sim_plan_runs(p), 1 + 2 + 1 + 3 + 1);
    const ompf_sim_plan_line_t *l = ompf_sim_plan_get(p, 1);
    assert_int_equal(l->role, OMPF_SIM_REFERENCE);
    assert_int_equal(l->repeat, 2);
    assert_int_equal(l->n_events, 2);
    assert_int_equal(l->events[1], 5);
    /* Groups name fusion runs only; other roles are named by role. */
    assert_string_equal(l->group, "");
    assert_string_equal(ompf_sim_plan_get(p, 0)->group, "");
    assert_string_equal(ompf_sim_plan_get(p, 2)->group, "");
    assert_string_equal(ompf_sim_plan_get(p, 4)->group, "extra");
    assert_int_equal(ompf_sim_plan_get(p, 2)->n_events, 14);
    assert_int_equal(ompf_sim_plan_get(p, 3)->role, OMPF_SIM_HEM_DELTA);
    assert_int_equal(ompf_sim_plan_get(p, 4)->role, OMPF_SIM_RUN);
    ompf_sim_plan_destroy(p);

    struct {
        const char *text, *needle;
    } bad[] = {
        {"walk 1 ev0\n", "unknown role"},
        {"run 0 ev0\n", "repeat"},
        {"run x ev0\n", "repeat"},
        {"run 1 ev0,ev99\n", "ev99"},
        {"run 1 ev0,ev0\n", "twice"},
        {"run 1\n", "expected"},
        {"run 1 ev0,ev1,ev2,ev3,ev4\n", "counters"},
        {"run 1 ev0 stray\n", "stray"},
        {"# nothing\n", "no runs"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = NULL;
        int rc = ompf_sim_plan_parse(bad[i].text, "bad.txt", m, &p, &err);
        assert_true(rc < 0);
        assert_null(p);
        if (!strstr(err.msg, bad[i].needle))
            fail_msg("'%s': message '%s' lacks '%s'", bad[i].text, err.msg, bad[i].needle);
        assert_non_null(strstr(err.msg, "bad.txt"));
    }
    ompf_sim_model_destroy(m);
}

/* Automatic plans: LGL disjoint cover, BC chain overlapping, every pair in
 * a reference set; writing and parsing gives the same plan. */
static void test_plan_auto(void **state)
{
    (void)state;
    ompf_sim_model_t *m = small_model();
    ompf_error_t err = {0, ""};
    ompf_sim_plan_t *p = NULL, *q = NULL;
    assert_int_equal(ompf_sim_plan_auto(m, 4, 2, 1, &p, &err), 0);
    uint32_t E = 14;
    int lgl_cov[14] = {0}, bc_cov[14] = {0};
    char pair[14][14] = {{0}};
    int first_bc = 1;
    for (size_t i = 0; i < ompf_sim_plan_count(p); i++) {
        const ompf_sim_plan_line_t *l = ompf_sim_plan_get(p, i);
        if (l->role == OMPF_SIM_RUN || l->role == OMPF_SIM_REFERENCE)
            assert_true(l->n_events <= 4);
        if (!strcmp(l->group, "lgl"))
            for (uint32_t j = 0; j < l->n_events; j++)
                lgl_cov[l->events[j]]++;
        if (!strcmp(l->group, "bc")) {
            int overlap = 0;
            for (uint32_t j = 0; j < l->n_events; j++)
                overlap += bc_cov[l->events[j]] > 0;
            if (!first_bc)
                assert_true(overlap >= 1 && overlap < (int)l->n_events);
            first_bc = 0;
            for (uint32_t j = 0; j < l->n_events; j++)
                bc_cov[l->events[j]]++;
        }
        if (l->role == OMPF_SIM_REFERENCE) {
            assert_int_equal(l->repeat, 2);
            for (uint32_t a = 0; a < l->n_events; a++)
                for (uint32_t b = 0; b < l->n_events; b++)
                    pair[l->events[a]][l->events[b]] = 1;
        }
    }
    for (uint32_t e = 0; e < E; e++) {
        assert_int_equal(lgl_cov[e], 1);
        assert_true(bc_cov[e] >= 1);
        for (uint32_t f = 0; f < E; f++)
            if (e != f)
                assert_true(pair[e][f]);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(ompf_sim_plan_write(p, m, f), 0);
    fclose(f);
    assert_int_equal(ompf_sim_plan_parse(buf, "written", m, &q, &err), 0);
    assert_int_equal(ompf_sim_plan_count(q), ompf_sim_plan_count(p));
    for (size_t i = 0; i < ompf_sim_plan_count(p); i++) {
        const ompf_sim_plan_line_t *a = ompf_sim_plan_get(p, i), *b = ompf_sim_plan_get(q, i);
        assert_int_equal(a->role, b->role);
        assert_int_equal(a->repeat, b->repeat);
        assert_string_equal(a->group, b->group);
        assert_int_equal(a->n_events, b->n_events);
        assert_memory_equal(a->events, b->events, a->n_events * sizeof *a->events);
    }
    free(buf);
    ompf_sim_plan_destroy(p);
    ompf_sim_plan_destroy(q);
    assert_int_equal(ompf_sim_plan_auto(m, 5, 2, 1, &p, &err), OMPF_EINVAL); /* > pmu_slots */
    assert_int_equal(ompf_sim_plan_auto(m, 4, 1, 1, &p, &err), OMPF_EINVAL); /* 1 repeat */
    ompf_sim_model_destroy(m);
}

/* Oracle for the multiplexing schedule: step through time 1 ns at a time
 * and decide what runs from the definition (period k runs events
 * (k*step + j) mod E, j < slots, periods start at -phase). */
static int brute_running(uint32_t E, uint32_t slots, uint32_t step, double period, double phase,
                         uint32_t e, double t)
{
    uint64_t k = (uint64_t)floor((t + phase) / period);
    for (uint32_t j = 0; j < slots && j < E; j++)
        if ((k * step + j) % E == e)
            return 1;
    return 0;
}

static void test_mux_oracle(void **state)
{
    (void)state;
    const uint32_t cfg[][3] = {{7, 3, 1}, {6, 4, 2}, {5, 5, 1}, {9, 2, 3}};
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        uint32_t E = cfg[c][0], N = cfg[c][1], step = cfg[c][2];
        double period = 37, phase = 11;
        sim_mux_t x;
        assert_int_equal(sim_mux_init(&x, E, N, step, period, phase), 0);
        /* Three segments with different rates per event, reads at odd
         * times. */
        double rates[3][9];
        for (int s = 0; s < 3; s++)
            for (uint32_t e = 0; e < E; e++)
                rates[s][e] = 0.5 + s + 0.25 * e;
        sim_seg_t segs[3] = {{0, 100, rates[0]}, {100, 333, rates[1]}, {333, 1000, rates[2]}};
        double times[] = {0, 50, 100, 101, 250, 333, 640, 999, 1000};
        size_t nt = sizeof times / sizeof times[0];
        double raw[9 * 9], run[9 * 9];
        assert_int_equal(sim_mux_read(&x, segs, 3, times, nt, raw, run), 0);
        for (uint32_t e = 0; e < E; e++) {
            double acc = 0, racc = 0;
            size_t ti = 0;
            for (double t = 0; t <= 1000 && ti < nt; t += 1) {
                while (ti < nt && times[ti] == t) {
                    assert_float_equal(run[ti * E + e], racc, 1e-6);
                    assert_float_equal(raw[ti * E + e], floor(acc + 1e-6), 0);
                    ti++;
                }
                /* [t, t+1) lies in one segment and one period: all
                 * boundaries are integers. */
                if (brute_running(E, N, step, period, phase, e, t + 0.5)) {
                    int s = t < 100 ? 0 : t < 333 ? 1 : 2;
                    acc += rates[s][e];
                    racc += 1;
                }
            }
            assert_int_equal(ti, nt);
        }
        sim_mux_free(&x);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every run's profile is the projection of the truth on its events, with
 * the same XU ids, labels, types and times; per thread XUs + gap = total. */
static void test_truth_consistency(void **state)
{
    (void)state;
    ompf_sim_model_t *m = small_model();
    ompf_error_t err = {0, ""};
    ompf_sim_plan_t *p = NULL;
    assert_int_equal(ompf_sim_plan_parse("run 2 ev0,ev1,ev2,ev3\nreference 1 ev4,ev5\n"
                                         "run 1 ev13,ev7\nhem 1 all\nhem-delta 1 all\n",
                                         "p", m, &p, &err), 0);
    ompf_sim_output_t out;
    assert_int_equal(ompf_sim_generate(m, p, 7, OMPF_SIM_TRUTH_ALL, &out, &err), 0);
    assert_int_equal(out.n_runs, 6);
    assert_int_equal(ompf_sim_truth_run_count(out.truth), 6);
    assert_int_equal(ompf_xu_count(out.truth), 6 * 300);
    assert_int_equal(ompf_thread_count(out.truth), 6 * 4);
    for (size_t k = 0; k < out.n_runs; k++) {
        ompf_profile_t *r = out.runs[k], *t = NULL;
        const char *mode = ompf_meta_get(r, "mode");
        assert_string_equal(mode, ompf_sim_role_name(out.lines[k]->role));
        assert_string_equal(ompf_meta_get(r, "program"), "sim:small");
        assert_string_equal(ompf_meta_get(r, "team_size"), "4");
        assert_int_equal(ompf_xu_count(r), 300);
        assert_int_equal(ompf_construct_count(r), 5);
        assert_int_equal(ompf_thread_count(r), 4);
        assert_int_equal(ompf_sim_truth_extract(out.truth, k, &t, &err), 0);
        assert_int_equal(ompf_profile_run_id(t), ompf_profile_run_id(r));
        int hem = out.lines[k]->role >= OMPF_SIM_HEM;
        size_t E = ompf_event_count(r);
        for (size_t i = 0; i < 300; i++) {
            const ompf_xu_t *a = ompf_xu_get(r, i), *b = ompf_xu_get(t, i);
            assert_int_equal(a->id, b->id);
            assert_int_equal(a->type, b->type);
            assert_int_equal(a->start_ns, b->start_ns);
            assert_int_equal(a->end_ns, b->end_ns);
            assert_int_equal(a->thread, b->thread);
            assert_int_equal(ompf_label_compare(r, a->label, t, b->label), 0);
            if (hem)
                continue;
            for (size_t e = 0; e < E; e++) {
                int te = ompf_event_find(t, ompf_event_get(r, (uint32_t)e)->name);
                assert_true(te >= 0);
                assert_true(ompf_xu_values_const(r, i)[e] == ompf_xu_values_const(t, i)[te]);
            }
        }
        /* XUs + gap = total per thread and event (HEM: by construction of
         * the scaled total; exact runs: counts). */
        for (uint32_t th = 0; th < 4; th++) {
            const ompf_thread_t *tt = ompf_thread_get_const(r, th);
            for (size_t e = 0; e < E; e++) {
                double sum = tt->gap[e];
                for (size_t i = 0; i < 300; i++)
                    if (ompf_xu_get(r, i)->thread == th && !ompf_is_missing(ompf_xu_values_const(r, i)[e]))
                        sum += ompf_xu_values_const(r, i)[e];
                assert_float_equal(sum, tt->total[e], 1e-6 * (1 + tt->total[e]));
                if (!hem)
                    assert_true(tt->running_ns[e] == tt->enabled_ns[e]);
                else
                    assert_true(tt->running_ns[e] < tt->enabled_ns[e]);
            }
        }
        /* A run scored against the truth: exact unless multiplexed. */
        ompf_sim_score_t sc;
        assert_int_equal(ompf_sim_score(r, out.truth, &sc, &err), 0);
        assert_int_equal(sc.scored, 300);
        assert_int_equal(sc.unmatched, 0);
        if (!hem) {
            assert_true(sc.median == 0 && sc.p90 == 0 && sc.mean == 0);
        } else {
            assert_true(sc.median > 0.05);
        }
        if (out.lines[k]->role == OMPF_SIM_HEM_DELTA)
            assert_true(sc.missing > 0);
        ompf_profile_destroy(t);
    }
    /* Runs differ (order, values), the multiset of labels does not. */
    char **lab[2];
    for (int r = 0; r < 2; r++) {
        lab[r] = calloc(300, sizeof *lab[r]);
        for (size_t i = 0; i < 300; i++) {
            char buf[64];
            ompf_label_format(out.runs[r * 5], ompf_xu_get(out.runs[r * 5], i)->label, buf, sizeof buf);
            lab[r][i] = strdup(buf);
        }
        qsort(lab[r], 300, sizeof *lab[r], cmp_str);
    }
    for (size_t i = 0; i < 300; i++) {
        assert_string_equal(lab[0][i], lab[1][i]);
        if (i)
            assert_true(strcmp(lab[0][i - 1], lab[0][i]) < 0); /* unique */
    }
    for (size_t i = 0; i < 300; i++) {
        free(lab[0][i]);
        free(lab[1][i]);
    }
    free(lab[0]);
    free(lab[1]);
    int differ = 0;
    for (size_t i = 0; i < 300; i++)
        differ += ompf_xu_get(out.runs[0], i)->label != ompf_xu_get(out.runs[1], i)->label;
    assert_true(differ > 0);
    ompf_sim_output_free(&out);
    ompf_sim_plan_destroy(p);
    ompf_sim_model_destroy(m);
}

/* Without multiplexing (slots >= events), hem and hem-delta are exact. */
static void test_hem_unmultiplexed(void **state)
{
    (void)state;
    ompf_error_t err = {0, ""};
    ompf_sim_model_t *m = small_model();
    assert_int_equal(ompf_sim_model_set(m, "pmu_slots", "14", &err), 0);
    ompf_sim_plan_t *p = NULL;
    assert_int_equal(ompf_sim_plan_parse("hem 1 all\nhem-delta 1 all\n", "p", m, &p, &err), 0);
    ompf_sim_output_t out;
    assert_int_equal(ompf_sim_generate(m, p, 3, OMPF_SIM_TRUTH_ALL, &out, &err), 0);
    for (size_t k = 0; k < 2; k++) {
        ompf_sim_score_t sc;
        assert_int_equal(ompf_sim_score(out.runs[k], out.truth, &sc, &err), 0);
        /* Raw counts are floored at reads: differences of at most 1. */
        assert_true(sc.p90 < 1e-6);
        assert_int_equal(sc.missing, 0);
    }
    ompf_sim_output_free(&out);
    ompf_sim_plan_destroy(p);
    ompf_sim_model_destroy(m);
}

/* Same model, plan, seed: identical profiles; another seed: different. */
static void test_determinism(void **state)
{
    (void)state;
    ompf_error_t err = {0, ""};
    ompf_sim_model_t *m = small_model();
    ompf_sim_plan_t *p = NULL;
    assert_int_equal(ompf_sim_plan_parse("run 1 ev0,ev1\nhem 1 all\n", "p", m, &p, &err), 0);
    ompf_sim_output_t a, b, c;
    assert_int_equal(ompf_sim_generate(m, p, 11, OMPF_SIM_TRUTH_ALL, &a, &err), 0);
    assert_int_equal(ompf_sim_generate(m, p, 11, OMPF_SIM_TRUTH_ALL, &b, &err), 0);
    assert_int_equal(ompf_sim_generate(m, p, 12, OMPF_SIM_TRUTH_ALL, &c, &err), 0);
    for (size_t k = 0; k < 2; k++) {
        if (ompf_profile_compare(a.runs[k], b.runs[k], &err))
            fail_msg("run %zu differs with the same seed: %s", k, err.msg);
        assert_true(ompf_profile_compare(a.runs[k], c.runs[k], &err) != 0);
    }
    assert_int_equal(ompf_profile_compare(a.truth, b.truth, &err), 0);
    ompf_sim_output_free(&a);
    ompf_sim_output_free(&b);
    ompf_sim_output_free(&c);
    ompf_sim_plan_destroy(p);
    ompf_sim_model_destroy(m);
}

/* The truth survives a write/read round trip and can still score. */
static void test_truth_file(void **state)
{
    (void)state;
    ompf_error_t err = {0, ""};
    ompf_sim_model_t *m = small_model();
    ompf_sim_plan_t *p = NULL;
    assert_int_equal(ompf_sim_plan_parse("run 1 ev0,ev1\nrun 1 ev2\n", "p", m, &p, &err), 0);
    ompf_sim_output_t o;
    assert_int_equal(ompf_sim_generate(m, p, 5, OMPF_SIM_TRUTH_ALL, &o, &err), 0);
    char path[] = "sim_truth_roundtrip.ompf";
    assert_int_equal(ompf_profile_write(o.truth, path, &err), 0);
    ompf_profile_t *t = NULL;
    assert_int_equal(ompf_profile_read(path, &t, NULL, &err), 0);
    ompf_sim_score_t sc;
    assert_int_equal(ompf_sim_score(o.runs[1], t, &sc, &err), 0);
    assert_int_equal(sc.scored, 300);
    assert_true(sc.median == 0);
    /* A profile of another simulation is refused. */
    ompf_sim_output_t o2;
    assert_int_equal(ompf_sim_generate(m, p, 6, OMPF_SIM_TRUTH_NONE, &o2, &err), 0);
    assert_int_equal(ompf_sim_score(o2.runs[0], t, &sc, &err), OMPF_ENOTFOUND);
    assert_non_null(strstr(err.msg, "not in the truth"));
    assert_int_equal(ompf_sim_score(o2.runs[0], o2.runs[1], &sc, &err), OMPF_EINVAL);
    remove(path);
    ompf_profile_destroy(t);
    ompf_sim_output_free(&o);
    ompf_sim_output_free(&o2);
    ompf_sim_plan_destroy(p);
    ompf_sim_model_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_parse),     cmocka_unit_test(test_model_roundtrip),
        cmocka_unit_test(test_plan_parse),      cmocka_unit_test(test_plan_auto),
        cmocka_unit_test(test_mux_oracle),      cmocka_unit_test(test_truth_consistency),
        cmocka_unit_test(test_hem_unmultiplexed), cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_truth_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
