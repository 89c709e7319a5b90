/* exec, _exit, signal-handler and descriptor hooks (docs/tool.md, "Fatal
 * endings" and "Descriptors").
 *
 * The tool is loaded by libomp with dlopen (OMP_TOOL_LIBRARIES), local
 * scope: functions it defines do not interpose on the program's calls, so
 * defining execve here would do nothing.  Instead, once at start, the
 * program's and its libraries' GOT entries (PLT slots and data references)
 * for the exec family, _exit, sigaction, signal, close, close_range,
 * closefrom, dup2 and dup3 are pointed at the wrappers
 * below.  Modules loaded later (dlopen after the first OpenMP construct),
 * calls from inside libc (posix_spawn, system) and direct syscalls are not
 * seen.  ELF64 RELA only (x86-64, aarch64). */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ompfuse/pfd.h"
#include "tool.h"

/* ---- exec: finish the profile first ------------------------------------ */

/* An exec that cannot find its file fails and the program goes on (a
 * launcher trying candidates): do not end the profile for it.  Other
 * failures (ENOEXEC, E2BIG...) are found out only by trying. */
static int findable(const char *file, int search)
{
    if (!file || !*file)
        return 0;
    if (!search || strchr(file, '/'))
        return access(file, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    char buf[4096];
    for (const char *p = path;; p++) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int w = snprintf(buf, sizeof buf, "%.*s%s%s", (int)n, p, n ? "/" : "", file);
        if (w > 0 && (size_t)w < sizeof buf && access(buf, X_OK) == 0)
            return 1;
        if (!e)
            return 0;
        p = e;
    }
}

static void before_exec(const char *file, int search)
{
    if (findable(file, search))
        ft_finalize_now();
}

static int exec_failed(void)
{
    int e = errno;
    if (getpid() == ft_g.pid && !ft_g.active)
        ft_warn_once("exec-failed",
                     "warning: exec failed (%s) after the profile was finished for it; "
                     "the rest of the run is not recorded",
                     strerror(e));
    errno = e;
    return -1;
}

static int h_execve(const char *path, char *const argv[], char *const envp[])
{
    before_exec(path, 0);
    execve(path, argv, envp);
    return exec_failed();
}

static int h_execv(const char *path, char *const argv[])
{
    before_exec(path, 0);
    execv(path, argv);
    return exec_failed();
}

static int h_execvp(const char *file, char *const argv[])
{
    before_exec(file, 1);
    execvp(file, argv);
    return exec_failed();
}

static int h_execvpe(const char *file, char *const argv[], char *const envp[])
{
    before_exec(file, 1);
    execvpe(file, argv, envp);
    return exec_failed();
}

static int h_fexecve(int fd, char *const argv[], char *const envp[])
{
    ft_finalize_now(); /* a descriptor: nothing to look up */
    fexecve(fd, argv, envp);
    return exec_failed();
}

/* execl, execlp, execle: the arguments up to NULL (and envp after it,
 * when want_envp). */
#define ARGV_FROM_VA(arg0, argv, envp_out, want_envp)                       \
    size_t n_ = 1;                                                          \
    va_list ap_;                                                            \
    va_start(ap_, arg0);                                                    \
    while (va_arg(ap_, char *))                                             \
        n_++;                                                               \
    va_end(ap_);                                                            \
    char *argv[n_ + 1];                                                     \
    argv[0] = (char *)(arg0);                                               \
    va_start(ap_, arg0);                                                    \
    for (size_t i_ = 1; i_ <= n_; i_++)                                     \
        argv[i_] = va_arg(ap_, char *);                                     \
    envp_out = (want_envp) ? va_arg(ap_, char *const *) : NULL;             \
    va_end(ap_)

static int h_execl(const char *path, const char *arg, ...)
{
    char *const *envp;
    ARGV_FROM_VA(arg, argv, envp, 0);
    (void)envp;
    return h_execv(path, argv);
}

static int h_execlp(const char *file, const char *arg, ...)
{
    char *const *envp;
    ARGV_FROM_VA(arg, argv, envp, 0);
    (void)envp;
    return h_execvp(file, argv);
}

static int h_execle(const char *path, const char *arg, ...)
{
    char *const *envp;
    ARGV_FROM_VA(arg, argv, envp, 1);
    return h_execve(path, argv, envp);
}

/* ---- _exit: no atexit handlers run, so save the buffers as a fatal
 * signal would (async-signal-safe: _exit is called from handlers) ----- */

__attribute__((noreturn)) static void h__exit(int status)
{
    ft_salvage("ompfuse: _exit");
    _exit(status);
}

__attribute__((noreturn)) static void h__Exit(int status)
{
    ft_salvage("ompfuse: _Exit");
    _Exit(status);
}

/* ---- sigaction / signal: the tool's fatal handlers stay installed -------- */

static int h_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (ft_fatal_sigaction(sig, act, old))
        return 0;
    return sigaction(sig, act, old);
}

typedef void (*ft_sighandler_t)(int);

static ft_sighandler_t h_signal(int sig, ft_sighandler_t h)
{
    /* glibc's signal(): BSD semantics */
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, sig);
    sa.sa_flags = SA_RESTART;
    if (h == SIG_ERR || !ft_fatal_sigaction(sig, &sa, &old))
        return signal(sig, h);
    return old.sa_handler;
}

/* ---- descriptors: the tool's counters stay the tool's ------------------ */

/* close of a counter descriptor: it stays open and the program is told
 * it closed (its number is above the program's usual range, and a later
 * dup2/dup3 onto it moves it away first). */
static int h_close(int fd)
{
    if (ompf_pfd_owned(fd))
        return 0;
    return close(fd);
}

/* close_range/closefrom: the program's numbers in [lo, hi] are closed,
 * the tool's skipped, by closing the pieces between them. */
static int close_pieces(unsigned lo, unsigned hi, int flags)
{
    unsigned from = lo;
    for (unsigned fd = lo; fd < OMPF_PFD_MAX && fd <= hi; fd++) {
        if (!ompf_pfd_owned((int)fd))
            continue;
        if (fd > from && close_range(from, fd - 1, flags) != 0)
            return -1;
        from = fd + 1;
    }
    if (from > hi)
        return 0;
    return close_range(from, hi, flags);
}

static int h_close_range(unsigned lo, unsigned hi, int flags)
{
    if ((flags & CLOSE_RANGE_CLOEXEC) || lo > hi)
        return close_range(lo, hi, flags); /* ours are CLOEXEC anyway */
    return close_pieces(lo, hi, flags);
}

static void h_closefrom(int lo)
{
    if (lo < 0)
        lo = 0;
    /* glibc's closefrom falls back to /proc/self/fd when close_range is
     * not there; the kernels the tool supports have it */
    if (close_pieces((unsigned)lo, ~0u, 0) != 0)
        closefrom(lo);
}

/* dup2/dup3 onto a counter descriptor: the program gets its number; the
 * counter is first moved to another one (ompf_pfd_take), and its thread
 * reads it there.  If it cannot be moved the thread's values from then
 * on are missing.  Failing the call (EBUSY) would change the program. */
static int h_dup2(int from, int to)
{
    if (from != to && ompf_pfd_owned(to))
        ompf_pfd_take(to);
    return dup2(from, to);
}

static int h_dup3(int from, int to, int flags)
{
    if (from != to && ompf_pfd_owned(to))
        ompf_pfd_take(to);
    return dup3(from, to, flags);
}

/* ---- GOT patching ------------------------------------------------------- */

static const struct {
    const char *name;
    void *fn;
} hooks[] = {
    {"execve", (void *)h_execve},   {"execv", (void *)h_execv},
    {"execvp", (void *)h_execvp},   {"execvpe", (void *)h_execvpe},
    {"execl", (void *)h_execl},     {"execlp", (void *)h_execlp},
    {"execle", (void *)h_execle},   {"fexecve", (void *)h_fexecve},
    {"sigaction", (void *)h_sigaction}, {"signal", (void *)h_signal},
    {"_exit", (void *)h__exit},     {"_Exit", (void *)h__Exit},
    {"close", (void *)h_close},     {"close_range", (void *)h_close_range},
    {"closefrom", (void *)h_closefrom}, {"dup2", (void *)h_dup2},
    {"dup3", (void *)h_dup3},
};
#define NHOOKS (sizeof hooks / sizeof *hooks)

#if defined(__x86_64__)
#define FT_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define FT_R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define FT_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define FT_R_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

#ifdef FT_R_JUMP_SLOT
typedef struct module {
    ElfW(Addr) base, relro, relro_end;
    const ElfW(Sym) *symtab;
    const char *strtab;
    unsigned patched;
} module_t;

static void patch_slot(module_t *m, void **slot, void *fn)
{
    if (*slot == fn)
        return;
    uintptr_t a = (uintptr_t)slot;
    int ro = a >= m->relro && a < m->relro_end;
    long pg = sysconf(_SC_PAGESIZE);
    void *page = (void *)(a & ~(uintptr_t)(pg - 1));
    if (ro && mprotect(page, (size_t)pg, PROT_READ | PROT_WRITE) != 0)
        return;
    *slot = fn;
    m->patched++;
    if (ro)
        mprotect(page, (size_t)pg, PROT_READ);
}

static void patch_relocs(module_t *m, const ElfW(Rela) *r, size_t bytes)
{
    for (size_t i = 0; i < bytes / sizeof *r; i++) {
        unsigned long type = ELF64_R_TYPE(r[i].r_info);
        if (type != FT_R_JUMP_SLOT && type != FT_R_GLOB_DAT)
            continue;
        const char *name = m->strtab + m->symtab[ELF64_R_SYM(r[i].r_info)].st_name;
        for (size_t h = 0; h < NHOOKS; h++)
            if (strcmp(name, hooks[h].name) == 0)
                patch_slot(m, (void **)(m->base + r[i].r_offset), hooks[h].fn);
    }
}

/* Modules whose calls must reach the real functions: this tool, the
 * loader, libc (its own exec/sigaction users), the vDSO, sanitizer
 * runtimes (their interceptors call through to libc). */
static int skipped(const char *name, ElfW(Addr) base, ElfW(Addr) self)
{
    if (base == self)
        return 1;
    static const char *const skip[] = {"linux-vdso", "linux-gate", "/ld-linux", "/libc.so",
                                       "libclang_rt", "/libasan", "/libubsan"};
    for (size_t i = 0; i < sizeof skip / sizeof *skip; i++)
        if (strstr(name, skip[i]))
            return 1;
    return 0;
}

static int patch_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    unsigned *total = arg;
    Dl_info me;
    ElfW(Addr) self = dladdr((void *)patch_module, &me) ? (ElfW(Addr))me.dli_fbase : 0;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    module_t m = {.base = info->dlpi_addr};
    /* a shared object's bias is its load address, dli_fbase */
    if (skipped(name, m.base, self))
        return 0;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(m.base + ph->p_vaddr);
        else if (ph->p_type == PT_GNU_RELRO) {
            m.relro = m.base + ph->p_vaddr;
            m.relro_end = m.relro + ph->p_memsz;
        }
    }
    if (!dyn)
        return 0;
    ElfW(Addr) jmprel = 0, rela = 0;
    size_t pltsz = 0, relasz = 0;
    long pltrel = DT_RELA;
    /* the loader relocates these d_ptr in place for most modules; an
     * unrelocated one is below the base */
#define FIX(v) ((ElfW(Addr))(v) < m.base ? (ElfW(Addr))(v) + m.base : (ElfW(Addr))(v))
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: m.symtab = (const ElfW(Sym) *)FIX(d->d_un.d_ptr); break;
        case DT_STRTAB: m.strtab = (const char *)FIX(d->d_un.d_ptr); break;
        case DT_JMPREL: jmprel = FIX(d->d_un.d_ptr); break;
        case DT_PLTRELSZ: pltsz = d->d_un.d_val; break;
        case DT_RELA: rela = FIX(d->d_un.d_ptr); break;
        case DT_RELASZ: relasz = d->d_un.d_val; break;
        case DT_PLTREL: pltrel = (long)d->d_un.d_val; break;
        default: break;
        }
    }
#undef FIX
    if (!m.symtab || !m.strtab)
        return 0;
    if (jmprel && pltrel == DT_RELA)
        patch_relocs(&m, (const ElfW(Rela) *)jmprel, pltsz);
    if (rela)
        patch_relocs(&m, (const ElfW(Rela) *)rela, relasz);
    *total += m.patched;
    return 0;
}
#endif

void ft_hooks_install(void)
{
#ifdef FT_R_JUMP_SLOT
    unsigned total = 0;
    dl_iterate_phdr(patch_module, &total);
    ft_verbose("exec/signal/descriptor hooks: %u GOT entries redirected",
               total);
#else
    ft_verbose("exec/signal/descriptor hooks: not supported on this "
               "architecture");
#endif
}
