/* PAPI preset names (PAPI_TOT_CYC, ...) for PAPI users: each maps to the
 * kernel's generic perf event that stands for it, which the kernel encodes
 * for this CPU.  Presets without such an event are refused with a pointer
 * to the native names (PAPI builds those from CPU-specific tables). */
#include <string.h>

#include "ompfuse/counters.h"

static const ompf_papi_preset_t presets[] = {
    {"PAPI_TOT_CYC", "perf::CYCLES", "total cycles", ""},
    {"PAPI_TOT_INS", "perf::INSTRUCTIONS", "instructions completed", ""},
    {"PAPI_REF_CYC", "perf::REF-CYCLES", "reference clock cycles", ""},
    {"PAPI_BR_INS", "perf::BRANCH-INSTRUCTIONS", "branch instructions", ""},
    {"PAPI_BR_MSP", "perf::BRANCH-MISSES", "conditional branches mispredicted",
     "perf counts all mispredicted branches"},
    {"PAPI_L1_DCM", "perf::L1-DCACHE-LOAD-MISSES", "level 1 data cache misses",
     "load misses only: PAPI's preset also counts store misses where the CPU can"},
    {"PAPI_L1_LDM", "perf::L1-DCACHE-LOAD-MISSES", "level 1 load misses", ""},
    {"PAPI_L1_STM", "perf::L1-DCACHE-STORE-MISSES", "level 1 store misses", ""},
    {"PAPI_L1_DCA", "perf::L1-DCACHE-LOADS", "level 1 data cache accesses",
     "loads only"},
    {"PAPI_L1_ICM", "perf::L1-ICACHE-LOAD-MISSES", "level 1 instruction cache misses", ""},
    {"PAPI_L1_ICA", "perf::L1-ICACHE-LOADS", "level 1 instruction cache accesses", ""},
    {"PAPI_TLB_DM", "perf::DTLB-LOAD-MISSES", "data TLB misses", "load misses only"},
    {"PAPI_TLB_IM", "perf::ITLB-LOAD-MISSES", "instruction TLB misses", ""},
    {"PAPI_L3_TCM", "perf::CACHE-MISSES", "level 3 cache misses",
     "the last-level cache as the kernel defines it for this CPU"},
    {"PAPI_L3_TCA", "perf::CACHE-REFERENCES", "level 3 total cache accesses",
     "the last-level cache as the kernel defines it for this CPU"},
    {"PAPI_STL_ICY", "perf::STALLED-CYCLES-FRONTEND", "cycles with no instruction issue",
     "front-end stall cycles: close, not identical"},
};

size_t ompf_papi_preset_count(void) { return sizeof presets / sizeof *presets; }

const ompf_papi_preset_t *ompf_papi_preset_at(size_t i)
{
    return i < ompf_papi_preset_count() ? &presets[i] : NULL;
}

const ompf_papi_preset_t *ompf_papi_preset_find(const char *name)
{
    for (size_t i = 0; name && i < ompf_papi_preset_count(); i++)
        if (!strcmp(presets[i].papi, name))
            return &presets[i];
    return NULL;
}
