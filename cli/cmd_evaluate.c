/* ompfuse evaluate: EPD and Correlation Error of profiles against reference
 * runs (evaluate/, docs/evaluation.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "heap.h"
#include "commands.h"
#include "opts.h"
#include "ompfuse/evaluate.h"
#include "ompfuse/file.h"
#include "ompfuse/progress.h"

#define PROG "ompfuse evaluate"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ompfuse evaluate [options] --references REF... -- TARGET...\n"
            "\n"
            "Execution Profile Dissimilarity (EPD) of each TARGET profile (fused,\n"
            "HEM, a single run) against reference runs in which events were counted\n"
            "simultaneously.  Each reference covers the pairs of events it counted\n"
            "(status 'counted'); a pair needs at least 2 such repeats.  Per pair:\n"
            "calibrated TMD = median over repeats of the EMD between target and\n"
            "repeat histograms / median EMD between repeats.  EPD = geometric mean\n"
            "over pairs; 1.0 means as close as two reference runs are.\n"
            "\n"
            "  -r, --references REF...  reference profiles or directories of them\n"
            "                       (*.ompf); takes every following argument up to\n"
            "                       the next option or '--'; repeatable (also\n"
            "                       --references=REF).  From a\n"
            "                       directory only reference runs are taken (mode\n"
            "                       'reference', 'imported' or none; a note counts\n"
            "                       the others); a file of another mode (fused, hem,\n"
            "                       run, ...) is refused\n"
            "  --any-mode           take every profile as a reference, whatever its\n"
            "                       mode\n"
            "  --bins N             intervals per event (default 10; +2 outer bins)\n"
            "  --per-type           TMD per construct, combined by a geometric mean\n"
            "                       weighted by reference XU counts\n"
            "  --correlation-error  also Correlation Error (Spearman; in [0, 2])\n"
            "  --csv OUT            one row per (target, pair): events, calibration,\n"
            "                       uncalibrated TMD per repeat, TMD, floors hit,\n"
            "                       left-out XUs, Spearman of target and references\n"
            "                       ('-': stdout, and the table goes to stderr;\n"
            "                       columns: docs/evaluation.md)\n"
            "  --allow-partial      evaluate the pairs that can be, list the others\n"
            "  --ignore-program     accept profiles whose program/argv differ\n"
            "  --worst K            worst pairs shown per target (default 5)\n"
            "  -j, --jobs N         threads (default: online CPUs)\n"
            "  -q, --quiet          no progress line, no notes (except the one on\n"
            "                       profiles skipped from a reference directory)\n"
            "  -h, --help           this help\n"
            "\n"
            "Options may come anywhere before '--', also after targets\n"
            "(evaluate T.ompf -r REF... -j2); after '--' every argument is a target.\n"
            "TARGET may be NAME=PATH to name it; otherwise the name is the fused\n"
            "strategy, the HEM mode, or the file name.  CSV files are imported.\n"
            "Per target: EPD, pairs evaluated/total, the most XUs left out of a pair\n"
            "(missing values), 'floor': pairs whose calibration was raised to the\n"
            "floor 1/|XUs|, 'tmd-floor': pairs whose median uncalibrated TMD was\n"
            "raised to that floor (see docs/evaluation.md), then the worst pairs.\n"
            OMPF_CLI_EXIT_HELP);
}

/* Where the table goes: stdout, or stderr when the CSV is written to
 * stdout (--csv -), so that the CSV pipes cleanly. */
static FILE *tbl;

static void print_result(const ompf_eval_t *ev, const ompf_eval_result_t *r,
                         unsigned worst, int ce)
{
    fprintf(tbl, "%-20s ", r->target);
    if (isnan(r->epd))
        fprintf(tbl, "%12s", "-");
    else
        fprintf(tbl, "%12.4f", r->epd);
    fprintf(tbl, "  %5zu/%-5zu %10llu %6zu %9zu", r->pairs_evaluated,
           r->pairs_total, (unsigned long long)r->left_out_max,
           r->calibration_floor_hits, r->tmd_floor_hits);
    if (ce) {
        if (isnan(r->correlation_error))
            fprintf(tbl, " %10s", "-");
        else
            fprintf(tbl, " %10.4f", r->correlation_error);
    }
    fputc('\n', tbl);
    size_t *idx = malloc((worst ? worst : 1) * sizeof *idx);
    if (!idx)
        return;
    size_t n = ompf_eval_worst_pairs(r, idx, worst);
    if (n) {
        fprintf(tbl, "  worst pairs:");
        for (size_t k = 0; k < n; k++) {
            ompf_eval_pair_info_t in;
            ompf_eval_pair_info(ev, r->pairs[idx[k]].pair, &in);
            fprintf(tbl, "%s %s,%s %.3g", k ? ";" : "",
                   ompf_eval_event_name(ev, in.ev[0]),
                   ompf_eval_event_name(ev, in.ev[1]), r->pairs[idx[k]].tmd);
        }
        fputc('\n', tbl);
    }
    free(idx);
    size_t skipped = 0;
    for (size_t i = 0; i < r->pairs_total; i++)
        if (!r->pairs[i].evaluated)
            skipped++;
    if (skipped) {
        fprintf(tbl, "  not evaluated (%zu):\n", skipped);
        size_t shown = 0;
        for (size_t i = 0; i < r->pairs_total; i++) {
            if (r->pairs[i].evaluated)
                continue;
            if (++shown > 10) {
                fprintf(tbl, "    ... and %zu more (all are in --csv output)\n",
                       skipped - 10);
                break;
            }
            ompf_eval_pair_info_t in;
            ompf_eval_pair_info(ev, i, &in);
            fprintf(tbl, "    %s,%s: %s\n", ompf_eval_event_name(ev, in.ev[0]),
                   ompf_eval_event_name(ev, in.ev[1]),
                   r->pairs[i].problem ? r->pairs[i].problem : "?");
        }
    }
    for (size_t i = 0; i < r->pairs_total; i++)
        for (size_t t = 0; t < r->pairs[i].ntypes; t++)
            if (r->pairs[i].types[t].problem && r->pairs[i].evaluated) {
                ompf_eval_pair_info_t in;
                ompf_eval_pair_info(ev, i, &in);
                fprintf(tbl, "    %s,%s type %s left out: %s\n",
                       ompf_eval_event_name(ev, in.ev[0]),
                       ompf_eval_event_name(ev, in.ev[1]),
                       r->pairs[i].types[t].type,
                       r->pairs[i].types[t].problem);
            }
}

/* A reference into the evaluation as soon as it is read: the evaluation
 * keeps its values, the profile is dropped (inputs.take). */
static int take_reference(void *ctx, const ompf_input_t *in,
                          const ompf_profile_t *p, ompf_error_t *err)
{
    return ompf_eval_add_reference(ctx, p, in->path, 1, err);
}

int ompf_cmd_evaluate(int argc, char **argv)
{
    ompf_eval_opts_t o;
    ompf_eval_opts_default(&o);
    const char **refs = calloc((size_t)argc + 1, sizeof *refs);
    const char **targets = calloc((size_t)argc + 1, sizeof *targets);
    size_t nrefs = 0, ntargets = 0;
    const char *csv = NULL;
    unsigned worst = 5;
    int quiet = 0, in_refs = 0, status = 2, any_mode = 0;
    ompf_inputs_t rin = {0}, tin = {0};
    ompf_eval_t *ev = NULL;
    ompf_outfile_t *of = NULL;
    if (!refs || !targets) {
        fprintf(stderr, PROG ": out of memory\n");
        goto out;
    }
    static const struct option lo[] = {
        OMPF_CLI_EVAL_LONGOPTS,
        {"csv", required_argument, 0, 'c'},
        {"worst", required_argument, 0, 'w'},
        {0, 0, 0, 0}};
    ompf_cli_opts_t po;
    /* '-': operands in order, as "-r A B" lists the references up to the
       next option */
    ompf_cli_opts_start(&po, "evaluate", argc, argv, "-hr::qj:", lo);
    int ch;
    while ((ch = ompf_cli_opts_next(&po)) != -1) {
        if (ch != OMPF_CLI_OPERAND)
            in_refs = 0;
        switch (ch) {
        case OMPF_CLI_OPERAND:
            if (in_refs) {
                ompf_cli_opts_operand_of(&po, "references");
                refs[nrefs++] = optarg;
            } else {
                targets[ntargets++] = optarg;
            }
            break;
        case 'h':
            usage(stdout);
            status = 0;
            goto out;
        case 'r':
            in_refs = 1;
            if (optarg) /* --references=REF */
                refs[nrefs++] = optarg;
            break;
        OMPF_CLI_EVAL_CASES:
            if (ompf_cli_eval_opt(PROG, ch, optarg, &o) < 0)
                goto out;
            break;
        case 'c': csv = optarg; break;
        case 'w':
            if (ompf_cli_parse_uint(PROG, "--worst", optarg, 0, 100000, &worst))
                goto out;
            break;
        case 'q': quiet = 1; break;
        case 'A': any_mode = 1; break;
        default: goto out;
        }
    }
    /* after "--": every argument is a target */
    for (int i = optind; i < argc; i++)
        targets[ntargets++] = argv[i];
    if (!nrefs) {
        fprintf(stderr, PROG ": no reference profiles: give them with "
                        "--references REF... (see --help)\n");
        goto out;
    }
    if (!ntargets) {
        fprintf(stderr, PROG ": no target profile given (--references takes "
                        "every following argument up to the next option; end "
                        "the list with '--' before the targets)\n");
        goto out;
    }
    o.progress = ompf_progress_wanted(quiet);
    tbl = csv && !strcmp(csv, "-") ? stderr : stdout;
    ompf_error_t err = {0};
    /* Spearman columns of the CSV are filled whenever there is a CSV. */
    o.spearman = csv != NULL;
    /* Profiles are read, copied and dropped one after the other (measured:
     * half the system time at 10^6 XUs, peak RSS +6 %). */
    ompf_cli_heap_reuse();
    if (ompf_eval_begin(&o, &ev, &err)) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        goto out;
    }
    rin.take = take_reference;
    rin.take_ctx = ev;
    /* EPD reads each XU's type and values only: 16 bytes an XU instead
     * of the 80-byte record (profile.h, "Lean profiles"). */
    rin.lean = tin.lean = OMPF_LEAN;
    for (size_t i = 0; i < nrefs; i++) {
        char note[700];
        if (ompf_inputs_add_references(&rin, refs[i], any_mode, PROG, NULL,
                                       note, sizeof note, &err)) {
            fprintf(stderr, PROG ": %s\n", err.msg);
            goto out;
        }
        /* Even with -q: it changes which runs are the references. */
        if (note[0])
            fprintf(stderr, PROG ": note: %s\n", note);
    }
    for (size_t i = 0; i < ntargets; i++)
        if (ompf_inputs_add(&tin, targets[i], 1, PROG, &err)) {
            fprintf(stderr, PROG ": %s\n", err.msg);
            goto out;
        }
    if (ompf_inputs_name(&tin)) {
        fprintf(stderr, PROG ": out of memory\n");
        goto out;
    }
    if (ompf_eval_finish(ev, &err)) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        goto out;
    }
    size_t np = ompf_eval_pair_count(ev), bad = 0;
    for (size_t i = 0; i < np; i++) {
        ompf_eval_pair_info_t in;
        ompf_eval_pair_info(ev, i, &in);
        bad += in.problem != NULL;
    }
    fprintf(tbl, "references: %zu profile%s, %zu events, %zu pairs", rin.n,
           rin.n == 1 ? "" : "s", ompf_eval_event_count(ev), np);
    if (bad)
        fprintf(tbl, " (%zu cannot be evaluated)", bad);
    fprintf(tbl, ", %u intervals per event%s\n", o.bins ? o.bins : 10,
           o.per_type ? ", per type" : "");
    if (bad && !quiet && ompf_eval_reference_notes(ev))
        fprintf(tbl, "reference notes:\n%s", ompf_eval_reference_notes(ev));
    fprintf(tbl, "%-20s %12s  %11s %10s %6s %9s%s\n", "target", "EPD", "pairs",
           "left-out", "floor", "tmd-floor",
           o.correlation_error ? "         CE" : "");
    FILE *cf = NULL;
    if (csv) {
        ompf_stale_tmp_remove(csv, stderr, PROG);
        if (ompf_outfile_open(csv, &of, &cf, &err)) {
            fprintf(stderr, PROG ": %s\n", err.msg);
            goto out;
        }
        ompf_eval_csv_header(ev, cf);
    }
    status = 0;
    for (size_t t = 0; t < tin.n; t++) {
        ompf_eval_result_t *r = NULL;
        int rc = ompf_eval_target(ev, tin.v[t].profile, tin.v[t].name, &r,
                                  &err);
        if (rc) {
            fprintf(stderr, PROG ": %s (file %s)\n", err.msg, tin.v[t].path);
            status = 2;
            continue;
        }
        print_result(ev, r, worst, o.correlation_error);
        if (cf && ompf_eval_csv_rows(ev, r, cf)) {
            fprintf(stderr, PROG ": %s: write failed: %s\n", csv, strerror(errno));
            status = 2;
        }
        ompf_eval_result_free(r);
        fflush(tbl);
    }
    if (of) {
        /* Complete rows of the targets that could be evaluated. */
        if (ompf_outfile_commit(of, &err)) {
            fprintf(stderr, PROG ": %s\n", err.msg);
            status = 2;
        } else if (status) {
            fprintf(stderr, PROG ": %s holds only the targets evaluated\n",
                    csv);
        }
        of = NULL;
    }
out:
    if (of)
        ompf_outfile_abort(of);
    ompf_eval_destroy(ev);
    ompf_inputs_free(&rin);
    ompf_inputs_free(&tin);
    free(refs);
    free(targets);
    return status;
}
