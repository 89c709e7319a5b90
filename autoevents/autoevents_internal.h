/* Private to libompfauto: the rate pilot (ratepilot.c). */
#ifndef OMPF_AUTOEVENTS_INTERNAL_H
#define OMPF_AUTOEVENTS_INTERNAL_H

#include <stddef.h>
#include "ompfuse/autoevents.h"

typedef struct ompf_auto_round {
    double *count;   /* per candidate, whole process */
    int *usable;     /* the candidate opened and was read */
    double seconds;  /* wall time of the round */
    int killed;      /* stopped at the budget */
    int failed;      /* the program exited non-zero or by a signal */
    int status;      /* waitpid's */
} ompf_auto_round_t;

double ompf_auto_now(void);
/* Runs argv once with names counted (n may be 0: a plain timing run).
 * 0 (r filled, even when the program failed: r->failed), OMPF_EPERM when
 * the counters may not be opened (err says to run as root). */
int ompf_auto_rate_round(char *const *argv, const char *const *env, size_t nenv,
                         char *const *names, size_t n, double budget_s, ompf_auto_round_t *r,
                         ompf_error_t *err);
void ompf_auto_round_free(ompf_auto_round_t *r);
/* Seconds per uprobe hit now: n calls of a probed function of this
 * process against n without the probe; 0 when it cannot be measured. */
double ompf_auto_hit_cost(size_t n);

#endif
