/* ompfuse combine: fuse profiles of one program (issue #3; fusion/). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "heap.h"
#include "opts.h"
#include "ompfuse/file.h"
#include "ompfuse/fusion.h"
#include "ompfuse/progress.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ompfuse combine --strategy S [--seed N] [--order auto|given]\n"
            "                       [--force] [--strict] [--allow-empty] [-q]\n"
            "                       -o OUT IN IN...\n"
            "\n"
            "Fuses profiles of one program, each counting its own events, into one\n"
            "profile in which every XU has a value for every event.\n"
            "\n"
            "  --strategy S   ctc | lgl | bc | bc-unlabeled | random\n"
            "                 ctc: per type, pair XUs by start order\n"
            "                 lgl: pair XUs with the same label\n"
            "                 bc: pair XUs with similar counts of overlapping events\n"
            "                     (label order inside a grid cell)\n"
            "                 bc-unlabeled: bc with seeded random order in a cell\n"
            "                 random: seeded random pairing per type (a control)\n"
            "  --seed N       seed for random and bc-unlabeled (default 1)\n"
            "  --order M      bc: auto (default) keeps the given order when each run\n"
            "                 shares an event with the runs before it, else finds one;\n"
            "                 given refuses an invalid order\n"
            "  --force        combine despite different program, arguments, team size,\n"
            "                 duplicated run ids or the same file given twice\n"
            "                 (recorded in the result)\n"
            "  --strict       refuse inputs recorded on different CPU models\n"
            "  --allow-empty  accept an input without XUs (e.g. a truncated file\n"
            "                 that salvaged none); refused by default\n"
            "  -q, --quiet    print nothing but errors\n"
            "  -o, --output F fused profile to write\n"
            "\n"
            "An event counted by several runs takes its values from the first of\n"
            "them (in the combination order) that has a value for it in some XU.\n"
            "Unmatched XUs are reported per type.  OUT must not be one of the\n"
            "inputs (same path or same file).\n" OMPF_CLI_EXIT_HELP);
}

int ompf_cmd_combine(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"strategy", required_argument, NULL, 's'},
        {"seed", required_argument, NULL, 'S'},
        {"order", required_argument, NULL, 'O'},
        {"force", no_argument, NULL, 'f'},
        {"strict", no_argument, NULL, 't'},
        {"allow-empty", no_argument, NULL, 'E'},
        {"quiet", no_argument, NULL, 'q'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    ompf_fuse_opts_t o;
    ompf_fuse_opts_init(&o);
    const char *out_path = NULL;
    int allow_empty = 0;
    int have_strategy = 0, quiet = 0;
    ompf_cli_opts_t po;
    ompf_cli_opts_start(&po, "combine", argc, argv, "o:qh", longopts);
    for (;;) {
        int c = ompf_cli_opts_next(&po);
        if (c == -1)
            break;
        switch (c) {
        case 's':
            o.strategy = ompf_fuse_strategy_parse(optarg);
            if (o.strategy < 0) {
                fprintf(stderr, "ompfuse combine: unknown strategy '%s' (use ctc, "
                                "lgl, bc, bc-unlabeled or random)\n", optarg);
                return 2;
            }
            have_strategy = 1;
            break;
        case 'S': {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 0);
            if (errno || !*optarg || *end || optarg[0] == '-') {
                fprintf(stderr, "ompfuse combine: --seed needs a non-negative "
                                "integer, got '%s'\n", optarg);
                return 2;
            }
            o.seed = v;
            break;
        }
        case 'O':
            if (!strcmp(optarg, "auto"))
                o.order_given = 0;
            else if (!strcmp(optarg, "given"))
                o.order_given = 1;
            else {
                fprintf(stderr, "ompfuse combine: --order is auto or given, "
                                "not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'f': o.force = 1; break;
        case 't': o.strict = 1; break;
        case 'E': allow_empty = 1; break;
        case 'q': quiet = 1; break;
        case 'o': out_path = optarg; break;
        case 'h': usage(stdout); return 0;
        default: /* bad option, reported */
            return 2;
        }
    }
    if (!have_strategy) {
        fprintf(stderr, "ompfuse combine: --strategy is required (ctc, lgl, bc, "
                        "bc-unlabeled or random); see 'ompfuse combine --help'\n");
        return 2;
    }
    if (!out_path) {
        fprintf(stderr, "ompfuse combine: -o OUT is required: the fused profile "
                        "to write\n");
        return 2;
    }
    size_t n = (size_t)(argc - optind);
    if (n < 2) {
        fprintf(stderr, "ompfuse combine: needs at least two profiles to fuse, "
                        "got %zu\n", n);
        return 2;
    }
    const char **paths = (const char **)(argv + optind);
    /* Writing over an input would destroy it even with --force: refuse by
     * name and by (device, inode), which catches links and other
     * spellings. */
    struct stat os;
    int have_os = stat(out_path, &os) == 0;
    for (size_t i = 0; i < n; i++) {
        struct stat is;
        if (strcmp(paths[i], out_path) &&
            !(have_os && stat(paths[i], &is) == 0 && is.st_dev == os.st_dev &&
              is.st_ino == os.st_ino))
            continue;
        fprintf(stderr, "ompfuse combine: the output %s is input %zu (%s); writing it would "
                        "destroy that input: choose another -o\n", out_path, i + 1, paths[i]);
        return 2;
    }
    ompf_profile_t **in = calloc(n, sizeof *in), *labels = NULL;
    if (!in || ompf_profile_create(&labels)) {
        free(in);
        fprintf(stderr, "ompfuse combine: out of memory\n");
        return 2;
    }
    int ret = 2;
    ompf_error_t err;
    memset(&err, 0, sizeof err);
    ompf_cli_heap_reuse(); /* each input's transients serve the next (cli/heap.h) */
    int show_progress = ompf_progress_wanted(quiet);
    ompf_progress_t *prog = ompf_progress_create("combine: reading", n, "inputs",
                                                 show_progress);
    uint64_t in_xus = 0;
    for (size_t i = 0; i < n; i++) {
        ompf_progress_update(prog, i);
        ompf_read_info_t info;
        memset(&info, 0, sizeof info);
        /* Every input lean (profile.h): fusion reads their ids, types,
         * labels, times (CTC: start and end, LGL: start) and values, 48-64
         * fewer bytes an XU.  The first keeps the rest of its records and
         * its parts packed: the fused XUs take them. */
        unsigned lean = OMPF_LEAN | (o.strategy == OMPF_FUSE_CTC   ? OMPF_LEAN_TIMES
                                     : o.strategy == OMPF_FUSE_LGL ? OMPF_LEAN_START
                                                                   : 0);
        /* Runs of one program share most labels: each is held once, in
         * one trie, which is the union trie fusion needs. */
        if (i + 1 == n) /* the union trie is complete after this one */
            lean |= OMPF_LABELS_LAST;
        int rc = ompf_profile_read_into(paths[i], i ? lean : lean | OMPF_LEAN_PACKED, labels,
                                        &in[i], &info, &err);
        if (rc == OMPF_ETRUNC) {
            fprintf(stderr, "ompfuse combine: warning: %s is truncated (%s); "
                            "using the %" PRIu64 " XUs that were salvaged\n",
                    paths[i], info.note, info.xus_read);
        } else if (rc) {
            fprintf(stderr, "ompfuse combine: %s\n", err.msg);
            goto out;
        }
        if (!allow_empty && ompf_xu_count(in[i]) == 0) {
            fprintf(stderr, "ompfuse combine: %s has no XUs%s; fusing it would leave its "
                            "events without values: re-record it, or pass --allow-empty\n",
                    paths[i], rc == OMPF_ETRUNC ? " (its truncated file salvaged none)" : "");
            goto out;
        }
        /* messages and the result name constructs by their key */
        if (ompf_resolve_constructs(in[i], &err) < 0) {
            fprintf(stderr, "ompfuse combine: %s\n", err.msg);
            goto out;
        }
        in_xus += ompf_xu_count(in[i]);
        ompf_progress_update(prog, i + 1);
    }
    ompf_progress_destroy(prog);
    char what[64];
    snprintf(what, sizeof what, "combine %s", ompf_fuse_strategy_name(o.strategy));
    prog = ompf_progress_create(what, 2 * in_xus, "XUs", show_progress);
    o.progress = prog;
    ompf_fuse_report_t *rep = NULL;
    ompf_stale_tmp_remove(out_path, stderr, "ompfuse combine");
    /* Written as it is fused: the fused XUs are never all in memory. */
    int rc = ompf_fuse_write_release(in, paths, n, &o, out_path, &rep, &err);
    ompf_progress_destroy(prog);
    prog = NULL;
    if (rc) {
        fprintf(stderr, "ompfuse combine: %s\n", err.msg);
        ret = 2;
    } else {
        if (!quiet) {
            ompf_fuse_report_print(rep, stdout);
            printf("wrote %s\n", out_path);
        }
        ret = 0;
    }
    ompf_fuse_report_destroy(rep);
out:
    ompf_progress_destroy(prog);
    for (size_t i = 0; i < n; i++)
        ompf_profile_destroy(in[i]);
    ompf_profile_destroy(labels);
    free(in);
    return ret;
}
