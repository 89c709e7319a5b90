/* ompf_fuse: input checks, matching of types and events across runs, the
 * union label trie, dispatch to a strategy, and building the fused profile
 * with its provenance. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

int fz_tuples_push_positional(fz_tuples_t *t, size_t n_runs,
                              uint32_t *const *lists, size_t m,
                              uint32_t *tuple)
{
    int rc = 0;
    for (size_t j = 0; j < m && !rc; j++) {
        for (size_t r = 0; r < n_runs; r++)
            tuple[r] = lists[r][j];
        rc = fz_tuples_push(t, n_runs, tuple);
    }
    return rc;
}

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

/* ---- input checks -------------------------------------------------------- */

static int same_str(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return !strcmp(a, b);
}

/* argv is stored joined by \x1f: show it with spaces. */
static void show(char *buf, size_t len, const char *v)
{
    if (!v) {
        snprintf(buf, len, "(not recorded)");
        return;
    }
    size_t i = 0;
    if (len < 3)
        return;
    buf[i++] = '\'';
    for (; *v && i + 2 < len; v++)
        buf[i++] = *v == '\x1f' ? ' ' : *v;
    buf[i++] = '\'';
    buf[i] = 0;
}

/* Appends check name k to the comma-separated list of forced checks. */
static void add_forced(char *forced, size_t flen, const char *k)
{
    if (strstr(forced, k))
        return;
    size_t l = strlen(forced);
    snprintf(forced + l, flen - l, "%s%s", l ? "," : "", k);
}

/* Same file (dev + inode) given twice; needs paths that exist. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || stat(a, &sa) || stat(b, &sb))
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Cheap fingerprint of the data (XU and event counts, every value's bits):
 * two inputs with equal fingerprints are then compared value by value. */
static uint64_t values_hash(const ompf_profile_t *p)
{
    size_t ne = ompf_event_count(p), nx = ompf_xu_count(p);
    uint64_t h = 0xcbf29ce484222325ull ^ ne;
    h = (h ^ nx) * 0x100000001b3ull;
    for (size_t i = 0; i < nx; i++) {
        const double *v = ompf_xu_values_const(p, i);
        for (size_t e = 0; e < ne; e++) {
            uint64_t u;
            memcpy(&u, &v[e], sizeof u);
            h = (h ^ u) * 0x100000001b3ull;
            h ^= h >> 29;
        }
    }
    return h;
}

static int same_values(const ompf_profile_t *a, const ompf_profile_t *b)
{
    size_t ne = ompf_event_count(a), nx = ompf_xu_count(a);
    if (ne != ompf_event_count(b) || nx != ompf_xu_count(b))
        return 0;
    for (size_t i = 0; i < nx; i++)
        if (ne && memcmp(ompf_xu_values_const(a, i), ompf_xu_values_const(b, i),
                         ne * sizeof(double)))
            return 0;
    return 1;
}

/* One input given twice fuses a run with itself: refused unless forced.
 * The same file is caught by dev + inode, the same run by its run id; an
 * imported profile has run id 0, so equal data of two such files is
 * noted (copies of one profile are likely a mistake, but equal data can
 * also be legitimate, e.g. a tiny deterministic program). */
static int check_duplicates(fz_ctx_t *c, char *forced, size_t flen)
{
    ompf_fuse_report_t *r = c->rep;
    uint64_t *hash = NULL;
    int rc = 0;
    for (size_t i = 0; i < c->n && !rc; i++) {
        for (size_t j = 0; j < i && !rc; j++) {
            if (same_file(c->runs[j].path, c->runs[i].path)) {
                if (!c->opts->force)
                    return ompf_error_set(
                        c->err, OMPF_EMISMATCH,
                        "%s (input %zu) and %s (input %zu) are the same "
                        "file: fusing a profile with itself adds nothing; "
                        "give each run once, or pass --force",
                        r->in_name[j], j + 1, r->in_name[i], i + 1);
                if (fz_note(r, "forced: %s (input %zu) and %s (input %zu) "
                               "are the same file",
                            r->in_name[j], j + 1, r->in_name[i], i + 1))
                    return OMPF_ENOMEM;
                add_forced(forced, flen, "same_file");
                continue;
            }
            if (!r->in_run_id[i] || r->in_run_id[i] != r->in_run_id[j])
                continue;
            if (!c->opts->force)
                return ompf_error_set(
                    c->err, OMPF_EMISMATCH,
                    "%s and %s have the same run id %016" PRIx64
                    ": they are the same run (or copies of it); give each "
                    "run once, or pass --force",
                    r->in_name[j], r->in_name[i], r->in_run_id[i]);
            if (fz_note(r, "forced: %s and %s have the same run id %016" PRIx64,
                        r->in_name[j], r->in_name[i], r->in_run_id[i]))
                return OMPF_ENOMEM;
            add_forced(forced, flen, "run_id");
        }
    }
    /* Distinct files without run ids: compare fingerprints, then data. */
    for (size_t i = 0; i < c->n; i++) {
        if (r->in_run_id[i])
            continue;
        if (!hash && !(hash = calloc(c->n, sizeof *hash)))
            return OMPF_ENOMEM;
        hash[i] = values_hash(c->runs[i].p);
        for (size_t j = 0; j < i; j++) {
            if (r->in_run_id[j] || hash[j] != hash[i] ||
                same_file(c->runs[j].path, c->runs[i].path) ||
                !same_values(c->runs[j].p, c->runs[i].p))
                continue;
            rc = fz_note(r,
                         "%s and %s have no run id and identical XU values: "
                         "probably copies of one profile, which adds nothing "
                         "to the fusion; check the inputs",
                         r->in_name[j], r->in_name[i]);
            break; /* one note per input is enough */
        }
        if (rc)
            break;
    }
    free(hash);
    return rc;
}

static int check_inputs(fz_ctx_t *c, char *forced, size_t flen)
{
    static const char *const keys[] = {"program", "argv", "team_size"};
    ompf_fuse_report_t *r = c->rep;
    int rc;
    forced[0] = 0;
    for (size_t k = 0; k < 3; k++) {
        /* Reference: the first input that records the key. */
        size_t ref = 0;
        while (ref < c->n && !ompf_meta_get(c->runs[ref].p, keys[k]))
            ref++;
        if (ref == c->n) {
            /* NULL == NULL proves nothing: say so. */
            if (fz_note(r, "%s not recorded in any input: cannot be checked",
                        keys[k]))
                return OMPF_ENOMEM;
            continue;
        }
        const char *v0 = ompf_meta_get(c->runs[ref].p, keys[k]);
        char missing[512];
        size_t l = 0;
        missing[0] = 0;
        for (size_t i = 0; i < c->n && l + 1 < sizeof missing; i++)
            if (!ompf_meta_get(c->runs[i].p, keys[k]))
                l += (size_t)snprintf(missing + l, sizeof missing - l, "%s%s",
                                      l ? ", " : "", r->in_name[i]);
        /* Not recorded (truncated run, CSV import): cannot check. */
        if (l && fz_note(r, "%s is not recorded in %s: cannot check that "
                            "the inputs agree on it",
                         keys[k], missing))
            return OMPF_ENOMEM;
        for (size_t i = ref + 1; i < c->n; i++) {
            const char *vi = ompf_meta_get(c->runs[i].p, keys[k]);
            if (!vi || same_str(v0, vi))
                continue;
            char a[300], b[300];
            show(a, sizeof a, v0);
            show(b, sizeof b, vi);
            if (!c->opts->force)
                return ompf_error_set(
                    c->err, OMPF_EMISMATCH,
                    "%s and %s differ in %s (%s vs %s): fusion needs runs of "
                    "the same program with the same arguments and team size; "
                    "pass --force to combine them anyway",
                    r->in_name[ref], r->in_name[i], keys[k], a, b);
            if (fz_note(r, "forced: %s and %s differ in %s (%s vs %s)",
                        r->in_name[ref], r->in_name[i], keys[k], a, b))
                return OMPF_ENOMEM;
            add_forced(forced, flen, keys[k]);
            break;
        }
    }
    if ((rc = check_duplicates(c, forced, flen)))
        return rc;
    const char *cpu0 = ompf_meta_get(c->runs[0].p, "cpu_model");
    size_t any_cpu = 0;
    while (any_cpu < c->n && !ompf_meta_get(c->runs[any_cpu].p, "cpu_model"))
        any_cpu++;
    if (any_cpu == c->n &&
        fz_note(r, "cpu_model not recorded in any input: cannot be checked"))
        return OMPF_ENOMEM;
    for (size_t i = 1; i < c->n && any_cpu < c->n; i++) {
        const char *ci = ompf_meta_get(c->runs[i].p, "cpu_model");
        if (same_str(cpu0, ci))
            continue;
        if (c->opts->strict)
            return ompf_error_set(
                c->err, OMPF_EMISMATCH,
                "%s and %s come from different CPU models ('%s' vs '%s'); "
                "counts of different machines are not comparable: combine "
                "runs from one machine type, or drop --strict",
                r->in_name[0], r->in_name[i], cpu0 ? cpu0 : "?",
                ci ? ci : "?");
        if (fz_note(r,
                    "warning: %s and %s come from different CPU models "
                    "('%s' vs '%s'); counts may not be comparable",
                    r->in_name[0], r->in_name[i], cpu0 ? cpu0 : "?",
                    ci ? ci : "?"))
            return OMPF_ENOMEM;
        break;
    }
    for (size_t i = 0; i < c->n; i++) {
        const char *m = ompf_meta_get(c->runs[i].p, "mode");
        if (m && !strcmp(m, OMPF_MODE_FUSED)) {
            const char *s = ompf_meta_get(c->runs[i].p, "strategy");
            if (fz_note(r,
                        "%s is itself a fused profile (strategy %s): its XUs "
                        "are combined like those of a run, and its "
                        "provenance is not carried over",
                        r->in_name[i], s ? s : "?"))
                return OMPF_ENOMEM;
        }
    }
    return 0;
}

/* ---- matching types and events ------------------------------------------ */

typedef struct {
    char *key;
    uint32_t run, cidx, grp;
} tentry_t;

static int cmp_tentry(const void *a, const void *b)
{
    const tentry_t *x = a, *y = b;
    int s = strcmp(x->key, y->key);
    if (s)
        return s;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    return (x->cidx > y->cidx) - (x->cidx < y->cidx);
}

static int cmp_tentry_first(const void *a, const void *b)
{
    const tentry_t *x = a, *y = b;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    return (x->cidx > y->cidx) - (x->cidx < y->cidx);
}

/* Global types = distinct construct keys, in order of first appearance. */
static int match_types(fz_ctx_t *c)
{
    size_t total = 0;
    for (size_t r = 0; r < c->n; r++)
        total += ompf_construct_count(c->runs[r].p);
    tentry_t *e = calloc(total ? total : 1, sizeof *e);
    tentry_t *firsts = calloc(total ? total : 1, sizeof *firsts);
    int rc = OMPF_ENOMEM;
    if (!e || !firsts)
        goto out;
    size_t k = 0;
    for (size_t r = 0; r < c->n; r++) {
        size_t nc = ompf_construct_count(c->runs[r].p);
        c->runs[r].ctype = malloc((nc ? nc : 1) * sizeof(uint32_t));
        if (!c->runs[r].ctype)
            goto out;
        for (size_t i = 0; i < nc; i++, k++) {
            char buf[1024];
            if (ompf_construct_key(c->runs[r].p, (uint32_t)i, buf, sizeof buf))
                snprintf(buf, sizeof buf, "?%zu", i);
            if (!(e[k].key = fz_strdup(buf)))
                goto out;
            e[k].run = (uint32_t)r;
            e[k].cidx = (uint32_t)i;
        }
    }
    qsort(e, total, sizeof *e, cmp_tentry);
    size_t ng = 0;
    for (size_t i = 0; i < total; i++)
        if (!i || strcmp(e[i].key, e[i - 1].key)) {
            firsts[ng] = e[i];
            firsts[ng].grp = (uint32_t)ng;
            ng++;
        }
    qsort(firsts, ng, sizeof *firsts, cmp_tentry_first);
    c->types = calloc(ng ? ng : 1, sizeof *c->types);
    if (!c->types)
        goto out;
    c->n_types = ng;
    for (size_t g = 0; g < ng; g++) {
        if (!(c->types[g].key = fz_strdup(firsts[g].key)))
            goto out;
        c->types[g].run = firsts[g].run;
        c->types[g].cidx = firsts[g].cidx;
    }
    /* Map every construct to its type: group (key order) -> type. */
    uint32_t *gtype = malloc((ng ? ng : 1) * sizeof *gtype);
    if (!gtype)
        goto out;
    for (size_t t = 0; t < ng; t++)
        gtype[firsts[t].grp] = (uint32_t)t;
    for (size_t i = 0, g = 0; i < total; i++) {
        if (i && strcmp(e[i].key, e[i - 1].key))
            g++;
        c->runs[e[i].run].ctype[e[i].cidx] = gtype[g];
    }
    free(gtype);
    rc = 0;
out:
    if (e)
        for (size_t i = 0; i < total; i++)
            free(e[i].key);
    free(e);
    free(firsts);
    return rc;
}

/* Whether any XU has a value for event e (stops at the first one). */
static int has_values(const ompf_profile_t *p, size_t n_xu, uint32_t e)
{
    for (size_t i = 0; i < n_xu; i++)
        if (!ompf_is_missing(ompf_xu_values_const(p, i)[e]))
            return 1;
    return 0;
}

static int match_events(fz_ctx_t *c)
{
    size_t cap = 0;
    for (size_t r = 0; r < c->n; r++)
        cap += ompf_event_count(c->runs[r].p);
    c->events = calloc(cap ? cap : 1, sizeof *c->events);
    if (!c->events)
        return OMPF_ENOMEM;
    for (size_t r = 0; r < c->n; r++) {
        const ompf_profile_t *p = c->runs[r].p;
        for (uint32_t i = 0; i < ompf_event_count(p); i++) {
            const char *name = ompf_event_get(p, i)->name;
            size_t g = 0;
            while (g < c->n_events && strcmp(c->events[g].name, name))
                g++;
            if (g == c->n_events) {
                if (!(c->events[g].name = fz_strdup(name)))
                    return OMPF_ENOMEM;
                c->events[g].first = (uint32_t)r;
                c->events[g].provider = FZ_NONE;
                c->n_events++;
            }
        }
    }
    for (size_t r = 0; r < c->n; r++) {
        fz_run_t *R = &c->runs[r];
        R->ev = malloc((c->n_events ? c->n_events : 1) * sizeof(int32_t));
        R->novals = calloc(c->n_events ? c->n_events : 1, 1);
        if (!R->ev || !R->novals)
            return OMPF_ENOMEM;
        for (size_t g = 0; g < c->n_events; g++) {
            int i = ompf_event_find(R->p, c->events[g].name);
            if (i >= 0 &&
                ompf_event_get(R->p, (uint32_t)i)->status == OMPF_EV_FAILED)
                i = -1;
            /* The status says measured, but the data decides: a column
             * without a single value (an empty CSV column) provides
             * nothing, so the event must come from another input. */
            if (i >= 0 && R->n_xu && !has_values(R->p, R->n_xu, (uint32_t)i)) {
                R->novals[g] = 1;
                i = -1;
            }
            R->ev[g] = i;
        }
    }
    return 0;
}

/* Union trie: every label of every input, so that labels of different runs
 * compare as integers (same node = same label; depth-first rank = label
 * order). */
static int build_union_trie(fz_ctx_t *c)
{
    int rc = ompf_profile_create(&c->ut);
    if (rc)
        return rc;
    for (size_t r = 0; r < c->n; r++) {
        const ompf_profile_t *p = c->runs[r].p;
        size_t nl = ompf_label_count(p);
        uint32_t *m = malloc((nl ? nl : 1) * sizeof *m);
        if (!m)
            return OMPF_ENOMEM;
        c->runs[r].ulab = m;
        m[0] = OMPF_LABEL_ROOT;
        /* A node's parent always precedes it (nodes are appended). */
        for (size_t i = 1; i < nl; i++) {
            uint32_t par = ompf_label_parent(p, (uint32_t)i);
            if (par >= i)
                return ompf_error_set(c->err, OMPF_EFORMAT,
                                      "%s: label node %zu has a later parent",
                                      c->rep->in_name[r], i);
            if ((rc = ompf_label_child(c->ut, m[par],
                                       ompf_label_component(p, (uint32_t)i),
                                       &m[i])))
                return rc;
        }
    }
    size_t nu = ompf_label_count(c->ut);
    c->urank = malloc(nu * sizeof *c->urank);
    if (!c->urank)
        return OMPF_ENOMEM;
    return ompf_label_dfs_rank(c->ut, c->urank);
}

static int group_by_type(fz_ctx_t *c)
{
    for (size_t r = 0; r < c->n; r++) {
        fz_run_t *R = &c->runs[r];
        R->tstart = calloc(c->n_types + 1, sizeof *R->tstart);
        R->bytype = malloc((R->n_xu ? R->n_xu : 1) * sizeof *R->bytype);
        if (!R->tstart || !R->bytype)
            return OMPF_ENOMEM;
        for (size_t i = 0; i < R->n_xu; i++) {
            uint32_t ct = ompf_xu_get(R->p, i)->type;
            if (ct >= ompf_construct_count(R->p))
                return ompf_error_set(c->err, OMPF_EFORMAT,
                                      "%s: XU %zu refers to a missing construct",
                                      c->rep->in_name[r], i);
            R->tstart[R->ctype[ct] + 1]++;
        }
        for (size_t t = 0; t < c->n_types; t++)
            R->tstart[t + 1] += R->tstart[t];
        uint32_t *pos = malloc((c->n_types ? c->n_types : 1) * sizeof *pos);
        if (!pos)
            return OMPF_ENOMEM;
        memcpy(pos, R->tstart, c->n_types * sizeof *pos);
        for (size_t i = 0; i < R->n_xu; i++)
            R->bytype[pos[R->ctype[ompf_xu_get(R->p, i)->type]]++] = (uint32_t)i;
        free(pos);
    }
    return 0;
}

/* ---- BC order ------------------------------------------------------------ */

static int overlaps(const fz_ctx_t *c, const uint8_t *have, size_t r)
{
    for (size_t g = 0; g < c->n_events; g++)
        if (have[g] && c->runs[r].ev[g] >= 0)
            return 1;
    return 0;
}

static void event_list(const fz_ctx_t *c, size_t r, char *buf, size_t len)
{
    size_t l = 0;
    buf[0] = 0;
    for (size_t g = 0; g < c->n_events && l + 1 < len; g++)
        if (c->runs[r].ev[g] >= 0)
            l += (size_t)snprintf(buf + l, len - l, "%s%s", l ? ", " : "",
                                  c->events[g].name);
    if (!l)
        snprintf(buf, len, "none");
}

/* A valid order: each run's counted events overlap the union of its
 * predecessors'.  One exists iff the runs' overlap graph is connected, and
 * then the greedy choice (lowest-index overlapping run) always finds one. */
static int bc_order(fz_ctx_t *c)
{
    uint8_t *have = calloc(c->n_events ? c->n_events : 1, 1);
    uint8_t *used = calloc(c->n, 1);
    int rc = OMPF_ENOMEM;
    if (!have || !used)
        goto out;
    for (size_t r = 0; r < c->n; r++)
        c->order[r] = (uint32_t)r;
    for (size_t g = 0; g < c->n_events; g++)
        have[g] = c->runs[0].ev[g] >= 0;
    used[0] = 1;
    int given_ok = 1;
    size_t broken = 0;
    for (size_t k = 1; k < c->n && given_ok; k++) {
        if (!overlaps(c, have, k)) {
            given_ok = 0;
            broken = k;
            break;
        }
        for (size_t g = 0; g < c->n_events; g++)
            have[g] |= c->runs[k].ev[g] >= 0;
    }
    if (given_ok) {
        rc = 0;
        goto out;
    }
    char mine[512], before[512];
    event_list(c, broken, mine, sizeof mine);
    {
        size_t l = 0;
        before[0] = 0;
        for (size_t g = 0; g < c->n_events && l + 1 < sizeof before; g++)
            if (have[g])
                l += (size_t)snprintf(before + l, sizeof before - l, "%s%s",
                                      l ? ", " : "", c->events[g].name);
    }
    if (c->opts->order_given) {
        rc = ompf_error_set(
            c->err, OMPF_EMISMATCH,
            "BC needs each run to share a counted event with the runs before "
            "it, but %s (events: %s) shares none with the inputs before it "
            "(events: %s); reorder the inputs or use --order auto",
            c->rep->in_name[broken], mine, before);
        goto out;
    }
    for (size_t g = 0; g < c->n_events; g++)
        have[g] = c->runs[0].ev[g] >= 0;
    for (size_t k = 1; k < c->n; k++) {
        size_t pick = c->n;
        for (size_t r = 1; r < c->n && pick == c->n; r++)
            if (!used[r] && overlaps(c, have, r))
                pick = r;
        if (pick == c->n) {
            size_t l = 0;
            char left[512];
            left[0] = 0;
            for (size_t r = 1; r < c->n && l + 1 < sizeof left; r++)
                if (!used[r])
                    l += (size_t)snprintf(left + l, sizeof left - l, "%s%s",
                                          l ? ", " : "", c->rep->in_name[r]);
            rc = ompf_error_set(
                c->err, OMPF_EMISMATCH,
                "BC needs overlapping event sets, but no valid order "
                "exists: no counted event connects %s to the other inputs; "
                "add a run that counts an event of both groups",
                left);
            goto out;
        }
        used[pick] = 1;
        c->order[k] = (uint32_t)pick;
        for (size_t g = 0; g < c->n_events; g++)
            have[g] |= c->runs[pick].ev[g] >= 0;
    }
    rc = fz_note(c->rep,
                 "the given order is not valid for BC (%s shares no counted "
                 "event with the inputs before it); combined in a valid "
                 "order instead",
                 c->rep->in_name[broken]);
out:
    free(have);
    free(used);
    return rc;
}

/* ---- building the result -------------------------------------------------- */

/* Node of the output profile for union node u (created on demand). */
static int out_label(fz_ctx_t *c, ompf_profile_t *out, uint32_t *memo,
                     uint32_t u, uint32_t *node)
{
    uint32_t path[256], *big = NULL, *pth = path;
    size_t n = 0, cap = 256;
    int rc = 0;
    while (memo[u] == FZ_NONE) {
        if (n == cap) {
            uint32_t *nb = realloc(big, 2 * cap * sizeof *nb);
            if (!nb) {
                free(big);
                return OMPF_ENOMEM;
            }
            if (!big)
                memcpy(nb, path, n * sizeof *nb);
            big = pth = nb;
            cap *= 2;
        }
        pth[n++] = u;
        u = ompf_label_parent(c->ut, u);
    }
    while (n) {
        uint32_t v = pth[--n];
        if ((rc = ompf_label_child(out, memo[u], ompf_label_component(c->ut, v),
                                   &memo[v])))
            break;
        u = v;
    }
    free(big);
    *node = memo[u];
    return rc;
}

static int copy_meta(fz_ctx_t *c, ompf_profile_t *out, const char *forced)
{
    const ompf_profile_t *base = c->runs[c->order[0]].p;
    static const char *const skip[] = {"run_id", "mode", "strategy",
                                       "strategy_params", "seed", "forced",
                                       "forced_checks", "role"};
    int rc;
    for (size_t i = 0; i < ompf_meta_count(base); i++) {
        const char *k, *v;
        ompf_meta_at(base, i, &k, &v);
        size_t s = 0;
        while (s < sizeof skip / sizeof *skip && strcmp(skip[s], k))
            s++;
        if (s < sizeof skip / sizeof *skip)
            continue;
        if ((rc = ompf_meta_set(out, k, v)))
            return rc;
    }
    char params[256], seed[32];
    int bc = c->opts->strategy == OMPF_FUSE_BC ||
             c->opts->strategy == OMPF_FUSE_BC_UNLABELED;
    size_t l = 0;
    l += (size_t)snprintf(params, sizeof params, "order=");
    for (size_t k = 0; k < c->n && l + 1 < sizeof params; k++)
        l += (size_t)snprintf(params + l, sizeof params - l, "%s%u",
                              k ? "," : "", c->order[k]);
    if (bc && l + 1 < sizeof params)
        snprintf(params + l, sizeof params - l,
                 ";grid=dyadic;coarsen=2;order_mode=%s",
                 c->opts->order_given ? "given" : "auto");
    snprintf(seed, sizeof seed, "%" PRIu64, c->opts->seed);
    uint64_t id = fz_stream(c->opts->seed, (uint64_t)c->opts->strategy, c->n);
    for (size_t r = 0; r < c->n; r++) {
        uint64_t s = id ^ c->rep->in_run_id[r];
        id = fz_rand(&s);
    }
    if ((rc = ompf_meta_set(out, "mode", OMPF_MODE_FUSED)) ||
        (rc = ompf_meta_set(out, "strategy",
                            ompf_fuse_strategy_name(c->opts->strategy))) ||
        (rc = ompf_meta_set(out, "strategy_params", params)) ||
        (rc = ompf_meta_set(out, "seed", seed)) ||
        (rc = ompf_meta_set(out, "forced", forced[0] ? "1" : "0")) ||
        (forced[0] && (rc = ompf_meta_set(out, "forced_checks", forced))) ||
        (rc = ompf_profile_set_run_id(out, id)))
        return rc;
    return 0;
}

static int build_output(fz_ctx_t *c, const char *forced, ompf_profile_t **outp)
{
    ompf_profile_t *out = NULL;
    uint32_t *memo = NULL;
    double *vals = NULL;
    int rc = ompf_profile_create(&out);
    if (rc)
        return rc;
    if ((rc = copy_meta(c, out, forced)))
        goto fail;
    for (size_t r = 0; r < c->n; r++) {
        ompf_source_t s = {c->rep->in_run_id[r], c->runs[r].path};
        if ((rc = ompf_source_add(out, &s, NULL)))
            goto fail;
    }
    for (size_t g = 0; g < c->n_events; g++) {
        fz_event_t *E = &c->events[g];
        uint32_t from = E->provider != FZ_NONE ? E->provider : E->first;
        const ompf_profile_t *p = c->runs[from].p;
        ompf_event_t ev = *ompf_event_get(p, (uint32_t)ompf_event_find(p, E->name));
        char why[512];
        int novals = 0;
        for (size_t r = 0; r < c->n; r++)
            novals |= c->runs[r].novals[g];
        if (E->provider == FZ_NONE) {
            if (novals)
                snprintf(why, sizeof why, "no value in any input");
            else
                snprintf(why, sizeof why, "failed in every input%s%s",
                         ev.reason ? ": " : "", ev.reason ? ev.reason : "");
            ev.status = OMPF_EV_FAILED;
            ev.reason = why;
            ev.source = -1;
        } else {
            ev.source = (int32_t)E->provider;
        }
        if ((rc = ompf_event_add(out, &ev, NULL)))
            goto fail;
    }
    for (size_t t = 0; t < c->n_types; t++) {
        const ompf_construct_t *ct =
            ompf_construct_get(c->runs[c->types[t].run].p, c->types[t].cidx);
        if ((rc = ompf_construct_add(out, ct, NULL)))
            goto fail;
    }
    /* Threads of the base run; each event's totals from the same thread
     * index of the run that provided the event. */
    const ompf_profile_t *base = c->runs[c->order[0]].p;
    for (uint32_t i = 0; i < ompf_thread_count(base); i++) {
        uint32_t idx;
        if ((rc = ompf_thread_add(out, ompf_thread_get_const(base, i)->os_tid,
                                  &idx)))
            goto fail;
        ompf_thread_t *ot = ompf_thread_get(out, idx);
        for (size_t g = 0; g < c->n_events; g++) {
            uint32_t q = c->events[g].provider;
            if (q == FZ_NONE)
                continue;
            const ompf_thread_t *st = ompf_thread_get_const(c->runs[q].p, i);
            if (!st)
                continue;
            int32_t ei = c->runs[q].ev[g];
            ot->total[g] = st->total[ei];
            ot->gap[g] = st->gap[ei];
            ot->enabled_ns[g] = st->enabled_ns[ei];
            ot->running_ns[g] = st->running_ns[ei];
        }
    }
    /* XUs in the base run's order. */
    size_t n = c->n, b = c->order[0], nt = c->res.n;
    uint32_t *sorted = malloc((nt ? nt : 1) * n * sizeof *sorted);
    if (!sorted) {
        rc = OMPF_ENOMEM;
        goto fail;
    }
    {
        /* Radix-free: sort base indices, then scatter through a position
         * table (base indices are unique). */
        uint32_t *pos = malloc((c->runs[b].n_xu ? c->runs[b].n_xu : 1) *
                               sizeof *pos);
        if (!pos) {
            free(sorted);
            rc = OMPF_ENOMEM;
            goto fail;
        }
        for (size_t i = 0; i < c->runs[b].n_xu; i++)
            pos[i] = FZ_NONE;
        for (size_t i = 0; i < nt; i++)
            pos[c->res.v[i * n + b]] = (uint32_t)i;
        size_t k = 0;
        for (size_t i = 0; i < c->runs[b].n_xu; i++)
            if (pos[i] != FZ_NONE)
                memcpy(sorted + (k++) * n, c->res.v + (size_t)pos[i] * n,
                       n * sizeof *sorted);
        free(pos);
    }
    size_t nu = ompf_label_count(c->ut);
    memo = malloc(nu * sizeof *memo);
    vals = malloc((c->n_events ? c->n_events : 1) * sizeof *vals);
    if (!memo || !vals || (rc = ompf_xu_reserve(out, nt))) {
        free(sorted);
        rc = rc ? rc : OMPF_ENOMEM;
        goto fail;
    }
    for (size_t i = 0; i < nu; i++)
        memo[i] = FZ_NONE;
    memo[OMPF_LABEL_ROOT] = OMPF_LABEL_ROOT;
    for (size_t i = 0; i < nt; i++) {
        const uint32_t *tp = sorted + i * n;
        const ompf_xu_t *bx = ompf_xu_get(base, tp[b]);
        ompf_xu_t x = *bx;
        x.type = c->runs[b].ctype[bx->type];
        uint32_t u = c->runs[b].ulab[bx->label];
        for (size_t r = 0; r < n; r++) {
            const ompf_xu_t *rx = ompf_xu_get(c->runs[r].p, tp[r]);
            u = ompf_label_common(c->ut, u, c->runs[r].ulab[rx->label]);
        }
        if ((rc = out_label(c, out, memo, u, &x.label)))
            break;
        for (size_t g = 0; g < c->n_events; g++) {
            uint32_t q = c->events[g].provider;
            vals[g] = q == FZ_NONE
                          ? OMPF_MISSING
                          : ompf_xu_values_const(c->runs[q].p, tp[q])[c->runs[q].ev[g]];
        }
        if ((rc = ompf_xu_add(out, &x, vals)))
            break;
        /* Counts above 2^53 keep their exact value (profile.h); the test
         * is one compare per value, the lookup only for such counts. */
        for (size_t g = 0; g < c->n_events && !rc; g++) {
            uint32_t q = c->events[g].provider;
            uint64_t u;
            if (vals[g] >= 9007199254740992.0 &&
                ompf_xu_value_u64(c->runs[q].p, tp[q], (uint32_t)c->runs[q].ev[g], &u))
                rc = ompf_xu_value_set_u64(out, i, (uint32_t)g, u);
        }
        if (rc)
            break;
        /* the parts come with the timing: both from the base run */
        uint32_t np;
        ompf_part_t one;
        const ompf_part_t *pt = ompf_xu_parts(base, tp[b], &np, &one);
        if (ompf_xu_has_parts(base, tp[b]) && (rc = ompf_xu_set_parts(out, i, pt, np)))
            break;
        uint64_t *pv = ompf_xu_provenance(out, i);
        for (size_t r = 0; r < n; r++)
            pv[r] = ompf_xu_get(c->runs[r].p, tp[r])->id;
    }
    free(sorted);
    if (rc)
        goto fail;
    free(memo);
    free(vals);
    *outp = out;
    return 0;
fail:
    free(memo);
    free(vals);
    ompf_profile_destroy(out);
    return rc;
}

/* ---- report setup ------------------------------------------------------- */

static int report_init(fz_ctx_t *c)
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

static int report_types_events(fz_ctx_t *c)
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
    ompf_profile_destroy(c->ut);
    free(c->urank);
    free(c->res.v);
}

int ompf_fuse(const ompf_profile_t *const *inputs, const char *const *paths,
              size_t n, const ompf_fuse_opts_t *opts, ompf_profile_t **out,
              ompf_fuse_report_t **report, ompf_error_t *err)
{
    if (out)
        *out = NULL;
    if (report)
        *report = NULL;
    if (!inputs || !opts || !out || (unsigned)opts->strategy >= OMPF_FUSE_STRATEGY_COUNT)
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
        c.runs[r].p = inputs[r];
        c.runs[r].path = paths ? paths[r] : NULL;
        c.runs[r].n_xu = ompf_xu_count(inputs[r]);
        if (c.runs[r].n_xu >= FZ_NONE) {
            rc = ompf_error_set(err, OMPF_ERANGE, "input %zu has too many XUs", r);
            goto done;
        }
    }
    if ((rc = report_init(&c)))
        goto done;
    c.order = c.rep->order;
    if ((rc = check_inputs(&c, forced, sizeof forced)) ||
        (rc = match_types(&c)) || (rc = match_events(&c)) ||
        (rc = build_union_trie(&c)) || (rc = group_by_type(&c)))
        goto done;
    int bc = opts->strategy == OMPF_FUSE_BC ||
             opts->strategy == OMPF_FUSE_BC_UNLABELED;
    if (bc && (rc = bc_order(&c)))
        goto done;
    if ((rc = report_types_events(&c)))
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
    if ((rc = build_output(&c, forced, out)))
        goto done;
    c.rep->out_xus = ompf_xu_count(*out);
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
