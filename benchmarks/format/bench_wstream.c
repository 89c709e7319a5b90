/* Per-record cost of the streaming writer (ompf_wstream_*), the part of
 * the OMPT tool's overhead that the profile format owns.
 *   build/bin/bench_wstream [N=2000000] [REPS=5] [EVENTS=0] [DIR=/tmp]
 * For each workload and 1 and 2 writer threads: N records per thread are
 * written into one file, and the CPU time of each writer thread
 * (CLOCK_THREAD_CPUTIME_ID, flushes included) is divided by its record
 * count; the file is then finished (its cost is reported apart, per
 * record).  Workloads:
 *   label  one label node per record
 *   xu     one XU per record (EVENTS values each)
 *   task   what the tool writes per task: two label nodes and one XU
 * Ids and components imitate the tool: ids are (thread + 1) << 40 |
 * sequence number; a task's labels are (creator's context, rank) and
 * (that node, construct address).  CPU time
 * is reported rather than wall time because the machine is shared; each
 * figure is the median (and minimum) of REPS repetitions.  Bytes per XU
 * are the finished file's size over the XUs it holds. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ompfuse/file.h"

enum { W_LABEL, W_XU, W_TASK };
static const char *const wname[] = {"label", "xu", "task"};

typedef struct warg {
    ompf_writer_t *w;
    int work;
    uint32_t t, nev;
    uint64_t n;
    double cpu_ns;
    int rc;
} warg_t;

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double proc_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
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
    ompf_construct_t c = {.module = "/usr/bin/app", .build_id = "0123abcd",
                          .kind = OMPF_CK_TASK, .offset = 0x4010a0};
    a->rc |= ompf_wstream_construct(s, 1, &c);
    uint64_t base = (uint64_t)(a->t + 1) << 40, seq = 0;
    a->rc |= ompf_wstream_label(s, base, 0, a->t + 1);
    uint64_t seed = 0x9e3779b97f4a7c15ULL * (a->t + 1), t_ns = 1000;
    uint64_t parent = base; /* the creating context's label */
    double v[64];
    for (uint32_t e = 0; e < a->nev; e++)
        v[e] = 0;
    double c0 = thread_cpu_ns();
    for (uint64_t i = 0; i < a->n; i++) {
        uint64_t lid = 0;
        if (a->work != W_XU) {
            /* as the tool labels a task: a node for its rank among the
             * creator's children, then one for its construct's address */
            uint64_t rank = base | ++seq;
            lid = rank;
            if (a->work == W_TASK) {
                /* both nodes in one record, as the tool writes them */
                const uint64_t comps[2] = {i + 1, 0x4010a0};
                lid = base | ++seq;
                a->rc |= ompf_wstream_label_path(s, rank, parent, comps, 2);
            } else {
                a->rc |= ompf_wstream_label(s, rank, parent, i + 1);
            }
        }
        if (a->work != W_LABEL) {
            uint64_t dur = 200 + (rng(&seed) & 1023);
            ompf_xu_t x = {.id = base | ++seq, .thread = a->t, .team_thread = a->t,
                           .team_size = 2, .parts = 1, .cpu = (int32_t)a->t,
                           .core = (int32_t)a->t, .numa = 0, .kind = OMPF_XU_TASK,
                           .start_ns = t_ns, .end_ns = t_ns + dur};
            t_ns += dur + (rng(&seed) & 255);
            if (a->nev) {
                v[0] = (double)dur;
                if (a->nev > 1)
                    v[1] = (double)((rng(&seed) & 3) == 0);
            }
            a->rc |= ompf_wstream_xu(s, &x, 1, lid, a->nev ? v : NULL);
        }
    }
    a->cpu_ns = thread_cpu_ns() - c0;
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct result {
    double per_rec, finish_per_rec, bytes_per_xu;
} result_t;

static int run(const char *path, int work, uint32_t nt, uint32_t nev, uint64_t n,
               result_t *r)
{
    ompf_profile_t *h;
    if (ompf_profile_create(&h))
        return 1;
    char name[32];
    for (uint32_t e = 0; e < nev; e++) {
        snprintf(name, sizeof name, "perf::EVENT-%u", e);
        ompf_event_t ev = {.name = name, .source = -1};
        ompf_event_add(h, &ev, NULL);
    }
    ompf_error_t err;
    ompf_writer_t *w;
    if (ompf_writer_create(path, h, &w, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    pthread_t tid[2];
    warg_t args[2];
    for (uint32_t t = 0; t < nt; t++) {
        args[t] = (warg_t){.w = w, .work = work, .t = t, .nev = nev, .n = n};
        pthread_create(&tid[t], NULL, writer, &args[t]);
    }
    int bad = 0;
    double per = 0;
    for (uint32_t t = 0; t < nt; t++) {
        pthread_join(tid[t], NULL);
        bad |= args[t].rc;
        per += args[t].cpu_ns / (double)n;
    }
    double c0 = proc_cpu_ns();
    if (bad || ompf_writer_finish(w, NULL, &err)) {
        fprintf(stderr, "write failed: %s\n", bad ? ompf_strerror(bad) : err.msg);
        return 1;
    }
    r->finish_per_rec = (proc_cpu_ns() - c0) / (double)(n * nt);
    r->per_rec = per / nt;
    struct stat st;
    r->bytes_per_xu = 0;
    if (work != W_LABEL && !stat(path, &st))
        r->bytes_per_xu = (double)st.st_size / (double)(n * nt);
    ompf_profile_destroy(h);
    unlink(path);
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000ULL;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    uint32_t nev = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 0;
    const char *dir = argc > 4 ? argv[4] : "/tmp";
    if (!n || reps < 1 || reps > 100 || nev > 64) {
        fprintf(stderr, "usage: bench_wstream [N] [REPS] [EVENTS<=64] [DIR]\n");
        return 2;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/bench-wstream-%ld.ompf", dir, (long)getpid());
    printf("%llu records per thread, %u events, CPU ns per record of each writer thread "
           "(median / min of %d)\n",
           (unsigned long long)n, nev, reps);
    printf("%-6s %7s %16s %16s %10s\n", "work", "threads", "ns/record", "finish ns/rec",
           "bytes/XU");
    for (int work = W_LABEL; work <= W_TASK; work++)
        for (uint32_t nt = 1; nt <= 2; nt++) {
            double per[100], fin[100];
            result_t r = {0};
            for (int k = 0; k < reps; k++) {
                if (run(path, work, nt, nev, n, &r))
                    return 1;
                per[k] = r.per_rec;
                fin[k] = r.finish_per_rec;
            }
            qsort(per, (size_t)reps, sizeof *per, cmp);
            qsort(fin, (size_t)reps, sizeof *fin, cmp);
            char bx[32] = "-";
            if (work != W_LABEL)
                snprintf(bx, sizeof bx, "%.2f", r.bytes_per_xu);
            printf("%-6s %7u %8.1f / %5.1f %8.2f / %5.2f %10s\n", wname[work], nt,
                   per[reps / 2], per[0], fin[reps / 2], fin[0], bx);
            fflush(stdout);
        }
    return 0;
}
