/* libFuzzer target: the profile reader on arbitrary bytes.  Whatever the
 * input, the reader must return a code and, when it returns a profile,
 * the profile must be consistent enough to export. */
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
    ompf_profile_destroy(p);
    return 0;
}
