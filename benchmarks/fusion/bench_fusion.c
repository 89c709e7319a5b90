/* Fusion throughput (issue #3): LGL and CTC on R runs x N XUs, BC and
 * BC-unlabeled on S+1 runs x M XUs per type with 3 overlapping events.
 * Each measurement runs in its own child process: it reads the input files
 * (timed: the reference), fuses (timed), and reports XUs per second, the
 * ratio fusion time / read time and its peak RSS.  Times are CPU seconds
 * of the child (single-threaded), so other load on the machine does not
 * distort the ratio.
 *
 * usage: bench_fusion [--quick] [--runs R] [--xus N] [--bc-steps S]
 *                     [--bc-xus M] [--order shuffled|alike] [--keep]
 *                     [--generate-only] DIR
 *   defaults: 10 runs x 1e6 XUs (LGL, CTC); 8 BC steps x 1e5 XUs per type,
 *   2 types; --quick divides the sizes by 10.  DIR receives the inputs
 *   (about 40 bytes per XU per run) and is emptied unless --keep.
 *   --generate-only writes the inputs (lgl*.ompf, bc*.ompf; deterministic:
 *   the same sizes give the same files) and measures nothing; the test
 *   fusion_outputs_* fuses them with the CLI.
 *   --order: the order of each run's XU and label records.  shuffled (the
 *   default, the worst case): a random permutation per run, so no two runs
 *   agree.  alike: the order of a real program's runs, which mostly agree
 *   (each thread's records come in order, interleaved differently in each
 *   run): the natural order cut into blocks of 1-512 records, each block
 *   swapped with the next one with probability 1/2.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ompfuse/file.h"
#include "ompfuse/fusion.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of this (single-threaded) process: robust to other load on the
 * machine, which wall time is not. */
static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rs = 12345;
static uint64_t rnd(void)
{
    uint64_t z = (rs += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double unif(void) { return (double)(rnd() >> 11) * 0x1.0p-53; }

static void die(const char *what, const ompf_error_t *err)
{
    fprintf(stderr, "bench_fusion: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

/* One run: n XUs of n_types types (loop-chunk-like labels 0.region.addr.
 * chunk), record order shuffled, start times jittered, values = the XU's
 * base value with 5% noise (events 0..n_ev-1 named by names). */
static int order_alike; /* --order alike */

static void make_run(const char *path, uint64_t run_id, size_t n, int n_types,
                     const char **names, int n_ev, const double *base,
                     uint64_t seed)
{
    ompf_profile_t *p;
    ompf_error_t err;
    if (ompf_profile_create(&p))
        die("create", NULL);
    ompf_meta_set(p, "program", "bench");
    ompf_meta_set(p, "argv", "bench");
    ompf_meta_set(p, "team_size", "2");
    ompf_meta_set(p, "mode", OMPF_MODE_RUN);
    ompf_profile_set_run_id(p, run_id);
    for (int e = 0; e < n_ev; e++) {
        ompf_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.name = names[e];
        ev.source = -1;
        if (ompf_event_add(p, &ev, NULL))
            die("event", NULL);
    }
    for (int t = 0; t < n_types; t++) {
        ompf_construct_t c;
        memset(&c, 0, sizeof c);
        char nm[32];
        snprintf(nm, sizeof nm, "bench.c:%d", 10 + t);
        c.module = "";
        c.build_id = "";
        c.name = nm;
        c.kind = OMPF_CK_LOOP;
        if (ompf_construct_add(p, &c, NULL))
            die("construct", NULL);
    }
    ompf_thread_add(p, -1, NULL);
    ompf_thread_add(p, -1, NULL);
    ompf_xu_reserve(p, n);
    uint32_t *perm = malloc(n * sizeof *perm);
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    rs = seed;
    if (!order_alike) {
        for (size_t i = n; i > 1; i--) {
            size_t j = rnd() % i;
            uint32_t t = perm[i - 1];
            perm[i - 1] = perm[j];
            perm[j] = t;
        }
    } else {
        /* Blocks [a, b) and [b, c) trade places with probability 1/2. */
        for (size_t a = 0; a < n;) {
            size_t b = a + 1 + rnd() % 512, c = b + 1 + rnd() % 512;
            if (c > n || !(rnd() & 1)) {
                a = b;
                continue;
            }
            for (size_t k = 0; k < c - a; k++)
                perm[a + k] = (uint32_t)(k < c - b ? b + k : a + k - (c - b));
            a = c;
        }
    }
    double *v = malloc((size_t)n_ev * sizeof *v);
    for (size_t k = 0; k < n; k++) {
        size_t i = perm[k];
        size_t region = i / 10000, chunk = i % 10000;
        int type = (int)(region % (size_t)n_types);
        uint32_t a, b, c;
        ompf_label_child(p, OMPF_LABEL_ROOT, region + 1, &a);
        ompf_label_child(p, a, 4198400 + (uint64_t)type, &b);
        ompf_label_child(p, b, chunk * 8, &c);
        ompf_xu_t x;
        memset(&x, 0, sizeof x);
        x.id = k + 1;
        x.type = (uint32_t)type;
        x.label = c;
        x.thread = (uint32_t)(rnd() & 1);
        x.team_size = 2;
        x.parts = 1;
        x.cpu = (int32_t)x.thread;
        x.core = x.numa = -1;
        x.kind = OMPF_XU_LOOP_CHUNK;
        x.start_ns = (uint64_t)i * 1000 + rnd() % 2000;
        x.end_ns = x.start_ns + 900;
        x.iter_start = chunk * 8;
        x.iter_count = 8;
        for (int e = 0; e < n_ev; e++)
            v[e] = (double)(uint64_t)(base[i * 4 + (size_t)(e % 4)] *
                                      (0.95 + 0.1 * unif()));
        if (ompf_xu_add(p, &x, v))
            die("xu", NULL);
    }
    free(v);
    free(perm);
    if (ompf_profile_write(p, path, &err))
        die(path, &err);
    ompf_profile_destroy(p);
}

static long maxrss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

/* Child: read the files, fuse, print one line. */
static void measure(const char *label, int strategy, char **paths, size_t n)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die("fork", NULL);
    if (pid > 0) {
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st))
            fprintf(stderr, "bench_fusion: %s failed\n", label);
        return;
    }
    ompf_profile_t **in = calloc(n, sizeof *in);
    ompf_error_t err;
    uint64_t total = 0;
    double t0 = cpu();
    for (size_t i = 0; i < n; i++) {
        if (ompf_profile_read(paths[i], &in[i], NULL, &err))
            die(paths[i], &err);
        total += ompf_xu_count(in[i]);
    }
    double t_read = cpu() - t0;
    ompf_fuse_opts_t o;
    ompf_fuse_opts_init(&o);
    o.strategy = strategy;
    ompf_profile_t *out;
    ompf_fuse_report_t *rep;
    t0 = cpu();
    if (ompf_fuse((const ompf_profile_t *const *)in, (const char *const *)paths,
                  n, &o, &out, &rep, &err))
        die("fuse", &err);
    double t_fuse = cpu() - t0;
    uint64_t unmatched = 0;
    for (size_t i = 0; i < n; i++)
        unmatched += ompf_fuse_report_unmatched(rep, i);
    printf("%-13s %2zu runs %9" PRIu64 " XUs in  read %7.3f s  fuse %7.3f s  "
           "%6.2f M XUs/s  fuse/read %5.2f  fused %8zu  unmatched %6" PRIu64
           "  iterations %4u  maxrss %6ld MB\n",
           label, n, total, t_read, t_fuse, (double)total / t_fuse / 1e6,
           t_fuse / t_read, ompf_xu_count(out), unmatched,
           ompf_fuse_report_iterations(rep), maxrss_mb());
    fflush(stdout);
    _exit(0);
}

int main(int argc, char **argv)
{
    size_t runs = 10, xus = 1000000, bc_steps = 8, bc_xus = 100000;
    int quick = 0, keep = 0, bc_types = 2, gen_only = 0;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--keep"))
            keep = 1;
        else if (!strcmp(argv[i], "--generate-only"))
            keep = gen_only = 1;
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--xus") && i + 1 < argc)
            xus = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--bc-steps") && i + 1 < argc)
            bc_steps = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--bc-xus") && i + 1 < argc)
            bc_xus = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--order") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "shuffled") || !strcmp(argv[i + 1], "alike")))
            order_alike = !strcmp(argv[++i], "alike");
        else if (argv[i][0] != '-' && !dir)
            dir = argv[i];
        else {
            fprintf(stderr, "usage: bench_fusion [--quick] [--runs R] [--xus N] "
                            "[--bc-steps S] [--bc-xus M] [--order shuffled|alike] [--keep] "
                            "[--generate-only] DIR\n");
            return 2;
        }
    }
    if (!dir || runs < 2 || bc_steps < 1 || !xus || !bc_xus) {
        fprintf(stderr, "usage: bench_fusion [--quick] [--runs R] [--xus N] "
                        "[--bc-steps S] [--bc-xus M] [--order shuffled|alike] [--keep] "
                            "[--generate-only] DIR\n");
        return 2;
    }
    if (quick) {
        xus /= 10;
        bc_xus /= 10;
    }
    mkdir(dir, 0755);
    printf("fusion benchmark: LGL/CTC %zu runs x %zu XUs; BC %zu steps x %zu "
           "XUs per type (%d types), 3 overlapping events\n",
           runs, xus, bc_steps, bc_xus, bc_types);

    /* LGL / CTC: disjoint events, one per run. */
    size_t nmax = xus > bc_xus * (size_t)bc_types ? xus : bc_xus * (size_t)bc_types;
    double *base = malloc(nmax * 4 * sizeof *base);
    rs = 99;
    for (size_t i = 0; i < nmax * 4; i++)
        base[i] = 1000.0 + 1e6 * unif() * unif();
    char **paths = calloc(runs > bc_steps + 1 ? runs : bc_steps + 1, sizeof *paths);
    double t0 = now();
    for (size_t r = 0; r < runs; r++) {
        char nm[64];
        snprintf(nm, sizeof nm, "E%zu", r);
        const char *names[1] = {nm};
        paths[r] = malloc(strlen(dir) + 32);
        sprintf(paths[r], "%s/lgl%zu.ompf", dir, r);
        make_run(paths[r], 0x1000 + r, xus, 4, names, 1, base, 7 + r);
    }
    printf("generated LGL/CTC inputs in %.1f s\n", now() - t0);
    if (!gen_only) {
        measure("lgl", OMPF_FUSE_LGL, paths, runs);
        measure("ctc", OMPF_FUSE_CTC, paths, runs);
    }
    if (!keep)
        for (size_t r = 0; r < runs; r++)
            unlink(paths[r]);
    for (size_t r = 0; r < runs; r++)
        free(paths[r]);

    /* BC: every run counts O1, O2, O3 (correlated with the base values) and
     * one new event. */
    t0 = now();
    for (size_t r = 0; r <= bc_steps; r++) {
        char nm[64];
        snprintf(nm, sizeof nm, "N%zu", r);
        const char *names[4] = {"O1", "O2", "O3", nm};
        paths[r] = malloc(strlen(dir) + 32);
        sprintf(paths[r], "%s/bc%zu.ompf", dir, r);
        make_run(paths[r], 0x2000 + r, bc_xus * (size_t)bc_types, bc_types,
                 names, 4, base, 70 + r);
    }
    printf("generated BC inputs in %.1f s\n", now() - t0);
    if (!gen_only) {
        measure("bc", OMPF_FUSE_BC, paths, bc_steps + 1);
        measure("bc-unlabeled", OMPF_FUSE_BC_UNLABELED, paths, bc_steps + 1);
    }
    if (!keep)
        for (size_t r = 0; r <= bc_steps; r++)
            unlink(paths[r]);
    for (size_t r = 0; r <= bc_steps; r++)
        free(paths[r]);
    free(paths);
    free(base);
    if (!keep)
        rmdir(dir);
    return 0;
}
