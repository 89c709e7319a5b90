/* A stand-in for "an OpenMP program under the tool" in campaign tests: it
 * writes the profile the tool would (OMPFUSE_OUTPUT, OMPFUSE_EVENTS) and
 * logs every start and end, so tests can see what ran how often.
 *   FAKE_LOG=file      append "start NAME" / "end NAME" (NAME: profile base
 *                      name, "plain" without the tool)
 *   FAKE_SLEEP_MS=n    work this long
 *   FAKE_FAIL=NAME     that run prints to stderr and exits 3
 *   FAKE_HANG=NAME     that run sleeps for a minute
 *   FAKE_PLAIN_FAIL=1  fail when run without the tool
 *   FAKE_EXIT=n        a run that succeeds exits n (a program whose
 *                      normal exit code is not 0)
 *   FAKE_EXIT_RUN=NAME:n that run, succeeding, exits n (a program whose
 *                      exit code varies)
 *   FAKE_SPAWN_MS=n    a run forks a child (same process group) that logs
 *                      "child NAME", sleeps n ms, then logs "late NAME":
 *                      a "late" line means it outlived what should end it */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ompfuse/file.h"
#include "ompfuse/profile.h"

static void logline(const char *what, const char *name)
{
    const char *log = getenv("FAKE_LOG");
    if (!log)
        return;
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0666);
    if (fd < 0)
        return;
    char buf[512];
    int n = snprintf(buf, sizeof buf, "%s %s %ld\n", what, name, (long)getpid());
    if (write(fd, buf, (size_t)n) != n)
        perror("fakeprog: log");
    close(fd);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int ok_exit(const char *name)
{
    const char *r = getenv("FAKE_EXIT_RUN"), *colon = r ? strrchr(r, ':') : NULL;
    if (colon && strlen(name) == (size_t)(colon - r) && !strncmp(r, name, strlen(name)))
        return atoi(colon + 1);
    const char *e = getenv("FAKE_EXIT");
    return e ? atoi(e) : 0;
}

int main(int argc, char **argv)
{
    const char *out = getenv("OMPFUSE_OUTPUT");
    char name[256] = "plain";
    if (out) {
        const char *b = strrchr(out, '/');
        snprintf(name, sizeof name, "%s", b ? b + 1 : out);
        char *dot = strstr(name, ".ompf");
        if (dot)
            *dot = '\0';
    }
    logline("start", name);
    const char *spawn = getenv("FAKE_SPAWN_MS");
    if (spawn && out) {
        pid_t kid = fork();
        if (kid == 0) {
            logline("child", name);
            sleep_ms(atol(spawn));
            logline("late", name);
            _exit(0);
        }
    }
    printf("fakeprog %s, %d args\n", name, argc - 1);
    const char *sl = getenv("FAKE_SLEEP_MS");
    if (sl)
        sleep_ms(atol(sl));
    const char *fail = getenv("FAKE_FAIL");
    if (fail && !strcmp(fail, name)) {
        fprintf(stderr, "fakeprog: first line\nfakeprog: deliberate failure of %s\n", name);
        return 3;
    }
    const char *hang = getenv("FAKE_HANG");
    if (hang && !strcmp(hang, name))
        sleep_ms(60000);
    if (!out) {
        const char *pf = getenv("FAKE_PLAIN_FAIL");
        if (pf && *pf == '1') {
            fprintf(stderr, "fakeprog: cannot open input file\n");
            return 4;
        }
        logline("end", name);
        return ok_exit(name);
    }
    ompf_profile_t *p;
    if (ompf_profile_create(&p))
        return 10;
    ompf_meta_set(p, "program", argv[0]);
    ompf_meta_set(p, "mode", getenv("OMPFUSE_MODE") ? getenv("OMPFUSE_MODE") : "?");
    ompf_meta_set(p, "role", getenv("OMPFUSE_ROLE") ? getenv("OMPFUSE_ROLE") : "?");
    const char *pe = getenv("OMPFUSE_EVENTS");
    char *evs = strdup(pe ? pe : "");
    size_t nev = 0;
    for (char *s = strtok(evs, ","); s; s = strtok(NULL, ",")) {
        ompf_event_t e;
        memset(&e, 0, sizeof e);
        e.name = s;
        e.source = -1;
        if (ompf_event_add(p, &e, NULL))
            return 11;
        nev++;
    }
    ompf_construct_t c;
    memset(&c, 0, sizeof c);
    c.module = "";
    c.build_id = "";
    c.name = "fake.c:1";
    uint32_t ci, th;
    if (ompf_construct_add(p, &c, &ci) || ompf_thread_add(p, 1, &th))
        return 12;
    /* one value per event, however many the plan line has */
    double *v = malloc((nev ? nev : 1) * sizeof *v);
    if (!v)
        return 10;
    for (int k = 0; k < 50; k++) {
        ompf_xu_t x;
        memset(&x, 0, sizeof x);
        x.id = (uint64_t)k + 1;
        x.type = ci;
        x.thread = th;
        x.parts = 1;
        x.cpu = x.core = x.numa = -1;
        if (ompf_label_child(p, 0, (uint64_t)k, &x.label))
            return 13;
        for (size_t i = 0; i < nev; i++)
            v[i] = (double)(k * (int)(i + 1));
        if (ompf_xu_add(p, &x, v))
            return 14;
    }
    ompf_error_t err;
    if (ompf_profile_write(p, out, &err)) {
        fprintf(stderr, "fakeprog: %s\n", err.msg);
        return 15;
    }
    ompf_profile_destroy(p);
    free(v);
    free(evs);
    logline("end", name);
    return ok_exit(name);
}
