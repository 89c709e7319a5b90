/* Input profiles of evaluate/report: files, directories of *.ompf, CSV
 * files (imported), NAME=PATH, and display names for targets. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ompfuse/csv.h"
#include "ompfuse/evaluate.h"
#include "ompfuse/file.h"

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static int read_profile(const char *path, const char *prog, unsigned lean,
                        ompf_profile_t **out, ompf_error_t *err)
{
    ompf_profile_t *p = NULL;
    int rc;
    if (ends_with(path, ".csv")) {
        FILE *f;
        if ((rc = ompf_fopen_input(path, "CSV file", &f, err)))
            return rc;
        /* A CSV does not say which program it came from: "" (unknown)
         * passes the program check. */
        ompf_csv_import_opts_t o = {.program = "", .threads = 0};
        rc = ompf_csv_import(f, path, &o, &p, err);
        fclose(f);
        if (rc)
            return rc;
    } else {
        ompf_read_info_t info;
        rc = ompf_profile_read_into(path, lean, NULL, &p, &info, err);
        if (rc == OMPF_ETRUNC) {
            fprintf(stderr, "%s: warning: %s (using the salvaged part)\n",
                    prog, err->msg);
        } else if (rc) {
            return rc;
        }
        /* per-type results name constructs by their key */
        rc = ompf_resolve_constructs(p, err);
        if (rc < 0) {
            ompf_profile_destroy(p);
            return rc;
        }
    }
    *out = p;
    return 0;
}

/* Appends p (owned from now on) as path. */
static int append(ompf_inputs_t *in, const char *path, const char *name,
                  ompf_profile_t *p, ompf_error_t *err)
{
    if (in->n == in->cap) {
        size_t cap = in->cap ? 2 * in->cap : 8;
        ompf_input_t *v = realloc(in->v, cap * sizeof *v);
        if (!v) {
            ompf_profile_destroy(p);
            return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        }
        in->v = v;
        in->cap = cap;
    }
    ompf_input_t *e = &in->v[in->n];
    memset(e, 0, sizeof *e);
    e->path = dupstr(path);
    e->name = name ? dupstr(name) : NULL;
    e->profile = p;
    if (!e->path || (name && !e->name)) {
        free(e->path);
        free(e->name);
        ompf_profile_destroy(p);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    if (in->take) {
        int rc = in->take(in->take_ctx, e, p, err);
        ompf_profile_destroy(p);
        e->profile = NULL;
        if (rc) {
            free(e->path);
            free(e->name);
            return rc;
        }
    }
    in->n++;
    return 0;
}

static int load_one(ompf_inputs_t *in, const char *path, const char *name,
                    const char *prog, ompf_error_t *err)
{
    ompf_profile_t *p = NULL;
    int rc = read_profile(path, prog, in->lean, &p, err);
    return rc ? rc : append(in, path, name, p, err);
}

int ompf_mode_is_reference(const char *mode)
{
    return !mode || !*mode || !strcmp(mode, OMPF_MODE_REFERENCE) ||
           !strcmp(mode, OMPF_MODE_IMPORTED);
}

/* What a mode means, for messages. */
static const char *mode_what(const char *mode)
{
    if (!strcmp(mode, OMPF_MODE_FUSED))
        return "a profile combined by ompfuse combine";
    if (!strncmp(mode, "hem", 3))
        return "a multiplexed (HEM) run";
    if (!strcmp(mode, OMPF_MODE_RUN))
        return "a run of a fusion plan, not a reference run";
    if (!strcmp(mode, OMPF_MODE_TRUTH))
        return "the simulator's ground truth";
    return "not a reference run";
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.ompf files of directory path, sorted by name. */
static int list_dir(const char *path, char ***out, size_t *nout,
                    ompf_error_t *err)
{
    DIR *d = opendir(path);
    if (!d)
        return ompf_error_set(err, OMPF_EIO, "cannot open directory %s: %s",
                              path, strerror(errno));
    char **files = NULL;
    size_t nf = 0, cap = 0;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        if (!ends_with(de->d_name, ".ompf"))
            continue;
        if (nf == cap) {
            cap = cap ? 2 * cap : 16;
            char **nfz = realloc(files, cap * sizeof *nfz);
            if (!nfz) {
                rc = OMPF_ENOMEM;
                break;
            }
            files = nfz;
        }
        size_t l = strlen(path) + strlen(de->d_name) + 2;
        files[nf] = malloc(l);
        if (!files[nf]) {
            rc = OMPF_ENOMEM;
            break;
        }
        snprintf(files[nf], l, "%s/%s", path, de->d_name);
        nf++;
    }
    closedir(d);
    if (!rc && nf == 0)
        rc = ompf_error_set(err, OMPF_EIO,
                            "directory %s holds no .ompf profile", path);
    else if (rc)
        ompf_error_set(err, rc, "out of memory");
    if (rc) {
        for (size_t i = 0; i < nf; i++)
            free(files[i]);
        free(files);
        return rc;
    }
    qsort(files, nf, sizeof *files, cmp_str);
    *out = files;
    *nout = nf;
    return 0;
}

static void free_list(char **files, size_t nf)
{
    for (size_t i = 0; i < nf; i++)
        free(files[i]);
    free(files);
}

int ompf_inputs_add(ompf_inputs_t *in, const char *arg, int allow_name,
                    const char *prog, ompf_error_t *err)
{
    const char *path = arg;
    char *name = NULL;
    struct stat st;
    /* NAME=PATH, unless the whole argument is an existing file */
    const char *eq = allow_name ? strchr(arg, '=') : NULL;
    if (eq && eq != arg && stat(arg, &st) != 0) {
        name = malloc((size_t)(eq - arg) + 1);
        if (!name)
            return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        memcpy(name, arg, (size_t)(eq - arg));
        name[eq - arg] = '\0';
        path = eq + 1;
    }
    if (stat(path, &st) != 0) {
        int rc = ompf_error_set(err, OMPF_EIO,
                                "cannot read %s: %s; give profile files "
                                "(.ompf), CSV files or directories of "
                                "profiles",
                                path, strerror(errno));
        free(name);
        return rc;
    }
    if (!S_ISDIR(st.st_mode)) {
        int rc = load_one(in, path, name, prog, err);
        free(name);
        return rc;
    }
    /* A directory: its *.ompf files in name order. */
    char **files = NULL;
    size_t nf = 0;
    int rc = list_dir(path, &files, &nf, err);
    for (size_t i = 0; i < nf && !rc; i++)
        rc = load_one(in, files[i], NULL, prog, err);
    free_list(files, nf);
    free(name);
    return rc;
}

int ompf_inputs_add_references(ompf_inputs_t *in, const char *arg,
                               int any_mode, const char *prog,
                               size_t *skipped, char *note, size_t note_len,
                               ompf_error_t *err)
{
    struct stat st;
    if (note && note_len)
        note[0] = '\0';
    if (skipped)
        *skipped = 0;
    if (stat(arg, &st) != 0)
        return ompf_error_set(err, OMPF_EIO,
                              "cannot read %s: %s; give profile files "
                              "(.ompf), CSV files or directories of "
                              "profiles",
                              arg, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        ompf_profile_t *p = NULL;
        int rc = read_profile(arg, prog, in->lean, &p, err);
        if (rc)
            return rc;
        const char *mode = ompf_meta_get(p, "mode");
        if (!any_mode && !ompf_mode_is_reference(mode)) {
            rc = ompf_error_set(
                err, OMPF_EMISMATCH,
                "%s has mode '%s' (%s): a reference must be a run that "
                "counted its events simultaneously (mode 'reference'); pass "
                "it as a target after '--', or pass --any-mode to use it as "
                "a reference anyway",
                arg, mode, mode_what(mode));
            ompf_profile_destroy(p);
            return rc;
        }
        return append(in, arg, NULL, p, err);
    }
    /* A directory: the reference runs among its *.ompf files.  A run
     * directory usually holds fusion runs, HEM runs and fused profiles
     * too, which must not become repeats. */
    char **files = NULL;
    size_t nf = 0, taken = 0, skip = 0;
    int rc = list_dir(arg, &files, &nf, err);
    /* distinct modes skipped, for the note */
    const char *modes[8];
    size_t nmode[8], nmodes = 0, other = 0;
    char mbuf[8][32];
    for (size_t i = 0; i < nf && !rc; i++) {
        ompf_profile_t *p = NULL;
        if ((rc = read_profile(files[i], prog, in->lean, &p, err)))
            break;
        const char *mode = ompf_meta_get(p, "mode");
        if (any_mode || ompf_mode_is_reference(mode)) {
            rc = append(in, files[i], NULL, p, err);
            taken++;
            continue;
        }
        skip++;
        size_t k = 0;
        while (k < nmodes && strcmp(modes[k], mode))
            k++;
        if (k == nmodes && nmodes < 8) {
            snprintf(mbuf[k], sizeof mbuf[k], "%s", mode);
            modes[k] = mbuf[k];
            nmode[k] = 0;
            nmodes++;
        }
        if (k < nmodes)
            nmode[k]++;
        else
            other++;
        ompf_profile_destroy(p);
    }
    free_list(files, nf);
    if (rc)
        return rc;
    char desc[400] = "";
    size_t l = 0;
    for (size_t k = 0; k < nmodes && l < sizeof desc; k++)
        l += (size_t)snprintf(desc + l, sizeof desc - l, "%s%zu %s",
                              k ? ", " : "", nmode[k], modes[k]);
    if (other && l < sizeof desc)
        snprintf(desc + l, sizeof desc - l, ", %zu of other modes", other);
    if (skipped)
        *skipped = skip;
    if (!taken)
        return ompf_error_set(err, OMPF_EMISMATCH,
                              "directory %s holds no reference run (mode "
                              "'reference'): its %zu profile%s %s mode %s; "
                              "give the reference runs, or pass --any-mode "
                              "to use them anyway",
                              arg, skip, skip == 1 ? "" : "s",
                              skip == 1 ? "has" : "have", desc);
    if (skip && note && note_len)
        snprintf(note, note_len,
                 "%s: took %zu reference profile%s, skipped %zu that %s not "
                 "reference runs (mode %s); pass --any-mode to take them",
                 arg, taken, taken == 1 ? "" : "s", skip,
                 skip == 1 ? "is" : "are", desc);
    return 0;
}

void ompf_inputs_free(ompf_inputs_t *in)
{
    if (!in)
        return;
    for (size_t i = 0; i < in->n; i++) {
        free(in->v[i].path);
        free(in->v[i].name);
        ompf_profile_destroy(in->v[i].profile);
    }
    free(in->v);
    memset(in, 0, sizeof *in);
}

/* The file name without directories and .ompf/.csv. */
static char *stem(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    char *s = dupstr(b);
    if (!s)
        return NULL;
    if (ends_with(s, ".ompf"))
        s[strlen(s) - 5] = '\0';
    else if (ends_with(s, ".csv"))
        s[strlen(s) - 4] = '\0';
    return s;
}

int ompf_inputs_name(ompf_inputs_t *in)
{
    for (size_t i = 0; i < in->n; i++) {
        ompf_input_t *e = &in->v[i];
        if (e->name)
            continue;
        const char *mode = ompf_meta_get(e->profile, "mode");
        const char *strat = ompf_meta_get(e->profile, "strategy");
        if (mode && !strcmp(mode, OMPF_MODE_FUSED) && strat && *strat)
            e->name = dupstr(strat);
        else if (mode && !strncmp(mode, "hem", 3))
            e->name = dupstr(mode);
        else
            e->name = stem(e->path);
        if (!e->name)
            return OMPF_ENOMEM;
    }
    /* Same name twice (two fused profiles of one strategy): add the file. */
    for (size_t i = 0; i < in->n; i++) {
        int dup = 0;
        for (size_t j = 0; j < in->n; j++)
            if (j != i && !strcmp(in->v[i].name, in->v[j].name))
                dup = 1;
        if (!dup)
            continue;
        char *st = stem(in->v[i].path);
        if (!st)
            return OMPF_ENOMEM;
        if (strcmp(st, in->v[i].name)) {
            size_t l = strlen(in->v[i].name) + strlen(st) + 4;
            char *n = malloc(l);
            if (!n) {
                free(st);
                return OMPF_ENOMEM;
            }
            snprintf(n, l, "%s (%s)", in->v[i].name, st);
            free(in->v[i].name);
            in->v[i].name = n;
        }
        free(st);
    }
    return 0;
}
