/* Pass-1 chunk decoders of the profile reader: metadata, events, sources,
 * constructs, labels (version 1 LABELS and version 2 PATHS), threads and
 * END; each checks its payload and collects or stores what it decodes. */
#include <stdio.h>
#include <stdlib.h>

#include "file_read.h"

/* ---- pass 1 decoders -------------------------------------------------- */

int rd_dec_meta(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    if (ompf_meta_count(r->p) + count > OMPF_MAX_META)
        return rd_over_limit(r, "metadata entries", ompf_meta_count(r->p) + count,
                          "OMPF_MAX_META", OMPF_MAX_META);
    for (uint32_t i = 0; i < count; i++) {
        int o = 0;
        char *k = fmt_cur_str(c, &o);
        char *v = k ? fmt_cur_str(c, &o) : NULL;
        if (!k || !v) {
            free(k);
            free(v);
            return o ? rd_oom(r) : rd_finish_payload(r, c);
        }
        int rc = ompf_meta_set(r->p, k, v);
        free(k);
        free(v);
        if (rc)
            return rc == OMPF_ENOMEM ? rd_oom(r)
                                     : rd_fail(r, OMPF_EFORMAT, "invalid metadata entry %u", i);
    }
    return rd_finish_payload(r, c);
}

int rd_dec_events(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    int first = !r->have_events;
    if (count > OMPF_MAX_EVENTS)
        return rd_over_limit(r, "events", count, "OMPF_MAX_EVENTS", OMPF_MAX_EVENTS);
    if (!first && count != ompf_event_count(r->p))
        return rd_fail(r, OMPF_EFORMAT, "lists %u events but the first EVENTS chunk listed %zu; "
                    MALFORMED, count, ompf_event_count(r->p));
    if (first) {
        r->ev_source = calloc(count + 1, sizeof *r->ev_source);
        if (!r->ev_source)
            return rd_oom(r);
    }
    int rc = 0;
    for (uint32_t i = 0; i < count && !rc; i++) {
        int o = 0, has_reason = 0;
        char *name = fmt_cur_str(c, &o);
        uint64_t pe_type = fmt_cur_uv(c), config = fmt_cur_uv(c), config1 = fmt_cur_uv(c),
                 config2 = fmt_cur_uv(c), pe_flags = fmt_cur_uv(c);
        int64_t status = fmt_cur_sv(c);
        char *reason = name && !c->bad ? fmt_cur_optstr(c, &has_reason, &o) : NULL;
        int64_t source = fmt_cur_sv(c);
        if (o)
            rc = rd_oom(r);
        else if (!name || c->bad || (has_reason && !reason))
            rc = rd_finish_payload(r, c);
        else if (pe_type > UINT32_MAX || pe_flags > UINT32_MAX)
            rc = rd_fail(r, OMPF_ERANGE, "event '%s' has an out-of-range perf type or flags",
                      name);
        else if (status < 0 || status >= OMPF_EV_STATUS_COUNT)
            rc = rd_fail(r, OMPF_ERANGE, "event '%s' has status %lld, outside 0..%d", name,
                      (long long)status, OMPF_EV_STATUS_COUNT - 1);
        else if (source < -1 || source > INT32_MAX)
            rc = rd_fail(r, OMPF_ERANGE, "event '%s' has source %lld, out of range", name,
                      (long long)source);
        else if (first) {
            ompf_event_t ev = {
                .name = name, .pe_type = (uint32_t)pe_type, .config = config,
                .config1 = config1, .config2 = config2, .pe_flags = (uint32_t)pe_flags,
                .status = (int32_t)status, .reason = reason, .source = -1,
            };
            uint32_t idx;
            int arc = ompf_event_add(r->p, &ev, &idx);
            if (arc == OMPF_ENOMEM)
                rc = rd_oom(r);
            else if (arc)
                rc = rd_fail(r, OMPF_EFORMAT, "event %u ('%s') cannot be added (%s; duplicate "
                          "name?)", i, name, ompf_strerror(arc));
        } else if (strcmp(name, ompf_event_get(r->p, i)->name)) {
            rc = rd_fail(r, OMPF_EFORMAT, "event %u is '%s' but the first EVENTS chunk named it "
                      "'%s'; " MALFORMED, i, name, ompf_event_get(r->p, i)->name);
        } else if (ompf_event_set_status(r->p, i, (int32_t)status, reason)) {
            rc = rd_oom(r);
        }
        if (!rc)
            r->ev_source[i] = (int32_t)source;
        free(name);
        free(reason);
    }
    r->have_events = 1;
    return rc ? rc : rd_finish_payload(r, c);
}

int rd_dec_sources(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    if (ompf_source_count(r->p) + count > OMPF_MAX_SOURCES)
        return rd_over_limit(r, "provenance sources", ompf_source_count(r->p) + count,
                          "OMPF_MAX_SOURCES", OMPF_MAX_SOURCES);
    for (uint32_t i = 0; i < count; i++) {
        int o = 0;
        uint64_t run_id = fmt_cur_uv(c);
        char *path = fmt_cur_str(c, &o);
        if (!path)
            return o ? rd_oom(r) : rd_finish_payload(r, c);
        ompf_source_t s = {.run_id = run_id, .path = path};
        uint32_t idx;
        int rc = ompf_source_add(r->p, &s, &idx);
        free(path);
        if (rc)
            return rc == OMPF_ENOMEM ? rd_oom(r)
                                     : rd_fail(r, OMPF_EFORMAT, "source %u cannot be added (%s)",
                                            i, ompf_strerror(rc));
    }
    return rd_finish_payload(r, c);
}

static int str_eq(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

int rd_dec_constructs(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    int rc = 0;
    for (uint32_t i = 0; i < count && !rc; i++) {
        int o = 0, has_file = 0, has_fn = 0, has_name = 0;
        uint64_t id = fmt_cur_uv(c);
        char *module = fmt_cur_str(c, &o);
        char *build_id = module ? fmt_cur_str(c, &o) : NULL;
        uint64_t offset = fmt_cur_uv(c);
        int64_t kind = fmt_cur_sv(c);
        char *file = build_id ? fmt_cur_optstr(c, &has_file, &o) : NULL;
        int64_t line = fmt_cur_sv(c);
        char *fn = build_id ? fmt_cur_optstr(c, &has_fn, &o) : NULL;
        char *name = build_id ? fmt_cur_optstr(c, &has_name, &o) : NULL;
        if (o)
            rc = rd_oom(r);
        else if (!module || !build_id || c->bad)
            rc = rd_finish_payload(r, c);
        else if (kind < 0 || kind >= OMPF_CK_COUNT)
            rc = rd_fail(r, OMPF_ERANGE, "construct id %llu has kind %lld, outside 0..%d",
                      (unsigned long long)id, (long long)kind, OMPF_CK_COUNT - 1);
        else if (line < INT32_MIN || line > INT32_MAX)
            rc = rd_fail(r, OMPF_ERANGE, "construct id %llu has line %lld, out of range",
                      (unsigned long long)id, (long long)line);
        else {
            uint32_t idx = (uint32_t)ompf_construct_count(r->p), old;
            if (fmt_idmap_put(&r->con_map, id, idx, &old))
                rc = rd_oom(r);
            else if (old != NONE32) {
                /* The same construct written by several streams. */
                const ompf_construct_t *e = ompf_construct_get(r->p, old);
                if (!str_eq(e->module, module) || !str_eq(e->build_id, build_id) ||
                    e->offset != offset || e->kind != kind)
                    rc = rd_fail(r, OMPF_EFORMAT, "construct id %llu is defined twice with "
                              "different content; " MALFORMED, (unsigned long long)id);
            } else if (idx >= OMPF_MAX_CONSTRUCTS) {
                rc = rd_over_limit(r, "constructs", (uint64_t)idx + 1, "OMPF_MAX_CONSTRUCTS",
                                OMPF_MAX_CONSTRUCTS);
            } else {
                ompf_construct_t k = {
                    .module = module, .build_id = build_id, .offset = offset,
                    .kind = (int32_t)kind, .file = has_file ? file : NULL,
                    .line = (int32_t)line, .function = has_fn ? fn : NULL,
                    .name = has_name && name && *name ? name : NULL,
                };
                int arc = ompf_construct_add(r->p, &k, &idx);
                if (arc == OMPF_ENOMEM)
                    rc = rd_oom(r);
                else if (arc)
                    rc = rd_fail(r, OMPF_EFORMAT, "construct id %llu cannot be added (%s)",
                              (unsigned long long)id, ompf_strerror(arc));
            }
        }
        free(module);
        free(build_id);
        free(file);
        free(fn);
        free(name);
    }
    return rc ? rc : rd_finish_payload(r, c);
}

int rd_dec_labels(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    if (rd_grow((void **)&r->lab_in, &r->cap_lab_in, count, sizeof *r->lab_in))
        return rd_oom(r);
    fmt_label_rec_t *l = r->lab_in;
    uint64_t prev = 0;
    for (uint32_t i = 0; i < count; i++) {
        l[i].id = prev + (uint64_t)fmt_cur_sv(c);
        prev = l[i].id;
    }
    for (uint32_t i = 0; i < count; i++)
        l[i].parent = l[i].id - (uint64_t)fmt_cur_sv(c);
    prev = 0;
    for (uint32_t i = 0; i < count; i++) {
        l[i].comp = prev + (uint64_t)fmt_cur_sv(c);
        prev = l[i].comp;
    }
    int rc = rd_finish_payload(r, c);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < count; i++)
        if (l[i].id == 0)
            return rd_fail(r, OMPF_EFORMAT, "a label node has id 0, which is reserved for the "
                        "root; " MALFORMED);
    return rd_add_labels(r, l, count);
}


/* Starts column m at c's position, for n items, and moves c past it
 * (skip_values: the items are event values, version 1 layout only). */
void rd_mcol_begin(const rd_t *r, mcol_t *m, fmt_cur_t *c, uint64_t n, int has_mode,
                       int skip_values)
{
    memset(m, 0, sizeof *m);
    uint64_t mode = has_mode && r->version >= 2 ? fmt_cur_uv(c) : 0;
    if (mode == 1 && n >= 2) {
        m->constant = 1;
        m->first = fmt_cur_uv(c);
        m->rest = fmt_cur_uv(c);
        m->c = *c;
        return;
    }
    if (mode != 0)
        c->bad = 1;
    m->c = *c;
    if (skip_values)
        fmt_cur_skip_values(c, n);
    else
        fmt_cur_skip_uv(c, n);
}

/* Version 2 PATHS: each record is a chain of 1..FMT_PATH_MAX label nodes
 * with consecutive ids; expanded into label records. */
int rd_dec_paths(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    mcol_t mn, mf, mp;
    rd_mcol_begin(r, &mn, c, count, 1, 0);
    rd_mcol_begin(r, &mf, c, count, 1, 0);
    rd_mcol_begin(r, &mp, c, count, 1, 0);
    if (c->bad)
        return rd_finish_payload(r, c);
    /* node counts first: they size the component columns */
    unsigned char *nn = malloc(count ? count : 1);
    if (!nn)
        return rd_oom(r);
    uint64_t nodes = 0, per[FMT_PATH_MAX] = {0};
    for (uint32_t i = 0; i < count; i++) {
        uint64_t k = mcol_uv(&mn);
        if (mn.c.bad) {
            free(nn);
            return rd_finish_payload(r, &mn.c);
        }
        if (k == 0 || k > FMT_PATH_MAX) {
            free(nn);
            return rd_fail(r, OMPF_EFORMAT, "a label path has %llu nodes (1..%u allowed); "
                        MALFORMED, (unsigned long long)k, FMT_PATH_MAX);
        }
        nn[i] = (unsigned char)k;
        nodes += k;
        for (uint64_t j = 0; j < k; j++)
            per[j]++;
    }
    mcol_t mc[FMT_PATH_MAX];
    for (unsigned j = 0; j < FMT_PATH_MAX; j++)
        rd_mcol_begin(r, &mc[j], c, per[j], 1, 0);
    int rc = rd_finish_payload(r, c);
    if (!rc && rd_grow((void **)&r->lab_in, &r->cap_lab_in, nodes, sizeof *r->lab_in))
        rc = rd_oom(r);
    if (rc) {
        free(nn);
        return rc;
    }
    fmt_label_rec_t *l = r->lab_in;
    uint64_t first = 0, parent = 0, prevc[FMT_PATH_MAX] = {0};
    size_t at = 0;
    for (uint32_t i = 0; i < count && !rc; i++) {
        first += (uint64_t)mcol_sv(&mf);
        parent += (uint64_t)mcol_sv(&mp);
        if (first == 0 || first + (nn[i] - 1) < first)
            rc = rd_fail(r, OMPF_EFORMAT, "a label path has id 0, which is reserved for the "
                      "root, or its ids wrap around; " MALFORMED);
        for (unsigned j = 0; j < nn[i] && !rc; j++) {
            prevc[j] += (uint64_t)mcol_sv(&mc[j]);
            l[at].id = first + j;
            l[at].parent = j ? first + j - 1 : parent;
            l[at].comp = prevc[j];
            at++;
        }
    }
    free(nn);
    if (!rc && (mf.c.bad || mp.c.bad))
        rc = rd_finish_payload(r, mf.c.bad ? &mf.c : &mp.c);
    for (unsigned j = 0; j < FMT_PATH_MAX && !rc; j++)
        if (mc[j].c.bad)
            rc = rd_finish_payload(r, &mc[j].c);
    return rc ? rc : rd_add_labels(r, l, at);
}

int rd_dec_threads(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    size_t nev = ompf_event_count(r->p);
    if (r->n_th + count > OMPF_MAX_THREADS)
        return rd_over_limit(r, "thread records", r->n_th + count, "OMPF_MAX_THREADS",
                          OMPF_MAX_THREADS);
    if (rd_grow((void **)&r->th, &r->cap_th, r->n_th + count, sizeof *r->th))
        return rd_oom(r);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t index = fmt_cur_uv(c);
        int64_t os_tid = fmt_cur_sv(c);
        uint64_t n = fmt_cur_uv(c);
        if (c->bad)
            return rd_finish_payload(r, c);
        if (n != nev)
            return rd_fail(r, OMPF_EFORMAT, "thread %llu carries %llu event totals but the "
                        "profile has %zu events; " MALFORMED, (unsigned long long)index,
                        (unsigned long long)n, nev);
        if (os_tid < INT32_MIN || os_tid > INT32_MAX)
            return rd_fail(r, OMPF_ERANGE, "thread %llu has OS thread id %lld, out of range",
                        (unsigned long long)index, (long long)os_tid);
        /* Each value takes at least one byte: bounded by the payload. */
        if ((uint64_t)(c->end - c->p) < 4 * n)
            return rd_finish_payload(r, (c->bad = 1, c));
        thread_rec_t *t = &r->th[r->n_th];
        t->index = index;
        t->os_tid = (int32_t)os_tid;
        t->vals = malloc((4 * nev + 1) * sizeof *t->vals);
        if (!t->vals)
            return rd_oom(r);
        r->n_th++;
        for (size_t k = 0; k < 4 * nev; k++)
            t->vals[k] = fmt_cur_value(c);
        if (c->bad)
            return rd_finish_payload(r, c);
    }
    return rd_finish_payload(r, c);
}

int rd_dec_end(rd_t *r, fmt_cur_t *c)
{
    r->end_xus = fmt_cur_uv(c);
    r->end_chunks = fmt_cur_uv(c);
    int rc = rd_finish_payload(r, c);
    if (rc)
        return rc;
    if (r->end_chunks != r->chunks - 1)
        return rd_fail(r, OMPF_EFORMAT, "END says %llu chunks precede it but %llu do; " MALFORMED,
                    (unsigned long long)r->end_chunks, (unsigned long long)(r->chunks - 1));
    if (r->end_xus != r->xus_in_chunks)
        return rd_fail(r, OMPF_EFORMAT, "END says %llu XUs were written but the XUS chunks hold "
                    "%llu; " MALFORMED, (unsigned long long)r->end_xus,
                    (unsigned long long)r->xus_in_chunks);
    r->have_end = 1;
    return 0;
}

int rd_dec_exact(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    char why[300];
    int rc = fmt_exact_decode(&r->exact, c, count, why, sizeof why);
    if (rc == OMPF_ENOMEM)
        return rd_oom(r);
    if (rc)
        return rd_fail(r, rc, "%s; " MALFORMED, why);
    return rd_finish_payload(r, c);
}

int rd_dec_parts(rd_t *r, fmt_cur_t *c, uint32_t count)
{
    const char *what = "";
    /* A lean profile keeps no parts (they are checked, not stored); a
     * packed one does. */
    int rc = fmt_parts_decode(ompf__keeps_parts(r->p) ? &r->parts : NULL, c, count, &what);
    if (rc == OMPF_ENOMEM)
        return rd_oom(r);
    if (rc)
        return rd_fail(r, rc, "%s; " MALFORMED, what);
    return rd_finish_payload(r, c);
}

int rd_attach_parts(rd_t *r)
{
    char msg[200] = "";
    r->chunk_type = 0;
    int rc = fmt_parts_claim(&r->parts, r->p, r->truncated, &r->parts_dropped, msg, sizeof msg);
    if (rc == OMPF_ENOMEM)
        return rd_oom(r);
    if (rc)
        return rd_fail(r, rc, "%s; " MALFORMED, msg);
    rd_release_restart(r);
    size_t ready = 0; /* XUs before it are sealed (packed) */
    for (size_t k = 0; k < r->n_parts_loc; k++) {
        const xus_loc_t *loc = &r->parts_loc[k];
        rd_release(r, loc->off);
        r->chunk_index = loc->chunk;
        r->chunk_off = loc->off;
        r->chunk_type = FMT_CHUNK_PARTS;
        fmt_cur_t c;
        const char *what = "";
        if ((rc = rd_payload(r, &loc->h, r->buf + loc->off + FMT_CHUNK_HEADER_SIZE, &c)))
            return rc;
        /* pass 1 decoded these very records without error */
        if ((rc = fmt_parts_fill(&r->parts, r->p, &c, loc->h.count, &what)))
            return rd_fail(r, rc, "%s", what);
        /* packed: the XUs whose parts are all here are sealed now, and
           the memory of their unpacked parts given back (pack.c) */
        if (r->p->pk_open && ((rc = fmt_parts_ready(&r->parts, r->p, &ready)) ||
                              (rc = ompf__pack_seal_upto(r->p, ready))))
            return rd_oom(r);
    }
    r->chunk_type = 0;
    const char *what = "";
    rc = fmt_parts_order(&r->parts, r->p, ready, &what);
    if (rc == OMPF_ENOMEM)
        return rd_oom(r);
    return rc ? rd_fail(r, rc, "%s", what) : 0;
}
