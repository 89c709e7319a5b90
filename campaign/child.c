/* One run as a child process: its environment, its output files, the
 * verdict on how it ended; the plain run without the tool. */
#include "campaign_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ompfuse/file.h"

volatile sig_atomic_t ompf_cmpi_interrupted;
static void on_signal(int s)
{
    (void)s;
    ompf_cmpi_interrupted = 1;
}

void ompf_cmpi_catch_signals(ompf_cmpi_sigs_t *s)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ompf_cmpi_interrupted = 0;
    sigaction(SIGINT, &sa, &s->old_int);
    sigaction(SIGTERM, &sa, &s->old_term);
}

void ompf_cmpi_restore_signals(const ompf_cmpi_sigs_t *s)
{
    sigaction(SIGINT, &s->old_int, NULL);
    sigaction(SIGTERM, &s->old_term, NULL);
}

pid_t ompf_cmpi_reap(pid_t pid, int *status, int block)
{
    siginfo_t si;
    for (;;) {
        memset(&si, 0, sizeof si);
        /* WNOWAIT: the ended guard stays a zombie, so its pid (the group's
         * id) cannot be reused before the rest of the group is killed */
        int w = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
        if (w == 0 && si.si_pid == 0)
            return 0; /* still running */
        if (w == 0)
            break;
        if (errno != EINTR)
            return -1; /* not our child: kill nothing */
    }
    kill(-pid, SIGKILL); /* stragglers the program left in its group */
    pid_t r;
    while ((r = waitpid(pid, status, 0)) < 0 && errno == EINTR)
        ;
    return r;
}

void ompf_cmpi_wait_child(const ompf_campaign_t *c, pid_t pid, double t0,
                          int *status, int *timed_out)
{
    *timed_out = 0;
    for (;;) {
        pid_t w = ompf_cmpi_reap(pid, status, 0);
        if (w == pid || w < 0)
            return;
        if (ompf_cmpi_interrupted ||
            (c->o.timeout_s > 0 && ompf_cmpi_now() - t0 > c->o.timeout_s)) {
            *timed_out = !ompf_cmpi_interrupted;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            ompf_cmpi_reap(pid, status, 1);
            return;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void setenv_kv(const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq)
        return;
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
    setenv(key, eq + 1, 1);
}

/* In the child: environment of a run (run == NULL: the plain run). */
static void child_env(const ompf_campaign_t *c, const ompf_campaign_run_t *r,
                      const ompf_plan_run_t *line)
{
    static const char *const ours[] = {"OMP_TOOL_LIBRARIES", "OMPFUSE_EVENTS",
                                       "OMPFUSE_OUTPUT", "OMPFUSE_MODE",
                                       "OMPFUSE_ROLE", "OMPFUSE_ARGV"};
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++)
        unsetenv(ours[i]);
    for (size_t i = 0; i < c->o.n_env; i++)
        setenv_kv(c->o.env[i]);
    if (c->route_dir[0]) {
        const char *old = getenv("LD_LIBRARY_PATH");
        char buf[8192];
        snprintf(buf, sizeof buf, "%s%s%s", c->route_dir, old && *old ? ":" : "",
                 old ? old : "");
        setenv("LD_LIBRARY_PATH", buf, 1);
    }
    if (!r)
        return;
    setenv("OMP_TOOL_LIBRARIES", c->tool, 1);
    setenv("OMPFUSE_EVENTS", r->events, 1);
    setenv("OMPFUSE_OUTPUT", r->profile, 1);
    setenv("OMPFUSE_MODE", ompf_plan_role_mode(r->role), 1);
    setenv("OMPFUSE_ROLE", ompf_plan_role_name(r->role), 1);
    /* the command line as started: a program may overwrite its argv
     * before the tool starts (docs/tool.md, OMPFUSE_ARGV) */
    size_t alen = 1;
    for (char **a = c->argv; *a; a++)
        alen += strlen(*a) + 1;
    char *joined = malloc(alen);
    if (joined) {
        size_t o = 0;
        for (char **a = c->argv; *a; a++)
            o += (size_t)sprintf(joined + o, "%s%s", a == c->argv ? "" : "\x1f", *a);
        setenv("OMPFUSE_ARGV", joined, 1);
        free(joined);
    }
    /* the tool's start-up cache (event encodings, TSC rate, topology): the
     * first run learns them, the others read them (docs/tool.md) */
    if (!getenv("OMPFUSE_CACHE_DIR"))
        setenv("OMPFUSE_CACHE_DIR", c->dir, 1);
    if (c->kernel_hem[r->index - 1]) {
        unsetenv("OMPFUSE_PMU_SLOTS"); /* the kernel's counters decide */
    } else if (c->slots) {
        char s[32];
        snprintf(s, sizeof s, "%u", c->slots);
        setenv("OMPFUSE_PMU_SLOTS", s, 1);
    }
    for (size_t i = 0; i < line->n_opts; i++) {
        const char *kv = line->opts[i];
        const char *eq = strchr(kv, '=');
        char key[256];
        size_t kl = (size_t)(eq - kv);
        if (kl == 9 && !strncmp(kv, "period_us", 9))
            snprintf(key, sizeof key, "OMPFUSE_MUX_PERIOD_US");
        else {
            snprintf(key, sizeof key, "OMPFUSE_%.*s", (int)kl, kv);
            for (char *p = key; *p; p++)
                *p = (char)toupper((unsigned char)*p);
        }
        setenv(key, eq + 1, 1);
    }
}

/* The guard: kills its whole process group (itself included) when the
 * campaign dies (PR_SET_PDEATHSIG sends SIGTERM) or on SIGINT/SIGHUP. */
static void guard_on_signal(int s)
{
    (void)s;
    kill(0, SIGKILL);
}

/* In the guard (which does not exec): closes what exec would close. */
static void close_cloexec_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    int self = dirfd(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        int fd = atoi(de->d_name), fl = fd > 2 && fd != self ? fcntl(fd, F_GETFD) : -1;
        if (fl >= 0 && (fl & FD_CLOEXEC))
            close(fd);
    }
    closedir(d);
}

/* In the guard: the program's status as the guard's own. */
_Noreturn static void relay_status(int st)
{
    if (WIFEXITED(st))
        _exit(WEXITSTATUS(st));
    int sig = WIFSIGNALED(st) ? WTERMSIG(st) : SIGKILL;
    struct rlimit nocore = {0, 0};
    setrlimit(RLIMIT_CORE, &nocore); /* the program dumped core if it could */
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig);
}

/* A run: fork a guard that leads a new process group and forks the
 * program.  PR_SET_PDEATHSIG fires when the thread that forked dies, not
 * the process: the launchers fork from the campaign's main thread (it
 * starts no others), which lives as long as the campaign; getppid() after
 * prctl closes the race of a parent that died before it was set.  The program gets its own
 * PDEATHSIG (SIGKILL) against the guard, so that even a SIGKILLed guard
 * takes it along; what the program forks stays in the group, which the
 * guard kills. */
pid_t ompf_cmpi_spawn(const ompf_campaign_t *c, const ompf_campaign_run_t *r,
                   const ompf_plan_run_t *line, const char *out_path,
                   const char *err_path)
{
    pid_t parent = getpid();
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid > 0)
        setpgid(pid, pid); /* both sides: no race with a quick kill */
    if (pid != 0)
        return pid;
    /* the guard kills "its group" (kill(0)): never the campaign's */
    if (setpgid(0, 0) != 0 || getpgrp() != getpid())
        _exit(126);
    /* the guard holds none of the campaign's own files (close-on-exec: the
     * lock among them), so a guard outliving its campaign holds no lock;
     * descriptors the program is meant to inherit stay open */
    close_cloexec_fds();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = guard_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        kill(0, SIGKILL);
    int in = open("/dev/null", O_RDONLY);
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (in < 0 || o < 0 || e < 0)
        _exit(125);
    dup2(in, 0);
    dup2(o, 1);
    dup2(e, 2);
    close(in);
    close(o);
    close(e);
    child_env(c, r, line);
    pid_t guard = getpid();
    pid_t prog = fork();
    if (prog < 0) {
        fprintf(stderr, "ompfuse: cannot fork: %s\n", strerror(errno));
        _exit(126);
    }
    if (prog == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != guard)
            _exit(126);
        execv(c->program, c->argv);
        fprintf(stderr, "ompfuse: cannot execute %s: %s\n", c->program,
                strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(prog, &st, 0) < 0)
        if (errno != EINTR)
            _exit(126);
    relay_status(st);
}

/* Last lines of a file, joined by " | ", into buf. */
void ompf_cmpi_tail(const char *path, char *buf, size_t len, int lines)
{
    buf[0] = '\0';
    FILE *f = NULL;
    if (ompf_fopen_input(path, "log", &f, NULL))
        return;
    char data[4096];
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    long off = sz > (long)sizeof data - 1 ? sz - (long)sizeof data + 1 : 0;
    fseek(f, off, SEEK_SET);
    size_t n = fread(data, 1, sizeof data - 1, f);
    fclose(f);
    data[n] = '\0';
    while (n && (data[n - 1] == '\n' || data[n - 1] == '\r'))
        data[--n] = '\0';
    char *start = data + n;
    int seen = 0;
    while (start > data) {
        if (start[-1] == '\n' && ++seen == lines)
            break;
        start--;
    }
    size_t used = 0;
    for (char *p = start; *p && used + 4 < len; p++) {
        if (*p == '\n') {
            used += (size_t)snprintf(buf + used, len - used, " | ");
        } else if (*p != '\r') {
            buf[used++] = *p;
            buf[used] = '\0';
        }
    }
}

/* A killed run leaves the tool's "<profile>.tmp.<pid>": remove it before
 * the run is made again. */
void ompf_cmpi_remove_stale(const char *profile)
{
    char pat[PATH_MAX + 16];
    snprintf(pat, sizeof pat, "%s.tmp.*", profile);
    glob_t g;
    if (glob(pat, GLOB_NOSORT, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++)
            unlink(g.gl_pathv[i]);
    globfree(&g);
}

void ompf_cmpi_run_paths(const ompf_campaign_t *c, const char *name, char *out,
                      char *err, size_t len)
{
    snprintf(out, len, "%s/%s.stdout", c->dir, name);
    snprintf(err, len, "%s/%s.stderr", c->dir, name);
}

static long file_size(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 ? (long)sb.st_size : -1;
}



/* Result of a finished child. */
void ompf_cmpi_finish_run(ompf_campaign_t *c, ompf_campaign_run_t *r, int st,
                       int timed_out, double secs)
{
    char out[PATH_MAX + 64], errp[PATH_MAX + 64];
    ompf_cmpi_run_paths(c, r->name, out, errp, sizeof out);
    r->seconds = secs;
    r->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    r->note[0] = '\0';
    char tail[400];
    if (timed_out) {
        r->status = OMPF_RUN_TIMEOUT;
        ompf_cmpi_tail(errp, tail, sizeof tail, 3);
        snprintf(r->note, sizeof r->note,
                 "killed after the %.0f s timeout%s%.200s (stderr: %.200s)",
                 c->o.timeout_s, tail[0] ? "; stderr: " : "", tail, errp);
    } else if (r->signal || !ompf_exit_set_has(&c->o.exit_ok, r->exit_code)) {
        r->status = OMPF_RUN_FAILED;
        ompf_cmpi_tail(errp, tail, sizeof tail, 3);
        if (r->signal)
            snprintf(r->note, sizeof r->note, "killed by signal %d (%s)%s%s",
                     r->signal, strsignal(r->signal),
                     tail[0] ? "; stderr: " : "", tail);
        else {
            char normal[1100] = "", set[1024];
            if (!ompf_exit_set_is_default(&c->o.exit_ok)) {
                ompf_exit_set_format(&c->o.exit_ok, set, sizeof set);
                snprintf(normal, sizeof normal, " (its normal ones: %s, given by --exit-code)",
                         set);
            }
            snprintf(r->note, sizeof r->note, "exit code %d%s%s%s", r->exit_code, normal,
                     tail[0] ? "; stderr: " : "", tail);
        }
    } else {
        char note[512];
        const ompf_plan_run_t *line = c->line[r - c->runs];
        if (access(r->profile, F_OK) != 0) {
            r->status = OMPF_RUN_FAILED;
            snprintf(r->note, sizeof r->note,
                     "the program exited %d but wrote no profile %s: is it an "
                     "OpenMP program running on LLVM libomp (which loads "
                     "OMP_TOOL_LIBRARIES)?",
                     r->exit_code, r->profile);
        } else if (ompf_cmpi_profile_valid(r, line, note, sizeof note) != 0) {
            r->status = OMPF_RUN_FAILED;
            snprintf(r->note, sizeof r->note, "%s", note);
        } else {
            r->status = OMPF_RUN_OK;
        }
    }
    /* the program's output is kept (a benchmark's verification line is
     * how one checks that the run under the tool was right), never empty */
    if (file_size(out) == 0)
        unlink(out);
    if (file_size(errp) == 0)
        unlink(errp);
}

int ompf_cmpi_plain_run(ompf_campaign_t *c, ompf_error_t *err)
{
    char out[PATH_MAX + 64], errp[PATH_MAX + 64];
    ompf_cmpi_run_paths(c, "plain", out, errp, sizeof out);
    if (c->o.progress != -2)
        fprintf(c->o.log, "ompfuse: checking that the program runs without "
                          "the tool...\n");
    double t0 = ompf_cmpi_now();
    pid_t pid = ompf_cmpi_spawn(c, NULL, NULL, out, errp);
    if (pid < 0)
        return ompf_error_set(err, OMPF_EIO, "fork failed: %s", strerror(errno));
    int st = 0, timed_out = 0;
    ompf_cmpi_wait_child(c, pid, t0, &st, &timed_out);
    if (ompf_cmpi_interrupted)
        return ompf_error_set(err, OMPF_EPERM, "interrupted");
    if (timed_out || !WIFEXITED(st) || !ompf_exit_set_has(&c->o.exit_ok, WEXITSTATUS(st))) {
        char tail[400];
        ompf_cmpi_tail(errp, tail, sizeof tail, 5);
        /* empty output files tell nothing */
        if (file_size(out) == 0)
            unlink(out);
        int kept = file_size(errp) > 0;
        if (!kept)
            unlink(errp);
        char what[64];
        if (timed_out)
            snprintf(what, sizeof what, "ran longer than the %.0f s timeout",
                     c->o.timeout_s);
        else if (WIFSIGNALED(st))
            snprintf(what, sizeof what, "was killed by signal %d", WTERMSIG(st));
        else
            snprintf(what, sizeof what, "exited with code %d", WEXITSTATUS(st));
        /* a program whose normal exit code is not 0 says so with --exit-code */
        char hint[1200] = "";
        if (!timed_out && WIFEXITED(st)) {
            hint[0] = ';';
            hint[1] = ' ';
            ompf_exit_set_hint(&c->o.exit_ok, WEXITSTATUS(st), hint + 2, sizeof hint - 2);
        }
        return ompf_error_set(err, OMPF_EINVAL,
                              "the program %s %s even without the tool, so no "
                              "run was started; fix the command line first%s "
                              "(stderr: %s%s%s)",
                              c->argv[0], what, hint, tail[0] ? tail : "empty",
                              kept ? "; saved in " : "", kept ? errp : "");
    }
    unlink(out);
    unlink(errp);
    if (c->o.progress != -2)
        fprintf(c->o.log, "ompfuse: plain run ok (%.2f s)\n", ompf_cmpi_now() - t0);
    return 0;
}
