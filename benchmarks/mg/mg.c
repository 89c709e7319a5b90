/* mg: the NAS Parallel Benchmarks MG kernel (V-cycle multigrid for the
 * 3-D Poisson equation on a periodic grid), written from the NPB 2
 * specification (NASA report RNR-94-007, NPB 2 kernel description).
 *
 * Usage: mg [S|W|A|B|C]   (default S).  Exit 0 when the L2 norm of the final
 * residual verifies, 1 when not, 2 on a bad argument.
 *
 * Loop structure (see docs/benchmarks.md): every kernel is one
 * `#pragma omp parallel for schedule(runtime)` over the outermost grid
 * index (i3), so OMP_SCHEDULE picks the schedule and a kernel on a grid
 * with m points per side (m = n + 2 with ghost cells) has a loop of
 *   resid, psinv, rprj3 (coarse side), norm2u3, comm3 x/y faces: n trips
 *   interp: n_coarse + 1 trips;   zero3, comm3 z faces: n + 2 trips. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cg/npb_common.h"

/* Largest grid side (with ghost cells) of the supported classes. */
#define MG_MAXM (512 + 2)

struct mg_class {
    char name;
    int n;  /* grid points per side, a power of two */
    int nit;
    double ref; /* L2 norm of the final residual */
    int smoother_b; /* 1: the specification's S(b) smoother, 0: S(a) */
};

/* Sizes and reference norms of the NPB specification (W as in NPB 3). */
static const struct mg_class mg_classes[] = {
    {'S', 32, 4, 0.5307707005734e-04, 0},
    {'W', 128, 4, 0.6467329375339e-05, 0},
    {'A', 256, 4, 0.2433365309069e-05, 0},
    {'B', 256, 20, 0.1800564401355e-05, 1},
    {'C', 512, 20, 0.5706732285740e-06, 1},
};

/* A cubic grid of m^3 points stored x fastest; points 0 and m-1 of each
 * axis are periodic ghost copies of m-2 and 1. */
struct grid {
    int m;
    double *v;
};

#define G(g, i1, i2, i3) ((g)->v[((size_t)(i3) * (size_t)(g)->m + (size_t)(i2)) * (size_t)(g)->m + (size_t)(i1)])

static void grid_alloc(struct grid *g, int n)
{
    g->m = n + 2;
    size_t cnt = (size_t)g->m * (size_t)g->m * (size_t)g->m;
    g->v = calloc(cnt, sizeof(double));
    if (!g->v) {
        fprintf(stderr, "mg: out of memory allocating a %d^3 grid; use a smaller class\n", g->m);
        exit(1);
    }
}

static void zero3(struct grid *u)
{
    const int m = u->m;
#pragma omp parallel for schedule(runtime)
    for (int i3 = 0; i3 < m; i3++)
        memset(&G(u, 0, 0, i3), 0, sizeof(double) * (size_t)m * (size_t)m);
}

/* Periodic boundary exchange: first the x and y ghost faces of every
 * interior plane (one loop over i3), then the two z ghost planes. */
static void comm3(struct grid *u)
{
    const int m = u->m;
#pragma omp parallel for schedule(runtime)
    for (int i3 = 1; i3 < m - 1; i3++) {
        for (int i2 = 1; i2 < m - 1; i2++) {
            G(u, 0, i2, i3) = G(u, m - 2, i2, i3);
            G(u, m - 1, i2, i3) = G(u, 1, i2, i3);
        }
        for (int i1 = 0; i1 < m; i1++) {
            G(u, i1, 0, i3) = G(u, i1, m - 2, i3);
            G(u, i1, m - 1, i3) = G(u, i1, 1, i3);
        }
    }
#pragma omp parallel for schedule(runtime)
    for (int i2 = 0; i2 < m; i2++) {
        for (int i1 = 0; i1 < m; i1++) {
            G(u, i1, i2, 0) = G(u, i1, i2, m - 2);
            G(u, i1, i2, m - 1) = G(u, i1, i2, 1);
        }
    }
}

/* r = v - A u with the 27-point operator a[0..3] (a[1] = 0 as in NPB).
 * v and r may be the same grid: each point of v is read only to compute
 * the same point of r. */
static void resid(const struct grid *u, const struct grid *v, struct grid *r, const double a[4])
{
    const int m = u->m;
#pragma omp parallel for schedule(runtime)
    for (int i3 = 1; i3 < m - 1; i3++) {
        double u1[MG_MAXM], u2[MG_MAXM];
        for (int i2 = 1; i2 < m - 1; i2++) {
            for (int i1 = 0; i1 < m; i1++) {
                u1[i1] = G(u, i1, i2 - 1, i3) + G(u, i1, i2 + 1, i3) + G(u, i1, i2, i3 - 1) +
                         G(u, i1, i2, i3 + 1);
                u2[i1] = G(u, i1, i2 - 1, i3 - 1) + G(u, i1, i2 + 1, i3 - 1) +
                         G(u, i1, i2 - 1, i3 + 1) + G(u, i1, i2 + 1, i3 + 1);
            }
            for (int i1 = 1; i1 < m - 1; i1++)
                G(r, i1, i2, i3) = G(v, i1, i2, i3) - a[0] * G(u, i1, i2, i3) -
                                   a[2] * (u2[i1] + u1[i1 - 1] + u1[i1 + 1]) -
                                   a[3] * (u2[i1 - 1] + u2[i1 + 1]);
        }
    }
    comm3(r);
}

/* Smoother u = u + C r with the 27-point operator c[0..3] (c[3] = 0). */
static void psinv(const struct grid *r, struct grid *u, const double c[4])
{
    const int m = u->m;
#pragma omp parallel for schedule(runtime)
    for (int i3 = 1; i3 < m - 1; i3++) {
        double r1[MG_MAXM], r2[MG_MAXM];
        for (int i2 = 1; i2 < m - 1; i2++) {
            for (int i1 = 0; i1 < m; i1++) {
                r1[i1] = G(r, i1, i2 - 1, i3) + G(r, i1, i2 + 1, i3) + G(r, i1, i2, i3 - 1) +
                         G(r, i1, i2, i3 + 1);
                r2[i1] = G(r, i1, i2 - 1, i3 - 1) + G(r, i1, i2 + 1, i3 - 1) +
                         G(r, i1, i2 - 1, i3 + 1) + G(r, i1, i2 + 1, i3 + 1);
            }
            for (int i1 = 1; i1 < m - 1; i1++)
                G(u, i1, i2, i3) += c[0] * G(r, i1, i2, i3) +
                                    c[1] * (G(r, i1 - 1, i2, i3) + G(r, i1 + 1, i2, i3) + r1[i1]) +
                                    c[2] * (r2[i1] + r1[i1 - 1] + r1[i1 + 1]);
        }
    }
    comm3(u);
}

/* Restriction s = P r onto the next coarser grid (trilinear full
 * weighting): coarse interior point j sits on fine point 2j. */
static void rprj3(const struct grid *r, struct grid *s)
{
    const int mj = s->m;
#pragma omp parallel for schedule(runtime)
    for (int j3 = 1; j3 < mj - 1; j3++) {
        double x1[MG_MAXM], y1[MG_MAXM];
        const int i3 = 2 * j3;
        for (int j2 = 1; j2 < mj - 1; j2++) {
            const int i2 = 2 * j2;
            for (int j1 = 1; j1 < mj; j1++) {
                const int i1 = 2 * j1;
                x1[i1 - 1] = G(r, i1 - 1, i2 - 1, i3) + G(r, i1 - 1, i2 + 1, i3) +
                             G(r, i1 - 1, i2, i3 - 1) + G(r, i1 - 1, i2, i3 + 1);
                y1[i1 - 1] = G(r, i1 - 1, i2 - 1, i3 - 1) + G(r, i1 - 1, i2 - 1, i3 + 1) +
                             G(r, i1 - 1, i2 + 1, i3 - 1) + G(r, i1 - 1, i2 + 1, i3 + 1);
            }
            for (int j1 = 1; j1 < mj - 1; j1++) {
                const int i1 = 2 * j1;
                double y2 = G(r, i1, i2 - 1, i3 - 1) + G(r, i1, i2 - 1, i3 + 1) +
                            G(r, i1, i2 + 1, i3 - 1) + G(r, i1, i2 + 1, i3 + 1);
                double x2 = G(r, i1, i2 - 1, i3) + G(r, i1, i2 + 1, i3) + G(r, i1, i2, i3 - 1) +
                            G(r, i1, i2, i3 + 1);
                G(s, j1, j2, j3) = 0.5 * G(r, i1, i2, i3) +
                                   0.25 * (G(r, i1 - 1, i2, i3) + G(r, i1 + 1, i2, i3) + x2) +
                                   0.125 * (x1[i1 - 1] + x1[i1 + 1] + y2) +
                                   0.0625 * (y1[i1 - 1] + y1[i1 + 1]);
            }
        }
    }
    comm3(s);
}

/* Prolongation u = u + Q z from the coarser grid z (trilinear
 * interpolation); coarse plane i3 feeds fine planes 2 i3 and 2 i3 + 1. */
static void interp(const struct grid *z, struct grid *u)
{
    const int mm = z->m;
#pragma omp parallel for schedule(runtime)
    for (int i3 = 0; i3 < mm - 1; i3++) {
        double z1[MG_MAXM], z2[MG_MAXM], z3[MG_MAXM];
        for (int i2 = 0; i2 < mm - 1; i2++) {
            for (int i1 = 0; i1 < mm; i1++) {
                z1[i1] = G(z, i1, i2 + 1, i3) + G(z, i1, i2, i3);
                z2[i1] = G(z, i1, i2, i3 + 1) + G(z, i1, i2, i3);
                z3[i1] = G(z, i1, i2 + 1, i3 + 1) + G(z, i1, i2, i3 + 1) + z1[i1];
            }
            for (int i1 = 0; i1 < mm - 1; i1++) {
                G(u, 2 * i1, 2 * i2, 2 * i3) += G(z, i1, i2, i3);
                G(u, 2 * i1 + 1, 2 * i2, 2 * i3) += 0.5 * (G(z, i1 + 1, i2, i3) + G(z, i1, i2, i3));
            }
            for (int i1 = 0; i1 < mm - 1; i1++) {
                G(u, 2 * i1, 2 * i2 + 1, 2 * i3) += 0.5 * z1[i1];
                G(u, 2 * i1 + 1, 2 * i2 + 1, 2 * i3) += 0.25 * (z1[i1] + z1[i1 + 1]);
            }
            for (int i1 = 0; i1 < mm - 1; i1++) {
                G(u, 2 * i1, 2 * i2, 2 * i3 + 1) += 0.5 * z2[i1];
                G(u, 2 * i1 + 1, 2 * i2, 2 * i3 + 1) += 0.25 * (z2[i1] + z2[i1 + 1]);
            }
            for (int i1 = 0; i1 < mm - 1; i1++) {
                G(u, 2 * i1, 2 * i2 + 1, 2 * i3 + 1) += 0.25 * z3[i1];
                G(u, 2 * i1 + 1, 2 * i2 + 1, 2 * i3 + 1) += 0.125 * (z3[i1] + z3[i1 + 1]);
            }
        }
    }
}

/* L2 norm sqrt(sum r^2 / n^3) and max norm over the interior.  The sums
 * are combined by hand (private partials, atomic / critical) rather than
 * with reduction clauses; see cg.c for the clang 19 miscompile this
 * avoids. */
static void norm2u3(const struct grid *r, int n, double *rnm2, double *rnmu)
{
    const int m = r->m;
    double s = 0.0, mx = 0.0;
#pragma omp parallel default(none) shared(r, m, s, mx)
    {
        double ps = 0.0, pmx = 0.0;
#pragma omp for schedule(runtime) nowait
        for (int i3 = 1; i3 < m - 1; i3++)
            for (int i2 = 1; i2 < m - 1; i2++)
                for (int i1 = 1; i1 < m - 1; i1++) {
                    double v = G(r, i1, i2, i3);
                    ps += v * v;
                    if (fabs(v) > pmx)
                        pmx = fabs(v);
                }
#pragma omp critical(mg_norm)
        {
            s += ps;
            if (pmx > mx)
                mx = pmx;
        }
    }
    *rnm2 = sqrt(s / ((double)n * (double)n * (double)n));
    *rnmu = mx;
}

/* Initial right-hand side: the interior is filled with the NPB random
 * stream in x-fastest order (the value at linear index L is the (L+1)-th
 * number after the seed), then the ten largest values become +1, the
 * ten smallest -1 and everything else 0. */
#define MG_NPTS 10
static void zran3(struct grid *z, int n)
{
    const int m = z->m;
    double x = NPB_SEED;
    for (int i3 = 1; i3 < m - 1; i3++)
        for (int i2 = 1; i2 < m - 1; i2++)
            npb_vranlc(n, &x, NPB_AMULT, &G(z, 1, i2, i3));

    /* hi[] ascending (hi[0] the smallest kept), lo[] descending. */
    double hi[MG_NPTS], lo[MG_NPTS];
    size_t hipos[MG_NPTS], lopos[MG_NPTS];
    for (int k = 0; k < MG_NPTS; k++) {
        hi[k] = 0.0;
        lo[k] = 1.0;
        hipos[k] = lopos[k] = 0;
    }
    for (int i3 = 1; i3 < m - 1; i3++)
        for (int i2 = 1; i2 < m - 1; i2++)
            for (int i1 = 1; i1 < m - 1; i1++) {
                double v = G(z, i1, i2, i3);
                size_t pos = ((size_t)i3 * (size_t)m + (size_t)i2) * (size_t)m + (size_t)i1;
                if (v > hi[0]) {
                    int k = 0;
                    while (k + 1 < MG_NPTS && hi[k + 1] < v) {
                        hi[k] = hi[k + 1];
                        hipos[k] = hipos[k + 1];
                        k++;
                    }
                    hi[k] = v;
                    hipos[k] = pos;
                }
                if (v < lo[0]) {
                    int k = 0;
                    while (k + 1 < MG_NPTS && lo[k + 1] > v) {
                        lo[k] = lo[k + 1];
                        lopos[k] = lopos[k + 1];
                        k++;
                    }
                    lo[k] = v;
                    lopos[k] = pos;
                }
            }
    zero3(z);
    for (int k = 0; k < MG_NPTS; k++) {
        z->v[lopos[k]] = -1.0;
        z->v[hipos[k]] = +1.0;
    }
    comm3(z);
}

struct mg {
    int lt;           /* finest level; level k has 2^k points per side */
    struct grid *u;   /* u[1..lt] */
    struct grid *r;   /* r[1..lt] */
    struct grid v;    /* right-hand side on level lt */
    double a[4], c[4];
};

/* One V-cycle: restrict the residual down to level 1, smooth there, then
 * on the way up interpolate, recompute the residual and smooth. */
static void mg3p(struct mg *g)
{
    const int lt = g->lt;
    for (int k = lt; k > 1; k--)
        rprj3(&g->r[k], &g->r[k - 1]);
    zero3(&g->u[1]);
    psinv(&g->r[1], &g->u[1], g->c);
    for (int k = 2; k < lt; k++) {
        zero3(&g->u[k]);
        interp(&g->u[k - 1], &g->u[k]);
        resid(&g->u[k], &g->r[k], &g->r[k], g->a);
        psinv(&g->r[k], &g->u[k], g->c);
    }
    interp(&g->u[lt - 1], &g->u[lt]);
    resid(&g->u[lt], &g->v, &g->r[lt], g->a);
    psinv(&g->r[lt], &g->u[lt], g->c);
}

static int usage(const char *msg)
{
    fprintf(stderr, "mg: %s\nusage: mg [S|W|A|B|C]   (NPB MG class, default S)\n", msg);
    return 2;
}

int main(int argc, char **argv)
{
    const struct mg_class *cls = &mg_classes[0];
    if (argc > 2)
        return usage("too many arguments");
    if (argc == 2) {
        if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
            printf("usage: mg [S|W|A|B|C]   (NPB MG class, default S)\n"
                   "OMP_SCHEDULE selects the loop schedule (e.g. static, dynamic,10).\n");
            return 0;
        }
        cls = NULL;
        for (size_t i = 0; i < sizeof mg_classes / sizeof mg_classes[0]; i++)
            if (strlen(argv[1]) == 1 && argv[1][0] == mg_classes[i].name)
                cls = &mg_classes[i];
        if (!cls)
            return usage("unknown class (expected S, W, A, B or C)");
    }
    const int n = cls->n;
    printf(" NPB MG (ompfuse): class %c, grid %d^3, %d iterations\n", cls->name, n, cls->nit);
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    printf(" Threads = %d, schedule kind = %d, chunk = %d\n", omp_get_max_threads(), (int)kind,
           chunk);

    struct mg g;
    g.lt = 0;
    while ((1 << g.lt) < n)
        g.lt++;
    g.u = calloc((size_t)g.lt + 1, sizeof *g.u);
    g.r = calloc((size_t)g.lt + 1, sizeof *g.r);
    if (!g.u || !g.r) {
        fprintf(stderr, "mg: out of memory\n");
        return 1;
    }
    for (int k = 1; k <= g.lt; k++) {
        grid_alloc(&g.u[k], 1 << k);
        grid_alloc(&g.r[k], 1 << k);
    }
    grid_alloc(&g.v, n);
    /* Operator A (a) and smoother S(a) or S(b) (c) of the specification. */
    g.a[0] = -8.0 / 3.0;
    g.a[1] = 0.0;
    g.a[2] = 1.0 / 6.0;
    g.a[3] = 1.0 / 12.0;
    if (cls->smoother_b) {
        g.c[0] = -3.0 / 17.0;
        g.c[1] = 1.0 / 33.0;
        g.c[2] = -1.0 / 61.0;
    } else {
        g.c[0] = -3.0 / 8.0;
        g.c[1] = 1.0 / 32.0;
        g.c[2] = -1.0 / 64.0;
    }
    g.c[3] = 0.0;

    double rnm2, rnmu;
    struct grid *u = &g.u[g.lt], *r = &g.r[g.lt];
    /* One untimed iteration to touch all data, then start again. */
    zero3(u);
    zran3(&g.v, n);
    resid(u, &g.v, r, g.a);
    mg3p(&g);
    resid(u, &g.v, r, g.a);
    zero3(u);
    zran3(&g.v, n);

    double t0 = npb_wtime();
    resid(u, &g.v, r, g.a);
    norm2u3(r, n, &rnm2, &rnmu);
    printf("   initial residual: L2 = %20.13e\n", rnm2);
    for (int it = 1; it <= cls->nit; it++) {
        mg3p(&g);
        resid(u, &g.v, r, g.a);
    }
    norm2u3(r, n, &rnm2, &rnmu);
    double t = npb_wtime() - t0;

    printf(" Class = %c\n", cls->name);
    printf(" MG time = %.3f s, max norm = %20.13e\n", t, rnmu);
    int ok = npb_verify("L2 norm", rnm2, cls->ref);

    for (int k = 1; k <= g.lt; k++) {
        free(g.u[k].v);
        free(g.r[k].v);
    }
    free(g.v.v);
    free(g.u);
    free(g.r);
    return ok ? 0 : 1;
}
