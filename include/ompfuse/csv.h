/*
 * CSV export/import of profiles: one row per XU,
 *   xu,type,kind,label,thread,cpu,start_ns,end_ns,<event>...
 * loadable with pandas.read_csv without options.  An empty cell is a value
 * that was not measured.  Import is the inverse (the label trie is rebuilt
 * from the dotted labels), so tests and users can build exact profiles.
 */
#ifndef OMPFUSE_CSV_H
#define OMPFUSE_CSV_H

#include <stdio.h>
#include "ompfuse/profile.h"
#include "ompfuse/text.h"

#ifdef __cplusplus
extern "C" {
#endif

int ompf_csv_export(const ompf_profile_t *p, FILE *out, ompf_error_t *err);

typedef struct ompf_csv_import_opts {
    const char *program; /* recorded as "program" (NULL or "": not recorded) */
    uint32_t threads;    /* team size to record (0: 1 + max thread) */
} ompf_csv_import_opts_t;

/* name: used in error messages ("file.csv:12: ..."). */
int ompf_csv_import(FILE *in, const char *name,
                    const ompf_csv_import_opts_t *opts, ompf_profile_t **out,
                    ompf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
