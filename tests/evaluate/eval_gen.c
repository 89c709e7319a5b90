/* Writes a small synthetic evaluation set for the CLI and report tests:
 *   eval_gen DIR [XUS] [EVENTS] [SEED] [PROGRAM]
 * DIR/ref-1..3.ompf   reference runs counting every event (mode reference)
 * DIR/good.ompf       same distribution, fresh noise (fused, strategy lgl)
 * DIR/shifted.ompf    event 0 scaled by 1.6 (fused, strategy ctc)
 * DIR/hem.ompf        noisier, 10% of values missing (mode hem)
 * DIR/partial.ompf    the last event absent (mode run)
 * With SUBSETS = 1, reference r counts event e only when e % 4 != r (the
 * others are marked multiplexed) and has 3% of its values missing, so
 * event pairs have different repeat sets (some too few).
 * With REFS = R (benchmarks/epd/scale.py), only DIR/ref-1..R.ompf and
 * DIR/good.ompf are written, JOBS of them at a time (child processes;
 * default 1): the same files as one after the other, since each file
 * starts where the random stream of the previous one ends.
 * Values: per XU a size s (log-normal), event e = s * (1 + e/3) * noise,
 * with even events also growing with a second latent factor; two
 * constructs (types) with different sizes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ompfuse/file.h"
#include "ompfuse/profile.h"

static uint64_t st;
static double unif(void)
{
    st += 0x9e3779b97f4a7c15ull;
    uint64_t z = st;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void)
{
    return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif());
}

static int write_one(const char *dir, const char *file, const char *mode,
                     const char *strategy, const char *program, int nev,
                     int nxu, double noise, double shift0, double missing,
                     int drop)
{
    ompf_profile_t *p;
    if (ompf_profile_create(&p))
        return 1;
    ompf_meta_set(p, "program", program);
    ompf_meta_set(p, "argv", program);
    ompf_meta_set(p, "mode", mode);
    if (strategy)
        ompf_meta_set(p, "strategy", strategy);
    for (int e = 0; e < nev; e++) {
        char name[64];
        snprintf(name, sizeof name, "gen::EV%02d", e);
        ompf_event_t ev = {.name = name, .pe_type = 1, .config = (uint64_t)e,
                           .status = !strcmp(mode, "hem") ? OMPF_EV_ESTIMATED
                                     : drop && e % 4 == drop ? OMPF_EV_MULTIPLEXED
                                                             : OMPF_EV_COUNTED,
                           .source = -1};
        if (ompf_event_add(p, &ev, NULL))
            return 1;
    }
    for (int t = 0; t < 2; t++) {
        ompf_construct_t c = {.module = "gen", .build_id = "ab12",
                              .offset = 0x1000u + 0x40u * (unsigned)t,
                              .kind = OMPF_CK_TASK};
        if (ompf_construct_add(p, &c, NULL))
            return 1;
    }
    double *v = malloc((size_t)nev * sizeof *v);
    for (int i = 0; i < nxu; i++) {
        int type = i % 3 == 0;
        double s = exp(gauss() * 0.5) * (type ? 3.0 : 1.0);
        double f2 = exp(gauss() * 0.3);
        for (int e = 0; e < nev; e++) {
            double x = s * (1 + e / 3.0) * (e % 2 ? 1 : f2) * 1000;
            x *= 1 + noise * gauss();
            if (e == 0)
                x *= shift0;
            v[e] = unif() < missing ? OMPF_MISSING : floor(x < 0 ? 0 : x);
        }
        ompf_xu_t xu = {.id = (uint64_t)i + 1, .type = (uint32_t)type,
                        .parts = 1, .cpu = -1, .core = -1, .numa = -1,
                        .start_ns = (uint64_t)i * 1000,
                        .end_ns = (uint64_t)i * 1000 + 900};
        if (ompf_xu_add(p, &xu, v))
            return 1;
    }
    free(v);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    ompf_error_t err = {0};
    int rc = ompf_profile_write(p, path, &err);
    if (rc)
        fprintf(stderr, "eval_gen: %s\n", err.msg);
    ompf_profile_destroy(p);
    return rc != 0;
}

/* The REFS files (ref-1..R, good), jobs at a time in child processes.
 * Each XU draws 4 + 3 x EVENTS numbers of the stream (size, second factor:
 * two each; per event its noise, two, and the missing-value draw), so file
 * f starts f x XUS x (4 + 3 x EVENTS) numbers after the first. */
static int write_parallel(const char *dir, const char *prog, int nev, int nxu,
                          int subsets, int nrefs, int jobs)
{
    uint64_t st0 = st, per = (uint64_t)nxu * (uint64_t)(4 + 3 * nev);
    int running = 0, rc = 0;
    for (int f = 0; f <= nrefs; f++) {
        if (running == jobs) {
            int status;
            if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
                rc = 1;
            running--;
        }
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid > 0) {
            running++;
            continue;
        }
        st = st0 + (uint64_t)f * per * 0x9e3779b97f4a7c15ull;
        char file[32];
        if (f < nrefs) {
            snprintf(file, sizeof file, "ref-%d.ompf", f + 1);
            _exit(write_one(dir, file, "reference", NULL, prog, nev, nxu, 0.05,
                            1, subsets ? 0.03 : 0, subsets ? f + 1 : 0));
        }
        _exit(write_one(dir, "good.ompf", "fused", "lgl", prog, nev, nxu, 0.05,
                        1, 0, 0));
    }
    for (; running > 0; running--) {
        int status;
        if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
            rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: eval_gen DIR [XUS] [EVENTS] [SEED] [PROGRAM] "
                        "[SUBSETS] [REFS] [JOBS]\n");
        return 2;
    }
    const char *dir = argv[1];
    int nxu = argc > 2 ? atoi(argv[2]) : 600;
    int nev = argc > 3 ? atoi(argv[3]) : 4;
    st = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
    const char *prog = argc > 5 ? argv[5] : "gen";
    int subsets = argc > 6 && atoi(argv[6]);
    int nrefs = argc > 7 ? atoi(argv[7]) : 0;
    int jobs = argc > 8 ? atoi(argv[8]) : 1;
    if (nrefs > 0 && jobs > 1)
        return write_parallel(dir, prog, nev, nxu, subsets, nrefs, jobs);
    int rc = 0;
    for (int r = 1; r <= (nrefs > 0 ? nrefs : 3); r++) {
        char f[32];
        snprintf(f, sizeof f, "ref-%d.ompf", r);
        rc |= write_one(dir, f, "reference", NULL, prog, nev, nxu, 0.05, 1,
                        subsets ? 0.03 : 0, subsets ? r : 0);
    }
    rc |= write_one(dir, "good.ompf", "fused", "lgl", prog, nev, nxu, 0.05, 1, 0, 0);
    if (nrefs > 0)
        return rc;
    rc |= write_one(dir, "shifted.ompf", "fused", "ctc", prog, nev, nxu, 0.05,
                    1.6, 0, 0);
    rc |= write_one(dir, "hem.ompf", "hem", NULL, prog, nev, nxu, 0.3, 1, 0.1, 0);
    rc |= write_one(dir, "partial.ompf", "run", NULL, prog, nev - 1, nxu, 0.05,
                    1, 0, 0);
    return rc;
}
