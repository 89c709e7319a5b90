/* The emulated PMU's interposed calls (docs/epmu.md).  LD_PRELOAD puts
 * these before libc for the program, the dlopen'ed tool and the ompfuse
 * commands alike.  An emulated event is a real descriptor (a one-page
 * memfd, so numbers, dup, close and mmap behave as the kernel's do); the
 * table below says which descriptors are events. */
#include "epmu_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FD_MAX 65536
static epmu_ev_t *fdtab[FD_MAX];

static long (*r_syscall)(long, ...);
static ssize_t (*r_read)(int, void *, size_t);
static int (*r_ioctl)(int, unsigned long, ...);
static int (*r_close)(int);
static int (*r_dup)(int);
static int (*r_dup2)(int, int);
static int (*r_dup3)(int, int, int);
static int (*r_fcntl)(int, int, ...);
static int (*r_stat)(const char *, struct stat *);
static FILE *(*r_fopen)(const char *, const char *);

/* libc's definition, looked up once */
static void *real(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}
#define REAL(name) ((__typeof__(r_##name))real((void **)&r_##name, #name))

__attribute__((constructor)) static void epmu_init(void)
{
    epmu_config();
}

__attribute__((destructor)) static void epmu_fini(void)
{
    epmu_lock();
    epmu_model_log_all();
    epmu_unlock();
}

static epmu_ev_t *ev_of(int fd)
{
    return fd >= 0 && fd < FD_MAX ? __atomic_load_n(&fdtab[fd], __ATOMIC_ACQUIRE)
                                   : NULL;
}

static long fail(int e)
{
    errno = e;
    return -1;
}

static int open_event(struct perf_event_attr *a, pid_t pid, int cpu,
                      int group_fd, unsigned long flags)
{
    epmu_ev_t *group = NULL;
    if (group_fd != -1) {
        group = ev_of(group_fd);
        if (!group)
            return (int)fail(EBADF);
    }
    int mfd = memfd_create("epmu", flags & PERF_FLAG_FD_CLOEXEC ? MFD_CLOEXEC : 0);
    if (mfd < 0)
        return -1;
    long psz = sysconf(_SC_PAGESIZE);
    struct perf_event_mmap_page *page = NULL;
    if (ftruncate(mfd, psz) == 0)
        page = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (!page || page == MAP_FAILED || mfd >= FD_MAX) {
        int e = errno ? errno : EMFILE;
        if (page && page != MAP_FAILED)
            munmap(page, (size_t)psz);
        REAL(close)(mfd);
        return (int)fail(e);
    }
    page->cap_user_rdpmc = epmu_cfg.rdpmc ? 1 : 0;
    page->index = 0; /* never on a counter rdpmc could read */
    page->pmc_width = 48;
    epmu_ev_t *e = NULL;
    epmu_lock();
    int rc = epmu_model_open(a, pid, cpu, group, &e);
    if (rc == 0) {
        e->page = page;
        __atomic_store_n(&fdtab[mfd], e, __ATOMIC_RELEASE);
    }
    epmu_unlock();
    if (rc) {
        munmap(page, (size_t)psz);
        REAL(close)(mfd);
        return (int)fail(-rc);
    }
    return mfd;
}

/* Types the model counts; tracepoints, breakpoints and dynamic PMUs
 * (uprobes) go to the kernel. */
static int emulated_type(uint32_t t)
{
    return t == PERF_TYPE_HARDWARE || t == PERF_TYPE_SOFTWARE ||
           t == PERF_TYPE_HW_CACHE || t == PERF_TYPE_RAW;
}

long syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (nr == SYS_perf_event_open && a[0]) {
        struct perf_event_attr *at = (struct perf_event_attr *)a[0];
        if (emulated_type(at->type) || ev_of((int)a[3]))
            return open_event(at, (pid_t)a[1], (int)a[2], (int)a[3],
                              (unsigned long)a[4]);
    }
    return REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

ssize_t read(int fd, void *buf, size_t n)
{
    epmu_ev_t *e = ev_of(fd);
    if (!e)
        return REAL(read)(fd, buf, n);
    epmu_lock();
    ssize_t got = epmu_model_read(e, buf, n);
    epmu_unlock();
    return got < 0 ? fail((int)-got) : got;
}

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    (void)buflen;
    return read(fd, buf, n);
}

int ioctl(int fd, unsigned long req, ...)
{
    va_list ap;
    va_start(ap, req);
    unsigned long arg = va_arg(ap, unsigned long);
    va_end(ap);
    epmu_ev_t *e = ev_of(fd);
    if (!e)
        return REAL(ioctl)(fd, req, arg);
    epmu_lock();
    int rc = epmu_model_ioctl(e, req, arg);
    epmu_unlock();
    return rc < 0 ? (int)fail(-rc) : rc;
}

/* The descriptor fd stops naming its event (closed or replaced). */
static void drop(int fd)
{
    epmu_ev_t *e = ev_of(fd);
    if (!e)
        return;
    epmu_lock();
    __atomic_store_n(&fdtab[fd], NULL, __ATOMIC_RELEASE);
    if (--e->refs == 0) {
        if (e->page)
            munmap(e->page, (size_t)sysconf(_SC_PAGESIZE));
        e->page = NULL;
        epmu_model_release(e);
    }
    epmu_unlock();
}

static int dup_done(int from, int to)
{
    epmu_ev_t *e = ev_of(from);
    if (to >= 0 && e && to < FD_MAX) {
        epmu_lock();
        e->refs++;
        __atomic_store_n(&fdtab[to], e, __ATOMIC_RELEASE);
        epmu_unlock();
    }
    return to;
}

int close(int fd)
{
    drop(fd);
    return REAL(close)(fd);
}

int dup(int fd) { return dup_done(fd, REAL(dup)(fd)); }

int dup2(int from, int to)
{
    if (from != to && ev_of(to) && fcntl(from, F_GETFD) >= 0)
        drop(to);
    return dup_done(from, REAL(dup2)(from, to));
}

int dup3(int from, int to, int flags)
{
    if (from != to && ev_of(to) && fcntl(from, F_GETFD) >= 0)
        drop(to);
    return dup_done(from, REAL(dup3)(from, to, flags));
}

int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    int rc = REAL(fcntl)(fd, cmd, arg);
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
        return dup_done(fd, rc);
    return rc;
}

int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    return fcntl(fd, cmd, arg);
}

/* ---- the CPU PMU in sysfs --------------------------------------------- */

#define SYS_CPU "/sys/bus/event_source/devices/cpu"

/* The directory exists, as on a machine with a core PMU. */
int stat(const char *path, struct stat *st)
{
    if (!strcmp(path, SYS_CPU))
        return REAL(stat)("/", st);
    return REAL(stat)(path, st);
}

FILE *fopen(const char *path, const char *mode)
{
    if (!strcmp(path, SYS_CPU "/perf_event_mux_interval_ms")) {
        static char buf[32];
        snprintf(buf, sizeof buf, "%llu\n",
                 (unsigned long long)(epmu_cfg.tick_ns / 1000000));
        return fmemopen(buf, strlen(buf), "r");
    }
    return REAL(fopen)(path, mode);
}

FILE *fopen64(const char *path, const char *mode) { return fopen(path, mode); }

void epmu_signal(unsigned long n)
{
    epmu_lock();
    epmu_model_signal(gettid(), n);
    epmu_unlock();
}
