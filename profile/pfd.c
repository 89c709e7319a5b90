/* The tool's perf_event descriptors, guarded (ompfuse/pfd.h). */
#include "ompfuse/pfd.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

/* Programs allocate descriptors from the lowest free number, and the
 * ones that close "all" descriptors mostly loop up to 1023 (FD_SETSIZE) or
 * to the soft limit.  Near the soft limit a descriptor is never handed out
 * by open() while lower numbers are free; capped so that a huge limit does
 * not make the kernel grow the descriptor table to millions of slots. */
#define FD_HIGH_CAP 4000
#define FD_HEADROOM 64

int ompf_fd_high(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return FD_HIGH_CAP;
    if (rl.rlim_cur <= 2 * FD_HEADROOM)
        return 3;
    rlim_t h = rl.rlim_cur - FD_HEADROOM;
    return h > FD_HIGH_CAP ? FD_HIGH_CAP : (int)h;
}

/* cur_[h]: the number handle h is read through (-1 lost);
 * home[fd]: 1 + the handle whose descriptor has number fd (0: none);
 * id[h]: the event id.  Zero-initialised pages cost nothing until used. */
int ompf_pfd_cur_[OMPF_PFD_MAX];
static int home[OMPF_PFD_MAX];
static uint64_t ids[OMPF_PFD_MAX];
static unsigned n_moved, n_lost;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* home[] is read without the lock by ompf_pfd_owned */
static void set_home(int fd, int v)
{
    __atomic_store_n(&home[fd], v, __ATOMIC_RELAXED);
}

static int event_id(int fd, uint64_t *id)
{
    return ioctl(fd, PERF_EVENT_IOC_ID, id);
}

int ompf_pfd_adopt(int fd)
{
    if (fd < 0)
        return -1;
    int min = ompf_fd_high();
    if (fd < min) {
        int h = fcntl(fd, F_DUPFD_CLOEXEC, min);
        if (h >= 0) {
            close(fd);
            fd = h;
        }
    }
    if (fd >= OMPF_PFD_MAX)
        return fd; /* unguarded: used as is */
    uint64_t id = 0;
    if (event_id(fd, &id) != 0) { /* not a perf event: refuse it */
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    pthread_mutex_lock(&mu);
    ids[fd] = id;
    set_home(fd, fd + 1);
    __atomic_store_n(&ompf_pfd_cur_[fd], fd, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mu);
    return fd;
}

static int intact_locked(int h, int fd)
{
    uint64_t id = 0;
    return fd >= 0 && event_id(fd, &id) == 0 && id == ids[h];
}

int ompf_pfd_intact(int h)
{
    if (h < 0 || h >= OMPF_PFD_MAX)
        return h >= 0;
    pthread_mutex_lock(&mu);
    int ok = intact_locked(h, ompf_pfd_cur_[h]);
    pthread_mutex_unlock(&mu);
    return ok;
}

int ompf_pfd_release(int h)
{
    if (h < 0)
        return 0;
    if (h >= OMPF_PFD_MAX) {
        close(h);
        return 1;
    }
    pthread_mutex_lock(&mu);
    int fd = ompf_pfd_cur_[h];
    int ok = intact_locked(h, fd);
    if (fd >= 0 && fd < OMPF_PFD_MAX && home[fd] == h + 1)
        set_home(fd, 0);
    if (ok)
        close(fd); /* never a number that is not ours */
    __atomic_store_n(&ompf_pfd_cur_[h], -1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mu);
    return ok;
}

int ompf_pfd_owned(int fd)
{
    /* racy read on purpose: home[] changes only at thread begin/end, and
     * a stale answer is settled under the lock in ompf_pfd_take */
    return fd >= 0 && fd < OMPF_PFD_MAX &&
           __atomic_load_n(&home[fd], __ATOMIC_RELAXED) != 0;
}

int ompf_pfd_take(int fd)
{
    if (fd < 0 || fd >= OMPF_PFD_MAX)
        return 0;
    int rc = 0;
    pthread_mutex_lock(&mu);
    int h = home[fd] - 1;
    if (h >= 0) {
        /* >= 3: never 0..2, which programs reopen by number */
        int to = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        set_home(fd, 0);
        if (to >= 0 && to < OMPF_PFD_MAX) {
            set_home(to, h + 1);
            __atomic_store_n(&ompf_pfd_cur_[h], to, __ATOMIC_RELEASE);
            n_moved++;
        } else {
            if (to >= 0)
                close(to);
            __atomic_store_n(&ompf_pfd_cur_[h], -1, __ATOMIC_RELEASE);
            n_lost++;
            rc = -1;
        }
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

void ompf_pfd_stats(unsigned *moved, unsigned *lost)
{
    pthread_mutex_lock(&mu);
    if (moved)
        *moved = n_moved;
    if (lost)
        *lost = n_lost;
    pthread_mutex_unlock(&mu);
}
