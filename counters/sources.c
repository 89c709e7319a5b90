/* perf's event syntax: tracepoints (tracefs ids), uprobes (ELF symbol
 * file offsets), sysfs PMUs (events/ and format/) and breakpoints. */
#include "sources.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/hw_breakpoint.h> /* HW_BREAKPOINT_* only */

#include "ompfuse/elf.h"
#include "upevents.h"

#define SYSPMU "/sys/bus/event_source/devices"

static int fail(ompf_cnt_src_t *o, ompf_cnt_fail_t why, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(ompf_cnt_src_t *o, ompf_cnt_fail_t why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->reason, sizeof o->reason, fmt, ap);
    va_end(ap);
    o->fail = why;
    return 1;
}

/* First line of a small file, without the newline; errno set on failure. */
static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    if (!ok) {
        errno = EIO;
        return -1;
    }
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* The tracefs events directory; *denied set when one exists but this user
 * may not look inside (tracefs is root-only by default). */
static const char *tracefs(int *denied)
{
    /* tracefs's own mount first; debugfs mounts it under tracing/ */
    static const char *const roots[] = {"/sys/kernel/tracing/events",
                                        "/sys/kernel/debug/tracing/events"};
    struct stat st;
    *denied = 0;
    for (size_t i = 0; i < 2; i++) {
        if (stat(roots[i], &st) == 0 && S_ISDIR(st.st_mode))
            return roots[i];
        if (errno == EACCES)
            *denied = 1;
    }
    return NULL;
}

const char *ompf_cnt_src_tracefs(void)
{
    int denied;
    return tracefs(&denied);
}

const char *ompf_cnt_tracefs(void) { return ompf_cnt_src_tracefs(); }

/* SUBSYS:NAME as perf writes tracepoints: one colon, word characters. */
static int tp_shaped(const char *name)
{
    const char *c = strchr(name, ':');
    if (!c || c == name || !c[1] || strchr(c + 1, ':'))
        return 0;
    for (const char *p = name; *p; p++)
        if (p != c && !isalnum((unsigned char)*p) && *p != '_' && *p != '-' &&
            *p != '.')
            return 0;
    return 1;
}

/* 1 when handled (found, or present without an id), 0 when not there,
 * -errno when tracefs refused. */
static int tp_lookup(const char *name, ompf_cnt_src_t *o)
{
    const char *root = ompf_cnt_src_tracefs();
    if (!root)
        return 0;
    const char *c = strchr(name, ':');
    char path[PATH_MAX], buf[64];
    snprintf(path, sizeof path, "%s/%.*s/%s/id", root, (int)(c - name), name,
             c + 1);
    if (read_line(path, buf, sizeof buf) != 0) {
        int e = errno;
        struct stat st;
        path[strlen(path) - 3] = '\0';
        if (e == ENOENT && stat(path, &st) == 0)
            return fail(o, OMPF_CNT_UNSUPPORTED,
                        "event %s: in tracefs but without an id (an ftrace "
                        "record format, not a tracepoint perf can count)", name);
        return e == ENOENT || e == ENOTDIR ? 0 : -e;
    }
    memset(&o->attr, 0, sizeof o->attr);
    o->attr.type = PERF_TYPE_TRACEPOINT;
    o->attr.config = strtoull(buf, NULL, 10);
    o->fail = OMPF_CNT_OK;
    return 1;
}

int ompf_cnt_src_tp_why(const char *name, ompf_cnt_src_t *o)
{
    if (!tp_shaped(name))
        return 0;
    int denied;
    const char *root = tracefs(&denied);
    if (!root && denied)
        return fail(o, OMPF_CNT_PERMISSION,
                    "event %s: not a libpfm4 name, and tracefs (where "
                    "tracepoint ids are) is not readable by this user: run as "
                    "root", name);
    if (!root)
        return fail(o, OMPF_CNT_UNSUPPORTED,
                    "event %s: not a libpfm4 name, and tracefs is not mounted "
                    "to look it up as a tracepoint; as root: `mount -t tracefs "
                    "nodev /sys/kernel/tracing`", name);
    return fail(o, OMPF_CNT_UNKNOWN,
                "event %s: neither a libpfm4 name nor a tracepoint in %s "
                "(`ompfuse events --tracepoints` lists them)", name, root);
}

/* ---- uprobes ------------------------------------------------------------ */

/* File offset of symbol sym in the ELF64 file f: 1 found, 0 not, -1 not
 * an ELF64 file.  .symtab first (static functions), then .dynsym. */
static int elf_sym_offset(FILE *f, const char *sym, uint64_t *off)
{
    Elf64_Ehdr eh;
    Elf64_Shdr *sh;
    if (ompf_elf_sections(f, &eh, &sh))
        return -1;
    Elf64_Phdr *ph = NULL;
    int found = 0;
    uint64_t value = 0;
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 4096) {
        free(sh);
        return -1;
    }
    ph = calloc(eh.e_phnum ? eh.e_phnum : 1, sizeof *ph);
    if (!ph || ompf_elf_read_at(f, (long)eh.e_phoff, ph, eh.e_phnum * sizeof *ph))
        goto out;
    for (int pass = 0; pass < 2 && !found; pass++) {
        unsigned want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
        for (size_t i = 0; i < eh.e_shnum && !found; i++) {
            void *data;
            char *str;
            size_t strsize;
            if (sh[i].sh_type != want ||
                ompf_elf_linked(f, &eh, sh, i, (size_t)1 << 28, &data, &str, &strsize))
                continue;
            const Elf64_Sym *syms = data;
            size_t ns = sh[i].sh_size / sizeof *syms;
            for (size_t k = 0; k < ns; k++)
                if (syms[k].st_name < strsize && syms[k].st_value &&
                    syms[k].st_shndx != SHN_UNDEF && !strcmp(str + syms[k].st_name, sym)) {
                    value = syms[k].st_value;
                    found = 1;
                    break;
                }
            free(data);
            free(str);
        }
    }
    if (found) {
        /* the kernel wants the offset in the file: through the segment */
        found = 0;
        for (size_t i = 0; i < eh.e_phnum; i++)
            if (ph[i].p_type == PT_LOAD && value >= ph[i].p_vaddr &&
                value < ph[i].p_vaddr + ph[i].p_filesz) {
                *off = value - ph[i].p_vaddr + ph[i].p_offset;
                found = 1;
                break;
            }
    }
out:
    free(sh);
    free(ph);
    return found;
}

static int pmu_type(const char *pmu, uint32_t *type)
{
    char path[PATH_MAX], buf[32];
    snprintf(path, sizeof path, SYSPMU "/%s/type", pmu);
    if (read_line(path, buf, sizeof buf) != 0)
        return -1;
    *type = (uint32_t)strtoul(buf, NULL, 10);
    return 0;
}

/* How good a definition of the probe in uprobe_events is to open as its
 * tracepoint: 0 the group OMPFUSE_UPROBE_GROUP names (the campaign that
 * runs us holds it), 1 someone else's (perf probe), 2 another live
 * ompfuse's; -1 unusable (not plain, or an ompfuse group whose process is
 * dead: its janitor may remove it any moment). */
static int probe_rank(const ompf_upev_t *e, const char *abs, uint64_t off, const char *pref)
{
    char real[PATH_MAX];
    if (e->kind != 'p' || !e->plain || e->off != off ||
        (strcmp(e->path, abs) && (!realpath(e->path, real) || strcmp(real, abs))))
        return -1;
    if (pref && !strcmp(e->group, pref))
        return 0;
    long owner = ompf_upev_owner(e->group);
    return !owner ? 1 : ompf_upev_alive(owner) ? 2 : -1;
}

/* A uprobe at abs:off that tracefs already defines (and someone holds
 * open) is opened as that tracepoint: its fixed costs are paid once by
 * the holder instead of at every open and close of every thread (the
 * uprobe PMU makes a trace event per perf event and unregisters it at
 * close, ~80 ms of RCU grace periods; docs/events.md).  1 when o is set. */
static int defined_probe(const char *abs, uint64_t off, ompf_cnt_src_t *o)
{
    char root[PATH_MAX], line[PATH_MAX + 256], best[160] = "", path[PATH_MAX + 200], id[64];
    if (ompf_upev_root(root, sizeof root))
        return 0;
    const char *pref = getenv("OMPFUSE_UPROBE_GROUP");
    if (pref && strlen(pref) < 64) { /* the holder's own name for it */
        char ev[64];
        ompf_upev_name(abs, off, ev, sizeof ev);
        snprintf(path, sizeof path, "%s/events/%s/%s/id", root, pref, ev);
        if (read_line(path, id, sizeof id) == 0)
            goto found;
    }
    snprintf(line, sizeof line, "%s/uprobe_events", root);
    FILE *f = fopen(line, "r");
    if (!f)
        return 0;
    int rank = 3;
    ompf_upev_t e;
    while (rank > 0 && fgets(line, sizeof line, f)) {
        int r = ompf_upev_parse(line, strcspn(line, "\n"), &e) ? -1
                                                                : probe_rank(&e, abs, off, pref);
        if (r >= 0 && r < rank) {
            rank = r;
            snprintf(best, sizeof best, "%s/%s", e.group, e.event);
        }
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/events/%s/id", root, best);
    if (!best[0] || read_line(path, id, sizeof id))
        return 0;
found:
    o->attr.type = PERF_TYPE_TRACEPOINT;
    o->attr.config = strtoull(id, NULL, 10);
    o->fail = OMPF_CNT_OK;
    return 1;
}

/* The absolute binary and file offset a uprobe name stands for: 0, or 1
 * with o->fail and the sentence set. */
static int uprobe_where(const char *name, ompf_cnt_src_t *o, char *abs, uint64_t *where)
{
    const char *bin = name + strlen("uprobe:");
    const char *c = strrchr(bin, ':');
    if (!c || c == bin || !c[1])
        return fail(o, OMPF_CNT_UNKNOWN,
                    "event %s: write uprobes as uprobe:BINARY:SYMBOL[+OFFSET]",
                    name);
    char file[PATH_MAX], sym[256];
    snprintf(file, sizeof file, "%.*s", (int)(c - bin), bin);
    snprintf(sym, sizeof sym, "%s", c + 1);
    uint64_t add = 0;
    char *plus = strchr(sym, '+');
    if (plus) {
        char *end;
        *plus = '\0';
        errno = 0;
        add = strtoull(plus + 1, &end, 0);
        if (errno || end == plus + 1 || *end)
            return fail(o, OMPF_CNT_UNKNOWN,
                        "event %s: the offset after '+' is not a number", name);
    }
    if (!realpath(file, abs))
        return fail(o, OMPF_CNT_UNKNOWN, "event %s: binary %s: %s", name, file,
                    strerror(errno));
    FILE *f = fopen(abs, "rb");
    if (!f)
        return fail(o, OMPF_CNT_OTHER, "event %s: %s: %s", name, abs,
                    strerror(errno));
    uint64_t off = 0;
    int rc = elf_sym_offset(f, sym, &off);
    fclose(f);
    if (rc < 0)
        return fail(o, OMPF_CNT_UNKNOWN, "event %s: %s is not a 64-bit ELF file",
                    name, abs);
    if (rc == 0)
        return fail(o, OMPF_CNT_UNKNOWN,
                    "event %s: symbol %s not found in %s (neither .symtab nor "
                    ".dynsym; `nm %s` lists its symbols; a static or inlined "
                    "function needs a build that keeps it: noinline, not "
                    "stripped)", name, sym, abs, abs);
    *where = off + add;
    return 0;
}

int ompf_cnt_src_uprobe_where(const char *name, char *abs, uint64_t *off)
{
    ompf_cnt_src_t o;
    memset(&o, 0, sizeof o);
    return strncmp(name, "uprobe:", 7) || uprobe_where(name, &o, abs, off) ? -1 : 0;
}

static int uprobe(const char *name, ompf_cnt_src_t *o)
{
    uint32_t type;
    if (pmu_type("uprobe", &type) != 0)
        return fail(o, OMPF_CNT_UNSUPPORTED,
                    "event %s: this kernel has no uprobe PMU (%s/uprobe/type: "
                    "%s; needs CONFIG_UPROBE_EVENTS)", name, SYSPMU,
                    strerror(errno));
    char abs[PATH_MAX];
    uint64_t off;
    if (uprobe_where(name, o, abs, &off))
        return 1;
    memset(&o->attr, 0, sizeof o->attr);
    if (defined_probe(abs, off, o))
        return 1;
    o->path = strdup(abs);
    if (!o->path)
        return fail(o, OMPF_CNT_OTHER, "event %s: out of memory", name);
    o->attr.type = type;
    o->attr.config1 = (uint64_t)(uintptr_t)o->path; /* uprobe_path */
    o->attr.config2 = off;                            /* probe_offset */
    o->fail = OMPF_CNT_OK;
    return 1;
}

/* ---- sysfs PMUs: PMU/term,term=value/ ------------------------------------ */

/* Puts v into the attr fields a format file names ("config:0-7,32-35"). */
static int apply_format(struct perf_event_attr *a, const char *fmt, uint64_t v)
{
    const char *c = strchr(fmt, ':');
    if (!c)
        return -1;
    uint64_t *field = !strncmp(fmt, "config:", 7)    ? &a->config
                      : !strncmp(fmt, "config1:", 8) ? &a->config1
                      : !strncmp(fmt, "config2:", 8) ? &a->config2
                                                     : NULL;
    if (!field)
        return -1;
    const char *p = c + 1;
    while (*p) {
        char *end;
        unsigned lo = (unsigned)strtoul(p, &end, 10), hi = lo;
        if (end == p)
            return -1;
        if (*end == '-')
            hi = (unsigned)strtoul(end + 1, &end, 10);
        if (hi < lo || hi > 63)
            return -1;
        for (unsigned b = lo; b <= hi; b++, v >>= 1)
            if (v & 1)
                *field |= 1ull << b;
            else
                *field &= ~(1ull << b);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return 0;
}

/* Applies "a=1,b=0x2,c" terms; a term without format/ may be an alias in
 * events/ (depth-limited: aliases name format terms). */
static int apply_terms(const char *pmu, const char *terms,
                       struct perf_event_attr *a, int depth, char *bad,
                       size_t nbad)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", terms);
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*t))
            t++;
        char *eq = strchr(t, '=');
        uint64_t v = 1;
        if (eq) {
            *eq = '\0';
            v = strtoull(eq + 1, NULL, 0);
        }
        char path[PATH_MAX], line[512];
        snprintf(path, sizeof path, SYSPMU "/%s/format/%s", pmu, t);
        if (read_line(path, line, sizeof line) == 0) {
            if (apply_format(a, line, v) != 0)
                goto bad;
            continue;
        }
        snprintf(path, sizeof path, SYSPMU "/%s/events/%s", pmu, t);
        if (!eq && depth == 0 && read_line(path, line, sizeof line) == 0 &&
            apply_terms(pmu, line, a, 1, bad, nbad) == 0)
            continue;
    bad:
        snprintf(bad, nbad, "%s", t);
        return -1;
    }
    return 0;
}

/* PMUs whose events the kernel schedules as software (never multiplexed) */
static int software_pmu(const char *pmu)
{
    static const char *const sw[] = {"software", "tracepoint", "breakpoint",
                                     "uprobe", "kprobe", "msr"};
    for (size_t i = 0; i < sizeof sw / sizeof *sw; i++)
        if (!strcmp(pmu, sw[i]))
            return 1;
    return 0;
}

static int sysfs_pmu(const char *name, ompf_cnt_src_t *o)
{
    const char *s1 = strchr(name, '/');
    const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    if (!s2 || s1 == name || s2[1])
        return fail(o, OMPF_CNT_UNKNOWN,
                    "event %s: write sysfs PMU events as PMU/EVENT/ or "
                    "PMU/term=value,.../ (no modifiers after the last '/')",
                    name);
    char pmu[128], terms[512], bad[128] = "";
    snprintf(pmu, sizeof pmu, "%.*s", (int)(s1 - name), name);
    snprintf(terms, sizeof terms, "%.*s", (int)(s2 - s1 - 1), s1 + 1);
    uint32_t type;
    if (pmu_type(pmu, &type) != 0)
        return fail(o, OMPF_CNT_NO_PMU,
                    "event %s: no PMU %s in %s (`ompfuse events --pmus` lists "
                    "them)", name, pmu, SYSPMU);
    memset(&o->attr, 0, sizeof o->attr);
    o->attr.type = type;
    if (apply_terms(pmu, terms, &o->attr, 0, bad, sizeof bad) != 0)
        return fail(o, OMPF_CNT_UNKNOWN,
                    "event %s: PMU %s has no event or format term '%s' (see "
                    "%s/%s/events and format)", name, pmu, bad, SYSPMU, pmu);
    o->hardware = !software_pmu(pmu);
    o->fail = OMPF_CNT_OK;
    return 1;
}

/* ---- breakpoints: mem:ADDR[:rwx] ----------------------------------------- */

static int breakpoint(const char *name, ompf_cnt_src_t *o)
{
    const char *p = name + 4;
    char *end;
    errno = 0;
    uint64_t addr = strtoull(p, &end, 0);
    if (errno || end == p || (*end && *end != ':'))
        return fail(o, OMPF_CNT_UNKNOWN,
                    "event %s: write breakpoints as mem:ADDR[:rw|:x]", name);
    unsigned type = 0;
    for (const char *m = *end ? end + 1 : "rw"; *m; m++)
        type |= *m == 'r'   ? HW_BREAKPOINT_R
                : *m == 'w' ? HW_BREAKPOINT_W
                : *m == 'x' ? HW_BREAKPOINT_X
                            : 0x100;
    if (!type || (type & 0x100) || ((type & HW_BREAKPOINT_X) && type != HW_BREAKPOINT_X))
        return fail(o, OMPF_CNT_UNKNOWN,
                    "event %s: access must be r, w, rw or x", name);
    memset(&o->attr, 0, sizeof o->attr);
    o->attr.type = PERF_TYPE_BREAKPOINT;
    o->attr.bp_type = type;
    o->attr.bp_addr = addr;
    o->attr.bp_len = type == HW_BREAKPOINT_X ? sizeof(long) : HW_BREAKPOINT_LEN_4;
    o->fail = OMPF_CNT_OK;
    return 1;
}

int ompf_cnt_src_encode(const char *name, ompf_cnt_src_t *o)
{
    memset(o, 0, sizeof *o);
    if (!strncmp(name, "uprobe:", 7))
        return uprobe(name, o);
    if (!strncmp(name, "mem:", 4))
        return breakpoint(name, o);
    if (strchr(name, '/') && !strstr(name, "::"))
        return sysfs_pmu(name, o);
    if (tp_shaped(name)) {
        int rc = tp_lookup(name, o);
        if (rc < 0)
            return fail(o, OMPF_CNT_PERMISSION,
                        "event %s: cannot read its tracepoint id in %s (%s); "
                        "run as root (tracefs is usually root-only)", name,
                        ompf_cnt_src_tracefs(), strerror(-rc));
        return rc;
    }
    return 0;
}
