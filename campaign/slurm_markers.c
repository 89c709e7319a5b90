/* Marker files of Slurm array tasks (DIR/slurm/tasks/I.start, I.done).
 * Without an accounting database, squeue only knows what is still queued;
 * these files tell "ran to completion", "killed while running" and "never
 * started" apart (docs/cluster.md). */
#include "campaign_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ompf_cmpi_marker_path(const ompf_campaign_t *c, size_t index,
                           const char *kind, char *buf, size_t len)
{
    snprintf(buf, len, "%s/slurm/tasks/%zu.%s", c->dir, index, kind);
}

int ompf_cmpi_write_file(const char *path, const char *text)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return OMPF_EIO;
    fputs(text, f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return OMPF_EIO;
    }
    return 0;
}

static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return OMPF_ENOTFOUND;
    char *ok = fgets(buf, (int)len, f);
    fclose(f);
    if (!ok)
        return OMPF_EFORMAT;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* Splits s at tabs into at most n fields; returns the count. */
static size_t split_tabs(char *s, char **field, size_t n)
{
    size_t k = 0;
    while (k < n) {
        field[k++] = s;
        char *t = strchr(s, '\t');
        if (!t)
            break;
        *t = '\0';
        s = t + 1;
    }
    return k;
}

int ompf_cmpi_read_start(const ompf_campaign_t *c, size_t index, char *node,
                         size_t len)
{
    char path[PATH_MAX + 64], line[1024];
    ompf_cmpi_marker_path(c, index, "start", path, sizeof path);
    int rc = read_line(path, line, sizeof line);
    if (rc)
        return rc;
    char *f[5];
    size_t nf = split_tabs(line, f, 5);
    snprintf(node, len, "%s", nf > 2 ? f[2] : "?");
    return 0;
}

int ompf_cmpi_read_done(const ompf_campaign_t *c, size_t index,
                        ompf_cmpi_done_t *d)
{
    char path[PATH_MAX + 64], line[1024];
    ompf_cmpi_marker_path(c, index, "done", path, sizeof path);
    int rc = read_line(path, line, sizeof line);
    if (rc)
        return rc;
    char *f[6];
    if (split_tabs(line, f, 6) < 6)
        return OMPF_EFORMAT;
    memset(d, 0, sizeof *d);
    d->status = OMPF_RUN_FAILED;
    for (int s = 0; s < OMPF_RUN_STATUS_COUNT; s++)
        if (!strcmp(f[0], ompf_run_status_name(s)))
            d->status = s;
    d->exit_code = atoi(f[1]);
    d->signal = atoi(f[2]);
    d->seconds = atof(f[3]);
    snprintf(d->node, sizeof d->node, "%s", f[4]);
    snprintf(d->note, sizeof d->note, "%s", f[5]);
    return 0;
}

void ompf_cmpi_clear_markers(const ompf_campaign_t *c, size_t index)
{
    char path[PATH_MAX + 64];
    ompf_cmpi_marker_path(c, index, "start", path, sizeof path);
    unlink(path);
    ompf_cmpi_marker_path(c, index, "done", path, sizeof path);
    unlink(path);
}

void ompf_cmpi_job_name(const ompf_campaign_t *c, char *buf, size_t len)
{
    char real[PATH_MAX];
    const char *d = realpath(c->dir, real) ? real : c->dir;
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)d; *p; p++)
        h = (h ^ *p) * 16777619u;
    snprintf(buf, len, "ompfuse-%08x", (unsigned)h);
}
