/* Executing a plan: one child process per run, manifest, resume, progress,
 * timeouts, failures recorded without stopping the campaign. */
#include "campaign_int.h"
#include "ompfuse/counters.h"

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

double ompf_cmpi_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void ompf_cmpi_hostname(char *buf, size_t len)
{
    if (gethostname(buf, len) != 0)
        snprintf(buf, len, "?");
    buf[len - 1] = '\0';
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

int ompf_cmpi_mkdir_p(const char *dir)
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
    free(c->kernel_hem);
    if (c->argv)
        for (size_t i = 0; c->argv[i]; i++)
            free(c->argv[i]);
    free(c->argv);
    free(c->dir);
    ompf_dirlock_release(c->lock);
    free(c);
}

static const char *libomp_candidates[] = {
    "/usr/lib/llvm-19/lib/libomp.so.5",
    "/usr/lib/x86_64-linux-gnu/libomp.so.5",
    "/usr/lib/aarch64-linux-gnu/libomp.so.5",
    "/usr/local/lib/libomp.so.5",
};

/* gcc-built binaries use libgomp, which ignores OMP_TOOL_LIBRARIES: put a
 * libgomp.so.1 -> libomp.so.5 link first on LD_LIBRARY_PATH
 * (docs/semantics.md, OpenMP runtime). */
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
    if (ompf_cmpi_mkdir_p(c->route_dir) != 0)
        return ompf_error_set(err, OMPF_EIO, "cannot create %s: %s",
                              c->route_dir, strerror(errno));
    unlink(link);
    if (symlink(libomp, link) != 0)
        return ompf_error_set(err, OMPF_EIO, "cannot create the link %s: %s",
                              link, strerror(errno));
    if (c->o.progress != -2)
        fprintf(c->o.log,
                "ompfuse: %s is linked against libgomp (gcc); running it on "
                "LLVM's %s through %s on LD_LIBRARY_PATH (static loops "
                "then record no XUs of their own: docs/semantics.md, "
                "OpenMP runtime)\n",
                c->program, libomp, link);
    return 0;
}

/* A HEM line with a hardware event: on a PMU the kernel multiplexes it.
 * The tool's user-space engine (which OMPFUSE_PMU_SLOTS selects) needs
 * every event in one group, and the kernel refuses a group larger than
 * its counters, so such a run gets no OMPFUSE_PMU_SLOTS (docs/hem.md). */
static int kernel_hem(const ompf_plan_run_t *pr)
{
    if (pr->role != OMPF_ROLE_HEM && pr->role != OMPF_ROLE_HEM_DELTA)
        return 0;
    ompf_cnt_set_t *s = NULL;
    if (ompf_cnt_set_create((const char *const *)pr->events, pr->n_events, &s,
                            NULL) != 0)
        return 0;
    int hw = 0;
    for (size_t i = 0; i < pr->n_events; i++)
        hw |= ompf_cnt_set_is_hardware(s, i);
    ompf_cnt_set_destroy(s);
    return hw;
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
    if (ompf_cmpi_mkdir_p(c->dir) != 0) {
        rc = ompf_error_set(err, OMPF_EIO,
                            "cannot create the output directory %s: %s",
                            c->dir, strerror(errno));
        ompf_campaign_destroy(c);
        return rc;
    }
    /* absolute from here on: messages stay right after --resume moved to
     * the campaign's starting directory, and array tasks need no cwd */
    char real[PATH_MAX];
    if (realpath(c->dir, real)) {
        char *abs = strdup(real);
        if (!abs) {
            ompf_campaign_destroy(c);
            return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        }
        free(c->dir);
        c->dir = abs;
    }
    /* nothing in the directory is touched before the lock is ours */
    if (!c->o.no_lock &&
        (rc = ompf_dirlock_acquire(c->dir, c->o.progress != -2 ? c->o.log : NULL,
                                   &c->lock, err)) != 0) {
        ompf_campaign_destroy(c);
        return rc;
    }
    const char *env_slots = getenv("OMPFUSE_PMU_SLOTS");
    c->slots = c->o.slots                  ? c->o.slots
               : env_slots && *env_slots ? (unsigned)atoi(env_slots)
                                         : ompf_plan_slots(plan);
    c->n = ompf_plan_total_runs(plan, -1);
    c->runs = calloc(c->n ? c->n : 1, sizeof *c->runs);
    c->line = calloc(c->n ? c->n : 1, sizeof *c->line);
    c->kernel_hem = calloc(c->n ? c->n : 1, 1);
    if (!c->runs || !c->line || !c->kernel_hem) {
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
            c->kernel_hem[k] = (unsigned char)(r == 1 ? kernel_hem(pr)
                                                      : c->kernel_hem[k - 1]);
        }
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

