/* Which libraries a program needs (ELF DT_NEEDED), and finding programs on
 * PATH: used to detect gcc/libgomp binaries (the libgomp route of
 * docs/semantics.md, OpenMP runtime). */
#include "ompfuse/campaign.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ompfuse/elf.h"
#include "ompfuse/file.h"

int ompf_elf_needs(const char *path, const char *lib)
{
    if (!path || !lib)
        return OMPF_EINVAL;
    FILE *f = NULL;
    if (ompf_fopen_input(path, "program", &f, NULL)) /* never blocks on a FIFO */
        return OMPF_EIO;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh;
    int rc = OMPF_EFORMAT;
    if (ompf_elf_sections(f, &eh, &sh))
        goto out;
    rc = 0;
    for (size_t i = 0; i < eh.e_shnum && rc == 0; i++) {
        void *data;
        char *strtab;
        size_t strsize;
        if (sh[i].sh_type != SHT_DYNAMIC ||
            ompf_elf_linked(f, &eh, sh, i, (size_t)1 << 24, &data, &strtab, &strsize))
            continue;
        const Elf64_Dyn *dyn = data;
        size_t nd = sh[i].sh_size / sizeof *dyn;
        for (size_t k = 0; k < nd && dyn[k].d_tag != DT_NULL; k++)
            if (dyn[k].d_tag == DT_NEEDED && dyn[k].d_un.d_val < strsize &&
                !strncmp(strtab + dyn[k].d_un.d_val, lib, strlen(lib)))
                rc = 1;
        free(data);
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
