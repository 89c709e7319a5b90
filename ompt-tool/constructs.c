/* Construct identity: module (path + GNU build-id) and module-relative
 * offset of codeptr_ra, stable under ASLR/PIE.  A codeptr inside libomp
 * (tail calls, taskloop) says nothing about the source construct, so such
 * constructs are identified by the libomp offset *within* their enclosing
 * construct, never merged with another source construct. */
#include <dlfcn.h>
#include <execinfo.h>
#include <elf.h>
#include <link.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

#define MAX_MODULES 128
#define MAX_CONSTRUCTS 65536

typedef struct module {
    uintptr_t base;
    char path[PATH_MAX];
    char bid[80];
} module_t;

typedef struct creg {
    uint64_t id;
    char *name;
} creg_t;

static module_t modules[MAX_MODULES];
static int nmodules;
static creg_t *creg;   /* open addressing on id, under ft_g.lock */
static size_t ncreg, capcreg;
static char exe_path[PATH_MAX];
static uintptr_t main_fbase;

/* Address ranges of libomp and of this tool (PT_LOAD segments). */
typedef struct range {
    uintptr_t lo, hi;
} range_t;
static range_t omp_range, self_range;
static int unwinder; /* backtrace() loaded at start-up (imports.c) */

static int find_range(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    range_t *r = data; /* r->lo holds an address inside the module */
    uintptr_t probe = r->lo, lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (probe >= lo && probe < hi) {
        r->lo = lo;
        r->hi = hi;
        return 1;
    }
    return 0;
}

static void module_range(const void *addr, range_t *r)
{
    r->lo = (uintptr_t)addr;
    r->hi = 0;
    if (!dl_iterate_phdr(find_range, r))
        r->lo = r->hi = 0;
}

static int in_range(const range_t *r, uintptr_t a)
{
    return a >= r->lo && a < r->hi;
}

/* First return address on the stack outside libomp and this tool: the
 * user code that entered the runtime (0 on worker threads that have
 * none, and when no module loaded at start-up could call taskloop: the
 * unwinder is then not loaded, and never from a callback). */
static uintptr_t user_caller(void)
{
    if (!unwinder)
        return 0;
    void *bt[40];
    int n = backtrace(bt, 40);
    for (int i = 1; i < n; i++) {
        uintptr_t a = (uintptr_t)bt[i];
        if (!in_range(&omp_range, a) && !in_range(&self_range, a))
            return a;
    }
    return 0;
}

static int find_main(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD &&
            info->dlpi_phdr[i].p_offset == 0) {
            main_fbase = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            break;
        }
    return 1; /* the first object is the main program */
}

struct bid_arg {
    uintptr_t base;
    char *bid;
    size_t blen;
    int found;
};

static int find_bid(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct bid_arg *a = data;
    if ((uintptr_t)info->dlpi_addr != a->base) {
        /* the main program of a non-PIE binary has dlpi_addr 0 while
         * dladdr gives its ELF header address */
        int match = 0;
        for (int i = 0; i < info->dlpi_phnum && !match; i++)
            if (info->dlpi_phdr[i].p_type == PT_LOAD &&
                info->dlpi_phdr[i].p_offset == 0 &&
                info->dlpi_addr + info->dlpi_phdr[i].p_vaddr == a->base)
                match = 1;
        if (!match)
            return 0;
    }
    a->found = 1;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p =
            (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            size_t nsz = (nh->n_namesz + 3u) & ~3u;
            size_t dsz = (nh->n_descsz + 3u) & ~3u;
            const unsigned char *name = p + sizeof *nh;
            const unsigned char *desc = name + nsz;
            if (desc + nh->n_descsz > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0) {
                size_t o = 0;
                for (size_t k = 0; k < nh->n_descsz && o + 3 < a->blen; k++)
                    o += (size_t)snprintf(a->bid + o, a->blen - o, "%02x",
                                          desc[k]);
                return 1;
            }
            p = desc + dsz;
        }
    }
    return 1;
}

/* Module table: append-only, guarded by its own lock; dladdr and
 * dl_iterate_phdr (which take the loader's lock) run outside it. */
static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;

static const module_t *module_find(uintptr_t base)
{
    const module_t *r = NULL;
    pthread_mutex_lock(&mod_lock);
    for (int i = 0; i < nmodules && !r; i++)
        if (modules[i].base == base)
            r = &modules[i];
    pthread_mutex_unlock(&mod_lock);
    return r;
}

static const module_t *module_lookup(const void *addr)
{
    Dl_info info;
    if (!dladdr(addr, &info) || !info.dli_fbase)
        return NULL;
    uintptr_t base = (uintptr_t)info.dli_fbase;
    const module_t *found = module_find(base);
    if (found)
        return found;
    module_t m;
    memset(&m, 0, sizeof m);
    m.base = base;
    const char *fname = info.dli_fname;
    /* dladdr names the main program by argv[0]; use its real path */
    if (base == main_fbase || !fname || !*fname)
        snprintf(m.path, sizeof m.path, "%s", exe_path);
    else if (!realpath(fname, m.path))
        snprintf(m.path, sizeof m.path, "%s", fname);
    struct bid_arg a = {base, m.bid, sizeof m.bid, 0};
    dl_iterate_phdr(find_bid, &a);
    pthread_mutex_lock(&mod_lock);
    for (int i = 0; i < nmodules && !found; i++)
        if (modules[i].base == base)
            found = &modules[i];
    if (!found && nmodules < MAX_MODULES) {
        modules[nmodules] = m;
        found = &modules[nmodules++];
    }
    pthread_mutex_unlock(&mod_lock);
    return found;
}

int ft_constructs_init(void *omp_symbol)
{
    ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
    exe_path[n > 0 ? n : 0] = '\0';
    dl_iterate_phdr(find_main, NULL);
    module_range(omp_symbol, &omp_range);
    module_range((const void *)&ft_constructs_init, &self_range);
    if (ft_imports_taskloop(omp_range.lo, self_range.lo)) {
        /* backtrace() loads its unwinder on first use: not in a callback */
        void *bt[4];
        (void)backtrace(bt, 4);
        unwinder = 1;
    }
    /* small at first: a 1 MiB table cost the start-up page faults */
    capcreg = 256;
    creg = calloc(capcreg, sizeof *creg);
    if (!creg)
        return OMPF_ENOMEM;
    const module_t *m = module_lookup(omp_symbol);
    if (m) {
        ft_g.omp_base = m->base;
        snprintf(ft_g.omp_path, sizeof ft_g.omp_path, "%s", m->path);
        snprintf(ft_g.omp_build_id, sizeof ft_g.omp_build_id, "%s", m->bid);
    }
    return 0;
}

static const char *basename_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Registry of names, to name fallback constructs after their parents. */
static creg_t *creg_slot(creg_t *tab, size_t cap, uint64_t id)
{
    size_t h = (size_t)((id * 0x9E3779B97F4A7C15ull) >> 40) & (cap - 1);
    for (size_t k = 0; k < cap; k++) {
        creg_t *c = &tab[(h + k) & (cap - 1)];
        if ((c->id == id && c->name) || !c->name)
            return c;
    }
    return NULL;
}

/* Doubles the table when half full, up to MAX_CONSTRUCTS (called for a
 * construct seen for the first time, never per XU). */
static void creg_grow(void)
{
    if (2 * (ncreg + 1) <= capcreg || capcreg >= MAX_CONSTRUCTS)
        return;
    creg_t *tab = calloc(2 * capcreg, sizeof *tab);
    if (!tab)
        return;
    for (size_t i = 0; i < capcreg; i++)
        if (creg[i].name)
            *creg_slot(tab, 2 * capcreg, creg[i].id) = creg[i];
    free(creg);
    creg = tab;
    capcreg *= 2;
}

static creg_t *creg_find(uint64_t id, int insert)
{
    if (insert)
        creg_grow();
    creg_t *c = creg_slot(creg, capcreg, id);
    if (!c || c->name)
        return c;
    if (!insert || ncreg + 1 >= capcreg)
        return NULL;
    c->id = id;
    ncreg++;
    return c;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

/* Resolves, registers and writes a construct; lock held by caller. */
static uint64_t resolve(ft_thread_t *t, const module_t *m,
                        const void *codeptr, int kind,
                        uint64_t parent, uint64_t *addr,
                        ompf_construct_t *c, char *modbuf,
                        size_t modlen, char *namebuf, size_t namelen)
{
    uint64_t id;
    memset(c, 0, sizeof *c);
    c->kind = kind;
    if (m && m->base != ft_g.omp_base) {
        c->module = m->path;
        c->build_id = m->bid;
        c->offset = (uint64_t)((uintptr_t)codeptr - m->base);
        /* stable across runs: module identity, offset, kind */
        uint64_t h = 0x6d6f64ull;
        for (const char *q = basename_of(m->path); *q; q++)
            h = mix(h, (uint64_t)(unsigned char)*q);
        for (const char *q = m->bid; *q; q++)
            h = mix(h, (uint64_t)(unsigned char)*q);
        id = mix(mix(h, c->offset), (uint64_t)kind) & ~(1ull << 63);
        if (id == 0)
            id = 1;
        *addr = c->offset;
        snprintf(namebuf, namelen, "%s+0x%llx", basename_of(m->path),
                 (unsigned long long)c->offset);
    } else {
        /* inside libomp (or unknown): name it after the enclosing
         * construct so that two source constructs never share it */
        uint64_t off = m ? (uint64_t)((uintptr_t)codeptr - m->base)
                         : (uint64_t)(uintptr_t)codeptr;
        id = mix(mix(mix(0x6f6d7066ull, off), (uint64_t)kind), parent);
        id |= 1ull << 63;
        *addr = id;
        creg_t *pr = parent ? creg_find(parent, 0) : NULL;
        const char *pname = pr ? pr->name : "main";
        const char *omp = m ? basename_of(m->path)
                            : codeptr ? "unknown" : "no-codeptr";
        snprintf(namebuf, namelen, "%s+0x%llx@%s", omp,
                 (unsigned long long)off, pname);
        snprintf(modbuf, modlen, "%s@%s", m ? m->path : "unknown", pname);
        c->module = modbuf;
        c->build_id = m ? m->bid : "";
        c->offset = off;
        char key[64];
        snprintf(key, sizeof key, "libomp-codeptr-%d-%d", kind, !codeptr);
        if (!codeptr)
            ft_warn_once(key,
                         "warning: the runtime reports no code address for "
                         "a %s construct (gcc-built code through the "
                         "libgomp.so.1 -> libomp route does this); it is "
                         "identified by its enclosing construct %s",
                         ompf_construct_kind_name((ompf_construct_kind_t)kind),
                         pname);
        else if (kind == OMPF_CK_TASKLOOP && !unwinder)
            ft_warn_once(key,
                         "warning: a taskloop in a module that was not "
                         "loaded when the OpenMP runtime started (opened "
                         "with dlopen) is identified by its enclosing "
                         "construct %s instead of a source location (the "
                         "tool unwinds the stack only if a module loaded at "
                         "start-up calls taskloop; link the module to the "
                         "program for exact locations)", pname);
        else
            ft_warn_once(key,
                         "warning: a %s construct's return address lies "
                         "inside the OpenMP runtime (%s+0x%llx, a tail call "
                         "at -O2); it is identified by its enclosing "
                         "construct %s instead of a source location (build "
                         "with -fno-optimize-sibling-calls for exact "
                         "locations)",
                         ompf_construct_kind_name((ompf_construct_kind_t)kind),
                         omp, (unsigned long long)off, pname);
    }
    c->name = namebuf;
    creg_t *r = creg_find(id, 1);
    if (r && !r->name && !(r->name = strdup(namebuf)))
        ncreg--; /* the slot stays free */
    ompf_wstream_construct(t->stream, id, c);
    if (t->stream2)
        ompf_wstream_construct(t->stream2, id, c);
    return id;
}

uint64_t ft_construct(ft_thread_t *t, const void *codeptr, int kind,
                      uint64_t parent, uint64_t *addr)
{
    /* libomp reports taskloop with an address of its own: the user code
     * that called the runtime is the construct (found on the stack; it is
     * always there, unlike for tasks created by worker threads, whose
     * stacks hold only runtime frames) */
    if (kind == OMPF_CK_TASKLOOP && in_range(&omp_range, (uintptr_t)codeptr)) {
        uintptr_t caller = user_caller();
        if (caller)
            codeptr = (const void *)caller;
    }
    uint64_t key = ((uint64_t)(uintptr_t)codeptr | ((uint64_t)kind << 56)) ^
                   (parent * 0x9E3779B97F4A7C15ull);
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 40) % FT_CCACHE;
    for (int k = 0; k < 8; k++) {
        ft_cslot_t *s = &t->ccache[(h + (size_t)k) % FT_CCACHE];
        if (s->id && s->key == key) {
            *addr = s->addr;
            return s->id;
        }
        if (!s->id)
            break;
    }
    ompf_construct_t c;
    char mod[4400], name[4400];
    const module_t *m = codeptr ? module_lookup(codeptr) : NULL;
    pthread_mutex_lock(&ft_g.lock);
    uint64_t id = resolve(t, m, codeptr, kind, parent, addr, &c, mod, sizeof mod,
                          name, sizeof name);
    pthread_mutex_unlock(&ft_g.lock);
    for (int k = 0; k < 8; k++) {
        ft_cslot_t *s = &t->ccache[(h + (size_t)k) % FT_CCACHE];
        if (!s->id) {
            s->key = key;
            s->id = id;
            s->addr = *addr;
            break;
        }
    }
    return id;
}
