/*
 * EPD (docs/semantics.md, Evaluation): creating an evaluation from the
 * references (events, pairs and their repeats, then the steps in
 * columns.c, binning.c and calibrate.c), destroying it, and what it tells
 * about its pairs.  Targets: target.c; worst pairs and CSV: results.c.
 * Choices the papers leave open are documented in docs/evaluation.md.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epd_internal.h"

void ompf_eval_opts_default(ompf_eval_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->bins = 10;
    o->check_program = 1;
}

char *ompf__eval_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *ompf__eval_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static int notes_add(ompf_eval_t *ev, const char *line)
{
    size_t l = strlen(line);
    char *n = realloc(ev->notes, ev->notes_len + l + 2);
    if (!n)
        return OMPF_ENOMEM;
    memcpy(n + ev->notes_len, line, l);
    n[ev->notes_len + l] = '\n';
    n[ev->notes_len + l + 1] = '\0';
    ev->notes = n;
    ev->notes_len += l + 1;
    return 0;
}

/* ---- program check ----------------------------------------------------- */

int ompf__same_program(const char *prog_a, const char *argv_a, const char *bid_a,
                       const char *name_a, const char *prog_b, const char *argv_b,
                       const char *bid_b, const char *name_b, ompf_error_t *err)
{
    static const char *keys[] = {"program", "argv"};
    /* one executable at two paths (profile/program.c) */
    if (ompf_program_moved(prog_a, argv_a, bid_a, prog_b, argv_b, bid_b))
        return 0;
    const char *a[] = {prog_a, argv_a}, *b[] = {prog_b, argv_b};
    for (int k = 0; k < 2; k++) {
        const char *va = a[k], *vb = b[k];
        /* absent or empty (a CSV import): unknown, not a mismatch */
        if (!va || !vb || !*va || !*vb || !strcmp(va, vb))
            continue;
        char sa[200], sb[200];
        /* argv is joined by \x1f: show it with spaces */
        snprintf(sa, sizeof sa, "%s", va);
        snprintf(sb, sizeof sb, "%s", vb);
        for (char *p = sa; *p; p++)
            if (*p == '\x1f')
                *p = ' ';
        for (char *p = sb; *p; p++)
            if (*p == '\x1f')
                *p = ' ';
        return ompf_error_set(
            err, OMPF_EMISMATCH,
            "%s and %s are runs of different programs (%s '%s' vs '%s'); "
            "evaluate profiles of one program with one set of arguments, or "
            "pass --ignore-program if they are the same program",
            name_a, name_b, keys[k], sa, sb);
    }
    return 0;
}

int ompf_eval_same_program(const ompf_profile_t *a, const char *name_a,
                           const ompf_profile_t *b, const char *name_b,
                           ompf_error_t *err)
{
    return ompf__same_program(ompf_meta_get(a, "program"), ompf_meta_get(a, "argv"),
                              ompf_program_build_id(a), name_a,
                              ompf_meta_get(b, "program"), ompf_meta_get(b, "argv"),
                              ompf_program_build_id(b), name_b, err);
}

/* ---- create / destroy -------------------------------------------------- */

void ompf_eval_destroy(ompf_eval_t *ev)
{
    if (!ev)
        return;
    for (size_t i = 0; i < ev->npairs; i++) {
        pair_t *pr = &ev->pairs[i];
        for (size_t r = 0; pr->hist && r < pr->nrep; r++)
            ompf_hist2d_free(&pr->hist[r]);
        free(pr->hist);
        for (size_t t = 0; t < pr->ntypes; t++) {
            for (size_t r = 0; pr->types[t].hist && r < pr->nrep; r++)
                ompf_hist2d_free(&pr->types[t].hist[r]);
            free(pr->types[t].hist);
            free(pr->types[t].problem);
        }
        free(pr->types);
        free(pr->slot);
        free(pr->rep);
        free(pr->sp);
        free(pr->problem);
    }
    free(ev->pairs);
    for (size_t a = 0; a < ev->naxes; a++) {
        free(ev->axes[a].thave);
        free(ev->axes[a].tgrid);
    }
    free(ev->axes);
    for (size_t r = 0; r < ev->nrefs; r++) {
        if (ev->refcols)
            ompf__colset_free(&ev->refcols[r]);
        if (ev->names)
            free(ev->names[r]);
    }
    free(ev->refcols);
    free(ev->names);
    for (size_t e = 0; e < ev->nev; e++)
        free(ev->evname[e]);
    free(ev->evname);
    for (size_t t = 0; t < ev->ntypes; t++) {
        free(ev->typekey[t]);
        free(ev->typename[t]);
    }
    free(ev->typekey);
    free(ev->typename);
    for (unsigned t = 0; ev->ws && t < ev->threads; t++)
        ompf_emd_ws_destroy(ev->ws[t]);
    free(ev->ws);
    free(ev->notes);
    for (size_t e = 0; ev->lack && e < ev->nev; e++)
        free(ev->lack[e]);
    free(ev->lack);
    free(ev->program);
    free(ev->argv);
    free(ev->program_bid);
    free(ev);
}

int ompf_eval_begin(const ompf_eval_opts_t *opts, ompf_eval_t **out,
                    ompf_error_t *err)
{
    if (!out)
        return ompf_error_set(err, OMPF_EINVAL, "no evaluation to begin");
    *out = NULL;
    ompf_eval_t *ev = calloc(1, sizeof *ev);
    if (!ev)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    if (opts)
        ev->opts = *opts;
    else
        ompf_eval_opts_default(&ev->opts);
    if (ev->opts.bins == 0)
        ev->opts.bins = 10;
    if (ev->opts.bins > 1000) {
        ompf_eval_destroy(ev);
        return ompf_error_set(err, OMPF_EINVAL,
                              "%u intervals per event is too many for an "
                              "exact EMD (at most 1000)",
                              ev->opts.bins);
    }
    ev->threads = ev->opts.threads ? ev->opts.threads : ompf__default_threads();
    ev->ws = calloc(ev->threads, sizeof *ev->ws);
    if (!ev->ws) {
        ompf_eval_destroy(ev);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    for (unsigned t = 0; t < ev->threads; t++)
        if (ompf_emd_ws_create(&ev->ws[t])) {
            ompf_eval_destroy(ev);
            return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        }
    *out = ev;
    return 0;
}

/* Keeps a copy of a metadata value (NULL when absent). */
static int meta_copy(const ompf_profile_t *p, const char *key, char **out)
{
    const char *v = ompf_meta_get(p, key);
    *out = v ? ompf__eval_strdup(v) : NULL;
    return v && !*out ? OMPF_ENOMEM : 0;
}

int ompf_eval_add_reference(ompf_eval_t *ev, const ompf_profile_t *p,
                            const char *name, int copy, ompf_error_t *err)
{
    if (!ev || !p)
        return ompf_error_set(err, OMPF_EINVAL, "no reference profile");
    size_t r = ev->nrefs;
    if (r == ev->refcap) {
        size_t cap = ev->refcap ? 2 * ev->refcap : 8;
        char **nn = realloc(ev->names, cap * sizeof *nn);
        if (nn)
            ev->names = nn;
        colset_t *nc = nn ? realloc(ev->refcols, cap * sizeof *nc) : NULL;
        if (!nc)
            return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        ev->refcols = nc;
        ev->refcap = cap;
    }
    char buf[32];
    snprintf(buf, sizeof buf, "reference #%zu", r + 1);
    char *nm = ompf__eval_strdup(name ? name : buf);
    if (!nm)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    int rc;
    if (r == 0) {
        if (meta_copy(p, "program", &ev->program) ||
            meta_copy(p, "argv", &ev->argv) ||
            !(ev->program_bid = ompf__eval_strdup(ompf_program_build_id(p)))) {
            free(nm);
            return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        }
    } else if (ev->opts.check_program &&
               (rc = ompf__same_program(ev->program, ev->argv, ev->program_bid,
                                        ev->names[0], ompf_meta_get(p, "program"),
                                        ompf_meta_get(p, "argv"),
                                        ompf_program_build_id(p), nm, err))) {
        free(nm);
        return rc;
    }
    /* Events: counted in some reference, in order of first appearance. */
    size_t ne = ompf_event_count(p);
    for (size_t e = 0; e < ne; e++) {
        const ompf_event_t *pe = ompf_event_get(p, (uint32_t)e);
        if (pe->status != OMPF_EV_COUNTED)
            continue;
        size_t k = 0;
        while (k < ev->nev && strcmp(ev->evname[k], pe->name))
            k++;
        if (k < ev->nev)
            continue;
        char **nn = realloc(ev->evname, (ev->nev + 1) * sizeof *nn);
        if (nn)
            ev->evname = nn;
        if (!nn || !(nn[ev->nev] = ompf__eval_strdup(pe->name))) {
            free(nm);
            return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
        }
        ev->nev++;
    }
    ev->names[r] = nm;
    rc = ompf__colset_build(ev, p, 1, 1, copy, &ev->refcols[r]);
    ev->nrefs++; /* its colset is freed with the evaluation either way */
    if (rc)
        return ompf_error_set(err, rc, "%s: %s", nm, ompf_strerror(rc));
    return 0;
}

int ompf_eval_create(const ompf_profile_t *const *refs,
                     const char *const *names, size_t nrefs,
                     const ompf_eval_opts_t *opts, ompf_eval_t **out,
                     ompf_error_t *err)
{
    if (!refs || !out || nrefs == 0)
        return ompf_error_set(err, OMPF_EINVAL,
                              "no reference profiles given: pass the "
                              "profiles of the reference runs");
    *out = NULL;
    ompf_eval_t *ev;
    int rc = ompf_eval_begin(opts, &ev, err);
    for (size_t r = 0; !rc && r < nrefs; r++)
        rc = ompf_eval_add_reference(ev, refs[r], names ? names[r] : NULL, 0,
                                     err);
    if (!rc)
        rc = ompf_eval_finish(ev, err);
    if (rc) {
        ompf_eval_destroy(ev);
        return rc;
    }
    *out = ev;
    return 0;
}

int ompf_eval_finish(ompf_eval_t *ev, ompf_error_t *err)
{
    if (!ev || ev->nrefs == 0)
        return ompf_error_set(err, OMPF_EINVAL,
                              "no reference profiles given: pass the "
                              "profiles of the reference runs");
    int rc = OMPF_ENOMEM;
    size_t nrefs = ev->nrefs;
    if (ev->nev < 2)
        return ompf_error_set(err, OMPF_EINVAL,
                              "the references count %zu event%s (%s...): EPD "
                              "needs pairs of events counted together",
                              ev->nev, ev->nev == 1 ? "" : "s", ev->names[0]);
    for (size_t r = 0; r < nrefs; r++)
        if ((rc = ompf__colset_events(ev, &ev->refcols[r])))
            goto fail;
    rc = OMPF_ENOMEM;
    ev->lack = calloc(ev->nev, sizeof *ev->lack);
    if (!ev->lack)
        goto fail;
    for (size_t e = 0; e < ev->nev; e++)
        if (!(ev->lack[e] = ompf__eval_asprintf("the target has no values of %s "
                                      "(absent or not counted)",
                                      ev->evname[e])))
            goto fail;
    /* after all types are known */
    for (size_t r = 0; r < nrefs; r++)
        if ((rc = ompf__colset_bounds(ev, &ev->refcols[r])))
            goto fail;
    /* Pairs and their repeats. */
    size_t np = ev->nev * (ev->nev - 1) / 2;
    ev->pairs = calloc(np, sizeof *ev->pairs);
    if (!ev->pairs)
        goto fail;
    for (uint32_t a = 0; a < ev->nev; a++)
        for (uint32_t b = a + 1; b < ev->nev; b++) {
            pair_t *pr = &ev->pairs[ev->npairs++];
            pr->ev[0] = a;
            pr->ev[1] = b;
            pr->rep = malloc(nrefs * sizeof *pr->rep);
            if (!pr->rep)
                goto fail;
            for (size_t r = 0; r < nrefs; r++)
                if (colset_has(&ev->refcols[r], a) &&
                    colset_has(&ev->refcols[r], b))
                    pr->rep[pr->nrep++] = r;
            if (pr->nrep < 2) {
                pr->problem = ompf__eval_asprintf(
                    "%s and %s are counted together in %zu reference run%s "
                    "(EPD needs at least 2 repeats)",
                    ev->evname[a], ev->evname[b], pr->nrep,
                    pr->nrep == 1 ? "" : "s");
                if (!pr->problem)
                    goto fail;
            }
        }
    /* Axes of the pairs that have repeats; each reference's values placed
     * once per axis and binned into the pairs. */
    if (!(ev->axes = calloc(2 * ev->npairs, sizeof *ev->axes)))
        goto fail;
    for (size_t i = 0; i < ev->npairs; i++) {
        pair_t *pr = &ev->pairs[i];
        for (int d = 0; d < 2 && !pr->problem; d++)
            if ((rc = ompf__axis_get(ev, pr->ev[d], pr->rep, pr->nrep, &pr->ax[d])))
                goto fail;
    }
    for (size_t i = 0; i < ev->npairs; i++)
        if ((rc = ompf__pair_setup(ev, &ev->pairs[i])))
            goto fail;
    for (size_t r = 0; r < nrefs; r++) {
        rc = ompf__bin_reference(ev, r);
        /* what is per XU is no longer needed */
        ompf__colset_release(&ev->refcols[r]);
        if (rc)
            goto fail;
    }
    ompf_progress_t *prog = ompf_progress_create(
        "evaluate: calibrating", ev->npairs, "pairs", ev->opts.progress);
    rc = ompf__parallel_for(ev->npairs, ev->threads, ompf__pair_prepare, ev,
                            prog);
    ompf_progress_destroy(prog);
    if (rc)
        goto fail;
    size_t bad = 0;
    for (size_t i = 0; i < ev->npairs; i++) {
        pair_t *pr = &ev->pairs[i];
        char line[1200];
        if (pr->problem) {
            snprintf(line, sizeof line, "%s,%s: %s", ev->evname[pr->ev[0]],
                     ev->evname[pr->ev[1]], pr->problem);
            if (notes_add(ev, line))
                goto fail;
            bad++;
        }
        for (size_t t = 0; t < pr->ntypes; t++)
            if (pr->types[t].problem) {
                snprintf(line, sizeof line, "%s,%s: %s (type left out)",
                         ev->evname[pr->ev[0]], ev->evname[pr->ev[1]],
                         pr->types[t].problem);
                if (notes_add(ev, line))
                    goto fail;
            }
    }
    if (bad && !ev->opts.allow_partial) {
        const pair_t *pr = NULL;
        for (size_t i = 0; i < ev->npairs && !pr; i++)
            if (ev->pairs[i].problem)
                pr = &ev->pairs[i];
        rc = ompf_error_set(
            err, OMPF_EMISMATCH,
            "%zu of %zu event pairs cannot be evaluated from these "
            "references, e.g. %s,%s: %s; add reference runs covering them "
            "or pass --allow-partial to evaluate the others",
            bad, ev->npairs, ev->evname[pr->ev[0]], ev->evname[pr->ev[1]],
            pr->problem);
        return rc;
    }
    if (bad == ev->npairs) {
        rc = ompf_error_set(err, OMPF_EMISMATCH,
                            "no event pair can be evaluated from these "
                            "references:\n%s",
                            ev->notes ? ev->notes : "");
        return rc;
    }
    return 0;
fail:
    return ompf_error_set(err, rc ? rc : OMPF_ENOMEM,
                          "evaluation of the references failed: %s",
                          ompf_strerror(rc ? rc : OMPF_ENOMEM));
}

size_t ompf_eval_event_count(const ompf_eval_t *ev) { return ev->nev; }
const char *ompf_eval_event_name(const ompf_eval_t *ev, size_t i)
{
    return i < ev->nev ? ev->evname[i] : NULL;
}
size_t ompf_eval_pair_count(const ompf_eval_t *ev) { return ev->npairs; }
const char *ompf_eval_reference_notes(const ompf_eval_t *ev)
{
    return ev->notes;
}

int ompf_eval_pair_info(const ompf_eval_t *ev, size_t i,
                        ompf_eval_pair_info_t *info)
{
    if (!ev || i >= ev->npairs || !info)
        return OMPF_EINVAL;
    const pair_t *pr = &ev->pairs[i];
    info->ev[0] = pr->ev[0];
    info->ev[1] = pr->ev[1];
    info->repeats = pr->nrep;
    info->repeat_refs = pr->rep;
    info->grid = pr->problem ? NULL : &pr->grid;
    info->calibration = pr->problem ? NAN : pr->calibration;
    info->calibration_floor = pr->floor;
    info->problem = pr->problem;
    return 0;
}
