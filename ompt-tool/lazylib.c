/* libpfm4 and hwloc, loaded when first called.  With a warm start-up cache
 * (cache.c) a run needs neither library, and loading them cost more than
 * the rest of the tool's start-up: the dynamic loader applies libpfm4's
 * 41,000 relocations in 4-5 ms a process, hwloc (with libudev) takes
 * 0.6 ms (docs/benchmarks.md, "Loading libpfm4 and hwloc on demand").
 * The tool therefore does not link them: these definitions of the
 * functions it calls stand in for theirs, open the library once with
 * dlopen and forward.  The version script (exports.map) keeps them out of
 * the tool's exported symbols, so a program's own libpfm4 or hwloc is
 * untouched.  A library that cannot be loaded reads as one that failed
 * (tests/tool/startup_cache.py makes both unloadable):
 * pfm_initialize returns PFM_ERR_NOINIT (pfm_strerror then says why),
 * hwloc_topology_init -1 (the topology is unknown). */
#include <dlfcn.h>
#include <hwloc.h>
#include <perfmon/pfmlib.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Each library's functions, looked up once when it is opened. */
static struct {
    pthread_once_t once;
    char why[256]; /* dlerror() when it could not be loaded */
    __typeof__(&pfm_initialize) initialize;
    __typeof__(&pfm_strerror) strerror;
    __typeof__(&pfm_get_pmu_info) get_pmu_info;
    __typeof__(&pfm_get_os_event_encoding) get_os_event_encoding;
} pfm = {PTHREAD_ONCE_INIT, "", NULL, NULL, NULL, NULL};

static struct {
    pthread_once_t once;
    __typeof__(&hwloc_topology_init) topology_init;
    __typeof__(&hwloc_topology_load) topology_load;
    __typeof__(&hwloc_topology_destroy) topology_destroy;
    __typeof__(&hwloc_get_type_depth) get_type_depth;
    __typeof__(&hwloc_get_nbobjs_by_depth) get_nbobjs_by_depth;
    __typeof__(&hwloc_get_obj_by_depth) get_obj_by_depth;
    __typeof__(&hwloc_bitmap_iszero) bitmap_iszero;
    __typeof__(&hwloc_bitmap_isincluded) bitmap_isincluded;
} hw = {PTHREAD_ONCE_INIT, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

/* dlsym's void * into a function pointer (POSIX guarantees the two have
 * the same representation; C does not convert them).  All of a library's
 * functions or none: a partial set would fail in the middle of a call. */
#define GET(h, ok, field, name)                      \
    do {                                             \
        void *p_ = (h) ? dlsym((h), #name) : NULL;   \
        memcpy(&(field), &p_, sizeof(field));        \
        (ok) &= p_ != NULL;                          \
    } while (0)

/* The library where the build found it, else by soname (the loader's
 * search: LD_LIBRARY_PATH, the cache); why: the second failure's text. */
static void *open_lib(const char *built, const char *soname, char *why, size_t len)
{
    void *h = dlopen(built, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, len, "%s", e ? e : soname);
    }
    return h;
}

static char hw_why[256];

const char *ft_hwloc_why(void)
{
    return hw_why[0] ? hw_why : NULL;
}

static void open_pfm(void)
{
    char e[200];
    void *h = open_lib(OMPF_PFM_BUILT, OMPF_PFM_SONAME, e, sizeof e);
    if (!h) {
        snprintf(pfm.why, sizeof pfm.why, "%s; install libpfm4 (on Debian: apt-get install libpfm4)",
                 e);
        return;
    }
    int ok = 1;
    GET(h, ok, pfm.initialize, pfm_initialize);
    GET(h, ok, pfm.strerror, pfm_strerror);
    GET(h, ok, pfm.get_pmu_info, pfm_get_pmu_info);
    GET(h, ok, pfm.get_os_event_encoding, pfm_get_os_event_encoding);
    if (!ok) {
        snprintf(pfm.why, sizeof pfm.why, "%s lacks a function ompfuse calls", OMPF_PFM_SONAME);
        memset(&pfm.initialize, 0, sizeof pfm.initialize);
    }
}

static void open_hw(void)
{
    void *h = open_lib(OMPF_HWLOC_BUILT, OMPF_HWLOC_SONAME, hw_why, sizeof hw_why);
    int ok = h != NULL;
    GET(h, ok, hw.topology_init, hwloc_topology_init);
    GET(h, ok, hw.topology_load, hwloc_topology_load);
    GET(h, ok, hw.topology_destroy, hwloc_topology_destroy);
    GET(h, ok, hw.get_type_depth, hwloc_get_type_depth);
    GET(h, ok, hw.get_nbobjs_by_depth, hwloc_get_nbobjs_by_depth);
    GET(h, ok, hw.get_obj_by_depth, hwloc_get_obj_by_depth);
    GET(h, ok, hw.bitmap_iszero, hwloc_bitmap_iszero);
    GET(h, ok, hw.bitmap_isincluded, hwloc_bitmap_isincluded);
    if (!ok) { /* the topology is then unknown: no object is ever made */
        memset(&hw.topology_init, 0, sizeof hw.topology_init);
        if (h)
            snprintf(hw_why, sizeof hw_why, "%s lacks a function ompfuse calls",
                     OMPF_HWLOC_SONAME);
    }
}

#define PFM() pthread_once(&pfm.once, open_pfm)
#define HW() pthread_once(&hw.once, open_hw)

/* ---- libpfm4 (counters/counters.c) ---- */

pfm_err_t pfm_initialize(void)
{
    PFM();
    return pfm.initialize ? pfm.initialize() : PFM_ERR_NOINIT;
}

const char *pfm_strerror(int code)
{
    PFM();
    if (pfm.initialize)
        return pfm.strerror(code);
    return pfm.why[0] ? pfm.why : "libpfm4 is not loaded";
}

pfm_err_t pfm_get_pmu_info(pfm_pmu_t pmu, pfm_pmu_info_t *output)
{
    PFM();
    return pfm.initialize ? pfm.get_pmu_info(pmu, output) : PFM_ERR_NOINIT;
}

pfm_err_t pfm_get_os_event_encoding(const char *str, int dfl_plm, pfm_os_t os,
                                    void *args)
{
    PFM();
    return pfm.initialize ? pfm.get_os_event_encoding(str, dfl_plm, os, args)
                          : PFM_ERR_NOINIT;
}

/* ---- hwloc (topo.c, with what its inline helpers call) ----
 * Only hwloc_topology_init can fail for want of the library: the others
 * are called on a topology it made. */

int hwloc_topology_init(hwloc_topology_t *topologyp)
{
    HW();
    return hw.topology_init ? hw.topology_init(topologyp) : -1;
}

int hwloc_topology_load(hwloc_topology_t topology)
{
    return hw.topology_load(topology);
}

void hwloc_topology_destroy(hwloc_topology_t topology)
{
    hw.topology_destroy(topology);
}

int hwloc_get_type_depth(hwloc_topology_t topology, hwloc_obj_type_t type)
{
    return hw.get_type_depth(topology, type);
}

unsigned hwloc_get_nbobjs_by_depth(hwloc_topology_t topology, int depth)
{
    return hw.get_nbobjs_by_depth(topology, depth);
}

hwloc_obj_t hwloc_get_obj_by_depth(hwloc_topology_t topology, int depth, unsigned idx)
{
    return hw.get_obj_by_depth(topology, depth, idx);
}

int hwloc_bitmap_iszero(hwloc_const_bitmap_t bitmap)
{
    return hw.bitmap_iszero(bitmap);
}

int hwloc_bitmap_isincluded(hwloc_const_bitmap_t sub_bitmap,
                            hwloc_const_bitmap_t super_bitmap)
{
    return hw.bitmap_isincluded(sub_bitmap, super_bitmap);
}
