/* Internal state shared by the fusion strategies (not installed). */
#ifndef OMPF_FUSION_FZ_H
#define OMPF_FUSION_FZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/fusion.h"

#define FZ_NONE UINT32_MAX

/* One input run, with everything the strategies need precomputed. */
typedef struct fz_run {
    const ompf_profile_t *p;
    const char *path;
    size_t n_xu;
    uint32_t *ctype;    /* construct index -> global type */
    uint32_t *ulab;     /* label node -> node of the union trie; NULL when
                           the labels are the union trie's nodes already
                           (shared labels, profile.h): fz_xu_ulab() */
    int32_t *ev;        /* global event -> this run's event index, -1 when
                           absent, failed or without any value */
    uint8_t *novals;    /* global event -> 1 when this run marks it measured
                           but none of its XUs has a value (an all-empty CSV
                           column): then ev is -1 too */
    uint32_t *tstart;   /* n_types + 1 offsets into bytype */
    uint32_t *bytype;   /* XU indices grouped by type, ascending index;
                           NULL when the XUs come in type order (a
                           one-type program): read through fz_typed */
    /* The XU fields the strategies read, through views that serve full
     * and lean inputs alike (profile.h, "Lean profiles"): fz_xu_type()
     * and the like. */
    ompf_u32_view_t vtype, vlabel;
    ompf_u64_view_t vid, vstart, vend;
} fz_run_t;

static inline uint32_t fz_xu_type(const fz_run_t *R, size_t i)
{
    return R->vtype.base[i * R->vtype.stride];
}
static inline uint32_t fz_xu_label(const fz_run_t *R, size_t i)
{
    return R->vlabel.base[i * R->vlabel.stride];
}
/* XU i's node in the union trie (ctx->ut). */
static inline uint32_t fz_xu_ulab(const fz_run_t *R, size_t i)
{
    uint32_t l = fz_xu_label(R, i);
    return R->ulab ? R->ulab[l] : l;
}
static inline uint64_t fz_xu_id(const fz_run_t *R, size_t i)
{
    return R->vid.base[i * R->vid.stride];
}
/* XU j of type t of run R. */
static inline uint32_t fz_typed(const fz_run_t *R, size_t t, size_t j)
{
    return R->bytype ? R->bytype[R->tstart[t] + j] : (uint32_t)(R->tstart[t] + j);
}
static inline uint64_t fz_xu_start(const fz_run_t *R, size_t i)
{
    return R->vstart.base[i * R->vstart.stride];
}
static inline uint64_t fz_xu_end(const fz_run_t *R, size_t i)
{
    return R->vend.base[i * R->vend.stride];
}

typedef struct fz_event {
    char *name;
    uint32_t provider; /* input index providing the values; FZ_NONE when no
                          input measured it (with at least one value) */
    uint32_t first;    /* first input that has it at all (status source) */
} fz_event_t;

/* Growable list of fused tuples: n_runs XU indices each (input order),
 * and the union label of each (the common prefix of its members' labels)
 * when the strategy knew it: then lab is not NULL. */
typedef struct fz_tuples {
    uint32_t *v, *lab;
    size_t n, cap;
} fz_tuples_t;

typedef struct fz_type {
    char *key;
    uint32_t run, cidx; /* first input that has it and its construct */
} fz_type_t;

struct ompf_fuse_report {
    size_t n_in;
    char **in_name;           /* display names of the inputs */
    uint64_t *in_run_id;
    uint64_t *in_xus;
    size_t n_types;
    ompf_fuse_type_stats_t *types;
    uint64_t *type_in;        /* n_types x n_in */
    char **type_names, **type_keys;
    uint32_t *order;
    int strategy;
    uint64_t seed;
    size_t n_events;
    char **ev_name;
    int32_t *ev_src;          /* providing input or -1 */
    char **ev_also;           /* other inputs that measured it ("" if none) */
    size_t n_steps;           /* BC: n_in - 1 */
    char **step_desc;         /* BC: "+input 2: overlap {...}, new {...}" */
    uint32_t *step_iter;      /* BC: iterations per step (all types) */
    char **notes;
    size_t n_notes, cap_notes;
    uint64_t out_xus;
};

typedef struct fz_anc fz_anc_t; /* lca.c */

typedef struct fz_ctx {
    size_t n;            /* inputs */
    fz_run_t *runs;
    const ompf_fuse_opts_t *opts;
    size_t n_types;
    fz_type_t *types;
    size_t n_events;
    fz_event_t *events;
    uint32_t *order;     /* combination order (input indices) */
    const ompf_profile_t *ut; /* union label trie of all inputs: ut_own, or
                                 the trie the inputs share (profile.h,
                                 "Shared labels") */
    ompf_profile_t *ut_own;
    uint32_t *urank;     /* depth-first rank of every union node (BC
                            only; NULL for the others) */
    fz_anc_t *anc;       /* jump pointers of the union trie (lca.c; all but
                            LGL; NULL: fz_lca walks parent chains) */
    size_t n_anc;
    fz_tuples_t res;     /* fused tuples */
    ompf_fuse_report_t *rep;
    ompf_error_t *err;
    /* the inputs, when the caller lets fusion free what it no longer
     * needs of them (ompf_fuse_write_release: fuse.c), else NULL */
    ompf_profile_t *const *mut;
} fz_ctx_t;

/* Strategies: append complete tuples to ctx->res, fill per-type stats. */
int fz_ctc(fz_ctx_t *c);
int fz_lgl(fz_ctx_t *c);
int fz_random(fz_ctx_t *c);
int fz_bc(fz_ctx_t *c, int labeled);

/* The steps of ompf_fuse, in the order it calls them (0 or an error). */
int fz_report_init(fz_ctx_t *c);                              /* fuse_report.c */
int fz_check_inputs(fz_ctx_t *c, char *forced, size_t flen);  /* fuse_check.c */
int fz_match_types(fz_ctx_t *c);                              /* fuse_match.c */
int fz_match_events(fz_ctx_t *c);
int fz_build_union_trie(fz_ctx_t *c);
/* R->bytype made from R->tstart (fz_group_by_type makes it for every run
 * whose XUs are not in type order, except for CTC); 0 or OMPF_ENOMEM. */
int fz_bytype_make(const fz_ctx_t *c, fz_run_t *R);
int fz_group_by_type(fz_ctx_t *c);
int fz_bc_order(fz_ctx_t *c);                                 /* fuse_order.c */
/* Common prefix of union labels x and y (lca.c): fz_lca_build once the
 * union trie is complete, then fz_lca in O(log depth).  The table reads
 * the trie's nodes in place: no label may be added to c->ut between
 * fz_lca_build and fz_lca_free. */
int fz_lca_build(fz_ctx_t *c);
uint32_t fz_lca(const fz_ctx_t *c, uint32_t x, uint32_t y);
/* Drops the table once the fused XUs are named (4 bytes a union node);
 * fz_lca still answers, by walking parent chains. */
void fz_lca_free(fz_ctx_t *c);
/* Whether label x comes before label y of trie u in label order: depth
 * first, children by ascending component (ompf_label_dfs_rank's order). */
int fz_label_before(const ompf_profile_t *u, uint32_t x, uint32_t y);
/* A hint some calls before fz_lca(c, x, ...): its first load misses. */
void fz_lca_prefetch(const fz_ctx_t *c, uint32_t x);
int fz_report_types_events(fz_ctx_t *c);                      /* fuse_report.c */
int fz_build_output(fz_ctx_t *c, const char *forced,          /* fuse_output.c */
                    ompf_profile_t **outp);
int fz_write_output(fz_ctx_t *c, const char *forced, const char *path);

/* Shared helpers (fuse.c). */
/* Advances opts->progress by the input XUs of type t (after each type). */
void fz_progress_type(const fz_ctx_t *c, size_t t);
int fz_tuples_push(fz_tuples_t *t, size_t n_runs, const uint32_t *tuple);
/* Adds m unlabelled tuples (to a result without labels: lab is not grown)
 * and returns the first (rows of n_runs), for
 * the caller to fill run by run (CTC and random: the j-th XU of every
 * run's ordered list forms tuple j, and one list is held at a time);
 * NULL when out of memory. */
uint32_t *fz_tuples_add(fz_tuples_t *t, size_t n_runs, size_t m);
int fz_note(ompf_fuse_report_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *fz_strdup(const char *s);

/* Deterministic random numbers (splitmix64): the same seed gives the same
 * sequence on every platform. */
static inline uint64_t fz_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Seed of an independent stream for (seed, a, b). */
static inline uint64_t fz_stream(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t s = seed ^ 0x6a09e667f3bcc909ull;
    s = fz_rand(&s) ^ a;
    s = fz_rand(&s) ^ b;
    return fz_rand(&s);
}

/* Uniform integer in [0, n) without modulo bias. */
static inline uint64_t fz_below(uint64_t *s, uint64_t n)
{
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = fz_rand(s);
    while (x >= lim);
    return x % n;
}

/* Sorting (sort.c): records by (k1, k2, idx) (an introsort), and a stable
 * radix sort of 64-bit keys carrying a 32-bit payload. */
typedef struct fz_key {
    uint64_t k1, k2;
    uint32_t idx;
} fz_key_t;
void fz_sort_keys(fz_key_t *k, size_t n);
/* The fewest XUs of type t in any run: how many fused XUs a positional
 * pairing (CTC, random) makes of that type. */
size_t fz_type_min(const fz_ctx_t *c, size_t t);
/* The most XUs of one type in one run (at least 1): the size of the
 * per-type scratch arrays, which are reused type after type. */
size_t fz_type_max(const fz_ctx_t *c);
int fz_radix_sort(uint64_t *key, uint32_t *idx, size_t n);
/* The same with the caller's scratch of n keys (and n payloads with
 * idx); NULL: allocated here. */
int fz_radix_sort_buf(uint64_t *key, uint32_t *idx, size_t n, uint64_t *kbuf,
                      uint32_t *ibuf);
/* Stable by the given bits of each key alone; the others ride along (a
 * payload packed into the key).  kbuf: the caller's scratch of n keys
 * (a sort per run reuses one instead of faulting in a fresh array each
 * time), or NULL: allocated here. */
int fz_radix_sort_bits(uint64_t *key, size_t n, uint64_t bits, uint64_t *kbuf);
/* Ascending by value, in place: no scratch, where the radix sorts above
 * take a second array of keys.  Not stable, which distinct keys (a
 * payload in the low bits, as LGL's and CTC's XU index) do not need:
 * their order is the one fz_radix_sort_bits gives by the high bits. */
void fz_sort_u64(uint64_t *key, size_t n);
/* The same carrying a 32-bit payload, in place too (BC's grid, whose
 * scratch would be 12 bytes a key).  Not stable: equal keys' payloads
 * come in any order. */
void fz_sort_u64_idx(uint64_t *key, uint32_t *idx, size_t n);

/* Order-preserving map of doubles (NaN excluded) to unsigned integers. */
/* Bits needed to write x (0 for 0). */
static inline unsigned fz_bitlen(uint64_t x)
{
    return x ? 64u - (unsigned)__builtin_clzll(x) : 0u;
}

static inline uint64_t fz_double_key(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return (u >> 63) ? ~u : (u | (1ull << 63));
}

static inline double fz_key_double(uint64_t k)
{
    uint64_t u = (k >> 63) ? (k & ~(1ull << 63)) : ~k;
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

#endif
