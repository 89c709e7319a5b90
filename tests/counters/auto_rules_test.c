/* The rules of `--events auto` on synthetic pilot data (no program run):
 * the rate pilot's verdicts, the dependence that random pairing breaks,
 * and the greedy choice over pairs (twins, budget, thresholds). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoevents_internal.h"
#include "check.h"

static ompf_auto_t *make(size_t n)
{
    ompf_auto_t *a = calloc(1, sizeof *a);
    a->c = calloc(n, sizeof *a->c);
    a->n = n;
    for (size_t i = 0; i < n; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "e%zu", i);
        a->c[i].name = strdup(nm);
        a->c[i].where = strdup("");
        a->c[i].inside = 1;
    }
    a->uprobe_cost = 15e-6;
    a->base_s = 1.0;
    return a;
}

/* A whole run of 1 s affords 0.1 s / 15 us = 6,667 hits of one probe. */
static void rate_verdicts(void)
{
    static const struct {
        double count;
        int usable, killed;
        const char *why; /* prefix of the reason, "" kept */
        int dropped;
    } t[] = {
        {7000, 1, 0, "too hot: 7000 hits per run", 1},
        {7000, 1, 1, "too hot: 7000 hits before the round was stopped", 1},
        {6000, 1, 0, "", 0},
        {6000, 1, 1, "", 0},
        {0, 1, 0, "never hit in the rate pilot", 0},
        {0, 1, 1, "", 0},
        {10, 0, 0, "does not open here", 1},
    };
    size_t n = sizeof t / sizeof *t;
    for (size_t i = 0; i < n; i++) {
        ompf_auto_t *a = make(1);
        double count = t[i].count;
        int usable = t[i].usable;
        ompf_auto_round_t r = {&count, &usable, 0.5, 1.0, t[i].killed, 0, 0};
        size_t idx = 0;
        size_t d = ompf__auto_rate_verdicts(a, &idx, 1, &r, 1.0, 0.10);
        CHECK(d == (size_t)t[i].dropped, "case %zu: dropped %zu", i, d);
        CHECK(strncmp(a->c[0].why, t[i].why, strlen(t[i].why)) == 0 &&
                  (t[i].why[0] || !a->c[0].why[0]),
              "case %zu: reason '%s', expected '%s'", i, a->c[0].why, t[i].why);
        ompf_auto_destroy(a);
    }
}

/* Which first bytes x86 uprobes emulate (no single-step). */
static void emulated(void)
{
    static const struct {
        unsigned char b[4];
        size_t n;
        int emu;
    } t[] = {
        {{0x90}, 1, 1},                   /* nop */
        {{0x66, 0x90}, 2, 1},             /* prefix + nop */
        {{0xeb, 0x05}, 2, 1},             /* jmp rel8 */
        {{0xe9, 0, 0, 0}, 4, 1},          /* jmp rel32 */
        {{0xe8, 0, 0, 0}, 4, 1},          /* call rel32 */
        {{0x74, 0x10}, 2, 1},             /* je rel8 */
        {{0x0f, 0x85, 0, 0}, 4, 1},       /* jne rel32 */
        {{0x55}, 1, 1},                   /* push %rbp */
        {{0x41, 0x54}, 2, 1},             /* push %r12 */
        {{0x48, 0x01, 0x3d, 0}, 4, 0},    /* add: stepped */
        {{0x0f, 0x1f, 0x44, 0}, 4, 0},    /* multi-byte nop: stepped here */
        {{0xc3}, 1, 0},                   /* ret */
        {{0x0f}, 1, 0},                   /* cut short */
        {{0x66}, 1, 0},
        {{0}, 0, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        CHECK(ompf__auto_emulated(t[i].b, t[i].n) == t[i].emu, "bytes %zu: %d", i,
              ompf__auto_emulated(t[i].b, t[i].n));
    /* the rate pilot's limit follows the candidate's cost: 7,000 hits are
     * too many for a stepped probe (6,667 allowed at 15 us) but not for an
     * emulated one (33,333 at 3 us) */
    ompf_auto_t *a = make(2);
    a->emu_cost = 3e-6;
    a->c[0].kind = a->c[1].kind = OMPF_AUTO_UPROBE;
    a->c[1].emulated = 1;
    double count[2] = {7000, 7000};
    int usable[2] = {1, 1};
    ompf_auto_round_t r = {count, usable, 0.5, 1.0, 0, 0, 0};
    size_t idx[2] = {0, 1};
    CHECK(ompf__auto_rate_verdicts(a, idx, 2, &r, 1.0, 0.10) == 1, "dropped");
    CHECK(strstr(a->c[0].why, "too hot") && !a->c[1].why[0], "e0 '%s', e1 '%s'", a->c[0].why,
          a->c[1].why);
    ompf_auto_destroy(a);
}

#define PER 240 /* XUs per construct: divisible by 6, so the independent cases are exact */
#define NX (2 * PER)

/* values per XU of the synthetic candidates; two constructs of PER XUs */
static double value(int kind, size_t x)
{
    size_t k = x % PER; /* index within its construct */
    switch (kind) {
    case 0: return k % 3 == 0;              /* one way of a three-way branch */
    case 1: return k % 3 == 1;              /* another: never with 0 */
    case 2: return (k / 3) % 2;             /* independent of 0 and 1 */
    case 3: return 2.0 * (k % 3 == 0);      /* twin of 0: the same up to scale */
    case 4: return x < PER ? 5 : 9;         /* tells constructs apart only */
    case 5: return 3.0 * (k % 3 == 0) + (double)(k % 2); /* depends on 0, costs too much */
    case 7: return k % 2;                   /* a two-way branch ... */
    case 8: return 1 - k % 2;               /* ... and its other way: a twin */
    default: return 1 + (double)((k * 7919) % 13); /* noise, a software event */
    }
}

static void stats(ompf_auto_t *a, const int *kinds, double **vals)
{
    uint32_t type[NX];
    for (size_t x = 0; x < NX; x++)
        type[x] = x < PER ? 0 : 1;
    for (size_t i = 0; i < a->n; i++) {
        vals[i] = malloc(NX * sizeof **vals);
        for (size_t x = 0; x < NX; x++)
            vals[i][x] = value(kinds[i], x);
    }
    CHECK(ompf__auto_stats(a, NX, type, 2, vals) == 0, "stats failed");
}

static void dependence(void)
{
    static const struct {
        int a, b;
        double dep;
    } t[] = {
        {0, 1, 2.0 / 9}, /* exclusive thirds: (1,1) gains 1/9, (0,0) 1/9 */
        {0, 2, 0.0},     /* independent: a shuffle changes nothing */
        {0, 4, 0.0},     /* constant within constructs */
        {1, 3, 2.0 / 9},
        {7, 8, 0.5},     /* exclusive halves */
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        ompf_auto_t *a = make(2);
        int kinds[2] = {t[i].a, t[i].b};
        double *vals[2];
        stats(a, kinds, vals);
        double d = ompf__auto_dependence(a, 0, 1);
        CHECK(fabs(d - t[i].dep) < 1e-12, "pair %d,%d: dependence %.6f, expected %.3f",
              t[i].a, t[i].b, d, t[i].dep);
        free(vals[0]);
        free(vals[1]);
        ompf_auto_destroy(a);
    }
}

static void choice(void)
{
    /* e0 noise (software), e1 branch A, e2 its twin, e3 constructs only,
     * e4 independent of A, e5 branch B (excludes A), e6 dear and dependent */
    int kinds[] = {6, 0, 3, 4, 2, 1, 5};
    size_t n = sizeof kinds / sizeof *kinds;
    ompf_auto_t *a = make(n);
    for (size_t i = 0; i < n; i++) {
        a->c[i].kind = kinds[i] == 6 ? OMPF_AUTO_SOFTWARE : OMPF_AUTO_UPROBE;
        a->c[i].cost_s = i == 6 ? 0.2 : 0.001;
    }
    double *vals[7];
    stats(a, kinds, vals);
    ompf_auto_opts_t o;
    ompf_auto_opts_init(&o);
    o.want = 3;
    CHECK(ompf__auto_choose(a, vals, &o, 1) == 0, "choose failed");
    for (size_t i = 0; i < n; i++)
        printf("  e%zu%s %s\n", i, a->c[i].chosen ? " chosen:" : ":", a->c[i].why);
    CHECK(a->nchosen == 3, "%zu chosen", a->nchosen);
    /* the best pair first (the exclusive branches), then what adds most */
    CHECK(a->nchosen >= 2 && ((a->order[0] == 1 && a->order[1] == 5) ||
                              (a->order[0] == 5 && a->order[1] == 1)),
          "first pair e%zu, e%zu", a->order[0], a->order[1]);
    CHECK(strstr(a->c[2].why, "twin of e1 (Pearson 1.000"),
          "e2: %s", a->c[2].why);
    CHECK(strstr(a->c[3].why, "varies too little"), "e3: %s", a->c[3].why);
    CHECK(strstr(a->c[6].why, "too costly"), "e6: %s", a->c[6].why);
    CHECK(a->c[1].chosen && strstr(a->c[1].why, "random pairing moves 22.2% of the XUs"),
          "e1: %s", a->c[1].why);
    for (size_t i = 0; i < n; i++)
        free(vals[i]);
    ompf_auto_destroy(a);
}

/* With a second run matched by label, only dependence that holds between
 * runs counts: the same values again keep it (2/9); values that depend on
 * each other only within a run (here run 2's shuffled within each
 * construct, as timing noise would be) lose it. */
static void between_runs(void)
{
    for (int shuffled = 0; shuffled < 2; shuffled++) {
        int kinds[] = {0, 1};
        ompf_auto_t *a = make(2);
        double *vals[2];
        stats(a, kinds, vals);
        a->match = malloc(NX * sizeof *a->match);
        a->bin2 = calloc(2, sizeof *a->bin2);
        size_t perm[NX];
        unsigned long long seed = 12345;
        for (size_t x = 0; x < NX; x++)
            perm[x] = x;
        for (size_t x = PER; shuffled && x > 1; x--) { /* the same shuffle in both */
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t q = (size_t)(seed >> 33) % x, t = perm[x - 1];
            perm[x - 1] = perm[q];
            perm[q] = t;
            perm[PER + x - 1] = PER + perm[x - 1];
            perm[PER + q] = PER + perm[q];
        }
        for (size_t x = 0; x < NX; x++)
            a->match[x] = (uint32_t)x;
        for (size_t k = 0; k < 2; k++) {
            a->bin2[k] = malloc(NX);
            for (size_t x = 0; x < NX; x++) /* run 2: event k's value of another XU */
                a->bin2[k][x] = a->bin[k][k == 1 ? perm[x] : x];
        }
        double d = ompf__auto_dependence(a, 0, 1), noise = ompf__auto_repeat_noise(a, 0, 1);
        if (shuffled) {
            CHECK(d < 0.08, "shuffled between runs: dependence %.4f", d);
            /* and the pair's histogram differs between the runs, as the
             * calibration of such a pair would */
            CHECK(noise > 0.1, "shuffled between runs: repeat noise %.4f", noise);
        } else {
            CHECK(fabs(d - 2.0 / 9) < 1e-12, "the same in both runs: dependence %.6f", d);
            CHECK(noise == 0, "the same in both runs: repeat noise %.6f", noise);
        }
        free(vals[0]);
        free(vals[1]);
        ompf_auto_destroy(a);
    }
}

/* The two ways of a two-way branch are one quantity (r = -1): twins. */
static void complement(void)
{
    int kinds[] = {7, 8};
    ompf_auto_t *a = make(2);
    a->c[0].cost_s = a->c[1].cost_s = 0.001;
    double *vals[2];
    stats(a, kinds, vals);
    ompf_auto_opts_t o;
    ompf_auto_opts_init(&o);
    CHECK(ompf__auto_choose(a, vals, &o, 1) == 0, "choose failed");
    CHECK(a->nchosen == 1 && strstr(a->c[1].why, "twin of e0 (Pearson -1.000"), "e1: %s",
          a->c[1].why);
    free(vals[0]);
    free(vals[1]);
    ompf_auto_destroy(a);
}

int main(void)
{
    rate_verdicts();
    dependence();
    choice();
    complement();
    between_runs();
    emulated();
    if (fails)
        return 1;
    printf("auto rules: all cases pass\n");
    return 0;
}
