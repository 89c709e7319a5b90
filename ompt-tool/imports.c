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

/* glibc relocates the dynamic section's pointers in place unless it is
 * read-only; a pointer below the load base is still an offset. */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
    return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

static int names_runtime(const char *s)
{
    return !strncmp(s, "libomp", 6) || !strncmp(s, "libiomp", 7) ||
           !strncmp(s, "libgomp", 7);
}

static int refers(const ElfW(Rela) *r, size_t bytes, const ElfW(Sym) *sym,
                  const char *str)
{
    for (size_t i = 0; i < bytes / sizeof *r; i++) {
        size_t k = ELF_RSYM(r[i].r_info);
        for (size_t e = 0; k && e < sizeof entries / sizeof *entries; e++)
            if (!strncmp(str + sym[k].st_name, entries[e], strlen(entries[e])))
                return 1;
    }
    return 0;
}

static int scan_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    scan_t *s = data;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        if (ph->p_type == PT_LOAD && ph->p_offset == 0) {
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            if (a == s->skip[0] || a == s->skip[1])
                return 0;
        }
    }
    if (!dyn)
        return 0;
    uintptr_t str = 0, sym = 0, jmprel = 0, rela = 0;
    size_t pltsz = 0, relasz = 0;
    int pltrela = 1, rel = 0, needs = !info->dlpi_name || !*info->dlpi_name;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
        switch (d->d_tag) {
        case DT_STRTAB: str = dyn_ptr(info, d->d_un.d_ptr); break;
        case DT_SYMTAB: sym = dyn_ptr(info, d->d_un.d_ptr); break;
        case DT_JMPREL: jmprel = dyn_ptr(info, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: pltsz = d->d_un.d_val; break;
        case DT_PLTREL: pltrela = d->d_un.d_val == DT_RELA; break;
        case DT_RELA: rela = dyn_ptr(info, d->d_un.d_ptr); break;
        case DT_RELASZ: relasz = d->d_un.d_val; break;
        case DT_REL: rel = 1; break;
        default: break;
        }
    if (!str || !sym)
        return 0;
    /* only modules that name the runtime (and the program) can call it:
     * skips the scan of large libraries that have nothing to do with it */
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL && !needs; d++)
        if (d->d_tag == DT_NEEDED && names_runtime((const char *)str + d->d_un.d_val))
            needs = 1;
    if (!needs)
        return 0;
    const ElfW(Sym) *st = (const ElfW(Sym) *)sym;
    const char *strs = (const char *)str;
    if (rel || !pltrela) /* REL tables (32-bit ABIs): not read, assume yes */
        s->found = 1;
    else if ((jmprel && refers((const ElfW(Rela) *)jmprel, pltsz, st, strs)) ||
             (rela && refers((const ElfW(Rela) *)rela, relasz, st, strs)))
        s->found = 1;
    return s->found;
}

int ft_imports_taskloop(uintptr_t omp_base, uintptr_t self_base)
{
    scan_t s = {{omp_base, self_base}, 0};
    dl_iterate_phdr(scan_module, &s);
    return s.found;
}
