/* The event catalog: what libpfm4 knows for the detected PMUs, whether the
 * kernel really exposes them, and name suggestions for typing mistakes. */
#include "ompfuse/plan.h"
#include "ompfuse/text.h"
#include "ompfuse/counters.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <perfmon/pfmlib_perf_event.h>

struct ompf_catalog {
    size_t npmu, cap_pmu;
    ompf_pmu_desc_t *pmu;
    size_t nev, cap_ev;
    ompf_event_desc_t *ev;
    int hw_pmu;      /* the kernel has a CPU PMU */
    int hw_counters; /* its general counters per libpfm4 */
};

static int sys_has(const char *dev)
{
    char path[256];
    struct stat sb;
    snprintf(path, sizeof path, "/sys/bus/event_source/devices/%s", dev);
    return stat(path, &sb) == 0;
}

/* The CPU PMU shows up as "cpu" (x86), "cpu_core"/"cpu_atom" (hybrid) or
 * "armv8_pmuv3*" (Arm); a virtual machine without PMU passthrough has none
 * of them (only software, tracepoint, breakpoint...). */
static int kernel_has_cpu_pmu(void)
{
    if (sys_has("cpu") || sys_has("cpu_core") || sys_has("cpu_atom"))
        return 1;
    DIR *d = opendir("/sys/bus/event_source/devices");
    int found = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) && !found)
            found = !strncmp(e->d_name, "armv8_pmuv3", 11) ||
                    !strncmp(e->d_name, "armv7_", 6);
        closedir(d);
    }
    return found;
}

void ompf_catalog_destroy(ompf_catalog_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nev; i++) {
        free(c->ev[i].name);
        free(c->ev[i].desc);
        free(c->ev[i].equiv);
        for (size_t k = 0; k < c->ev[i].n_umasks; k++)
            free(c->ev[i].umasks[k]);
        free(c->ev[i].umasks);
    }
    free(c->ev);
    free(c->pmu);
    free(c);
}

static char *dupn(const char *s) { return strdup(s ? s : ""); }

int ompf_catalog_load(ompf_catalog_t **out, ompf_error_t *err)
{
    if (!out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_catalog_load: no output");
    *out = NULL;
    /* idempotent: the counters library may have done it already */
    int prc = pfm_initialize();
    if (prc != PFM_SUCCESS)
        return ompf_error_set(err, OMPF_EUNSUPP,
                              "libpfm4 could not initialize: %s",
                              pfm_strerror(prc));
    ompf_catalog_t *c = calloc(1, sizeof *c);
    if (!c)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    c->hw_pmu = kernel_has_cpu_pmu();
    int rc = 0;
    pfm_pmu_t p;
    pfm_for_all_pmus(p)
    {
        pfm_pmu_info_t pi;
        memset(&pi, 0, sizeof pi);
        pi.size = sizeof pi;
        if (pfm_get_pmu_info(p, &pi) != PFM_SUCCESS || !pi.is_present)
            continue;
        if (c->npmu == c->cap_pmu) {
            size_t nc = c->cap_pmu ? c->cap_pmu * 2 : 8;
            ompf_pmu_desc_t *v = realloc(c->pmu, nc * sizeof *v);
            if (!v) {
                rc = OMPF_ENOMEM;
                break;
            }
            c->pmu = v;
            c->cap_pmu = nc;
        }
        ompf_pmu_desc_t *d = &c->pmu[c->npmu];
        memset(d, 0, sizeof *d);
        snprintf(d->name, sizeof d->name, "%s", pi.name ? pi.name : "?");
        snprintf(d->desc, sizeof d->desc, "%s", pi.desc ? pi.desc : "");
        d->pfm_type = pi.type;
        d->num_cntrs = pi.num_cntrs;
        d->num_fixed_cntrs = pi.num_fixed_cntrs;
        d->nevents = pi.nevents;
        if (!strcmp(d->name, "perf") || !strcmp(d->name, "perf_raw"))
            d->kernel_present = 1; /* generic: software always, hw if cpu */
        else if (pi.type == PFM_PMU_TYPE_CORE)
            d->kernel_present = c->hw_pmu;
        else if (strstr(d->name, "rapl"))
            d->kernel_present = sys_has("power");
        else
            d->kernel_present = c->hw_pmu ? -1 : 0; /* uncore: probe it */
        if (pi.type == PFM_PMU_TYPE_CORE && d->kernel_present &&
            !c->hw_counters)
            c->hw_counters = pi.num_cntrs;
        size_t pmu_idx = c->npmu++;
        for (int i = pi.first_event; i != -1 && rc == 0;
             i = pfm_get_event_next(i)) {
            pfm_event_info_t ei;
            memset(&ei, 0, sizeof ei);
            ei.size = sizeof ei;
            if (pfm_get_event_info(i, PFM_OS_PERF_EVENT_EXT, &ei) != PFM_SUCCESS)
                continue;
            if (c->nev == c->cap_ev) {
                size_t nc = c->cap_ev ? c->cap_ev * 2 : 256;
                ompf_event_desc_t *v = realloc(c->ev, nc * sizeof *v);
                if (!v) {
                    rc = OMPF_ENOMEM;
                    break;
                }
                c->ev = v;
                c->cap_ev = nc;
            }
            ompf_event_desc_t *e = &c->ev[c->nev];
            memset(e, 0, sizeof *e);
            size_t len = strlen(d->name) + strlen(ei.name) + 3;
            e->name = malloc(len);
            e->desc = dupn(ei.desc);
            e->equiv = ei.equiv ? strdup(ei.equiv) : NULL;
            e->pmu = pmu_idx;
            if (!e->name || !e->desc) {
                free(e->name);
                free(e->desc);
                free(e->equiv);
                rc = OMPF_ENOMEM;
                break;
            }
            snprintf(e->name, len, "%s::%s", d->name, ei.name);
            c->nev++;
            /* umasks: for listing and for suggestions */
            for (int a = 0; a < ei.nattrs; a++) {
                pfm_event_attr_info_t ai;
                memset(&ai, 0, sizeof ai);
                ai.size = sizeof ai;
                if (pfm_get_event_attr_info(i, a, PFM_OS_PERF_EVENT_EXT, &ai) !=
                        PFM_SUCCESS ||
                    ai.type != PFM_ATTR_UMASK || !ai.name)
                    continue;
                char **v = realloc(e->umasks, (e->n_umasks + 1) * sizeof *v);
                if (!v) {
                    rc = OMPF_ENOMEM;
                    break;
                }
                e->umasks = v;
                if (!(v[e->n_umasks] = strdup(ai.name))) {
                    rc = OMPF_ENOMEM;
                    break;
                }
                e->n_umasks++;
            }
            struct perf_event_attr attr;
            memset(&attr, 0, sizeof attr);
            pfm_perf_encode_arg_t arg;
            memset(&arg, 0, sizeof arg);
            arg.attr = &attr;
            arg.size = sizeof arg;
            if (pfm_get_os_event_encoding(e->name, PFM_PLM0 | PFM_PLM3,
                                          PFM_OS_PERF_EVENT_EXT,
                                          &arg) == PFM_SUCCESS)
                e->software = attr.type == PERF_TYPE_SOFTWARE;
        }
        if (rc)
            break;
    }
    if (rc) {
        ompf_catalog_destroy(c);
        return ompf_error_set(err, rc, "out of memory");
    }
    *out = c;
    return 0;
}

size_t ompf_catalog_pmu_count(const ompf_catalog_t *c) { return c ? c->npmu : 0; }
const ompf_pmu_desc_t *ompf_catalog_pmu(const ompf_catalog_t *c, size_t i)
{
    return c && i < c->npmu ? &c->pmu[i] : NULL;
}
size_t ompf_catalog_event_count(const ompf_catalog_t *c) { return c ? c->nev : 0; }
const ompf_event_desc_t *ompf_catalog_event(const ompf_catalog_t *c, size_t i)
{
    return c && i < c->nev ? &c->ev[i] : NULL;
}
int ompf_catalog_has_hw_pmu(const ompf_catalog_t *c) { return c ? c->hw_pmu : 0; }
int ompf_catalog_hw_counters(const ompf_catalog_t *c) { return c ? c->hw_counters : 0; }

typedef struct cand {
    size_t d;
    char name[256];
} cand_t;

static void consider(cand_t *best, size_t max, size_t *nbest, const char *name,
                     size_t d)
{
    for (size_t i = 0; i < *nbest; i++)
        if (!strcmp(best[i].name, name))
            return;
    size_t pos = *nbest;
    while (pos > 0 && best[pos - 1].d > d)
        pos--;
    if (pos >= max)
        return;
    size_t last = *nbest < max ? *nbest : max - 1;
    for (size_t i = last; i > pos; i--)
        best[i] = best[i - 1];
    best[pos].d = d;
    snprintf(best[pos].name, sizeof best[pos].name, "%s", name);
    if (*nbest < max)
        (*nbest)++;
}

size_t ompf_catalog_suggest(const ompf_catalog_t *c, const char *name,
                            size_t max, char *buf, size_t len)
{
    if (!c || !name || !max || !buf || !len)
        return 0;
    if (max > 16)
        max = 16;
    buf[0] = '\0';
    cand_t best[16];
    size_t nb = 0;
    /* split "pmu::EVENT:umask" into its parts */
    const char *sep = strstr(name, "::");
    const char *ev = sep ? sep + 2 : name;
    char base[256];
    snprintf(base, sizeof base, "%s", ev);
    char *colon = strchr(base, ':');
    const char *umask = NULL;
    if (colon) {
        *colon = '\0';
        umask = colon + 1;
    }
    for (size_t i = 0; i < c->nev; i++) {
        const ompf_event_desc_t *e = &c->ev[i];
        const char *bare = strstr(e->name, "::") + 2;
        if (umask && !strcasecmp(bare, base)) {
            /* right event, wrong modifier: suggest its umasks */
            for (size_t k = 0; k < e->n_umasks; k++) {
                char full[256];
                snprintf(full, sizeof full, "%s:%s", e->name, e->umasks[k]);
                consider(best, max, &nb, full, ompf_edit_distance(umask, e->umasks[k]));
            }
            continue;
        }
        size_t d = sep ? ompf_edit_distance(name, e->name) : ompf_edit_distance(base, bare);
        consider(best, max, &nb, e->name, d);
    }
    size_t used = 0;
    for (size_t i = 0; i < nb; i++) {
        int w = snprintf(buf + used, len - used, "%s%s",
                         i == 0 ? "" : i + 1 == nb ? " or " : ", ", best[i].name);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
    return nb;
}

int ompf_plan_check_names(const char *const *events, size_t n,
                          ompf_error_t *err)
{
    ompf_cnt_set_t *s = NULL;
    int rc = ompf_cnt_set_create(events, n, &s, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *why = NULL;
        ompf_cnt_fail_t f = ompf_cnt_set_status(s, i, &why);
        if (f == OMPF_CNT_OK)
            continue;
        ompf_catalog_t *c = NULL;
        char sug[1024] = "";
        if (ompf_catalog_load(&c, NULL) == 0) {
            ompf_catalog_suggest(c, events[i], 3, sug, sizeof sug);
            ompf_catalog_destroy(c);
        }
        if (f == OMPF_CNT_UNKNOWN && !strncmp(events[i], "PAPI_", 5))
            rc = ompf_error_set(err, OMPF_ENOTFOUND, "%s", why ? why : events[i]);
        else if (f == OMPF_CNT_UNKNOWN)
            rc = ompf_error_set(err, OMPF_ENOTFOUND,
                                "unknown event \"%s\"%s%s%s (`ompfuse events` "
                                "lists the valid names)",
                                events[i], sug[0] ? "; did you mean " : "", sug,
                                sug[0] ? "?" : "");
        else
            rc = ompf_error_set(err, OMPF_EUNSUPP, "%s%s%s", why ? why : events[i],
                                sug[0] ? "; close valid names: " : "", sug);
    }
    ompf_cnt_set_destroy(s);
    return rc;
}
