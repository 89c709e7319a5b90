/* Counter reading per thread, by mode.
 *
 * run / reference: one perf_event group per thread holding every usable
 * event, read at each boundary with one read() (or rdpmc); the callbacks
 * difference the raw cumulative values and charge the deltas.  The HEM
 * modes (hem, hem-delta) read through hemread.c instead. */
#include <stdio.h>

#include "tool.h"

/* First reason each event failed to open on some thread (for the
 * profile's event table). */
static char open_reason[OMPF_CNT_MAX_EVENTS][256];

const char *ft_read_fail_reason(size_t i)
{
    return i < OMPF_CNT_MAX_EVENTS && open_reason[i][0] ? open_reason[i]
                                                         : NULL;
}

void ft_read_note_fail(size_t i, const char *why)
{
    if (i >= OMPF_CNT_MAX_EVENTS)
        return;
    pthread_mutex_lock(&ft_g.lock);
    if (!open_reason[i][0])
        snprintf(open_reason[i], sizeof open_reason[i], "%s", why);
    pthread_mutex_unlock(&ft_g.lock);
}

/* Why event i's values went missing on some thread after it opened
 * (the profile's event table), and on how many threads. */
static char lost_reason[OMPF_CNT_MAX_EVENTS][256];
static unsigned lost_threads[OMPF_CNT_MAX_EVENTS];

const char *ft_read_lost_reason(size_t i, unsigned *threads)
{
    if (threads)
        *threads = i < OMPF_CNT_MAX_EVENTS ? lost_threads[i] : 0;
    return i < OMPF_CNT_MAX_EVENTS && lost_reason[i][0] ? lost_reason[i]
                                                         : NULL;
}

void ft_read_lost(ft_thread_t *t, const char *why)
{
    uint64_t had = t->have;
    if (!had)
        return;
    t->have = 0; /* every value of this thread from now on: missing */
    pthread_mutex_lock(&ft_g.lock);
    for (size_t i = 0; i < ft_g.nev && i < OMPF_CNT_MAX_EVENTS; i++) {
        if (!((had >> i) & 1))
            continue;
        lost_threads[i]++;
        if (!lost_reason[i][0])
            snprintf(lost_reason[i], sizeof lost_reason[i],
                     "lost on thread %u: %s; that thread's values from "
                     "then on are missing",
                     t->index, why);
    }
    pthread_mutex_unlock(&ft_g.lock);
    /* a warning even under OMPFUSE_STRICT: ending the program in the
     * middle of its run is worse than missing values */
    ft_warn_once("counters-lost", "warning: thread %u: %s; its counter "
                 "values from then on are missing", t->index, why);
}

void ft_read_check(ft_thread_t *t)
{
    if (!t->have)
        return;
    int ok = ft_g.hem ? ft_hem_intact(t)
                      : t->grp && ompf_cnt_group_intact(t->grp);
    if (!ok)
        ft_read_lost(t, "a counter descriptor was closed or replaced by "
                        "the program (found at thread end)");
}

void ft_read_open(ft_thread_t *t, int initial)
{
    size_t nev = ft_g.nev;
    if (!nev) {
        ft_verbose("thread %u (tid %d%s): no events, timestamps and labels "
                   "only",
                   t->index, t->os_tid, initial ? ", initial" : "");
        return;
    }
    if (ft_g.hem) {
        ft_hem_open(t);
        return;
    }
    ft_read_open_group(t);
    ft_verbose("thread %u (tid %d%s): %zu of %zu events counted, reads by %s",
               t->index, t->os_tid, initial ? ", initial" : "",
               t->grp ? ompf_cnt_group_opened(t->grp) : 0, nev,
               t->grp && ompf_cnt_group_uses_rdpmc(t->grp) ? "rdpmc"
                                                           : "read()");
}

void ft_read_open_group(ft_thread_t *t)
{
    size_t nev = ft_g.nev;
    if (ompf_cnt_group_open(ft_g.set, 0, -1, 0, &t->grp) != 0) {
        ft_degrade("grp-nomem", "cannot open counters: out of memory");
        t->grp = NULL;
    }
    for (size_t i = 0; t->grp && i < nev; i++) {
        const char *why;
        int e;
        if (ompf_cnt_group_fail(t->grp, i, &why, &e) == OMPF_CNT_OK) {
            t->have |= 1ull << i;
            continue;
        }
        if (ompf_cnt_set_status(ft_g.set, i, NULL) != OMPF_CNT_OK)
            continue; /* reported once at start */
        ft_read_note_fail(i, why);
        /* one message per event and cause, not per thread */
        char key[300], msg[600];
        snprintf(key, sizeof key, "ev-%s-%d",
                 ompf_cnt_set_name(ft_g.set, i), e);
        snprintf(msg, sizeof msg, "%s; its values are missing", why);
        ft_degrade(key, msg);
    }
    if (t->grp && ompf_cnt_group_read(t->grp, &t->sample) == 0) {
        for (size_t i = 0; i < nev; i++)
            t->first[i] = t->last[i] = t->sample.value[i];
    }
}

void ft_read_close(ft_thread_t *t)
{
    /* the HEM engine first: its timer handler reads the group */
    if (t->hem)
        ft_hem_close(t);
    if (t->grp) {
        ompf_cnt_group_close(t->grp);
        t->grp = NULL;
    }
}
