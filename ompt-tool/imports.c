/* Does a loaded module call the OpenMP runtime's taskloop?  Answered from
 * the modules' dynamic relocations, without reading a file.
 *
 * Why: naming a taskloop needs the user's return address from the stack
 * (libomp reports an address of its own), and glibc's backtrace() loads
 * libgcc_s on first use, 0.5-1 ms on this VM: too much for every run's
 * start-up, and unsafe inside a callback (a dlopen there can deadlock
 * against a program that is itself inside dlopen).  So the unwinder is
 * loaded at start-up only when a module can reach taskloop. */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "tool.h"

#if __ELF_NATIVE_CLASS == 64
#define ELF_RSYM(i) ELF64_R_SYM(i)
#else
#define ELF_RSYM(i) ELF32_R_SYM(i)
#endif

typedef struct scan {
    uintptr_t skip[2]; /* libomp and this tool: their own references */
    int found;
} scan_t;

/* libomp's own entry and its GNU-compatible one (gcc-built programs) */
static const char *const entries[] = {"__kmpc_taskloop", "GOMP_taskloop"};

/* The module's span [lo, hi) as link-time addresses (its PT_LOAD
 * segments), and whether its dynamic section is writable. */
typedef struct span {
    uintptr_t lo, hi;
    int dyn_writable;
} span_t;

/* glibc rewrites the dynamic section's pointers into addresses when the
 * section is writable and the module not at its link address; elsewhere
 * (read-only sections, the vdso, other ABIs) they stay link-time
 * addresses.  Which one p is: the one that falls inside the module; when
 * both could, the section's writability decides; when neither, 0 (the
 * module is skipped). */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, const span_t *sp, ElfW(Addr) p)
{
    uintptr_t rel = (uintptr_t)p - info->dlpi_addr; /* as a link address */
    int absolute = rel >= sp->lo && rel < sp->hi;
    int linked = p >= sp->lo && p < sp->hi;
    if (absolute && (!linked || sp->dyn_writable || !info->dlpi_addr))
        return (uintptr_t)p;
    if (linked)
        return info->dlpi_addr + (uintptr_t)p;
    return 0;
}

static int names_runtime(const char *s)
{
    return !strncmp(s, "libomp", 6) || !strncmp(s, "libiomp", 7) ||
           !strncmp(s, "libgomp", 7);
}

static int refers(const ElfW(Rela) *r, size_t bytes, size_t skip, const ElfW(Sym) *sym,
                  const char *str)
{
    for (size_t i = skip; i < bytes / sizeof *r; i++) {
        size_t k = ELF_RSYM(r[i].r_info);
        if (!k)
            continue;
        const char *name = str + sym[k].st_name;
        /* most names fail here (C++ names start "_Z") */
        if (!(name[0] == '_' && name[1] == '_') && !(name[0] == 'G' && name[1] == 'O'))
            continue;
        for (size_t e = 0; e < sizeof entries / sizeof *entries; e++)
            if (!strncmp(name, entries[e], strlen(entries[e])))
                return 1;
    }
    return 0;
}

static int scan_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    scan_t *s = data;
    const ElfW(Dyn) *dyn = NULL;
    span_t sp = {UINTPTR_MAX, 0, 0};
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
            sp.dyn_writable = (ph->p_flags & PF_W) != 0;
        }
        if (ph->p_type == PT_LOAD) {
            if (ph->p_offset == 0) {
                uintptr_t a = info->dlpi_addr + ph->p_vaddr;
                if (a == s->skip[0] || a == s->skip[1])
                    return 0;
            }
            if (ph->p_vaddr < sp.lo)
                sp.lo = ph->p_vaddr;
            if (ph->p_vaddr + ph->p_memsz > sp.hi)
                sp.hi = ph->p_vaddr + ph->p_memsz;
        }
    }
    if (!dyn || sp.lo >= sp.hi)
        return 0;
    uintptr_t str = 0, sym = 0, jmprel = 0, rela = 0;
    size_t pltsz = 0, relasz = 0, relacount = 0;
    int pltrela = 1, rel = 0;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
        switch (d->d_tag) {
        case DT_STRTAB: str = dyn_ptr(info, &sp, d->d_un.d_ptr); break;
        case DT_SYMTAB: sym = dyn_ptr(info, &sp, d->d_un.d_ptr); break;
        case DT_JMPREL: jmprel = dyn_ptr(info, &sp, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: pltsz = d->d_un.d_val; break;
        case DT_PLTREL: pltrela = d->d_un.d_val == DT_RELA; break;
        case DT_RELA: rela = dyn_ptr(info, &sp, d->d_un.d_ptr); break;
        case DT_RELASZ: relasz = d->d_un.d_val; break;
        case DT_RELACOUNT: relacount = d->d_un.d_val; break; /* relative: no symbol */
        case DT_REL: rel = 1; break;
        default: break;
        }
    if (!str || !sym)
        return 0;
    const ElfW(Sym) *st = (const ElfW(Sym) *)sym;
    const char *strs = (const char *)str;
    /* Calls through the PLT are read in every module (a library built with
     * -fopenmp but linked without the runtime still calls it); the other
     * symbol relocations (-fno-plt) only in the program and in modules
     * that name a runtime as a dependency: in a C++ library they are
     * thousands, 0.1-0.2 ms of start-up. */
    int needs = !info->dlpi_name || !*info->dlpi_name;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL && !needs; d++)
        if (d->d_tag == DT_NEEDED && names_runtime(strs + d->d_un.d_val))
            needs = 1;
    if (rel || !pltrela) /* REL tables (32-bit ABIs): not read, assume yes */
        s->found = 1;
    else if ((jmprel && refers((const ElfW(Rela) *)jmprel, pltsz, 0, st, strs)) ||
             (needs && rela &&
              refers((const ElfW(Rela) *)rela, relasz, relacount, st, strs)))
        s->found = 1;
    return s->found;
}

int ft_imports_taskloop(uintptr_t omp_base, uintptr_t self_base)
{
    scan_t s = {{omp_base, self_base}, 0};
    dl_iterate_phdr(scan_module, &s);
    return s.found;
}
