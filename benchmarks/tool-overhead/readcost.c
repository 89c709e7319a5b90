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
    int n = 100000;
    double a = now();
    for (int i = 0; i < n; i++)
        ompf_cnt_group_read(g, &x);
    double b = now();
    printf("read %s: %.0f ns per read (%s)\n", list, (b - a) / n,
           ompf_cnt_group_uses_rdpmc(g) ? "rdpmc" : "read()");
    ompf_cnt_group_close(g);
    ompf_cnt_set_destroy(s);
    return 0;
}
