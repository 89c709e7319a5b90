/* libFuzzer target: the profile reader on arbitrary bytes.  Whatever the
 * input, the reader must return a code and, when it returns a profile,
 * the profile must be consistent enough to export, its exact counts
 * agreeing with their values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/csv.h"
#include "ompfuse/file.h"
#include "limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ompf_profile_t *p = NULL;
    ompf_read_info_t info;
    ompf_error_t err;
    int rc = ompf_profile_read_mem(data, size, "fuzz.ompf", &p, &info, &err);
    if (rc != 0 && rc != OMPF_ETRUNC) {
        if (p || !err.msg[0])
            abort(); /* an error must come with a message and no profile */
        return 0;
    }
    if (!p || info.xus_read != ompf_xu_count(p))
        abort();
    fuzz_check_limits(p);
    static FILE *null;
    if (!null)
        null = fopen("/dev/null", "w");
    if (null && ompf_csv_export(p, null, &err))
        abort();
    /* Exact counts (EXACT chunk) only where they agree with their values. */
    size_t big = 0, nev = ompf_event_count(p);
    for (size_t i = 0; i < ompf_xu_count(p) && nev; i++) {
        const double *v = ompf_xu_values_const(p, i);
        for (uint32_t e = 0; e < nev; e++) {
            uint64_t u;
            if (v[e] >= 9007199254740992.0 && (big++, ompf_xu_value_u64(p, i, e, &u)) &&
                (double)u != v[e])
                abort();
        }
    }
    if (ompf_xu_exact_count(p) > big)
        abort();
    ompf_profile_destroy(p);
    return 0;
}
