/* libFuzzer target: CSV import on arbitrary text; an accepted CSV must
 * export again. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ompfuse/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *in = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
    if (!in)
        return 0;
    ompf_profile_t *p = NULL;
    ompf_error_t err;
    int rc = ompf_csv_import(in, "fuzz.csv", NULL, &p, &err);
    fclose(in);
    if (rc) {
        if (p || !err.msg[0])
            abort();
        return 0;
    }
    static FILE *null;
    if (!null)
        null = fopen("/dev/null", "w");
    if (null && ompf_csv_export(p, null, &err))
        abort();
    ompf_profile_destroy(p);
    return 0;
}
