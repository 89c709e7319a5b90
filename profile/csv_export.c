/* CSV export: one row per XU, RFC 4180 quoting, values that read back
 * exactly (integers below 2^64 and exact counts as digits, other numbers
 * with 17 significant digits, missing as an empty cell). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/csv.h"

/* Exact text of a value; empty for missing. */
static void csv_value(char *buf, size_t len, double v)
{
    if (ompf_is_missing(v))
        buf[0] = 0;
    else if (fabs(v) < 18446744073709551616.0 && v == floor(v) && !(v == 0 && signbit(v)))
        /* Every integer a double holds below 2^64 is written as digits
           (import reads digits exactly). */
        snprintf(buf, len, "%s%llu", v < 0 ? "-" : "", (unsigned long long)fabs(v));
    else
        snprintf(buf, len, "%.17g", v);
}

int ompf_csv_export(const ompf_profile_t *p, FILE *out, ompf_error_t *err)
{
    if (!p || !out)
        return ompf_error_set(err, OMPF_EINVAL, "ompf_csv_export: no profile or stream");
    size_t nev = ompf_event_count(p), nxu = ompf_xu_count(p);
    fputs("xu,type,kind,label,thread,cpu,start_ns,end_ns", out);
    for (size_t e = 0; e < nev; e++) {
        putc(',', out);
        ompf_csv_field(out, ompf_event_get(p, (uint32_t)e)->name);
    }
    putc('\n', out);
    size_t lcap = 256;
    char *label = malloc(lcap);
    if (!label)
        return ompf_error_set(err, OMPF_ENOMEM, "CSV export: out of memory");
    char num[64];
    for (size_t i = 0; i < nxu; i++) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        size_t need = ompf_label_format(p, x->label, label, lcap);
        if (need >= lcap) {
            char *l = realloc(label, need + 1);
            if (!l) {
                free(label);
                return ompf_error_set(err, OMPF_ENOMEM, "CSV export: out of memory");
            }
            label = l;
            lcap = need + 1;
            ompf_label_format(p, x->label, label, lcap);
        }
        fprintf(out, "%llu,", (unsigned long long)x->id);
        ompf_csv_field(out, x->type < ompf_construct_count(p) ? ompf_construct_name(p, x->type) : "");
        fprintf(out, ",%s,%s,%u,%d,%llu,%llu", ompf_xu_kind_name(x->kind), label, x->thread,
                x->cpu, (unsigned long long)x->start_ns, (unsigned long long)x->end_ns);
        const double *v = ompf_xu_values_const(p, i);
        for (size_t e = 0; e < nev; e++) {
            uint64_t u;
            /* Above 2^53 a count may be exact where its double is not. */
            if (v[e] >= 9007199254740992.0 && ompf_xu_value_u64(p, i, (uint32_t)e, &u))
                snprintf(num, sizeof num, "%llu", (unsigned long long)u);
            else
                csv_value(num, sizeof num, v[e]);
            putc(',', out);
            fputs(num, out);
        }
        putc('\n', out);
    }
    free(label);
    if (ferror(out))
        return ompf_error_set(err, OMPF_EIO, "write failed: %s", strerror(errno));
    return 0;
}
