/* A progress line on stderr for long steps (combine, evaluate, simulate,
 * export, ...): silent for the first 2 s, so short steps print nothing,
 * then "\rLABEL: done/total UNIT (P%, ETA Ns)" at most 4 times a second,
 * erased when the step ends.  Shown only on a terminal unless
 * OMPFUSE_PROGRESS=always (no delay, also to a file or pipe: for tests);
 * OMPFUSE_PROGRESS=never turns it off. */
#ifndef OMPF_PROGRESS_H
#define OMPF_PROGRESS_H

#include <stdint.h>

typedef struct ompf_progress ompf_progress_t;

/* Whether a command should show progress: not quiet, and stderr is a
 * terminal (or OMPFUSE_PROGRESS says otherwise). */
int ompf_progress_wanted(int quiet);

/* label: what is being done ("combine lgl"); total: units of work (0 if
 * unknown: then no percentage); unit: "XUs", "runs", ... .  Returns NULL
 * when !enabled or out of memory; every function accepts NULL. */
ompf_progress_t *ompf_progress_create(const char *label, uint64_t total,
                                      const char *unit, int enabled);
/* done units so far (monotonic).  Cheap enough to call per item: the clock
 * is read once every 1024 calls, or when done moved by 1/1000 of total. */
void ompf_progress_update(ompf_progress_t *p, uint64_t done);
/* Adds n to done. */
void ompf_progress_add(ompf_progress_t *p, uint64_t n);
/* Erases the line (if one was printed) and frees p. */
void ompf_progress_destroy(ompf_progress_t *p);

#endif
