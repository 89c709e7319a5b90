/* ompfuse export: profiles to CSV (csv.h), JSON, a Perfetto timeline or an
 * OTF2 archive (export.h).  Formats: docs/export.md. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opts.h"
#include "ompfuse/csv.h"
#include "ompfuse/export.h"
#include "ompfuse/file.h"
#include "ompfuse/profile.h"
#include "ompfuse/progress.h"

static void export_usage(FILE *f)
{
    fprintf(f,
            "usage: ompfuse export --format csv|json|perfetto|otf2 [-o OUT] [--metadata M.json]\n"
            "                      [--no-resolve] PROFILE...\n"
            "\n"
            "  csv       one row per XU: xu,type,kind,label,thread,cpu,start_ns,end_ns,<event>...\n"
            "            (type = the construct key: 'file:line function', 'function\n"
            "            (module+0xOFFSET)' when the line is unknown, else module+0xOFFSET;\n"
            "            an empty cell is a missing value); pandas.read_csv(OUT) loads\n"
            "            it; 'ompfuse import' is the inverse.  One profile per call.\n"
            "  json      one document: metadata, events (status, unit, source), sources,\n"
            "            constructs, threads (totals, gap) and XUs (one per line) of every\n"
            "            profile given.\n"
            "  perfetto  Chrome trace JSON for ui.perfetto.dev or chrome://tracing: a process\n"
            "            per profile, a track per thread, a slice per XU with its label,\n"
            "            construct, kind and event values; the gaps are the empty stretches.\n"
            "  otf2      OTF2 archive (a directory, -o required) for Vampir or otf2-print: a\n"
            "            location group per profile, a location per thread, a region per\n"
            "            construct, Enter/Leave per XU, event values as metrics, metadata as\n"
            "            archive properties.%s\n"
            "\n"
            "  --format F        output format (--csv is --format csv)\n"
            "  -o, --output OUT  write OUT (atomically) instead of standard output\n"
            "  --metadata M      csv: also write M, a JSON file with the profile's metadata\n"
            "                    (strategy, sources, ...), events with status and unit,\n"
            "                    constructs, threads, and the salvage note of a truncated\n"
            "                    profile (the json format without the XUs)\n"
            "  --counters        perfetto: also a counter track per thread and event, the\n"
            "                    running sum of the XUs' values at each XU end\n"
            "  --no-resolve      do not resolve constructs to file:line / function\n"
            "  -h, --help        this help\n"
            "\n"
            "A truncated profile is exported up to its last complete chunk, with a warning\n"
            "and its salvage note in the output (csv: in the --metadata file); nothing is\n"
            "left behind when an output cannot be written.\n" OMPF_CLI_EXIT_HELP,
            ompf_export_otf2_available() ? "" : "\n            (not in this build: libotf2 was not found)");
}

enum { F_NONE, F_CSV, F_JSON, F_PERFETTO, F_OTF2 };

static int parse_format(const char *s)
{
    static const char *names[] = {"csv", "json", "perfetto", "otf2"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i]))
            return F_CSV + i;
    return -1;
}

typedef struct opts {
    int format, resolve, counters;
    const char *out, *meta;
    const char **in;
    size_t n;
} opts_t;

/* 0: parsed; 1: help printed; 2: usage error (message printed). */
static int parse_args(int argc, char **argv, opts_t *o)
{
    static const struct option lo[] = {
        {"csv", no_argument, 0, 'c'},
        {"no-resolve", no_argument, 0, 'N'},
        {"counters", no_argument, 0, 'C'},
        {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'},
        {"metadata", required_argument, 0, 'm'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    ompf_cli_opts_t po;
    ompf_cli_opts_start(&po, "export", argc, argv, "ho:", lo);
    int ch;
    while ((ch = ompf_cli_opts_next(&po)) != -1) {
        switch (ch) {
        case 'h':
            export_usage(stdout);
            return 1;
        case 'c': o->format = F_CSV; break;
        case 'N': o->resolve = 0; break;
        case 'C': o->counters = 1; break;
        case 'f':
            o->format = parse_format(optarg);
            if (o->format < 0) {
                fprintf(stderr,
                        "ompfuse export: unknown format '%s': use csv, json, perfetto or otf2\n",
                        optarg);
                return 2;
            }
            break;
        case 'm': o->meta = optarg; break;
        case 'o': o->out = optarg; break;
        default: return 2;
        }
    }
    for (int i = optind; i < argc; i++)
        o->in[o->n++] = argv[i];
    const char *why = NULL;
    if (o->format == F_NONE)
        why = "say which format: --format csv|json|perfetto|otf2 (--csv for csv)";
    else if (!o->n)
        why = "no profile given; usage: ompfuse export --format F [-o OUT] PROFILE...";
    else if (o->format == F_CSV && o->n > 1)
        why = "csv takes one profile per call (json, perfetto and otf2 take several)";
    else if (o->counters && o->format != F_PERFETTO)
        why = "--counters goes with --format perfetto";
    else if (o->meta && o->format != F_CSV)
        why = "--metadata goes with --format csv (json carries its metadata itself)";
    else if (o->format == F_OTF2 && !strcmp(o->out, "-"))
        why = "an OTF2 archive is a directory: name it with -o DIR";
    else if (o->format == F_OTF2 && !ompf_export_otf2_available())
        why = "--format otf2: this ompfuse was built without libotf2 (install "
              "libopen-trace-format2-dev, see scripts/setup.sh, and rebuild)";
    if (why) {
        fprintf(stderr, "ompfuse export: %s\n", why);
        return 2;
    }
    return 0;
}

/* Reads every profile (a truncated one with a warning and its note). */
static int read_all(const opts_t *o, ompf_export_input_t *in, ompf_read_info_t *info)
{
    ompf_progress_t *prog = ompf_progress_create("ompfuse export: reading", o->n, "profiles",
                                                 ompf_progress_wanted(0) && o->n > 1);
    for (size_t k = 0; k < o->n; k++) {
        ompf_progress_update(prog, k);
        ompf_profile_t *p = NULL;
        ompf_error_t err = {0};
        int rc = ompf_profile_read(o->in[k], &p, &info[k], &err);
        if (rc && rc != OMPF_ETRUNC) {
            ompf_progress_destroy(prog);
            fprintf(stderr, "ompfuse export: %s\n", err.msg);
            return 2;
        }
        in[k] = (ompf_export_input_t){.profile = p, .path = o->in[k]};
        if (rc == OMPF_ETRUNC) {
            fprintf(stderr, "ompfuse export: warning: %s\n", err.msg);
            in[k].salvage_note = info[k].note;
        }
        if (o->resolve && ompf_resolve_constructs(p, &err) < 0)
            fprintf(stderr, "ompfuse export: warning: %s\n", err.msg);
    }
    ompf_progress_destroy(prog);
    return 0;
}

/* The progress line of a write: a stream in front of the output file that
 * counts what passes (the writers stream, so bytes are the only measure of
 * progress they share). */
typedef struct counted {
    FILE *to;
    uint64_t bytes;
    ompf_progress_t *prog;
} counted_t;

static ssize_t counted_write(void *c, const char *buf, size_t n)
{
    counted_t *k = c;
    size_t w = fwrite(buf, 1, n, k->to);
    k->bytes += w;
    ompf_progress_update(k->prog, k->bytes >> 20);
    return w == n ? (ssize_t)n : -1;
}

static const char *const format_names[] = {"csv", "json", "perfetto", "metadata"};

/* Writes one file atomically with the given writer. */
static int write_file(const char *path, const opts_t *o, const ompf_export_input_t *in,
                      int what, ompf_outfile_t **keep)
{
    ompf_outfile_t *of;
    FILE *fp;
    ompf_error_t err = {0};
    ompf_stale_tmp_remove(path, stderr, "ompfuse export");
    if (ompf_outfile_open(path, &of, &fp, &err)) {
        fprintf(stderr, "ompfuse export: %s\n", err.msg);
        return 2;
    }
    char label[64];
    snprintf(label, sizeof label, "ompfuse export %s",
             what >= F_CSV && what <= F_PERFETTO ? format_names[what - F_CSV] : "metadata");
    counted_t k = {fp, 0, ompf_progress_create(label, 0, "MB written", ompf_progress_wanted(0))};
    FILE *out = k.prog ? fopencookie(&k, "w", (cookie_io_functions_t){.write = counted_write})
                       : NULL;
    if (out)
        fp = out;
    int rc;
    if (what == F_CSV)
        rc = ompf_csv_export(in[0].profile, fp, &err);
    else if (what == F_JSON)
        rc = ompf_export_json(in, o->n, 0, fp, &err);
    else if (what == F_PERFETTO)
        rc = ompf_export_perfetto(in, o->n, o->counters ? OMPF_EXPORT_COUNTERS : 0, fp, &err);
    else
        rc = ompf_export_json(in, o->n, OMPF_EXPORT_NO_XUS, fp, &err);
    if (out && fclose(out) != 0 && !rc)
        rc = ompf_error_set(&err, OMPF_EIO, "write failed: %s", strerror(errno));
    ompf_progress_destroy(k.prog);
    if (rc) {
        ompf_outfile_abort(of);
        fprintf(stderr, "ompfuse export: %s: %s\n", path, err.msg);
        return 2;
    }
    if (keep) {
        *keep = of; /* committed by the caller with the other file */
        return 0;
    }
    if (ompf_outfile_commit(of, &err)) {
        fprintf(stderr, "ompfuse export: %s\n", err.msg);
        return 2;
    }
    return 0;
}

static int write_output(const opts_t *o, const ompf_export_input_t *in)
{
    ompf_error_t err = {0};
    if (o->format == F_OTF2) {
        if (ompf_export_otf2(in, o->n, o->out, &err)) {
            fprintf(stderr, "ompfuse export: %s\n", err.msg);
            return 2;
        }
        return 0;
    }
    if (o->format != F_CSV || !o->meta)
        return write_file(o->out, o, in, o->format, NULL);
    /* CSV with its metadata file: both written before either is renamed */
    ompf_outfile_t *meta = NULL;
    int rc = write_file(o->meta, o, in, -1, &meta);
    if (rc)
        return rc;
    rc = write_file(o->out, o, in, F_CSV, NULL);
    if (rc) {
        ompf_outfile_abort(meta);
        return rc;
    }
    if (ompf_outfile_commit(meta, &err)) {
        fprintf(stderr, "ompfuse export: %s\n", err.msg);
        return 2;
    }
    return 0;
}

int ompf_cmd_export(int argc, char **argv)
{
    opts_t o = {.format = F_NONE, .resolve = 1, .out = "-"};
    o.in = calloc((size_t)argc, sizeof *o.in);
    ompf_export_input_t *in = calloc((size_t)argc, sizeof *in);
    ompf_read_info_t *info = calloc((size_t)argc, sizeof *info);
    int rc = 2;
    if (!o.in || !in || !info) {
        fprintf(stderr, "ompfuse export: out of memory\n");
        goto out;
    }
    rc = parse_args(argc, argv, &o);
    if (rc == 1)
        rc = 0;
    else if (!rc && !(rc = read_all(&o, in, info)))
        rc = write_output(&o, in);
    for (size_t k = 0; k < o.n; k++)
        ompf_profile_destroy((ompf_profile_t *)in[k].profile);
out:
    free(o.in);
    free(in);
    free(info);
    return rc;
}
