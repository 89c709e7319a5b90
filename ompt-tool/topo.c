/* CPU -> core / NUMA node table, built once at start with hwloc so that
 * the per-XU lookup is an array access. */
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static int32_t *cpu_core, *cpu_numa;
static int ncpus;

void ft_topo_init(void)
{
    const int32_t *core_c, *numa_c;
    int n = ft_cache_topo(&core_c, &numa_c);
    if (n > 0) {
        cpu_core = malloc(sizeof(int32_t) * (size_t)n);
        cpu_numa = malloc(sizeof(int32_t) * (size_t)n);
        if (cpu_core && cpu_numa) {
            memcpy(cpu_core, core_c, sizeof(int32_t) * (size_t)n);
            memcpy(cpu_numa, numa_c, sizeof(int32_t) * (size_t)n);
            ncpus = n;
            return;
        }
        free(cpu_core);
        free(cpu_numa);
        cpu_core = cpu_numa = NULL;
    }
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) < 0) {
        if (ft_hwloc_why())
            ft_warn_once("hwloc", "warning: hwloc could not be loaded (%s): XUs get no core "
                                  "or NUMA node; install libhwloc15 (Debian)",
                         ft_hwloc_why());
        return;
    }
    if (hwloc_topology_load(topo) < 0) {
        hwloc_topology_destroy(topo);
        return;
    }
    int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    int maxos = -1;
    for (int i = 0; i < npu; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
        if (pu && (int)pu->os_index > maxos)
            maxos = (int)pu->os_index;
    }
    if (maxos >= 0) {
        cpu_core = malloc(sizeof(int32_t) * (size_t)(maxos + 1));
        cpu_numa = malloc(sizeof(int32_t) * (size_t)(maxos + 1));
    }
    if (!cpu_core || !cpu_numa) {
        free(cpu_core);
        free(cpu_numa);
        cpu_core = cpu_numa = NULL;
        hwloc_topology_destroy(topo);
        return;
    }
    for (int c = 0; c <= maxos; c++)
        cpu_core[c] = cpu_numa[c] = -1;
    for (int i = 0; i < npu; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
        if (!pu)
            continue;
        hwloc_obj_t core =
            hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
        cpu_core[pu->os_index] = core ? (int32_t)core->logical_index : -1;
        hwloc_obj_t n = hwloc_get_ancestor_obj_by_type(topo,
                                                       HWLOC_OBJ_NUMANODE, pu);
        if (!n && pu->nodeset) {
            /* hwloc 2: NUMA nodes are memory children, not ancestors */
            n = hwloc_get_obj_covering_cpuset(topo, pu->cpuset);
            while (n && n->memory_arity == 0)
                n = n->parent;
            if (n && n->memory_arity)
                n = n->memory_first_child;
        }
        cpu_numa[pu->os_index] = n ? (int32_t)n->os_index : 0;
    }
    ncpus = maxos + 1;
    hwloc_topology_destroy(topo);
    ft_cache_put_topo(ncpus, cpu_core, cpu_numa);
}

void ft_topo_of(int cpu, int32_t *core, int32_t *numa)
{
    if (cpu >= 0 && cpu < ncpus) {
        *core = cpu_core[cpu];
        *numa = cpu_numa[cpu];
    } else {
        *core = -1;
        *numa = -1;
    }
}
