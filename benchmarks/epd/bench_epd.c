/*
 * EPD benchmark: one target against reference runs, all in memory.
 *   bench_epd [--xus N] [--events E] [--repeats R] [--jobs T] [--bins B]
 *             [--dump FILE]
 * Defaults: 10^5 XUs, 33 events (528 pairs), 3 repeats, every event counted
 * in every reference, online CPUs.  Values are synthetic and correlated:
 * per XU three latent factors (size, memory, branchiness) and a type; each
 * event is a log-linear mix of them with its own noise.
 *
 * Prints the wall time of calibration (references only) and of the target
 * evaluation, then times every EMD of the evaluation again on one thread
 * (histograms rebuilt with the same bounds) for a per-EMD figure.  --dump
 * writes those histogram pairs in emd_dump's format for bench_pot.py, which
 * times POT's ot.emd2 on exactly the same instances and compares values.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ompfuse/evaluate.h"

static uint64_t rs;
static double unif(void)
{
    rs += 0x9e3779b97f4a7c15ull;
    uint64_t z = rs;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void)
{
    return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif());
}
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Event e's loadings on the latent factors: fixed for the benchmark. */
static double load[64][3], scale[64], noise[64];

static ompf_profile_t *make(size_t nxu, int nev, uint64_t seed, double perturb)
{
    ompf_profile_t *p;
    if (ompf_profile_create(&p))
        exit(1);
    ompf_meta_set(p, "program", "bench-epd");
    ompf_meta_set(p, "mode", "reference");
    for (int e = 0; e < nev; e++) {
        char name[32];
        snprintf(name, sizeof name, "bench::E%02d", e);
        ompf_event_t ev = {.name = name, .status = OMPF_EV_COUNTED,
                           .source = -1};
        ompf_event_add(p, &ev, NULL);
    }
    for (int t = 0; t < 4; t++) {
        ompf_construct_t c = {.module = "bench", .build_id = "00",
                              .offset = 0x100u * (unsigned)(t + 1),
                              .kind = OMPF_CK_TASK};
        ompf_construct_add(p, &c, NULL);
    }
    ompf_xu_reserve(p, nxu);
    rs = seed;
    double *v = malloc((size_t)nev * sizeof *v);
    for (size_t i = 0; i < nxu; i++) {
        int type = (int)(unif() * 4);
        double z[3] = {gauss() + type * 0.7, gauss(), gauss()};
        for (int e = 0; e < nev; e++) {
            double l = load[e][0] * z[0] + load[e][1] * z[1] +
                       load[e][2] * z[2] + noise[e] * gauss();
            v[e] = floor(scale[e] * exp(0.6 * l) * (1 + perturb * gauss()));
            if (v[e] < 0)
                v[e] = 0;
        }
        ompf_xu_t xu = {.id = i + 1, .type = (uint32_t)type, .parts = 1,
                        .cpu = -1, .core = -1, .numa = -1};
        if (ompf_xu_add(p, &xu, v))
            exit(1);
    }
    free(v);
    return p;
}

static void dump_pair(FILE *df, size_t m, const int64_t *a, const double *pa,
                      size_t n, const int64_t *b, const double *pb, double v)
{
    fprintf(df, "emd %zu %zu", m, n);
    for (size_t k = 0; k < m; k++)
        fprintf(df, " %" PRId64, a[k]);
    for (size_t k = 0; k < n; k++)
        fprintf(df, " %" PRId64, b[k]);
    for (size_t k = 0; k < 2 * m; k++)
        fprintf(df, " %.17g", pa[k]);
    for (size_t k = 0; k < 2 * n; k++)
        fprintf(df, " %.17g", pb[k]);
    fprintf(df, " %.17g\n", v);
}

/* --dense N: 100 random N x N histogram pairs with every bin non-empty,
 * the worst case for the solver (N = 144 is a full 12 x 12 histogram). */
static int dense(size_t nb, FILE *df)
{
    int64_t *a = malloc(nb * sizeof *a), *b = malloc(nb * sizeof *b);
    double *pa = malloc(2 * nb * sizeof *pa), *pb = malloc(2 * nb * sizeof *pb);
    ompf_emd_ws_t *ws;
    ompf_emd_ws_create(&ws);
    double t = 0;
    rs = 7;
    for (int c = 0; c < 100; c++) {
        for (size_t i = 0; i < nb; i++) {
            a[i] = 1 + (int64_t)(unif() * 1000);
            b[i] = 1 + (int64_t)(unif() * 1000);
            pa[2 * i] = unif() * 12;
            pa[2 * i + 1] = unif() * 12;
            pb[2 * i] = pa[2 * i] + unif() - 0.5;
            pb[2 * i + 1] = pa[2 * i + 1] + unif() - 0.5;
        }
        double v, t0 = thread_cpu();
        if (ompf_emd_2d(ws, nb, a, pa, nb, b, pb, &v, NULL))
            return 1;
        t += thread_cpu() - t0;
        if (df)
            dump_pair(df, nb, a, pa, nb, b, pb, v);
    }
    printf("dense %zu x %zu: %.1f us CPU per EMD (100 pairs)\n", nb, nb,
           1e6 * t / 100);
    ompf_emd_ws_destroy(ws);
    free(a);
    free(b);
    free(pa);
    free(pb);
    return 0;
}

int main(int argc, char **argv)
{
    size_t dense_n = 0;
    size_t nxu = 100000;
    int nev = 33, nrep = 3;
    unsigned jobs = 0, bins = 10;
    int per_type = 0;
    const char *dump = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--xus") && i + 1 < argc)
            nxu = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--events") && i + 1 < argc)
            nev = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            nrep = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
            jobs = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bins") && i + 1 < argc)
            bins = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--per-type"))
            per_type = 1;
        else if (!strcmp(argv[i], "--dump") && i + 1 < argc)
            dump = argv[++i];
        else if (!strcmp(argv[i], "--dense") && i + 1 < argc)
            dense_n = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_epd [--xus N] [--events E] "
                            "[--repeats R] [--jobs T] [--bins B] [--per-type] "
                            "[--dump FILE]\n"
                            "       bench_epd --dense N [--dump FILE]\n");
            return 2;
        }
    }
    if (dense_n) {
        FILE *df = dump ? fopen(dump, "w") : NULL;
        if (dump && !df) {
            perror(dump);
            return 1;
        }
        int rc = dense(dense_n, df);
        if (df)
            fclose(df);
        return rc;
    }
    if (nev < 2 || nev > 64 || nrep < 2 || nxu < 2) {
        fprintf(stderr, "bench_epd: need 2..64 events, >= 2 repeats, >= 2 XUs\n");
        return 2;
    }
    rs = 42;
    for (int e = 0; e < nev; e++) {
        for (int k = 0; k < 3; k++)
            load[e][k] = gauss();
        scale[e] = pow(10, 2 + 4 * unif());
        noise[e] = 0.1 + 0.5 * unif();
    }
    double t0 = now();
    ompf_profile_t **refs = calloc((size_t)nrep, sizeof *refs);
    for (int r = 0; r < nrep; r++)
        refs[r] = make(nxu, nev, 1000 + (uint64_t)r, 0);
    ompf_profile_t *target = make(nxu, nev, 77, 0.05);
    double tgen = now() - t0;

    ompf_eval_opts_t o;
    ompf_eval_opts_default(&o);
    o.threads = jobs;
    o.bins = bins;
    o.per_type = per_type;
    ompf_eval_t *ev;
    ompf_error_t err = {0};
    double w0 = now(), c0 = cpu_now();
    if (ompf_eval_create((const ompf_profile_t *const *)refs, NULL,
                         (size_t)nrep, &o, &ev, &err)) {
        fprintf(stderr, "bench_epd: %s\n", err.msg);
        return 1;
    }
    double w1 = now(), c1 = cpu_now();
    ompf_eval_result_t *res;
    if (ompf_eval_target(ev, target, "target", &res, &err)) {
        fprintf(stderr, "bench_epd: %s\n", err.msg);
        return 1;
    }
    double w2 = now(), c2 = cpu_now();
    size_t np = ompf_eval_pair_count(ev);
    size_t nemd = np * ((size_t)nrep * (nrep - 1) / 2 + (size_t)nrep);
    printf("profiles: %d references + 1 target, %zu XUs, %d events, %zu pairs, "
           "%d repeats (generated in %.2f s)\n",
           nrep, nxu, nev, np, nrep, tgen);
    if (jobs)
        printf("threads: %u\n", jobs);
    else
        printf("threads: online CPUs\n");
    printf("calibration (references):   wall %7.3f s  cpu %7.3f s\n", w1 - w0,
           c1 - c0);
    printf("target evaluation:          wall %7.3f s  cpu %7.3f s\n", w2 - w1,
           c2 - c1);
    printf("whole evaluation:           wall %7.3f s  cpu %7.3f s  (%zu EMDs)  "
           "EPD %.4f%s\n",
           w2 - w0, c2 - c0, nemd, res->epd, per_type ? "  (per type)" : "");
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    /* value data: every profile's values, 8 bytes each */
    double value_mb = (double)(nrep + 1) * (double)nxu * nev * 8 / 1048576.0;
    printf("peak RSS:                   %ld MB (profiles generated in memory "
           "included) = %.2f x the value data (%.0f MB); target <= 2 x\n",
           ru.ru_maxrss / 1024, (double)ru.ru_maxrss / 1024 / value_mb,
           value_mb);
    /* Issue 20's targets, for 33 events x 3 repeats x 10^5 XUs. */
    printf("target (33 events, 3 repeats, 1e5 XUs): whole evaluation <= %.1f s "
           "wall on 2 idle cores; here %.3f s wall, %.3f s CPU\n",
           per_type ? 1.5 : 1.0, w2 - w0, c2 - c0);

    /* Per-EMD time on one thread over the same histogram pairs. */
    FILE *df = dump ? fopen(dump, "w") : NULL;
    if (dump && !df) {
        perror(dump);
        return 1;
    }
    ompf_emd_ws_t *ws;
    ompf_emd_ws_create(&ws);
    ompf_hist2d_t *h = calloc((size_t)nrep + 1, sizeof *h);
    double *va = malloc(nxu * sizeof *va), *vb = malloc(nxu * sizeof *vb);
    double temd = 0, maxdiff = 0;
    size_t count = 0, bins_total = 0;
    for (size_t i = 0; i < np; i++) {
        ompf_eval_pair_info_t in;
        ompf_eval_pair_info(ev, i, &in);
        for (int r = 0; r <= nrep; r++) {
            const ompf_profile_t *p = r < nrep ? refs[r] : target;
            int ia = ompf_event_find(p, ompf_eval_event_name(ev, in.ev[0]));
            int ib = ompf_event_find(p, ompf_eval_event_name(ev, in.ev[1]));
            for (size_t x = 0; x < nxu; x++) {
                const double *row = ompf_xu_values_const(p, x);
                va[x] = row[ia];
                vb[x] = row[ib];
            }
            ompf_hist2d_build(in.grid, va, vb, nxu, NULL, 0, &h[r]);
        }
        /* the evaluation's EMDs: repeat pairs, then target vs each repeat */
        for (int r = 0; r < nrep; r++)
            for (int s = r + 1; s <= nrep; s++) {
                const ompf_hist2d_t *x = s == nrep ? &h[nrep] : &h[r];
                const ompf_hist2d_t *y = s == nrep ? &h[r] : &h[s];
                double v, a = thread_cpu();
                if (ompf_emd_2d(ws, x->nbins, x->count, x->pos, y->nbins,
                                y->count, y->pos, &v, NULL))
                    return 1;
                temd += thread_cpu() - a;
                count++;
                bins_total += x->nbins + y->nbins;
                if (s == nrep) {
                    double d = fabs(v - res->pairs[i].uncalibrated[r]);
                    if (d > maxdiff)
                        maxdiff = d;
                }
                if (df)
                    dump_pair(df, x->nbins, x->count, x->pos, y->nbins,
                              y->count, y->pos, v);
            }
        for (int r = 0; r <= nrep; r++)
            ompf_hist2d_free(&h[r]);
    }
    if (df)
        fclose(df);
    printf("per EMD (1 thread, CPU):    %7.1f us  (%zu EMDs, %.1f non-empty "
           "bins per histogram on average)\n",
           1e6 * temd / (double)count, count,
           (double)bins_total / (2.0 * (double)count));
    printf("consistency: max |EMD - evaluation's uncalibrated TMD| = %.3g\n",
           maxdiff);
    if (dump)
        printf("histograms written to %s; time POT on them with: /usr/bin/python3 "
               "benchmarks/epd/bench_pot.py %s\n",
               dump, dump);
    ompf_emd_ws_destroy(ws);
    free(h);
    free(va);
    free(vb);
    ompf_eval_result_free(res);
    ompf_eval_destroy(ev);
    for (int r = 0; r < nrep; r++)
        ompf_profile_destroy(refs[r]);
    free(refs);
    ompf_profile_destroy(target);
    return 0;
}
