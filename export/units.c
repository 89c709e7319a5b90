/* Units of event values: the software clocks count nanoseconds, every
 * other event counts occurrences. */
#include <string.h>
#include <strings.h>

#include "ompfuse/export.h"

const char *ompf_event_unit(const ompf_event_t *ev)
{
    /* perf_event encoding first (PERF_TYPE_SOFTWARE = 1, CPU_CLOCK = 0,
     * TASK_CLOCK = 1); imported profiles carry only the name. */
    if (ev->pe_type == 1 && ev->config <= 1)
        return "ns";
    const char *n = ev->name ? ev->name : "";
    const char *c = strstr(n, "::");
    c = c ? c + 2 : n;
    if (!strcasecmp(c, "TASK-CLOCK") || !strcasecmp(c, "CPU-CLOCK"))
        return "ns";
    return "count";
}
