/* Progress of a campaign: [done/total], elapsed, ETA; \r updates on a
 * terminal, plain lines otherwise. */
#include "campaign_int.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void fmt_time(double s, char *buf, size_t len)
{
    if (s < 0 || s != s) {
        snprintf(buf, len, "?");
        return;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

void ompf_cmpi_progress_init(const ompf_campaign_t *c,
                             ompf_cmpi_progress_t *pg, size_t total,
                             size_t done, unsigned parallel)
{
    memset(pg, 0, sizeof *pg);
    pg->tty = c->o.progress == 1 ||
              (c->o.progress == -1 && isatty(fileno(c->o.log)));
    pg->total = total;
    pg->done = done;
    pg->t0 = ompf_cmpi_now();
    pg->parallel = parallel ? parallel : 1;
}

void ompf_cmpi_progress_end(const ompf_campaign_t *c,
                            ompf_cmpi_progress_t *pg)
{
    if (pg->line_open)
        fprintf(c->o.log, "\n");
    pg->line_open = 0;
}

static void progress_eta(const ompf_cmpi_progress_t *pg, char *buf,
                         size_t len)
{
    if (!pg->finished_here) {
        snprintf(buf, len, "?");
        return;
    }
    double mean = pg->busy / (double)pg->finished_here;
    double left = (double)(pg->total - pg->done) * mean / (double)pg->parallel;
    fmt_time(left, buf, len);
}

/* running: what is going on now ("lgl-1-r1", "2 running, 5 queued") */
void ompf_cmpi_progress_tick(const ompf_campaign_t *c,
                             ompf_cmpi_progress_t *pg, const char *running)
{
    if (!pg->tty || c->o.progress == -2)
        return;
    char el[32], eta[32];
    fmt_time(ompf_cmpi_now() - pg->t0, el, sizeof el);
    progress_eta(pg, eta, sizeof eta);
    fprintf(c->o.log, "\r[%zu/%zu] elapsed %s  ETA %s  %-30.30s",
            pg->done, pg->total, el, eta, running ? running : "");
    fflush(c->o.log);
    pg->line_open = 1;
}

/* One line per finished run (on a terminal: failures only); the node is
 * named when the run did not execute here. */
void ompf_cmpi_progress_line(const ompf_campaign_t *c,
                             ompf_cmpi_progress_t *pg,
                             const ompf_campaign_run_t *r)
{
    if (c->o.progress == -2)
        return;
    if (pg->tty && r->status == OMPF_RUN_OK) {
        /* on a terminal only failures get a line of their own */
        ompf_cmpi_progress_tick(c, pg, NULL);
        return;
    }
    char el[32], eta[32];
    fmt_time(ompf_cmpi_now() - pg->t0, el, sizeof el);
    progress_eta(pg, eta, sizeof eta);
    if (pg->line_open)
        fprintf(c->o.log, "\r%-78s\r", "");
    pg->line_open = 0;
    fprintf(c->o.log, "[%zu/%zu] %-22s %-7s %6.2fs%s%s  (elapsed %s, ETA %s)\n",
            pg->done, pg->total, r->name, ompf_run_status_name(r->status),
            r->seconds, r->node[0] ? "  on " : "", r->node, el, eta);
    if (r->status != OMPF_RUN_OK && r->note[0])
        fprintf(c->o.log, "    %s\n", r->note);
    fflush(c->o.log);
}
