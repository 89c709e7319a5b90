/* Candidate events for `--events auto`: uprobes from the program's line
 * table, and the short fixed lists of tracepoints and software events.
 *
 * Why lines and not functions: at -O2 the bundled CG inlines every helper
 * into its outlined parallel region, so function entries are never hit
 * inside XUs; the statement addresses of the outlined region's source
 * lines are, as often as that code runs. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autoevents_internal.h"

/* Tracepoints that an OpenMP program can cause per XU: scheduling (waits,
 * wake-ups of the runtime's threads), memory (page allocation and faults,
 * brk/mmap growth), futexes and yields of the runtime's barriers, TLB
 * shootdowns.  A short list on purpose: each costs ~250 ns per hit, and
 * the other ~2,300 almost never fire in a compute program. */
static const char *const tracepoints[] = {
    "sched:sched_switch",       "sched:sched_wakeup",     "sched:sched_stat_runtime",
    "kmem:mm_page_alloc",       "kmem:mm_page_free",      "exceptions:page_fault_user",
    "syscalls:sys_enter_futex", "syscalls:sys_enter_sched_yield",
    "syscalls:sys_enter_brk",   "syscalls:sys_enter_mmap", "tlb:tlb_flush",
    "irq_vectors:local_timer_entry",
};

/* The seven software events minus the ones that never vary per XU here. */
static const char *const software[] = {
    "perf::TASK-CLOCK",       "perf::CPU-CLOCK",     "perf::PAGE-FAULTS",
    "perf::MINOR-FAULTS",     "perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS",
};

size_t ompf_auto_tracepoint_candidates(const char *const **names)
{
    *names = tracepoints;
    return sizeof tracepoints / sizeof *tracepoints;
}

size_t ompf_auto_software_candidates(const char *const **names)
{
    *names = software;
    return sizeof software / sizeof *software;
}

typedef struct func {
    char *name;
    uint64_t lo, hi;
} func_t;

typedef struct cand {
    size_t func;
    uint64_t addr;
    int line;
    const char *file;
    size_t seq; /* order found: of one address, the first found is kept */
} cand_t;

/* Functions of the program worth probing: everything defined with a size
 * except main (its lines run before and after the parallel regions) and
 * the C runtime's start-up code. */
static int wanted_func(const char *n)
{
    static const char *const skip[] = {"main", "frame_dummy", "register_tm_clones",
                                       "deregister_tm_clones"};
    if (!n[0] || n[0] == '_')
        return 0;
    for (size_t i = 0; i < sizeof skip / sizeof *skip; i++)
        if (!strcmp(n, skip[i]))
            return 0;
    return 1;
}

static int read_funcs(Elf *elf, func_t **out, size_t *n)
{
    Elf_Scn *scn = NULL;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t count = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; d && i < count; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
                !s.st_size || s.st_shndx == SHN_UNDEF)
                continue;
            const char *nm = elf_strptr(elf, sh.sh_link, s.st_name);
            if (!nm || !wanted_func(nm))
                continue;
            if (*n == cap) {
                cap = cap ? 2 * cap : 32;
                func_t *g = realloc(*out, cap * sizeof *g);
                if (!g)
                    return -1;
                *out = g;
            }
            (*out)[*n].name = strdup(nm);
            (*out)[*n].lo = s.st_value;
            (*out)[*n].hi = s.st_value + s.st_size;
            if (!(*out)[(*n)++].name)
                return -1;
        }
    }
    return 0;
}

/* Every statement address of a line, not only its first: an optimised
 * loop's line has one address in the preheader (run once per loop) and
 * others in the body (run once per iteration), and often a vectorised
 * copy never run at all.  Which of them is worth probing only the pilots
 * tell. */
static int add_line(cand_t **c, size_t *n, size_t *cap, size_t f, uint64_t a, int line,
                    const char *file)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        cand_t *g = realloc(*c, *cap * sizeof *g);
        if (!g)
            return -1;
        *c = g;
    }
    (*c)[*n] = (cand_t){f, a, line, file, *n};
    (*n)++;
    return 0;
}

/* Regions first (seq 0), then by address. */
static int by_region(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Outlined parallel regions and task entries: the code that runs in XUs. */
static int in_region(const char *name)
{
    return strstr(name, ".omp_outlined") || strstr(name, "omp_task_entry");
}

/* The k-th of take candidates from c[0..nc), of which the first np are in
 * regions: all of those first (evenly spread if they alone are too many),
 * then the rest evenly spread over the slots left. */
static size_t pick(size_t k, size_t take, size_t np, size_t nc)
{
    if (take >= nc)
        return k;
    if (np >= take)
        return k * np / take;
    if (k < np)
        return k;
    return np + (k - np) * (nc - np) / (take - np);
}

static int by_addr(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Does the kernel emulate the x86-64 instruction at b (n bytes) when a
 * uprobe hits it, instead of single-stepping a copy?  (arch/x86/kernel/
 * uprobes.c: jmp rel8/rel32, jcc rel8/rel32, call rel32, nop, push of a
 * register; legacy prefixes before a nop.)  A single-stepped hit costs two
 * traps (and on a VM two exits); an emulated one, one. */
int ompf__auto_emulated(const unsigned char *b, size_t n)
{
    size_t i = 0;
    while (i < n && (b[i] == 0x66 || b[i] == 0xf3 || b[i] == 0xf2) && i + 1 < n &&
           b[i + 1] == 0x90)
        i++; /* prefix + nop */
    if (i >= n)
        return 0;
    unsigned char op = b[i];
    if (op == 0x90 || op == 0xeb || op == 0xe9 || op == 0xe8 || (op >= 0x70 && op <= 0x7f) ||
        (op >= 0x50 && op <= 0x57))
        return 1;
    if (op == 0x0f && i + 1 < n && b[i + 1] >= 0x80 && b[i + 1] <= 0x8f)
        return 1; /* jcc rel32 */
    if (op == 0x41 && i + 1 < n && b[i + 1] >= 0x50 && b[i + 1] <= 0x57)
        return 1; /* push r8..r15 */
    return 0;
}

/* The first bytes of the instruction at addr, from its executable section. */
static size_t insn_at(Elf *elf, uint64_t addr, unsigned char *b, size_t n)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
            !(sh.sh_flags & SHF_EXECINSTR) || addr < sh.sh_addr || addr >= sh.sh_addr + sh.sh_size)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t at = (size_t)(addr - sh.sh_addr);
        if (!d || !d->d_buf || at >= d->d_size)
            return 0;
        size_t m = d->d_size - at < n ? d->d_size - at : n;
        memcpy(b, (const unsigned char *)d->d_buf + at, m);
        return m;
    }
    return 0;
}

int ompf_auto_uprobe_candidates(const char *binary, size_t max, char ***names,
                                char ***where, unsigned char **emulated, size_t *n,
                                ompf_error_t *err)
{
    if (emulated)
        *emulated = NULL;
    *names = *where = NULL;
    *n = 0;
    int fd = open(binary, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ompf_error_set(err, OMPF_EIO, "cannot open %s: %s", binary, strerror(errno));
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
    func_t *fn = NULL;
    size_t nfn = 0, nc = 0, cap = 0;
    cand_t *c = NULL;
    int rc = 0;
    if (!elf || read_funcs(elf, &fn, &nfn)) {
        rc = ompf_error_set(err, OMPF_EINVAL, "%s: not a readable ELF file", binary);
        goto out;
    }
    if (!dw) {
        rc = ompf_error_set(err, OMPF_EINVAL,
                            "%s has no DWARF line table: build it with -g to let "
                            "--events auto probe its source lines", binary);
        goto out;
    }
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (rc == 0 && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        Dwarf_Lines *lines;
        size_t nl = 0;
        if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &nl) == 0) {
            for (size_t i = 0; i < nl && rc == 0; i++) {
                Dwarf_Line *l = dwarf_onesrcline(lines, i);
                Dwarf_Addr a;
                int line;
                bool stmt = false, end = false;
                if (!l || dwarf_lineaddr(l, &a) || dwarf_lineno(l, &line) ||
                    dwarf_linebeginstatement(l, &stmt) || dwarf_lineendsequence(l, &end) ||
                    !stmt || end || line <= 0)
                    continue;
                const char *file = dwarf_linesrc(l, NULL, NULL);
                for (size_t f = 0; f < nfn; f++)
                    if (a >= fn[f].lo && a < fn[f].hi) {
                        const char *b = file ? strrchr(file, '/') : NULL;
                        if (add_line(&c, &nc, &cap, f, a, line, b ? b + 1 : file ? file : "?"))
                            rc = OMPF_ENOMEM;
                        break;
                    }
            }
        }
        off = next;
    }
    if (rc == 0 && nc == 0)
        rc = ompf_error_set(err, OMPF_ENOTFOUND,
                            "%s: no source line of a function other than main to probe "
                            "(is it built with -g and not stripped?)", binary);
    if (rc)
        goto out;
    /* sorted by address; of one address (several line-table rows), the
     * row found first: one pass, not a search per row */
    qsort(c, nc, sizeof *c, by_addr);
    size_t u = 0;
    for (size_t k = 0; k < nc; k++)
        if (!u || c[k].addr != c[u - 1].addr)
            c[u++] = c[k];
    nc = u;
    /* the code of parallel regions and tasks first (their outlined
     * functions), then the rest spread evenly over what is left: in MG the
     * serial set-up functions hold as many lines as all its loops */
    size_t np = 0;
    for (size_t k = 0; k < nc; k++) {
        c[k].seq = !in_region(fn[c[k].func].name); /* seq has served its purpose */
        np += !c[k].seq;
    }
    qsort(c, nc, sizeof *c, by_region);
    size_t take = nc < max ? nc : max;
    *names = calloc(take + 1, sizeof **names);
    *where = calloc(take + 1, sizeof **where);
    if (emulated)
        *emulated = calloc(take + 1, 1);
    if (!*names || !*where || (emulated && !*emulated)) {
        rc = OMPF_ENOMEM;
        goto out;
    }
    *n = take; /* on failure every slot is freed (calloc'd: NULL or owned) */
    for (size_t k = 0; k < take; k++) {
        /* evenly spread when there are more lines than wanted */
        const cand_t *x = &c[pick(k, take, np, nc)];
        char buf[4096];
        snprintf(buf, sizeof buf, "uprobe:%s:%s+0x%llx", binary, fn[x->func].name,
                 (unsigned long long)(x->addr - fn[x->func].lo));
        (*names)[k] = strdup(buf);
        snprintf(buf, sizeof buf, "%s:%d %s", x->file, x->line, fn[x->func].name);
        (*where)[k] = strdup(buf);
        unsigned char insn[4];
        size_t got = insn_at(elf, x->addr, insn, sizeof insn);
        if (emulated)
            (*emulated)[k] = (unsigned char)ompf__auto_emulated(insn, got);
        if (!(*names)[k] || !(*where)[k]) {
            rc = OMPF_ENOMEM;
            goto out;
        }
    }
out:
    if (rc) {
        ompf_auto_free_list(*names, *n);
        ompf_auto_free_list(*where, *n);
        *names = *where = NULL;
        if (emulated) {
            free(*emulated);
            *emulated = NULL;
        }
        *n = 0;
    }
    for (size_t f = 0; f < nfn; f++)
        free(fn[f].name);
    free(fn);
    free(c);
    if (dw)
        dwarf_end(dw);
    if (elf)
        elf_end(elf);
    close(fd);
    return rc;
}

void ompf_auto_free_list(char **names, size_t n)
{
    if (!names)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
