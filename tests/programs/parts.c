/* Tasks that run in parts (issue 16): `single` creates NT untied parent
 * tasks; each works, creates NC child tasks, waits for them (taskwait: a
 * scheduling point where the parent is suspended while this thread runs
 * a child), works, yields (taskyield: it may be suspended again, and an
 * untied task may resume on another thread) and works again.
 * XUs: NT * (1 + NC).  A parent runs in at most 2 + NC parts (one more
 * than its suspensions: NC children and one yield); at 1 thread in at
 * least 1 + NC (its children run on this thread inside its taskwait).
 * usage: prog_parts [NT [NC [abort]]]  (default 6 3; abort: abort() after
 * printing the checksum, to test the salvage of a fatal ending) */
#include <stdlib.h>
#include <string.h>

#include "prog_util.h"

int main(int argc, char **argv)
{
    int nt = argc > 1 ? atoi(argv[1]) : 6, nc = argc > 2 ? atoi(argv[2]) : 3;
    if (nt < 1 || nt > 64 || nc < 0 || nc > 64)
        return 2;
    static double a[64], b[64], c[64][64];
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < nt; i++) {
#pragma omp task untied firstprivate(i)
        {
            a[i] = prog_work(50000, i);
            for (int k = 0; k < nc; k++) {
#pragma omp task firstprivate(i, k)
                c[i][k] = prog_work(50000, 100 + i * 64 + k);
            }
#pragma omp taskwait
            a[i] += prog_work(50000, 2 * i);
#pragma omp taskyield
            b[i] = prog_work(50000, 10 + i);
        }
    }
    double all[64 * 66];
    int n = 0;
    for (int i = 0; i < nt; i++) {
        all[n++] = a[i];
        all[n++] = b[i];
        for (int k = 0; k < nc; k++)
            all[n++] = c[i][k];
    }
    prog_checksum("parts", all, n);
    if (argc > 3 && !strcmp(argv[3], "abort")) {
        fflush(stdout);
        abort();
    }
    return 0;
}
