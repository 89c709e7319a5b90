/* Held uprobes (include/ompfuse/uphold.h): define in tracefs, keep one
 * perf event open per probe, remove on destroy or through the janitor. */
#include "ompfuse/uphold.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "sources.h"
#include "upevents.h"

typedef struct held {
    char path[PATH_MAX];
    uint64_t off;
    int fd;   /* the holder, -1 when the probe could not be held */
    int ours; /* defined by us: removed on destroy */
    char ge[200]; /* GROUP/EVENT */
} held_t;

struct ompf_uphold {
    char root[PATH_MAX]; /* tracing directory */
    char group[32];      /* ompfuse_<pid> */
    FILE *log;
    int status;          /* 0, OMPF_EUNSUPP, OMPF_EPERM */
    char why[PATH_MAX + 128];
    int noted;
    int janitor;         /* write end of the janitor's pipe, or -1 (none yet) */
    held_t *h;
    size_t n, cap;
};

const char *ompf_uphold_strerror(int code)
{
    switch (code) {
    case 0: return "uprobes are defined in tracefs and held";
    case OMPF_EUNSUPP: return "tracefs is not mounted";
    case OMPF_EPERM: return "uprobe_events in tracefs is not writable (not root)";
    default: return ompf_strerror(code);
    }
}

/* The janitor: a grandchild (reparented, never a zombie of ours) that
 * waits for the pipe to close -- this process ended, however -- and then
 * removes the group, retrying while runs that outlived it still have the
 * probes open. */
static void start_janitor(ompf_uphold_t *h)
{
    int p[2];
    h->janitor = -1;
    if (pipe2(p, O_CLOEXEC))
        return;
    pid_t c = fork();
    if (c == 0) {
        if (fork() != 0)
            _exit(0);
        setsid(); /* no terminal signals: it must outlive an interrupt */
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        long max = sysconf(_SC_OPEN_MAX);
        for (int fd = 0; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
            if (fd != p[0])
                close(fd);
        int null = open("/dev/null", O_RDWR); /* 0, 1, 2: nobody's pipes */
        if (null == 0) {
            (void)!dup(0);
            (void)!dup(0);
        }
        char b;
        while (read(p[0], &b, 1) < 0 && errno == EINTR)
            ;
        ompf_upev_remove(h->root, h->group, 0, 120 * 1000);
        _exit(0);
    }
    close(p[0]);
    if (c < 0) {
        close(p[1]);
        return;
    }
    while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
        ;
    h->janitor = p[1];
}

int ompf_uphold_create(FILE *log, ompf_uphold_t **out)
{
    if (!out)
        return OMPF_EINVAL;
    ompf_uphold_t *h = calloc(1, sizeof *h);
    if (!(*out = h))
        return OMPF_ENOMEM;
    h->log = log;
    h->janitor = -1;
    snprintf(h->group, sizeof h->group, "ompfuse_%ld", (long)getpid());
    if (ompf_upev_root(h->root, sizeof h->root)) {
        h->status = OMPF_EUNSUPP;
        snprintf(h->why, sizeof h->why, "tracefs is not mounted");
        return 0;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/uprobe_events", h->root);
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        h->status = errno == EACCES || errno == EPERM ? OMPF_EPERM : OMPF_EUNSUPP;
        snprintf(h->why, sizeof h->why, "%s: %s", path, strerror(errno));
        return 0;
    }
    close(fd);
    ompf_upev_remove(h->root, NULL, 1, 0); /* groups of dead ompfuse processes */
    setenv("OMPFUSE_UPROBE_GROUP", h->group, 1);
    return 0;
}

/* The first plain definition of path:off in a group that is not ours or
 * another ompfuse's (perf probe's): its GROUP/EVENT into buf, or 0. */
static int foreign_probe(const ompf_uphold_t *h, const char *path, uint64_t off, char *buf,
                         size_t n)
{
    static char text[1 << 16];
    if (ompf_upev_read(h->root, text, sizeof text) < 0)
        return 0;
    for (char *line = text; *line;) {
        size_t ll = strcspn(line, "\n");
        ompf_upev_t e;
        char real[PATH_MAX];
        if (ompf_upev_parse(line, ll, &e) == 0 && e.kind == 'p' && e.plain && e.off == off &&
            !ompf_upev_owner(e.group) &&
            (!strcmp(e.path, path) || (realpath(e.path, real) && !strcmp(real, path)))) {
            snprintf(buf, n, "%s/%s", e.group, e.event);
            return 1;
        }
        line += ll + (line[ll] ? 1 : 0);
    }
    return 0;
}

static int write_events(const ompf_uphold_t *h, const char *cmd)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/uprobe_events", h->root);
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = write(fd, cmd, strlen(cmd)) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

/* Opens the holder on GROUP/EVENT: the fd, or -errno. */
static int open_holder(const ompf_uphold_t *h, const char *ge)
{
    char path[PATH_MAX + 320], buf[32] = "";
    snprintf(path, sizeof path, "%s/events/%s/id", h->root, ge);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0)
        return -EIO;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_TRACEPOINT;
    a.config = strtoull(buf, NULL, 10);
    /* CPU-wide, not on this process, and enabled (measured: a disabled
     * holder does not do it): the kernel then sees a system-wide user of
     * the probe and skips, at every per-thread open and close, the
     * installing and removing of the breakpoint in the thread's process
     * (uprobe_apply, which waits for RCU grace periods, 10-300 ms); the
     * price is that every process running the binary traps at the probe
     * (docs/events.md, Held uprobes).  The first CPU that takes it; what
     * it counts is never read. */
    for (int cpu = 0; cpu < 4096; cpu++) {
        fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0 || (errno != ENODEV && errno != EINVAL))
            break;
    }
    return fd < 0 ? -errno : fd;
}

static void note(ompf_uphold_t *h, const char *fmt, const char *a, const char *b)
{
    if (!h->log)
        return;
    fprintf(h->log, "ompfuse: ");
    fprintf(h->log, fmt, a, b);
    fprintf(h->log, "\n");
}

/* Room for one more entry: 0, or -1 out of memory. */
static int grow(ompf_uphold_t *h)
{
    if (h->n < h->cap)
        return 0;
    size_t cap = h->cap ? 2 * h->cap : 16;
    held_t *nh = realloc(h->h, cap * sizeof *nh);
    if (!nh)
        return -1;
    h->h = nh;
    h->cap = cap;
    return 0;
}

#define TRACEPOINT_OFF UINT64_MAX /* held_t.off of a kernel tracepoint */

/* A kernel tracepoint (SUBSYS:NAME) is held too, by a perf event of this
 * process: the last close of a tracepoint unregisters it and waits for
 * RCU grace periods while holding the kernel's event_mutex, which every
 * other tracepoint open or close on the machine then waits for. */
static int hold_tracepoint(ompf_uphold_t *h, const char *name)
{
    const char *c = strchr(name, ':');
    if (!c || strchr(c + 1, ':') || strchr(name, '/') || !strncmp(name, "mem:", 4) ||
        h->status)
        return 0;
    for (size_t i = 0; i < h->n; i++)
        if (h->h[i].off == TRACEPOINT_OFF && !strcmp(h->h[i].path, name))
            return 0;
    ompf_cnt_set_t *s;
    struct perf_event_attr a;
    if (ompf_cnt_set_create(&name, 1, &s, NULL))
        return 0;
    int tp = ompf_cnt_set_status(s, 0, NULL) == OMPF_CNT_OK &&
             ompf_cnt_set_attr(s, 0, &a, sizeof a) == 0 && a.type == PERF_TYPE_TRACEPOINT;
    ompf_cnt_set_destroy(s);
    if (!tp)
        return 0;
    if (grow(h))
        return OMPF_ENOMEM;
    a.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return 0; /* the runs report why */
    held_t *e = &h->h[h->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->path, sizeof e->path, "%s", name);
    e->off = TRACEPOINT_OFF;
    e->fd = fd;
    return 1;
}

static int hold_one(ompf_uphold_t *h, const char *name)
{
    if (strncmp(name, "uprobe:", 7))
        return hold_tracepoint(h, name);
    char abs[PATH_MAX];
    uint64_t off;
    if (ompf_cnt_src_uprobe_where(name, abs, &off))
        return 0; /* the run reports what is wrong with it */
    for (size_t i = 0; i < h->n; i++)
        if (h->h[i].off == off && !strcmp(h->h[i].path, abs))
            return 0;
    if (h->status) {
        if (!h->noted++)
            note(h, "uprobes go through the uprobe PMU (%s): ~10 ms to open and ~80 ms to "
                    "close per thread and uprobe in every run; as root, `mount -t tracefs nodev "
                    "/sys/kernel/tracing` lets ompfuse define and hold them (%s)",
                 h->why, "docs/events.md, Held uprobes");
        return 0;
    }
    if (grow(h))
        return OMPF_ENOMEM;
    held_t *e = &h->h[h->n];
    memset(e, 0, sizeof *e);
    snprintf(e->path, sizeof e->path, "%s", abs);
    e->off = off;
    e->fd = -1;
    char ge[200], cmd[PATH_MAX + 240];
    if (!foreign_probe(h, abs, off, ge, sizeof ge)) {
        if (h->janitor < 0)
            start_janitor(h); /* before the first definition of ours */
        char ev[64];
        ompf_upev_name(abs, off, ev, sizeof ev);
        snprintf(ge, sizeof ge, "%s/%s", h->group, ev);
        snprintf(cmd, sizeof cmd, "p:%s %s:0x%llx\n", ge, abs, (unsigned long long)off);
        int rc = write_events(h, cmd);
        if (rc) {
            note(h, "cannot define %s in tracefs (%s): its runs use the uprobe PMU", name,
                 strerror(-rc));
            h->n++; /* remembered, so that it is tried once */
            return 0;
        }
        e->ours = 1;
    }
    snprintf(e->ge, sizeof e->ge, "%s", ge);
    e->fd = open_holder(h, ge);
    if (e->fd < 0) {
        note(h, "cannot hold %s open (%s): its runs use the uprobe PMU", name, strerror(-e->fd));
        if (e->ours) {
            snprintf(cmd, sizeof cmd, "-:%s\n", ge);
            write_events(h, cmd);
            e->ours = 0;
        }
        e->fd = -1;
        h->n++;
        return 0;
    }
    h->n++;
    return 1;
}

int ompf_uphold_add(ompf_uphold_t *h, const char *const *names, size_t n)
{
    if (!h || (n && !names))
        return OMPF_EINVAL;
    int held = 0;
    for (size_t i = 0; i < n; i++) {
        if (!names[i])
            continue;
        int rc = hold_one(h, names[i]);
        if (rc < 0)
            return rc;
        held += rc;
    }
    return held;
}

int ompf_uphold_add_list(ompf_uphold_t *h, const char *list)
{
    if (!h || !list)
        return OMPF_EINVAL;
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return OMPF_ENOMEM;
    int held = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ')
            t++;
        t[strcspn(t, " ")] = '\0';
        const char *one = t;
        int rc = ompf_uphold_add(h, &one, 1);
        if (rc < 0) {
            free(copy);
            return rc;
        }
        held += rc;
    }
    free(copy);
    return held;
}

/* Closes entry i's holder, removes its definition if ours, forgets it. */
static void release(ompf_uphold_t *h, size_t i)
{
    held_t *e = &h->h[i];
    if (e->fd >= 0)
        close(e->fd);
    if (e->ours) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "-:%s\n", e->ge);
        /* EBUSY: a run still has it open; destroy or the janitor retries */
        struct timespec ts = {0, 50 * 1000 * 1000};
        for (int k = 0; write_events(h, cmd) == -EBUSY && k < 40; k++)
            nanosleep(&ts, NULL);
    }
    h->h[i] = h->h[--h->n];
}

int ompf_uphold_only(ompf_uphold_t *h, const char *list)
{
    if (!h || !list)
        return OMPF_EINVAL;
    for (size_t i = h->n; i-- > 0;) {
        /* kept when list names it (the same binary and offset); kernel
         * tracepoints stay (they make no process trap) */
        int keep = h->h[i].off == TRACEPOINT_OFF;
        char *copy = strdup(list), *save = NULL;
        if (!copy)
            return OMPF_ENOMEM;
        for (char *t = strtok_r(copy, ",", &save); !keep && t; t = strtok_r(NULL, ",", &save)) {
            char abs[PATH_MAX];
            uint64_t off;
            while (*t == ' ')
                t++;
            keep = !ompf_cnt_src_uprobe_where(t, abs, &off) && off == h->h[i].off &&
                   !strcmp(abs, h->h[i].path);
        }
        free(copy);
        if (!keep)
            release(h, i);
    }
    return ompf_uphold_add_list(h, list);
}

size_t ompf_uphold_count(const ompf_uphold_t *h)
{
    size_t k = 0;
    for (size_t i = 0; h && i < h->n; i++)
        k += h->h[i].fd >= 0;
    return k;
}

int ompf_uphold_status(const ompf_uphold_t *h) { return h ? h->status : OMPF_EINVAL; }

void ompf_uphold_destroy(ompf_uphold_t *h)
{
    if (!h)
        return;
    int ours = 0;
    for (size_t i = 0; i < h->n; i++) {
        if (h->h[i].fd >= 0)
            close(h->h[i].fd);
        ours |= h->h[i].ours;
    }
    /* runs have ended by now; a straggler's open event makes it EBUSY */
    if (ours)
        ompf_upev_remove(h->root, h->group, 0, 2000);
    if (h->janitor >= 0)
        close(h->janitor);
    const char *g = getenv("OMPFUSE_UPROBE_GROUP");
    if (g && !strcmp(g, h->group))
        unsetenv("OMPFUSE_UPROBE_GROUP");
    free(h->h);
    free(h);
}
