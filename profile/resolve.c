/* In-process file:line and function resolution of constructs with
 * elfutils' libdw: one Dwfl session per module for all its unresolved
 * constructs, no child process.  See ompf_resolve_constructs in
 * include/ompfuse/file.h and the construct key in docs/format.md. */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ompfuse/file.h"

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/* The hex build-id of mod, or "" when it has none. */
static void build_id_hex(Dwfl_Module *mod, char *buf, size_t len)
{
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &bits, &vaddr);
    buf[0] = 0;
    for (int i = 0; i > -1 && i < n && (size_t)(2 * i + 2) < len; i++)
        snprintf(buf + 2 * i, 3, "%02x", bits[i]);
}

/* The tool records offsets from the module's load base (dladdr's
 * dli_fbase: the page of the first loadable segment), so the ELF address
 * is offset + that page's vaddr (0 for shared objects and PIEs). */
static GElf_Addr first_load_page(Elf *elf)
{
    size_t n;
    if (!elf || elf_getphdrnum(elf, &n))
        return 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
            return ph.p_vaddr & ~(GElf_Addr)0xfff;
    }
    return 0;
}

static const char *die_name(Dwarf_Die *d)
{
    Dwarf_Attribute a;
    if (dwarf_attr_integrate(d, DW_AT_name, &a))
        return dwarf_formstring(&a);
    return NULL;
}

/* The compilation unit holding addr.  clang writes no .debug_aranges,
 * which dwfl_module_addrdie needs in this elfutils: then the CUs' own
 * address ranges are searched. */
static int cu_at(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Die *out,
                 Dwarf_Addr *bias)
{
    Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);
    for (Dwarf_Die *c = NULL; !cu && (c = dwfl_module_nextcu(mod, c, bias));)
        if (dwarf_haspc(c, addr - *bias) == 1)
            cu = c;
    if (cu)
        *out = *cu;
    return cu != NULL;
}

/* The innermost function (inlined or not) around addr in cu (NULL: no
 * DWARF): from DWARF, else from the symbol table. */
static const char *function_at(Dwfl_Module *mod, Dwarf_Die *cu,
                               Dwarf_Addr bias, Dwarf_Addr addr)
{
    const char *name = NULL;
    Dwarf_Die *scopes = NULL;
    int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
    for (int i = 0; i < n && !name; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
            name = die_name(&scopes[i]);
    }
    free(scopes);
    return name ? name : dwfl_module_addrname(mod, addr);
}

/* Resolves constructs idx[0..n) of one module; returns how many got a
 * line or a function, or a negative error code. */
static int resolve_module(ompf_profile_t *p, const char *path,
                          const uint32_t *idx, size_t n)
{
    Dwfl *dwfl = dwfl_begin(&offline_callbacks);
    if (!dwfl)
        return 0;
    dwfl_report_begin(dwfl);
    Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, -1, 0, false);
    dwfl_report_end(dwfl, NULL, NULL);
    int done = 0;
    GElf_Addr bias = 0;
    Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
    if (!elf) {
        dwfl_end(dwfl);
        return 0; /* not an ELF file: stay unresolved */
    }
    char bid[256];
    build_id_hex(mod, bid, sizeof bid);
    GElf_Addr page = first_load_page(elf);
    for (size_t i = 0; i < n && done >= 0; i++) {
        const ompf_construct_t *c = ompf_construct_get(p, idx[i]);
        /* another build of the program at that path: its lines would
         * name other code */
        if (c->build_id && *c->build_id && *bid && strcmp(c->build_id, bid))
            continue;
        /* a return address: the call is the byte before it */
        Dwarf_Addr a = c->offset + page + bias - (c->offset ? 1 : 0);
        Dwarf_Die cu;
        Dwarf_Addr cbias = 0;
        int have_cu = cu_at(mod, a, &cu, &cbias);
        const char *fn = function_at(mod, have_cu ? &cu : NULL, cbias, a);
        int line = 0;
        const char *file = NULL;
        Dwarf_Line *l = have_cu ? dwarf_getsrc_die(&cu, a - cbias) : NULL;
        if (l && dwarf_lineno(l, &line) == 0)
            file = dwarf_linesrc(l, NULL, NULL);
        if (!file || line <= 0) {
            file = NULL;
            line = 0;
        }
        if (!file && !fn)
            continue;
        /* a function stored before is replaced only by a full answer (a
         * stripped copy at that path would name it from its symbols) */
        if (!file && ompf_construct_get(p, idx[i])->function)
            continue;
        int rc = ompf_construct_set_source(p, idx[i], file, line, fn);
        done = rc ? rc : done + 1;
    }
    dwfl_end(dwfl);
    return done;
}

int ompf_resolve_constructs(ompf_profile_t *p, ompf_error_t *err)
{
    if (!p)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_resolve_constructs: no profile");
    size_t n = ompf_construct_count(p);
    uint32_t *todo = malloc((n + 1) * sizeof *todo);
    unsigned char *seen = calloc(n + 1, 1);
    if (!todo || !seen) {
        free(todo);
        free(seen);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory while resolving constructs");
    }
    int total = 0;
    for (size_t i = 0; i < n && total >= 0; i++) {
        const ompf_construct_t *c = ompf_construct_get(p, (uint32_t)i);
        /* a function without a line is tried again: a profile written by
         * an ompfuse that found no line there (one whose resolver missed
         * later compilation units) gets it now */
        if (seen[i] || c->file || !c->module || !*c->module || access(c->module, R_OK)) {
            seen[i] = 1;
            continue;
        }
        /* every unresolved construct of this module, in one session */
        size_t k = 0;
        for (size_t j = i; j < n; j++) {
            const ompf_construct_t *d = ompf_construct_get(p, (uint32_t)j);
            if (!seen[j] && !d->file && d->module &&
                !strcmp(d->module, c->module)) {
                todo[k++] = (uint32_t)j;
                seen[j] = 1;
            }
        }
        char *module = strdup(c->module); /* c may move when names change */
        int rc = module ? resolve_module(p, module, todo, k) : OMPF_ENOMEM;
        free(module);
        total = rc < 0 ? rc : total + rc;
    }
    free(todo);
    free(seen);
    if (total < 0)
        return ompf_error_set(err, total, "out of memory while resolving constructs");
    return total;
}
