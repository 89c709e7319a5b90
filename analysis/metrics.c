/*
 * Metric definitions: "NAME = EXPR" from --metric, from a metrics file
 * and from the built-in set below (the same format; docs/analysis.md).
 * A name defined several times applies its first definition whose events
 * the profile has, which is how one metric covers several event spellings.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

/* Hardware metrics as libpfm4's perf:: aliases and the generic
 * PERF_COUNT_HW_* names spell their events; software ones on the events
 * this tool can always open. */
static const char builtin_text[] =
    "IPC = INSTRUCTIONS / CYCLES\n"
    "IPC = INSTRUCTIONS / CPU-CYCLES\n"
    "IPC = PERF_COUNT_HW_INSTRUCTIONS / PERF_COUNT_HW_CPU_CYCLES\n"
    "CPI = CYCLES / INSTRUCTIONS\n"
    "CPI = CPU-CYCLES / INSTRUCTIONS\n"
    "CPI = PERF_COUNT_HW_CPU_CYCLES / PERF_COUNT_HW_INSTRUCTIONS\n"
    "CACHE_MISS_RATIO = CACHE-MISSES / CACHE-REFERENCES\n"
    "CACHE_MISS_RATIO = PERF_COUNT_HW_CACHE_MISSES / PERF_COUNT_HW_CACHE_REFERENCES\n"
    "L1D_MISS_RATIO = L1-DCACHE-LOAD-MISSES / L1-DCACHE-LOADS\n"
    "LLC_MISS_RATIO = LLC-LOAD-MISSES / LLC-LOADS\n"
    "BRANCH_MISS_RATIO = BRANCH-MISSES / BRANCH-INSTRUCTIONS\n"
    "BRANCH_MISS_RATIO = PERF_COUNT_HW_BRANCH_MISSES / PERF_COUNT_HW_BRANCH_INSTRUCTIONS\n"
    "CACHE_MPKI = 1000 * CACHE-MISSES / INSTRUCTIONS\n"
    "CACHE_MPKI = 1000 * PERF_COUNT_HW_CACHE_MISSES / PERF_COUNT_HW_INSTRUCTIONS\n"
    "L1D_MPKI = 1000 * L1-DCACHE-LOAD-MISSES / INSTRUCTIONS\n"
    "LLC_MPKI = 1000 * LLC-LOAD-MISSES / INSTRUCTIONS\n"
    "CPU_UTILIZATION = TASK-CLOCK / duration_ns\n"
    "PAGE_FAULTS_PER_MS = PAGE-FAULTS / duration_ns * 1e6\n"
    "MINOR_FAULTS_PER_MS = MINOR-FAULTS / duration_ns * 1e6\n";

static int valid_name(const char *s, size_t n)
{
    if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-'))
            return 0;
    return 1;
}

int ametric_parse_def(ametric_list_t *l, const char *def, const char *origin, int user,
                      ompf_error_t *err)
{
    const char *eq = strchr(def, '=');
    const char *b = def;
    while (isspace((unsigned char)*b))
        b++;
    if (!eq)
        return ompf_error_set(err, OMPF_EUSAGE,
                              "metric '%s' (%s), position 1: expected NAME=EXPRESSION", def,
                              origin);
    const char *e = eq;
    while (e > b && isspace((unsigned char)e[-1]))
        e--;
    if (!valid_name(b, (size_t)(e - b)))
        return ompf_error_set(err, OMPF_EUSAGE,
                              "metric '%s' (%s), position %zu: the name must be letters, "
                              "digits, '_', '.', '-', starting with a letter",
                              def, origin, (size_t)(b - def) + 1);
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 32;
        ametric_def_t *v = realloc(l->v, nc * sizeof *v);
        if (!v)
            return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        l->v = v;
        l->cap = nc;
    }
    ametric_def_t *m = &l->v[l->n];
    m->name = strndup(b, (size_t)(e - b));
    m->def = strdup(def);
    m->origin = strdup(origin);
    m->expr_off = (size_t)(eq + 1 - def);
    m->user = user;
    if (!m->name || !m->def || !m->origin) {
        free(m->name);
        free(m->def);
        free(m->origin);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    l->n++;
    return 0;
}

int ametric_parse_text(ametric_list_t *l, const char *text, const char *origin,
                       ompf_error_t *err)
{
    int lineno = 0;
    for (const char *s = text; *s;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        lineno++;
        char *line = strndup(s, n);
        if (!line)
            return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        size_t k = strlen(line);
        while (k && isspace((unsigned char)line[k - 1]))
            line[--k] = 0;
        const char *b = line;
        while (isspace((unsigned char)*b))
            b++;
        int rc = 0;
        if (*b) {
            char where[1024];
            snprintf(where, sizeof where, "%s:%d", origin, lineno);
            rc = ametric_parse_def(l, line, where, 0, err);
        }
        free(line);
        if (rc)
            return rc;
        s += n + (nl != NULL);
    }
    return 0;
}

int ametric_builtins(ametric_list_t *l)
{
    return ametric_parse_text(l, builtin_text, "built-in", NULL);
}

void ametric_free(ametric_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].name);
        free(l->v[i].def);
        free(l->v[i].origin);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}
