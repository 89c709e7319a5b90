/* Layout of ompf_profile, shared by the files of libompfprofile only. */
#ifndef OMPF_PROFILE_INTERNAL_H
#define OMPF_PROFILE_INTERNAL_H

#include "ompfuse/profile.h"

typedef struct ompf__lnode {
    uint64_t comp;
    uint32_t parent, depth;
} ompf__lnode_t;

struct ompf_profile {
    size_t n_meta, cap_meta;
    char **meta_key, **meta_val;

    size_t n_ev, cap_ev;
    ompf_event_t *ev;
    /* Open-addressing hash of event names (index + 1; 0 = empty), so that
     * adding n events costs O(n), not O(n^2) name compares. */
    uint32_t *ev_hash;
    size_t ev_hash_cap; /* power of two, at least twice n_ev */

    size_t n_con, cap_con;
    ompf_construct_t *con;

    /* Label trie: one record per node (a lookup touches one cache line
     * of nodes), and a hash of (parent, component) whose slots carry 32
     * bits of the hash, so a probe rarely touches a node that does not
     * match (reading and fusion add 10^6-10^7 labels). */
    size_t n_lab, cap_lab;
    ompf__lnode_t *lab;
    uint64_t *lab_hash; /* (node + 1) | tag << 32; 0 = empty slot */
    size_t hash_cap;    /* power of two, at most 3/4 full */

    size_t n_xu, cap_xu, cap_val, cap_prov;
    ompf_xu_t *xu;
    double *values; /* n_xu x n_ev, row-major */

    size_t n_th, cap_th;
    ompf_thread_t *th;

    size_t n_src, cap_src;
    ompf_source_t *src;
    uint64_t *prov; /* n_xu x n_src */
};

char *ompf__strdup(const char *s);
void ompf__free_event(ompf_event_t *e); /* frees its strings */
int ompf__grow(void **arr, size_t *cap, size_t need, size_t elem);
int ompf__label_init(ompf_profile_t *p);
void ompf__label_free(ompf_profile_t *p);

#endif
