/* Input checks of ompf_fuse: same program, arguments and team size, the
 * same run or file given twice, CPU models, fused inputs (refused or noted;
 * --force and --strict decide). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fz.h"

/* ---- input checks -------------------------------------------------------- */

static int same_str(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return !strcmp(a, b);
}

/* argv and omp_env are stored joined by \x1f: show them with spaces. */
static void show(char *buf, size_t len, const char *v)
{
    if (!v) {
        snprintf(buf, len, "(not recorded)");
        return;
    }
    size_t i = 0;
    if (len < 3)
        return;
    buf[i++] = '\'';
    for (; *v && i + 2 < len; v++)
        buf[i++] = *v == '\x1f' ? ' ' : *v;
    buf[i++] = '\'';
    buf[i] = 0;
}

/* Appends check name k to the comma-separated list of forced checks. */
static void add_forced(char *forced, size_t flen, const char *k)
{
    if (strstr(forced, k))
        return;
    size_t l = strlen(forced);
    snprintf(forced + l, flen - l, "%s%s", l ? "," : "", k);
}

/* Same file (dev + inode) given twice; needs paths that exist. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || stat(a, &sa) || stat(b, &sb))
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Cheap fingerprint of the data (XU and event counts, every value's bits):
 * two inputs with equal fingerprints are then compared value by value. */
static uint64_t values_hash(const ompf_profile_t *p)
{
    size_t ne = ompf_event_count(p), nx = ompf_xu_count(p);
    uint64_t h = 0xcbf29ce484222325ull ^ ne;
    h = (h ^ nx) * 0x100000001b3ull;
    for (size_t i = 0; i < nx; i++) {
        const double *v = ompf_xu_values_const(p, i);
        for (size_t e = 0; e < ne; e++) {
            uint64_t u;
            memcpy(&u, &v[e], sizeof u);
            h = (h ^ u) * 0x100000001b3ull;
            h ^= h >> 29;
        }
    }
    return h;
}

static int same_values(const ompf_profile_t *a, const ompf_profile_t *b)
{
    size_t ne = ompf_event_count(a), nx = ompf_xu_count(a);
    if (ne != ompf_event_count(b) || nx != ompf_xu_count(b))
        return 0;
    for (size_t i = 0; i < nx; i++)
        if (ne && memcmp(ompf_xu_values_const(a, i), ompf_xu_values_const(b, i),
                         ne * sizeof(double)))
            return 0;
    return 1;
}

/* One input given twice fuses a run with itself: refused unless forced.
 * The same file is caught by dev + inode, the same run by its run id; an
 * imported profile has run id 0, so equal data of two such files is
 * noted (copies of one profile are likely a mistake, but equal data can
 * also be legitimate, e.g. a tiny deterministic program). */
static int check_duplicates(fz_ctx_t *c, char *forced, size_t flen)
{
    ompf_fuse_report_t *r = c->rep;
    uint64_t *hash = NULL;
    int rc = 0;
    for (size_t i = 0; i < c->n && !rc; i++) {
        for (size_t j = 0; j < i && !rc; j++) {
            if (same_file(c->runs[j].path, c->runs[i].path)) {
                if (!c->opts->force)
                    return ompf_error_set(
                        c->err, OMPF_EMISMATCH,
                        "%s (input %zu) and %s (input %zu) are the same "
                        "file: fusing a profile with itself adds nothing; "
                        "give each run once, or pass --force",
                        r->in_name[j], j + 1, r->in_name[i], i + 1);
                if (fz_note(r, "forced: %s (input %zu) and %s (input %zu) "
                               "are the same file",
                            r->in_name[j], j + 1, r->in_name[i], i + 1))
                    return OMPF_ENOMEM;
                add_forced(forced, flen, "same_file");
                continue;
            }
            if (!r->in_run_id[i] || r->in_run_id[i] != r->in_run_id[j])
                continue;
            if (!c->opts->force)
                return ompf_error_set(
                    c->err, OMPF_EMISMATCH,
                    "%s and %s have the same run id %016" PRIx64
                    ": they are the same run (or copies of it); give each "
                    "run once, or pass --force",
                    r->in_name[j], r->in_name[i], r->in_run_id[i]);
            if (fz_note(r, "forced: %s and %s have the same run id %016" PRIx64,
                        r->in_name[j], r->in_name[i], r->in_run_id[i]))
                return OMPF_ENOMEM;
            add_forced(forced, flen, "run_id");
        }
    }
    /* Distinct files without run ids: compare fingerprints, then data. */
    for (size_t i = 0; i < c->n; i++) {
        if (r->in_run_id[i])
            continue;
        if (!hash && !(hash = calloc(c->n, sizeof *hash)))
            return OMPF_ENOMEM;
        hash[i] = values_hash(c->runs[i].p);
        for (size_t j = 0; j < i; j++) {
            if (r->in_run_id[j] || hash[j] != hash[i] ||
                same_file(c->runs[j].path, c->runs[i].path) ||
                !same_values(c->runs[j].p, c->runs[i].p))
                continue;
            rc = fz_note(r,
                         "%s and %s have no run id and identical XU values: "
                         "probably copies of one profile, which adds nothing "
                         "to the fusion; check the inputs",
                         r->in_name[j], r->in_name[i]);
            break; /* one note per input is enough */
        }
        if (rc)
            break;
    }
    free(hash);
    return rc;
}

int fz_check_inputs(fz_ctx_t *c, char *forced, size_t flen)
{
    /* omp_env: OMP_SCHEDULE alone turns a schedule(runtime) loop's chunks
     * into others (static chunk sets against dynamic chunks) */
    static const char *const keys[] = {"program", "argv", "team_size", "omp_env"};
    ompf_fuse_report_t *r = c->rep;
    int rc;
    forced[0] = 0;
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        /* Reference: the first input that records the key. */
        size_t ref = 0;
        while (ref < c->n && !ompf_meta_get(c->runs[ref].p, keys[k]))
            ref++;
        /* omp_env is younger than the others: profiles of earlier tools
         * lack it, and saying so for each would be noise */
        if (ref == c->n && !strcmp(keys[k], "omp_env"))
            continue;
        if (ref == c->n) {
            /* NULL == NULL proves nothing: say so. */
            if (fz_note(r, "%s not recorded in any input: cannot be checked",
                        keys[k]))
                return OMPF_ENOMEM;
            continue;
        }
        const char *v0 = ompf_meta_get(c->runs[ref].p, keys[k]);
        char missing[512];
        size_t l = 0;
        missing[0] = 0;
        for (size_t i = 0; i < c->n && l + 1 < sizeof missing; i++)
            if (!ompf_meta_get(c->runs[i].p, keys[k]))
                l += (size_t)snprintf(missing + l, sizeof missing - l, "%s%s",
                                      l ? ", " : "", r->in_name[i]);
        /* Not recorded (truncated run, CSV import): cannot check. */
        if (l && fz_note(r, "%s is not recorded in %s: cannot check that "
                            "the inputs agree on it",
                         keys[k], missing))
            return OMPF_ENOMEM;
        for (size_t i = ref + 1; i < c->n; i++) {
            const char *vi = ompf_meta_get(c->runs[i].p, keys[k]);
            if (!vi || same_str(v0, vi))
                continue;
            const ompf_profile_t *pr = c->runs[ref].p, *pi = c->runs[i].p;
            if (k < 2 && ompf_program_moved(ompf_meta_get(pr, "program"),
                                            ompf_meta_get(pr, "argv"),
                                            ompf_program_build_id(pr),
                                            ompf_meta_get(pi, "program"),
                                            ompf_meta_get(pi, "argv"),
                                            ompf_program_build_id(pi))) {
                /* one executable at two paths: its constructs match */
                if (k == 0 && fz_note(r, "%s and %s record one program at two paths "
                                         "(%s, %s; the same build-id %s)",
                                      r->in_name[ref], r->in_name[i], v0, vi,
                                      ompf_program_build_id(pr)))
                    return OMPF_ENOMEM;
                continue;
            }
            char a[300], b[300], d[610];
            show(a, sizeof a, v0);
            show(b, sizeof b, vi);
            snprintf(d, sizeof d, "%s vs %s", a, b);
            if (!strcmp(keys[k], "omp_env")) /* the whole of it would hide what differs */
                ompf_omp_env_diff(v0, vi, "in the first", "in the second", d, sizeof d);
            if (!c->opts->force)
                return ompf_error_set(
                    c->err, OMPF_EMISMATCH,
                    "%s and %s differ in %s (%s): fusion needs runs of "
                    "the same program with the same arguments, team size and "
                    "OpenMP environment (OMP_*, KMP_*); pass --force to "
                    "combine them anyway",
                    r->in_name[ref], r->in_name[i], keys[k], d);
            if (fz_note(r, "forced: %s and %s differ in %s (%s)",
                        r->in_name[ref], r->in_name[i], keys[k], d))
                return OMPF_ENOMEM;
            add_forced(forced, flen, keys[k]);
            break;
        }
    }
    if ((rc = check_duplicates(c, forced, flen)))
        return rc;
    const char *cpu0 = ompf_meta_get(c->runs[0].p, "cpu_model");
    size_t any_cpu = 0;
    while (any_cpu < c->n && !ompf_meta_get(c->runs[any_cpu].p, "cpu_model"))
        any_cpu++;
    if (any_cpu == c->n &&
        fz_note(r, "cpu_model not recorded in any input: cannot be checked"))
        return OMPF_ENOMEM;
    for (size_t i = 1; i < c->n && any_cpu < c->n; i++) {
        const char *ci = ompf_meta_get(c->runs[i].p, "cpu_model");
        if (same_str(cpu0, ci))
            continue;
        if (c->opts->strict)
            return ompf_error_set(
                c->err, OMPF_EMISMATCH,
                "%s and %s come from different CPU models ('%s' vs '%s'); "
                "counts of different machines are not comparable: combine "
                "runs from one machine type, or drop --strict",
                r->in_name[0], r->in_name[i], cpu0 ? cpu0 : "?",
                ci ? ci : "?");
        if (fz_note(r,
                    "warning: %s and %s come from different CPU models "
                    "('%s' vs '%s'); counts may not be comparable",
                    r->in_name[0], r->in_name[i], cpu0 ? cpu0 : "?",
                    ci ? ci : "?"))
            return OMPF_ENOMEM;
        break;
    }
    for (size_t i = 0; i < c->n; i++) {
        const char *m = ompf_meta_get(c->runs[i].p, "mode");
        if (m && !strcmp(m, OMPF_MODE_FUSED)) {
            const char *s = ompf_meta_get(c->runs[i].p, "strategy");
            if (fz_note(r,
                        "%s is itself a fused profile (strategy %s): its XUs "
                        "are combined like those of a run, and its "
                        "provenance is not carried over",
                        r->in_name[i], s ? s : "?"))
                return OMPF_ENOMEM;
        }
    }
    return 0;
}
