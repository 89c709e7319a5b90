/* JSON export: one document, printed while walking the profile (one XU per
 * line), so memory does not grow with the XU count.  Schema: docs/export.md. */
#include <errno.h>
#include <string.h>

#include "jsonw.h"
#include "ompfuse/export.h"

static void put_meta(FILE *f, const ompf_profile_t *p)
{
    fputs("{", f);
    for (size_t i = 0; i < ompf_meta_count(p); i++) {
        const char *k, *v;
        ompf_meta_at(p, i, &k, &v);
        fputs(i ? "," : "", f);
        ompf_json_string(f, k);
        putc(':', f);
        ompf_json_string(f, v);
    }
    fputs("}", f);
}

static void put_events(FILE *f, const ompf_profile_t *p)
{
    fputs("[", f);
    for (size_t e = 0; e < ompf_event_count(p); e++) {
        const ompf_event_t *ev = ompf_event_get(p, (uint32_t)e);
        fprintf(f, "%s\n  {\"index\":%zu,\"name\":", e ? "," : "", e);
        ompf_json_string(f, ev->name);
        fprintf(f, ",\"status\":\"%s\",\"reason\":", ompf_event_status_name(ev->status));
        ompf_json_string(f, ev->reason);
        fprintf(f, ",\"unit\":\"%s\",\"source\":", ompf_event_unit(ev));
        if (ev->source >= 0)
            fprintf(f, "%d", ev->source);
        else
            fputs("null", f);
        fprintf(f,
                ",\"perf_type\":%u,\"config\":%llu,\"config1\":%llu,\"config2\":%llu,"
                "\"flags\":%u}",
                ev->pe_type, (unsigned long long)ev->config, (unsigned long long)ev->config1,
                (unsigned long long)ev->config2, ev->pe_flags);
    }
    fputs("]", f);
}

static void put_sources(FILE *f, const ompf_profile_t *p)
{
    fputs("[", f);
    for (size_t s = 0; s < ompf_source_count(p); s++) {
        const ompf_source_t *src = ompf_source_get(p, (uint32_t)s);
        fprintf(f, "%s\n  {\"index\":%zu,\"run_id\":\"%016llx\",\"path\":", s ? "," : "", s,
                (unsigned long long)src->run_id);
        ompf_json_string(f, src->path);
        fputs("}", f);
    }
    fputs("]", f);
}

static void put_constructs(FILE *f, const ompf_profile_t *p)
{
    fputs("[", f);
    for (size_t i = 0; i < ompf_construct_count(p); i++) {
        const ompf_construct_t *c = ompf_construct_get(p, (uint32_t)i);
        fprintf(f, "%s\n  {\"index\":%zu,\"name\":", i ? "," : "", i);
        ompf_json_string(f, c->name);
        fprintf(f, ",\"kind\":\"%s\",\"file\":", ompf_construct_kind_name(c->kind));
        ompf_json_string(f, c->file);
        fprintf(f, ",\"line\":%d,\"function\":", c->line);
        ompf_json_string(f, c->function);
        fputs(",\"module\":", f);
        ompf_json_string(f, c->module);
        fputs(",\"build_id\":", f);
        ompf_json_string(f, c->build_id);
        fprintf(f, ",\"offset\":%llu}", (unsigned long long)c->offset);
    }
    fputs("]", f);
}

/* p: the profile whose XU xi the row is, for its exact counts (NULL for
 * thread totals, which are doubles). */
static void put_row(FILE *f, const double *v, size_t n, const ompf_profile_t *p, size_t xi)
{
    putc('[', f);
    for (size_t e = 0; e < n; e++) {
        uint64_t u;
        if (e)
            putc(',', f);
        if (p && v && v[e] >= 9007199254740992.0 && ompf_xu_value_u64(p, xi, (uint32_t)e, &u))
            ompf_jw_u64(f, u);
        else
            ompf_jw_num(f, v ? v[e] : OMPF_MISSING);
    }
    putc(']', f);
}

static void put_threads(FILE *f, const ompf_profile_t *p)
{
    size_t nev = ompf_event_count(p);
    fputs("[", f);
    for (size_t i = 0; i < ompf_thread_count(p); i++) {
        const ompf_thread_t *t = ompf_thread_get_const(p, (uint32_t)i);
        fprintf(f, "%s\n  {\"index\":%u,\"os_tid\":%d,\"total\":", i ? "," : "", t->index,
                t->os_tid);
        put_row(f, t->total, nev, NULL, 0);
        fputs(",\"gap\":", f);
        put_row(f, t->gap, nev, NULL, 0);
        fputs(",\"enabled_ns\":", f);
        put_row(f, t->enabled_ns, nev, NULL, 0);
        fputs(",\"running_ns\":", f);
        put_row(f, t->running_ns, nev, NULL, 0);
        fputs("}", f);
    }
    fputs("]", f);
}

static int put_xus(FILE *f, const ompf_profile_t *p, ompf_error_t *err)
{
    size_t nev = ompf_event_count(p), nsrc = ompf_source_count(p);
    ompf_jw_label_t lb = {0};
    fputs("[", f);
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        const char *label = ompf_jw_label(&lb, p, x->label);
        if (!label) {
            ompf_jw_label_free(&lb);
            return ompf_error_set(err, OMPF_ENOMEM, "JSON export: out of memory");
        }
        fprintf(f, "%s\n  {\"id\":%llu,\"type\":%u,\"kind\":\"%s\",\"label\":\"%s\","
                   "\"thread\":%u,\"team_thread\":%u,\"team_size\":%u,\"parts\":%u,"
                   "\"cpu\":%d,\"core\":%d,\"numa\":%d,\"start_ns\":%llu,\"end_ns\":%llu,"
                   "\"iter_start\":%llu,\"iter_count\":%llu,\"values\":",
                i ? "," : "", (unsigned long long)x->id, x->type, ompf_xu_kind_name(x->kind),
                label, x->thread, x->team_thread, x->team_size, x->parts, x->cpu, x->core,
                x->numa, (unsigned long long)x->start_ns, (unsigned long long)x->end_ns,
                (unsigned long long)x->iter_start, (unsigned long long)x->iter_count);
        put_row(f, ompf_xu_values_const(p, i), nev, p, i);
        if (ompf_xu_has_parts(p, i)) {
            /* [thread, start_ns, end_ns] per part; absent: one span */
            uint32_t np;
            ompf_part_t one;
            const ompf_part_t *pt = ompf_xu_parts(p, i, &np, &one);
            fputs(",\"part_list\":[", f);
            for (uint32_t k = 0; k < np; k++)
                fprintf(f, "%s[%u,%llu,%llu]", k ? "," : "", pt[k].thread,
                        (unsigned long long)pt[k].start_ns, (unsigned long long)pt[k].end_ns);
            fputs("]", f);
        }
        if (nsrc) {
            const uint64_t *pv = ompf_xu_provenance_const(p, i);
            fputs(",\"provenance\":[", f);
            for (size_t s = 0; s < nsrc; s++) {
                fputs(s ? "," : "", f);
                if (pv[s] == OMPF_NONE64)
                    fputs("null", f);
                else
                    fprintf(f, "%llu", (unsigned long long)pv[s]);
            }
            putc(']', f);
        }
        putc('}', f);
    }
    fputs("]", f);
    ompf_jw_label_free(&lb);
    return 0;
}

int ompf_export_json(const ompf_export_input_t *in, size_t n, unsigned flags, FILE *out,
                     ompf_error_t *err)
{
    if (!in || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_export_json: no input or stream");
    fputs("{\"format\":\"ompfuse-export\",\"version\":1,\"time_unit\":\"ns\",\"profiles\":[", out);
    for (size_t k = 0; k < n; k++) {
        const ompf_profile_t *p = in[k].profile;
        fputs(k ? ",\n{\"path\":" : "\n{\"path\":", out);
        ompf_json_string(out, in[k].path);
        fprintf(out, ",\"truncated\":%s,\"salvage_note\":", in[k].salvage_note ? "true" : "false");
        ompf_json_string(out, in[k].salvage_note);
        fputs(",\n\"metadata\":", out);
        put_meta(out, p);
        fputs(",\n\"events\":", out);
        put_events(out, p);
        fputs(",\n\"sources\":", out);
        put_sources(out, p);
        fputs(",\n\"constructs\":", out);
        put_constructs(out, p);
        fputs(",\n\"threads\":", out);
        put_threads(out, p);
        if (!(flags & OMPF_EXPORT_NO_XUS)) {
            fputs(",\n\"xus\":", out);
            int rc = put_xus(out, p, err);
            if (rc)
                return rc;
        }
        fputs("}", out);
    }
    fputs("]}\n", out);
    if (ferror(out))
        return ompf_error_set(err, OMPF_EIO, "JSON export: write failed: %s", strerror(errno));
    return 0;
}
