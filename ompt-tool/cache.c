/* The start-up cache (OMPFUSE_CACHE_DIR, docs/tool.md): what the tool
 * learns about the machine at start -- libpfm4's event encodings, the TSC
 * rate, the CPU -> core/NUMA table, the CPU model -- costs tens of milliseconds (libpfm4
 * scans every PMU, the TSC is calibrated for 2 ms, hwloc probes the
 * topology) and is the same for every run on this machine until it
 * reboots.  With OMPFUSE_CACHE_DIR set (ompfuse run sets it to its
 * campaign directory), the first run writes DIR/.startup-<boot id> and the
 * next ones read it instead.  The file is keyed by the boot id (PMU type
 * numbers and the TSC rate are per boot) and records the CPU affinity the
 * topology was read under (another mask: hwloc again).  Anything missing
 * or unreadable falls back to the slow path; the file is replaced whole
 * (temporary name, rename) when a run learnt something new. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

#define CACHE_MAX_EVENTS 256
#define CACHE_MAX_CPUS 4096

static struct {
    char path[4200];
    char mask[CPU_SETSIZE / 4 + 1]; /* this process's affinity, hex */
    int dirty;
    int clock; /* 0 unknown, 1 tsc (mult, shift), -1 no usable TSC */
    uint32_t mult;
    uint16_t shift;
    int ncpus; /* topology: 0 unknown */
    int32_t *core, *numa;
    size_t nev;
    char *ev_name[CACHE_MAX_EVENTS], *ev_enc[CACHE_MAX_EVENTS];
    char cpu[256]; /* the CPU model: /proc/cpuinfo is slow to read */
} cc;

static void affinity_hex(char *buf, size_t n)
{
    cpu_set_t set;
    buf[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    /* highest CPU first, 4 CPUs per digit, leading zeros dropped */
    size_t k = 0;
    for (int c = CPU_SETSIZE - 4; c >= 0 && k + 1 < n; c -= 4) {
        int d = 0;
        for (int b = 0; b < 4; b++)
            d |= CPU_ISSET(c + b, &set) ? 1 << b : 0;
        if (d || k)
            buf[k++] = "0123456789abcdef"[d];
    }
    buf[k] = '\0';
}

static void add_event(const char *name, const char *enc)
{
    if (cc.nev == CACHE_MAX_EVENTS)
        return;
    cc.ev_name[cc.nev] = strdup(name);
    cc.ev_enc[cc.nev] = strdup(enc);
    if (!cc.ev_name[cc.nev] || !cc.ev_enc[cc.nev]) {
        free(cc.ev_name[cc.nev]);
        free(cc.ev_enc[cc.nev]);
        return;
    }
    cc.nev++;
}

static int parse_topo(char *p)
{
    char *end;
    long n = strtol(p, &end, 10);
    if (n <= 0 || n > CACHE_MAX_CPUS)
        return -1;
    int32_t *core = malloc(2 * (size_t)n * sizeof *core);
    if (!core)
        return -1;
    for (long i = 0; i < 2 * n; i++) {
        p = end;
        core[i] = (int32_t)strtol(p, &end, 10);
        if (end == p) {
            free(core);
            return -1;
        }
    }
    cc.ncpus = (int)n;
    cc.core = core;
    cc.numa = core + n;
    return 0;
}

static void parse(char *text, int same_mask)
{
    char *save = NULL;
    for (char *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        unsigned mult, shift;
        if (!strncmp(ln, "event ", 6)) {
            char *tab = strchr(ln + 6, '\t');
            if (tab && tab[1]) {
                *tab = '\0';
                add_event(tab + 1, ln + 6);
            }
        } else if (!strcmp(ln, "clock none")) {
            cc.clock = -1;
        } else if (sscanf(ln, "clock tsc %u %u", &mult, &shift) == 2 && mult &&
                   shift < 64) {
            cc.clock = 1;
            cc.mult = mult;
            cc.shift = (uint16_t)shift;
        } else if (!strncmp(ln, "cpu ", 4) && ln[4]) {
            snprintf(cc.cpu, sizeof cc.cpu, "%s", ln + 4);
        } else if (!strncmp(ln, "topo ", 5) && same_mask && !cc.ncpus) {
            parse_topo(ln + 5);
        }
    }
}

void ft_cache_load(void)
{
    const char *dir = getenv("OMPFUSE_CACHE_DIR");
    char boot[64];
    if (!dir || !*dir)
        return;
    ft_read_small("/proc/sys/kernel/random/boot_id", boot, sizeof boot);
    boot[strcspn(boot, "\n")] = '\0';
    if (!boot[0])
        return;
    /* libpfm4's environment changes what a name encodes to (a forced PMU
     * model, inactive PMUs, ...): runs under another one use another file */
    static const char *const pfm_env[] = {"LIBPFM_FORCE_PMU", "LIBPFM_ENCODE_INACTIVE",
                                          "LIBPFM_DISABLED_PMUS"};
    uint32_t h = 2166136261u;
    int any = 0;
    for (size_t i = 0; i < sizeof pfm_env / sizeof pfm_env[0]; i++) {
        const char *v = getenv(pfm_env[i]);
        if (!v)
            continue;
        any = 1;
        for (const char *c = pfm_env[i]; *c; c++)
            h = (h ^ (unsigned char)*c) * 16777619u;
        h = (h ^ '=') * 16777619u;
        for (const char *c = v; *c; c++)
            h = (h ^ (unsigned char)*c) * 16777619u;
        h = (h ^ ';') * 16777619u;
    }
    char suffix[16] = "";
    if (any)
        snprintf(suffix, sizeof suffix, "-%08x", (unsigned)h);
    int w = snprintf(cc.path, sizeof cc.path, "%s/.startup-%s%s", dir, boot, suffix);
    if (w < 0 || (size_t)w >= sizeof cc.path) {
        cc.path[0] = '\0';
        return;
    }
    affinity_hex(cc.mask, sizeof cc.mask);
    int fd = open(cc.path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    ssize_t r = 0;
    while (buf && n < cap && (r = read(fd, buf + n, cap - n)) > 0)
        n += (size_t)r;
    close(fd);
    if (!buf || r < 0 || n == cap) { /* unreadable or not ours: ignore */
        free(buf);
        return;
    }
    buf[n] = '\0';
    char head[64 + sizeof cc.mask];
    snprintf(head, sizeof head, "ompfuse-startup 1\nmask %s\n", cc.mask);
    const char *magic = "ompfuse-startup 1\n";
    if (!strncmp(buf, magic, strlen(magic)))
        parse(buf, !strncmp(buf, head, strlen(head)));
    free(buf);
}

int ft_cache_on(void) { return cc.path[0] != '\0'; }

const char *ft_cache_event(const char *name, void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < cc.nev; i++)
        if (!strcmp(cc.ev_name[i], name))
            return cc.ev_enc[i];
    return NULL;
}

void ft_cache_put_event(const char *name, const char *enc)
{
    if (!ft_cache_on() || ft_cache_event(name, NULL) || strchr(name, '\n') ||
        strchr(name, '\t'))
        return;
    add_event(name, enc);
    cc.dirty = 1;
}

int ft_cache_clock(uint32_t *mult, uint16_t *shift)
{
    *mult = cc.mult;
    *shift = cc.shift;
    return cc.clock;
}

void ft_cache_put_clock(int tsc, uint32_t mult, uint16_t shift)
{
    if (!ft_cache_on() || cc.clock)
        return;
    cc.clock = tsc ? 1 : -1;
    cc.mult = mult;
    cc.shift = shift;
    cc.dirty = 1;
}

int ft_cache_topo(const int32_t **core, const int32_t **numa)
{
    *core = cc.core;
    *numa = cc.numa;
    return cc.ncpus;
}

void ft_cache_put_topo(int n, const int32_t *core, const int32_t *numa)
{
    if (!ft_cache_on() || cc.ncpus || n <= 0 || n > CACHE_MAX_CPUS)
        return;
    cc.core = malloc(2 * (size_t)n * sizeof *cc.core);
    if (!cc.core)
        return;
    cc.numa = cc.core + n;
    memcpy(cc.core, core, (size_t)n * sizeof *core);
    memcpy(cc.numa, numa, (size_t)n * sizeof *numa);
    cc.ncpus = n;
    cc.dirty = 1;
}

void ft_cache_save(void)
{
    if (!ft_cache_on())
        return;
    ft_verbose("start-up cache %s: %s", cc.path,
               cc.dirty ? "updated (something was not cached)" : "used");
    if (!cc.dirty)
        return;
    cc.dirty = 0;
    char tmp[sizeof cc.path + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", cc.path, (long)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f) {
        ft_verbose("start-up cache %s: cannot write it (%s); each run starts "
                   "without it (OMPFUSE_CACHE_DIR must name an existing, "
                   "writable directory)", cc.path, strerror(errno));
        return;
    }
    fprintf(f, "ompfuse-startup 1\nmask %s\n", cc.mask);
    if (cc.clock > 0)
        fprintf(f, "clock tsc %u %u\n", cc.mult, (unsigned)cc.shift);
    else if (cc.clock < 0)
        fprintf(f, "clock none\n");
    if (cc.ncpus) {
        fprintf(f, "topo %d", cc.ncpus);
        for (int i = 0; i < 2 * cc.ncpus; i++)
            fprintf(f, " %d", (int)cc.core[i]);
        fputc('\n', f);
    }
    if (cc.cpu[0])
        fprintf(f, "cpu %s\n", cc.cpu);
    for (size_t i = 0; i < cc.nev; i++)
        fprintf(f, "event %s\t%s\n", cc.ev_enc[i], cc.ev_name[i]);
    /* a concurrent run may write the same file: the last rename wins, and
     * either version is whole */
    if (fclose(f) != 0 || rename(tmp, cc.path) != 0) {
        ft_verbose("start-up cache %s: %s", cc.path, strerror(errno));
        unlink(tmp);
    }
}

const char *ft_cache_cpu_model(void)
{
    if (!cc.cpu[0]) {
        ompf_cpu_model(cc.cpu, sizeof cc.cpu);
        cc.cpu[strcspn(cc.cpu, "\n")] = '\0';
        if (ft_cache_on() && cc.cpu[0])
            cc.dirty = 1;
    }
    return cc.cpu;
}
