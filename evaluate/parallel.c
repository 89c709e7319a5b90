/* A small parallel-for over work items with pthreads; progress through
 * the shared progress line (include/ompfuse/progress.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "evaluate_internal.h"
#include "ompfuse/profile.h"

typedef struct {
    size_t n;
    atomic_size_t next;
    atomic_int failed;
    ompf__work_fn fn;
    void *ctx;
    ompf_progress_t *progress;
    pthread_mutex_t lock; /* the progress line is not thread-safe */
} pfor_t;

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
        if (pf->progress) {
            pthread_mutex_lock(&pf->lock);
            ompf_progress_add(pf->progress, 1);
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
                       void *ctx, ompf_progress_t *progress)
{
    pfor_t pf = {.n = n, .fn = fn, .ctx = ctx, .progress = progress};
    atomic_init(&pf.next, 0);
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
    free(th);
    free(args);
    pthread_mutex_destroy(&pf.lock);
    return atomic_load(&pf.failed);
}
