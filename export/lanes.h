/* Tracks for timelines.  A timeline draws one slice per XU part (an XU
 * that was suspended and resumed ran in several parts, each on one thread;
 * ompf_xu_parts), so the slices of one thread nest: a chunk's part holds
 * the task parts its thread ran inside it.  A profile that kept only an
 * XU's part count (older files) gives one span from its first start to its
 * last end, which can overlap others without nesting.  A timeline format
 * needs properly nested slices per track, so each thread gets as many
 * lanes as needed: lane 0 is the thread's own track, a slice that would
 * overlap without nesting goes to the first lane where it nests.
 *
 * One overlap is not a conflict: when counters are read, an XU ends at the
 * clock read after the boundary's counter read and the next XU on the
 * thread starts at the one before it (docs/tool.md, "Every count inside
 * its XU"), so consecutive single-part XUs overlap by the length of one
 * read.  On a timeline the later one is drawn from the earlier one's end
 * (start[] below); exports carry the recorded start beside it. */
#ifndef OMPF_EXPORT_LANES_H
#define OMPF_EXPORT_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "ompfuse/profile.h"

typedef struct ompf_lanes {
    uint32_t nthreads;  /* thread table size, or more if a part names more */
    uint32_t ntracks;   /* nthreads + extra lanes */
    size_t nslices;     /* parts of all XUs */
    size_t *first;      /* per XU + 1: XU i's slices are first[i] ..
                           first[i + 1] - 1, one per part in time order */
    size_t *xu;         /* per slice: its XU */
    ompf_part_t *part;  /* per slice: thread, recorded start and end */
    uint32_t *track;    /* per slice: its track */
    uint32_t *thread_of;/* per track: its thread */
    uint32_t *lane_of;  /* per track: 0 for the thread's own, 1.. extra */
    uint64_t *start;    /* per slice: where it is drawn; its start, or the
                           end of the one-part slice it follows when the
                           two overlap by a boundary's read */
} ompf_lanes_t;

/* Tracks 0..nthreads-1 are the threads' lane 0; extra lanes follow. */
int ompf_lanes_build(const ompf_profile_t *p, ompf_lanes_t *l);
void ompf_lanes_free(ompf_lanes_t *l);
/* Display name of a track: "thread 2 (tid 1234)", extra lanes say why. */
void ompf_track_name(char *buf, size_t len, uint32_t thread, int32_t os_tid, uint32_t lane);

/* Slices of one track in drawing order (by start[]; the enclosing
 * before the enclosed):
 * the slice indices of track t are order[first[t] .. first[t + 1]). */
typedef struct ompf_track_order {
    size_t *first; /* ntracks + 1 */
    size_t *order; /* slice count */
} ompf_track_order_t;
int ompf_track_order_build(const ompf_profile_t *p, const ompf_lanes_t *l,
                           ompf_track_order_t *o);
void ompf_track_order_free(ompf_track_order_t *o);

#endif
