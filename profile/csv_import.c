/* CSV import: the inverse of ompf_csv_export.  Every problem is reported
 * as "name:line:column: what is wrong; what to do". */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_num.h"
#include "fmt.h"
#include "ompfuse/csv.h"
#include "ompfuse/file.h"

#define CSV_MAX_THREAD (OMPF_MAX_THREADS - 1u)

enum { COL_XU, COL_TYPE, COL_KIND, COL_LABEL, COL_THREAD, COL_CPU, COL_START, COL_END,
       N_FIXED };

typedef struct field {
    char *s; /* unescaped, NUL-terminated */
    size_t line, col;
} field_t;

typedef struct parser {
    const char *name;
    const char *start, *p, *end; /* start: the whole CSV, for the run id */
    size_t line, col; /* of *p */
    char *text;       /* unescaped fields of the current record */
    size_t text_cap;
    field_t *f;
    size_t nf, cap_f;
    ompf_error_t *err;
} parser_t;

__attribute__((format(printf, 5, 6))) static int perr(parser_t *ps, size_t line, size_t col,
                                                      int code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ompf_error_set(ps->err, code, "%s:%zu:%zu: %s", ps->name, line, col, msg);
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *a = realloc(*arr, c * elem);
    if (!a)
        return OMPF_ENOMEM;
    *arr = a;
    *cap = c;
    return 0;
}

static void advance(parser_t *ps)
{
    if (*ps->p == '\n') {
        ps->line++;
        ps->col = 1;
    } else {
        ps->col++;
    }
    ps->p++;
}

/* Reads one record into ps->f.  Returns 1 when a record was read, 0 at the
 * end of input, negative on error.  Blank lines are skipped, as pandas
 * does. */
static int next_record(parser_t *ps)
{
    ps->nf = 0;
    while (ps->p < ps->end && (*ps->p == '\n' || *ps->p == '\r'))
        advance(ps);
    if (ps->p >= ps->end)
        return 0;
    /* The unescaped record is never longer than its raw text plus one NUL
     * per field: find the raw extent first. */
    size_t t = 0;
    const char *q = ps->p;
    int inq = 0;
    while (q < ps->end && (inq || *q != '\n')) {
        if (*q == '"')
            inq = !inq;
        q++;
    }
    size_t need = 2 * (size_t)(q - ps->p) + 2;
    if (need > ps->text_cap) {
        char *nt = realloc(ps->text, need);
        if (!nt)
            return ompf_error_set(ps->err, OMPF_ENOMEM, "%s: out of memory", ps->name);
        ps->text = nt;
        ps->text_cap = need;
    }
    for (;;) {
        if (grow((void **)&ps->f, &ps->cap_f, ps->nf + 1, sizeof *ps->f))
            return ompf_error_set(ps->err, OMPF_ENOMEM, "%s: out of memory", ps->name);
        field_t *f = &ps->f[ps->nf++];
        f->line = ps->line;
        f->col = ps->col;
        f->s = ps->text + t;
        if (ps->p < ps->end && *ps->p == '"') {
            advance(ps);
            for (;;) {
                if (ps->p >= ps->end)
                    return perr(ps, f->line, f->col, OMPF_EFORMAT,
                                "quoted field is not closed before the end of the file; add "
                                "the closing '\"'");
                if (*ps->p == '"') {
                    if (ps->p + 1 < ps->end && ps->p[1] == '"') {
                        ps->text[t++] = '"';
                        advance(ps);
                        advance(ps);
                        continue;
                    }
                    advance(ps);
                    break;
                }
                ps->text[t++] = *ps->p;
                advance(ps);
            }
            if (ps->p < ps->end && *ps->p != ',' && *ps->p != '\n' && *ps->p != '\r')
                return perr(ps, ps->line, ps->col, OMPF_EFORMAT,
                            "unexpected character after a closing quote; a quote inside a "
                            "quoted field is written as \"\"");
        } else {
            while (ps->p < ps->end && *ps->p != ',' && *ps->p != '\n' && *ps->p != '\r') {
                if (*ps->p == '"')
                    return perr(ps, ps->line, ps->col, OMPF_EFORMAT,
                                "quote inside an unquoted field; quote the whole field and "
                                "double the inner quotes");
                if (*ps->p == 0)
                    return perr(ps, ps->line, ps->col, OMPF_EFORMAT,
                                "NUL byte in the input; this is not a text CSV file");
                ps->text[t++] = *ps->p;
                advance(ps);
            }
        }
        ps->text[t++] = 0;
        if (ps->p < ps->end && *ps->p == ',') {
            advance(ps);
            continue;
        }
        if (ps->p < ps->end && *ps->p == '\r')
            advance(ps);
        if (ps->p < ps->end && *ps->p == '\n')
            advance(ps);
        return 1;
    }
}

/* ---- type strings -> constructs (hash of strings) --------------------- */

typedef struct strmap {
    char **keys;
    uint32_t *vals;
    size_t cap, n;
} strmap_t;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static uint32_t strmap_get(const strmap_t *m, const char *k)
{
    if (!m->cap)
        return UINT32_MAX;
    for (size_t i = hash_str(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i])
            return UINT32_MAX;
        if (!strcmp(m->keys[i], k))
            return m->vals[i];
    }
}

static int strmap_put(strmap_t *m, const char *k, uint32_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        char **keys = calloc(cap, sizeof *keys);
        uint32_t *vals = calloc(cap, sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return OMPF_ENOMEM;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                size_t j = hash_str(m->keys[i]) & (cap - 1);
                while (keys[j])
                    j = (j + 1) & (cap - 1);
                keys[j] = m->keys[i];
                vals[j] = m->vals[i];
            }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    size_t i = hash_str(k) & (m->cap - 1);
    while (m->keys[i])
        i = (i + 1) & (m->cap - 1);
    if (!(m->keys[i] = strdup(k)))
        return OMPF_ENOMEM;
    m->vals[i] = v;
    m->n++;
    return 0;
}

static void strmap_free(strmap_t *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->vals);
}

/* "file:line" -> resolved construct without module; "module+0xHEX" ->
 * module + offset; anything else is kept as an opaque name. */
static int add_construct(ompf_profile_t *p, const char *type, uint32_t *idx)
{
    ompf_construct_t c = {.module = "", .build_id = "", .name = type,
                          .kind = OMPF_CK_UNKNOWN};
    char *copy = strdup(type);
    if (!copy)
        return OMPF_ENOMEM;
    const char *colon = strrchr(type, ':');
    const char *plus = NULL;
    for (const char *s = type; (s = strstr(s, "+0x")); s++)
        plus = s;
    if (colon && colon > type && colon[1] && strspn(colon + 1, "0123456789") ==
                                                 strlen(colon + 1)) {
        long long line = strtoll(colon + 1, NULL, 10);
        if (line > 0 && line <= INT32_MAX) {
            copy[colon - type] = 0;
            c.file = copy;
            c.line = (int32_t)line;
        }
    } else if (plus && plus > type && plus[3] && strlen(plus + 3) <= 16 &&
               strspn(plus + 3, "0123456789abcdefABCDEF") == strlen(plus + 3)) {
        copy[plus - type] = 0;
        c.module = copy;
        c.offset = strtoull(plus + 3, NULL, 16);
    }
    int rc = ompf_construct_add(p, &c, idx);
    free(copy);
    return rc;
}

/* An imported profile's run id: a hash of the CSV's bytes and the options,
 * so the same data imported twice is recognisably one run (combine refuses
 * it given twice) while different data gets different ids.  Never 0, which
 * means "no id". */
static uint64_t import_run_id(const parser_t *ps, const char *prog, uint32_t team)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const char *c = ps->start; c < ps->end; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    for (const char *c = prog ? prog : ""; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    h = (h ^ team) * 0x100000001b3ull;
    h ^= h >> 31; /* spread the low bits FNV leaves weak */
    return h ? h : 1;
}

static int import_body(parser_t *ps, const ompf_csv_import_opts_t *opts, ompf_profile_t *p)
{
    int rc = next_record(ps);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return perr(ps, 1, 1, OMPF_EFORMAT, "the file is empty; expected the header line "
                    "'xu,type,kind,label,thread,cpu,start_ns,end_ns,<events>...'");
    static const char *const want[N_FIXED] = {"xu", "type", "kind", "label",
                                              "thread", "cpu", "start_ns", "end_ns"};
    if (ps->nf < N_FIXED)
        return perr(ps, 1, 1, OMPF_EFORMAT, "the header has %zu columns; it must start with "
                    "xu,type,kind,label,thread,cpu,start_ns,end_ns", ps->nf);
    for (size_t i = 0; i < N_FIXED; i++)
        if (strcmp(ps->f[i].s, want[i]))
            return perr(ps, ps->f[i].line, ps->f[i].col, OMPF_EFORMAT, "header column %zu is "
                        "'%s' but must be '%s' (xu,type,kind,label,thread,cpu,start_ns,end_ns "
                        "come first)", i + 1, ps->f[i].s, want[i]);
    size_t ncol = ps->nf, nev = ncol - N_FIXED;
    if (nev > OMPF_MAX_EVENTS)
        return perr(ps, ps->f[N_FIXED + OMPF_MAX_EVENTS].line,
                    ps->f[N_FIXED + OMPF_MAX_EVENTS].col, OMPF_ERANGE, "the header has %zu "
                    "event columns, more than the limit OMPF_MAX_EVENTS = %u (docs/format.md, "
                    "Limits)", nev, OMPF_MAX_EVENTS);
    for (size_t i = N_FIXED; i < ncol; i++) {
        const field_t *f = &ps->f[i];
        if (!*f->s)
            return perr(ps, f->line, f->col, OMPF_EFORMAT, "event column %zu has no name",
                        i + 1);
        if (ompf_event_find(p, f->s) >= 0)
            return perr(ps, f->line, f->col, OMPF_EFORMAT, "event '%s' appears twice in the "
                        "header", f->s);
        ompf_event_t ev = {.name = f->s, .status = OMPF_EV_COUNTED, .source = -1};
        uint32_t idx;
        if ((rc = ompf_event_add(p, &ev, &idx)))
            return perr(ps, f->line, f->col, rc, "event '%s' cannot be added (%s)", f->s,
                        ompf_strerror(rc));
    }

    double *row = malloc((nev + 1) * sizeof *row);
    uint64_t *xrow = malloc((nev + 1) * sizeof *xrow); /* exact counts of the row */
    strmap_t types = {0};
    fmt_idmap_t ids = {0};
    if (!row || !xrow) {
        free(row);
        free(xrow);
        return ompf_error_set(ps->err, OMPF_ENOMEM, "%s: out of memory", ps->name);
    }
    uint32_t max_thread = 0;
    size_t rows = 0;
    rc = 0;
    while (!rc) {
        int r = next_record(ps);
        if (r <= 0) {
            rc = r;
            break;
        }
        size_t line = ps->f[0].line;
        if (ps->nf != ncol) {
            rc = perr(ps, line, ps->f[ps->nf - 1].col, OMPF_EFORMAT, "row has %zu fields but "
                      "the header has %zu; every row needs one cell per column (empty cell = "
                      "missing value)", ps->nf, ncol);
            break;
        }
        field_t *f = ps->f;
        ompf_xu_t x = {.parts = 1, .core = -1, .numa = -1};
        uint64_t u;
#define BAD(i, what)                                                                      \
    do {                                                                                  \
        rc = perr(ps, f[i].line, f[i].col, OMPF_EFORMAT, "column '%s': '%s' is not %s",   \
                  want[i < N_FIXED ? i : 0], f[i].s, what);                               \
    } while (0)
/* Counts: decimal digits, at most 2^64-1, read exactly. */
#define COUNT(i, dst, what)                                                               \
    do {                                                                                  \
        int prc_ = ompf__csv_u64(f[i].s, UINT64_MAX, dst);                                \
        if (prc_ == -2)                                                                   \
            rc = perr(ps, f[i].line, f[i].col, OMPF_ERANGE, "column '%s': %s is above "   \
                      "2^64-1 = 18446744073709551615", want[i], f[i].s);                  \
        else if (prc_)                                                                    \
            BAD(i, what " (decimal digits only: no sign, hex, fraction or exponent)");    \
    } while (0)
        COUNT(COL_XU, &x.id, "an unsigned 64-bit integer");
        if (rc)
            break;
        uint32_t old;
        if (fmt_idmap_put(&ids, x.id, line < UINT32_MAX ? (uint32_t)line : UINT32_MAX - 1,
                          &old)) {
            rc = ompf_error_set(ps->err, OMPF_ENOMEM, "%s: out of memory", ps->name);
            break;
        }
        if (old != UINT32_MAX) {
            rc = perr(ps, f[0].line, f[0].col, OMPF_EFORMAT, "XU id %llu already appears on "
                      "line %u; XU ids must be unique", (unsigned long long)x.id, old);
            break;
        }
        if (!*f[COL_TYPE].s) {
            rc = perr(ps, f[1].line, f[1].col, OMPF_EFORMAT, "column 'type' is empty; give "
                      "the construct as file:line or module+0xOFFSET");
            break;
        }
        uint32_t type = strmap_get(&types, f[COL_TYPE].s);
        if (type == UINT32_MAX && ompf_construct_count(p) >= OMPF_MAX_CONSTRUCTS) {
            rc = perr(ps, f[COL_TYPE].line, f[COL_TYPE].col, OMPF_ERANGE, "column 'type': "
                      "more than %u distinct types, the limit OMPF_MAX_CONSTRUCTS "
                      "(docs/format.md, Limits)", OMPF_MAX_CONSTRUCTS);
            break;
        }
        if (type == UINT32_MAX) {
            if ((rc = add_construct(p, f[COL_TYPE].s, &type)) ||
                (rc = strmap_put(&types, f[COL_TYPE].s, type))) {
                rc = ompf_error_set(ps->err, rc, "%s: out of memory", ps->name);
                break;
            }
        }
        x.type = type;
        int kind = ompf_xu_kind_parse(f[COL_KIND].s);
        if (kind < 0) {
            char names[256] = "";
            for (int k = 0; k < OMPF_XU_KIND_COUNT; k++) {
                if (k)
                    strncat(names, ", ", sizeof names - strlen(names) - 1);
                strncat(names, ompf_xu_kind_name((ompf_xu_kind_t)k),
                        sizeof names - strlen(names) - 1);
            }
            rc = perr(ps, f[2].line, f[2].col, OMPF_EFORMAT, "column 'kind': '%s' is not an "
                      "XU kind (one of: %s)", f[2].s, names);
            break;
        }
        x.kind = (uint8_t)kind;
        size_t depth = 0;
        for (const char *d = f[COL_LABEL].s; *d; d++)
            depth += *d == '.';
        if (depth > OMPF_MAX_LABEL_DEPTH) {
            rc = perr(ps, f[COL_LABEL].line, f[COL_LABEL].col, OMPF_ERANGE, "column 'label': "
                      "%zu components, more than the limit OMPF_MAX_LABEL_DEPTH = %u "
                      "(docs/format.md, Limits)", depth, OMPF_MAX_LABEL_DEPTH);
            break;
        }
        if (strspn(f[COL_LABEL].s, "0123456789.") != strlen(f[COL_LABEL].s) ||
            ompf_label_parse(p, f[COL_LABEL].s, &x.label)) {
            BAD(COL_LABEL, "a dotted label such as 0.1.4.2");
            break;
        }
        COUNT(COL_THREAD, &u, "a thread index (unsigned integer)");
        if (rc)
            break;
        /* The thread table gets 1 + the largest index: keep it sane. */
        if (u > CSV_MAX_THREAD) {
            rc = perr(ps, f[COL_THREAD].line, f[COL_THREAD].col, OMPF_ERANGE, "column "
                      "'thread': %llu is too large (thread indices are below the limit "
                      "OMPF_MAX_THREADS = %u, docs/format.md, Limits)",
                      (unsigned long long)u, OMPF_MAX_THREADS);
            break;
        }
        x.thread = (uint32_t)u;
        x.team_thread = x.thread;
        if (x.thread > max_thread)
            max_thread = x.thread;
        if (ompf__csv_i32(f[COL_CPU].s, &x.cpu)) {
            BAD(COL_CPU, "a CPU number (-1 when unknown)");
            break;
        }
        COUNT(COL_START, &x.start_ns, "a time in ns (unsigned 64-bit integer)");
        if (!rc)
            COUNT(COL_END, &x.end_ns, "a time in ns (unsigned 64-bit integer)");
        if (rc)
            break;
        if (x.end_ns < x.start_ns) {
            BAD(COL_END, "a time in ns not before start_ns");
            break;
        }
        size_t n_exact = 0;
        for (size_t e = 0; e < nev && !rc; e++) {
            const field_t *v = &f[N_FIXED + e];
            const char *en = ompf_event_get(p, (uint32_t)e)->name;
            switch (ompf__csv_value(v->s, &row[e], &xrow[e])) {
            case 0: n_exact += xrow[e] != 0; break;
            case -2:
                rc = perr(ps, v->line, v->col, OMPF_ERANGE, "column '%s': %s is above 2^64-1 "
                          "= 18446744073709551615", en, v->s);
                break;
            case -3:
                rc = perr(ps, v->line, v->col, OMPF_ERANGE, "column '%s': %s is below -2^53 "
                          "and has no exact 64-bit float; integers beyond 2^53 are kept "
                          "exactly only as counts (0 to 2^64-1), so it would be rounded",
                          en, v->s);
                break;
            case -4:
                rc = perr(ps, v->line, v->col, OMPF_ERANGE, "column '%s': %s is beyond the "
                          "range of a 64-bit float", en, v->s);
                break;
            default:
                rc = perr(ps, v->line, v->col, OMPF_EFORMAT, "column '%s': '%s' is not a "
                          "number: write decimals such as 12, -3.5, 1.5e-07 or inf (no hex, "
                          "nan, blanks or '+'; leave the cell empty for a missing value)", en,
                          v->s);
            }
        }
        if (rc)
            break;
#undef COUNT
#undef BAD
        if ((rc = ompf_xu_add(p, &x, row))) {
            rc = perr(ps, line, 1, rc, "row cannot be added (%s)", ompf_strerror(rc));
            break;
        }
        /* Counts no double holds keep their exact value (profile.h). */
        for (size_t e = 0; e < nev && n_exact && !rc; e++)
            if (xrow[e] && (rc = ompf_xu_value_set_u64(p, rows, (uint32_t)e, xrow[e])))
                rc = ompf_error_set(ps->err, rc, "%s: out of memory", ps->name);
        if (rc)
            break;
        rows++;
    }
    free(row);
    free(xrow);
    strmap_free(&types);
    fmt_idmap_free(&ids);
    if (rc)
        return rc;

    /* Thread table and team size from the thread column. */
    uint32_t nth = rows ? max_thread + 1 : 0;
    uint32_t team = opts && opts->threads ? opts->threads : nth;
    for (uint32_t t = 0; t < nth; t++) {
        uint32_t idx;
        if ((rc = ompf_thread_add(p, -1, &idx)))
            return ompf_error_set(ps->err, rc, "%s: out of memory", ps->name);
    }
    for (size_t i = 0; i < rows; i++)
        ((ompf_xu_t *)ompf_xu_get(p, i))->team_size = team;
    char buf[32];
    snprintf(buf, sizeof buf, "%u", team);
    const char *prog = opts ? opts->program : NULL;
    if ((prog && *prog && ompf_meta_set(p, "program", prog)) ||
        ompf_meta_set(p, "mode", OMPF_MODE_IMPORTED) || ompf_meta_set(p, "team_size", buf) ||
        ompf_meta_set(p, "tool_version", OMPF_VERSION_STRING) ||
        ompf_profile_set_run_id(p, import_run_id(ps, prog, team)))
        return ompf_error_set(ps->err, OMPF_ENOMEM, "%s: out of memory", ps->name);
    return 0;
}

int ompf_csv_import(FILE *in, const char *name, const ompf_csv_import_opts_t *opts,
                    ompf_profile_t **out, ompf_error_t *err)
{
    if (!out || !in)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_csv_import: no input or output");
    *out = NULL;
    if (!name)
        name = "(csv)";
    /* Slurp: CSV files of 10^6 rows are tens of MB. */
    size_t len = 0, cap = 1 << 16;
    char *data = malloc(cap);
    if (!data)
        return ompf_error_set(err, OMPF_ENOMEM, "%s: out of memory", name);
    for (;;) {
        if (len == cap) {
            char *d = realloc(data, cap * 2);
            if (!d) {
                free(data);
                return ompf_error_set(err, OMPF_ENOMEM, "%s: out of memory", name);
            }
            data = d;
            cap *= 2;
        }
        size_t n = fread(data + len, 1, cap - len, in);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(in)) {
        free(data);
        return ompf_error_set(err, OMPF_EIO, "%s: read failed: %s", name, strerror(errno));
    }
    parser_t ps = {.name = name, .start = data, .p = data, .end = data + len, .line = 1, .col = 1, .err = err};
    ompf_profile_t *p = NULL;
    int rc = ompf_profile_create(&p);
    if (rc)
        rc = ompf_error_set(err, rc, "%s: out of memory", name);
    else
        rc = import_body(&ps, opts, p);
    free(ps.text);
    free(ps.f);
    free(data);
    if (rc) {
        ompf_profile_destroy(p);
        return rc;
    }
    *out = p;
    return 0;
}
