/* Synthetic profiles for the file-format and CSV tests. */
#ifndef OMPF_TEST_GEN_H
#define OMPF_TEST_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "ompfuse/profile.h"

typedef struct gen_opts {
    size_t n_xu;
    uint32_t n_threads;   /* 0: no thread table */
    uint32_t n_events;
    uint32_t n_constructs;
    uint32_t n_sources;   /* > 0: a fused profile with provenance */
    double missing_rate;  /* fraction of values recorded as missing */
    int special_values;   /* fractions, -0, inf, NaN, huge integers */
    unsigned seed;
} gen_opts_t;

/* Builds a deterministic pseudo-random profile; aborts on failure. */
ompf_profile_t *gen_profile(const gen_opts_t *o);

/* Reads a whole file into memory (aborts on failure). */
unsigned char *gen_slurp(const char *path, size_t *len);
/* Writes len bytes of buf to path (a damaged or cut copy); aborts on error. */
void gen_spit(const char *path, const void *buf, size_t len);

/* A fresh temporary directory for the calling test (removed by gen_rmdir). */
char *gen_tmpdir(void);
void gen_rmdir(char *dir);

#endif
