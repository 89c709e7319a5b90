/* ELF64 header and section reading (include/ompfuse/elf.h). */
#include "ompfuse/elf.h"

#include <stdlib.h>
#include <string.h>

int ompf_elf_read_at(FILE *f, long off, void *buf, size_t n)
{
    return fseek(f, off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n ? 0 : -1;
}

int ompf_elf_sections(FILE *f, Elf64_Ehdr *eh, Elf64_Shdr **sh)
{
    *sh = NULL;
    if (ompf_elf_read_at(f, 0, eh, sizeof *eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shnum == 0 || eh->e_shnum > 4096)
        return -1;
    Elf64_Shdr *s = calloc(eh->e_shnum, sizeof *s);
    if (!s || ompf_elf_read_at(f, (long)eh->e_shoff, s, eh->e_shnum * sizeof *s)) {
        free(s);
        return -1;
    }
    *sh = s;
    return 0;
}

int ompf_elf_linked(FILE *f, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, size_t i, size_t max,
                    void **data, char **str, size_t *strsize)
{
    *data = NULL;
    *str = NULL;
    if (sh[i].sh_link >= eh->e_shnum)
        return -1;
    const Elf64_Shdr *st = &sh[sh[i].sh_link];
    if (sh[i].sh_size > max || st->sh_size > max)
        return -1;
    void *d = malloc(sh[i].sh_size + 1);
    char *s = malloc(st->sh_size + 1);
    if (!d || !s || ompf_elf_read_at(f, (long)sh[i].sh_offset, d, sh[i].sh_size) ||
        ompf_elf_read_at(f, (long)st->sh_offset, s, st->sh_size)) {
        free(d);
        free(s);
        return -1;
    }
    s[st->sh_size] = '\0';
    *data = d;
    *str = s;
    *strsize = st->sh_size;
    return 0;
}
