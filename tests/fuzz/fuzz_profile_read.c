/* libFuzzer target: the profile reader on arbitrary bytes.  Whatever the
 * input, the reader must return a code and, when it returns a profile,
 * the profile must be consistent enough to export, its exact counts
 * agreeing with their values, and packed (OMPF_LEAN_PACKED) it must give
 * back every record and part as read.  Read into a shared trie that
 * already holds labels (combine's path, ompf_profile_read_into) it must
 * give the same code and the same labels, and a read that fails must
 * leave that trie as it was. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/csv.h"
#include "ompfuse/file.h"
#include "limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The same bytes read again and packed give p's records and parts. */
static void check_packed(const uint8_t *data, size_t size, const ompf_profile_t *p)
{
    ompf_profile_t *q = NULL;
    ompf_error_t err;
    ompf_profile_read_mem(data, size, "fuzz.ompf", &q, NULL, &err);
    if (!q || ompf_profile_pack(q, OMPF_LEAN | OMPF_LEAN_START | OMPF_LEAN_PACKED)) {
        ompf_profile_destroy(q);
        return; /* out of memory */
    }
    ompf_part_t *buf = NULL;
    uint32_t cap = 0;
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        const ompf_xu_t *a = ompf_xu_get(p, i);
        ompf_xu_t b;
        if (ompf_xu_record(q, i, &b) || a->id != b.id || a->type != b.type ||
            a->label != b.label || a->thread != b.thread || a->team_thread != b.team_thread ||
            a->team_size != b.team_size || a->parts != b.parts || a->cpu != b.cpu ||
            a->core != b.core || a->numa != b.numa || a->kind != b.kind ||
            a->start_ns != b.start_ns || a->end_ns != b.end_ns ||
            a->iter_start != b.iter_start || a->iter_count != b.iter_count ||
            ompf_xu_has_parts(p, i) != ompf_xu_has_parts(q, i))
            abort();
        uint32_t n, m;
        ompf_part_t one;
        const ompf_part_t *pa = ompf_xu_parts(p, i, &n, &one);
        if (n > cap) {
            free(buf);
            buf = malloc(n * sizeof *buf);
            cap = buf ? n : 0;
        }
        if (!buf || ompf_xu_parts_copy(q, i, buf, cap, &m) || m != n)
            abort();
        for (uint32_t k = 0; k < n; k++)
            if (buf[k].thread != pa[k].thread || buf[k].start_ns != pa[k].start_ns ||
                buf[k].end_ns != pa[k].end_ns)
                abort();
    }
    free(buf);
    ompf_profile_destroy(q);
}

/* A trie like the one combine's earlier inputs leave: labels the fuzzed
 * file may name again (the tool's "0.1.N..." shapes) and others. */
static ompf_profile_t *shared_trie(void)
{
    ompf_profile_t *t = NULL;
    if (ompf_profile_create(&t))
        return NULL;
    for (uint64_t a = 0; a < 4; a++)
        for (uint64_t b = 0; b < 4; b++) {
            uint32_t x, y, z;
            if (ompf_label_child(t, OMPF_LABEL_ROOT, a, &x) || ompf_label_child(t, x, b, &y) ||
                ompf_label_child(t, y, a * 4 + b, &z)) {
                ompf_profile_destroy(t);
                return NULL;
            }
        }
    return t;
}

/* The same bytes read into a shared trie (flags by size, so that every
 * mode is seen): the code of the read into p's own trie, and every XU's
 * label spelled alike; after a failure, the trie as it was. */
static void check_shared(const uint8_t *data, size_t size, int rc0, const ompf_profile_t *p)
{
    static const unsigned modes[] = {0, OMPF_LEAN | OMPF_LEAN_TIMES | OMPF_LABELS_LAST,
                                     OMPF_LEAN | OMPF_LEAN_START | OMPF_LEAN_PACKED};
    unsigned flags = modes[size % 3];
    ompf_profile_t *t = shared_trie(), *q = NULL;
    if (!t)
        return; /* out of memory */
    size_t before = ompf_label_count(t);
    char l0[64];
    ompf_label_format(t, (uint32_t)before - 1, l0, sizeof l0);
    ompf_read_info_t info;
    ompf_error_t err;
    int rc = ompf_profile_read_mem_into(data, size, "fuzz.ompf", flags, t, &q, &info, &err);
    if (rc == OMPF_ENOMEM || rc0 == OMPF_ENOMEM) {
        ompf_profile_destroy(q);
        ompf_profile_destroy(t);
        return;
    }
    if (rc != rc0)
        abort();
    if (rc != 0 && rc != OMPF_ETRUNC) {
        char l1[64];
        ompf_label_format(t, (uint32_t)before - 1, l1, sizeof l1);
        if (q || ompf_label_count(t) != before || strcmp(l0, l1))
            abort(); /* a failed read leaves the shared trie as it was */
        ompf_profile_destroy(t);
        return;
    }
    if (!q || !p || ompf_xu_count(q) != ompf_xu_count(p) ||
        ompf_profile_label_space(q) != t || ompf_label_count(t) < before)
        abort();
    ompf_u32_view_t lab = ompf_xu_view_u32(q, OMPF_XU_LABEL);
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        char a[4096], b[4096];
        ompf_label_format(p, ompf_xu_get(p, i)->label, a, sizeof a);
        ompf_label_format(t, lab.base[i * lab.stride], b, sizeof b);
        if (strcmp(a, b))
            abort();
    }
    ompf_profile_destroy(q);
    ompf_profile_destroy(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ompf_profile_t *p = NULL;
    ompf_read_info_t info;
    ompf_error_t err;
    int rc = ompf_profile_read_mem(data, size, "fuzz.ompf", &p, &info, &err);
    check_shared(data, size, rc, p);
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
    check_packed(data, size, p);
    ompf_profile_destroy(p);
    return 0;
}
