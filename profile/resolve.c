/* Lazy file:line resolution of constructs with addr2line (binutils), one
 * process per module for all its unresolved constructs. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ompfuse/file.h"

extern char **environ;

#define BATCH 512

/* Runs addr2line with argv and returns its whole stdout (NUL-terminated),
 * or NULL when it cannot be run. */
static char *run_capture(char *const argv[])
{
    int pfd[2];
    if (pipe(pfd))
        return NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, pfd[0]);
    posix_spawn_file_actions_addclose(&fa, pfd[1]);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (rc) {
        close(pfd[0]);
        return NULL;
    }
    size_t len = 0, cap = 4096;
    char *out = malloc(cap);
    for (;;) {
        if (out && len + 1 >= cap) {
            char *o = realloc(out, cap * 2);
            if (!o) {
                free(out);
                out = NULL;
            } else {
                out = o;
                cap *= 2;
            }
        }
        char sink[4096];
        char *dst = out ? out + len : sink;
        size_t room = out ? cap - len - 1 : sizeof sink;
        ssize_t n = read(pfd[0], dst, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (out)
            len += (size_t)n;
    }
    close(pfd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!out)
        return NULL;
    out[len] = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

static char *next_line(char **s)
{
    if (!*s || !**s)
        return NULL;
    char *l = *s, *nl = strchr(l, '\n');
    if (nl) {
        *nl = 0;
        *s = nl + 1;
    } else {
        *s = l + strlen(l);
    }
    return l;
}

/* Resolves constructs idx[0..n) of one module; returns how many. */
static int resolve_batch(ompf_profile_t *p, const char *module, const uint32_t *idx, size_t n)
{
    char **argv = calloc(n + 6, sizeof *argv);
    char (*addr)[24] = calloc(n, sizeof *addr);
    if (!argv || !addr) {
        free(argv);
        free(addr);
        return OMPF_ENOMEM;
    }
    size_t a = 0;
    argv[a++] = "addr2line";
    argv[a++] = "-e";
    argv[a++] = (char *)module;
    argv[a++] = "-f";
    argv[a++] = "-C";
    for (size_t i = 0; i < n; i++) {
        uint64_t off = ompf_construct_get(p, idx[i])->offset;
        snprintf(addr[i], sizeof addr[i], "0x%llx", (unsigned long long)(off ? off - 1 : 0));
        argv[a++] = addr[i];
    }
    char *out = run_capture(argv);
    free(argv);
    free(addr);
    if (!out)
        return 0; /* no addr2line or unreadable module: stay unresolved */
    int done = 0;
    char *s = out;
    for (size_t i = 0; i < n; i++) {
        char *fn = next_line(&s), *loc = next_line(&s);
        if (!fn || !loc)
            break;
        char *d = strstr(loc, " (discriminator");
        if (d)
            *d = 0;
        char *colon = strrchr(loc, ':');
        if (!colon || !strncmp(loc, "??", 2))
            continue;
        *colon = 0;
        long line = strtol(colon + 1, NULL, 10);
        if (line <= 0)
            continue;
        int rc = ompf_construct_set_source(p, idx[i], loc, (int32_t)line,
                                           strcmp(fn, "??") ? fn : NULL);
        if (rc) {
            free(out);
            return rc;
        }
        done++;
    }
    free(out);
    return done;
}

int ompf_resolve_constructs(ompf_profile_t *p, ompf_error_t *err)
{
    if (!p)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_resolve_constructs: no profile");
    size_t n = ompf_construct_count(p);
    uint32_t *todo = malloc((n + 1) * sizeof *todo);
    unsigned char *seen = calloc(n + 1, 1);
    if (!todo || !seen) {
        free(todo);
        free(seen);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory while resolving constructs");
    }
    int total = 0;
    for (size_t i = 0; i < n; i++) {
        const ompf_construct_t *c = ompf_construct_get(p, (uint32_t)i);
        if (seen[i] || c->file || !c->module || !*c->module || access(c->module, R_OK)) {
            seen[i] = 1;
            continue;
        }
        /* Every unresolved construct of this module, in one batch. */
        size_t k = 0;
        for (size_t j = i; j < n; j++) {
            const ompf_construct_t *d = ompf_construct_get(p, (uint32_t)j);
            if (!seen[j] && !d->file && d->module && !strcmp(d->module, c->module)) {
                todo[k++] = (uint32_t)j;
                seen[j] = 1;
            }
        }
        char *module = strdup(c->module); /* c may move when names change */
        if (!module) {
            total = OMPF_ENOMEM;
            break;
        }
        for (size_t b = 0; b < k; b += BATCH) {
            int rc = resolve_batch(p, module, todo + b, k - b < BATCH ? k - b : BATCH);
            if (rc < 0) {
                total = rc;
                break;
            }
            total += rc;
        }
        free(module);
        if (total < 0)
            break;
    }
    free(todo);
    free(seen);
    if (total < 0)
        return ompf_error_set(err, total, "out of memory while resolving constructs");
    return total;
}
