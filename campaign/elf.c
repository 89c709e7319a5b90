/* Which libraries a program needs (ELF DT_NEEDED), and finding programs on
 * PATH: used to detect gcc/libgomp binaries (the libgomp route of
 * docs/semantics.md, OpenMP runtime). */
#include "ompfuse/campaign.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ompfuse/file.h"

static int read_at(FILE *f, long off, void *buf, size_t n)
{
    return fseek(f, off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n ? 0 : -1;
}

int ompf_elf_needs(const char *path, const char *lib)
{
    if (!path || !lib)
        return OMPF_EINVAL;
    FILE *f = NULL;
    if (ompf_fopen_input(path, "program", &f, NULL)) /* never blocks on a FIFO */
        return OMPF_EIO;
    Elf64_Ehdr eh;
    int rc = OMPF_EFORMAT;
    if (read_at(f, 0, &eh, sizeof eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_shnum == 0 || eh.e_shnum > 4096)
        goto out;
    Elf64_Shdr *sh = calloc(eh.e_shnum, sizeof *sh);
    if (!sh) {
        rc = OMPF_ENOMEM;
        goto out;
    }
    if (read_at(f, (long)eh.e_shoff, sh, eh.e_shnum * sizeof *sh)) {
        free(sh);
        goto out;
    }
    rc = 0;
    for (size_t i = 0; i < eh.e_shnum && rc == 0; i++) {
        if (sh[i].sh_type != SHT_DYNAMIC || sh[i].sh_link >= eh.e_shnum)
            continue;
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        if (sh[i].sh_size > (1u << 24) || str->sh_size > (1u << 24))
            continue;
        Elf64_Dyn *dyn = malloc(sh[i].sh_size + 1);
        char *strtab = malloc(str->sh_size + 1);
        if (dyn && strtab && !read_at(f, (long)sh[i].sh_offset, dyn, sh[i].sh_size) &&
            !read_at(f, (long)str->sh_offset, strtab, str->sh_size)) {
            strtab[str->sh_size] = '\0';
            size_t nd = sh[i].sh_size / sizeof *dyn;
            for (size_t k = 0; k < nd && dyn[k].d_tag != DT_NULL; k++)
                if (dyn[k].d_tag == DT_NEEDED && dyn[k].d_un.d_val < str->sh_size &&
                    !strncmp(strtab + dyn[k].d_un.d_val, lib, strlen(lib)))
                    rc = 1;
        }
        free(dyn);
        free(strtab);
    }
    free(sh);
out:
    fclose(f);
    return rc;
}

int ompf_find_program(const char *name, char *buf, size_t len)
{
    if (!name || !*name || !buf || !len)
        return OMPF_EINVAL;
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0)
            return OMPF_ENOTFOUND;
        snprintf(buf, len, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *c = strchr(path, ':');
        size_t dl = c ? (size_t)(c - path) : strlen(path);
        if (dl)
            snprintf(buf, len, "%.*s/%s", (int)dl, path, name);
        else
            snprintf(buf, len, "./%s", name);
        if (access(buf, X_OK) == 0)
            return 0;
        if (!c)
            break;
        path = c + 1;
    }
    return OMPF_ENOTFOUND;
}
