/*
 * The streaming writer's file descriptor, guarded against the observed
 * program (wfd.c).  The tool writes from inside someone else's process: the
 * program may close every descriptor (daemons, exec wrappers), open its own
 * files into the freed numbers, or dup2 onto ours.  A guarded descriptor is
 * kept high, is checked against the file's (st_dev, st_ino) before every
 * write, and is reopened by path when the number no longer names the file;
 * a number that is no longer ours is never written, synced or closed.
 * Every function here is async-signal-safe (fstat, open, fcntl, pwrite,
 * close): the fatal-signal path writes through it too.
 * Private to libompfprofile and the OMPT tool.
 */
#ifndef OMPF_WFD_H
#define OMPF_WFD_H

#include <stdint.h>
#include <sys/types.h>

typedef struct fmt_wfd {
    int fd;         /* -1: closed by us, or found not ours */
    int min_fd;     /* descriptors are moved to >= this number */
    dev_t dev;
    ino_t ino;
    uint64_t off;   /* bytes written so far: the next write's offset */
    char *path;     /* the file (owned by the caller) */
    unsigned reopens; /* times the descriptor had to be reopened */
    int lost;       /* errno of a failed reopen: the file cannot be reached */
} fmt_wfd_t;

/* Creates (truncates) path; f->path = path.  0, or -1 with errno set. */
int fmt_wfd_create(fmt_wfd_t *f, char *path);
/* A descriptor that refers to the file now (reopened if needed), or -1
 * with f->lost set (errno of the reopen; ESTALE: the path now names
 * another file). */
int fmt_wfd_get(fmt_wfd_t *f);
/* Writes n bytes at f->off (pwrite: the program cannot move our offset).
 * 0, or -1 with errno set. */
int fmt_wfd_write(fmt_wfd_t *f, const void *p, size_t n);
/* fsync of the file: 0, or -1 with errno set. */
int fmt_wfd_sync(fmt_wfd_t *f);
/* Closes the descriptor if it still is ours: 0, or -1 with errno set. */
int fmt_wfd_close(fmt_wfd_t *f);

#endif
