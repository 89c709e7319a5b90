/* Layout of ompf_profile, shared by the files of libompfprofile only. */
#ifndef OMPF_PROFILE_INTERNAL_H
#define OMPF_PROFILE_INTERNAL_H

#include "ompfuse/mem.h" /* ompf_give_back */
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
    size_t hash_cap;    /* power of two, at most 3/4 full; 0 when dropped
                           (ompf__label_drop_hash) */

    size_t n_xu, cap_xu, cap_val, cap_prov;
    ompf_xu_t *xu;  /* NULL in a lean profile */
    /* Lean profile (lean.c; ompf_profile_read_into): instead of xu[], each
     * XU's id, type and label, and with OMPF_LEAN_TIMES its start and end;
     * cap_xu entries each.  16 or 32 bytes an XU instead of 80, for a
     * command that holds many large profiles (combine). */
    unsigned lean; /* OMPF_LEAN flags; 0: full records in xu[] */
    /* Set by ompf_profile_move_labels: the trie the XUs' labels index
     * (label_move.c); this profile's own trie is then the root alone. */
    const ompf_profile_t *label_space;
    uint64_t *lx_id, *lx_start, *lx_end;
    uint32_t *lx_type, *lx_label;
    /* Packed (pack.c, OMPF_LEAN_PACKED): beside the lean columns, the
     * other fields and the parts of XU i as varints at pk + pk_at[i]
     * (64-bit: one XU may have 2^24 parts); NULL otherwise. */
    unsigned char *pk;
    size_t n_pk, cap_pk;
    uint64_t *pk_at;
    /* Packing as the XUs come (the reader): records without parts, whose
     * parts wait in part[] until they are sealed with them into pk_new
     * (ompf__pack_seal_upto, ompf__pack_seal): XUs below pk_sealed are
     * sealed, and the pages of pk and part[] behind them given back
     * (pk_gone, part_gone: bytes given back; part_end: the end of the
     * parts sealed so far). */
    int pk_open;
    unsigned char *pk_new;
    size_t n_pk_new, cap_pk_new, pk_sealed, pk_gone, part_end, part_gone;
    double *values; /* n_xu x n_ev, row-major */

    /* Recorded parts (parts.c): XU i's are part[part_at[i] - 1 ..] (its
     * parts field says how many); part_at[i] == 0 or i >= n_part_at: none. */
    ompf_part_t *part;
    size_t n_part, cap_part;
    size_t *part_at;
    size_t n_part_at, cap_part_at;

    size_t n_th, cap_th;
    ompf_thread_t *th;

    size_t n_src, cap_src;
    ompf_source_t *src;
    uint64_t *prov; /* n_xu x n_src */

    /* Exact counts above 2^53 (exact.c): a sparse open-addressing hash
     * from value slot (XU index * n_ev + event) + 1 to the count; 0 is an
     * empty slot, a count of 0 a removed entry.  NULL in the common case,
     * so it costs no memory per XU. */
    uint64_t *ex_key, *ex_val;
    size_t ex_n, ex_cap; /* used entries, power-of-two capacity */
};

char *ompf__strdup(const char *s);
/* ompf_label_child with a guess (the reader, file_read_labels.c, and
 * ompf_label_map_into use it): runs of one program create
 * their labels in nearly the same order, so the node after the one the
 * previous label mapped to is usually the next one's.  A node that has
 * the same parent and component is the node (the trie holds each child
 * once), so a checked guess costs one sequential load instead of two
 * random ones.  *hit says whether the guess was right. */
static inline int ompf__label_child_hint(ompf_profile_t *p, uint32_t parent, uint64_t comp,
                                         uint32_t guess, uint32_t *node, int *hit)
{
    if (guess < p->n_lab && p->lab[guess].parent == parent && p->lab[guess].comp == comp &&
        parent < p->n_lab) {
        *node = guess;
        *hit = 1;
        return 0;
    }
    *hit = 0;
    return ompf_label_child(p, parent, comp, node);
}

/* Builds the hash anew; 1 (and no hash) if two nodes have the same parent
 * and component (a reader that appended a file's labels with
 * ompf_label_append checks them so), 0, or OMPF_ENOMEM. */
int ompf__label_index_unique(ompf_profile_t *p);
/* Merges equal nodes (same parent and component, once parents are merged)
 * into the first of them, keeping the others' order, in linear time;
 * remap (ompf_label_count entries) receives old node -> new node.  Nodes
 * must come after their parents (appended ones do).  The hash is dropped.
 * 0 or OMPF_ENOMEM (the trie unchanged). */
int ompf__label_merge_equal(ompf_profile_t *p, uint32_t *remap);

/* part_at for every XU (0 where none is set); 0 or OMPF_ENOMEM. */
int ompf__part_at_all(ompf_profile_t *p);
/* n more parts at the end of the array, their contents unset (the
 * reader's fmt_parts_fill writes them); room for exactly n, since the
 * reader knows how many it attaches and doubling would leave up to half
 * unused.  0 or OMPF_ENOMEM. */
int ompf__parts_append(ompf_profile_t *p, size_t n);

/* Lean storage (lean.c): makes an empty profile lean, makes room for n XUs
 * in its columns (ompf__grow's capacity rule), stores XU i, frees them. */
int ompf__lean_set(ompf_profile_t *p, unsigned flags);
int ompf__lean_reserve(ompf_profile_t *p, size_t n);
void ompf__lean_store(ompf_profile_t *p, size_t i, const ompf_xu_t *xu);
void ompf__lean_free(ompf_profile_t *p);
/* Whether packed XU i has parts recorded (pack.c). */
int ompf__packed_has_parts(const ompf_profile_t *p, size_t i);
/* The reader's packing (pack.c): open makes an empty lean profile with
 * OMPF_LEAN_PACKED pack each XU ompf_xu_add adds (ompf__pack_grow gives
 * room for cap XUs' offsets); parts are attached as in a full profile
 * (part[], part_at[]), and seal packs them with their records.  0,
 * OMPF_EINVAL or OMPF_ENOMEM. */
int ompf__pack_open(ompf_profile_t *p);
int ompf__pack_grow(ompf_profile_t *p, size_t cap);
int ompf__pack_add(ompf_profile_t *p, size_t i, const ompf_xu_t *x);
int ompf__pack_seal(ompf_profile_t *p);
/* Seals XUs [pk_sealed, upto), whose parts are all in part[] and sorted,
 * and gives back the memory of their records and parts: the reader calls
 * it as the parts come, so that a task program's parts (24 bytes each, a
 * few per task) are never all unpacked at once.  0 or OMPF_ENOMEM. */
int ompf__pack_seal_upto(ompf_profile_t *p, size_t upto);
/* XU i's parts field, full or packed. */
uint32_t ompf__xu_parts_field(const ompf_profile_t *p, size_t i);
/* Whether reading keeps the parts: a full profile, or one being packed. */
static inline int ompf__keeps_parts(const ompf_profile_t *p)
{
    return !p->lean || p->pk_open;
}
static inline uint64_t ompf__xu_id(const ompf_profile_t *p, size_t i)
{
    return p->lean ? p->lx_id[i] : p->xu[i].id;
}
void ompf__free_event(ompf_event_t *e); /* frees its strings */
int ompf__grow(void **arr, size_t *cap, size_t need, size_t elem);
/* Whether a double holds the count v exactly (profile/exact.c). */
int ompf__double_exact(uint64_t v);
int ompf__label_init(ompf_profile_t *p);
void ompf__label_free(ompf_profile_t *p);
/* Frees the label hash; the next lookup rebuilds it.  A profile just read
 * is mostly only walked (show, combine, evaluate), and the hash is about
 * 16 bytes per label. */
void ompf__label_drop_hash(ompf_profile_t *p);
void ompf__exact_free(ompf_profile_t *p);
/* The exact counts that apply, as (slot, count) pairs sorted by slot
 * (slot = XU index * events + event); *out is freed by the caller. */
int ompf__exact_sorted(const ompf_profile_t *p, uint64_t **out, size_t *n);

#endif
