/*
 * Derived-metric expressions: + - * /, unary minus, parentheses, numbers,
 * event names and the variables duration_ns and iterations, compiled to
 * RPN by recursive descent and evaluated per XU.
 *
 * Event names contain '-' and ':' (perf::TASK-CLOCK), so a name is not a
 * token of fixed shape: at a name position the longest event name (full,
 * or without its "pmu::" prefix) followed by a non-name character wins,
 * and {any name} quotes one explicitly.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "ompfuse/text.h"

enum { AOP_CONST, AOP_VAR, AOP_ADD, AOP_SUB, AOP_MUL, AOP_DIV, AOP_NEG };

typedef struct parser {
    const char *def; /* whole definition, for messages */
    const char *s;   /* expression text */
    size_t off;      /* position of s in def */
    size_t i;
    const ompf_profile_t *p;
    aexpr_t *e;
    int cap, sp;
    ompf_error_t *err;
    int quiet; /* aexpr_applies: no message */
    int failed;
    int unknown; /* failed on an unknown event (not on syntax) */
} parser_t;

static int fail(parser_t *ps, size_t at, const char *fmt, const char *a)
{
    if (!ps->failed && !ps->quiet) {
        char what[512];
        snprintf(what, sizeof what, fmt, a);
        ompf_error_set(ps->err, OMPF_EUSAGE, "metric '%s', position %zu: %s", ps->def,
                       ps->off + at + 1, what);
    }
    ps->failed = 1;
    return -1;
}

static int emit(parser_t *ps, int op, double arg)
{
    aexpr_t *e = ps->e;
    if (e->n == ps->cap) {
        int nc = ps->cap ? 2 * ps->cap : 16;
        unsigned char *o = realloc(e->op, (size_t)nc);
        if (o)
            e->op = o;
        double *a = o ? realloc(e->arg, (size_t)nc * sizeof *a) : NULL;
        if (!a)
            return fail(ps, ps->i, "%s", "out of memory");
        e->arg = a;
        ps->cap = nc;
    }
    e->op[e->n] = (unsigned char)op;
    e->arg[e->n++] = arg;
    ps->sp += (op == AOP_CONST || op == AOP_VAR) ? 1 : (op == AOP_NEG ? 0 : -1);
    if (ps->sp > e->depth)
        e->depth = ps->sp;
    return 0;
}

static void skip_ws(parser_t *ps)
{
    while (isspace((unsigned char)ps->s[ps->i]))
        ps->i++;
}

static int name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == ':' || c == '.';
}

static const char *short_name(const char *n)
{
    const char *c = strstr(n, "::");
    return c ? c + 2 : n;
}

/* Length of the longest variable or event name at s that ends before a
 * non-name character; *var receives its variable index.  A full event
 * name beats a short one of the same length; two events with the same
 * short name and no full match set *ambiguous. */
static size_t match_name(const ompf_profile_t *p, const char *s, int *var, int *ambiguous)
{
    size_t nev = ompf_event_count(p), best = 0;
    int best_full = 0;
    *ambiguous = 0;
    static const char *const builtin[2] = {"duration_ns", "iterations"};
    for (int b = 0; b < 2; b++) {
        size_t l = strlen(builtin[b]);
        if (!strncmp(s, builtin[b], l) && !name_char(s[l])) {
            best = l;
            best_full = 1;
            *var = (int)(b == 0 ? AV_DURATION(nev) : AV_ITERATIONS(nev));
        }
    }
    for (int pass = 0; pass < 2; pass++)
        for (size_t e = 0; e < nev; e++) {
            const char *n = ompf_event_get(p, (uint32_t)e)->name;
            if (pass)
                n = short_name(n);
            size_t l = strlen(n);
            if (!l || strncmp(s, n, l) || name_char(s[l]))
                continue;
            if (l > best) {
                best = l;
                best_full = !pass;
                *var = (int)e;
                *ambiguous = 0;
            } else if (l == best && pass && !best_full && *var != (int)e) {
                *ambiguous = 1;
            }
        }
    return best;
}

/* "; did you mean NAME?" for the event (or variable) nearest to word, ""
 * when none is near. */
static void suggest(const ompf_profile_t *p, const char *word, int full_only, char *buf,
                    size_t len)
{
    size_t nev = ompf_event_count(p), best = 4;
    const char *at = NULL;
    static const char *const vars[2] = {"duration_ns", "iterations"};
    for (size_t e = 0; e < nev + (full_only ? 0 : 2); e++) {
        const char *n = e < nev ? ompf_event_get(p, (uint32_t)e)->name : vars[e - nev];
        for (int sh = 0; sh < 2 - full_only; sh++) {
            size_t d = ompf_edit_distance(word, sh ? short_name(n) : n);
            if (d < best) {
                best = d;
                at = sh ? short_name(n) : n;
            }
        }
    }
    snprintf(buf, len, "%s%s%s", at ? "; did you mean " : "", at ? at : "", at ? "?" : "");
}

/* "unknown event 'NAME'" with the nearest name and tail; marks ps. */
static void unknown_msg(parser_t *ps, const char *name, int braces, const char *tail,
                        char *buf, size_t len)
{
    char sug[300] = "";
    if (!ps->quiet) /* the built-in metrics' checks stay cheap */
        suggest(ps->p, name, braces, sug, sizeof sug);
    snprintf(buf, len, "unknown event '%s'%s%s", name, sug, tail);
    ps->unknown = 1;
}

static int parse_sum(parser_t *ps);

static int parse_primary(parser_t *ps)
{
    skip_ws(ps);
    const char *s = ps->s + ps->i;
    char c = *s;
    if (c == '(') {
        size_t open = ps->i++;
        skip_ws(ps);
        if (ps->s[ps->i] == ')')
            return fail(ps, open, "%s", "empty parentheses");
        if (parse_sum(ps))
            return -1;
        skip_ws(ps);
        if (ps->s[ps->i] != ')')
            return fail(ps, open, "%s", "'(' is not closed");
        ps->i++;
        return 0;
    }
    if (c == '-' || c == '+') {
        ps->i++;
        if (parse_primary(ps))
            return -1;
        return c == '-' ? emit(ps, AOP_NEG, 0) : 0;
    }
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)s[1]))) {
        char *end;
        double v = strtod(s, &end);
        if (isalpha((unsigned char)*end) || *end == '_')
            return fail(ps, ps->i, "%s", "a number runs into a name");
        ps->i += (size_t)(end - s);
        return emit(ps, AOP_CONST, v);
    }
    if (c == '{') {
        const char *close = strchr(s, '}');
        if (!close)
            return fail(ps, ps->i, "%s", "'{' is not closed");
        char name[256];
        size_t l = (size_t)(close - s - 1);
        if (l >= sizeof name)
            l = sizeof name - 1;
        memcpy(name, s + 1, l);
        name[l] = 0;
        int ev = ompf_event_find(ps->p, name);
        if (ev < 0)
        {
            char msg[480];
            /* {} takes an event's full name only */
            unknown_msg(ps, name, 1, " (in {}, an event's full name)", msg, sizeof msg);
            return fail(ps, ps->i, "%s", msg);
        }
        ps->i += (size_t)(close - s) + 1;
        return emit(ps, AOP_VAR, ev);
    }
    if (isalpha((unsigned char)c) || c == '_') {
        int var = -1, amb = 0;
        size_t l = match_name(ps->p, s, &var, &amb);
        if (!l) {
            /* the word as written, '-' included (event names hold it) */
            char name[256], sug[480];
            size_t k = 0;
            while ((name_char(s[k]) || s[k] == '-') && k < sizeof name - 1)
                k++;
            memcpy(name, s, k);
            name[k] = 0;
            unknown_msg(ps, name, 0, " (see the events of 'ompfuse show')", sug, sizeof sug);
            return fail(ps, ps->i, "%s", sug);
        }
        if (amb) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)l, s);
            return fail(ps, ps->i, "'%s' names several events: write the full name in {}",
                        name);
        }
        ps->i += l;
        return emit(ps, AOP_VAR, var);
    }
    if (!c)
        return fail(ps, ps->i, "%s", "expression ends where a value is expected");
    char tok[2] = {c, 0};
    return fail(ps, ps->i, "unexpected '%s' where a value is expected", tok);
}

static int parse_product(parser_t *ps)
{
    if (parse_primary(ps))
        return -1;
    for (;;) {
        skip_ws(ps);
        char c = ps->s[ps->i];
        if (c != '*' && c != '/')
            return 0;
        ps->i++;
        if (parse_primary(ps) || emit(ps, c == '*' ? AOP_MUL : AOP_DIV, 0))
            return -1;
    }
}

static int parse_sum(parser_t *ps)
{
    if (parse_product(ps))
        return -1;
    for (;;) {
        skip_ws(ps);
        char c = ps->s[ps->i];
        if (c != '+' && c != '-')
            return 0;
        ps->i++;
        if (parse_product(ps) || emit(ps, c == '+' ? AOP_ADD : AOP_SUB, 0))
            return -1;
    }
}

static int compile(const char *def, size_t off, const ompf_profile_t *p, aexpr_t *out,
                   ompf_error_t *err, int quiet, int *unknown)
{
    memset(out, 0, sizeof *out);
    parser_t ps = {.def = def, .s = def + off, .off = off, .p = p, .e = out,
                   .err = err, .quiet = quiet};
    skip_ws(&ps);
    if (!ps.s[ps.i])
        fail(&ps, ps.i, "%s", "empty expression");
    else if (!parse_sum(&ps)) {
        skip_ws(&ps);
        char c = ps.s[ps.i];
        if (c == ')')
            fail(&ps, ps.i, "%s", "')' without '('");
        else if (c) {
            char tok[2] = {c, 0};
            fail(&ps, ps.i, "unexpected '%s' after a complete expression", tok);
        }
    }
    if (ps.failed) {
        if (unknown)
            *unknown = ps.unknown;
        aexpr_free(out);
        return OMPF_EUSAGE;
    }
    /* The distinct variables, for "missing when any input is". */
    size_t nvar = ompf_event_count(p) + 2;
    out->vars = calloc(nvar, sizeof *out->vars);
    if (!out->vars) {
        aexpr_free(out);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    for (int k = 0; k < out->n; k++) {
        if (out->op[k] != AOP_VAR)
            continue;
        uint32_t v = (uint32_t)out->arg[k];
        int seen = 0;
        for (int j = 0; j < out->n_vars; j++)
            seen |= out->vars[j] == v;
        if (!seen)
            out->vars[out->n_vars++] = v;
    }
    return 0;
}

int aexpr_compile(const char *def, size_t off, const ompf_profile_t *p, aexpr_t *out,
                  ompf_error_t *err)
{
    return compile(def, off, p, out, err, 0, NULL);
}

int aexpr_applies(const char *def, size_t off, const ompf_profile_t *p)
{
    aexpr_t e;
    int unknown = 0;
    if (compile(def, off, p, &e, NULL, 1, &unknown))
        return unknown ? 0 : -1;
    aexpr_free(&e);
    return 1;
}

void aexpr_free(aexpr_t *e)
{
    free(e->op);
    free(e->arg);
    free(e->vars);
    memset(e, 0, sizeof *e);
}

int aexpr_eval(const aexpr_t *e, const double *vars, double *out)
{
    for (int j = 0; j < e->n_vars; j++)
        if (isnan(vars[e->vars[j]])) /* the missing value is a NaN */
            return AEV_MISSING;
    double st[64], *stack = e->depth <= 64 ? st : malloc((size_t)e->depth * sizeof *stack);
    if (!stack)
        return AEV_MISSING;
    int sp = 0, rc = AEV_OK;
    for (int k = 0; k < e->n && rc == AEV_OK; k++) {
        switch (e->op[k]) {
        case AOP_CONST: stack[sp++] = e->arg[k]; break;
        case AOP_VAR: stack[sp++] = vars[(size_t)e->arg[k]]; break;
        case AOP_NEG: stack[sp - 1] = -stack[sp - 1]; break;
        case AOP_ADD: sp--; stack[sp - 1] += stack[sp]; break;
        case AOP_SUB: sp--; stack[sp - 1] -= stack[sp]; break;
        case AOP_MUL: sp--; stack[sp - 1] *= stack[sp]; break;
        default: /* AOP_DIV */
            sp--;
            if (stack[sp] == 0)
                rc = AEV_ZERO_DEN;
            else
                stack[sp - 1] /= stack[sp];
        }
    }
    if (rc == AEV_OK)
        *out = stack[0];
    if (stack != st)
        free(stack);
    return rc;
}

int aexpr_eval_many(const aexpr_t *e, const double *vm, size_t stride, size_t m, double *out,
                    unsigned char *st, double *stack)
{
    for (size_t k = 0; k < m; k++) {
        st[k] = AEV_OK;
        for (int j = 0; j < e->n_vars; j++)
            if (isnan(vm[e->vars[j] * stride + k])) /* the missing value is a NaN */
                st[k] = AEV_MISSING;
    }
    int sp = 0;
    for (int i = 0; i < e->n; i++) {
        /* below: the last operand; second: the one before it */
        double *top = stack + (size_t)sp * stride, *below = sp ? top - stride : top,
               *second = sp > 1 ? below - stride : below;
        switch (e->op[i]) {
        case AOP_CONST:
            for (size_t k = 0; k < m; k++)
                top[k] = e->arg[i];
            sp++;
            break;
        case AOP_VAR:
            memcpy(top, vm + (size_t)e->arg[i] * stride, m * sizeof *top);
            sp++;
            break;
        case AOP_NEG:
            for (size_t k = 0; k < m; k++)
                below[k] = -below[k];
            break;
        case AOP_ADD:
            for (size_t k = 0; k < m; k++)
                second[k] += below[k];
            sp--;
            break;
        case AOP_SUB:
            for (size_t k = 0; k < m; k++)
                second[k] -= below[k];
            sp--;
            break;
        case AOP_MUL:
            for (size_t k = 0; k < m; k++)
                second[k] *= below[k];
            sp--;
            break;
        default: /* AOP_DIV */
            for (size_t k = 0; k < m; k++) {
                if (below[k] == 0 && st[k] == AEV_OK)
                    st[k] = AEV_ZERO_DEN;
                second[k] /= below[k];
            }
            sp--;
        }
    }
    for (size_t k = 0; k < m; k++)
        out[k] = stack[k];
    return 0;
}
