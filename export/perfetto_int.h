/* Parts of the Perfetto writer in other files. */
#ifndef OMPF_EXPORT_PERFETTO_INT_H
#define OMPF_EXPORT_PERFETTO_INT_H

#include <stdio.h>

#include "ompfuse/profile.h"

/* Counter tracks: per thread and event, the running sum of the XUs' values
 * at each XU end on that thread.  0 or OMPF_ENOMEM. */
int ompf_perfetto_counters(FILE *f, const ompf_profile_t *p, unsigned pid);

#endif
