/* Runs of an earlier campaign on the same directory that are still alive
 * on this host.  Every run's process group dies with its campaign (the
 * guard, child.c), but a program can leave its group (setsid, setpgid):
 * such a process would later rename its profile into the directory while
 * the resumed campaign makes the same run again.  They are found by the
 * OMPFUSE_OUTPUT in their environment, which names a profile of this
 * directory, and killed: the caller holds the directory's lock, so no live
 * campaign owns them.  Slurm array tasks are left alone (their job owns
 * them; the Slurm launcher asks squeue instead). */
#include "campaign_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The NUL-separated environment of pid (free it), or NULL. */
static char *read_environ(long pid, size_t *len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || cap >= ((size_t)16 << 20))
            break;
        char *b = realloc(buf, 2 * cap + 1);
        if (!b) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b;
        cap *= 2;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

static int is_zombie(long pid)
{
    char path[64], st[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1; /* gone */
    size_t n = fread(st, 1, sizeof st - 1, f);
    fclose(f);
    st[n] = '\0';
    const char *rp = strrchr(st, ')');
    return !rp || (rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

typedef struct found {
    long pid;
    size_t run; /* index, or c->n when it names no planned run */
    int slurm;
} found_t;

/* Live processes whose OMPFUSE_OUTPUT lies in c's directory. */
static size_t find(const ompf_campaign_t *c, found_t *out, size_t max)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    char prefix[PATH_MAX + 32];
    int pl = snprintf(prefix, sizeof prefix, "OMPFUSE_OUTPUT=%s/", c->dir);
    size_t k = 0;
    long self = (long)getpid();
    struct dirent *de;
    while ((de = readdir(d)) && k < max) {
        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        long pid = strtol(de->d_name, NULL, 10);
        if (pid == self)
            continue;
        size_t len;
        char *env = read_environ(pid, &len);
        if (!env)
            continue;
        const char *output = NULL;
        int slurm = 0;
        for (size_t i = 0; i < len; i += strlen(env + i) + 1) {
            if (!strncmp(env + i, prefix, (size_t)pl))
                output = env + i + 15;
            else if (!strncmp(env + i, "SLURM_JOB_ID=", 13))
                slurm = 1;
        }
        if (output && !is_zombie(pid)) {
            out[k].pid = pid;
            out[k].slurm = slurm;
            out[k].run = c->n;
            for (size_t r = 0; r < c->n; r++)
                if (!strcmp(c->runs[r].profile, output))
                    out[k].run = r;
            k++;
        }
        free(env);
    }
    closedir(d);
    return k;
}

size_t ompf_cmpi_leftovers(ompf_campaign_t *c, unsigned char *busy)
{
    enum { MAX = 256 };
    found_t f[MAX];
    size_t k = 0;
    /* SIGKILL cannot be caught; a process that forks meanwhile is found in
     * the next round.  5 s bound: one in uninterruptible sleep stays busy. */
    for (int round = 0; round < 100; round++) {
        k = find(c, f, MAX);
        size_t killed = 0;
        for (size_t i = 0; i < k; i++) {
            if (f[i].slurm)
                continue;
            const char *name = f[i].run < c->n ? c->runs[f[i].run].name : "?";
            if (round == 0 && c->o.progress != -2)
                fprintf(c->o.log,
                        "ompfuse: note: killing process %ld (run %s), left running in %s by "
                        "an earlier campaign, so that the run is not made twice at once\n",
                        f[i].pid, name, c->dir);
            kill((pid_t)f[i].pid, SIGKILL);
            killed++;
        }
        if (!killed)
            break;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    size_t nbusy = 0;
    for (size_t i = 0; i < k; i++)
        if (f[i].run < c->n && !busy[f[i].run]) {
            busy[f[i].run] = 1;
            nbusy++;
            ompf_campaign_run_t *r = &c->runs[f[i].run];
            snprintf(r->note, sizeof r->note,
                     "process %ld of an earlier attempt at this run is still running%s; "
                     "not run again while it lives",
                     f[i].pid, f[i].slurm ? " as a Slurm job" : " and could not be killed");
        }
    return nbusy;
}
