/* Chrome trace event JSON (loads in ui.perfetto.dev and chrome://tracing):
 * a process per profile, a thread track per OS thread, one complete slice
 * per XU part on the thread the part ran on, with the XU's label,
 * construct, kind as arguments and its event values on its first part
 * (an older profile's XU that ran in parts is one span, which may need an
 * extra track of its thread, lanes.h).
 * Time between slices on a track is the thread's gap (runtime, waits,
 * serial code); its per-event totals are an instant at the thread's last
 * XU end.  Printed while walking the profile. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "lanes.h"
#include "perfetto_int.h"
#include "ompfuse/export.h"

/* The quoted argument names of the events, "prefix" + name, each with
 * its leading ',' and trailing ':' (made once: they repeat per XU). */
static char **arg_keys(const ompf_profile_t *p, const char *prefix)
{
    size_t n = ompf_event_count(p);
    char **k = calloc(n + 1, sizeof *k);
    for (size_t e = 0; k && e < n; e++) {
        size_t len = 0;
        FILE *m = open_memstream(&k[e], &len);
        if (!m)
            break;
        char name[512];
        snprintf(name, sizeof name, "%s%s", prefix, ompf_event_get(p, (uint32_t)e)->name);
        putc(',', m);
        ompf_json_string(m, name);
        putc(':', m);
        fclose(m);
    }
    for (size_t e = 0; k && e < n; e++)
        if (!k[e]) {
            for (size_t j = 0; j < n; j++)
                free(k[j]);
            free(k);
            return NULL;
        }
    return k;
}

static void free_keys(char **k)
{
    for (size_t e = 0; k && k[e]; e++)
        free(k[e]);
    free(k);
}

/* Arguments naming each event with its value (null when missing). */
static void put_values(FILE *f, size_t n, char **keys, const double *v)
{
    for (size_t e = 0; e < n; e++) {
        fputs_unlocked(keys[e], f);
        ompf_jw_num(f, v ? v[e] : OMPF_MISSING);
    }
}

static void put_process(FILE *f, const ompf_export_input_t *in, unsigned pid,
                        const ompf_lanes_t *l)
{
    const ompf_profile_t *p = in->profile;
    const char *prog = ompf_meta_get(p, "program"), *mode = ompf_meta_get(p, "mode");
    const char *base = prog && strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
    char name[1024];
    snprintf(name, sizeof name, "%s [%s%s] %s", base ? base : "profile", mode ? mode : "?",
             in->salvage_note ? ", TRUNCATED" : "", in->path ? in->path : "");
    fprintf(f, "{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_name\",\"args\":{\"name\":", pid);
    ompf_json_string(f, name);
    fprintf(f, "}},\n{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_sort_index\","
               "\"args\":{\"sort_index\":%u}}",
            pid, pid);
    for (uint32_t t = 0; t < l->ntracks; t++) {
        uint32_t thr = l->thread_of[t];
        const ompf_thread_t *th = thr < ompf_thread_count(p) ? ompf_thread_get_const(p, thr) : NULL;
        char tname[128];
        ompf_track_name(tname, sizeof tname, thr, th ? th->os_tid : -1, l->lane_of[t]);
        fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"thread_name\","
                   "\"args\":{\"name\":\"%s\"}}",
                pid, t + 1, tname);
        /* a thread's extra lanes right below it */
        fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"thread_sort_index\","
                   "\"args\":{\"sort_index\":%llu}}",
                pid, t + 1, (unsigned long long)thr * 65536 + l->lane_of[t]);
    }
    if (in->salvage_note) {
        fprintf(f, ",\n{\"ph\":\"i\",\"s\":\"p\",\"pid\":%u,\"tid\":0,\"ts\":0,"
                   "\"name\":\"TRUNCATED profile\",\"args\":{\"salvage_note\":",
                pid);
        ompf_json_string(f, in->salvage_note);
        fputs("}}", f);
    }
}

static int put_slices(FILE *f, const ompf_profile_t *p, unsigned pid, const ompf_lanes_t *l,
                      uint64_t *last_end, ompf_error_t *err)
{
    ompf_jw_label_t lb = {0};
    size_t nev = ompf_event_count(p);
    char **keys = arg_keys(p, "");
    if (!keys)
        return ompf_error_set(err, OMPF_ENOMEM, "Perfetto export: out of memory");
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        const ompf_construct_t *c = ompf_construct_get(p, x->type);
        const char *label = ompf_jw_label(&lb, p, x->label);
        if (!label) {
            ompf_jw_label_free(&lb);
            free_keys(keys);
            return ompf_error_set(err, OMPF_ENOMEM, "Perfetto export: out of memory");
        }
        uint32_t np = (uint32_t)(l->first[i + 1] - l->first[i]);
        for (uint32_t k = 0; k < np; k++) {
            size_t sl = l->first[i] + k;
            const ompf_part_t *pt = &l->part[sl];
            uint64_t ts = l->start[sl]; /* drawn start (lanes.h) */
            uint64_t dur = pt->end_ns > ts ? pt->end_ns - ts : 0;
            fputs(",\n{\"ph\":\"X\",\"pid\":", f);
            ompf_jw_u64(f, pid);
            fputs(",\"tid\":", f);
            ompf_jw_u64(f, l->track[sl] + 1);
            fputs(",\"ts\":", f);
            ompf_jw_us(f, ts);
            fputs(",\"dur\":", f);
            ompf_jw_us(f, dur);
            fprintf(f, ",\"cat\":\"%s\",\"name\":", ompf_xu_kind_name(x->kind));
            ompf_json_string(f, c ? c->name : "?");
            fputs(",\"args\":{\"xu\":", f);
            ompf_jw_u64(f, x->id);
            fprintf(f, ",\"label\":\"%s\",\"construct\":", label);
            ompf_json_string(f, c ? c->name : NULL);
            fprintf(f, ",\"kind\":\"%s\",\"thread\":%u,\"parts\":%u,\"cpu\":%d,"
                       "\"team_thread\":%u",
                    ompf_xu_kind_name(x->kind), pt->thread, x->parts, x->cpu, x->team_thread);
            if (np > 1)
                fprintf(f, ",\"part\":%u", k + 1);
            if (ts != pt->start_ns) {
                /* drawn from the previous slice's end: it began inside that
                   one's closing counter read (lanes.h) */
                fputs(",\"start_ns\":", f);
                ompf_jw_u64(f, pt->start_ns);
            }
            if (x->parts > 1 && np == 1)
                /* an older profile keeps a part count, not each part */
                fputs(",\"parts_note\":\"ran in several parts (suspended and resumed); the "
                      "profile records the first start and the last end, on the thread it "
                      "ended on\"",
                      f);
            if (k == 0) /* the XU's values, once: on its first part */
                put_values(f, nev, keys, ompf_xu_values_const(p, i));
            fputs("}}", f);
            if (pt->thread < l->nthreads && pt->end_ns > last_end[pt->thread])
                last_end[pt->thread] = pt->end_ns;
        }
    }
    ompf_jw_label_free(&lb);
    free_keys(keys);
    return 0;
}

/* The gap: what each thread counted outside every XU, shown where its
 * track ends. */
static int put_gaps(FILE *f, const ompf_profile_t *p, unsigned pid, const uint64_t *last_end)
{
    size_t nev = ompf_event_count(p);
    char **total = arg_keys(p, "total "), **gap = arg_keys(p, "gap ");
    if (!total || !gap) {
        free_keys(total);
        free_keys(gap);
        return OMPF_ENOMEM;
    }
    for (size_t t = 0; t < ompf_thread_count(p); t++) {
        const ompf_thread_t *th = ompf_thread_get_const(p, (uint32_t)t);
        fprintf(f, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":%u,\"tid\":%zu,\"ts\":", pid, t + 1);
        ompf_jw_us(f, last_end[t]);
        fputs(",\"cat\":\"thread\",\"name\":\"thread totals and gap\",\"args\":{\"note\":"
              "\"gap = counted on this thread outside every XU\"",
              f);
        put_values(f, nev, total, th->total);
        put_values(f, nev, gap, th->gap);
        fputs("}}", f);
    }
    free_keys(total);
    free_keys(gap);
    return 0;
}

int ompf_export_perfetto(const ompf_export_input_t *in, size_t n, unsigned flags, FILE *out,
                         ompf_error_t *err)
{
    if (!in || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_export_perfetto: no input or stream");
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"format\":\"ompfuse-perfetto\","
          "\"version\":1,\"profiles\":[",
          out);
    for (size_t k = 0; k < n; k++) {
        const ompf_profile_t *p = in[k].profile;
        fprintf(out, "%s{\"pid\":%zu,\"path\":", k ? "," : "", k + 1);
        ompf_json_string(out, in[k].path);
        fputs(",\"run_id\":", out);
        ompf_json_string(out, ompf_meta_get(p, "run_id"));
        fputs(",\"mode\":", out);
        ompf_json_string(out, ompf_meta_get(p, "mode"));
        fputs(",\"strategy\":", out);
        ompf_json_string(out, ompf_meta_get(p, "strategy"));
        fputs(",\"salvage_note\":", out);
        ompf_json_string(out, in[k].salvage_note);
        fputs("}", out);
    }
    fputs("]},\n\"traceEvents\":[\n", out);
    for (size_t k = 0; k < n; k++) {
        const ompf_profile_t *p = in[k].profile;
        unsigned pid = (unsigned)k + 1;
        if (k)
            fputs(",\n", out);
        ompf_lanes_t l;
        if (ompf_lanes_build(p, &l))
            return ompf_error_set(err, OMPF_ENOMEM, "Perfetto export: out of memory");
        put_process(out, &in[k], pid, &l);
        uint64_t *last_end = calloc(l.nthreads ? l.nthreads : 1, sizeof *last_end);
        int rc = last_end ? put_slices(out, p, pid, &l, last_end, err)
                          : ompf_error_set(err, OMPF_ENOMEM, "Perfetto export: out of memory");
        if (!rc && (put_gaps(out, p, pid, last_end) ||
                    ((flags & OMPF_EXPORT_COUNTERS) && ompf_perfetto_counters(out, p, pid))))
            rc = ompf_error_set(err, OMPF_ENOMEM, "Perfetto export: out of memory");
        free(last_end);
        ompf_lanes_free(&l);
        if (rc)
            return rc;
    }
    fputs("\n]}\n", out);
    if (ferror(out))
        return ompf_error_set(err, OMPF_EIO, "Perfetto export: write failed: %s",
                              strerror(errno));
    return 0;
}
