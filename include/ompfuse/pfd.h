/*
 * The tool's perf_event descriptors, guarded against the observed program
 * (profile/pfd.c; docs/tool.md, "Descriptors").
 *
 * A counter descriptor is moved high at open (F_DUPFD_CLOEXEC, the range
 * of the profile's own descriptor) and registered under a handle: the
 * number it had then.  Readers ask ompf_pfd_fd(handle) for the number to
 * read, one plain load, because the tool's close/dup2/dup3/close_range
 * wrappers (ompt-tool/hook.c) may move a descriptor away from a number the
 * program wants (ompf_pfd_take).  The event's id (PERF_EVENT_IOC_ID),
 * saved at open, tells at release whether a number still names our event:
 * a number that is not ours is never closed.
 * Registry writes (adopt, release, take) hold a mutex; the read is
 * lock-free.  Handles and numbers >= OMPF_PFD_MAX are not guarded (the
 * descriptor is used as is).
 */
#ifndef OMPFUSE_PFD_H
#define OMPFUSE_PFD_H

#ifdef __cplusplus
extern "C" {
#endif

#define OMPF_PFD_MAX 32768

/* The lowest number a guarded descriptor is moved to: near the soft
 * RLIMIT_NOFILE, capped (shared with the profile's descriptor). */
int ompf_fd_high(void);

/* Takes a fresh perf_event descriptor: moves it high, registers it.
 * Returns the handle (>= 0), or -1 (fd closed) when fd < 0. */
int ompf_pfd_adopt(int fd);

extern int ompf_pfd_cur_[OMPF_PFD_MAX];

/* The descriptor to read for handle h now; -1 when it was lost (the
 * program took its number and it could not be moved). */
static inline int ompf_pfd_fd(int h)
{
    if (h < 0 || h >= OMPF_PFD_MAX)
        return h;
    return __atomic_load_n(&ompf_pfd_cur_[h], __ATOMIC_ACQUIRE);
}

/* Closes handle h's descriptor if it still names the event registered
 * (PERF_EVENT_IOC_ID), and unregisters it.  Returns 1 when it was still
 * ours (or unguarded), 0 when it was lost or replaced. */
int ompf_pfd_release(int h);

/* 1 when h's descriptor still names the event registered at adopt. */
int ompf_pfd_intact(int h);

/* For the wrappers: 1 when fd is a registered tool descriptor. */
int ompf_pfd_owned(int fd);

/* For dup2/dup3 onto fd: moves the tool's descriptor off number fd (to
 * the lowest free number >= 3, so that a program walking its descriptors
 * upwards does not meet it again), so the caller may then reuse fd.
 * Returns 0, or -1 when it could not be moved (its handle is then lost:
 * reads fail and values are marked missing). */
int ompf_pfd_take(int fd);

/* Descriptors moved, and lost, by ompf_pfd_take so far. */
void ompf_pfd_stats(unsigned *moved, unsigned *lost);

#ifdef __cplusplus
}
#endif
#endif
