/* Prints random histogram pairs (seeded) with this library's exact EMD, and
 * random samples with their Spearman coefficient, for the independent
 * oracle eval_oracle.py (POT ot.emd2, scipy.stats.spearmanr).
 *   emd_dump SEED N_EMD N_SPEARMAN
 * Lines: "emd m n a[m] b[n] pa[2m] pb[2n] value"
 *        "spearman n x[n] y[n] rho"                                   */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ompfuse/evaluate.h"

static uint64_t rng_state;
static uint64_t rnd(void)
{ /* splitmix64: reproducible everywhere */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double unif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }
static unsigned pick(unsigned lo, unsigned hi) { return lo + (unsigned)(rnd() % (hi - lo + 1)); }

static void point(int style, double *p)
{
    switch (style) {
    case 0: /* continuous in and around a 10x10 grid */
        p[0] = unif() * 14 - 2;
        p[1] = unif() * 14 - 2;
        break;
    case 1: /* bin centres of a 12x12 grid: many equal costs (degenerate) */
        p[0] = (double)pick(0, 11) - 0.5;
        p[1] = (double)pick(0, 11) - 0.5;
        break;
    default: /* a few far outliers */
        p[0] = unif() < 0.1 ? unif() * 1000 - 500 : unif() * 10;
        p[1] = unif() < 0.1 ? -unif() * 300 : unif() * 10;
        break;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: emd_dump SEED N_EMD N_SPEARMAN\n");
        return 2;
    }
    rng_state = strtoull(argv[1], NULL, 10);
    int n_emd = atoi(argv[2]), n_sp = atoi(argv[3]);
    ompf_emd_ws_t *ws;
    if (ompf_emd_ws_create(&ws))
        return 1;
    for (int c = 0; c < n_emd; c++) {
        /* varied sparsity: from 1 to all 144 bins of a 12x12 histogram */
        unsigned m = pick(1, 144), n = pick(1, 144);
        if (c % 7 == 0)
            m = pick(1, 4);
        if (c % 11 == 0)
            n = pick(1, 4);
        int style = (int)(rnd() % 3);
        int same = c % 13 == 0; /* identical histograms: EMD must be 0 */
        /* nearly equal: a copy with 1-3 counts moved (tiny EMDs, where a
         * relative error is hardest to keep) */
        int near = !same && c % 4 == 1;
        if (same)
            n = m;
        if (near)
            n = m + 1; /* room for one new bin */
        int64_t *a = malloc(m * sizeof *a), *b = malloc(n * sizeof *b);
        double *pa = malloc(2 * m * sizeof *pa), *pb = malloc(2 * n * sizeof *pb);
        unsigned maxc = (c % 5 == 0) ? 3 : 2000; /* small counts: ties */
        for (unsigned i = 0; i < m; i++) {
            a[i] = pick(1, maxc);
            point(style, pa + 2 * i);
        }
        for (unsigned j = 0; j < n && near; j++) {
            if (j < m) {
                b[j] = a[j];
                pb[2 * j] = pa[2 * j];
                pb[2 * j + 1] = pa[2 * j + 1];
            } else {
                b[j] = 0; /* the new bin, used if a move goes there */
                point(style, pb + 2 * j);
            }
        }
        for (unsigned k = 0, moves = pick(1, 3); near && k < moves; k++) {
            unsigned src = pick(0, m - 1), t = 0;
            while (t < m && b[src] < 2) { /* a bin keeping a count > 0 */
                src = (src + 1) % m;
                t++;
            }
            if (t == m)
                break;
            unsigned dst = m >= 2 && rnd() % 2 ? pick(0, m - 1) : m;
            if (dst == src)
                dst = m;
            b[src]--;
            b[dst]++;
        }
        if (near && b[m] == 0)
            n = m; /* no move went to the new bin */
        for (unsigned j = 0; j < n && !near; j++) {
            if (same) {
                b[j] = a[j] * 3;
                pb[2 * j] = pa[2 * j];
                pb[2 * j + 1] = pa[2 * j + 1];
            } else {
                b[j] = pick(1, maxc);
                point(style, pb + 2 * j);
            }
        }
        double v;
        int rc = ompf_emd_2d(ws, m, a, pa, n, b, pb, &v, NULL);
        if (rc) {
            fprintf(stderr, "emd_dump: case %d failed: %s\n", c, ompf_strerror(rc));
            return 1;
        }
        printf("emd %u %u", m, n);
        for (unsigned i = 0; i < m; i++) printf(" %" PRId64, a[i]);
        for (unsigned j = 0; j < n; j++) printf(" %" PRId64, b[j]);
        for (unsigned i = 0; i < 2 * m; i++) printf(" %.17g", pa[i]);
        for (unsigned j = 0; j < 2 * n; j++) printf(" %.17g", pb[j]);
        printf(" %.17g\n", v);
        free(a); free(b); free(pa); free(pb);
    }
    for (int c = 0; c < n_sp; c++) {
        unsigned n = pick(2, 300);
        double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
        unsigned levels = (c % 3 == 0) ? pick(1, 5) : 0; /* many ties */
        for (unsigned i = 0; i < n; i++) {
            x[i] = levels ? (double)pick(0, levels) : unif();
            y[i] = (c % 2 ? x[i] : 0) + (levels ? (double)pick(0, levels) : unif());
            if (c % 10 == 0)
                y[i] = 7; /* constant: defined as 0 here */
        }
        printf("spearman %u", n);
        for (unsigned i = 0; i < n; i++) printf(" %.17g", x[i]);
        for (unsigned i = 0; i < n; i++) printf(" %.17g", y[i]);
        printf(" %.17g\n", ompf_spearman(x, y, n));
        free(x); free(y);
    }
    ompf_emd_ws_destroy(ws);
    return 0;
}
