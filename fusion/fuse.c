/* ompf_fuse: the entry point (checks, matching, ordering, strategy,
 * output, in that order), strategy names and the helpers every part
 * shares.  The parts live in fuse_check.c (inputs), fuse_match.c (types,
 * events, union labels), fuse_order.c (BC order), fuse_output.c (the fused
 * profile) and fuse_report.c (the report). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fz.h"

static const char *const strategy_names[OMPF_FUSE_STRATEGY_COUNT] = {
    "ctc", "lgl", "bc", "bc-unlabeled", "random"};

const char *ompf_fuse_strategy_name(ompf_fuse_strategy_t s)
{
    return (unsigned)s < OMPF_FUSE_STRATEGY_COUNT ? strategy_names[s] : "?";
}

int ompf_fuse_strategy_parse(const char *s)
{
    for (int i = 0; s && i < OMPF_FUSE_STRATEGY_COUNT; i++)
        if (!strcmp(s, strategy_names[i]))
            return i;
    return -1;
}

void ompf_fuse_opts_init(ompf_fuse_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->strategy = OMPF_FUSE_LGL;
    o->seed = 1;
}

char *fz_strdup(const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

int fz_note(ompf_fuse_report_t *r, const char *fmt, ...)
{
    if (r->n_notes == r->cap_notes) {
        size_t cap = r->cap_notes ? 2 * r->cap_notes : 8;
        char **n = realloc(r->notes, cap * sizeof *n);
        if (!n)
            return OMPF_ENOMEM;
        r->notes = n;
        r->cap_notes = cap;
    }
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!(r->notes[r->n_notes] = fz_strdup(buf)))
        return OMPF_ENOMEM;
    r->n_notes++;
    return 0;
}

void fz_progress_type(const fz_ctx_t *c, size_t t)
{
    uint64_t k = 0;
    for (size_t r = 0; r < c->n && c->opts->progress; r++)
        k += c->runs[r].tstart[t + 1] - c->runs[r].tstart[t];
    ompf_progress_add(c->opts->progress, k);
}

int fz_tuples_push(fz_tuples_t *t, size_t n_runs, const uint32_t *tuple)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        uint32_t *v = realloc(t->v, cap * n_runs * sizeof *v);
        if (!v)
            return OMPF_ENOMEM;
        t->v = v;
        t->cap = cap;
    }
    memcpy(t->v + t->n * n_runs, tuple, n_runs * sizeof *tuple);
    t->n++;
    return 0;
}

uint32_t *fz_tuples_add(fz_tuples_t *t, size_t n_runs, size_t m)
{
    if (t->n + m > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        if (cap < t->n + m)
            cap = t->n + m;
        uint32_t *v = realloc(t->v, cap * n_runs * sizeof *v);
        if (!v)
            return NULL;
        t->v = v;
        t->cap = cap;
    }
    uint32_t *rows = t->v + t->n * n_runs;
    t->n += m;
    return rows;
}

/* ---- entry --------------------------------------------------------------- */

static void ctx_free(fz_ctx_t *c)
{
    for (size_t r = 0; c->runs && r < c->n; r++) {
        free(c->runs[r].ctype);
        free(c->runs[r].ulab);
        free(c->runs[r].ev);
        free(c->runs[r].novals);
        free(c->runs[r].tstart);
        free(c->runs[r].bytype);
    }
    free(c->runs);
    for (size_t t = 0; c->types && t < c->n_types; t++)
        free(c->types[t].key);
    free(c->types);
    for (size_t g = 0; c->events && g < c->n_events; g++)
        free(c->events[g].name);
    free(c->events);
    ompf_profile_destroy(c->ut_own);
    free(c->urank);
    fz_lca_free(c);
    free(c->res.v);
    free(c->res.lab);
}

/* A lean input (profile.h) holds what its role needs: the first input,
 * whose records and parts the fused XUs take (it heads every combination
 * order), is full or packed; CTC orders by start and end, LGL equal
 * labels by start. */
static int lean_ok(const fz_ctx_t *c, size_t r)
{
    unsigned lean = ompf_profile_lean(c->runs[r].p);
    const char *why = NULL;
    if (!lean)
        return 0;
    if (r == 0 && !(lean & OMPF_LEAN_PACKED))
        why = "the first input gives the fused XUs their records: read it in full or "
              "with OMPF_LEAN_PACKED";
    else if (!(lean & OMPF_LEAN_TIMES) && c->opts->strategy == OMPF_FUSE_CTC)
        why = "CTC needs the XUs' times: read it with OMPF_LEAN_TIMES";
    else if (!(lean & (OMPF_LEAN_TIMES | OMPF_LEAN_START)) &&
             c->opts->strategy == OMPF_FUSE_LGL)
        why = "LGL needs the XUs' start times: read it with OMPF_LEAN_START";
    return why ? ompf_error_set(c->err, OMPF_EINVAL, "ompf_fuse: input %zu%s%s%s is lean: %s",
                                r, c->runs[r].path ? " (" : "",
                                c->runs[r].path ? c->runs[r].path : "",
                                c->runs[r].path ? ")" : "", why)
               : 0;
}

/* Narrows lean input r (not the base run, not packed) to the columns in
 * keep (OMPF_LEAN and its flags, profile.h) when the caller lets fusion
 * free them (c->mut), and updates its views; else nothing. */
static void release(fz_ctx_t *c, size_t r, unsigned keep)
{
    unsigned lean = c->mut ? ompf_profile_lean(c->mut[r]) : 0;
    if (r == c->order[0] || !lean || (lean & OMPF_LEAN_PACKED))
        return;
    /* at most what it has; a type column gone stays gone */
    keep = (keep & (lean | OMPF_LEAN_NO_TYPE)) | (lean & OMPF_LEAN_NO_TYPE);
    if (keep == lean || ompf_profile_lean_narrow(c->mut[r], keep))
        return;
    fz_run_t *R = &c->runs[r];
    R->vtype = ompf_xu_view_u32(c->mut[r], OMPF_XU_TYPE);
    R->vstart = ompf_xu_view_u64(c->mut[r], OMPF_XU_START);
    R->vend = ompf_xu_view_u64(c->mut[r], OMPF_XU_END);
}

/* Once the XUs are grouped by type, the strategies but CTC read no type
 * again, nor the output but the base run's: the other inputs' type
 * columns go (4 bytes an XU of those runs, at every strategy's peak). */
static void release_types(fz_ctx_t *c)
{
    for (size_t r = 0; c->opts->strategy != OMPF_FUSE_CTC && r < c->n; r++)
        release(c, r, ompf_profile_lean(c->mut ? c->mut[r] : NULL) | OMPF_LEAN_NO_TYPE);
}

/* Once the strategy has matched the XUs, only the base run's times are
 * read (the fused records are its): the other lean runs drop theirs
 * before the output is built (16 bytes an XU of those runs, at the peak
 * of CTC and random).  A packed run keeps its columns. */
static void release_times(fz_ctx_t *c)
{
    for (size_t r = 0; r < c->n; r++)
        release(c, r, OMPF_LEAN | OMPF_LEAN_NO_TYPE);
}

/* ompf_fuse (out) and ompf_fuse_write (path): one of the two is given;
 * mut: the inputs, when the caller lets fusion release what it no longer
 * needs of them (ompf_fuse_write_release), else NULL. */
static int fuse(const ompf_profile_t *const *inputs, ompf_profile_t *const *mut,
                const char *const *paths, size_t n, const ompf_fuse_opts_t *opts,
                ompf_profile_t **out, const char *path, ompf_fuse_report_t **report,
                ompf_error_t *err)
{
    if (out)
        *out = NULL;
    if (report)
        *report = NULL;
    if (!inputs || !opts || (!out && !path) ||
        (unsigned)opts->strategy >= OMPF_FUSE_STRATEGY_COUNT)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_fuse: invalid arguments");
    if (n < 2)
        return ompf_error_set(err, OMPF_EINVAL,
                              "combine needs at least two profiles, got %zu%s%s: "
                              "give the runs of one program to fuse",
                              n, n && paths && paths[0] ? " (" : "",
                              n && paths && paths[0] ? paths[0] : "");
    if (err)
        memset(err, 0, sizeof *err);
    fz_ctx_t c;
    memset(&c, 0, sizeof c);
    c.n = n;
    c.opts = opts;
    c.err = err;
    c.mut = mut;
    char forced[128];
    int rc = OMPF_ENOMEM;
    c.runs = calloc(n, sizeof *c.runs);
    c.order = NULL;
    if (!c.runs)
        goto done;
    for (size_t r = 0; r < n; r++) {
        if (!inputs[r]) {
            rc = ompf_error_set(err, OMPF_EINVAL, "ompf_fuse: input %zu is NULL", r);
            goto done;
        }
        fz_run_t *R = &c.runs[r];
        R->p = inputs[r];
        R->path = paths ? paths[r] : NULL;
        R->n_xu = ompf_xu_count(inputs[r]);
        if (R->n_xu >= FZ_NONE) {
            rc = ompf_error_set(err, OMPF_ERANGE, "input %zu has too many XUs", r);
            goto done;
        }
        R->vtype = ompf_xu_view_u32(R->p, OMPF_XU_TYPE);
        R->vlabel = ompf_xu_view_u32(R->p, OMPF_XU_LABEL);
        R->vid = ompf_xu_view_u64(R->p, OMPF_XU_ID);
        R->vstart = ompf_xu_view_u64(R->p, OMPF_XU_START);
        R->vend = ompf_xu_view_u64(R->p, OMPF_XU_END);
        if ((rc = lean_ok(&c, r)))
            goto done;
    }
    if ((rc = fz_report_init(&c)))
        goto done;
    c.order = c.rep->order;
    if ((rc = fz_check_inputs(&c, forced, sizeof forced)) ||
        (rc = fz_match_types(&c)) || (rc = fz_match_events(&c)) ||
        (rc = fz_build_union_trie(&c)) || (rc = fz_group_by_type(&c)))
        goto done;
    /* LGL's members share their label; the others name fused XUs by the
     * common prefix of their members' labels: BC as it pairs them, CTC
     * and random in the output (their table is built after the strategy,
     * whose scratch is gone by then: peak memory). */
    int bc = opts->strategy == OMPF_FUSE_BC ||
             opts->strategy == OMPF_FUSE_BC_UNLABELED;
    int lca_late = !bc && opts->strategy != OMPF_FUSE_LGL;
    if (bc && (rc = fz_lca_build(&c)))
        goto done;
    if (bc && (rc = fz_bc_order(&c)))
        goto done;
    release_types(&c);
    if ((rc = fz_report_types_events(&c)))
        goto done;
    switch (opts->strategy) {
    case OMPF_FUSE_CTC: rc = fz_ctc(&c); break;
    case OMPF_FUSE_LGL: rc = fz_lgl(&c); break;
    case OMPF_FUSE_RANDOM: rc = fz_random(&c); break;
    case OMPF_FUSE_BC: rc = fz_bc(&c, 1); break;
    default: rc = fz_bc(&c, 0); break;
    }
    if (rc)
        goto done;
    for (size_t t = 0; t < c.n_types; t++) {
        const ompf_fuse_type_stats_t *ts = &c.rep->types[t];
        int any = 0;
        for (size_t i = 0; i < n; i++)
            any |= ts->in[i] != ts->fused;
        if (any && ts->fused == 0) {
            size_t l = 0;
            char who[256];
            who[0] = 0;
            for (size_t i = 0; i < n && l + 1 < sizeof who; i++)
                if (!ts->in[i])
                    l += (size_t)snprintf(who + l, sizeof who - l, "%s%s",
                                          l ? ", " : "", c.rep->in_name[i]);
            if (l && fz_note(c.rep, "type %s is missing from %s: none of its "
                                    "XUs could be fused",
                             ts->name, who)) {
                rc = OMPF_ENOMEM;
                goto done;
            }
        }
    }
    /* Only the strategies walk the XUs by type and order labels by rank:
     * both go before the output is built (4 bytes an input XU and 4 a
     * union label of the peak). */
    for (size_t r = 0; r < n; r++) {
        free(c.runs[r].bytype);
        c.runs[r].bytype = NULL;
    }
    free(c.urank);
    c.urank = NULL;
    release_times(&c);
    if (bc) /* BC named its pairs as it made them */
        fz_lca_free(&c);
    if (lca_late && (rc = fz_lca_build(&c)))
        goto done;
    if (out ? (rc = fz_build_output(&c, forced, out))
            : (rc = fz_write_output(&c, forced, path)))
        goto done;
    c.rep->out_xus = c.res.n;
done:
    if (rc && err && !err->code)
        ompf_error_set(err, rc, "combine failed: %s", ompf_strerror(rc));
    if (report)
        *report = c.rep;
    else
        ompf_fuse_report_destroy(c.rep);
    ctx_free(&c);
    return rc;
}

int ompf_fuse(const ompf_profile_t *const *inputs, const char *const *paths,
              size_t n, const ompf_fuse_opts_t *opts, ompf_profile_t **out,
              ompf_fuse_report_t **report, ompf_error_t *err)
{
    return fuse(inputs, NULL, paths, n, opts, out, NULL, report, err);
}

static int fuse_write(const ompf_profile_t *const *inputs, ompf_profile_t *const *mut,
                      const char *const *paths, size_t n, const ompf_fuse_opts_t *opts,
                      const char *out_path, ompf_fuse_report_t **report, ompf_error_t *err)
{
    if (!out_path || !*out_path) {
        if (report)
            *report = NULL;
        return ompf_error_set(err, OMPF_EINVAL, "ompf_fuse_write: no output path");
    }
    return fuse(inputs, mut, paths, n, opts, NULL, out_path, report, err);
}

int ompf_fuse_write(const ompf_profile_t *const *inputs, const char *const *paths,
                    size_t n, const ompf_fuse_opts_t *opts, const char *out_path,
                    ompf_fuse_report_t **report, ompf_error_t *err)
{
    return fuse_write(inputs, NULL, paths, n, opts, out_path, report, err);
}

int ompf_fuse_write_release(ompf_profile_t *const *inputs, const char *const *paths,
                            size_t n, const ompf_fuse_opts_t *opts, const char *out_path,
                            ompf_fuse_report_t **report, ompf_error_t *err)
{
    return fuse_write((const ompf_profile_t *const *)inputs, inputs, paths, n, opts,
                      out_path, report, err);
}
