/* cg: the NAS Parallel Benchmarks CG kernel (conjugate gradient on a
 * random sparse symmetric matrix), written from the NPB 2 specification
 * (NASA report RNR-94-007 and the NPB 2 kernel description).
 *
 * Usage: cg [S|W|A|B|C]   (default S).  Exit 0 when zeta verifies, 1 when not,
 * 2 on a bad argument.
 *
 * Loop structure (see docs/benchmarks.md): every OpenMP loop is a
 * `for (j = 0; j < na; j++)` with schedule(runtime), so OMP_SCHEDULE picks
 * static / dynamic,10 / dynamic,100 without rebuilding and each loop has
 * exactly ceil(na / chunk) chunks.  One parallel region per outer
 * iteration holds 105 such loops: 1 initialisation loop, 25 CG iterations
 * x 4 loops, 2 residual loops, 2 normalisation loops. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npb_common.h"

#define CG_ITMAX 25

struct cg_class {
    char name;
    int na, nonzer, niter;
    double shift, zeta_ref;
};

/* Problem sizes and reference zeta values of the NPB specification. */
static const struct cg_class cg_classes[] = {
    {'S', 1400, 7, 15, 10.0, 8.5971775078648},
    {'W', 7000, 8, 15, 12.0, 10.362595087124},
    {'A', 14000, 11, 15, 20.0, 17.130235054029},
    {'B', 75000, 13, 75, 60.0, 22.712745482631},
    {'C', 150000, 15, 75, 110.0, 28.973605592845},
};

/* The random stream shared by the whole matrix generation, as in NPB. */
static double tran = NPB_SEED;
static const double amult = NPB_AMULT;

/* Sparse matrix in CSR form (0-based). */
struct csr {
    int n;
    int *rowstr; /* n + 1 */
    int *colidx;
    double *a;
};

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "cg: out of memory allocating %zu x %zu bytes; use a smaller class\n", n,
                size);
        exit(1);
    }
    return p;
}

/* Random sparse vector with nz distinct nonzero positions in [0, n):
 * values and positions are drawn alternately from the stream, positions
 * as floor(nn1 * r) with nn1 the smallest power of two >= n (rejected when
 * >= n).  mark[] is all zero on entry and on exit. */
static void sprnvc(int n, int nz, double *v, int *iv, int *nzloc, int *mark)
{
    int nn1 = 1;
    do {
        nn1 *= 2;
    } while (nn1 < n);
    int nzv = 0, nzrow = 0;
    while (nzv < nz) {
        double vecelt = npb_randlc(&tran, amult);
        double vecloc = npb_randlc(&tran, amult);
        int i = (int)(nn1 * vecloc);
        if (i >= n)
            continue;
        if (mark[i] == 0) {
            mark[i] = 1;
            nzloc[nzrow++] = i;
            v[nzv] = vecelt;
            iv[nzv] = i;
            nzv++;
        }
    }
    for (int ii = 0; ii < nzrow; ii++)
        mark[nzloc[ii]] = 0;
}

/* Sets element i of the sparse vector (v, iv, *nzv) to val, appending it
 * when absent. */
static void vecset(double *v, int *iv, int *nzv, int i, double val)
{
    int set = 0;
    for (int k = 0; k < *nzv; k++) {
        if (iv[k] == i) {
            v[k] = val;
            set = 1;
        }
    }
    if (!set) {
        v[*nzv] = val;
        iv[*nzv] = i;
        (*nzv)++;
    }
}

/* Builds CSR from (row, col, value) triples, summing duplicates: a bucket
 * sort by row keeping triple order, then per row the columns in order of
 * first appearance (NPB's `sparse`). */
static void sparse(struct csr *m, int n, const int *arow, const int *acol, const double *aelt,
                   int nnza)
{
    int *rowstr = m->rowstr;
    double *x = xcalloc((size_t)n, sizeof *x);
    int *mark = xcalloc((size_t)n, sizeof *mark);
    int *nzloc = xcalloc((size_t)n, sizeof *nzloc);

    for (int j = 0; j <= n; j++)
        rowstr[j] = 0;
    for (int k = 0; k < nnza; k++)
        rowstr[arow[k] + 1]++;
    for (int j = 1; j <= n; j++)
        rowstr[j] += rowstr[j - 1];
    /* rowstr[j] is now the first slot of row j; fill and advance. */
    for (int k = 0; k < nnza; k++) {
        int s = rowstr[arow[k]]++;
        m->a[s] = aelt[k];
        m->colidx[s] = acol[k];
    }
    for (int j = n; j > 0; j--)
        rowstr[j] = rowstr[j - 1];
    rowstr[0] = 0;

    int nza = 0, jajp1 = rowstr[0];
    for (int j = 0; j < n; j++) {
        int nzrow = 0;
        for (int k = jajp1; k < rowstr[j + 1]; k++) {
            int i = m->colidx[k];
            x[i] += m->a[k];
            if (!mark[i] && x[i] != 0.0) {
                mark[i] = 1;
                nzloc[nzrow++] = i;
            }
        }
        for (int k = 0; k < nzrow; k++) {
            int i = nzloc[k];
            mark[i] = 0;
            double xi = x[i];
            x[i] = 0.0;
            if (xi != 0.0) {
                m->a[nza] = xi;
                m->colidx[nza] = i;
                nza++;
            }
        }
        jajp1 = rowstr[j + 1];
        rowstr[j + 1] = nza;
    }
    free(x);
    free(mark);
    free(nzloc);
}

/* NPB makea: A = sum over n random sparse outer products v v^T with
 * geometrically decreasing weights (condition ~ 1/rcond), plus
 * (rcond - shift) on the diagonal. */
static void makea(struct csr *m, int n, int nonzer, double rcond, double shift)
{
    size_t nz = (size_t)n * ((size_t)(nonzer + 1) * (nonzer + 1) + 1);
    int *arow = xcalloc(nz, sizeof *arow);
    int *acol = xcalloc(nz, sizeof *acol);
    double *aelt = xcalloc(nz, sizeof *aelt);
    double *v = xcalloc((size_t)nonzer + 1, sizeof *v);
    int *iv = xcalloc((size_t)nonzer + 1, sizeof *iv);
    int *nzloc = xcalloc((size_t)n, sizeof *nzloc);
    int *mark = xcalloc((size_t)n, sizeof *mark);

    double size = 1.0;
    double ratio = pow(rcond, 1.0 / (double)n);
    size_t nnza = 0;
    for (int iouter = 0; iouter < n; iouter++) {
        int nzv = nonzer;
        sprnvc(n, nzv, v, iv, nzloc, mark);
        vecset(v, iv, &nzv, iouter, 0.5);
        for (int ivelt = 0; ivelt < nzv; ivelt++) {
            int jcol = iv[ivelt];
            double scale = size * v[ivelt];
            for (int ivelt1 = 0; ivelt1 < nzv; ivelt1++) {
                arow[nnza] = iv[ivelt1];
                acol[nnza] = jcol;
                aelt[nnza] = v[ivelt1] * scale;
                nnza++;
            }
        }
        size *= ratio;
    }
    for (int i = 0; i < n; i++) {
        arow[nnza] = i;
        acol[nnza] = i;
        aelt[nnza] = rcond - shift;
        nnza++;
    }

    m->n = n;
    m->rowstr = xcalloc((size_t)n + 1, sizeof *m->rowstr);
    m->colidx = xcalloc(nnza, sizeof *m->colidx);
    m->a = xcalloc(nnza, sizeof *m->a);
    sparse(m, n, arow, acol, aelt, (int)nnza);

    free(arow);
    free(acol);
    free(aelt);
    free(v);
    free(iv);
    free(nzloc);
    free(mark);
}

struct cg_vectors {
    double *x, *z, *p, *q, *r;
};

/* Reductions are written by hand (a private partial sum added atomically,
 * then a barrier) instead of with reduction clauses: clang 19 at -O2
 * marks the body of a schedule(runtime) loop as free of loop-carried
 * memory dependences, and the vectorizer then miscompiles a reduction
 * clause's private copy in a one-level loop (x.x over 1400 ones gave 700).
 * A private scalar stays in a register and is vectorised correctly. */
#define CG_ADD_AND_SYNC(shared_var, part)                                                     \
    do {                                                                                      \
        _Pragma("omp atomic") shared_var += (part);                                           \
        _Pragma("omp barrier")                                                                \
    } while (0)

/* One outer iteration: 25 unpreconditioned CG iterations solving A z = x
 * from z = 0, the residual norm ||x - A z||, then x.z and x = z / ||z||.
 * Returns x.z (before normalisation) and stores ||x - A z|| in *rnorm. */
static double cg_outer(const struct csr *m, struct cg_vectors *w, double *rnorm)
{
    const int n = m->n;
    const int *rowstr = m->rowstr, *colidx = m->colidx;
    const double *a = m->a;
    double *x = w->x, *z = w->z, *p = w->p, *q = w->q, *r = w->r;
    /* Shared sums; each is reset by one thread while no thread reads or
     * adds to it (see the barrier argument at the reset). */
    double rho = 0.0, rho0 = 0.0, d = 0.0, sum = 0.0, xz = 0.0, zz = 0.0;

#pragma omp parallel default(none) shared(n, rowstr, colidx, a, x, z, p, q, r, rho, rho0, d, \
                                              sum, xz, zz)
    {
        double part = 0.0;
#pragma omp for schedule(runtime) nowait
        for (int j = 0; j < n; j++) {
            q[j] = 0.0;
            z[j] = 0.0;
            r[j] = x[j];
            p[j] = x[j];
            part += x[j] * x[j];
        }
        CG_ADD_AND_SYNC(rho, part);
        for (int cgit = 0; cgit < CG_ITMAX; cgit++) {
            /* Every thread computed beta from rho/rho0 before the barrier
             * that ended the previous loop, so they may be reset here;
             * the barrier of the q = A p loop orders the reset before
             * any thread adds to d or rho. */
#pragma omp single nowait
            {
                rho0 = rho;
                rho = 0.0;
                d = 0.0;
            }
#pragma omp for schedule(runtime)
            for (int j = 0; j < n; j++) {
                double s = 0.0;
                for (int k = rowstr[j]; k < rowstr[j + 1]; k++)
                    s += a[k] * p[colidx[k]];
                q[j] = s;
            }
            part = 0.0;
#pragma omp for schedule(runtime) nowait
            for (int j = 0; j < n; j++)
                part += p[j] * q[j];
            CG_ADD_AND_SYNC(d, part);
            double alpha = rho0 / d;
            part = 0.0;
#pragma omp for schedule(runtime) nowait
            for (int j = 0; j < n; j++) {
                z[j] += alpha * p[j];
                r[j] -= alpha * q[j];
                part += r[j] * r[j];
            }
            CG_ADD_AND_SYNC(rho, part);
            double beta = rho / rho0;
#pragma omp for schedule(runtime)
            for (int j = 0; j < n; j++)
                p[j] = r[j] + beta * p[j];
        }
#pragma omp for schedule(runtime)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = rowstr[j]; k < rowstr[j + 1]; k++)
                s += a[k] * z[colidx[k]];
            r[j] = s;
        }
        part = 0.0;
#pragma omp for schedule(runtime) nowait
        for (int j = 0; j < n; j++) {
            double dd = x[j] - r[j];
            part += dd * dd;
        }
        CG_ADD_AND_SYNC(sum, part);
        double pxz = 0.0, pzz = 0.0;
#pragma omp for schedule(runtime) nowait
        for (int j = 0; j < n; j++) {
            pxz += x[j] * z[j];
            pzz += z[j] * z[j];
        }
#pragma omp atomic
        xz += pxz;
        CG_ADD_AND_SYNC(zz, pzz);
        double scale = 1.0 / sqrt(zz);
#pragma omp for schedule(runtime)
        for (int j = 0; j < n; j++)
            x[j] = scale * z[j];
    }
    *rnorm = sqrt(sum);
    return xz;
}

static int usage(const char *msg)
{
    fprintf(stderr, "cg: %s\nusage: cg [S|W|A|B|C]   (NPB CG class, default S)\n", msg);
    return 2;
}

int main(int argc, char **argv)
{
    const struct cg_class *cls = &cg_classes[0];
    if (argc > 2)
        return usage("too many arguments");
    if (argc == 2) {
        if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
            printf("usage: cg [S|W|A|B|C]   (NPB CG class, default S)\n"
                   "OMP_SCHEDULE selects the loop schedule (e.g. static, dynamic,10).\n");
            return 0;
        }
        cls = NULL;
        for (size_t i = 0; i < sizeof cg_classes / sizeof cg_classes[0]; i++)
            if (strlen(argv[1]) == 1 && argv[1][0] == cg_classes[i].name)
                cls = &cg_classes[i];
        if (!cls)
            return usage("unknown class (expected S, W, A, B or C)");
    }

    const int n = cls->na;
    printf(" NPB CG (ompfuse): class %c, na = %d, nonzer = %d, niter = %d, shift = %g\n", cls->name,
           n, cls->nonzer, cls->niter, cls->shift);
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    printf(" Threads = %d, schedule kind = %d, chunk = %d\n", omp_get_max_threads(), (int)kind,
           chunk);

    double t0 = npb_wtime();
    tran = NPB_SEED;
    (void)npb_randlc(&tran, amult); /* NPB draws one number before makea. */
    struct csr m;
    makea(&m, n, cls->nonzer, 0.1, cls->shift);
    double tsetup = npb_wtime() - t0;

    struct cg_vectors w;
    w.x = xcalloc((size_t)n, sizeof(double));
    w.z = xcalloc((size_t)n, sizeof(double));
    w.p = xcalloc((size_t)n, sizeof(double));
    w.q = xcalloc((size_t)n, sizeof(double));
    w.r = xcalloc((size_t)n, sizeof(double));

    /* One untimed iteration to touch all data, then restart from x = 1. */
    double rnorm, zeta = 0.0;
    for (int j = 0; j < n; j++)
        w.x[j] = 1.0;
    (void)cg_outer(&m, &w, &rnorm);
    for (int j = 0; j < n; j++)
        w.x[j] = 1.0;

    t0 = npb_wtime();
    for (int it = 1; it <= cls->niter; it++) {
        double xz = cg_outer(&m, &w, &rnorm);
        zeta = cls->shift + 1.0 / xz;
        if (it == 1 || it == cls->niter || it % 5 == 0)
            printf("   iteration %3d  ||r|| = %20.14e  zeta = %20.13e\n", it, rnorm, zeta);
    }
    double tcg = npb_wtime() - t0;

    printf(" Class = %c\n", cls->name);
    printf(" Setup time = %.3f s, CG time = %.3f s\n", tsetup, tcg);
    int ok = npb_verify("zeta", zeta, cls->zeta_ref);

    free(w.x);
    free(w.z);
    free(w.p);
    free(w.q);
    free(w.r);
    free(m.rowstr);
    free(m.colidx);
    free(m.a);
    return ok ? 0 : 1;
}
