/* ompfuse clean: CounterMiner-style repair of a multiplexed (HEM) profile
 * (libompfhem, docs/hem.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opts.h"
#include "ompfuse/file.h"
#include "ompfuse/hem.h"

static void clean_usage(FILE *f)
{
    fprintf(f,
            "usage: ompfuse clean [--k N] [--sigma S] [--keep-negative] -o OUT IN\n"
            "\n"
            "Repairs a multiplexed profile (mode hem or hem-delta) as CounterMiner\n"
            "does: per XU type and event, values above mean + S standard deviations\n"
            "and negative counts are replaced, and every missing value becomes the\n"
            "mean of that event over the N nearest XUs of the same type (distance\n"
            "over the events both have, each scaled by its standard deviation).\n"
            "Writes OUT with metadata cleaned=1, clean_k, clean_sigma, and prints\n"
            "per event how many values were filled and replaced.\n"
            "\n"
            "  --k N            neighbours averaged (default 5)\n"
            "  --sigma S        outlier threshold in standard deviations (default 5)\n"
            "  --keep-negative  keep negative values (cumulative hem estimates can\n"
            "                   be negative; by default they are replaced)\n"
            "  -o, --output OUT output profile (required)\n"
            "  -q, --quiet      print nothing on success\n"
            "  -h, --help       this text\n" OMPF_CLI_EXIT_HELP);
}

static int parse_uint(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v > 1000)
        return -1;
    *out = (unsigned)v;
    return 0;
}

int ompf_cmd_clean(int argc, char **argv)
{
    ompf_clean_opts_t o;
    ompf_clean_opts_default(&o);
    const char *out = NULL, *in = NULL;
    int quiet = 0;
    static const struct option lo[] = {
        {"k", required_argument, 0, 'k'},
        {"sigma", required_argument, 0, 's'},
        {"keep-negative", no_argument, 0, 'n'},
        {"output", required_argument, 0, 'o'},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    ompf_cli_opts_t po;
    ompf_cli_opts_start(&po, "clean", argc, argv, "hk:o:q", lo);
    int ch;
    while ((ch = ompf_cli_opts_next(&po)) != -1) {
        switch (ch) {
        case 'h':
            clean_usage(stdout);
            return 0;
        case 'k':
            if (parse_uint(optarg, &o.k) || o.k == 0) {
                fprintf(stderr, "ompfuse clean: --k needs a whole number from 1 to 1000\n");
                return 2;
            }
            break;
        case 's': {
            char *end;
            o.sigma = strtod(optarg, &end);
            if (end == optarg || *end || !(o.sigma > 0.0)) {
                fprintf(stderr, "ompfuse clean: --sigma needs a number > 0 (got '%s')\n",
                        optarg);
                return 2;
            }
            break;
        }
        case 'n': o.keep_negative = 1; break;
        case 'o': out = optarg; break;
        case 'q': quiet = 1; break;
        default: return 2;
        }
    }
    for (int i = optind; i < argc; i++) {
        if (in) {
            fprintf(stderr, "ompfuse clean: one input profile only ('%s' and '%s')\n", in,
                    argv[i]);
            return 2;
        }
        in = argv[i];
    }
    if (!in || !out) {
        fprintf(stderr, "ompfuse clean: need an input profile and -o OUT; see 'ompfuse clean --help'\n");
        return 2;
    }
    ompf_profile_t *p = NULL;
    ompf_read_info_t info;
    ompf_error_t err = {0, ""};
    int rc = ompf_profile_read(in, &p, &info, &err);
    if (rc == OMPF_ETRUNC) {
        fprintf(stderr, "ompfuse clean: warning: %s is truncated (%s); cleaning what was salvaged\n",
                in, info.note);
    } else if (rc) {
        fprintf(stderr, "ompfuse clean: %s\n", err.msg);
        return 2;
    }
    const char *mode = ompf_meta_get(p, "mode");
    if (!quiet && mode && strcmp(mode, OMPF_MODE_HEM) && strcmp(mode, OMPF_MODE_HEM_DELTA))
        fprintf(stderr, "ompfuse clean: note: %s has mode '%s', not hem or hem-delta; cleaning anyway\n",
                in, mode);
    size_t ne = ompf_event_count(p);
    ompf_clean_count_t *cnt = calloc(ne ? ne : 1, sizeof *cnt);
    if (!cnt) {
        fprintf(stderr, "ompfuse clean: out of memory\n");
        ompf_profile_destroy(p);
        return 2;
    }
    rc = ompf_hem_clean(p, &o, cnt, &err);
    if (rc) {
        fprintf(stderr, "ompfuse clean: %s: %s\n", in, err.msg);
        free(cnt);
        ompf_profile_destroy(p);
        return 2;
    }
    ompf_stale_tmp_remove(out, stderr, "ompfuse clean");
    rc = ompf_profile_write(p, out, &err);
    if (rc) {
        fprintf(stderr, "ompfuse clean: %s\n", err.msg);
        free(cnt);
        ompf_profile_destroy(p);
        return 2;
    }
    if (!quiet) {
        printf("cleaned %zu XUs of %s (k=%u, sigma=%g%s) -> %s\n", ompf_xu_count(p), in, o.k,
               o.sigma, o.keep_negative ? ", negatives kept" : "", out);
        printf("%-28s %10s %10s %10s %10s %10s\n", "event", "filled", "outliers", "negative",
               "by-median", "unfilled");
        for (size_t e = 0; e < ne; e++)
            printf("%-28s %10llu %10llu %10llu %10llu %10llu\n", ompf_event_get(p, (uint32_t)e)->name,
                   (unsigned long long)cnt[e].missing, (unsigned long long)cnt[e].outliers,
                   (unsigned long long)cnt[e].negative, (unsigned long long)cnt[e].fallback,
                   (unsigned long long)cnt[e].unfilled);
    }
    free(cnt);
    ompf_profile_destroy(p);
    return 0;
}
