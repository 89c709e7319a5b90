/* The fusion report: its set-up from the matched inputs (types, event
 * providers and their notes), accessors, printing and destruction. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fz.h"

/* ---- report ------------------------------------------------------------- */

static void free_strv(char **v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void ompf_fuse_report_destroy(ompf_fuse_report_t *r)
{
    if (!r)
        return;
    free_strv(r->in_name, r->n_in);
    free(r->in_run_id);
    free(r->in_xus);
    free(r->types);
    free(r->type_in);
    free_strv(r->type_names, r->n_types);
    free_strv(r->type_keys, r->n_types);
    free(r->order);
    free_strv(r->ev_name, r->n_events);
    free(r->ev_src);
    free_strv(r->ev_also, r->n_events);
    free_strv(r->step_desc, r->n_steps);
    free(r->step_iter);
    free_strv(r->notes, r->n_notes);
    free(r);
}

size_t ompf_fuse_report_n_inputs(const ompf_fuse_report_t *r)
{
    return r ? r->n_in : 0;
}

size_t ompf_fuse_report_n_types(const ompf_fuse_report_t *r)
{
    return r ? r->n_types : 0;
}

const ompf_fuse_type_stats_t *ompf_fuse_report_type(const ompf_fuse_report_t *r,
                                                    size_t i)
{
    return (r && i < r->n_types) ? &r->types[i] : NULL;
}

int ompf_fuse_report_find_type(const ompf_fuse_report_t *r, const char *key)
{
    for (size_t i = 0; r && key && i < r->n_types; i++)
        if (!strcmp(r->types[i].key, key) || !strcmp(r->types[i].name, key))
            return (int)i;
    return -1;
}

const uint32_t *ompf_fuse_report_order(const ompf_fuse_report_t *r)
{
    return r ? r->order : NULL;
}

uint64_t ompf_fuse_report_fused(const ompf_fuse_report_t *r)
{
    return r ? r->out_xus : 0;
}

uint64_t ompf_fuse_report_unmatched(const ompf_fuse_report_t *r, size_t input)
{
    uint64_t s = 0;
    for (size_t t = 0; r && input < r->n_in && t < r->n_types; t++)
        s += r->types[t].in[input] - r->types[t].fused;
    return s;
}

uint32_t ompf_fuse_report_iterations(const ompf_fuse_report_t *r)
{
    uint32_t s = 0;
    for (size_t t = 0; r && t < r->n_types; t++)
        s += r->types[t].iterations;
    return s;
}

size_t ompf_fuse_report_n_notes(const ompf_fuse_report_t *r)
{
    return r ? r->n_notes : 0;
}

const char *ompf_fuse_report_note(const ompf_fuse_report_t *r, size_t i)
{
    return (r && i < r->n_notes) ? r->notes[i] : NULL;
}

void ompf_fuse_report_print(const ompf_fuse_report_t *r, FILE *f)
{
    if (!r)
        return;
    fprintf(f, "strategy %s", ompf_fuse_strategy_name(r->strategy));
    if (r->strategy == OMPF_FUSE_RANDOM ||
        r->strategy == OMPF_FUSE_BC_UNLABELED)
        fprintf(f, " (seed %" PRIu64 ")", r->seed);
    fprintf(f, ", %zu inputs", r->n_in);
    if (r->order && (r->strategy == OMPF_FUSE_BC ||
                     r->strategy == OMPF_FUSE_BC_UNLABELED)) {
        fprintf(f, ", order");
        for (size_t k = 0; k < r->n_in; k++)
            fprintf(f, " [%u]", r->order[k]);
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < r->n_in; i++)
        fprintf(f, "  [%zu] %s: run %016" PRIx64 ", %" PRIu64 " XUs\n", i,
                r->in_name[i], r->in_run_id[i], r->in_xus ? r->in_xus[i] : 0);
    if (r->n_events) {
        fprintf(f, "events in the result:\n");
        for (size_t e = 0; e < r->n_events; e++) {
            if (r->ev_src[e] < 0)
                fprintf(f, "  %-28s not measured by any input\n", r->ev_name[e]);
            else
                fprintf(f, "  %-28s from [%d]%s%s\n", r->ev_name[e],
                        r->ev_src[e], r->ev_also[e][0] ? ", also in " : "",
                        r->ev_also[e]);
        }
    }
    for (size_t s = 0; s < r->n_steps; s++)
        fprintf(f, "step %zu: %s; %u grid iterations\n", s + 1,
                r->step_desc[s], r->step_iter[s]);
    if (r->n_types) {
        fprintf(f, "types: fused XUs, unmatched per input%s\n",
                r->strategy == OMPF_FUSE_BC ||
                        r->strategy == OMPF_FUSE_BC_UNLABELED
                    ? ", grid iterations"
                    : "");
        for (size_t t = 0; t < r->n_types; t++) {
            const ompf_fuse_type_stats_t *ts = &r->types[t];
            uint64_t any = 0;
            for (size_t i = 0; i < r->n_in; i++)
                any |= ts->in[i];
            if (!any) /* constructs without XUs (parallel, single) */
                continue;
            fprintf(f, "  %-28s %10" PRIu64 "  unmatched", ts->name,
                    ts->fused);
            for (size_t i = 0; i < r->n_in; i++)
                fprintf(f, " [%zu] %" PRIu64, i, ts->in[i] - ts->fused);
            if (r->strategy == OMPF_FUSE_BC ||
                r->strategy == OMPF_FUSE_BC_UNLABELED)
                fprintf(f, "  iterations %u", ts->iterations);
            if (ts->label_dups)
                fprintf(f, "  duplicate labels %" PRIu64, ts->label_dups);
            fprintf(f, "\n");
        }
    }
    for (size_t i = 0; i < r->n_notes; i++)
        fprintf(f, "note: %s\n", r->notes[i]);
    fprintf(f, "fused XUs: %" PRIu64 "\n", r->out_xus);
}

/* ---- report setup ------------------------------------------------------- */

int fz_report_init(fz_ctx_t *c)
{
    ompf_fuse_report_t *r = calloc(1, sizeof *r);
    if (!r)
        return OMPF_ENOMEM;
    c->rep = r;
    r->n_in = c->n;
    r->strategy = c->opts->strategy;
    r->seed = c->opts->seed;
    r->in_name = calloc(c->n, sizeof *r->in_name);
    r->in_run_id = calloc(c->n, sizeof *r->in_run_id);
    r->in_xus = calloc(c->n, sizeof *r->in_xus);
    r->order = calloc(c->n, sizeof *r->order);
    if (!r->in_name || !r->in_run_id || !r->in_xus || !r->order)
        return OMPF_ENOMEM;
    for (size_t i = 0; i < c->n; i++) {
        char buf[64];
        const char *nm = c->runs[i].path;
        if (!nm) {
            snprintf(buf, sizeof buf, "input %zu", i);
            nm = buf;
        }
        if (!(r->in_name[i] = fz_strdup(nm)))
            return OMPF_ENOMEM;
        r->in_run_id[i] = ompf_profile_run_id(c->runs[i].p);
        r->in_xus[i] = c->runs[i].n_xu;
        r->order[i] = (uint32_t)i;
    }
    return 0;
}

int fz_report_types_events(fz_ctx_t *c)
{
    ompf_fuse_report_t *r = c->rep;
    size_t nt = c->n_types;
    r->types = calloc(nt ? nt : 1, sizeof *r->types);
    r->type_in = calloc((nt ? nt : 1) * c->n, sizeof *r->type_in);
    r->type_names = calloc(nt ? nt : 1, sizeof(char *));
    r->type_keys = calloc(nt ? nt : 1, sizeof(char *));
    if (!r->types || !r->type_in || !r->type_names || !r->type_keys)
        return OMPF_ENOMEM;
    r->n_types = nt;
    for (size_t t = 0; t < nt; t++) {
        const char *name =
            ompf_construct_name(c->runs[c->types[t].run].p, c->types[t].cidx);
        if (!(r->type_names[t] = fz_strdup(name)) ||
            !(r->type_keys[t] = fz_strdup(c->types[t].key)))
            return OMPF_ENOMEM;
        r->types[t].name = r->type_names[t];
        r->types[t].key = r->type_keys[t];
        r->types[t].in = r->type_in + t * c->n;
        for (size_t i = 0; i < c->n; i++)
            r->type_in[t * c->n + i] =
                c->runs[i].tstart[t + 1] - c->runs[i].tstart[t];
    }
    r->ev_name = calloc(c->n_events ? c->n_events : 1, sizeof(char *));
    r->ev_also = calloc(c->n_events ? c->n_events : 1, sizeof(char *));
    r->ev_src = calloc(c->n_events ? c->n_events : 1, sizeof(int32_t));
    if (!r->ev_name || !r->ev_also || !r->ev_src)
        return OMPF_ENOMEM;
    r->n_events = c->n_events;
    for (size_t g = 0; g < c->n_events; g++) {
        fz_event_t *E = &c->events[g];
        /* First run in the combination order that measured it wins. */
        E->provider = FZ_NONE;
        for (size_t k = 0; k < c->n && E->provider == FZ_NONE; k++)
            if (c->runs[c->order[k]].ev[g] >= 0)
                E->provider = c->order[k];
        char also[256];
        size_t l = 0;
        also[0] = 0;
        for (size_t k = 0; k < c->n && l + 1 < sizeof also; k++) {
            uint32_t q = c->order[k];
            if (q != E->provider && c->runs[q].ev[g] >= 0)
                l += (size_t)snprintf(also + l, sizeof also - l, "%s[%u]",
                                      l ? " " : "", q);
        }
        if (!(r->ev_name[g] = fz_strdup(E->name)) ||
            !(r->ev_also[g] = fz_strdup(also)))
            return OMPF_ENOMEM;
        r->ev_src[g] = E->provider == FZ_NONE ? -1 : (int32_t)E->provider;
        /* Inputs that mark it measured but have no value for it. */
        char empty[256];
        l = 0;
        empty[0] = 0;
        for (size_t k = 0; k < c->n && l + 1 < sizeof empty; k++) {
            uint32_t q = c->order[k];
            if (c->runs[q].novals[g])
                l += (size_t)snprintf(empty + l, sizeof empty - l, "%s%s",
                                      l ? ", " : "", r->in_name[q]);
        }
        if (E->provider == FZ_NONE && l) {
            if (fz_note(r,
                        "warning: event %s was not measured by any input "
                        "(marked counted in %s, but no XU has a value for "
                        "it); it stays in the result with status failed and "
                        "no values",
                        E->name, empty))
                return OMPF_ENOMEM;
        } else if (E->provider == FZ_NONE) {
            const ompf_profile_t *p = c->runs[E->first].p;
            const ompf_event_t *ev =
                ompf_event_get(p, (uint32_t)ompf_event_find(p, E->name));
            if (fz_note(r,
                        "warning: event %s was not measured by any input "
                        "(failed in all%s%s); it stays in the result with "
                        "status failed and no values",
                        E->name, ev->reason ? ": " : "",
                        ev->reason ? ev->reason : ""))
                return OMPF_ENOMEM;
        } else {
            if (l && fz_note(r,
                             "event %s is marked counted in %s, but no XU "
                             "there has a value for it: its values come "
                             "from %s",
                             E->name, empty, r->in_name[E->provider]))
                return OMPF_ENOMEM;
            const ompf_event_t *ev = ompf_event_get(
                c->runs[E->provider].p, (uint32_t)c->runs[E->provider].ev[g]);
            if (ev->status != OMPF_EV_COUNTED &&
                fz_note(r, "warning: the values of %s come from %s where its "
                           "status is %s",
                        E->name, r->in_name[E->provider],
                        ompf_event_status_name(ev->status)))
                return OMPF_ENOMEM;
        }
    }
    return 0;
}
