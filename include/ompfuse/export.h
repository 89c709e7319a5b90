/*
 * ompfuse export formats beyond CSV (csv.h): a JSON document, a Chrome
 * trace / Perfetto JSON timeline and an OTF2 archive.  Every writer streams:
 * it walks the in-memory profile and prints as it goes, building no second
 * copy of the XUs.  Layouts are documented in docs/export.md.
 */
#ifndef OMPFUSE_EXPORT_H
#define OMPFUSE_EXPORT_H

#include <stdio.h>
#include "ompfuse/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One profile to export, with what its reading said. */
typedef struct ompf_export_input {
    const ompf_profile_t *profile;
    const char *path; /* where it was read from (recorded in the output) */
    const char *salvage_note; /* truncated file: what was lost; else NULL */
} ompf_export_input_t;

/* Unit of an event's values: "ns" for the CPU/task clocks, else "count". */
const char *ompf_event_unit(const ompf_event_t *ev);

#define OMPF_EXPORT_NO_XUS 0x1u /* json: leave out the XUs (the metadata
                                   file that goes with a CSV) */

/* JSON document {"format":"ompfuse-export","version":1,"profiles":[...]}. */
int ompf_export_json(const ompf_export_input_t *in, size_t n, unsigned flags,
                     FILE *out, ompf_error_t *err);

/* Chrome trace event JSON: pid = profile (1-based position), a track per
 * thread (tid = thread index + 1; extra lanes for XUs in several parts that
 * do not nest), one complete ("X") slice per XU. */
#define OMPF_EXPORT_COUNTERS 0x2u /* perfetto: counter tracks per thread and
                                     event (running sum at XU ends) */
int ompf_export_perfetto(const ompf_export_input_t *in, size_t n, unsigned flags,
                         FILE *out, ompf_error_t *err);

/* OTF2 archive in directory dir (written as dir.tmp.<pid> and renamed;
 * an existing archive at dir is replaced, anything else there refused).
 * OMPF_EUNSUPP when this build has no OTF2 library. */
int ompf_export_otf2(const ompf_export_input_t *in, size_t n, const char *dir,
                     ompf_error_t *err);
int ompf_export_otf2_available(void);


#ifdef __cplusplus
}
#endif
#endif
