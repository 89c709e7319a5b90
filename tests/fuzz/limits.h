/* What both fuzz targets check on every profile a reader accepts: the
 * declared-count limits of docs/format.md ("Limits") hold. */
#ifndef OMPF_FUZZ_LIMITS_H
#define OMPF_FUZZ_LIMITS_H

#include <stdlib.h>

#include "ompfuse/file.h"

static inline void fuzz_check_limits(const ompf_profile_t *p)
{
    if (ompf_event_count(p) > OMPF_MAX_EVENTS || ompf_construct_count(p) > OMPF_MAX_CONSTRUCTS ||
        ompf_thread_count(p) > OMPF_MAX_THREADS || ompf_source_count(p) > OMPF_MAX_SOURCES ||
        ompf_meta_count(p) > OMPF_MAX_META)
        abort();
    for (size_t i = 0; i < ompf_label_count(p); i++)
        if (ompf_label_depth(p, (uint32_t)i) > OMPF_MAX_LABEL_DEPTH)
            abort();
    /* parts: as many as the XU says, threads below the limit, in order */
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        uint32_t n;
        ompf_part_t one;
        const ompf_part_t *pt = ompf_xu_parts(p, i, &n, &one);
        if (!pt || n < 1 || n > OMPF_MAX_PARTS_PER_XU ||
            (ompf_xu_has_parts(p, i) && n != ompf_xu_get(p, i)->parts))
            abort();
        for (uint32_t k = 0; ompf_xu_has_parts(p, i) && k < n; k++)
            if (pt[k].thread >= OMPF_MAX_THREADS || pt[k].end_ns < pt[k].start_ns ||
                (k && pt[k].start_ns < pt[k - 1].start_ns))
                abort();
    }
}

#endif
