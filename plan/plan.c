/* The plan: an ordered list of comment and run lines, text parse/write. */
#include "ompfuse/file.h"
#include "ompfuse/plan.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct plan_line {
    int is_run;
    char *comment;       /* comment lines */
    ompf_plan_run_t run; /* run lines */
} plan_line_t;

struct ompf_plan {
    size_t n, cap;
    plan_line_t *lines;
    size_t n_runs;
    const ompf_plan_run_t **runs; /* index of run lines */
    size_t n_events, cap_events;
    char **events; /* distinct events, first appearance order */
    unsigned slots;
};

static const char *const role_names[OMPF_ROLE_COUNT] = {
    "lgl", "ctc", "bc", "run", "reference", "hem", "hem-delta"};

const char *ompf_plan_role_name(int role)
{
    return role >= 0 && role < OMPF_ROLE_COUNT ? role_names[role] : NULL;
}

int ompf_plan_role_parse(const char *s)
{
    for (int i = 0; s && i < OMPF_ROLE_COUNT; i++)
        if (!strcmp(s, role_names[i]))
            return i;
    return -1;
}

const char *ompf_plan_role_mode(int role)
{
    switch (role) {
    case OMPF_ROLE_REFERENCE: return OMPF_MODE_REFERENCE;
    case OMPF_ROLE_HEM: return OMPF_MODE_HEM;
    case OMPF_ROLE_HEM_DELTA: return OMPF_MODE_HEM_DELTA;
    case OMPF_ROLE_LGL: case OMPF_ROLE_CTC: case OMPF_ROLE_BC:
    case OMPF_ROLE_RUN: return OMPF_MODE_RUN;
    default: return NULL;
    }
}

int ompf_plan_create(ompf_plan_t **out)
{
    if (!out)
        return OMPF_EINVAL;
    *out = calloc(1, sizeof **out);
    return *out ? 0 : OMPF_ENOMEM;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void ompf_plan_destroy(ompf_plan_t *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        free(p->lines[i].comment);
        free_strv(p->lines[i].run.events, p->lines[i].run.n_events);
        free_strv(p->lines[i].run.opts, p->lines[i].run.n_opts);
    }
    free(p->lines);
    free(p->runs);
    free_strv(p->events, p->n_events);
    free(p);
}

static int grow_line(ompf_plan_t *p)
{
    if (p->n == p->cap) {
        size_t c = p->cap ? p->cap * 2 : 16;
        plan_line_t *l = realloc(p->lines, c * sizeof *l);
        if (!l)
            return OMPF_ENOMEM;
        p->lines = l;
        p->cap = c;
    }
    memset(&p->lines[p->n], 0, sizeof p->lines[p->n]);
    return 0;
}

/* The runs index points into lines, which realloc moves: rebuild. */
static int reindex(ompf_plan_t *p)
{
    const ompf_plan_run_t **r = realloc(p->runs, (p->n + 1) * sizeof *r);
    if (!r)
        return OMPF_ENOMEM;
    p->runs = r;
    p->n_runs = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->lines[i].is_run)
            r[p->n_runs++] = &p->lines[i].run;
    return 0;
}

static int note_event(ompf_plan_t *p, const char *e)
{
    for (size_t i = 0; i < p->n_events; i++)
        if (!strcmp(p->events[i], e))
            return 0;
    if (p->n_events == p->cap_events) {
        size_t c = p->cap_events ? p->cap_events * 2 : 16;
        char **v = realloc(p->events, c * sizeof *v);
        if (!v)
            return OMPF_ENOMEM;
        p->events = v;
        p->cap_events = c;
    }
    if (!(p->events[p->n_events] = strdup(e)))
        return OMPF_ENOMEM;
    p->n_events++;
    return 0;
}

static char **dup_strv(const char *const *v, size_t n)
{
    char **o = calloc(n ? n : 1, sizeof *o);
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!(o[i] = strdup(v[i]))) {
            free_strv(o, i);
            return NULL;
        }
    return o;
}

static int add_run(ompf_plan_t *p, int role, uint32_t repeat,
                   const char *const *events, size_t n,
                   const char *const *opts, size_t n_opts, unsigned src_line)
{
    if (!p || ompf_plan_role_name(role) == NULL || repeat < 1 || n < 1 ||
        !events)
        return OMPF_EINVAL;
    if (grow_line(p))
        return OMPF_ENOMEM;
    plan_line_t *l = &p->lines[p->n];
    l->is_run = 1;
    l->run.role = role;
    l->run.repeat = repeat;
    l->run.src_line = src_line;
    l->run.events = dup_strv(events, n);
    l->run.opts = dup_strv(opts, n_opts);
    if (!l->run.events || !l->run.opts) {
        free_strv(l->run.events, l->run.events ? n : 0);
        free_strv(l->run.opts, l->run.opts ? n_opts : 0);
        return OMPF_ENOMEM;
    }
    l->run.n_events = n;
    l->run.n_opts = n_opts;
    p->n++;
    for (size_t i = 0; i < n; i++)
        if (note_event(p, events[i]))
            return OMPF_ENOMEM;
    return reindex(p);
}

int ompf_plan_add(ompf_plan_t *p, int role, uint32_t repeat,
                  const char *const *events, size_t n,
                  const char *const *opts, size_t n_opts)
{
    return add_run(p, role, repeat, events, n, opts, opts ? n_opts : 0, 0);
}

static int add_comment_str(ompf_plan_t *p, const char *s)
{
    if (grow_line(p))
        return OMPF_ENOMEM;
    if (!(p->lines[p->n].comment = strdup(s)))
        return OMPF_ENOMEM;
    p->n++;
    return reindex(p);
}

int ompf_plan_comment(ompf_plan_t *p, const char *fmt, ...)
{
    if (!p || !fmt)
        return OMPF_EINVAL;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return add_comment_str(p, buf);
}

int ompf_plan_append(ompf_plan_t *dst, const ompf_plan_t *src)
{
    if (!dst || !src)
        return OMPF_EINVAL;
    for (size_t i = 0; i < src->n; i++) {
        const plan_line_t *l = &src->lines[i];
        int rc;
        if (l->is_run)
            rc = add_run(dst, l->run.role, l->run.repeat,
                         (const char *const *)l->run.events, l->run.n_events,
                         (const char *const *)l->run.opts, l->run.n_opts,
                         l->run.src_line);
        else
            rc = add_comment_str(dst, l->comment);
        if (rc)
            return rc;
    }
    if (!dst->slots)
        dst->slots = src->slots;
    return 0;
}

size_t ompf_plan_count(const ompf_plan_t *p) { return p ? p->n_runs : 0; }

const ompf_plan_run_t *ompf_plan_get(const ompf_plan_t *p, size_t i)
{
    return p && i < p->n_runs ? p->runs[i] : NULL;
}

size_t ompf_plan_total_runs(const ompf_plan_t *p, int role)
{
    size_t t = 0;
    for (size_t i = 0; p && i < p->n_runs; i++)
        if (role < 0 || p->runs[i]->role == role)
            t += p->runs[i]->repeat;
    return t;
}

size_t ompf_plan_event_count(const ompf_plan_t *p)
{
    return p ? p->n_events : 0;
}

const char *ompf_plan_event(const ompf_plan_t *p, size_t i)
{
    return p && i < p->n_events ? p->events[i] : NULL;
}

unsigned ompf_plan_slots(const ompf_plan_t *p) { return p ? p->slots : 0; }
void ompf_plan_set_slots(ompf_plan_t *p, unsigned slots)
{
    if (p)
        p->slots = slots;
}

/* ---- text ---------------------------------------------------------------- */

int ompf_plan_write(const ompf_plan_t *p, FILE *f)
{
    if (!p || !f)
        return OMPF_EINVAL;
    int slots_written = 0;
    for (size_t i = 0; i < p->n; i++) {
        const plan_line_t *l = &p->lines[i];
        if (!l->is_run) {
            if (!strncmp(l->comment, "slots:", 6)) {
                if (slots_written || !p->slots)
                    continue; /* the current value is written once */
                fprintf(f, "# slots: %u\n", p->slots);
                slots_written = 1;
                continue;
            }
            fprintf(f, l->comment[0] ? "# %s\n" : "#\n", l->comment);
            continue;
        }
        if (p->slots && !slots_written) {
            fprintf(f, "# slots: %u\n", p->slots);
            slots_written = 1;
        }
        fprintf(f, "%-9s %u ", role_names[l->run.role], l->run.repeat);
        for (size_t k = 0; k < l->run.n_events; k++)
            fprintf(f, "%s%s", k ? "," : "", l->run.events[k]);
        for (size_t k = 0; k < l->run.n_opts; k++)
            fprintf(f, " %s", l->run.opts[k]);
        fputc('\n', f);
    }
    return ferror(f) ? OMPF_EIO : 0;
}

int ompf_plan_save(const ompf_plan_t *p, const char *path, ompf_error_t *err)
{
    if (!p || !path)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_plan_save: no plan or path");
    if (!strcmp(path, "-")) {
        int rc = ompf_plan_write(p, stdout);
        if (fflush(stdout) || ferror(stdout))
            rc = OMPF_EIO;
        return rc ? ompf_error_set(err, OMPF_EIO, "standard output: cannot write the plan: "
                                   "%s", strerror(errno))
                  : 0;
    }
    /* a temporary renamed over path, or a device written directly */
    ompf_outfile_t *o;
    FILE *f;
    ompf_error_t e2;
    int rc = ompf_outfile_open(path, &o, &f, &e2);
    if (rc)
        return ompf_error_set(err, rc, "cannot write the plan %s: %s", path, e2.msg);
    if (ompf_plan_write(p, f)) {
        int e = errno;
        ompf_outfile_abort(o);
        return ompf_error_set(err, OMPF_EIO, "cannot write the plan %s: %s", path,
                              strerror(e));
    }
    if ((rc = ompf_outfile_commit(o, &e2)))
        return ompf_error_set(err, rc, "cannot write the plan %s: %s", path, e2.msg);
    return 0;
}

/* Splits s at any of seps into at most max items (in place). */
static size_t split(char *s, const char *seps, char **items, size_t max)
{
    size_t n = 0;
    char *save = NULL;
    for (char *t = strtok_r(s, seps, &save); t; t = strtok_r(NULL, seps, &save)) {
        if (n == max)
            return max + 1;
        items[n++] = t;
    }
    return n;
}

#define MAX_ITEMS 256

int ompf_plan_parse(const char *text, const char *origin, ompf_plan_t **out,
                    ompf_error_t *err)
{
    if (!text || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_plan_parse: no text");
    if (!origin)
        origin = "plan";
    *out = NULL;
    ompf_plan_t *p;
    if (ompf_plan_create(&p))
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    char *copy = strdup(text);
    if (!copy) {
        ompf_plan_destroy(p);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    int rc = 0;
    unsigned lineno = 0;
    /* "all" lines are expanded once every event of the plan is known. */
    size_t n_all = 0;
    size_t all_idx[MAX_ITEMS];
    char *cur = copy;
    while (cur && rc == 0) {
        char *nl = strchr(cur, '\n');
        if (nl)
            *nl = '\0';
        char *line = cur;
        cur = nl ? nl + 1 : NULL;
        lineno++;
        size_t L = strlen(line);
        while (L && (line[L - 1] == '\r' || isspace((unsigned char)line[L - 1])))
            line[--L] = '\0';
        while (isspace((unsigned char)*line))
            line++;
        if (!*line)
            continue;
        if (*line == '#') {
            line++;
            if (*line == ' ')
                line++;
            unsigned s;
            if (sscanf(line, "slots: %u", &s) == 1) {
                if (s < 1) {
                    rc = ompf_error_set(err, OMPF_EFORMAT,
                                        "%s:%u: \"# slots: 0\": the counter "
                                        "limit must be at least 1",
                                        origin, lineno);
                    break;
                }
                p->slots = s;
            }
            rc = add_comment_str(p, line);
            continue;
        }
        char *tok[MAX_ITEMS];
        size_t nt = split(line, " \t", tok, MAX_ITEMS);
        if (nt < 3 || nt > MAX_ITEMS) {
            rc = ompf_error_set(err, OMPF_EFORMAT,
                                "%s:%u: expected \"<role> <repeat> "
                                "<event,event,...> [key=value ...]\"; "
                                "separate events with commas, not blanks",
                                origin, lineno);
            break;
        }
        int role = ompf_plan_role_parse(tok[0]);
        if (role < 0) {
            rc = ompf_error_set(err, OMPF_EFORMAT,
                                "%s:%u: unknown role \"%s\"; roles are lgl, "
                                "ctc, bc, run, reference, hem, hem-delta",
                                origin, lineno, tok[0]);
            break;
        }
        char *end = NULL;
        errno = 0;
        unsigned long rep = strtoul(tok[1], &end, 10);
        if (errno || !end || *end || tok[1][0] == '-' || rep < 1 ||
            rep > 100000) {
            rc = ompf_error_set(err, OMPF_EFORMAT,
                                "%s:%u: repeat \"%s\" is not a whole number "
                                "from 1 to 100000",
                                origin, lineno, tok[1]);
            break;
        }
        char *ev[MAX_ITEMS];
        size_t ne = 0;
        {
            /* empty items ("a,,b") are mistakes, not something to skip */
            char *s = tok[2];
            for (;;) {
                char *c = strchr(s, ',');
                if (c)
                    *c = '\0';
                if (!*s || ne == MAX_ITEMS) {
                    rc = ompf_error_set(err, OMPF_EFORMAT,
                                        "%s:%u: %s in the event list", origin,
                                        lineno,
                                        ne == MAX_ITEMS ? "too many events"
                                                        : "an empty item");
                    break;
                }
                ev[ne++] = s;
                if (!c)
                    break;
                s = c + 1;
            }
            if (rc)
                break;
        }
        for (size_t i = 0; i < ne && rc == 0; i++)
            for (size_t j = 0; j < i; j++)
                if (!strcmp(ev[i], ev[j])) {
                    rc = ompf_error_set(err, OMPF_EFORMAT,
                                        "%s:%u: event %s is listed twice",
                                        origin, lineno, ev[i]);
                    break;
                }
        if (rc)
            break;
        for (size_t i = 3; i < nt; i++) {
            char *eq = strchr(tok[i], '=');
            if (!eq || eq == tok[i]) {
                rc = ompf_error_set(err, OMPF_EFORMAT,
                                    "%s:%u: \"%s\" after the events is not a "
                                    "key=value option",
                                    origin, lineno, tok[i]);
                break;
            }
        }
        if (rc)
            break;
        int is_all = ne == 1 && !strcmp(ev[0], "all");
        if (is_all) {
            if (n_all == MAX_ITEMS) {
                rc = ompf_error_set(err, OMPF_EFORMAT, "%s:%u: too many \"all\" lines",
                                    origin, lineno);
                break;
            }
            all_idx[n_all++] = p->n;
            /* placeholder event, replaced below; not noted as an event */
            if (grow_line(p)) {
                rc = OMPF_ENOMEM;
                break;
            }
            plan_line_t *l = &p->lines[p->n];
            l->is_run = 1;
            l->run.role = role;
            l->run.repeat = (uint32_t)rep;
            l->run.src_line = lineno;
            l->run.opts = dup_strv((const char *const *)&tok[3], nt - 3);
            l->run.n_opts = nt - 3;
            p->n++;
            rc = l->run.opts ? reindex(p) : OMPF_ENOMEM;
            continue;
        }
        rc = add_run(p, role, (uint32_t)rep, (const char *const *)ev, ne,
                     (const char *const *)&tok[3], nt - 3, lineno);
    }
    for (size_t k = 0; k < n_all && rc == 0; k++) {
        ompf_plan_run_t *r = &p->lines[all_idx[k]].run;
        if (p->n_events == 0) {
            rc = ompf_error_set(err, OMPF_EFORMAT,
                                "%s:%u: \"all\" needs other lines naming the "
                                "events; list the events instead",
                                origin, r->src_line);
            break;
        }
        r->events = dup_strv((const char *const *)p->events, p->n_events);
        if (!r->events) {
            rc = OMPF_ENOMEM;
            break;
        }
        r->n_events = p->n_events;
    }
    free(copy);
    if (rc == 0 && p->n_runs == 0)
        rc = ompf_error_set(err, OMPF_EFORMAT,
                            "%s: the plan has no run lines; make one with "
                            "`ompfuse plan`",
                            origin);
    if (rc) {
        if (rc == OMPF_ENOMEM)
            ompf_error_set(err, rc, "out of memory");
        ompf_plan_destroy(p);
        return rc;
    }
    *out = p;
    return 0;
}

int ompf_plan_load(const char *path, ompf_plan_t **out, ompf_error_t *err)
{
    if (!path || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_plan_load: no path");
    char *buf;
    size_t n;
    ompf_error_t why = {0};
    int rc = ompf_read_input(path, (size_t)1 << 26, "plan", &buf, &n, &why);
    if (rc == OMPF_ENOMEM)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    if (rc == OMPF_ERANGE)
        return ompf_error_set(err, OMPF_EFORMAT,
                              "%s is larger than 64 MiB: not a plan; plans "
                              "are text files written by `ompfuse plan`",
                              path);
    if (rc)
        return ompf_error_set(err, OMPF_EIO,
                              "cannot read the plan %s; make one with "
                              "`ompfuse plan -o %s`",
                              why.msg, path);
    if (memchr(buf, '\0', n)) {
        free(buf);
        return ompf_error_set(err, OMPF_EFORMAT,
                              "%s is not a plan (binary data); plans are text "
                              "files written by `ompfuse plan`",
                              path);
    }
    rc = ompf_plan_parse(buf, path, out, err);
    free(buf);
    return rc;
}
