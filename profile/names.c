/* Names of the enumerations, as they appear in CSV files and `show`. */
#include <stdio.h>
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

/* ---- the construct key ---------------------------------------------------
 * One name per construct, printed by every command (show, export, combine,
 * evaluate, report): the source line when known, the function when only
 * it is (with the address, which keeps two constructs of one function
 * apart), the address otherwise. */
static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int ompf_construct_format(const ompf_construct_t *c, char *buf, size_t len)
{
    char where[1100];
    snprintf(where, sizeof where, "%.1000s+0x%llx",
             (c->module && *c->module) ? base_name(c->module) : "?",
             (unsigned long long)c->offset);
    int fn = c->function && *c->function;
    if (c->file && *c->file && c->line > 0)
        return snprintf(buf, len, "%s:%d%s%s", c->file, (int)c->line,
                        fn ? " " : "", fn ? c->function : "");
    if (fn)
        return snprintf(buf, len, "%s (%s)", c->function, where);
    return snprintf(buf, len, "%s", where);
}

const char *ompf_construct_name(const ompf_profile_t *p, uint32_t idx)
{
    const ompf_construct_t *c = ompf_construct_get(p, idx);
    return c && c->name ? c->name : "?";
}
