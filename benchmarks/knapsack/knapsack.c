/* knapsack: 0/1 knapsack solved by depth-first branch and bound with
 * OpenMP tasks (one `single` starts the search; every search node above
 * the cutoff depth spawns one task per branch, nodes below it are searched
 * sequentially inside their task).  The optimum is checked against a
 * dynamic-programming solution when n * capacity is small enough.
 *
 * Usage: knapsack [-n items] [-s seed] [-c cutoff] [-d]
 *   -d  deterministic task tree: a task prunes only with the bound it was
 *       given at creation (the best value its ancestors knew), so the set
 *       of tasks and the work of each task are the same in every run.
 *       Without -d tasks also read the shared best value found so far, so
 *       which tasks exist depends on timing.
 * Exit 0 when the optimum matches the DP (or is too large to check),
 * 1 on a mismatch, 2 on bad usage. */
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KS_DEFAULT_N 40
#define KS_DEFAULT_SEED 1
#define KS_DEFAULT_CUTOFF 20
#define KS_MAX_WEIGHT 1000
/* DP check limit on n * capacity (cells of the 1-D table times items). */
#define KS_DP_LIMIT 4000000000.0

struct item {
    long w, p;
};

static struct item *items; /* sorted by p/w, decreasing */
static int nitems;
static int cutoff;
static int deterministic;
static _Atomic long best;    /* best value found by any task */
static _Atomic long ntasks;  /* explicit tasks created */
static _Atomic long nnodes;  /* search nodes visited */

static uint64_t rng_state;
/* splitmix64: a small deterministic generator independent of libc. */
static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int by_ratio(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    /* p/w decreasing, compared exactly; ties by weight for a total order. */
    long l = x->p * y->w, r = y->p * x->w;
    if (l != r)
        return l > r ? -1 : 1;
    return (x->w > y->w) - (x->w < y->w);
}

/* Strongly correlated instance (profit = weight + max/10), the classic
 * hard case for bound-based search; capacity is half the total weight. */
static long generate(int n, uint64_t seed)
{
    rng_state = seed;
    long total = 0;
    for (int i = 0; i < n; i++) {
        items[i].w = 1 + (long)(rng_next() % KS_MAX_WEIGHT);
        items[i].p = items[i].w + KS_MAX_WEIGHT / 10;
        total += items[i].w;
    }
    qsort(items, (size_t)n, sizeof *items, by_ratio);
    return total / 2;
}

/* Dantzig bound: greedy by ratio plus the fractional part of the first
 * item that does not fit; floor()ed, it bounds every completion. */
static long upper_bound(int i, long cap, long value)
{
    for (; i < nitems && items[i].w <= cap; i++) {
        cap -= items[i].w;
        value += items[i].p;
    }
    if (i < nitems)
        value += (items[i].p * cap) / items[i].w;
    return value;
}

/* A feasible completion: take every remaining item that still fits. */
static long greedy(int i, long cap, long value)
{
    for (; i < nitems; i++) {
        if (items[i].w <= cap) {
            cap -= items[i].w;
            value += items[i].p;
        }
    }
    return value;
}

static void publish(long v)
{
    long cur = atomic_load_explicit(&best, memory_order_relaxed);
    while (v > cur &&
           !atomic_compare_exchange_weak_explicit(&best, &cur, v, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

/* In the timing-dependent mode the shared best tightens every bound. */
static long current_bound(long lb)
{
    if (!deterministic) {
        long b = atomic_load_explicit(&best, memory_order_relaxed);
        if (b > lb)
            lb = b;
    }
    return lb;
}

/* Sequential search below the cutoff; *lb is the best value this search
 * knows (its creation bound, improved by what it finds). */
static void search_seq(int i, long cap, long value, long *lb, long *nodes)
{
    (*nodes)++;
    if (value > *lb) {
        *lb = value;
        if (!deterministic)
            publish(value);
    }
    if (i == nitems)
        return;
    *lb = current_bound(*lb);
    if (upper_bound(i, cap, value) <= *lb)
        return;
    if (items[i].w <= cap)
        search_seq(i + 1, cap - items[i].w, value + items[i].p, lb, nodes);
    search_seq(i + 1, cap, value, lb, nodes);
}

/* A test build may run code when a task-level node starts (tests/tool,
 * knapsack_spread.c); the benchmark runs none. */
#ifndef KS_NODE_HOOK
#define KS_NODE_HOOK(depth) ((void)0)
#endif

/* A search node at `depth`; above the cutoff each branch becomes a task
 * created with the bound known here. */
static void search_task(int i, long cap, long value, int depth, long lb)
{
    KS_NODE_HOOK(depth);
    if (depth >= cutoff) {
        long nodes = 0;
        search_seq(i, cap, value, &lb, &nodes);
        publish(lb);
        atomic_fetch_add_explicit(&nnodes, nodes, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&nnodes, 1, memory_order_relaxed);
    lb = current_bound(lb);
    if (i == nitems || upper_bound(i, cap, value) <= lb) {
        publish(value);
        return;
    }
    long g = greedy(i, cap, value);
    if (g > lb) {
        lb = g;
        publish(g);
    }
    if (items[i].w <= cap) {
        atomic_fetch_add_explicit(&ntasks, 1, memory_order_relaxed);
#pragma omp task firstprivate(i, cap, value, depth, lb)
        search_task(i + 1, cap - items[i].w, value + items[i].p, depth + 1, lb);
    }
    atomic_fetch_add_explicit(&ntasks, 1, memory_order_relaxed);
#pragma omp task firstprivate(i, cap, value, depth, lb)
    search_task(i + 1, cap, value, depth + 1, lb);
}

/* Reference optimum by dynamic programming over capacities. */
static long dp_optimum(long cap)
{
    long *f = calloc((size_t)cap + 1, sizeof *f);
    if (!f) {
        fprintf(stderr, "knapsack: out of memory for the DP check (capacity %ld)\n", cap);
        exit(1);
    }
    for (int i = 0; i < nitems; i++)
        for (long c = cap; c >= items[i].w; c--)
            if (f[c - items[i].w] + items[i].p > f[c])
                f[c] = f[c - items[i].w] + items[i].p;
    long r = f[cap];
    free(f);
    return r;
}

static int usage(const char *msg)
{
    fprintf(stderr,
            "knapsack: %s\nusage: knapsack [-n items] [-s seed] [-c cutoff] [-d]\n", msg);
    return 2;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    long n = KS_DEFAULT_N, seed = KS_DEFAULT_SEED, cut = KS_DEFAULT_CUTOFF;
    for (int a = 1; a < argc; a++) {
        const char *o = argv[a];
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            printf("usage: knapsack [-n items] [-s seed] [-c cutoff] [-d]\n"
                   "  -n items   number of items (default %d)\n"
                   "  -s seed    instance seed (default %d)\n"
                   "  -c cutoff  task depth limit (default %d)\n"
                   "  -d         deterministic task tree\n",
                   KS_DEFAULT_N, KS_DEFAULT_SEED, KS_DEFAULT_CUTOFF);
            return 0;
        } else if (!strcmp(o, "-d")) {
            deterministic = 1;
        } else if (!strcmp(o, "-n") || !strcmp(o, "-s") || !strcmp(o, "-c")) {
            if (a + 1 >= argc)
                return usage("option needs a value");
            long *dst = o[1] == 'n' ? &n : o[1] == 's' ? &seed : &cut;
            long hi = o[1] == 'n' ? 5000 : o[1] == 's' ? 0x7fffffffL : 60;
            if (parse_long(argv[++a], o[1] == 'n' ? 1 : 0, hi, dst))
                return usage("bad option value (-n 1..5000, -s >= 0, -c 0..60)");
        } else {
            fprintf(stderr, "knapsack: unknown option '%s'\n", o);
            return usage("see --help");
        }
    }
    nitems = (int)n;
    cutoff = (int)cut;
    items = calloc((size_t)n, sizeof *items);
    if (!items) {
        fprintf(stderr, "knapsack: out of memory for %ld items\n", n);
        return 1;
    }
    long cap = generate(nitems, (uint64_t)seed);
    printf("knapsack: n = %d, seed = %ld, capacity = %ld, cutoff = %d, mode = %s, threads = %d\n",
           nitems, seed, cap, cutoff, deterministic ? "deterministic" : "shared-bound",
           omp_get_max_threads());

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma omp parallel
#pragma omp single
    search_task(0, cap, 0, 0, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double t = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);

    long opt = atomic_load(&best);
    printf("optimum = %ld\n", opt);
    printf("tasks = %ld\n", atomic_load(&ntasks));
    printf("nodes = %ld\n", atomic_load(&nnodes));
    printf("time = %.3f s\n", t);
    int rc = 0;
    if ((double)n * (double)cap <= KS_DP_LIMIT) {
        long ref = dp_optimum(cap);
        printf("dp optimum = %ld\n", ref);
        if (ref == opt) {
            printf("CHECK SUCCESSFUL\n");
        } else {
            printf("CHECK UNSUCCESSFUL\n");
            rc = 1;
        }
    } else {
        printf("dp check skipped: instance too large to check (n * capacity > %.0f)\n",
               KS_DP_LIMIT);
    }
    free(items);
    return rc;
}
