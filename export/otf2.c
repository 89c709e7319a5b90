/* OTF2 archive through libotf2 (Score-P's format, read by Vampir and
 * otf2-print): a location group per profile, a location per thread, a
 * region per construct, an Enter/Leave pair per XU part on the part's
 * thread with its attributes (xu id, parts, label) and one metric record
 * per measured event value at the Leave of the XU's first part; metadata
 * as archive properties.  Written to a temporary
 * directory and renamed.  Layout: docs/export.md. */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "jsonw.h"
#include "lanes.h"
#include "ompfuse/export.h"

int ompf_export_otf2_available(void)
{
    return 1;
}

/* libotf2 reports its errors through this hook; we report ours once. */
static OTF2_ErrorCode otf2_quiet(void *ud, const char *file, uint64_t line, const char *fn,
                                    OTF2_ErrorCode code, const char *fmt, va_list va)
{
    (void)ud, (void)file, (void)line, (void)fn, (void)fmt, (void)va;
    return code;
}

static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd,
                                bool final)
{
    (void)ud, (void)ft, (void)loc, (void)cd, (void)final;
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc)
{
    (void)ud, (void)ft, (void)loc;
    return 0;
}

static const OTF2_FlushCallbacks flush_cbs = {pre_flush, post_flush};

enum { ATTR_XU = 0, ATTR_PARTS = 1, ATTR_LABEL = 2, ATTR_START = 3 };
/* write_defs runs three times with the same calls, so that string ids
 * agree: to count the strings, to write them, to write the rest. */
enum { PASS_COUNT, PASS_STRINGS, PASS_DEFS };

/* Per profile: where its ids start. */
typedef struct prof {
    uint32_t loc0, nloc, reg0, met0;
    uint8_t *vtype;       /* OTF2_Type per event */
    ompf_lanes_t lanes;   /* locations: one per track */
    uint64_t *nevents;    /* records per location */
} prof_t;

typedef struct ctx {
    const ompf_export_input_t *in;
    size_t n;
    prof_t *pr;
    OTF2_Archive *a;
    uint32_t nstr;   /* strings handed out so far in this pass */
    int pass;        /* PASS_*: what write_defs writes */
    OTF2_GlobalDefWriter *g;
} ctx_t;

/* Value type of an event: unsigned/signed integers when every measured
 * value is one (exact counts stay integers), else double. */
static uint8_t event_type(const ompf_profile_t *p, uint32_t e)
{
    if (ompf_event_get(p, e)->status == OMPF_EV_ESTIMATED)
        return OTF2_TYPE_DOUBLE;
    int neg = 0;
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        double v = ompf_xu_values_const(p, i)[e];
        if (ompf_is_missing(v))
            continue;
        if (!isfinite(v) || v != floor(v) || v >= 1.8e19 || v < -9.2e18)
            return OTF2_TYPE_DOUBLE;
        neg |= v < 0;
    }
    return neg ? OTF2_TYPE_INT64 : OTF2_TYPE_UINT64;
}

static OTF2_MetricValue metric_value(uint8_t type, double v)
{
    OTF2_MetricValue m;
    if (type == OTF2_TYPE_UINT64)
        m.unsigned_int = (uint64_t)v;
    else if (type == OTF2_TYPE_INT64)
        m.signed_int = (int64_t)v;
    else
        m.floating_point = v;
    return m;
}

/* The Leave of slice sl (one part of an XU); the XU's values are metrics
 * at its first part's Leave. */
static int leave(OTF2_EvtWriter *w, const ompf_profile_t *p, const prof_t *pr, size_t sl,
                 uint64_t *count)
{
    size_t xu = pr->lanes.xu[sl];
    const ompf_xu_t *x = ompf_xu_get(p, xu);
    const double *v = ompf_xu_values_const(p, xu);
    uint64_t end = pr->lanes.part[sl].end_ns;
    for (uint32_t e = 0; e < ompf_event_count(p) && sl == pr->lanes.first[xu]; e++) {
        if (ompf_is_missing(v[e]))
            continue; /* a missing value is no record */
        OTF2_Type t = pr->vtype[e];
        OTF2_MetricValue m = metric_value(t, v[e]);
        if (OTF2_EvtWriter_Metric(w, NULL, end, pr->met0 + e, 1, &t, &m) != OTF2_SUCCESS)
            return -1;
        ++*count;
    }
    ++*count;
    return OTF2_EvtWriter_Leave(w, NULL, end, pr->reg0 + x->type) == OTF2_SUCCESS ? 0 : -1;
}

/* One track's events: its slices (XU parts) nest (lanes.h), so a stack
 * of open slices gives the Leave records in time order. */
static int write_track(const ompf_profile_t *p, const prof_t *pr, OTF2_EvtWriter *w,
                       const size_t *sl, size_t n, size_t *stack, uint32_t label_base,
                       uint64_t *count)
{
    size_t ns = 0;
    OTF2_AttributeList *al = OTF2_AttributeList_New();
    if (!al)
        return -1;
    int rc = 0;
    const ompf_lanes_t *l = &pr->lanes;
    for (size_t i = 0; i < n && !rc; i++) {
        size_t xu = l->xu[sl[i]];
        const ompf_xu_t *x = ompf_xu_get(p, xu);
        uint64_t st = l->start[sl[i]]; /* drawn start (lanes.h) */
        while (ns && !rc) {
            if (l->part[stack[ns - 1]].end_ns > st)
                break;
            rc = leave(w, p, pr, stack[--ns], count);
        }
        OTF2_AttributeList_AddUint64(al, ATTR_XU, x->id);
        OTF2_AttributeList_AddUint32(al, ATTR_PARTS, x->parts);
        if (st != l->part[sl[i]].start_ns)
            OTF2_AttributeList_AddUint64(al, ATTR_START, l->part[sl[i]].start_ns);
        OTF2_AttributeList_AddStringRef(al, ATTR_LABEL, label_base + (uint32_t)xu);
        if (!rc && OTF2_EvtWriter_Enter(w, al, st, pr->reg0 + x->type) != OTF2_SUCCESS)
            rc = -1;
        ++*count;
        stack[ns++] = sl[i];
    }
    while (ns && !rc)
        rc = leave(w, p, pr, stack[--ns], count);
    OTF2_AttributeList_Delete(al);
    return rc;
}

/* Label strings are numbered after every other string: profile k's XU i
 * is string label_base(k) + i. */
static uint32_t label_base(const ctx_t *c, size_t k, uint32_t others)
{
    uint32_t b = others;
    for (size_t j = 0; j < k; j++)
        b += (uint32_t)ompf_xu_count(c->in[j].profile);
    return b;
}

static int write_events(ctx_t *c, uint32_t nstrings, ompf_error_t *err)
{
    for (size_t k = 0; k < c->n; k++) {
        const ompf_profile_t *p = c->in[k].profile;
        prof_t *pr = &c->pr[k];
        ompf_track_order_t o = {0};
        size_t nsl = pr->lanes.nslices;
        size_t *stack = malloc((nsl ? nsl : 1) * sizeof *stack);
        if (!stack || ompf_track_order_build(p, &pr->lanes, &o)) {
            free(stack);
            return ompf_error_set(err, OMPF_ENOMEM, "OTF2 export: out of memory");
        }
        int rc = 0;
        uint32_t lb = label_base(c, k, nstrings);
        for (uint32_t t = 0; t < pr->nloc && !rc; t++) {
            OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(c->a, pr->loc0 + t);
            if (!w) {
                rc = -1;
                break;
            }
            rc = write_track(p, pr, w, o.order + o.first[t], o.first[t + 1] - o.first[t], stack,
                             lb, &pr->nevents[t]);
            if (OTF2_Archive_CloseEvtWriter(c->a, w) != OTF2_SUCCESS)
                rc = -1;
        }
        ompf_track_order_free(&o);
        free(stack);
        if (rc)
            return ompf_error_set(err, OMPF_EIO, "OTF2 export: writing the events failed: %s",
                                  strerror(errno));
    }
    return 0;
}

/* ---- definitions: strings first, then the records that name them ------ */

static uint32_t S(ctx_t *c, const char *s)
{
    uint32_t id = c->nstr++;
    if (c->pass == PASS_STRINGS)
        OTF2_GlobalDefWriter_WriteString(c->g, id, s ? s : "");
    return id;
}

static OTF2_RegionRole region_role(int32_t kind)
{
    switch (kind) {
    case OMPF_CK_PARALLEL: return OTF2_REGION_ROLE_PARALLEL;
    case OMPF_CK_TASK: return OTF2_REGION_ROLE_TASK;
    case OMPF_CK_LOOP:
    case OMPF_CK_TASKLOOP: return OTF2_REGION_ROLE_LOOP;
    case OMPF_CK_SECTIONS: return OTF2_REGION_ROLE_SECTIONS;
    case OMPF_CK_SINGLE: return OTF2_REGION_ROLE_SINGLE;
    case OMPF_CK_MASKED: return OTF2_REGION_ROLE_MASTER;
    default: return OTF2_REGION_ROLE_UNKNOWN;
    }
}

#define W(call) \
    do { \
        if (c->pass == PASS_DEFS) \
            (void)(call); \
    } while (0)

static void write_defs(ctx_t *c, uint64_t trace_end)
{
    c->nstr = 0;
    W(OTF2_GlobalDefWriter_WriteClockProperties(c->g, 1000000000u, 0, trace_end + 1,
                                                OTF2_UNDEFINED_TIMESTAMP));
    uint32_t s_empty = S(c, "");
    uint32_t a_xu = S(c, "xu"), a_xud = S(c, "XU id (as in the JSON and CSV exports)");
    uint32_t a_parts = S(c, "parts"), a_partsd = S(c, "parts the XU ran in (suspended and resumed)");
    uint32_t a_label = S(c, "label"), a_labeld = S(c, "the XU's dotted label");
    W(OTF2_GlobalDefWriter_WriteAttribute(c->g, ATTR_XU, a_xu, a_xud, OTF2_TYPE_UINT64));
    W(OTF2_GlobalDefWriter_WriteAttribute(c->g, ATTR_PARTS, a_parts, a_partsd, OTF2_TYPE_UINT32));
    W(OTF2_GlobalDefWriter_WriteAttribute(c->g, ATTR_LABEL, a_label, a_labeld,
                                          OTF2_TYPE_STRING));
    uint32_t a_start = S(c, "start_ns"),
             a_startd = S(c, "recorded start, when the Enter is at the previous XU's end "
                             "(the XU began inside that XU's closing counter read)");
    W(OTF2_GlobalDefWriter_WriteAttribute(c->g, ATTR_START, a_start, a_startd,
                                          OTF2_TYPE_UINT64));
    uint32_t root_name = S(c, "ompfuse export"), root_class = S(c, "export");
    W(OTF2_GlobalDefWriter_WriteSystemTreeNode(c->g, 0, root_name, root_class,
                                               OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    for (size_t k = 0; k < c->n; k++) {
        const ompf_profile_t *p = c->in[k].profile;
        const prof_t *pr = &c->pr[k];
        const char *host = ompf_meta_get(p, "hostname");
        uint32_t node_name = S(c, host ? host : "unknown host"), node_class = S(c, "node");
        W(OTF2_GlobalDefWriter_WriteSystemTreeNode(c->g, (uint32_t)k + 1, node_name, node_class,
                                                   0));
        const char *prog = ompf_meta_get(p, "program"), *run = ompf_meta_get(p, "run_id");
        char name[1024];
        snprintf(name, sizeof name, "%s run %s (%s)", prog ? prog : "profile", run ? run : "?",
                 c->in[k].path ? c->in[k].path : "");
        uint32_t gname = S(c, name);
        W(OTF2_GlobalDefWriter_WriteLocationGroup(c->g, (uint32_t)k, gname,
                                                  OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                                  (uint32_t)k + 1, OTF2_UNDEFINED_LOCATION_GROUP));
        for (uint32_t t = 0; t < pr->nloc; t++) {
            uint32_t thr = pr->lanes.thread_of[t], lane = pr->lanes.lane_of[t];
            const ompf_thread_t *th =
                thr < ompf_thread_count(p) ? ompf_thread_get_const(p, thr) : NULL;
            ompf_track_name(name, sizeof name, thr, th ? th->os_tid : -1, lane);
            uint32_t lname = S(c, name);
            W(OTF2_GlobalDefWriter_WriteLocation(c->g, pr->loc0 + t, lname,
                                                 OTF2_LOCATION_TYPE_CPU_THREAD, pr->nevents[t],
                                                 (uint32_t)k));
        }
        for (uint32_t r = 0; r < ompf_construct_count(p); r++) {
            const ompf_construct_t *con = ompf_construct_get(p, r);
            uint32_t rname = S(c, con->name);
            snprintf(name, sizeof name, "%s construct%s%s", ompf_construct_kind_name(con->kind),
                     con->function ? " in " : "", con->function ? con->function : "");
            uint32_t rdesc = S(c, name);
            uint32_t rfile = con->file ? S(c, con->file) : s_empty;
            W(OTF2_GlobalDefWriter_WriteRegion(c->g, pr->reg0 + r, rname, rname, rdesc,
                                               region_role(con->kind), OTF2_PARADIGM_OPENMP,
                                               OTF2_REGION_FLAG_NONE, rfile,
                                               (uint32_t)(con->line > 0 ? con->line : 0),
                                               (uint32_t)(con->line > 0 ? con->line : 0)));
        }
        for (uint32_t e = 0; e < ompf_event_count(p); e++) {
            const ompf_event_t *ev = ompf_event_get(p, e);
            snprintf(name, sizeof name, "value of the XU that leaves here; status %s%s%s",
                     ompf_event_status_name(ev->status), ev->reason ? ": " : "",
                     ev->reason ? ev->reason : "");
            uint32_t mname = S(c, ev->name), mdesc = S(c, name), munit = S(c, ompf_event_unit(ev));
            W(OTF2_GlobalDefWriter_WriteMetricMember(c->g, pr->met0 + e, mname, mdesc,
                                                     OTF2_METRIC_TYPE_USER,
                                                     OTF2_METRIC_ABSOLUTE_POINT, pr->vtype[e],
                                                     OTF2_BASE_DECIMAL, 0, munit));
        }
        for (uint32_t e = 0; e < ompf_event_count(p); e++) {
            OTF2_MetricMemberRef m = pr->met0 + e;
            W(OTF2_GlobalDefWriter_WriteMetricClass(c->g, pr->met0 + e, 1, &m,
                                                    OTF2_METRIC_SYNCHRONOUS,
                                                    OTF2_RECORDER_KIND_ABSTRACT));
        }
    }
}

/* Label strings, after all others (ids as label_base says). */
static int write_labels(ctx_t *c, uint32_t base)
{
    ompf_jw_label_t lb = {0};
    uint32_t id = base;
    for (size_t k = 0; k < c->n; k++) {
        const ompf_profile_t *p = c->in[k].profile;
        for (size_t i = 0; i < ompf_xu_count(p); i++) {
            const char *l = ompf_jw_label(&lb, p, ompf_xu_get(p, i)->label);
            if (!l || OTF2_GlobalDefWriter_WriteString(c->g, id++, l) != OTF2_SUCCESS) {
                ompf_jw_label_free(&lb);
                return -1;
            }
        }
    }
    ompf_jw_label_free(&lb);
    return 0;
}

/* Property names allow letters, digits and '_' in each "::" part. */
static void set_prop(OTF2_Archive *a, size_t k, const char *key, const char *value)
{
    char name[300];
    int n = snprintf(name, sizeof name, "OMPFUSE::P%zu::", k);
    for (const char *s = key; *s && n < (int)sizeof name - 1; s++)
        name[n++] = (char)((*s >= 'a' && *s <= 'z') ? *s - 32
                           : ((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')) ? *s
                                                                                    : '_');
    name[n] = 0;
    OTF2_Archive_SetProperty(a, name, value ? value : "", true);
}

static void set_properties(ctx_t *c)
{
    char key[64], val[2048];
    for (size_t k = 0; k < c->n; k++) {
        const ompf_profile_t *p = c->in[k].profile;
        set_prop(c->a, k, "path", c->in[k].path);
        if (c->in[k].salvage_note)
            set_prop(c->a, k, "salvage_note", c->in[k].salvage_note);
        for (size_t i = 0; i < ompf_meta_count(p); i++) {
            const char *mk, *mv;
            ompf_meta_at(p, i, &mk, &mv);
            set_prop(c->a, k, mk, mv);
        }
        for (uint32_t e = 0; e < ompf_event_count(p); e++) {
            const ompf_event_t *ev = ompf_event_get(p, e);
            snprintf(key, sizeof key, "event_%u", e);
            snprintf(val, sizeof val, "%s|%s|%s|%s", ev->name, ompf_event_status_name(ev->status),
                     ompf_event_unit(ev), ev->reason ? ev->reason : "");
            set_prop(c->a, k, key, val);
        }
    }
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void rm_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Plans ids per profile: locations, regions, metrics, value types. */
static int plan(ctx_t *c, uint64_t *trace_end, ompf_error_t *err)
{
    uint32_t loc = 0, reg = 0, met = 0;
    for (size_t k = 0; k < c->n; k++) {
        const ompf_profile_t *p = c->in[k].profile;
        prof_t *pr = &c->pr[k];
        if (ompf_lanes_build(p, &pr->lanes))
            return ompf_error_set(err, OMPF_ENOMEM, "OTF2 export: out of memory");
        uint32_t nth = pr->lanes.ntracks;
        for (size_t i = 0; i < ompf_xu_count(p); i++)
            if (ompf_xu_get(p, i)->end_ns > *trace_end)
                *trace_end = ompf_xu_get(p, i)->end_ns;
        pr->loc0 = loc, pr->nloc = nth, pr->reg0 = reg, pr->met0 = met;
        loc += nth, reg += (uint32_t)ompf_construct_count(p), met += (uint32_t)ompf_event_count(p);
        pr->nevents = calloc(nth ? nth : 1, sizeof *pr->nevents);
        pr->vtype = calloc(ompf_event_count(p) + 1, 1);
        if (!pr->nevents || !pr->vtype)
            return ompf_error_set(err, OMPF_ENOMEM, "OTF2 export: out of memory");
        for (uint32_t e = 0; e < ompf_event_count(p); e++)
            pr->vtype[e] = event_type(p, e);
    }
    return 0;
}

static int write_archive(ctx_t *c, const char *tmp, ompf_error_t *err)
{
    uint64_t trace_end = 0;
    int rc = plan(c, &trace_end, err);
    if (rc)
        return rc;
    c->pass = PASS_COUNT;
    write_defs(c, trace_end);
    uint32_t nstrings = c->nstr;

    c->a = OTF2_Archive_Open(tmp, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                             OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!c->a)
        return ompf_error_set(err, OMPF_EIO, "%s: cannot create the OTF2 archive: %s", tmp,
                              strerror(errno));
    OTF2_Archive_SetFlushCallbacks(c->a, &flush_cbs, NULL);
    OTF2_Archive_SetSerialCollectiveCallbacks(c->a);
    OTF2_Archive_SetCreator(c->a, "ompfuse " OMPF_VERSION_STRING);
    OTF2_Archive_SetDescription(c->a, "OpenMP execution units (XUs) with counter values");
    set_properties(c);
    if (OTF2_Archive_OpenEvtFiles(c->a) != OTF2_SUCCESS)
        return ompf_error_set(err, OMPF_EIO, "%s: cannot open the OTF2 event files: %s", tmp,
                              strerror(errno));
    rc = write_events(c, nstrings, err);
    if (OTF2_Archive_CloseEvtFiles(c->a) != OTF2_SUCCESS && !rc)
        rc = ompf_error_set(err, OMPF_EIO, "%s: writing the OTF2 events failed: %s", tmp,
                            strerror(errno));
    if (rc)
        return rc;
    /* readers expect a (here empty) local definition file per location */
    if (OTF2_Archive_OpenDefFiles(c->a) != OTF2_SUCCESS)
        return ompf_error_set(err, OMPF_EIO, "%s: cannot open the OTF2 definition files: %s",
                              tmp, strerror(errno));
    for (size_t k = 0; k < c->n; k++)
        for (uint32_t t = 0; t < c->pr[k].nloc; t++) {
            OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(c->a, c->pr[k].loc0 + t);
            if (d)
                OTF2_Archive_CloseDefWriter(c->a, d);
        }
    OTF2_Archive_CloseDefFiles(c->a);
    c->g = OTF2_Archive_GetGlobalDefWriter(c->a);
    if (!c->g)
        return ompf_error_set(err, OMPF_EIO, "%s: cannot write the OTF2 definitions: %s", tmp,
                              strerror(errno));
    c->pass = PASS_STRINGS;
    write_defs(c, trace_end);
    if (write_labels(c, nstrings))
        return ompf_error_set(err, OMPF_EIO, "%s: writing the OTF2 definitions failed: %s", tmp,
                              strerror(errno));
    c->pass = PASS_DEFS;
    write_defs(c, trace_end);
    OTF2_Archive_CloseGlobalDefWriter(c->a, c->g);
    c->g = NULL;
    OTF2_ErrorCode e = OTF2_Archive_Close(c->a);
    c->a = NULL;
    if (e != OTF2_SUCCESS)
        return ompf_error_set(err, OMPF_EIO, "%s: closing the OTF2 archive failed: %s", tmp,
                              OTF2_Error_GetDescription(e));
    return 0;
}

/* dir may be replaced only when it holds an archive this writer made. */
static int check_target(const char *dir, int *exists, ompf_error_t *err)
{
    struct stat st;
    *exists = 0;
    if (lstat(dir, &st) != 0)
        return errno == ENOENT ? 0
                               : ompf_error_set(err, OMPF_EIO, "%s: %s", dir, strerror(errno));
    char anchor[4096];
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", dir);
    if (!S_ISDIR(st.st_mode) || access(anchor, F_OK) != 0)
        return ompf_error_set(err, OMPF_EIO,
                              "%s: exists and is not an OTF2 archive; remove it or choose "
                              "another output",
                              dir);
    *exists = 1;
    return 0;
}

int ompf_export_otf2(const ompf_export_input_t *in, size_t n, const char *dir, ompf_error_t *err)
{
    if (!in || !dir || !*dir || !strcmp(dir, "-"))
        return ompf_error_set(err, OMPF_EINVAL,
                              "OTF2 export: an archive is a directory: give it a name with -o");
    int exists;
    int rc = check_target(dir, &exists, err);
    if (rc)
        return rc;
    char tmp[4096], old[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", dir, (long)getpid());
    snprintf(old, sizeof old, "%s.old.%ld", dir, (long)getpid());
    rm_tree(tmp);
    /* libotf2 makes the archive's directory itself; we check first that we
     * may, so that the message names the real cause */
    if (mkdir(tmp, 0777) != 0)
        return ompf_error_set(err, OMPF_EIO, "%s: cannot create: %s; check that the directory "
                              "exists and is writable", dir, strerror(errno));
    rmdir(tmp);
    OTF2_Error_RegisterCallback(otf2_quiet, NULL);
    ctx_t c = {.in = in, .n = n};
    c.pr = calloc(n ? n : 1, sizeof *c.pr);
    if (!c.pr)
        return ompf_error_set(err, OMPF_ENOMEM, "OTF2 export: out of memory");
    rc = write_archive(&c, tmp, err);
    if (c.a)
        OTF2_Archive_Close(c.a);
    for (size_t k = 0; k < n; k++)
        free(c.pr[k].nevents), free(c.pr[k].vtype), ompf_lanes_free(&c.pr[k].lanes);
    free(c.pr);
    if (!rc && exists && rename(dir, old) != 0)
        rc = ompf_error_set(err, OMPF_EIO, "%s: cannot replace: %s", dir, strerror(errno));
    if (!rc && rename(tmp, dir) != 0) {
        rc = ompf_error_set(err, OMPF_EIO, "%s: cannot rename %s to it: %s", dir, tmp,
                            strerror(errno));
        if (exists)
            rename(old, dir);
    }
    if (rc)
        rm_tree(tmp);
    else if (exists)
        rm_tree(old);
    return rc;
}
