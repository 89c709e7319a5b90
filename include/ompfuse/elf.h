/* Reading ELF64 files by hand, shared by the uprobe encoder (symbol file
 * offsets, counters/sources.c) and the libgomp route (DT_NEEDED,
 * campaign/elf.c).  By hand, not libelf: libompfcounters is linked into the
 * OMPT tool, which loads into every profiled program. */
#ifndef OMPF_ELF_H
#define OMPF_ELF_H

#include <elf.h>
#include <stddef.h>
#include <stdio.h>

/* The ELF64 header of f and its section headers (*sh, malloc'd, eh->e_shnum
 * of them, at most 4096): 0, or -1 when f is no ELF64 file this reads (*sh
 * NULL). */
int ompf_elf_sections(FILE *f, Elf64_Ehdr *eh, Elf64_Shdr **sh);

/* Section i of sh and the string table it links (sh_link), each at most
 * max bytes, both malloc'd, the strings NUL-terminated after *strsize
 * bytes: 0, or -1 (nothing to free). */
int ompf_elf_linked(FILE *f, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, size_t i, size_t max,
                    void **data, char **str, size_t *strsize);

/* n bytes at offset off of f into buf: 0 or -1. */
int ompf_elf_read_at(FILE *f, long off, void *buf, size_t n);

#endif
