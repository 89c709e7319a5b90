/* libpfm4 and hwloc, loaded when first called.  With a warm start-up cache
 * (cache.c) a run needs neither library, and loading them cost more than
 * the rest of the tool's start-up: the dynamic loader applies libpfm4's
 * 41,000 relocations in 4-5 ms a process, hwloc (with libudev) takes
 * 0.6 ms (docs/benchmarks.md, "Loading libpfm4 and hwloc on demand").
 * The tool therefore does not link them: these definitions of the
 * functions it calls stand in for theirs, open the library once with
 * dlopen and forward.  The version script (exports.map) keeps them out of
 * the tool's exported symbols, so a program's own libpfm4 or hwloc is
 * untouched.  A library that cannot be loaded reads as one that failed:
 * pfm_initialize returns PFM_ERR_NOINIT, hwloc_topology_init -1. */
#include <dlfcn.h>
#include <hwloc.h>
#include <perfmon/pfmlib.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct lazy {
    const char *soname;
    pthread_once_t once;
    void *h;
    char why[256]; /* dlerror() when it could not be loaded */
} lazy_t;

static lazy_t pfm = {OMPF_PFM_SONAME, PTHREAD_ONCE_INIT, NULL, ""};
static lazy_t hw = {OMPF_HWLOC_SONAME, PTHREAD_ONCE_INIT, NULL, ""};

static void open_lib(lazy_t *l)
{
    l->h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
    if (!l->h) {
        const char *e = dlerror();
        snprintf(l->why, sizeof l->why, "%s", e ? e : l->soname);
    }
}
static void open_pfm(void) { open_lib(&pfm); }
static void open_hw(void) { open_lib(&hw); }

/* The library's own definition of name, NULL when it cannot be had. */
static void *sym(lazy_t *l, void (*opener)(void), const char *name)
{
    pthread_once(&l->once, opener);
    return l->h ? dlsym(l->h, name) : NULL;
}

/* A function pointer from dlsym's void * (POSIX guarantees the two have
 * the same representation; C does not convert them). */
#define FN(var, lib, opener, name)                    \
    __typeof__(&name) var;                            \
    do {                                              \
        void *p_ = sym(&(lib), opener, #name);        \
        memcpy(&var, &p_, sizeof var);                \
    } while (0)

/* ---- libpfm4 (counters/counters.c) ---- */

pfm_err_t pfm_initialize(void)
{
    FN(f, pfm, open_pfm, pfm_initialize);
    return f ? f() : PFM_ERR_NOINIT;
}

const char *pfm_strerror(int code)
{
    FN(f, pfm, open_pfm, pfm_strerror);
    if (f)
        return f(code);
    return pfm.why[0] ? pfm.why : "libpfm4 is not loaded";
}

pfm_err_t pfm_get_pmu_info(pfm_pmu_t pmu, pfm_pmu_info_t *output)
{
    FN(f, pfm, open_pfm, pfm_get_pmu_info);
    return f ? f(pmu, output) : PFM_ERR_NOINIT;
}

pfm_err_t pfm_get_os_event_encoding(const char *str, int dfl_plm, pfm_os_t os,
                                    void *args)
{
    FN(f, pfm, open_pfm, pfm_get_os_event_encoding);
    return f ? f(str, dfl_plm, os, args) : PFM_ERR_NOINIT;
}

/* ---- hwloc (topo.c, with what its inline helpers call) ---- */

int hwloc_topology_init(hwloc_topology_t *topologyp)
{
    FN(f, hw, open_hw, hwloc_topology_init);
    return f ? f(topologyp) : -1;
}

int hwloc_topology_load(hwloc_topology_t topology)
{
    FN(f, hw, open_hw, hwloc_topology_load);
    return f ? f(topology) : -1;
}

void hwloc_topology_destroy(hwloc_topology_t topology)
{
    FN(f, hw, open_hw, hwloc_topology_destroy);
    if (f)
        f(topology);
}

int hwloc_get_type_depth(hwloc_topology_t topology, hwloc_obj_type_t type)
{
    FN(f, hw, open_hw, hwloc_get_type_depth);
    return f ? f(topology, type) : HWLOC_TYPE_DEPTH_UNKNOWN;
}

unsigned hwloc_get_nbobjs_by_depth(hwloc_topology_t topology, int depth)
{
    FN(f, hw, open_hw, hwloc_get_nbobjs_by_depth);
    return f ? f(topology, depth) : 0;
}

hwloc_obj_t hwloc_get_obj_by_depth(hwloc_topology_t topology, int depth, unsigned idx)
{
    FN(f, hw, open_hw, hwloc_get_obj_by_depth);
    return f ? f(topology, depth, idx) : NULL;
}

int hwloc_bitmap_iszero(hwloc_const_bitmap_t bitmap)
{
    FN(f, hw, open_hw, hwloc_bitmap_iszero);
    return f ? f(bitmap) : 1;
}

int hwloc_bitmap_isincluded(hwloc_const_bitmap_t sub_bitmap,
                            hwloc_const_bitmap_t super_bitmap)
{
    FN(f, hw, open_hw, hwloc_bitmap_isincluded);
    return f ? f(sub_bitmap, super_bitmap) : 0;
}
