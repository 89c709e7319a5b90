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
}

#endif
