/* BC's grid (fusion/bc_grid.c, bc_cells.c) against a naive oracle that
 * does what docs/fusion.md says, level by level: bounds and dmax over both
 * sides, integer coordinates, then for L = 0, 1, ... the unpaired XUs
 * grouped by their coordinates >> L, each group with both sides paired
 * first with first in order-key order, and a last cell for the XUs with a
 * missing value.  Table-driven over value shapes (continuous, few
 * distinct integers, one value, huge range with tiny gaps so that the
 * Morton keys need more than 64 bits, missing values), sizes (cells past
 * the grid's small-cell sort, problems past its in-place sort's first
 * pass), k from 1 to 4, labelled and random order keys; each case solved
 * three ways (the Morton sort on scratch; in place with room for two open
 * cells to start with, so that the stack grows; with the values copied
 * and prev's values given sorted, as bc.c's cache gives them) must give
 * the oracle's pairs, pair count, iterations and dmax. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "bc_grid.h"

typedef enum {
    V_CONT,    /* uniform doubles */
    V_FEW,     /* integers 0..3: large cells, equal coordinates */
    V_ONE,     /* a single value: dmax 1, one cell */
    V_SPREAD,  /* 0..1e15 with some values 1 apart: about 50 levels per value */
    V_MISSING, /* integers 0..999, a fifth of them missing */
} shape_t;

typedef struct bcase {
    const char *name;
    shape_t shape;
    size_t np, nc, k;
    int labeled;
} bcase_t;

static const bcase_t cases[] = {
    {"cont k1", V_CONT, 500, 700, 1, 1},
    {"cont k2 unl", V_CONT, 900, 600, 2, 0},
    {"cont k3", V_CONT, 300, 300, 3, 1},
    {"cont k4 unl", V_CONT, 257, 1000, 4, 0},
    {"few k1 big cells", V_FEW, 12000, 11000, 1, 1},
    {"few k1 big cells unl", V_FEW, 9000, 12000, 1, 0},
    {"few k2", V_FEW, 3000, 2500, 2, 1},
    {"one value", V_ONE, 400, 300, 1, 1},
    {"one value k3 unl", V_ONE, 100, 200, 3, 0},
    {"spread k1", V_SPREAD, 800, 800, 1, 1},
    {"spread k2 long keys", V_SPREAD, 1500, 1200, 2, 1},
    {"spread k3 long keys unl", V_SPREAD, 700, 900, 3, 0},
    {"missing k1", V_MISSING, 1000, 1300, 1, 1},
    {"missing k2 unl", V_MISSING, 1600, 900, 2, 0},
    {"tiny", V_CONT, 1, 1, 1, 1},
    {"one side", V_CONT, 5, 0, 2, 1},
    /* past the in-place sort's wider first pass (2^16 keys) */
    {"cont k1 large", V_CONT, 40000, 35000, 1, 1},
    {"spread k4 large unl", V_SPREAD, 33000, 34000, 4, 0},
};

static uint64_t rnd(uint64_t *s)
{
    return fz_rand(s);
}

static double gen_value(shape_t sh, uint64_t *s)
{
    switch (sh) {
    case V_CONT: return (double)(rnd(s) >> 11) / 9007199254740992.0 * 1000.0;
    case V_FEW: return (double)(rnd(s) % 4);
    case V_ONE: return 42.0;
    case V_SPREAD:
        return rnd(s) % 3 ? (double)(rnd(s) % 1000000000000000ull)
                          : (double)(rnd(s) % 16);
    case V_MISSING: return rnd(s) % 5 == 0 ? NAN : (double)(rnd(s) % 1000);
    }
    return 0;
}

/* ---- the oracle --------------------------------------------------------- */

typedef struct oracle {
    size_t np, nc, k;
    const double *val;     /* row-major, np + nc rows */
    const uint64_t *okey;  /* order key per row (unique within a side) */
    uint64_t *coord;       /* per row, k */
    uint8_t *paired, *missing;
    uint32_t *partner;     /* per prev row */
    size_t n_pairs;
    unsigned iterations;
    double dmax;
} oracle_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const oracle_t *g_or;
static unsigned g_L;

static int cmp_cell(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    for (size_t e = 0; e < g_or->k; e++) {
        uint64_t x = g_or->coord[a * g_or->k + e] >> g_L, y = g_or->coord[b * g_or->k + e] >> g_L;
        if (x != y)
            return x < y ? -1 : 1;
    }
    return (a > b) - (a < b);
}

static int cmp_okey(const void *pa, const void *pb)
{
    uint64_t x = g_or->okey[*(const uint32_t *)pa], y = g_or->okey[*(const uint32_t *)pb];
    return (x > y) - (x < y);
}

/* Pairs the rows of one cell: prev and cur each by order key. */
static size_t pair_cell(oracle_t *o, const uint32_t *rows, size_t m)
{
    uint32_t *p = malloc((m + 1) * sizeof *p), *c = malloc((m + 1) * sizeof *c);
    size_t a = 0, b = 0;
    for (size_t i = 0; i < m; i++)
        if (!o->paired[rows[i]])
            *(rows[i] < o->np ? &p[a++] : &c[b++]) = rows[i];
    g_or = o;
    qsort(p, a, sizeof *p, cmp_okey);
    qsort(c, b, sizeof *c, cmp_okey);
    size_t t = a < b ? a : b;
    for (size_t i = 0; i < t; i++) {
        o->partner[p[i]] = (uint32_t)(c[i] - o->np);
        o->paired[p[i]] = o->paired[c[i]] = 1;
    }
    free(p);
    free(c);
    o->n_pairs += t;
    return t;
}

static void oracle_solve(oracle_t *o)
{
    size_t n = o->np + o->nc, k = o->k;
    o->dmax = INFINITY;
    double *mn = calloc(k, sizeof *mn), *mx = calloc(k, sizeof *mx);
    double *all = malloc((n + 1) * sizeof *all), *xs = malloc((n + 1) * sizeof *xs);
    double *ys = malloc((n + 1) * sizeof *ys);
    for (size_t r = 0; r < n; r++)
        for (size_t e = 0; e < k; e++)
            o->missing[r] |= isnan(o->val[r * k + e]);
    for (size_t e = 0; e < k; e++) {
        size_t na = 0, nx = 0, ny = 0;
        for (size_t r = 0; r < n; r++) {
            double v = o->val[r * k + e];
            if (isnan(v))
                continue;
            all[na++] = v;
            *(r < o->np ? &xs[nx++] : &ys[ny++]) = v;
        }
        qsort(all, na, sizeof *all, cmp_double);
        mn[e] = na ? all[0] : 0;
        mx[e] = na ? all[na - 1] : 0;
        double range = mx[e] - mn[e];
        if (!(range > 0))
            continue;
        /* smallest cross difference; smallest gap between distinct values */
        double cross = INFINITY, gap = INFINITY;
        qsort(xs, nx, sizeof *xs, cmp_double);
        for (size_t j = 0; j < ny; j++) {
            size_t lo = 0, hi = nx; /* first x >= y */
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (xs[mid] < ys[j])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < nx && xs[lo] - ys[j] < cross)
                cross = xs[lo] - ys[j];
            if (lo > 0 && ys[j] - xs[lo - 1] < cross)
                cross = ys[j] - xs[lo - 1];
        }
        for (size_t i = 1; i < na; i++)
            if (all[i] > all[i - 1] && all[i] - all[i - 1] < gap)
                gap = all[i] - all[i - 1];
        double diff = cross > 0 ? cross : gap;
        if (isfinite(diff) && diff > 0 && range / diff < o->dmax)
            o->dmax = range / diff;
    }
    if (!isfinite(o->dmax) || o->dmax < 1)
        o->dmax = 1;
    if (o->dmax > 4503599627370496.0)
        o->dmax = 4503599627370496.0;
    uint64_t cmax = (uint64_t)ceil(o->dmax) - 1;
    for (size_t r = 0; r < n; r++)
        for (size_t e = 0; e < k && !o->missing[r]; e++) {
            double range = mx[e] - mn[e], x;
            uint64_t c = 0;
            if (range > 0) {
                x = floor((o->val[r * k + e] - mn[e]) / range * o->dmax);
                c = x <= 0 ? 0 : x >= (double)cmax ? cmax : (uint64_t)x;
            }
            o->coord[r * k + e] = c;
        }
    uint32_t *rows = malloc((n + 1) * sizeof *rows);
    for (unsigned L = 0; L <= 53; L++) {
        size_t m = 0;
        for (size_t r = 0; r < n; r++)
            if (!o->paired[r] && !o->missing[r])
                rows[m++] = (uint32_t)r;
        g_or = o;
        g_L = L;
        qsort(rows, m, sizeof *rows, cmp_cell);
        size_t made = 0;
        for (size_t a = 0; a < m;) {
            size_t b = a + 1;
            g_L = L;
            while (b < m) {
                uint32_t x = rows[a], y = rows[b];
                int same = 1;
                for (size_t e = 0; e < k && same; e++)
                    same = (o->coord[x * k + e] >> L) == (o->coord[y * k + e] >> L);
                if (!same)
                    break;
                b++;
            }
            made += pair_cell(o, rows + a, b - a);
            a = b;
        }
        o->iterations += made > 0;
    }
    size_t m = 0, any_missing = 0;
    for (size_t r = 0; r < n; r++) {
        any_missing |= o->missing[r];
        if (!o->paired[r])
            rows[m++] = (uint32_t)r;
    }
    if (any_missing && pair_cell(o, rows, m))
        o->iterations++;
    free(rows);
    free(mn);
    free(mx);
    free(all);
    free(xs);
    free(ys);
}

/* ---- one case ------------------------------------------------------------- */

#define PSTRIDE 3 /* the partners go to a column of tuples, as in bc.c */

static void run_case(const bcase_t *bc, uint64_t seed)
{
    size_t np = bc->np, nc = bc->nc, n = np + nc, k = bc->k;
    uint64_t s = seed;
    double *pv = malloc((np + 1) * k * sizeof *pv), *cv = malloc((nc + 1) * k * sizeof *cv);
    double *val = malloc((n + 1) * k * sizeof *val);
    uint32_t *perm = malloc((nc + 1) * sizeof *perm); /* cur x -> its run index */
    uint32_t *pk2 = malloc((np + 1) * sizeof *pk2);
    uint32_t *lab[2] = {malloc((np + 1) * sizeof(uint32_t)), malloc((nc + 1) * sizeof(uint32_t))};
    size_t nlab = 50;
    uint32_t *urank = malloc(nlab * sizeof *urank);
    uint64_t *okey = malloc((n + 1) * sizeof *okey);
    for (size_t i = 0; i < np * k; i++)
        pv[i] = gen_value(bc->shape, &s);
    for (size_t i = 0; i < nc * k; i++)
        cv[i] = gen_value(bc->shape, &s);
    for (size_t x = 0; x < nc; x++)
        perm[x] = (uint32_t)x;
    for (size_t x = nc; x > 1; x--) {
        size_t j = rnd(&s) % x;
        uint32_t t = perm[x - 1];
        perm[x - 1] = perm[j];
        perm[j] = t;
    }
    for (size_t x = 0; x < np; x++)
        pk2[x] = (uint32_t)(np - x) * 3; /* distinct, descending */
    for (size_t i = 0; i < nlab; i++)
        urank[i] = (uint32_t)(rnd(&s) % 20); /* ranks repeat: k2 decides */
    for (size_t x = 0; x < np; x++)
        lab[0][x] = (uint32_t)(rnd(&s) % nlab);
    for (size_t x = 0; x < nc; x++)
        lab[1][x] = (uint32_t)(rnd(&s) % nlab);
    for (size_t x = 0; x < np; x++)
        memcpy(val + x * k, pv + x * k, k * sizeof *val);
    for (size_t x = 0; x < nc; x++)
        memcpy(val + (np + x) * k, cv + (size_t)perm[x] * k, k * sizeof *val);
    /* order keys, independently: (rank, k2) packed, or the stream's draws
     * one after the other (prev, then cur) */
    uint64_t rs = seed ^ 0x5eed;
    for (size_t r = 0; r < n; r++) {
        if (bc->labeled) {
            uint64_t k2 = r < np ? pk2[r] : 7 + (uint64_t)perm[r - np];
            uint32_t l = r < np ? lab[0][r] : lab[1][r - np];
            okey[r] = (uint64_t)urank[l] << 32 | k2;
        }
    }
    uint64_t st = rs;
    for (size_t r = 0; r < n && !bc->labeled; r++)
        okey[r] = fz_rand(&st);
    oracle_t o = {np, nc, k, val, okey, calloc((n + 1) * k, sizeof(uint64_t)),
                  calloc(n + 1, 1), calloc(n + 1, 1), malloc((np + 1) * sizeof(uint32_t)),
                  0, 0, 0};
    for (size_t x = 0; x < np; x++)
        o.partner[x] = FZ_NONE;
    oracle_solve(&o);

    bc_col_t *col = malloc(2 * k * sizeof *col);
    uint32_t *k2map = malloc((nc + 1) * sizeof *k2map); /* cur x -> 7 + perm */
    for (size_t x = 0; x < nc; x++)
        k2map[x] = 7 + perm[x];
    for (size_t e = 0; e < k; e++) {
        col[e] = (bc_col_t){pv + e, k, NULL, 1, 0};
        /* cur values through a map, as a run's list of one type */
        col[k + e] = (bc_col_t){cv + e, k, perm, 1, 0};
    }
    /* prev's non-missing values of each event, sorted (bc.c's cache) */
    double *ps = malloc((np + 1) * k * sizeof *ps);
    const double **psv = malloc(k * sizeof *psv);
    size_t *nps = malloc(k * sizeof *nps);
    for (size_t e = 0; e < k; e++) {
        double *o = ps + e * (np + 1);
        nps[e] = 0;
        for (size_t x = 0; x < np; x++)
            if (!isnan(pv[x * k + e]))
                o[nps[e]++] = pv[x * k + e];
        qsort(o, nps[e], sizeof *o, cmp_double);
        psv[e] = o;
    }
    for (int way = 0; way < 3; way++) {
        const char *how = way == 0 ? "scratch" : way == 1 ? "in place" : "copy, prev sorted";
        int inplace = way == 1;
        bc_grid_t *g = bc_grid_create(np > nc ? np : nc, k, 0, way == 2);
        assert_non_null(g);
        if (inplace) {
            bc_grid_scratch_limit(g, 0);
            bc_grid_frames_start(g, 2);
        }
        uint32_t *tup = malloc((np + 1) * PSTRIDE * sizeof *tup);
        for (size_t i = 0; i < (np + 1) * PSTRIDE; i++)
            tup[i] = FZ_NONE;
        bc_prob_t pb = {np, nc, k, {col, col + k}, bc->labeled ? urank : NULL,
                        {lab[0], lab[1]}, rs,
                        {pk2, k2map}, {1, 1}, {0, 0}, NULL, NULL,
                        tup + 1, PSTRIDE, 0, 0, 0};
        if (way == 2) {
            pb.psorted = psv;
            pb.npsorted = nps;
        }
        assert_int_equal(bc_grid_solve(g, &pb), 0);
        if (pb.n_pairs != o.n_pairs || pb.iterations != o.iterations ||
            (np && nc && pb.dmax != o.dmax))
            fail_msg("%s (%s): pairs %zu / %zu, iterations %u / %u, dmax %.17g / %.17g",
                     bc->name, how, pb.n_pairs, o.n_pairs,
                     pb.iterations, o.iterations, pb.dmax, o.dmax);
        for (size_t x = 0; x < np; x++)
            if (tup[x * PSTRIDE + 1] != o.partner[x])
                fail_msg("%s (%s): prev %zu paired with %u, oracle %u", bc->name,
                         how, x, tup[x * PSTRIDE + 1],
                         o.partner[x]);
        for (size_t i = 0; i < (np + 1) * PSTRIDE; i++) /* nothing else written */
            if (i % PSTRIDE != 1)
                assert_int_equal(tup[i], FZ_NONE);
        free(tup);
        bc_grid_destroy(g);
    }
    free(ps);
    free(psv);
    free(nps);
    free(col);
    free(k2map);
    free(o.coord);
    free(o.paired);
    free(o.missing);
    free(o.partner);
    free(pv);
    free(cv);
    free(val);
    free(perm);
    free(pk2);
    free(lab[0]);
    free(lab[1]);
    free(urank);
    free(okey);
}

static void test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (uint64_t seed = 1; seed <= (cases[i].np > 20000 ? 1u : 3u); seed++)
            run_case(&cases[i], seed * 1000 + i);
}

/* The oracle itself: a case worked by hand.  prev {0, 10}, cur {1, 30}:
 * dmax = 30 / 1 (range 30, closest cross pair 0-1), coordinates 0, 10 and
 * 1, 29; level 0 pairs nothing, level 1 pairs 0 with 1 (cells 0 >> 1 ==
 * 1 >> 1), and 10 with 30 only at level 5 (10 >> 5 == 29 >> 5): two
 * iterations. */
static void test_oracle_by_hand(void **state)
{
    (void)state;
    double val[] = {0, 10, 1, 30};
    uint64_t okey[] = {1, 2, 1, 2};
    oracle_t o = {2, 2, 1, val, okey, calloc(4, 8), calloc(4, 1), calloc(4, 1),
                  malloc(2 * sizeof(uint32_t)), 0, 0, 0};
    o.partner[0] = o.partner[1] = FZ_NONE;
    oracle_solve(&o);
    assert_true(o.dmax == 30);
    assert_int_equal(o.n_pairs, 2);
    assert_int_equal(o.iterations, 2);
    assert_int_equal(o.partner[0], 0);
    assert_int_equal(o.partner[1], 1);
    free(o.coord);
    free(o.paired);
    free(o.missing);
    free(o.partner);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_by_hand),
        cmocka_unit_test(test_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
