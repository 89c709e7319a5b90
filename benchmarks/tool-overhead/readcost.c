/* Cost of one counter-group read with libompfcounters (the read the tool
 * does per boundary) and of the timestamp source. */
#include <stdio.h>
#include <time.h>

#include "ompfuse/counters.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *list = argc > 1 ? argv[1] : "perf::TASK-CLOCK,perf::PAGE-FAULTS";
    ompf_cnt_set_t *s;
    ompf_error_t err;
    if (ompf_cnt_set_parse(list, &s, &err)) {
        fprintf(stderr, "readcost: %s\n", err.msg);
        return 1;
    }
    ompf_cnt_group_t *g;
    if (ompf_cnt_group_open(s, 0, -1, 0, &g) || !ompf_cnt_group_opened(g)) {
        fprintf(stderr, "readcost: cannot open %s\n", list);
        return 1;
    }
    ompf_cnt_sample_t x;
    /* 7 batches: best and median (the machine is shared) */
    enum { BATCHES = 7, N = 20000 };
    double per[BATCHES];
    for (int k = 0; k < BATCHES; k++) {
        double a = now();
        for (int i = 0; i < N; i++)
            ompf_cnt_group_read(g, &x);
        per[k] = (now() - a) / N;
    }
    for (int i = 1; i < BATCHES; i++) /* insertion sort */
        for (int j = i; j > 0 && per[j] < per[j - 1]; j--) {
            double t = per[j];
            per[j] = per[j - 1];
            per[j - 1] = t;
        }
    printf("read %s: %.0f / %.0f ns per read, best / median (%s)\n", list, per[0],
           per[BATCHES / 2], ompf_cnt_group_uses_rdpmc(g) ? "rdpmc" : "read()");
    ompf_cnt_group_close(g);
    ompf_cnt_set_destroy(s);
    return 0;
}
