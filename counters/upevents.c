/* tracefs's uprobe_events: parse its lines, remove groups (see
 * upevents.h; no malloc or stdio: the janitor of uphold.c runs it after
 * fork). */
#include "upevents.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Copies s[0..len) into dst (size n): 0, or -1 when it does not fit. */
static int copy(char *dst, size_t n, const char *s, size_t len)
{
    if (len >= n)
        return -1;
    memcpy(dst, s, len);
    dst[len] = '\0';
    return 0;
}

int ompf_upev_parse(const char *line, size_t len, ompf_upev_t *e)
{
    memset(e, 0, sizeof *e);
    if (len < 4 || (line[0] != 'p' && line[0] != 'r') || line[1] != ':')
        return -1;
    e->kind = line[0];
    const char *end = line + len, *p = line + 2;
    const char *slash = memchr(p, '/', (size_t)(end - p));
    const char *sp = memchr(p, ' ', (size_t)(end - p));
    if (!slash || !sp || slash > sp || copy(e->group, sizeof e->group, p, (size_t)(slash - p)) ||
        copy(e->event, sizeof e->event, slash + 1, (size_t)(sp - slash - 1)))
        return -1;
    const char *loc = sp + 1;
    const char *locend = memchr(loc, ' ', (size_t)(end - loc));
    if (!locend)
        locend = end;
    /* the offset follows the last ":0x" (a path may hold colons) */
    const char *c = NULL;
    for (const char *q = loc; q + 3 <= locend; q++)
        if (q[0] == ':' && q[1] == '0' && q[2] == 'x')
            c = q;
    if (!c || copy(e->path, sizeof e->path, loc, (size_t)(c - loc)))
        return -1;
    uint64_t v = 0;
    const char *q = c + 3;
    for (; q < locend; q++) {
        int d = *q >= '0' && *q <= '9'   ? *q - '0'
                : *q >= 'a' && *q <= 'f' ? *q - 'a' + 10
                : *q >= 'A' && *q <= 'F' ? *q - 'A' + 10
                                         : -1;
        if (d < 0)
            break;
        v = v * 16 + (uint64_t)d;
    }
    if (q == c + 3)
        return -1;
    e->off = v;
    /* "(0xREF)" is a reference counter; anything after a blank fetches */
    e->plain = q == locend && locend == end;
    return 0;
}

int ompf_upev_root(char *buf, size_t n)
{
    static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
    char path[128];
    struct stat st;
    for (size_t i = 0; i < 2; i++) {
        size_t l = strlen(roots[i]);
        memcpy(path, roots[i], l);
        memcpy(path + l, "/events", 8);
        /* a mounted tracefs has events/; the bare mount point has not */
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return copy(buf, n, roots[i], l);
    }
    return -1;
}

void ompf_upev_name(const char *path, uint64_t off, char *buf, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        h = (h ^ *p) * 16777619u;
    snprintf(buf, n, "u%llx_%08x", (unsigned long long)off, (unsigned)h);
}

long ompf_upev_owner(const char *group)
{
    if (strncmp(group, "ompfuse_", 8))
        return 0;
    long pid = 0;
    const char *p = group + 8;
    for (; *p >= '0' && *p <= '9' && pid < 100000000; p++)
        pid = pid * 10 + (*p - '0');
    return p > group + 8 && (!*p || *p == '_') ? pid : 0;
}

int ompf_upev_alive(long pid)
{
    return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH);
}

long ompf_upev_read(const char *root, char *buf, size_t n)
{
    char path[PATH_MAX];
    size_t l = strlen(root);
    if (copy(path, sizeof path - 16, root, l))
        return -ENAMETOOLONG;
    memcpy(path + l, "/uprobe_events", 15);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t k = 0;
    while (k + 1 < n) {
        ssize_t r = read(fd, buf + k, n - 1 - k);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        k += (size_t)r;
    }
    buf[k] = '\0';
    close(fd);
    return (long)k;
}

/* Appends s to buf at *k (size n). */
static void put(char *buf, size_t n, size_t *k, const char *s)
{
    while (*s && *k + 1 < n)
        buf[(*k)++] = *s++;
    buf[*k] = '\0';
}

int ompf_upev_remove(const char *root, const char *group, int stale, int wait_ms)
{
    static char text[1 << 16]; /* one caller at a time: a CLI or a janitor */
    char path[PATH_MAX];
    size_t pl = 0;
    put(path, sizeof path, &pl, root);
    put(path, sizeof path, &pl, "/uprobe_events");
    for (int waited = 0;; waited += 50) {
        long len = ompf_upev_read(root, text, sizeof text);
        if (len < 0)
            return (int)len;
        int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        int busy = 0;
        for (char *line = text; *line;) {
            char *nl = strchr(line, '\n');
            size_t ll = nl ? (size_t)(nl - line) : strlen(line);
            ompf_upev_t e;
            if (ompf_upev_parse(line, ll, &e) == 0 &&
                (stale ? ompf_upev_owner(e.group) && !ompf_upev_alive(ompf_upev_owner(e.group))
                       : !strcmp(e.group, group))) {
                char cmd[160];
                size_t k = 0;
                put(cmd, sizeof cmd, &k, "-:");
                put(cmd, sizeof cmd, &k, e.group);
                put(cmd, sizeof cmd, &k, "/");
                put(cmd, sizeof cmd, &k, e.event);
                put(cmd, sizeof cmd, &k, "\n");
                if (write(fd, cmd, k) < 0 && errno != ENOENT)
                    busy++; /* EBUSY: someone still has it open */
            }
            line += ll + (nl ? 1 : 0);
        }
        close(fd);
        if (!busy || waited >= wait_ms)
            return busy;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}
