/* libompfcounters: libpfm4 encoding, per-thread perf_event groups, reads.
 * One file over 600 lines: opening a group, reading it and diagnosing why a
 * member failed share the group's state and its error paths. */
#include "ompfuse/counters.h"
#include "ompfuse/pfd.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <pthread.h>
#include <perfmon/pfmlib_perf_event.h>

#include "sources.h"

struct cnt_event {
    char *name;
    struct perf_event_attr attr;
    ompf_cnt_fail_t fail;
    char reason[384];
    char *path;   /* uprobe binary attr.config1 points to */
    int hardware; /* on a PMU the kernel multiplexes */
    int pfm;      /* encoded by libpfm4 (or its cached encoding) */
};

struct ompf_cnt_set {
    size_t n;
    struct cnt_event ev[]; /* n of them: the tool's start-up touches
                              only these pages, not 64 events' worth */
};

struct ompf_cnt_group {
    const ompf_cnt_set_t *set;
    size_t n;       /* events of the set */
    size_t opened;  /* members of the group */
    int leader;     /* handles (ompfuse/pfd.h), not descriptor numbers */
    int fd[OMPF_CNT_MAX_EVENTS];       /* -1 when not opened */
    int dead;       /* a read failed or was not ours: no more reads */
    int slot[OMPF_CNT_MAX_EVENTS];     /* position in the group read */
    ompf_cnt_fail_t fail[OMPF_CNT_MAX_EVENTS];
    int err[OMPF_CNT_MAX_EVENTS];
    char reason[OMPF_CNT_MAX_EVENTS][200];
    /* rdpmc: one mmap page per member, in group order */
    int rdpmc;
    struct perf_event_mmap_page *page[OMPF_CNT_MAX_EVENTS];
    size_t page_set[OMPF_CNT_MAX_EVENTS]; /* set index of group member k */
    size_t bufwords;
    uint64_t buf[3 + OMPF_CNT_MAX_EVENTS];
};

static void seterr(ompf_error_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(ompf_error_t *err, int code, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status;
static void pfm_init_once(void) { pfm_status = pfm_initialize(); }

int ompf_cnt_paranoid(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int v = -100;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -100;
        fclose(f);
    }
    return v;
}

/* The perf_event_attr bit-field word (disabled, exclude_*, precise_ip,
 * ...): the u64 after read_format. */
#define FLAGS_OFF (offsetof(struct perf_event_attr, read_format) + sizeof(uint64_t))

/* The attr an encoding text stands for: 0, or -1 when text is not one. */
static int from_text(const char *text, struct perf_event_attr *a)
{
    unsigned type;
    unsigned long long cfg, c1, c2, period, flags;
    char tail;
    if (sscanf(text, "%x %llx %llx %llx %llx %llx%c", &type, &cfg, &c1, &c2,
               &period, &flags, &tail) != 6)
        return -1;
    memset(a, 0, sizeof *a);
    a->type = type;
    a->size = sizeof *a;
    a->config = cfg;
    a->config1 = c1;
    a->config2 = c2;
    a->sample_period = period;
    uint64_t f = flags;
    memcpy((char *)a + FLAGS_OFF, &f, sizeof f);
    return 0;
}

int ompf_cnt_set_encoding(const ompf_cnt_set_t *s, size_t i, char *buf,
                          size_t n)
{
    if (!s || i >= s->n || !buf || !n || !s->ev[i].pfm || s->ev[i].fail)
        return 0;
    const struct perf_event_attr *a = &s->ev[i].attr;
    uint64_t f;
    memcpy(&f, (const char *)a + FLAGS_OFF, sizeof f);
    int w = snprintf(buf, n, "%x %llx %llx %llx %llx %llx", a->type,
                     (unsigned long long)a->config,
                     (unsigned long long)a->config1,
                     (unsigned long long)a->config2,
                     (unsigned long long)a->sample_period,
                     (unsigned long long)f);
    struct perf_event_attr back;
    /* only what the text gives back whole (no other field set) */
    if (w <= 0 || (size_t)w >= n || from_text(buf, &back) ||
        memcmp(&back, a, sizeof back)) {
        buf[0] = '\0';
        return 0;
    }
    return w;
}

/* Whether libpfm4 detected a core PMU for this CPU (asked only when a
 * name did not resolve, to say why). */
static int core_pmu_known(void)
{
    pfm_pmu_t p;
    pfm_for_all_pmus(p) {
        pfm_pmu_info_t info;
        memset(&info, 0, sizeof info);
        info.size = sizeof info;
        if (pfm_get_pmu_info(p, &info) == PFM_SUCCESS && info.is_present &&
            info.type == PFM_PMU_TYPE_CORE)
            return 1;
    }
    return 0;
}

static void encode(struct cnt_event *e, ompf_cnt_lookup_t lookup, void *ctx)
{
    memset(&e->attr, 0, sizeof e->attr);
    /* perf's own syntax first (tracepoints, uprobes, sysfs PMUs) */
    ompf_cnt_src_t src;
    if (ompf_cnt_src_encode(e->name, &src)) {
        e->attr = src.attr;
        e->attr.size = sizeof e->attr;
        e->path = src.path;
        e->hardware = src.hardware;
        e->fail = src.fail;
        snprintf(e->reason, sizeof e->reason, "%s", src.fail ? src.reason : "");
        return;
    }
    const char *cached = lookup ? lookup(e->name, ctx) : NULL;
    if (cached && from_text(cached, &e->attr) == 0) {
        e->pfm = 1;
        goto encoded;
    }
    /* libpfm4 only now: its initialisation scans every PMU (and, with
     * debugfs mounted, every tracepoint), milliseconds per process */
    pthread_once(&pfm_once, pfm_init_once);
    if (pfm_status != PFM_SUCCESS) {
        e->fail = OMPF_CNT_NO_PMU;
        snprintf(e->reason, sizeof e->reason,
                 "event %s: libpfm4 could not initialize (%s)", e->name,
                 pfm_strerror(pfm_status));
        return;
    }
    /* a PAPI preset is encoded as the generic perf event it stands for */
    const char *pfm_name = e->name;
    if (!strncmp(e->name, "PAPI_", 5)) {
        const ompf_papi_preset_t *pp = ompf_papi_preset_find(e->name);
        if (!pp) {
            e->fail = OMPF_CNT_UNKNOWN;
            snprintf(e->reason, sizeof e->reason,
                     "event %s: a PAPI preset without a generic perf event (PAPI builds "
                     "it from this CPU's native events); `ompfuse events --papi` lists "
                     "the presets ompfuse maps, `ompfuse events` the native names",
                     e->name);
            return;
        }
        pfm_name = pp->perf;
    }
    pfm_perf_encode_arg_t arg;
    memset(&arg, 0, sizeof arg);
    arg.attr = &e->attr;
    arg.size = sizeof arg;
    /* user+kernel by default: software events such as context switches
     * happen in the kernel and read 0 when counted in user mode only. */
    int rc = pfm_get_os_event_encoding(pfm_name, PFM_PLM0 | PFM_PLM3,
                                       PFM_OS_PERF_EVENT_EXT, &arg);
    if (rc == PFM_ERR_NOTFOUND && ompf_cnt_src_tp_why(e->name, &src)) {
        e->fail = src.fail;
        snprintf(e->reason, sizeof e->reason, "%s", src.reason);
        return;
    }
    if (rc != PFM_SUCCESS) {
        e->fail = rc == PFM_ERR_NOTFOUND ? OMPF_CNT_UNKNOWN
                                         : OMPF_CNT_UNSUPPORTED;
        snprintf(e->reason, sizeof e->reason,
                 "event %s: %s (libpfm4: %s); list valid names with "
                 "`ompfuse events` or libpfm4's showevtinfo%s",
                 e->name,
                 rc == PFM_ERR_NOTFOUND ? "unknown event name"
                                        : "cannot be encoded",
                 pfm_strerror(rc),
                 rc == PFM_ERR_NOTFOUND && !core_pmu_known()
                     ? "; this libpfm4 knows no core PMU for this CPU, so no "
                       "native name resolves: use perf:: names, or "
                       "LIBPFM_FORCE_PMU=MODEL for another CPU's"
                     : "");
        return;
    }
    e->pfm = 1;
encoded:
    e->attr.size = sizeof e->attr;
    e->fail = OMPF_CNT_OK;
    e->reason[0] = '\0';
    uint32_t t = e->attr.type;
    e->hardware = t == PERF_TYPE_HARDWARE || t == PERF_TYPE_HW_CACHE ||
                  t == PERF_TYPE_RAW || t >= PERF_TYPE_MAX;
}

static int create(const char *const *names, size_t n, ompf_cnt_lookup_t lookup,
                  void *ctx, ompf_cnt_set_t **out, ompf_error_t *err)
{
    if (!out || (n && !names)) {
        seterr(err, OMPF_EINVAL, "ompf_cnt_set_create: invalid arguments");
        return OMPF_EINVAL;
    }
    *out = NULL;
    if (n > OMPF_CNT_MAX_EVENTS) {
        seterr(err, OMPF_EINVAL,
               "%zu events requested; at most %d can be counted at once",
               n, OMPF_CNT_MAX_EVENTS);
        return OMPF_EINVAL;
    }
    ompf_cnt_set_t *s = calloc(1, sizeof *s + (n ? n : 1) * sizeof s->ev[0]);
    if (!s) {
        seterr(err, OMPF_ENOMEM, "out of memory");
        return OMPF_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        s->ev[i].name = strdup(names[i] ? names[i] : "");
        if (!s->ev[i].name) {
            s->n = i;
            ompf_cnt_set_destroy(s);
            seterr(err, OMPF_ENOMEM, "out of memory");
            return OMPF_ENOMEM;
        }
        s->n = i + 1;
        encode(&s->ev[i], lookup, ctx);
    }
    *out = s;
    return 0;
}

int ompf_cnt_set_create(const char *const *names, size_t n,
                        ompf_cnt_set_t **out, ompf_error_t *err)
{
    return create(names, n, NULL, NULL, out, err);
}

int ompf_cnt_set_parse(const char *list, ompf_cnt_set_t **out,
                       ompf_error_t *err)
{
    return ompf_cnt_set_parse_cached(list, NULL, NULL, out, err);
}

int ompf_cnt_set_parse_cached(const char *list, ompf_cnt_lookup_t lookup,
                              void *ctx, ompf_cnt_set_t **out,
                              ompf_error_t *err)
{
    if (!list || !out) {
        seterr(err, OMPF_EINVAL, "ompf_cnt_set_parse: invalid arguments");
        return OMPF_EINVAL;
    }
    char *copy = strdup(list);
    const char *names[OMPF_CNT_MAX_EVENTS];
    size_t n = 0;
    if (!copy) {
        seterr(err, OMPF_ENOMEM, "out of memory");
        return OMPF_ENOMEM;
    }
    int rc = 0;
    char *p = copy;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p) {
        for (;;) {
            char *comma = strchr(p, ',');
            if (comma)
                *comma = '\0';
            while (*p == ' ' || *p == '\t')
                p++;
            char *e = p + strlen(p);
            while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
                *--e = '\0';
            if (!*p) {
                seterr(err, OMPF_EINVAL,
                       "event list \"%s\" has an empty item; separate "
                       "libpfm4 event names with single commas", list);
                rc = OMPF_EINVAL;
                break;
            }
            if (n == OMPF_CNT_MAX_EVENTS) {
                seterr(err, OMPF_EINVAL,
                       "event list \"%s\" has more than %d events", list,
                       OMPF_CNT_MAX_EVENTS);
                rc = OMPF_EINVAL;
                break;
            }
            names[n++] = p;
            if (!comma)
                break;
            p = comma + 1;
        }
    }
    if (rc == 0)
        rc = create(names, n, lookup, ctx, out, err);
    free(copy);
    return rc;
}

void ompf_cnt_set_destroy(ompf_cnt_set_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->ev[i].name);
        free(s->ev[i].path);
    }
    free(s);
}

size_t ompf_cnt_set_size(const ompf_cnt_set_t *s) { return s ? s->n : 0; }

const char *ompf_cnt_set_name(const ompf_cnt_set_t *s, size_t i)
{
    return s && i < s->n ? s->ev[i].name : NULL;
}

int ompf_cnt_set_event(const ompf_cnt_set_t *s, size_t i, ompf_event_t *ev)
{
    if (!s || i >= s->n || !ev)
        return OMPF_EINVAL;
    const struct cnt_event *e = &s->ev[i];
    memset(ev, 0, sizeof *ev);
    ev->name = e->name;
    ev->pe_type = e->attr.type;
    ev->config = e->attr.config;
    /* a uprobe's config1 is a pointer to its path: the name records it */
    ev->config1 = e->path ? 0 : e->attr.config1;
    ev->config2 = e->attr.config2;
    ev->pe_flags = (e->attr.exclude_user ? OMPF_PEF_EXCLUDE_USER : 0) |
                   (e->attr.exclude_kernel ? OMPF_PEF_EXCLUDE_KERNEL : 0) |
                   (e->attr.exclude_hv ? OMPF_PEF_EXCLUDE_HV : 0);
    ev->status = e->fail == OMPF_CNT_OK ? OMPF_EV_COUNTED : OMPF_EV_FAILED;
    ev->reason = e->fail == OMPF_CNT_OK ? NULL : e->reason;
    ev->source = -1;
    return 0;
}

int ompf_cnt_set_attr(const ompf_cnt_set_t *s, size_t i,
                      struct perf_event_attr *out, size_t size)
{
    if (!s || i >= s->n || !out || size == 0)
        return OMPF_EINVAL;
    memset(out, 0, size);
    memcpy(out, &s->ev[i].attr,
           size < sizeof s->ev[i].attr ? size : sizeof s->ev[i].attr);
    return 0;
}

void ompf_cnt_set_fail(ompf_cnt_set_t *s, size_t i, ompf_cnt_fail_t why,
                       const char *reason)
{
    if (!s || i >= s->n)
        return;
    s->ev[i].fail = why;
    snprintf(s->ev[i].reason, sizeof s->ev[i].reason, "%s",
             reason ? reason : "");
}

ompf_cnt_fail_t ompf_cnt_set_status(const ompf_cnt_set_t *s, size_t i,
                                    const char **reason)
{
    if (!s || i >= s->n) {
        if (reason)
            *reason = "no such event";
        return OMPF_CNT_OTHER;
    }
    if (reason)
        *reason = s->ev[i].fail ? s->ev[i].reason : NULL;
    return s->ev[i].fail;
}

int ompf_cnt_set_is_hardware(const ompf_cnt_set_t *s, size_t i)
{
    if (!s || i >= s->n || s->ev[i].fail)
        return 0;
    return s->ev[i].hardware;
}

/* ---- groups ------------------------------------------------------------ */

ompf_cnt_fail_t ompf_cnt_diagnose(const ompf_cnt_set_t *s, size_t i, int e,
                                  char *what, size_t n)
{
    ompf_cnt_fail_t why;
    char buf[160];
    if (ompf_cnt_set_is_hardware(s, i) &&
        (e == ENOENT || e == EOPNOTSUPP || e == ENODEV))
        e = ENODEV; /* a hardware event without a PMU that has it */
    switch (e) {
    case EACCES:
    case EPERM:
        why = OMPF_CNT_PERMISSION;
        snprintf(buf, sizeof buf,
                 "permission denied (perf_event_paranoid is %d; run as "
                 "root, grant CAP_PERFMON, or lower "
                 "/proc/sys/kernel/perf_event_paranoid)",
                 ompf_cnt_paranoid());
        break;
    case ENOENT:
    case EOPNOTSUPP:
    case EINVAL:
        why = OMPF_CNT_UNSUPPORTED;
        snprintf(buf, sizeof buf,
                 "not supported on this machine (%s)", strerror(e));
        break;
    case ENODEV:
        why = OMPF_CNT_NO_PMU;
        snprintf(buf, sizeof buf,
                 "no hardware PMU for it (%s; virtual machines usually "
                 "offer only perf:: software events)", strerror(e));
        break;
    case ENOSPC:
        /* a real counter limit: e.g. the 4 debug registers of breakpoints */
        why = OMPF_CNT_LIMIT;
        snprintf(buf, sizeof buf,
                 "no free counter for it on its PMU (%s): count fewer such "
                 "events at once", strerror(e));
        break;
    case EMFILE:
    case ENFILE:
        why = OMPF_CNT_OTHER;
        snprintf(buf, sizeof buf,
                 "out of file descriptors (%s; raise `ulimit -n`)",
                 strerror(e));
        break;
    default:
        why = OMPF_CNT_OTHER;
        snprintf(buf, sizeof buf, "perf_event_open failed (%s)",
                 strerror(e));
        break;
    }
    if (what && n)
        snprintf(what, n, "%s", buf);
    return why;
}

static void open_fail(ompf_cnt_group_t *g, size_t i, int e)
{
    char what[160];
    ompf_cnt_fail_t why = ompf_cnt_diagnose(g->set, i, e, what, sizeof what);
    if (ompf_cnt_set_is_hardware(g->set, i) &&
        (e == ENOENT || e == EOPNOTSUPP || e == ENODEV))
        e = ENODEV; /* kept as before: the errno recorded per event */
    g->fail[i] = why;
    g->err[i] = e;
    snprintf(g->reason[i], sizeof g->reason[i], "event %s: %s",
             g->set->ev[i].name, what);
}

static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu,
                     int group_fd)
{
    return (int)syscall(SYS_perf_event_open, a, pid, cpu, group_fd,
                        PERF_FLAG_FD_CLOEXEC);
}

/* x86 refuses (EINVAL) a member whose group would not fit the PMU's
 * counters.  An event that opens alone failed for that reason: say so,
 * not "not supported". */
static int no_room(ompf_cnt_group_t *g, struct perf_event_attr *a, pid_t pid,
                   int cpu, size_t i)
{
    struct perf_event_attr alone = *a;
    alone.disabled = 1;
    int fd = perf_open(&alone, pid, cpu, -1);
    if (fd < 0)
        return 0;
    close(fd);
    size_t hw = 0;
    for (size_t k = 0; k < i; k++)
        hw += g->fd[k] >= 0 && ompf_cnt_set_is_hardware(g->set, k);
    g->fail[i] = OMPF_CNT_LIMIT;
    g->err[i] = EINVAL;
    snprintf(g->reason[i], sizeof g->reason[i],
             "event %s: no free counter: the %zu hardware event%s before "
             "it fill the PMU (the kernel refused the group: %s); count "
             "fewer at once",
             g->set->ev[i].name, hw, hw == 1 ? "" : "s", strerror(EINVAL));
    return 1;
}

int ompf_cnt_group_open(const ompf_cnt_set_t *s, pid_t pid, int cpu,
                        unsigned flags, ompf_cnt_group_t **out)
{
    if (!s || !out)
        return OMPF_EINVAL;
    ompf_cnt_group_t *g = calloc(1, sizeof *g);
    if (!g)
        return OMPF_ENOMEM;
    g->set = s;
    g->n = s->n;
    g->leader = -1;
    int all_hw = s->n > 0;
    for (size_t i = 0; i < s->n; i++) {
        g->fd[i] = -1;
        g->slot[i] = -1;
        if (s->ev[i].fail) {
            g->fail[i] = s->ev[i].fail;
            snprintf(g->reason[i], sizeof g->reason[i], "%s",
                     s->ev[i].reason);
            continue;
        }
        struct perf_event_attr a = s->ev[i].attr;
        a.size = sizeof a;
        a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                        PERF_FORMAT_TOTAL_TIME_RUNNING;
        /* the leader starts disabled and is enabled once the group is
         * complete: a member added to a running group stays inactive until
         * the group is next scheduled in, and silently undercounts */
        a.disabled = g->leader < 0 ? 1 : 0;
        a.inherit = 0;
        int fd = ompf_pfd_adopt(perf_open(&a, pid, cpu,
                                          ompf_pfd_fd(g->leader)));
        if (fd < 0) {
            int e = errno;
            if (e == EINVAL && g->leader >= 0 && ompf_cnt_set_is_hardware(s, i) &&
                no_room(g, &a, pid, cpu, i))
                continue;
            open_fail(g, i, e);
            continue;
        }
        if (g->leader < 0)
            g->leader = fd;
        g->fd[i] = fd;
        g->slot[i] = (int)g->opened;
        g->page_set[g->opened] = i;
        g->opened++;
        if (!ompf_cnt_set_is_hardware(s, i))
            all_hw = 0;
    }
    g->bufwords = 3 + g->opened;
    if (g->leader >= 0 && !(flags & OMPF_CNT_DISABLED))
        ioctl(ompf_pfd_fd(g->leader), PERF_EVENT_IOC_ENABLE,
              PERF_IOC_FLAG_GROUP);
    /* rdpmc needs a mapped page per member on the calling thread's own
     * counters and the kernel's permission bit (cap_usr_rdpmc). */
    if (all_hw && g->opened == s->n && pid == 0 && cpu == -1 &&
        !(flags & OMPF_CNT_NO_RDPMC)) {
        int ok = 1;
        long psz = sysconf(_SC_PAGESIZE);
        for (size_t k = 0; k < g->opened && ok; k++) {
            void *p = mmap(NULL, (size_t)psz, PROT_READ, MAP_SHARED,
                           ompf_pfd_fd(g->fd[g->page_set[k]]), 0);
            if (p == MAP_FAILED) {
                ok = 0;
                break;
            }
            g->page[k] = p;
            if (!g->page[k]->cap_usr_rdpmc)
                ok = 0;
        }
        g->rdpmc = ok;
        if (!ok) {
            for (size_t k = 0; k < g->opened; k++)
                if (g->page[k]) {
                    munmap(g->page[k], (size_t)psz);
                    g->page[k] = NULL;
                }
        }
    }
    *out = g;
    return 0;
}

void ompf_cnt_group_close(ompf_cnt_group_t *g)
{
    if (!g)
        return;
    long psz = sysconf(_SC_PAGESIZE);
    for (size_t k = 0; k < g->opened; k++)
        if (g->page[k])
            munmap(g->page[k], (size_t)psz);
    /* members first; a number the program took over is never closed */
    for (size_t i = 0; i < g->n; i++)
        if (g->fd[i] >= 0 && g->fd[i] != g->leader)
            ompf_pfd_release(g->fd[i]);
    if (g->leader >= 0)
        ompf_pfd_release(g->leader);
    free(g);
}

int ompf_cnt_group_intact(const ompf_cnt_group_t *g)
{
    if (!g || g->dead)
        return 0;
    for (size_t i = 0; i < g->n; i++)
        if (g->fd[i] >= 0 && !ompf_pfd_intact(g->fd[i]))
            return 0;
    return 1;
}

size_t ompf_cnt_group_opened(const ompf_cnt_group_t *g)
{
    return g ? g->opened : 0;
}

ompf_cnt_fail_t ompf_cnt_group_fail(const ompf_cnt_group_t *g, size_t i,
                                    const char **reason, int *errno_out)
{
    if (!g || i >= g->n) {
        if (reason)
            *reason = "no such event";
        return OMPF_CNT_OTHER;
    }
    if (reason)
        *reason = g->fail[i] ? g->reason[i] : NULL;
    if (errno_out)
        *errno_out = g->err[i];
    return g->fail[i];
}

int ompf_cnt_group_uses_rdpmc(const ompf_cnt_group_t *g)
{
    return g ? g->rdpmc : 0;
}

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t rdpmc(uint32_t c)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(c));
    return (uint64_t)hi << 32 | lo;
}
static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}
#define OMPF_HAVE_RDPMC 1
#else
#define OMPF_HAVE_RDPMC 0
#endif

/* Self-monitoring read of one member following the kernel's documented
 * seqlock protocol (include/uapi/linux/perf_event.h).  Returns 0 when the
 * event is not on a counter right now: the caller falls back to read(). */
static int read_page(struct perf_event_mmap_page *pc, uint64_t *val,
                     uint64_t *enabled, uint64_t *running)
{
#if OMPF_HAVE_RDPMC
    uint32_t seq, idx;
    uint64_t count, ena, run;
    do {
        seq = pc->lock;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        ena = pc->time_enabled;
        run = pc->time_running;
        idx = pc->index;
        count = (uint64_t)pc->offset;
        if (!pc->cap_usr_rdpmc || !idx)
            return 0;
        uint64_t pmc = rdpmc(idx - 1);
        uint16_t width = pc->pmc_width;
        pmc <<= 64 - width;
        pmc = (uint64_t)((int64_t)pmc >> (64 - width));
        count += pmc;
        if (pc->cap_user_time && ena != run) {
            return 0;
        } else if (pc->cap_user_time) {
            uint64_t cyc = rdtsc();
            uint64_t quot = cyc >> pc->time_shift;
            uint64_t rem = cyc & (((uint64_t)1 << pc->time_shift) - 1);
            uint64_t delta = pc->time_offset + quot * pc->time_mult +
                             ((rem * pc->time_mult) >> pc->time_shift);
            ena += delta;
            run += delta;
        }
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    } while (pc->lock != seq);
    *val = count;
    *enabled = ena;
    *running = run;
    return 1;
#else
    (void)pc; (void)val; (void)enabled; (void)running;
    return 0;
#endif
}

int ompf_cnt_group_read(ompf_cnt_group_t *g, ompf_cnt_sample_t *out)
{
    if (!g || !out)
        return OMPF_EINVAL;
    if (g->opened == 0) {
        out->enabled_ns = out->running_ns = 0;
        return 0;
    }
    if (g->rdpmc) {
        uint64_t ena = 0, run = 0;
        size_t k;
        for (k = 0; k < g->opened; k++) {
            uint64_t v, e, r;
            if (!read_page(g->page[k], &v, &e, &r))
                break;
            out->value[g->page_set[k]] = v;
            if (k == 0) {
                ena = e;
                run = r;
            }
        }
        if (k == g->opened) {
            out->enabled_ns = ena;
            out->running_ns = run;
            return 0;
        }
    }
    if (g->dead)
        return OMPF_EIO;
    /* The number is looked up each time: the close/dup2 wrappers may have
     * moved our descriptor.  A failed or odd read is retried once when it
     * moved meanwhile; otherwise the group is dead (never read again). */
    ssize_t want = (ssize_t)(g->bufwords * sizeof(uint64_t));
    for (int tries = 0;; tries++) {
        int fd = ompf_pfd_fd(g->leader);
        ssize_t got = fd >= 0 ? read(fd, g->buf, (size_t)want) : -1;
        if (got == want && g->buf[0] == g->opened)
            break;
        if (tries == 0 && ompf_pfd_fd(g->leader) != fd)
            continue;
        g->dead = 1;
        return OMPF_EIO;
    }
    out->enabled_ns = g->buf[1];
    out->running_ns = g->buf[2];
    for (size_t i = 0; i < g->n; i++)
        out->value[i] = g->slot[i] >= 0 ? g->buf[3 + g->slot[i]] : 0;
    return 0;
}

int ompf_cnt_group_enable(ompf_cnt_group_t *g, int on)
{
    if (!g || g->leader < 0)
        return OMPF_EINVAL;
    if (ioctl(ompf_pfd_fd(g->leader),
              on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE,
              PERF_IOC_FLAG_GROUP) < 0)
        return OMPF_EIO;
    return 0;
}

/* ---- probing ------------------------------------------------------------ */

int ompf_cnt_probe(const ompf_cnt_set_t *s, ompf_error_t *err)
{
    if (!s) {
        seterr(err, OMPF_EINVAL, "ompf_cnt_probe: no event set");
        return OMPF_EINVAL;
    }
    ompf_cnt_group_t *g;
    int rc = ompf_cnt_group_open(s, 0, -1, OMPF_CNT_NO_RDPMC, &g);
    if (rc) {
        seterr(err, rc, "cannot open a counter group: out of memory");
        return rc;
    }
    for (size_t i = 0; i < s->n; i++) {
        const char *why;
        if (ompf_cnt_group_fail(g, i, &why, NULL) != OMPF_CNT_OK) {
            seterr(err, OMPF_EUNSUPP, "%s", why);
            ompf_cnt_group_close(g);
            return OMPF_EUNSUPP;
        }
    }
    ompf_cnt_sample_t a;
    volatile uint64_t sink = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int k = 0; k < 10000; k++)
            sink += (uint64_t)k * 2654435761u;
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while ((t1.tv_sec - t0.tv_sec) * 1000000000L +
                 (t1.tv_nsec - t0.tv_nsec) < 1000000L);
    rc = ompf_cnt_group_read(g, &a);
    ompf_cnt_group_close(g);
    if (rc) {
        seterr(err, OMPF_EIO, "reading the counter group failed");
        return OMPF_EIO;
    }
    if (s->n && (a.enabled_ns == 0 || a.running_ns != a.enabled_ns)) {
        seterr(err, OMPF_EUNSUPP,
               "the %zu events do not fit on the PMU at once (running "
               "%llu of %llu ns enabled: the kernel multiplexed them)",
               s->n, (unsigned long long)a.running_ns,
               (unsigned long long)a.enabled_ns);
        return OMPF_EUNSUPP;
    }
    return 0;
}
