/* Executing a plan: one child process per run, manifest, resume, progress,
 * timeouts, failures recorded without stopping the campaign. */
#include "ompfuse/campaign.h"
#include "ompfuse/file.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct ompf_campaign {
    ompf_campaign_opts_t o;
    char *dir;
    char **argv;
    char program[PATH_MAX];
    char tool[PATH_MAX];
    char route_dir[PATH_MAX]; /* libgomp -> libomp directory, "" if none */
    unsigned slots;
    const ompf_plan_t *plan;
    size_t n;
    ompf_campaign_run_t *runs;
    /* per run: the plan line's options */
    const ompf_plan_run_t **line;
    int plain_done;
};

static const char *const status_names[OMPF_RUN_STATUS_COUNT] = {
    "pending", "ok", "failed", "timeout", "skipped", "interrupted"};

const char *ompf_run_status_name(int s)
{
    return s >= 0 && s < OMPF_RUN_STATUS_COUNT ? status_names[s] : "?";
}

void ompf_campaign_opts_init(ompf_campaign_opts_t *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->jobs = 1;
    o->check_plain = 1;
    o->progress = -1;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int ompf_campaign_default_tool(const char *fallback, char *buf, size_t len)
{
    const char *env = getenv("OMPFUSE_TOOL");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
        return 0;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(buf, len, "%s/../lib/libompfuse.so", self);
            if (access(buf, R_OK) == 0) {
                char real[PATH_MAX];
                if (realpath(buf, real))
                    snprintf(buf, len, "%s", real);
                return 0;
            }
        }
    }
    if (fallback) {
        snprintf(buf, len, "%s", fallback);
        return 0;
    }
    return OMPF_ENOTFOUND;
}

static int mkdir_p(const char *dir)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(tmp, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static int role_selected(const char *roles, int role)
{
    if (!roles || !*roles)
        return 1;
    const char *name = ompf_plan_role_name(role);
    size_t nl = strlen(name);
    for (const char *p = roles; *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == nl && !strncmp(p, name, l))
            return 1;
        if (!c)
            break;
        p = c + 1;
    }
    return 0;
}

static char *join_events(const ompf_plan_run_t *r)
{
    size_t len = 1;
    for (size_t i = 0; i < r->n_events; i++)
        len += strlen(r->events[i]) + 1;
    char *s = malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (size_t i = 0; i < r->n_events; i++) {
        if (i)
            strcat(s, ",");
        strcat(s, r->events[i]);
    }
    return s;
}

void ompf_campaign_destroy(ompf_campaign_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->runs[i].events);
        free(c->runs[i].name);
        free(c->runs[i].profile);
    }
    free(c->runs);
    free(c->line);
    if (c->argv)
        for (size_t i = 0; c->argv[i]; i++)
            free(c->argv[i]);
    free(c->argv);
    free(c->dir);
    free(c);
}

static const char *libomp_candidates[] = {
    "/usr/lib/llvm-19/lib/libomp.so.5",
    "/usr/lib/x86_64-linux-gnu/libomp.so.5",
    "/usr/lib/aarch64-linux-gnu/libomp.so.5",
    "/usr/local/lib/libomp.so.5",
};

/* gcc-built binaries use libgomp, which ignores OMP_TOOL_LIBRARIES: put a
 * libgomp.so.1 -> libomp.so.5 link first on LD_LIBRARY_PATH (SPEC §3). */
static int setup_libgomp_route(ompf_campaign_t *c, ompf_error_t *err)
{
    c->route_dir[0] = '\0';
    if (ompf_elf_needs(c->program, "libgomp.so") != 1)
        return 0;
    const char *libomp = getenv("OMPFUSE_LIBOMP");
    if (!libomp || !*libomp) {
        libomp = NULL;
        for (size_t i = 0; i < sizeof libomp_candidates / sizeof *libomp_candidates; i++)
            if (access(libomp_candidates[i], R_OK) == 0) {
                libomp = libomp_candidates[i];
                break;
            }
    }
    if (!libomp)
        return ompf_error_set(err, OMPF_EUNSUPP,
                              "%s is linked against libgomp (gcc's OpenMP), "
                              "which has no OMPT; ompfuse runs it on LLVM "
                              "libomp, but no libomp.so.5 was found: install "
                              "libomp-19-dev or set OMPFUSE_LIBOMP",
                              c->program);
    snprintf(c->route_dir, sizeof c->route_dir, "%s/.libgomp-route", c->dir);
    char link[PATH_MAX + 32];
    snprintf(link, sizeof link, "%s/libgomp.so.1", c->route_dir);
    if (mkdir_p(c->route_dir) != 0)
        return ompf_error_set(err, OMPF_EIO, "cannot create %s: %s",
                              c->route_dir, strerror(errno));
    unlink(link);
    if (symlink(libomp, link) != 0)
        return ompf_error_set(err, OMPF_EIO, "cannot create the link %s: %s",
                              link, strerror(errno));
    if (c->o.progress != -2)
        fprintf(c->o.log,
                "ompfuse: %s is linked against libgomp (gcc); running it on "
                "LLVM's %s through %s on LD_LIBRARY_PATH (SPEC §3: static "
                "loops then record no XUs of their own)\n",
                c->program, libomp, link);
    return 0;
}

int ompf_campaign_create(const ompf_plan_t *plan, char *const *argv,
                         const ompf_campaign_opts_t *o,
                         ompf_campaign_t **out, ompf_error_t *err)
{
    if (!plan || !argv || !argv[0] || !o || !o->out_dir || !out)
        return ompf_error_set(err, OMPF_EINVAL,
                              "ompf_campaign_create: missing plan, program or "
                              "output directory");
    *out = NULL;
    ompf_campaign_t *c = calloc(1, sizeof *c);
    if (!c)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    c->o = *o;
    if (!c->o.log)
        c->o.log = stderr;
    if (!c->o.jobs)
        c->o.jobs = 1;
    c->plan = plan;
    int rc = 0;
    size_t argc = 0;
    while (argv[argc])
        argc++;
    c->argv = calloc(argc + 1, sizeof *c->argv);
    c->dir = strdup(o->out_dir);
    if (!c->argv || !c->dir) {
        ompf_campaign_destroy(c);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < argc; i++)
        if (!(c->argv[i] = strdup(argv[i]))) {
            ompf_campaign_destroy(c);
            return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        }
    if (ompf_find_program(argv[0], c->program, sizeof c->program) != 0) {
        ompf_campaign_destroy(c);
        return ompf_error_set(err, OMPF_ENOTFOUND,
                              "program %s not found or not executable%s",
                              argv[0],
                              strchr(argv[0], '/') ? "" : " on PATH");
    }
    if (o->tool_path)
        snprintf(c->tool, sizeof c->tool, "%s", o->tool_path);
    else
        ompf_campaign_default_tool(
#ifdef OMPF_TOOL_BUILD_PATH
            OMPF_TOOL_BUILD_PATH,
#else
            NULL,
#endif
            c->tool, sizeof c->tool);
    if (!c->tool[0] || access(c->tool, R_OK) != 0) {
        rc = ompf_error_set(err, OMPF_ENOTFOUND,
                            "the OMPT tool %s does not exist; build it "
                            "(target ompfuse-tool, build/lib/libompfuse.so) or "
                            "name it with OMPFUSE_TOOL=/path/libompfuse.so",
                            c->tool[0] ? c->tool : "libompfuse.so");
        ompf_campaign_destroy(c);
        return rc;
    }
    const char *env_slots = getenv("OMPFUSE_PMU_SLOTS");
    c->slots = env_slots && *env_slots ? (unsigned)atoi(env_slots)
                                       : ompf_plan_slots(plan);
    c->n = ompf_plan_total_runs(plan, -1);
    c->runs = calloc(c->n ? c->n : 1, sizeof *c->runs);
    c->line = calloc(c->n ? c->n : 1, sizeof *c->line);
    if (!c->runs || !c->line) {
        ompf_campaign_destroy(c);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t l = 0; l < ompf_plan_count(plan); l++) {
        const ompf_plan_run_t *pr = ompf_plan_get(plan, l);
        for (uint32_t r = 1; r <= pr->repeat; r++, k++) {
            ompf_campaign_run_t *run = &c->runs[k];
            run->index = k + 1;
            run->line = l + 1;
            run->role = pr->role;
            run->repeat = r;
            run->exit_code = -1;
            run->events = join_events(pr);
            char name[128];
            snprintf(name, sizeof name, "%s-%zu-r%u",
                     ompf_plan_role_name(pr->role), l + 1, r);
            run->name = strdup(name);
            size_t pl = strlen(c->dir) + strlen(name) + 8;
            run->profile = malloc(pl);
            if (!run->events || !run->name || !run->profile) {
                ompf_campaign_destroy(c);
                return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
            }
            snprintf(run->profile, pl, "%s/%s.ompf", c->dir, name);
            run->status = role_selected(o->roles, pr->role) ? OMPF_RUN_PENDING
                                                            : OMPF_RUN_SKIPPED;
            c->line[k] = pr;
        }
    }
    if (mkdir_p(c->dir) != 0) {
        rc = ompf_error_set(err, OMPF_EIO,
                            "cannot create the output directory %s: %s",
                            c->dir, strerror(errno));
        ompf_campaign_destroy(c);
        return rc;
    }
    rc = setup_libgomp_route(c, err);
    if (rc) {
        ompf_campaign_destroy(c);
        return rc;
    }
    *out = c;
    return 0;
}

size_t ompf_campaign_run_count(const ompf_campaign_t *c) { return c ? c->n : 0; }
const ompf_campaign_run_t *ompf_campaign_run_get(const ompf_campaign_t *c,
                                                 size_t i)
{
    return c && i < c->n ? &c->runs[i] : NULL;
}
size_t ompf_campaign_count_status(const ompf_campaign_t *c, int status)
{
    size_t k = 0;
    for (size_t i = 0; c && i < c->n; i++)
        k += c->runs[i].status == status;
    return k;
}
const char *ompf_campaign_tool(const ompf_campaign_t *c) { return c ? c->tool : NULL; }
int ompf_campaign_libgomp_route(const ompf_campaign_t *c)
{
    return c && c->route_dir[0];
}

/* ---- validity of a profile --------------------------------------------- */

/* 0 when path holds a complete profile with every planned event present
 * and usable; otherwise a note says why. */
static int profile_valid(const ompf_campaign_run_t *r,
                         const ompf_plan_run_t *line, char *note, size_t len)
{
    ompf_profile_t *p = NULL;
    ompf_read_info_t info;
    ompf_error_t e;
    memset(&info, 0, sizeof info);
    memset(&e, 0, sizeof e);
    int rc = ompf_profile_read(r->profile, &p, &info, &e);
    if (rc != 0) {
        if (rc == OMPF_ETRUNC)
            snprintf(note, len, "profile %s is truncated (%s)", r->profile,
                     info.note);
        else
            snprintf(note, len, "%.400s", e.msg[0] ? e.msg : ompf_strerror(rc));
        ompf_profile_destroy(p);
        return rc ? rc : OMPF_EFORMAT;
    }
    int hem = r->role == OMPF_ROLE_HEM || r->role == OMPF_ROLE_HEM_DELTA;
    rc = 0;
    for (size_t i = 0; i < line->n_events && rc == 0; i++) {
        int idx = ompf_event_find(p, line->events[i]);
        if (idx < 0) {
            snprintf(note, len, "profile %s lacks the planned event %s",
                     r->profile, line->events[i]);
            rc = OMPF_EMISMATCH;
            break;
        }
        const ompf_event_t *ev = ompf_event_get(p, (uint32_t)idx);
        int ok = ev->status == OMPF_EV_COUNTED ||
                 (hem && ev->status == OMPF_EV_ESTIMATED);
        if (!ok) {
            snprintf(note, len, "event %s was %s in this run%s%s",
                     line->events[i], ompf_event_status_name(ev->status),
                     ev->reason ? ": " : "", ev->reason ? ev->reason : "");
            rc = OMPF_EMISMATCH;
        }
    }
    ompf_profile_destroy(p);
    return rc;
}

/* ---- manifest ------------------------------------------------------------ */

static int write_manifest(const ompf_campaign_t *c)
{
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/manifest.tsv", c->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return OMPF_EIO;
    fprintf(f, "# ompfuse run manifest; program:");
    for (size_t i = 0; c->argv[i]; i++)
        fprintf(f, " %s", c->argv[i]);
    fprintf(f, "\n# index\trole\trepeat\tevents\tstatus\texit\tseconds\tprofile\n");
    for (size_t i = 0; i < c->n; i++) {
        const ompf_campaign_run_t *r = &c->runs[i];
        char ex[32];
        if (r->signal)
            snprintf(ex, sizeof ex, "sig%d", r->signal);
        else if (r->exit_code >= 0)
            snprintf(ex, sizeof ex, "%d", r->exit_code);
        else
            snprintf(ex, sizeof ex, "-");
        const char *base = strrchr(r->profile, '/');
        fprintf(f, "%zu\t%s\t%u\t%s\t%s\t%s\t%.3f\t%s\n", r->index,
                ompf_plan_role_name(r->role), r->repeat, r->events,
                ompf_run_status_name(r->status), ex, r->seconds,
                base ? base + 1 : r->profile);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return OMPF_EIO;
    }
    return 0;
}

/* Seconds and exit codes of runs kept from an earlier attempt. */
static void read_old_manifest(ompf_campaign_t *c)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/manifest.tsv", c->dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        char *field[8];
        size_t nf = 0;
        char *save = NULL;
        for (char *t = strtok_r(line, "\t\n", &save); t && nf < 8;
             t = strtok_r(NULL, "\t\n", &save))
            field[nf++] = t;
        if (nf < 8)
            continue;
        for (size_t i = 0; i < c->n; i++) {
            const char *base = strrchr(c->runs[i].profile, '/');
            if (!strcmp(base ? base + 1 : c->runs[i].profile, field[7]) &&
                !strcmp(c->runs[i].events, field[3])) {
                c->runs[i].seconds = atof(field[6]);
                if (isdigit((unsigned char)field[5][0]))
                    c->runs[i].exit_code = atoi(field[5]);
            }
        }
    }
    fclose(f);
}

/* ---- child processes ------------------------------------------------------ */

typedef struct child {
    pid_t pid;
    size_t run;  /* index into runs, (size_t)-1 for the plain run */
    double t0;
} child_t;

static volatile sig_atomic_t interrupted;
static void on_signal(int s)
{
    (void)s;
    interrupted = 1;
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
                                       "OMPFUSE_ROLE"};
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
    if (c->slots) {
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

static pid_t spawn(const ompf_campaign_t *c, const ompf_campaign_run_t *r,
                   const ompf_plan_run_t *line, const char *out_path,
                   const char *err_path)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid > 0)
        setpgid(pid, pid); /* both sides: no race with a quick kill */
    if (pid != 0)
        return pid;
    /* child: own process group (a timeout kills the whole group), and die
     * with the campaign so that a killed campaign leaves no stray runs */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(126);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
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
    execv(c->program, c->argv);
    fprintf(stderr, "ompfuse: cannot execute %s: %s\n", c->program,
            strerror(errno));
    _exit(127);
}

/* Last lines of a file, joined by " | ", into buf. */
static void tail_of(const char *path, char *buf, size_t len, int lines)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
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
static void remove_stale_tmp(const char *profile)
{
    char pat[PATH_MAX + 16];
    snprintf(pat, sizeof pat, "%s.tmp.*", profile);
    glob_t g;
    if (glob(pat, GLOB_NOSORT, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++)
            unlink(g.gl_pathv[i]);
    globfree(&g);
}

static void run_paths(const ompf_campaign_t *c, const char *name, char *out,
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

static void fmt_time(double s, char *buf, size_t len)
{
    if (s < 0 || s != s) {
        snprintf(buf, len, "?");
        return;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

typedef struct progress {
    int tty;
    size_t total, done;
    double t0, busy; /* busy: seconds of runs finished in this session */
    size_t finished_here;
    int line_open;
} progress_t;

static void progress_eta(const ompf_campaign_t *c, const progress_t *pg,
                         char *buf, size_t len)
{
    if (!pg->finished_here) {
        snprintf(buf, len, "?");
        return;
    }
    double mean = pg->busy / (double)pg->finished_here;
    double left = (double)(pg->total - pg->done) * mean / (double)c->o.jobs;
    fmt_time(left, buf, len);
}

static void progress_tick(const ompf_campaign_t *c, progress_t *pg,
                          const char *running)
{
    if (!pg->tty || c->o.progress == -2)
        return;
    char el[32], eta[32];
    fmt_time(now_s() - pg->t0, el, sizeof el);
    progress_eta(c, pg, eta, sizeof eta);
    fprintf(c->o.log, "\r[%zu/%zu] elapsed %s  ETA %s  running %-24.24s",
            pg->done, pg->total, el, eta, running ? running : "");
    fflush(c->o.log);
    pg->line_open = 1;
}

static void progress_line(const ompf_campaign_t *c, progress_t *pg,
                          const ompf_campaign_run_t *r)
{
    if (c->o.progress == -2)
        return;
    if (pg->tty && r->status == OMPF_RUN_OK) {
        /* on a terminal only failures get a line of their own */
        progress_tick(c, pg, NULL);
        return;
    }
    char el[32], eta[32];
    fmt_time(now_s() - pg->t0, el, sizeof el);
    progress_eta(c, pg, eta, sizeof eta);
    if (pg->line_open)
        fprintf(c->o.log, "\r%-78s\r", "");
    pg->line_open = 0;
    fprintf(c->o.log, "[%zu/%zu] %-22s %-7s %6.2fs  (elapsed %s, ETA %s)\n",
            pg->done, pg->total, r->name, ompf_run_status_name(r->status),
            r->seconds, el, eta);
    if (r->status != OMPF_RUN_OK && r->note[0])
        fprintf(c->o.log, "    %s\n", r->note);
    fflush(c->o.log);
}

/* Result of a finished child. */
static void finish_run(ompf_campaign_t *c, ompf_campaign_run_t *r, int st,
                       int timed_out, double secs)
{
    char out[PATH_MAX + 64], errp[PATH_MAX + 64];
    run_paths(c, r->name, out, errp, sizeof out);
    r->seconds = secs;
    r->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    r->note[0] = '\0';
    char tail[400];
    if (timed_out) {
        r->status = OMPF_RUN_TIMEOUT;
        tail_of(errp, tail, sizeof tail, 3);
        snprintf(r->note, sizeof r->note,
                 "killed after the %.0f s timeout%s%.200s (stderr: %.200s)",
                 c->o.timeout_s, tail[0] ? "; stderr: " : "", tail, errp);
    } else if (r->signal || r->exit_code != 0) {
        r->status = OMPF_RUN_FAILED;
        tail_of(errp, tail, sizeof tail, 3);
        if (r->signal)
            snprintf(r->note, sizeof r->note, "killed by signal %d (%s)%s%s",
                     r->signal, strsignal(r->signal),
                     tail[0] ? "; stderr: " : "", tail);
        else
            snprintf(r->note, sizeof r->note, "exit code %d%s%s", r->exit_code,
                     tail[0] ? "; stderr: " : "", tail);
    } else {
        char note[512];
        const ompf_plan_run_t *line = c->line[r - c->runs];
        if (access(r->profile, F_OK) != 0) {
            r->status = OMPF_RUN_FAILED;
            snprintf(r->note, sizeof r->note,
                     "the program exited 0 but wrote no profile %s: is it an "
                     "OpenMP program running on LLVM libomp (which loads "
                     "OMP_TOOL_LIBRARIES)?",
                     r->profile);
        } else if (profile_valid(r, line, note, sizeof note) != 0) {
            r->status = OMPF_RUN_FAILED;
            snprintf(r->note, sizeof r->note, "%s", note);
        } else {
            r->status = OMPF_RUN_OK;
        }
    }
    if (r->status == OMPF_RUN_OK) {
        unlink(out); /* program output is kept for failed runs only */
        if (file_size(errp) == 0)
            unlink(errp);
    }
}

static int plain_run(ompf_campaign_t *c, ompf_error_t *err)
{
    char out[PATH_MAX + 64], errp[PATH_MAX + 64];
    run_paths(c, "plain", out, errp, sizeof out);
    if (c->o.progress != -2)
        fprintf(c->o.log, "ompfuse: checking that the program runs without "
                          "the tool...\n");
    double t0 = now_s();
    pid_t pid = spawn(c, NULL, NULL, out, errp);
    if (pid < 0)
        return ompf_error_set(err, OMPF_EIO, "fork failed: %s", strerror(errno));
    int st = 0, timed_out = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        if (interrupted || (c->o.timeout_s > 0 && now_s() - t0 > c->o.timeout_s)) {
            timed_out = !interrupted;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            break;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (interrupted)
        return ompf_error_set(err, OMPF_EPERM, "interrupted");
    if (timed_out || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char tail[400];
        tail_of(errp, tail, sizeof tail, 5);
        char what[64];
        if (timed_out)
            snprintf(what, sizeof what, "ran longer than the %.0f s timeout",
                     c->o.timeout_s);
        else if (WIFSIGNALED(st))
            snprintf(what, sizeof what, "was killed by signal %d", WTERMSIG(st));
        else
            snprintf(what, sizeof what, "exited with code %d", WEXITSTATUS(st));
        return ompf_error_set(err, OMPF_EINVAL,
                              "the program %s %s even without the tool, so no "
                              "run was started; fix the command line first "
                              "(stderr: %s; saved in %s)",
                              c->argv[0], what, tail[0] ? tail : "empty", errp);
    }
    unlink(out);
    unlink(errp);
    if (c->o.progress != -2)
        fprintf(c->o.log, "ompfuse: plain run ok (%.2f s)\n", now_s() - t0);
    return 0;
}

int ompf_campaign_execute(ompf_campaign_t *c, ompf_error_t *err)
{
    if (!c)
        return ompf_error_set(err, OMPF_EINVAL, "no campaign");
    read_old_manifest(c);
    /* resume: keep complete, valid profiles; re-run anything else */
    size_t todo = 0, kept = 0;
    for (size_t i = 0; i < c->n; i++) {
        ompf_campaign_run_t *r = &c->runs[i];
        char note[512];
        int selected = r->status != OMPF_RUN_SKIPPED;
        if (access(r->profile, F_OK) == 0) {
            /* a run of an unselected role done earlier still counts as done */
            if (profile_valid(r, c->line[i], note, sizeof note) == 0) {
                r->status = OMPF_RUN_OK;
                r->resumed = 1;
                kept++;
                continue;
            }
            /* truncated or unusable: it is run again */
            if (selected)
                unlink(r->profile);
        }
        if (!selected)
            continue;
        r->status = OMPF_RUN_PENDING;
        todo++;
    }
    if (c->o.progress != -2) {
        fprintf(c->o.log, "ompfuse: %zu run%s planned", c->n, c->n == 1 ? "" : "s");
        if (kept)
            fprintf(c->o.log, ", %zu already complete (kept)", kept);
        if (c->n - kept - todo)
            fprintf(c->o.log, ", %zu not selected", c->n - kept - todo);
        fprintf(c->o.log, ", %zu to run, %u at a time%s\n", todo, c->o.jobs,
                c->o.jobs > 1 ? " (concurrent runs compete for cores and "
                                "perturb each other's counts)"
                              : "");
    }
    write_manifest(c);
    if (todo == 0)
        return 0;

    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    int rc = 0;
    if (c->o.check_plain && !c->plain_done) {
        rc = plain_run(c, err);
        if (rc) {
            sigaction(SIGINT, &old_int, NULL);
            sigaction(SIGTERM, &old_term, NULL);
            return rc;
        }
        c->plain_done = 1;
    }

    progress_t pg;
    memset(&pg, 0, sizeof pg);
    pg.tty = c->o.progress == 1 || (c->o.progress == -1 && isatty(fileno(c->o.log)));
    pg.total = c->n - (c->n - kept - todo);
    pg.done = kept;
    pg.t0 = now_s();
    child_t *kids = calloc(c->o.jobs, sizeof *kids);
    if (!kids) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    /* Execution order: repeat 1 of every line, then repeat 2, ...: slow
     * drifts of the machine (other load, frequency, memory state) then
     * touch the repeats of a reference set and the fusion runs alike,
     * instead of making back-to-back repeats look closer to each other
     * than to anything else (which would make the EPD calibration too
     * optimistic).  Files and the manifest keep plan order. */
    size_t *order = malloc((c->n ? c->n : 1) * sizeof *order);
    if (!order) {
        free(kids);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < c->n; i++)
        order[i] = i;
    for (size_t i = 1; i < c->n; i++) /* stable insertion sort by repeat */
        for (size_t j = i; j > 0 && c->runs[order[j]].repeat < c->runs[order[j - 1]].repeat; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t running = 0, next = 0;
    double last_tick = 0;
    for (;;) {
        while (!interrupted && running < c->o.jobs) {
            while (next < c->n && c->runs[order[next]].status != OMPF_RUN_PENDING)
                next++;
            if (next >= c->n)
                break;
            size_t ri = order[next];
            ompf_campaign_run_t *r = &c->runs[ri];
            char out[PATH_MAX + 64], errp[PATH_MAX + 64];
            run_paths(c, r->name, out, errp, sizeof out);
            unlink(r->profile);
            remove_stale_tmp(r->profile);
            size_t slot = 0;
            while (kids[slot].pid)
                slot++;
            kids[slot].t0 = now_s();
            kids[slot].run = ri;
            kids[slot].pid = spawn(c, r, c->line[ri], out, errp);
            if (kids[slot].pid < 0) {
                kids[slot].pid = 0;
                r->status = OMPF_RUN_FAILED;
                snprintf(r->note, sizeof r->note, "fork failed: %s",
                         strerror(errno));
                pg.done++;
                progress_line(c, &pg, r);
                next++;
                continue;
            }
            running++;
            next++;
        }
        if (running == 0)
            break;
        if (interrupted) {
            for (size_t s = 0; s < c->o.jobs; s++)
                if (kids[s].pid) {
                    kill(-kids[s].pid, SIGKILL);
                    kill(kids[s].pid, SIGKILL);
                    waitpid(kids[s].pid, NULL, 0);
                    ompf_campaign_run_t *r = &c->runs[kids[s].run];
                    char out[PATH_MAX + 64], errp[PATH_MAX + 64];
                    r->status = OMPF_RUN_INTERRUPTED;
                    unlink(r->profile);
                    run_paths(c, r->name, out, errp, sizeof out);
                    unlink(out);
                    unlink(errp);
                    kids[s].pid = 0;
                }
            running = 0;
            break;
        }
        int progressed = 0;
        for (size_t s = 0; s < c->o.jobs; s++) {
            if (!kids[s].pid)
                continue;
            int st = 0;
            pid_t w = waitpid(kids[s].pid, &st, WNOHANG);
            int timed_out = 0;
            if (w == 0 && c->o.timeout_s > 0 &&
                now_s() - kids[s].t0 > c->o.timeout_s) {
                kill(-kids[s].pid, SIGKILL);
                kill(kids[s].pid, SIGKILL);
                w = waitpid(kids[s].pid, &st, 0);
                timed_out = 1;
            }
            if (w != kids[s].pid)
                continue;
            double secs = now_s() - kids[s].t0;
            ompf_campaign_run_t *r = &c->runs[kids[s].run];
            finish_run(c, r, st, timed_out, secs);
            kids[s].pid = 0;
            running--;
            pg.done++;
            pg.finished_here++;
            pg.busy += secs;
            progress_line(c, &pg, r);
            write_manifest(c);
            progressed = 1;
        }
        if (!progressed) {
            double t = now_s();
            if (t - last_tick > 0.5) {
                const char *name = NULL;
                for (size_t s = 0; s < c->o.jobs && !name; s++)
                    if (kids[s].pid)
                        name = c->runs[kids[s].run].name;
                progress_tick(c, &pg, name);
                last_tick = t;
            }
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    free(kids);
    free(order);
    if (pg.line_open)
        fprintf(c->o.log, "\n");
    write_manifest(c);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    size_t ok = ompf_campaign_count_status(c, OMPF_RUN_OK);
    size_t bad = ompf_campaign_count_status(c, OMPF_RUN_FAILED) +
                 ompf_campaign_count_status(c, OMPF_RUN_TIMEOUT);
    if (c->o.progress != -2)
        fprintf(c->o.log,
                "ompfuse: %zu ok, %zu failed, in %.1f s; manifest %s/manifest.tsv\n",
                ok, bad, now_s() - pg.t0, c->dir);
    if (interrupted) {
        interrupted = 0;
        return ompf_error_set(err, OMPF_EPERM,
                              "interrupted; the manifest is written and "
                              "running the same command again resumes");
    }
    if (bad) {
        rc = ompf_error_set(err, OMPF_EIO,
                            "%zu of %zu runs failed (see %s/manifest.tsv and "
                            "the .stderr files there); running the same "
                            "command again retries them",
                            bad, pg.total, c->dir);
    }
    return rc;
}
