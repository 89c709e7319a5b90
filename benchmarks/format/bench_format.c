/* Profile file format benchmark: writes N XU records (2 events) with the
 * streaming writer from T threads, reads the file back, rewrites it with
 * ompf_profile_write, and prints bytes per XU and records per second.
 *   build/bin/bench_format [N=10000000] [T=2] [DIR=/tmp] [keep]
 * The records imitate a task-parallel run: monotone start times per
 * thread, one label node per XU under a few hundred parents, a handful of
 * constructs, TASK-CLOCK in ns and PAGE-FAULTS as small counts.  Like the
 * OMPT tool with a worksharing construct, every writer thread names the
 * parents under ids of its own, so the reader merges equal label nodes.
 * "keep" leaves the streamed file in DIR (its name is printed) to time
 * other readers on it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ompfuse/file.h"

typedef struct warg {
    ompf_writer_t *w;
    uint32_t t, nthreads;
    uint64_t n;
    int rc;
} warg_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the whole process (all threads): on a busy machine wall
 * time measures the neighbours too. */
static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *writer(void *arg)
{
    warg_t *a = arg;
    ompf_wstream_t *s;
    if ((a->rc = ompf_wstream_create(a->w, 0, &s)))
        return NULL;
    uint64_t seed = 0x9e3779b97f4a7c15ULL * (a->t + 1);
    ompf_construct_t c = {.module = "/usr/bin/app", .build_id = "0123abcd", .kind = OMPF_CK_TASK};
    for (uint64_t k = 0; k < 4; k++) {
        c.offset = 0x4010a0 + 0x40 * k;
        a->rc |= ompf_wstream_construct(s, k + 1, &c);
    }
    /* Parent labels 0.1 .. 0.256, named by every thread under ids of its
     * own (bits 40 and up: the thread); XU labels follow. */
    uint64_t base = (uint64_t)(a->t + 1) << 40;
    for (uint64_t k = 1; k <= 256; k++)
        a->rc |= ompf_wstream_label(s, base + k, 0, k);
    uint64_t t_ns = 1000;
    for (uint64_t i = a->t; i < a->n && !a->rc; i += a->nthreads) {
        uint64_t label = 1000 + i;
        a->rc |= ompf_wstream_label(s, label, base + 1 + i % 256, i / 256);
        uint64_t dur = 2000 + rng(&seed) % 50000;
        ompf_xu_t x = {.id = i, .thread = a->t, .team_thread = a->t, .team_size = a->nthreads,
                       .parts = 1, .cpu = (int32_t)a->t, .core = (int32_t)a->t, .numa = 0,
                       .kind = OMPF_XU_TASK, .start_ns = t_ns, .end_ns = t_ns + dur};
        t_ns += dur + rng(&seed) % 500;
        double v[2] = {(double)(dur - rng(&seed) % 300), (double)(rng(&seed) % 4 == 0)};
        a->rc |= ompf_wstream_xu(s, &x, 1 + i % 4, label, v);
    }
    double tot[2] = {1e9, 100}, gap[2] = {1e6, 1}, en[2] = {1e9, 1e9}, run[2] = {1e9, 1e9};
    ompf_thread_t th = {.index = a->t, .os_tid = 1000 + (int32_t)a->t, .total = tot,
                        .gap = gap, .enabled_ns = en, .running_ns = run};
    a->rc |= ompf_wstream_thread(s, &th);
    return NULL;
}

static double file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) ? 0 : (double)st.st_size;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ULL;
    uint32_t nt = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 2;
    const char *dir = argc > 3 ? argv[3] : "/tmp";
    int keep = argc > 4 && !strcmp(argv[4], "keep");
    if (!n || !nt || nt > 256 || (argc > 4 && !keep) || argc > 5) {
        fprintf(stderr, "usage: bench_format [N] [THREADS] [DIR] [keep]\n");
        return 2;
    }
    char path[1024], path2[1024];
    snprintf(path, sizeof path, "%s/bench-format-%ld.ompf", dir, (long)getpid());
    snprintf(path2, sizeof path2, "%s/bench-format-%ld-rewritten.ompf", dir, (long)getpid());
    ompf_profile_t *h;
    ompf_profile_create(&h);
    ompf_meta_set(h, "program", "bench_format");
    ompf_event_t e0 = {.name = "perf::TASK-CLOCK", .source = -1};
    ompf_event_t e1 = {.name = "perf::PAGE-FAULTS", .source = -1};
    ompf_event_add(h, &e0, NULL);
    ompf_event_add(h, &e1, NULL);

    ompf_error_t err;
    ompf_writer_t *w;
    double t0 = now(), c0 = cpu();
    if (ompf_writer_create(path, h, &w, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    pthread_t tid[256];
    warg_t args[256];
    for (uint32_t t = 0; t < nt; t++) {
        args[t] = (warg_t){.w = w, .t = t, .nthreads = nt, .n = n};
        pthread_create(&tid[t], NULL, writer, &args[t]);
    }
    int bad = 0;
    for (uint32_t t = 0; t < nt; t++) {
        pthread_join(tid[t], NULL);
        bad |= args[t].rc;
    }
    if (bad || ompf_writer_finish(w, NULL, &err)) {
        fprintf(stderr, "write failed: %s\n", bad ? ompf_strerror(bad) : err.msg);
        return 1;
    }
    double tw = now() - t0, cw = cpu() - c0;
    double bytes = file_size(path);

    t0 = now();
    c0 = cpu();
    ompf_profile_t *p;
    ompf_read_info_t info;
    if (ompf_profile_read(path, &p, &info, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double tr = now() - t0, cr = cpu() - c0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (ompf_xu_count(p) != n) {
        fprintf(stderr, "read %zu XUs, wrote %llu\n", ompf_xu_count(p), (unsigned long long)n);
        return 1;
    }

    t0 = now();
    c0 = cpu();
    if (ompf_profile_write(p, path2, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double tw2 = now() - t0, cw2 = cpu() - c0;
    double bytes2 = file_size(path2);

    printf("XUs: %llu, events: 2, writer threads: %u, label nodes: %zu\n",
           (unsigned long long)n, nt, ompf_label_count(p));
    printf("%-13s %8s %8s %14s %10s\n", "", "wall s", "cpu s", "XUs/s (wall)", "bytes/XU");
    printf("%-13s %8.2f %8.2f %14.0f %10.2f  (%.1f MB)\n", "stream write", tw, cw, n / tw,
           bytes / n, bytes / 1e6);
    printf("%-13s %8.2f %8.2f %14.0f %10s  peak RSS %.0f MB (%.0f bytes/XU in memory)\n",
           "read", tr, cr, n / tr, "", ru.ru_maxrss / 1024.0, ru.ru_maxrss * 1024.0 / n);
    printf("%-13s %8.2f %8.2f %14.0f %10.2f  (%.1f MB)\n", "profile write", tw2, cw2,
           n / tw2, bytes2 / n, bytes2 / 1e6);
    ompf_profile_destroy(p);
    ompf_profile_destroy(h);
    if (keep)
        printf("kept %s\n", path);
    else
        unlink(path);
    unlink(path2);
    return 0;
}
