/* The pairing of BC's grid (docs/fusion.md, BC steps 4-7): the XUs in
 * Morton order, each with the level it shares with its predecessor
 * (bc_grid.c makes them), are paired cell by cell, finest level first, in
 * one pass with a stack of open cells. */
#include <stdlib.h>
#include <string.h>

#include "bc_grid.h"

/* ---- pairing --------------------------------------------------------------- */

/* One side of a cell, n entries of the stack, by order key (unique within
 * the side, so any sort gives this order). */
static void sort_side(bc_grid_t *g, uint64_t *key, uint32_t *row, size_t n)
{
    if (n < 2)
        return;
    if (n > BC_SMALL_CELL) {
        fz_sort_u64_idx(key, row, n);
        return;
    }
    fz_key_t *t = g->ck;
    for (size_t i = 0; i < n; i++) {
        t[i].k1 = key[i];
        t[i].k2 = 0;
        t[i].idx = row[i];
    }
    fz_sort_keys(t, n);
    for (size_t i = 0; i < n; i++) {
        key[i] = t[i].k1;
        row[i] = t[i].idx;
    }
}

/* Pairs the cell made of stack entries a .. b - 1: its prev and cur
 * members in order-key order, the first of each side together, and so
 * on.  The unpaired ones (of one side) are moved to a; returns how many,
 * and their side in *sides (0 when none). */
size_t bc_pair_cell(bc_grid_t *g, bc_prob_t *pb, size_t a, size_t b, unsigned *sides)
{
    uint64_t *key = g->key;
    uint32_t *row = g->row;
    size_t np = pb->np, i = a, j = b;
    while (i < j) { /* prev first */
        if (row[i] < np) {
            i++;
            continue;
        }
        j--;
        uint64_t tk = key[i];
        key[i] = key[j];
        key[j] = tk;
        uint32_t tr = row[i];
        row[i] = row[j];
        row[j] = tr;
    }
    size_t nP = i - a, nC = b - i, m = nP < nC ? nP : nC;
    if (!m) {
        *sides = nP ? 1u : nC ? 2u : 0u;
        return b - a;
    }
    sort_side(g, key + a, row + a, nP);
    sort_side(g, key + i, row + i, nC);
    for (size_t t = 0; t < m; t++)
        pb->partner[(size_t)row[a + t] * pb->pstride] = (uint32_t)(row[i + t] - np);
    pb->n_pairs += m;
    size_t from = nP > m ? a + m : i + m, left = nP > m ? nP - m : nC - m;
    memmove(key + a, key + from, left * sizeof *key);
    memmove(row + a, row + from, left * sizeof *row);
    *sides = !left ? 0u : nP > m ? 1u : 2u;
    return left;
}

/* The open cells of pair_levels, bottom to top. */
typedef struct cell_stack {
    uint64_t *frame;  /* per open cell: first member << 16 | side bits << 8 |
                         level of the boundary to its left */
    size_t n, top;    /* open cells, members */
    uint64_t levels;  /* bit L: some level-L cell was paired */
} cell_stack_t;

#define FR_FIRST(f) ((size_t)((f) >> 16))
#define FR_SIDES(f) ((unsigned)((f) >> 8) & 3u)
#define FR_LEVEL(f) ((unsigned)(f) & 255u)

static uint64_t frame_of(size_t first, unsigned sides, unsigned level)
{
    return (uint64_t)first << 16 | (uint64_t)sides << 8 | level;
}

/* Pairs the top cell as a level-L cell if it holds both sides. */
static void pair_top(bc_grid_t *g, bc_prob_t *pb, cell_stack_t *cs, size_t m, unsigned L,
                     unsigned sides)
{
    uint64_t base = cs->frame[m];
    size_t first = FR_FIRST(base);
    if (sides == 3) {
        cs->top = first + bc_pair_cell(g, pb, first, cs->top, &sides);
        cs->levels |= 1ull << L;
    }
    cs->frame[m] = frame_of(first, sides, FR_LEVEL(base));
}

/* Closes the open cells on top whose left boundary has level L, merging
 * them into the cell below (the level-L cell), and pairs it. */
static void close_level(bc_grid_t *g, bc_prob_t *pb, cell_stack_t *cs)
{
    unsigned L = FR_LEVEL(cs->frame[cs->n - 1]), sides = 0;
    size_t m = cs->n - 1;
    while (m > 0 && FR_LEVEL(cs->frame[m]) == L)
        sides |= FR_SIDES(cs->frame[m--]);
    /* cells m .. n-1 become cell m */
    sides |= FR_SIDES(cs->frame[m]);
    cs->n = m + 1;
    pair_top(g, pb, cs, m, L, sides);
}

/* The cells of all levels form a tree (a level-L cell is a run of
 * neighbours sharing level <= L), and pairing inside a cell only needs
 * its sub-cells' unpaired XUs, which are one-sided once they are paired.
 * So instead of one pass over all unpaired XUs per level, one pass over
 * the XUs keeps a stack of cells: when the boundary to the next XU is of
 * a higher level than the ones on top, those cells are closed (merged
 * into the cell of their boundary's level and paired there if it holds
 * both sides).  An XU at level 0 from its predecessor (the same
 * coordinates) joins the top cell at once, which then pairs as a level-0
 * cell before anything else closes: equal XUs, common in counts of rare
 * events, take no cell each.  The pairs are those of the level-by-level
 * relaxation of the paper (docs/fusion.md, BC), which processes exactly
 * the levels at which some cell holds both sides: the iterations reported
 * are those levels.  The unpaired XUs are left in the stack's first
 * entries; returns how many (or OMPF_ENOMEM, negative). */
long bc_pair_levels(bc_grid_t *g, bc_prob_t *pb, size_t ne, unsigned *iterations)
{
    cell_stack_t cs = {g->frame, 0, 0, 0};
    int level0 = 0; /* the top cell took XUs at level 0 */
    for (size_t j = 0; j < ne; j++) {
        if (j + 16 < ne)
            bc_prefetch_key(pb, g->row[j + 16], 1);
        if (j + 8 < ne)
            bc_prefetch_key(pb, g->row[j + 8], 0);
        unsigned b = j ? g->lv[j] : 0;
        uint32_t r = g->row[j];
        uint64_t mk = bc_order_key(pb, r);
        if (j && !b) {
            cs.frame[cs.n - 1] |= (uint64_t)bc_side_bit(pb, r) << 8;
            level0 = 1;
        } else {
            if (level0) {
                pair_top(g, pb, &cs, cs.n - 1, 0, FR_SIDES(cs.frame[cs.n - 1]));
                level0 = 0;
            }
            while (cs.n >= 2 && FR_LEVEL(cs.frame[cs.n - 1]) < b)
                close_level(g, pb, &cs);
            if (cs.n == g->cap_frame) {
                uint64_t *f = realloc(g->frame, 2 * g->cap_frame * sizeof *f);
                if (!f)
                    return OMPF_ENOMEM;
                g->frame = cs.frame = f;
                g->cap_frame *= 2;
            }
            cs.frame[cs.n++] = frame_of(cs.top, bc_side_bit(pb, r), b);
        }
        /* entries below j are free: their XUs are in the stack already */
        g->key[cs.top] = mk;
        g->row[cs.top++] = r;
    }
    if (level0)
        pair_top(g, pb, &cs, cs.n - 1, 0, FR_SIDES(cs.frame[cs.n - 1]));
    while (cs.n >= 2)
        close_level(g, pb, &cs);
    *iterations = (unsigned)__builtin_popcountll(cs.levels);
    return (long)cs.top;
}
