/* Run metadata for the profile header. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

static void exe_path(char *buf, size_t len)
{
    char tmp[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", tmp, sizeof tmp - 1);
    tmp[n > 0 ? n : 0] = '\0';
    if (!realpath(tmp, buf) || strlen(buf) >= len)
        snprintf(buf, len, "%s", tmp);
}

static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

void ft_default_output(char *buf, size_t len, const char *dir)
{
    char exe[PATH_MAX], host[256];
    exe_path(exe, sizeof exe);
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "host");
    host[sizeof host - 1] = '\0';
    size_t dl = dir ? strlen(dir) : 0;
    snprintf(buf, len, "%s%s%s.%s.%ld.ompf", dir ? dir : "",
             dl && dir[dl - 1] != '/' ? "/" : "", base(exe), host,
             (long)getpid());
}

/* OMPFUSE_ARGV (set by `ompfuse run`): the command line as started, for
 * a program that overwrote its argv strings before the tool started (it
 * reads /proc/self/cmdline, the live strings).  Taken only when it has as
 * many arguments and the same argv[0]: a program the run's program
 * started inherits the variable, and its own command line is kept. */
static char *started_as(char *live)
{
    const char *s = getenv("OMPFUSE_ARGV");
    if (!s || !*s)
        return live;
    size_t ns = 1, nl = 1;
    for (const char *q = s; *q; q++)
        ns += *q == '\x1f';
    for (const char *q = live; *q; q++)
        nl += *q == '\x1f';
    const char *es = strchr(s, '\x1f'), *el = strchr(live, '\x1f');
    size_t l0s = es ? (size_t)(es - s) : strlen(s), l0l = el ? (size_t)(el - live) : strlen(live);
    if (ns != nl || l0s != l0l || memcmp(s, live, l0s))
        return live;
    char *copy = strdup(s);
    if (!copy)
        return live;
    free(live);
    return copy;
}

static char *read_cmdline(void)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC); /* no stdio buffer */
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    while (b) {
        ssize_t got = read(fd, b + n, cap - n - 1);
        if (got <= 0)
            break;
        n += (size_t)got;
        if (n < cap - 1)
            continue;
        cap *= 2;
        char *nb = realloc(b, cap);
        if (!nb) {
            free(b);
            b = NULL;
        } else {
            b = nb;
        }
    }
    close(fd);
    if (!b)
        return NULL;
    while (n > 0 && b[n - 1] == '\0')
        n--;
    for (size_t i = 0; i < n; i++)
        if (b[i] == '\0')
            b[i] = '\x1f';
    b[n] = '\0';
    return started_as(b);
}

int ft_meta_fill(ompf_profile_t *p, const char *runtime_version)
{
    char buf[PATH_MAX + 64];
    int rc = 0;
    char ver[16];
    snprintf(ver, sizeof ver, "%u", OMPF_FORMAT_VERSION);
    rc |= ompf_meta_set(p, "format_version", ver);
    rc |= ompf_meta_set(p, "tool_version", OMPF_VERSION_STRING);
    exe_path(buf, sizeof buf);
    rc |= ompf_meta_set(p, "program", buf);
    char *argv = read_cmdline();
    rc |= ompf_meta_set(p, "argv", argv ? argv : "");
    free(argv);
    if (gethostname(buf, 256) != 0)
        snprintf(buf, sizeof buf, "unknown");
    buf[255] = '\0';
    rc |= ompf_meta_set(p, "hostname", buf);
    rc |= ompf_meta_set(p, "cpu_model", ft_cache_cpu_model());
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release,
                 u.machine);
        rc |= ompf_meta_set(p, "kernel", buf);
    }
    rc |= ompf_meta_set(p, "omp_runtime",
                        runtime_version ? runtime_version : "unknown");
    {
        /* the OpenMP environment: runs to be fused must share it */
        extern char **environ;
        size_t need = ompf_omp_env(environ, NULL, 0);
        char *env = malloc(need + 1);
        if (env)
            ompf_omp_env(environ, env, need + 1);
        rc |= env ? ompf_meta_set(p, "omp_env", env) : OMPF_ENOMEM;
        free(env);
    }
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    /* not strftime: it reads the time zone file, for nothing here */
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    rc |= ompf_meta_set(p, "start_time", buf);
    rc |= ompf_meta_set(p, "mode", ft_g.mode);
    rc |= ompf_meta_set(p, "role", ft_g.role ? ft_g.role : "");
    if (ft_g.pmu_slots >= 0)
        snprintf(buf, sizeof buf, "%ld", ft_g.pmu_slots);
    else
        snprintf(buf, sizeof buf, "unlimited");
    rc |= ompf_meta_set(p, "pmu_slots", buf);
    uint64_t id = 0;
    if (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id)
        id = ft_now() ^ ((uint64_t)getpid() << 32);
    rc |= ompf_profile_set_run_id(p, id);
    return rc ? OMPF_ENOMEM : 0;
}
