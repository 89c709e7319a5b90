/* Internals of libompfanalysis shared by its files. */
#ifndef OMPF_ANALYSIS_INTERNAL_H
#define OMPF_ANALYSIS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ompfuse/analysis.h"

/* ---- expressions (expr.c) -------------------------------------------- */

/* Variables of an expression: event e is index e; then these two. */
#define AV_DURATION(nev) (nev)
#define AV_ITERATIONS(nev) ((nev) + 1)

typedef struct aexpr {
    int n;             /* RPN instructions */
    unsigned char *op; /* AOP_* */
    double *arg;       /* constant, or variable index */
    int depth;         /* stack needed */
    uint32_t *vars;    /* distinct variables used */
    int n_vars;
} aexpr_t;

enum { AEV_OK = 0, AEV_MISSING = 1, AEV_ZERO_DEN = 2 };

/* Compiles text against p's events.  On error, err gets "metric 'DEF',
 * position N: ..." where N counts from 1 in def and text starts at
 * def[off]; returns OMPF_EUSAGE. */
int aexpr_compile(const char *def, size_t off, const ompf_profile_t *p,
                  aexpr_t *out, ompf_error_t *err);
/* 1 when def[off..] compiles against p, 0 when it names an event p does
 * not have, -1 on a syntax error (no message either way). */
int aexpr_applies(const char *def, size_t off, const ompf_profile_t *p);
void aexpr_free(aexpr_t *e);
/* vars: every variable's value; AEV_* result. */
int aexpr_eval(const aexpr_t *e, const double *vars, double *out);
/* The same for m XUs at once: vm holds variable v of XU k at
 * vm[v * stride + k]; out[k] and st[k] (AEV_*) receive the results;
 * stack holds e->depth * stride values. */
int aexpr_eval_many(const aexpr_t *e, const double *vm, size_t stride, size_t m, double *out,
                    unsigned char *st, double *stack);

/* ---- metric definitions (metrics.c) ---------------------------------- */

typedef struct ametric_def {
    char *name, *def;        /* def: "NAME=EXPR" as given */
    size_t expr_off;         /* where EXPR starts in def */
    char *origin;            /* "built-in", "--metric", "FILE:LINE" */
    int user;                /* from --metric: must apply */
} ametric_def_t;

typedef struct ametric_list {
    ametric_def_t *v;
    size_t n, cap;
} ametric_list_t;

int ametric_parse_def(ametric_list_t *l, const char *def, const char *origin,
                      int user, ompf_error_t *err);
int ametric_parse_text(ametric_list_t *l, const char *text, const char *origin,
                       ompf_error_t *err);
int ametric_builtins(ametric_list_t *l);
void ametric_free(ametric_list_t *l);

/* ---- statistics (stats.c) -------------------------------------------- */

typedef struct astats {
    size_t n, missing, zero_den; /* values used, left out and why */
    double sum, mean, median, p5, p95, cv;
} astats_t;

/* Fills s from v[0..n) (reordered in place); missing fields stay. */
void astats_compute(double *v, size_t n, astats_t *s);
/* The q-quantile (0..1) of v[0..n), linear interpolation (numpy's
 * default); v is reordered. */
double astats_quantile(double *v, size_t n, double q);

/* ---- the result ------------------------------------------------------- */

typedef enum { ADIM_CONSTRUCT, ADIM_THREAD, ADIM_CORE, ADIM_NUMA, ADIM_KIND,
               ADIM_SUBTREE, ADIM_COUNT } adim_t;
extern const char *const adim_names[ADIM_COUNT];

typedef struct awhere {
    int dim;
    char *text;        /* "DIM=VALUE" as given */
    const char *value; /* inside text */
} awhere_t;

struct ompf_analysis {
    int dims[ADIM_COUNT], ndims;
    unsigned depth;
    awhere_t *where;
    size_t nwhere;
    ametric_list_t user, file;
    int builtins;
    char *sort, *top_col;
    unsigned top_n;
};

typedef enum { ACOL_TIME, ACOL_EVENT, ACOL_METRIC } acol_kind_t;

typedef struct acol {
    char *name;
    acol_kind_t kind;
    int estimate;  /* HEM estimate (or a metric using one) */
    uint32_t event;
    aexpr_t expr;
    char *defn, *origin; /* metrics: "NAME=EXPR" and where it came from */
} acol_t;

typedef struct agroup {
    int64_t key[ADIM_COUNT];
    char *name;
    int gap;            /* the gap bucket row */
    size_t xus, excl_xus;
    astats_t *st;       /* per column */
    double *share;      /* per column (events and time) */
    double *ratio;      /* per column (metrics: expression on sums) */
    double *excl_sum;   /* per column (subtree grouping) */
    size_t *excl_n;
} agroup_t;

struct ompf_aresult {
    const ompf_profile_t *p;
    char *name;
    const char *mode;
    int dims[ADIM_COUNT], ndims;
    unsigned depth;
    int estimates;   /* some column is an estimate */
    size_t ncols;
    acol_t *cols;
    size_t ngroups;  /* gap rows included */
    agroup_t *groups;
    size_t nsel;     /* XUs that passed the filters */
    uint32_t *sel;
    uint32_t *canon; /* per construct: the first with its name, so that
                        the copies of one source construct (inlined into
                        two functions) are one group */
    double *total;   /* per column: Σ XUs + gap (share denominator) */
    size_t *gap_missing; /* per column: threads whose gap is missing */
    double thread_time;  /* threads × wall span, ns */
    uint64_t t0, t1;     /* wall span */
    size_t nthreads;
    char **metric_notes; /* built-in metrics skipped etc. */
    size_t n_notes;
    size_t top_n;
    int top_col;
    uint32_t *top;   /* XU indices */
    size_t ntop;
    int sort_col;
};

/* Value of column c for XU i; AEV_* status. */
int ares_value(const ompf_aresult_t *r, size_t c, size_t i, double *v);
/* An XU's expression variables: its event values, duration, iterations. */
/* The time XU i (record x) ran: the sum of its parts, end - start when it
 * ran in one piece.  A task suspended while its children ran counts its
 * own time only, as its counts do (docs/analysis.md). */
double axu_time(const ompf_profile_t *p, size_t i, const ompf_xu_t *x);
void ares_vars(const ompf_profile_t *p, size_t i, const ompf_xu_t *x, const double *row,
               double *vars);
/* Finds a column by name (events also by short name); -1 if none. */
int ares_find_col(const ompf_aresult_t *r, const char *name);
/* "construct" display name of XU i's construct (file:line or name). */
const char *ares_construct_name(const ompf_profile_t *p, uint32_t type);
/* "; did you mean COLUMN?" for the column nearest to name, "" when none is
 * near (a misspelt --sort, --top-by, --colour ...). */
void ares_col_suggest(const ompf_aresult_t *r, const char *name, char *buf, size_t len);

/* groups.c: the groups with their statistics and gap rows. */
int agroups_build(const ompf_analysis_t *a, ompf_aresult_t *r, ompf_error_t *err);
/* order.c: sorts the first ng groups (gap rows stay last); the top N. */
int agroups_sort(const ompf_analysis_t *a, ompf_aresult_t *r, size_t ng, ompf_error_t *err);
int atop_build(const ompf_analysis_t *a, ompf_aresult_t *r, ompf_error_t *err);
/* The ancestor of node at depth (node itself when not deeper). */
uint32_t aancestor_at(const ompf_profile_t *p, uint32_t node, uint32_t depth);

/* Number formatting shared by the writers: "-" for missing. */
void afmt(char *buf, size_t len, double v);

#endif
