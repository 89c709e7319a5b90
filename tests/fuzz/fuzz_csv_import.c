/* libFuzzer target: CSV import on arbitrary text.  An accepted CSV keeps
 * the limits of docs/format.md and exports again; that export imports
 * again and exports to the same bytes (export -> import -> export is
 * exact). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "ompfuse/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int import_mem(const void *data, size_t size, ompf_profile_t **p, ompf_error_t *err)
{
    FILE *in = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
    if (!in)
        abort();
    int rc = ompf_csv_import(in, "fuzz.csv", NULL, p, err);
    fclose(in);
    return rc;
}

static char *export_mem(const ompf_profile_t *p, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    ompf_error_t err;
    if (!f || ompf_csv_export(p, f, &err))
        abort();
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ompf_profile_t *p = NULL, *q = NULL;
    ompf_error_t err;
    int rc = import_mem(data, size, &p, &err);
    if (rc) {
        if (p || !err.msg[0])
            abort();
        return 0;
    }
    fuzz_check_limits(p);
    size_t n1, n2;
    char *t1 = export_mem(p, &n1);
    ompf_profile_destroy(p);
    if (import_mem(t1, n1, &q, &err))
        abort(); /* what export writes must import */
    char *t2 = export_mem(q, &n2);
    ompf_profile_destroy(q);
    if (n1 != n2 || memcmp(t1, t2, n1))
        abort();
    free(t1);
    free(t2);
    return 0;
}
