/*
 * DIR/campaign.txt: the settings of the campaign that made DIR.  Running
 * `ompfuse campaign` again with the same settings resumes it (the runs
 * made are kept); with other settings (another program, other arguments,
 * events, repeats, ...) its runs would be kept as runs of the new
 * campaign, and its report replaced by one without them, so that is
 * refused before anything is written, once the directory holds a run.  --jobs and --timeout change how
 * the runs are made, not what they are: they may differ.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "ompfuse/file.h"

#define SETTINGS_FILE "campaign.txt"

/* One "key value" line; bytes below 0x20, '%' and DEL as %XX, so that any
 * argument fits on one line. */
static void put(char **buf, size_t *len, size_t *cap, const char *key, const char *val)
{
    size_t need = *len + strlen(key) + 3 * strlen(val) + 3;
    if (need > *cap) {
        size_t nc = need * 2;
        char *nb = realloc(*buf, nc);
        if (!nb)
            return;
        *buf = nb;
        *cap = nc;
    }
    char *o = *buf + *len;
    o += sprintf(o, "%s ", key);
    for (const unsigned char *p = (const unsigned char *)val; *p; p++)
        o += *p < 0x20 || *p == '%' || *p == 0x7f ? sprintf(o, "%%%02X", *p)
                                                   : sprintf(o, "%c", *p);
    *o++ = '\n';
    *o = '\0';
    *len = (size_t)(o - *buf);
}

/* The settings as text (malloc'd); NULL when out of memory. */
static char *describe(const settings_t *s, const char *events, const char *benches,
                      char *const *custom)
{
    char *buf = NULL, num[64];
    size_t len = 0, cap = 0;
    put(&buf, &len, &cap, "#", "the campaign that made this directory (ompfuse campaign); "
                               "another one is refused here, this one resumes");
    put(&buf, &len, &cap, "events", events);
    snprintf(num, sizeof num, "%u", s->slots);
    put(&buf, &len, &cap, "slots", num);
    snprintf(num, sizeof num, "%u", s->repeats);
    put(&buf, &len, &cap, "repeats", num);
    snprintf(num, sizeof num, "%u", s->threads);
    put(&buf, &len, &cap, "threads", num);
    if (custom) {
        char found[PATH_MAX], abs[PATH_MAX], cwd[PATH_MAX], codes[1024];
        if (ompf_find_program(custom[0], found, sizeof found))
            snprintf(found, sizeof found, "%s", custom[0]);
        ompf_exit_set_format(&s->exit_ok, codes, sizeof codes);
        put(&buf, &len, &cap, "exit-code", codes);
        /* relative arguments (input files) are relative to it */
        put(&buf, &len, &cap, "directory", getcwd(cwd, sizeof cwd) ? cwd : "?");
        /* last: an argument more or less is a line only one side has */
        put(&buf, &len, &cap, "program", realpath(found, abs) ? abs : found);
        for (size_t i = 1; custom[i]; i++)
            put(&buf, &len, &cap, "arg", custom[i]);
    } else {
        put(&buf, &len, &cap, "benchmarks", benches);
    }
    return buf && len ? buf : (free(buf), NULL);
}

/* The first line that differs, as "KEY: 'A' there, 'B' here". */
static void first_difference(const char *was, const char *is, char *out, size_t n)
{
    for (;;) {
        const char *ew = strchr(was, '\n'), *ei = strchr(is, '\n');
        size_t lw = ew ? (size_t)(ew - was) : strlen(was);
        size_t li = ei ? (size_t)(ei - is) : strlen(is);
        if (lw != li || memcmp(was, is, lw)) {
            if (!lw || !li) { /* a line only one side has */
                snprintf(out, n, "'%.*s' only %s", (int)(lw ? lw : li), lw ? was : is,
                         lw ? "there" : "here");
                return;
            }
            snprintf(out, n, "'%.*s' there, '%.*s' here", (int)(lw > 300 ? 300 : lw), was,
                     (int)(li > 300 ? 300 : li), is);
            return;
        }
        if (!ew || !ei) {
            snprintf(out, n, "?");
            return;
        }
        was = ew + 1;
        is = ei + 1;
    }
}

/* Whether OUT holds a profile a campaign made (a .ompf in OUT/<benchmark>):
 * only then would a campaign with other settings take runs that are not
 * its own.  A campaign that stopped before its first run (a program that
 * failed its plain run, a mistyped argument) may be run again corrected. */
static int holds_runs(const char *out)
{
    char pat[PATH_MAX + 16];
    snprintf(pat, sizeof pat, "%s/*/*.ompf", out);
    glob_t g;
    int any = glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0;
    globfree(&g);
    return any;
}

int ompf_cmpc_check_settings(const char *out, const settings_t *s, const char *events,
                             const char *benches, char *const *custom, ompf_error_t *err)
{
    char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/" SETTINGS_FILE, out);
    char *now = describe(s, events, benches, custom);
    if (!now)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    char *was = NULL;
    size_t n = 0;
    int rc = ompf_read_file(path, (size_t)1 << 24, &was, &n);
    if (rc == 0) {
        int same = n == strlen(now) && !memcmp(was, now, n);
        if (!same && holds_runs(out)) {
            char diff[700];
            first_difference(was, now, diff, sizeof diff);
            rc = ompf_error_set(err, OMPF_EMISMATCH,
                                "%s holds a campaign with other settings (%s; all of them in "
                                "%s): its runs would be kept as runs of this one and its "
                                "report replaced.  Choose another --out, remove %s, or give "
                                "that campaign's settings to resume it",
                                out, diff, path, out);
        }
        free(was);
        was = NULL;
        if (rc || same) {
            free(now);
            return rc;
        }
        rc = OMPF_ENOTFOUND; /* other settings and no run made: replaced */
    }
    free(was);
    if (rc == OMPF_ENOMEM) {
        free(now);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    if (rc != OMPF_ENOTFOUND && access(path, F_OK) == 0) { /* unreadable or huge */
        free(now);
        return ompf_error_set(err, OMPF_EIO, "cannot read %s (unreadable, or over 16 MiB); "
                              "remove it if %s holds nothing you need", path, out);
    }
    /* a new directory, one made before campaign.txt existed, or one whose
     * campaign made no run */
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    int bad = !f;
    if (f) {
        bad = fputs(now, f) == EOF;
        bad |= fclose(f) != 0;
    }
    rc = 0;
    if (bad || rename(tmp, path) != 0) {
        rc = ompf_error_set(err, OMPF_EIO, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(now);
    return rc;
}
