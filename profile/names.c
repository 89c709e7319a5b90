/* Names of the enumerations, as they appear in CSV files and `show`. */
#include <string.h>

#include "ompfuse/profile.h"

static const char *const xu_kinds[OMPF_XU_KIND_COUNT] = {
    "task", "loop-chunk", "static-chunks", "taskloop-chunk", "section", "other",
};

static const char *const construct_kinds[OMPF_CK_COUNT] = {
    "unknown", "parallel", "task", "loop", "taskloop",
    "sections", "single", "masked", "other",
};

static const char *const event_statuses[OMPF_EV_STATUS_COUNT] = {
    "counted", "failed", "multiplexed", "estimated",
};

static int find(const char *const *names, int n, const char *s)
{
    if (!s)
        return -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], s))
            return i;
    return -1;
}

const char *ompf_xu_kind_name(ompf_xu_kind_t k)
{
    return ((unsigned)k < OMPF_XU_KIND_COUNT) ? xu_kinds[k] : "invalid";
}

int ompf_xu_kind_parse(const char *s)
{
    return find(xu_kinds, OMPF_XU_KIND_COUNT, s);
}

const char *ompf_construct_kind_name(ompf_construct_kind_t k)
{
    return ((unsigned)k < OMPF_CK_COUNT) ? construct_kinds[k] : "invalid";
}

int ompf_construct_kind_parse(const char *s)
{
    return find(construct_kinds, OMPF_CK_COUNT, s);
}

const char *ompf_event_status_name(ompf_event_status_t s)
{
    return ((unsigned)s < OMPF_EV_STATUS_COUNT) ? event_statuses[s] : "invalid";
}

int ompf_event_status_parse(const char *s)
{
    return find(event_statuses, OMPF_EV_STATUS_COUNT, s);
}
