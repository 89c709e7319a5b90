/* Shared between the EPD files of libompfeval (epd.c, columns.c,
 * binning.c, calibrate.c, target.c, results.c): the evaluation's state and
 * the steps one file calls in another.  Not a public interface. */
#ifndef OMPF_EPD_INTERNAL_H
#define OMPF_EPD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "evaluate_internal.h"
#include "ompfuse/evaluate.h"


/* A profile seen by evaluation event: where each event's values are in
 * its rows (the values are not copied), each XU's evaluation type, and
 * while it is binned the ranks of its complete events. */
typedef struct colset {
    const ompf_profile_t *p; /* NULL once copied (own) */
    double *own;    /* references added with a copy: the counted events'
                       values, stride per XU, in place of p's rows */
    size_t stride;
    size_t nxu, nev;
    int *evmap;     /* per evaluation event: its index in p's rows, or -1
                       (not counted/absent) */
    double **rank;  /* per event: ranks when the column has no missing */
    uint32_t *type; /* per XU: evaluation type or OMPF_NONE32 */
    /* references: min/max of each event over XUs with a value, and per
     * type ([type * nev + event]); NaN when no value */
    double *emin, *emax, *tmin, *tmax;
} colset_t;

/* XU i's values, indexed by evmap. */
static inline const double *colset_row(const colset_t *c, size_t i)
{
    return c->own ? c->own + i * c->stride : ompf_xu_values_const(c->p, i);
}

/* Whether the colset has values of evaluation event e. */
static inline int colset_has(const colset_t *c, size_t e)
{
    return c->evmap[e] >= 0;
}

/* One event on one grid dimension: pairs whose repeats are the same share
 * the event's bounds, so its values are binned once per XU for all of them
 * (ompf_eval_create keys axes by event and repeat list). */
typedef struct axis {
    uint32_t ev;
    size_t nrep;
    const size_t *rep; /* the first pair's repeat list */
    int have;          /* some repeat has a value */
    ompf_grid_t grid;  /* dimension 0: the bounds over the repeats */
    unsigned char *thave; /* per type */
    ompf_grid_t *tgrid;   /* per type (per_type) */
} axis_t;

typedef struct ptype {
    uint32_t type;
    ompf_grid_t grid;
    ompf_hist2d_t *hist; /* per repeat */
    double weight;
    double calibration;
    int floor;
    char *problem;
} ptype_t;

typedef struct pair {
    uint32_t ev[2];
    uint32_t ax[2];
    size_t nrep;
    size_t *rep;
    ompf_grid_t grid;
    ompf_hist2d_t *hist; /* per repeat */
    double calibration;
    int floor;
    double spearman_ref;
    double *sp; /* per repeat: its Spearman of the pair (while created) */
    char *problem;
    size_t ntypes;
    ptype_t *types;
    uint32_t *slot; /* per type: index in types or OMPF_NONE32 */
} pair_t;

struct ompf_eval {
    ompf_eval_opts_t opts;
    char **names;
    size_t nrefs;
    size_t nev;
    char **evname;
    size_t ntypes;
    char **typekey;  /* identity (matching across profiles) */
    char **typename; /* construct key, what is printed */
    colset_t *refcols;
    size_t npairs;
    pair_t *pairs;
    size_t naxes;
    axis_t *axes;
    unsigned threads;
    ompf_emd_ws_t **ws; /* one per thread */
    char *notes;
    size_t notes_len;
    char **lack; /* per event: problem of a target without it */
    char *program, *argv; /* metadata of the first reference (copies) */
    char *program_bid;    /* its program's build-id (ompf_program_build_id) */
    size_t refcap;
};


/* Spearman coefficients are computed for Correlation Error and for the
 * CSV's columns. */
static inline int want_spearman(const ompf_eval_t *ev)
{
    return ev->opts.correlation_error || ev->opts.spearman;
}

/* epd.c */
char *ompf__eval_strdup(const char *s);
/* ompf_eval_same_program on metadata strings (NULL: absent). */
int ompf__same_program(const char *prog_a, const char *argv_a, const char *bid_a,
                       const char *name_a, const char *prog_b, const char *argv_b,
                       const char *bid_b, const char *name_b, ompf_error_t *err);
char *ompf__eval_asprintf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* columns.c */
void ompf__colset_free(colset_t *c);
/* Frees what is per XU (types, ranks): a reference once binned. */
void ompf__colset_release(colset_t *c);
/* copy: c keeps its own copy of the values of the events it has (c->own)
 * and forgets p, which may then be destroyed. */
int ompf__colset_build(ompf_eval_t *ev, const ompf_profile_t *p,
                       int only_counted, int add_types, int copy,
                       colset_t *c);
/* Extends c->evmap to the evaluation's events (added after c: absent). */
int ompf__colset_events(const ompf_eval_t *ev, colset_t *c);
/* Ranks of the complete events, for ompf__colset_spearman. */
int ompf__colset_ranks(const ompf_eval_t *ev, colset_t *c);
double ompf__colset_spearman(const colset_t *c, uint32_t a, uint32_t b);

/* binning.c */
int ompf__colset_bounds(const ompf_eval_t *ev, colset_t *c);
int ompf__axis_get(ompf_eval_t *ev, uint32_t e, const size_t *rep,
                   size_t nrep, uint32_t *out);
int ompf__pair_setup(ompf_eval_t *ev, pair_t *pr);
/* The histograms of c for the pairs i with want[i]: hall[i] over all XUs
 * and, when th is non-NULL (per type), th[i] (allocated, the pair's
 * pr->ntypes types).  One pass over the XUs, chunk by chunk, for as many
 * pairs as ACC_BUDGET allows.  label: of the progress line. */
int ompf__colset_bin(ompf_eval_t *ev, const colset_t *c,
                     const unsigned char *want, ompf_hist2d_t *hall,
                     ompf_hist2d_t **th, const char *label);

/* Bins reference ref into the histograms of the pairs it is a repeat of;
 * with Spearman wanted, also its coefficient of each of those pairs. */
int ompf__bin_reference(ompf_eval_t *ev, size_t ref);

/* calibrate.c */
int ompf__pair_prepare(void *ctx, size_t i, size_t thread);

#endif
