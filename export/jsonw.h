/* Small JSON output helpers shared by the JSON and Perfetto writers. */
#ifndef OMPF_EXPORT_JSONW_H
#define OMPF_EXPORT_JSONW_H

#include <stdint.h>
#include <stdio.h>

#include "ompfuse/profile.h"
#include "ompfuse/text.h" /* ompf_json_string for strings */

/* Decimal digits of v (the writers' hot path: no printf). */
void ompf_jw_u64(FILE *f, uint64_t v);
/* A value that reads back exactly: integers as integers, others with 17
 * significant digits; missing (and the non-finite, which JSON lacks) null. */
void ompf_jw_num(FILE *f, double v);
/* ns as microseconds with three decimals: exact, what Chrome traces want. */
void ompf_jw_us(FILE *f, uint64_t ns);

/* A growable buffer for dotted labels. */
typedef struct ompf_jw_label {
    char *buf;
    size_t cap;
} ompf_jw_label_t;
/* The dotted label of node (NULL when out of memory). */
const char *ompf_jw_label(ompf_jw_label_t *l, const ompf_profile_t *p, uint32_t node);
void ompf_jw_label_free(ompf_jw_label_t *l);

#endif
