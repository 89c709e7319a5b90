/* The lock on a campaign's output directory, DIR/.ompfuse-lock: one
 * campaign (ompfuse campaign, ompfuse run, --resume) writes into a
 * directory at a time.
 *
 * The lock itself is flock(2) on that file: the kernel drops it when its
 * holder dies, however it dies, so a SIGKILLed campaign never leaves the
 * directory locked.  The file's content ("pid<TAB>host<TAB>unix time") only
 * says who holds it: a refused campaign names that process, and a campaign
 * that finds content but gets the lock says it takes over a stale lock.
 *
 * NFS (the Slurm launcher's shared directories): Linux turns flock on NFS
 * into a whole-file byte-range lock that the server arbitrates, so nodes
 * see each other's locks (NFSv4, or NFSv3 with lockd; not with the `nolock`
 * or `local_lock=flock` mount options).  When the filesystem refuses locks
 * (ENOLCK, EOPNOTSUPP), the content decides alone: a live process on this
 * host or any process on another host (which cannot be checked from here)
 * keeps the directory; a dead one on this host is taken over.
 *
 * The holder removes the file on release; an acquirer checks, after
 * locking, that the path still names the file it locked (else the holder
 * removed it meanwhile and it tries again). */
#include "campaign_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct ompf_dirlock {
    int fd;
    char path[PATH_MAX];
};

typedef struct holder {
    long pid;
    char host[256];
    long since;
} holder_t;

/* 0 and the holder named by the file's content; -1 when it names none. */
static int read_holder(int fd, holder_t *h)
{
    char buf[512];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    memset(h, 0, sizeof *h);
    char *tab = strchr(buf, '\t');
    if (!tab)
        return -1;
    *tab = '\0';
    char *end;
    h->pid = strtol(buf, &end, 10);
    if (*end || h->pid <= 0)
        return -1;
    char *host = tab + 1, *t2 = strchr(host, '\t');
    if (t2) {
        *t2 = '\0';
        h->since = strtol(t2 + 1, NULL, 10);
    }
    host[strcspn(host, "\n")] = '\0';
    snprintf(h->host, sizeof h->host, "%s", host);
    return 0;
}

/* 1 when pid h->pid exists on this host (a zombie is dead). */
static int holder_alive_here(const holder_t *h)
{
    if (kill((pid_t)h->pid, 0) != 0 && errno == ESRCH)
        return 0;
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", h->pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1; /* no /proc: trust kill() */
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *rp = strrchr(stat, ')');
    return !(rp && rp[1] == ' ' && rp[2] == 'Z');
}

static void describe(const holder_t *h, char *buf, size_t len)
{
    char when[64] = "";
    if (h->since > 0) {
        time_t t = (time_t)h->since;
        struct tm tm;
        if (localtime_r(&t, &tm))
            strftime(when, sizeof when, " since %Y-%m-%d %H:%M:%S", &tm);
    }
    snprintf(buf, len, "pid %ld on host %s%s", h->pid, h->host, when);
}

static int write_holder(ompf_dirlock_t *l, ompf_error_t *err)
{
    char host[256], text[512];
    ompf_cmpi_hostname(host, sizeof host);
    int n = snprintf(text, sizeof text, "%ld\t%s\t%ld\n", (long)getpid(), host,
                     (long)time(NULL));
    if (ftruncate(l->fd, 0) == 0 && pwrite(l->fd, text, (size_t)n, 0) == n)
        return 0;
    return ompf_error_set(err, OMPF_EIO, "cannot write the lock file %s: %s", l->path,
                          strerror(errno ? errno : ENOSPC));
}

int ompf_dirlock_acquire(const char *dir, FILE *log, ompf_dirlock_t **out,
                         ompf_error_t *err)
{
    *out = NULL;
    ompf_dirlock_t *l = calloc(1, sizeof *l);
    if (!l)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    snprintf(l->path, sizeof l->path, "%s/.ompfuse-lock", dir);
    char here[256];
    ompf_cmpi_hostname(here, sizeof here);
    for (int attempt = 0;; attempt++) {
        l->fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (l->fd < 0) {
            int rc = ompf_error_set(err, OMPF_EIO, "cannot create the lock file %s: %s",
                                    l->path, strerror(errno));
            free(l);
            return rc;
        }
        holder_t h;
        int named = read_holder(l->fd, &h) == 0;
        char who[400] = "";
        if (named)
            describe(&h, who, sizeof who);
        int kernel = 1;
        if (flock(l->fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            if (e == EWOULDBLOCK || e == EINTR) {
                /* a new holder may not have written its name yet */
                if (!named && attempt < 20) {
                    close(l->fd);
                    struct timespec ts = {0, 50 * 1000 * 1000};
                    nanosleep(&ts, NULL);
                    continue;
                }
                int gone = named && !strcmp(h.host, here) && !holder_alive_here(&h);
                int rc = ompf_error_set(
                    err, OMPF_EPERM,
                    "%s is in use by another campaign (%s%s; lock file %s); wait for it "
                    "to finish or stop it, or use another output directory",
                    dir, named ? who : "its holder did not write its name",
                    gone ? ", which has ended, but a process it started still holds the lock"
                         : "",
                    l->path);
                close(l->fd);
                free(l);
                return rc;
            }
            if (e != ENOLCK && e != EOPNOTSUPP && e != ENOSYS && e != EINVAL) {
                int rc = ompf_error_set(err, OMPF_EIO, "cannot lock %s: %s", l->path,
                                        strerror(e));
                close(l->fd);
                free(l);
                return rc;
            }
            kernel = 0; /* no locks on this filesystem: the content decides */
            if (named && (strcmp(h.host, here) != 0 ||
                          (h.pid != (long)getpid() && holder_alive_here(&h)))) {
                int rc = ompf_error_set(
                    err, OMPF_EPERM,
                    "%s is in use by another campaign (%s; lock file %s; this filesystem "
                    "has no file locks (%s), so if that campaign is gone, remove the lock "
                    "file)",
                    dir, who, l->path, strerror(e));
                close(l->fd);
                free(l);
                return rc;
            }
        }
        /* the holder may have removed the file between our open and lock */
        struct stat a, b;
        if (kernel && (fstat(l->fd, &a) != 0 || stat(l->path, &b) != 0 ||
                       a.st_ino != b.st_ino || a.st_dev != b.st_dev)) {
            close(l->fd);
            if (attempt < 100)
                continue;
            int rc = ompf_error_set(err, OMPF_EIO, "cannot lock %s: it keeps changing",
                                    l->path);
            free(l);
            return rc;
        }
        named = read_holder(l->fd, &h) == 0; /* again: now nobody changes it */
        if (named)
            describe(&h, who, sizeof who);
        if (named && log)
            fprintf(log,
                    "ompfuse: note: taking over the stale lock %s of a campaign that is no "
                    "longer running (%s)%s\n",
                    l->path, who,
                    strcmp(h.host, here) ? "; check that no run of it is left on that host"
                                         : "");
        if (write_holder(l, err) != 0) {
            if (kernel) {
                /* the kernel lock is what excludes: without the content a
                 * refused campaign only cannot name us (e.g. a full disk) */
                if (err)
                    memset(err, 0, sizeof *err);
            } else {
                unlink(l->path); /* ours: it named nobody alive */
                close(l->fd);
                free(l);
                return OMPF_EIO;
            }
        }
        *out = l;
        return 0;
    }
}

void ompf_dirlock_release(ompf_dirlock_t *l)
{
    if (!l)
        return;
    /* remove while still holding it: a waiter that opened the old file
     * sees it gone after locking and starts over */
    struct stat a, b;
    if (fstat(l->fd, &a) == 0 && stat(l->path, &b) == 0 && a.st_ino == b.st_ino &&
        a.st_dev == b.st_dev)
        unlink(l->path);
    close(l->fd);
    free(l);
}
