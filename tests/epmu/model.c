/* The emulated PMU's model (docs/epmu.md): per-thread contexts of event
 * groups, counters assigned slot by slot as the x86 kernel does, counts
 * from the thread's CPU time and from epmu_signal(). */
#include "epmu_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

epmu_cfg_t epmu_cfg;

static epmu_ev_t evs[EPMU_MAX_EVENTS];
static epmu_ctx_t ctxs[1024];
static size_t nctx;
static uint64_t next_id = 1000;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static __thread sigset_t saved_mask;

static void log_line(const char *line, size_t n);

/* Signals stay blocked while the lock is held: the HEM emulator engine
 * reads its group from a signal handler on the same thread. */
void epmu_lock(void)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved_mask);
    pthread_mutex_lock(&mu);
}

void epmu_unlock(void)
{
    pthread_mutex_unlock(&mu);
    pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
}

static unsigned long env_ul(const char *name, unsigned long def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    return *end ? def : x;
}

void epmu_config(void)
{
    epmu_cfg.gp = (unsigned)env_ul("EPMU_COUNTERS", 4);
    epmu_cfg.fixed = (unsigned)env_ul("EPMU_FIXED", 0);
    if (epmu_cfg.fixed > EPMU_MAX_FIXED)
        epmu_cfg.fixed = EPMU_MAX_FIXED;
    epmu_cfg.busy = (unsigned)env_ul("EPMU_BUSY", 0);
    epmu_cfg.tick_ns = env_ul("EPMU_TICK_US", 4000) * 1000;
    if (epmu_cfg.tick_ns == 0)
        epmu_cfg.tick_ns = 4000000;
    epmu_cfg.rate_on = env_ul("EPMU_RATE", 1) != 0;
    epmu_cfg.rdpmc = env_ul("EPMU_RDPMC", 0) != 0;
    epmu_cfg.log = getenv("EPMU_LOG");
}

/* ---- time --------------------------------------------------------------- */

/* CPU time of any thread of this process (the kernel's per-thread CPU
 * clock id); a thread that exited no longer advances. */
static uint64_t now_ns(epmu_ctx_t *c)
{
    if (c->frozen)
        return c->last_ns;
    clockid_t id = (clockid_t)((~(unsigned)c->tid << 3) | 6);
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0) {
        c->frozen = 1;
        return c->last_ns;
    }
    uint64_t t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return t < c->last_ns ? c->last_ns : t;
}

static int counting(const epmu_ev_t *e) { return e->on && e->leader->on; }

static int group_hw(const epmu_ev_t *l)
{
    for (const epmu_ev_t *e = l; e; e = e->next_sib)
        if (e->hw)
            return 1;
    return 0;
}

/* Whether the hardware members of group l fit in *gp general counters and
 * the free fixed counters *fx (bit k = fixed counter k); consumes them. */
static int fits(const epmu_ev_t *l, unsigned *gp, unsigned *fx, int all)
{
    unsigned g = *gp, f = *fx;
    for (const epmu_ev_t *e = l; e; e = e->next_sib) {
        if (!e->hw || (!all && !e->on))
            continue;
        if (e->fixed >= 0 && (f >> e->fixed & 1u))
            f &= ~(1u << e->fixed);
        else if (g > 0)
            g--;
        else
            return 0;
    }
    *gp = g;
    *fx = f;
    return 1;
}

/* As ctx_flexible_sched_in: groups from the head while they fit; the first
 * hardware group that does not fit stops all later hardware groups. */
static void schedule(epmu_ctx_t *c)
{
    unsigned busy = (c->slot & 1) ? epmu_cfg.busy : 0;
    unsigned gp = epmu_cfg.gp > busy ? epmu_cfg.gp - busy : 0;
    unsigned fx = (1u << epmu_cfg.fixed) - 1;
    int can_add = 1;
    c->need_rotate = 0;
    for (epmu_ev_t *l = c->groups; l; l = l->next_grp) {
        if (!l->on) {
            l->active = 0;
        } else if (!group_hw(l)) {
            l->active = 1;
        } else if (can_add && fits(l, &gp, &fx, 0)) {
            l->active = 1;
        } else {
            l->active = 0;
            can_add = 0;
            c->need_rotate = 1;
        }
        for (epmu_ev_t *e = l->next_sib; e; e = e->next_sib)
            e->active = l->active;
    }
}

/* As rotate_ctx: the first group on the counters (else the first
 * hardware group) goes to the tail. */
static void rotate(epmu_ctx_t *c)
{
    epmu_ev_t **pp = NULL;
    for (epmu_ev_t **q = &c->groups; *q; q = &(*q)->next_grp)
        if (group_hw(*q) && (*q)->active) {
            pp = q;
            break;
        }
    if (!pp)
        for (epmu_ev_t **q = &c->groups; *q; q = &(*q)->next_grp)
            if (group_hw(*q) && (*q)->on) {
                pp = q;
                break;
            }
    if (!pp || !(*pp)->next_grp)
        return;
    epmu_ev_t *g = *pp;
    *pp = g->next_grp;
    g->next_grp = NULL;
    epmu_ev_t **t = pp;
    while (*t)
        t = &(*t)->next_grp;
    *t = g;
    c->rotations++;
}

static void add_rate(uint64_t *count, uint64_t *frac, uint64_t d,
                     uint32_t rate)
{
    uint64_t x = d * rate + *frac;
    *count += x >> 3;
    *frac = x & 7;
}

static void accrue(epmu_ctx_t *c, uint64_t d)
{
    for (epmu_ev_t *l = c->groups; l; l = l->next_grp)
        for (epmu_ev_t *e = l; e; e = e->next_sib) {
            if (!counting(e))
                continue;
            e->enabled_ns += d;
            add_rate(&e->truth, &e->truth_frac, d, e->rate);
            if (e->active) {
                e->running_ns += d;
                add_rate(&e->count, &e->frac, d, e->rate);
            }
        }
}

/* Accounts the thread's CPU time up to now, slot by slot. */
static void advance(epmu_ctx_t *c)
{
    uint64_t now = now_ns(c);
    while (c->last_ns < now) {
        uint64_t end = (c->slot + 1) * epmu_cfg.tick_ns;
        uint64_t to = now < end ? now : end;
        accrue(c, to - c->last_ns);
        c->last_ns = to;
        if (to == end) {
            c->slot++;
            if (c->need_rotate)
                rotate(c);
            schedule(c);
        }
    }
}

static epmu_ctx_t *ctx_of(pid_t tid)
{
    for (size_t i = 0; i < nctx; i++)
        if (ctxs[i].tid == tid && !ctxs[i].frozen)
            return &ctxs[i];
    if (nctx == sizeof ctxs / sizeof ctxs[0])
        return NULL;
    epmu_ctx_t *c = &ctxs[nctx++];
    memset(c, 0, sizeof *c);
    c->tid = tid;
    c->last_ns = 0;
    c->last_ns = now_ns(c);
    c->slot = c->last_ns / epmu_cfg.tick_ns;
    return c;
}

/* ---- events --------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* Which encodings the kernel accepts (the rest: ENOENT or EINVAL). */
static int check_type(const struct perf_event_attr *a, int *hw, int *fixed)
{
    *hw = 1;
    *fixed = -1;
    switch (a->type) {
    case PERF_TYPE_HARDWARE:
        if ((a->config & 0xffffffffu) >= PERF_COUNT_HW_MAX)
            return -EINVAL;
        if (a->config == PERF_COUNT_HW_INSTRUCTIONS)
            *fixed = 0;
        else if (a->config == PERF_COUNT_HW_CPU_CYCLES)
            *fixed = 1;
        else if (a->config == PERF_COUNT_HW_REF_CPU_CYCLES)
            *fixed = 2;
        return 0;
    case PERF_TYPE_HW_CACHE: {
        unsigned id = a->config & 0xff, op = a->config >> 8 & 0xff,
                 res = a->config >> 16 & 0xff;
        if (id >= PERF_COUNT_HW_CACHE_MAX || op >= PERF_COUNT_HW_CACHE_OP_MAX ||
            res >= PERF_COUNT_HW_CACHE_RESULT_MAX)
            return -EINVAL;
        /* no writes or prefetches of instructions or branches */
        if ((id == PERF_COUNT_HW_CACHE_L1I || id == PERF_COUNT_HW_CACHE_ITLB ||
             id == PERF_COUNT_HW_CACHE_BPU) &&
            op != PERF_COUNT_HW_CACHE_OP_READ)
            return -ENOENT;
        return 0;
    }
    case PERF_TYPE_RAW:
        /* Intel's fixed-counter events: INST_RETIRED.ANY,
         * CPU_CLK_UNHALTED.THREAD, CPU_CLK_UNHALTED.REF_TSC */
        if ((a->config & 0xffff) == 0x00c0)
            *fixed = 0;
        else if ((a->config & 0xffff) == 0x003c)
            *fixed = 1;
        else if ((a->config & 0xffff) == 0x0300)
            *fixed = 2;
        return 0;
    case PERF_TYPE_SOFTWARE:
        *hw = 0;
        return a->config < PERF_COUNT_SW_MAX ? 0 : -ENOENT;
    default:
        return -ENOENT;
    }
}

int epmu_model_open(const struct perf_event_attr *a, pid_t pid, int cpu,
                    epmu_ev_t *group, epmu_ev_t **evp)
{
    int hw, fixed;
    int rc = check_type(a, &hw, &fixed);
    if (rc)
        return rc;
    /* not modelled: say so rather than count something else */
    if (cpu != -1 || pid < 0 || a->inherit || a->sample_period ||
        a->freq || a->pinned || a->exclusive)
        return -EOPNOTSUPP;
    pid_t tid = pid ? pid : gettid();
    epmu_ctx_t *c = ctx_of(tid);
    if (!c)
        return -ENOMEM;
    if (group && (group->leader != group || group->ctx != c))
        return -EINVAL;
    epmu_ev_t *e = NULL;
    for (size_t i = 0; i < EPMU_MAX_EVENTS; i++)
        if (!evs[i].used) {
            e = &evs[i];
            break;
        }
    if (!e)
        return -EMFILE;
    memset(e, 0, sizeof *e);
    e->type = a->type;
    e->config = a->config;
    e->hw = hw;
    e->fixed = fixed < (int)epmu_cfg.fixed ? fixed : -1;
    /* x86 validate_group: the whole group must fit an idle PMU */
    if (hw && group) {
        unsigned gp = epmu_cfg.gp, fx = (1u << epmu_cfg.fixed) - 1;
        if (!fits(group, &gp, &fx, 1) || !fits(e, &gp, &fx, 1))
            return -EINVAL;
    } else if (hw) {
        unsigned gp = epmu_cfg.gp, fx = (1u << epmu_cfg.fixed) - 1;
        if (!fits(e, &gp, &fx, 1))
            return -EINVAL;
    }
    advance(c);
    e->used = 1;
    e->refs = 1;
    e->id = next_id++;
    e->read_format = a->read_format;
    e->on = !a->disabled;
    e->ctx = c;
    uint64_t h = mix(((uint64_t)a->type << 56) ^ a->config);
    int clock = a->type == PERF_TYPE_SOFTWARE &&
                (a->config == PERF_COUNT_SW_TASK_CLOCK ||
                 a->config == PERF_COUNT_SW_CPU_CLOCK);
    e->rate = clock ? 8 : (uint32_t)(1 + h % 16);
    if (!epmu_cfg.rate_on)
        e->rate = 0;
    e->weight = (uint32_t)(1 + (h >> 20) % 61);
    if (group) {
        e->leader = group;
        epmu_ev_t *t = group;
        while (t->next_sib)
            t = t->next_sib;
        t->next_sib = e;
    } else {
        e->leader = e;
        epmu_ev_t **t = &c->groups;
        while (*t)
            t = &(*t)->next_grp;
        *t = e;
    }
    schedule(c);
    *evp = e;
    return 0;
}

void epmu_model_release(epmu_ev_t *e)
{
    epmu_ctx_t *c = e->ctx;
    advance(c);
    epmu_model_log(e);
    if (e->leader == e) {
        for (epmu_ev_t **q = &c->groups; *q; q = &(*q)->next_grp)
            if (*q == e) {
                *q = e->next_grp;
                break;
            }
        /* siblings become groups of their own, at the tail */
        epmu_ev_t *s = e->next_sib;
        while (s) {
            epmu_ev_t *n = s->next_sib;
            s->leader = s;
            s->next_sib = NULL;
            s->next_grp = NULL;
            epmu_ev_t **t = &c->groups;
            while (*t)
                t = &(*t)->next_grp;
            *t = s;
            s = n;
        }
    } else {
        for (epmu_ev_t **q = &e->leader->next_sib; *q; q = &(*q)->next_sib)
            if (*q == e) {
                *q = e->next_sib;
                break;
            }
    }
    schedule(c);
    e->used = 0;
}

static void note_read(epmu_ev_t *e, const epmu_ev_t *times)
{
    if (e->nreads++ == 0) {
        e->first_value = e->count;
        e->first_enabled = times->enabled_ns;
        e->first_running = times->running_ns;
    }
    e->last_value = e->count;
    e->last_enabled = times->enabled_ns;
    e->last_running = times->running_ns;
    if (e->page) {
        /* seqlock protocol of the mmap page; index stays 0 */
        __atomic_add_fetch(&e->page->lock, 1, __ATOMIC_SEQ_CST);
        e->page->offset = (int64_t)e->count;
        e->page->time_enabled = e->enabled_ns;
        e->page->time_running = e->running_ns;
        __atomic_add_fetch(&e->page->lock, 1, __ATOMIC_SEQ_CST);
    }
}

ssize_t epmu_model_read(epmu_ev_t *e, void *buf, size_t n)
{
    advance(e->ctx);
    uint64_t f = e->read_format;
    uint64_t out[3 + 2 * 64];
    size_t k = 0;
    if (f & PERF_FORMAT_GROUP) {
        epmu_ev_t *l = e->leader;
        size_t nr = 0;
        for (epmu_ev_t *s = l; s; s = s->next_sib)
            nr++;
        if (nr > 64)
            return -EINVAL;
        out[k++] = nr;
        if (f & PERF_FORMAT_TOTAL_TIME_ENABLED)
            out[k++] = l->enabled_ns;
        if (f & PERF_FORMAT_TOTAL_TIME_RUNNING)
            out[k++] = l->running_ns;
        for (epmu_ev_t *s = l; s; s = s->next_sib) {
            out[k++] = s->count;
            if (f & PERF_FORMAT_ID)
                out[k++] = s->id;
        }
        if (n < k * 8)
            return -ENOSPC;
        for (epmu_ev_t *s = l; s; s = s->next_sib)
            note_read(s, l);
    } else {
        out[k++] = e->count;
        if (f & PERF_FORMAT_TOTAL_TIME_ENABLED)
            out[k++] = e->enabled_ns;
        if (f & PERF_FORMAT_TOTAL_TIME_RUNNING)
            out[k++] = e->running_ns;
        if (f & PERF_FORMAT_ID)
            out[k++] = e->id;
        if (n < k * 8)
            return -ENOSPC;
        note_read(e, e);
    }
    memcpy(buf, out, k * 8);
    return (ssize_t)(k * 8);
}

int epmu_model_ioctl(epmu_ev_t *e, unsigned long req, unsigned long arg)
{
    if (req == PERF_EVENT_IOC_ID) {
        if (!arg)
            return -EFAULT;
        memcpy((void *)arg, &e->id, sizeof e->id);
        return 0;
    }
    if (req != PERF_EVENT_IOC_ENABLE && req != PERF_EVENT_IOC_DISABLE &&
        req != PERF_EVENT_IOC_RESET)
        return -ENOTTY; /* refresh, period, filters...: not modelled */
    advance(e->ctx);
    epmu_ev_t *first = arg & PERF_IOC_FLAG_GROUP ? e->leader : e;
    for (epmu_ev_t *s = first; s; s = s->next_sib) {
        if (req == PERF_EVENT_IOC_RESET) {
            s->count = 0;
            s->frac = 0;
        } else {
            s->on = req == PERF_EVENT_IOC_ENABLE;
        }
        if (!(arg & PERF_IOC_FLAG_GROUP))
            break;
    }
    schedule(e->ctx);
    return 0;
}

void epmu_model_signal(pid_t tid, unsigned long n)
{
    epmu_ctx_t *c = NULL;
    for (size_t i = 0; i < nctx && !c; i++)
        if (ctxs[i].tid == tid && !ctxs[i].frozen)
            c = &ctxs[i];
    if (!c)
        return;
    advance(c);
    char line[1024];
    size_t k = (size_t)snprintf(line, sizeof line, "signal tid=%d n=%lu active=",
                                (int)tid, n);
    for (epmu_ev_t *l = c->groups; l; l = l->next_grp)
        for (epmu_ev_t *e = l; e; e = e->next_sib) {
            if (!counting(e))
                continue;
            e->truth += (uint64_t)n * e->weight;
            if (e->active) {
                e->count += (uint64_t)n * e->weight;
                if (k + 24 < sizeof line)
                    k += (size_t)snprintf(line + k, sizeof line - k, "%llu,",
                                          (unsigned long long)e->id);
            }
        }
    line[k++] = '\n';
    log_line(line, k);
}

static void log_line(const char *line, size_t n)
{
    if (!epmu_cfg.log || !*epmu_cfg.log)
        return;
    int fd = open(epmu_cfg.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, n) != (ssize_t)n) {
        /* a test then finds the line missing */
    }
    close(fd);
}

/* One line per event: what it counted, what the first and last read()
 * returned and what it would have counted never multiplexed. */
void epmu_model_log(epmu_ev_t *e)
{
    char line[640];
    int w = snprintf(line, sizeof line,
                     "event pid=%d tid=%d id=%llu type=%u config=0x%llx "
                     "leader=%llu hw=%d rate=%u weight=%u reads=%llu "
                     "first_value=%llu first_enabled=%llu first_running=%llu "
                     "last_value=%llu last_enabled=%llu last_running=%llu "
                     "value=%llu enabled=%llu running=%llu truth=%llu "
                     "rotations=%llu\n",
                     (int)getpid(), (int)e->ctx->tid,
                     (unsigned long long)e->id, e->type,
                     (unsigned long long)e->config,
                     (unsigned long long)e->leader->id, e->hw, e->rate,
                     e->weight, (unsigned long long)e->nreads,
                     (unsigned long long)e->first_value,
                     (unsigned long long)e->first_enabled,
                     (unsigned long long)e->first_running,
                     (unsigned long long)e->last_value,
                     (unsigned long long)e->last_enabled,
                     (unsigned long long)e->last_running,
                     (unsigned long long)e->count,
                     (unsigned long long)e->enabled_ns,
                     (unsigned long long)e->running_ns,
                     (unsigned long long)e->truth,
                     (unsigned long long)e->ctx->rotations);
    if (w > 0)
        log_line(line, (size_t)w < sizeof line ? (size_t)w : sizeof line - 1);
}

void epmu_model_log_all(void)
{
    for (size_t i = 0; i < EPMU_MAX_EVENTS; i++)
        if (evs[i].used)
            epmu_model_log(&evs[i]);
}
