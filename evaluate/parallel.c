/* A small parallel-for over work items with pthreads and a progress line. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "evaluate_internal.h"
#include "ompfuse/profile.h"

typedef struct {
    size_t n;
    atomic_size_t next, done;
    atomic_int failed;
    ompf__work_fn fn;
    void *ctx;
    const char *label;
    int progress;
    pthread_mutex_t lock;
    double last_print;
} pfor_t;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *worker(void *arg)
{
    pfor_t *pf = ((void **)arg)[0];
    size_t tid = (size_t)((void **)arg)[1];
    for (;;) {
        size_t i = atomic_fetch_add(&pf->next, 1);
        if (i >= pf->n || atomic_load(&pf->failed))
            break;
        int rc = pf->fn(pf->ctx, i, tid);
        if (rc) {
            int zero = 0;
            atomic_compare_exchange_strong(&pf->failed, &zero, rc);
            break;
        }
        size_t d = atomic_fetch_add(&pf->done, 1) + 1;
        if (pf->progress) {
            double t = now_s();
            pthread_mutex_lock(&pf->lock);
            if (t - pf->last_print > 0.2 || d == pf->n) {
                pf->last_print = t;
                fprintf(stderr, "\r%s: %zu/%zu pairs", pf->label, d, pf->n);
                fflush(stderr);
            }
            pthread_mutex_unlock(&pf->lock);
        }
    }
    return NULL;
}

unsigned ompf__default_threads(void)
{
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (unsigned)c : 1u;
}

int ompf__parallel_for(size_t n, unsigned threads, ompf__work_fn fn,
                       void *ctx, const char *label, int progress)
{
    pfor_t pf = {.n = n, .fn = fn, .ctx = ctx, .label = label,
                 .progress = progress};
    atomic_init(&pf.next, 0);
    atomic_init(&pf.done, 0);
    atomic_init(&pf.failed, 0);
    pthread_mutex_init(&pf.lock, NULL);
    if (threads == 0)
        threads = ompf__default_threads();
    /* Few items: threads cost more than they save. */
    if (n < 4 * (size_t)threads)
        threads = 1;
    pthread_t *th = calloc(threads, sizeof *th);
    void *(*args)[2] = calloc(threads, sizeof *args);
    if (!th || !args) {
        free(th);
        free(args);
        pthread_mutex_destroy(&pf.lock);
        return OMPF_ENOMEM;
    }
    unsigned started = 0;
    for (unsigned t = 1; t < threads; t++) {
        args[t][0] = &pf;
        args[t][1] = (void *)(size_t)t;
        if (pthread_create(&th[t], NULL, worker, args[t]))
            break;
        started = t;
    }
    args[0][0] = &pf;
    args[0][1] = (void *)(size_t)0;
    worker(args[0]);
    for (unsigned t = 1; t <= started; t++)
        pthread_join(th[t], NULL);
    if (progress && n)
        fprintf(stderr, "\r%*s\r", 60, "");
    free(th);
    free(args);
    pthread_mutex_destroy(&pf.lock);
    return atomic_load(&pf.failed);
}
