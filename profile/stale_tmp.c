/* Temporary files of dead writers (see ompf_stale_tmp_remove in file.h).
 * Every writer names its temporary "<path>.tmp.<pid>"; a writer killed
 * before its rename leaves it behind, and nothing else would ever remove
 * it.  The next command that writes path removes the ones whose process is
 * gone.  A live pid (maybe reused) keeps its file: better a leftover than
 * removing a file another writer is still filling. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "ompfuse/file.h"

/* The pid of "<base>.tmp.<digits>", or 0 when name is not one. */
static long tmp_pid(const char *name, const char *base, size_t blen)
{
    if (strncmp(name, base, blen) || strncmp(name + blen, ".tmp.", 5))
        return 0;
    const char *d = name + blen + 5;
    if (!*d || strspn(d, "0123456789") != strlen(d) || strlen(d) > 9)
        return 0;
    return strtol(d, NULL, 10);
}

int ompf_stale_tmp_remove(const char *path, FILE *note, const char *prog)
{
    if (!path || !*path || !strcmp(path, "-"))
        return 0;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dlen = slash ? (size_t)(slash - path) : 0, blen = strlen(base);
    if (!blen)
        return 0;
    char *dir = slash ? strndup(path, dlen ? dlen : 1) : strdup(".");
    if (!dir)
        return OMPF_ENOMEM;
    DIR *d = opendir(dir);
    if (!d) {
        free(dir);
        return 0; /* the writer reports an unusable directory itself */
    }
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        long pid = tmp_pid(e->d_name, base, blen);
        if (pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* alive, or not ours to judge (EPERM) */
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *full = malloc(n);
        if (!full)
            break;
        snprintf(full, n, "%s/%s", dir, e->d_name);
        if (unlink(full) == 0) {
            removed++;
            if (note)
                fprintf(note, "%s: removed %s, left by process %ld, which is gone\n",
                        prog ? prog : "ompfuse", full, pid);
        } else if (note) {
            fprintf(note, "%s: warning: cannot remove %s, left by process %ld, which is "
                    "gone: %s\n", prog ? prog : "ompfuse", full, pid, strerror(errno));
        }
        free(full);
    }
    closedir(d);
    free(dir);
    return removed;
}
