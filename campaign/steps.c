/* ompfuse campaign: the steps after the runs of a benchmark (combine with
 * every strategy, clean the HEM profiles, evaluate), each this binary's
 * subcommand run as a child whose messages arrive through pipes. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "ompfuse/file.h"

/* Removes path when it is an empty file (a log or output nothing was
 * written to: an empty file says nothing, or lies about a result). */
static void drop_if_empty(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0)
        unlink(path);
}

/* The last non-empty line seen in a stream, across reads. */
typedef struct tail {
    char line[1024];
    size_t len;
} tail_t;

static void tail_feed(tail_t *t, const char *buf, size_t n, char *why, size_t whylen)
{
    for (size_t i = 0; i <= n; i++) {
        if (i == n || buf[i] == '\n' || buf[i] == '\r') {
            if (t->len && (i < n || !n)) {
                size_t l = t->len < whylen ? t->len : whylen - 1; /* cut to fit */
                memcpy(why, t->line, l);
                why[l] = '\0';
                t->len = 0;
            }
        } else if (t->len < sizeof t->line - 1) {
            t->line[t->len++] = buf[i];
        }
    }
}

int ompf_cmpc_run_self(char *const *args, const char *log_path, char *why, size_t whylen,
                       char **out)
{
    char *argv[MAX_ARGS + 600];
    size_t n = 0;
    argv[n++] = "ompfuse";
    for (size_t i = 0; args[i] && n < sizeof argv / sizeof *argv - 1; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    why[0] = '\0';
    if (out)
        *out = NULL;
    int ep[2], op[2] = {-1, -1};
    if (pipe2(ep, O_CLOEXEC) != 0 || (out && pipe2(op, O_CLOEXEC) != 0)) {
        snprintf(why, whylen, "cannot create a pipe: %s", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(125);
        dup2(out ? op[1] : ep[1], 1);
        dup2(ep[1], 2);
        execv("/proc/self/exe", argv);
        dprintf(2, "ompfuse campaign: cannot execute /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    close(ep[1]);
    if (out)
        close(op[1]);
    if (pid < 0) {
        snprintf(why, whylen, "cannot fork: %s", strerror(errno));
        close(ep[0]);
        if (out)
            close(op[0]);
        return -1;
    }
    FILE *log = NULL;
    tail_t t = {.len = 0};
    char *text = NULL;
    size_t tlen = 0, tcap = 0;
    int oom = 0;
    struct pollfd pf[2] = {{ep[0], POLLIN, 0}, {out ? op[0] : -1, POLLIN, 0}};
    while (pf[0].fd >= 0 || pf[1].fd >= 0) {
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int k = 0; k < 2; k++) {
            if (pf[k].fd < 0 || !pf[k].revents)
                continue;
            char buf[4096];
            ssize_t got = read(pf[k].fd, buf, sizeof buf);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0) {
                close(pf[k].fd);
                pf[k].fd = -1;
                continue;
            }
            if (k == 0) {
                if (!log)
                    log = fopen(log_path, "w");
                if (log)
                    fwrite(buf, 1, (size_t)got, log);
                tail_feed(&t, buf, (size_t)got, why, whylen);
            } else if (!oom) {
                if (tlen + (size_t)got + 1 > tcap) {
                    size_t nc = 2 * (tlen + (size_t)got + 1);
                    char *nt = realloc(text, nc);
                    if (!nt) {
                        oom = 1;
                        continue;
                    }
                    text = nt;
                    tcap = nc;
                }
                memcpy(text + tlen, buf, (size_t)got);
                tlen += (size_t)got;
            }
        }
    }
    tail_feed(&t, "", 0, why, whylen);
    if (log)
        fclose(log); /* a log that could not be written is dropped below */
    drop_if_empty(log_path);
    if (out) {
        if (!text && !oom)
            text = calloc(1, 1);
        if (text)
            text[tlen] = '\0';
        *out = text;
    }
    int st;
    pid_t w;
    while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    if (w != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A step's inputs are the campaign's own files, so even its "bad input"
 * (exit 2) is the campaign's failure. */
int ompf_cmpc_step_io_error(int x, const char *why)
{
    static const int io[] = {ENOSPC, EDQUOT, EIO, EROFS, EFBIG};
    if (x == 2)
        return 1;
    for (size_t i = 0; i < sizeof io / sizeof *io; i++)
        if (strstr(why, strerror(io[i])))
            return 1;
    return 0;
}

/* path holds text, written atomically; 0 or err names path and reason. */
static int write_text(const char *path, const char *text, ompf_error_t *err)
{
    ompf_outfile_t *o;
    FILE *f;
    int rc = ompf_outfile_open(path, &o, &f, err);
    if (rc)
        return rc;
    fputs(text, f);
    return ompf_outfile_commit(o, err);
}

int ompf_cmpc_file_nonempty(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && sb.st_size > 0;
}

size_t ompf_cmpc_runs_of(const ompf_campaign_t *c, int role, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < ompf_campaign_run_count(c) && n < max; i++) {
        const ompf_campaign_run_t *r = ompf_campaign_run_get(c, i);
        if (r->role == role && r->status == OMPF_RUN_OK)
            out[n++] = r->profile;
    }
    return n;
}

void ompf_cmpc_fuse_and_evaluate(result_t *res, const ompf_campaign_t *c,
                                 const ompf_plan_t *full, const char *name)
{
    /* combine */
    const char *refs[256];
    size_t nref;
    const char *lgl[64], *bc[64], *hem[2] = {NULL, NULL};
    size_t nl = ompf_cmpc_runs_of(c, OMPF_ROLE_LGL, lgl, 64);
    size_t nb = ompf_cmpc_runs_of(c, OMPF_ROLE_BC, bc, 64);
    ompf_cmpc_runs_of(c, OMPF_ROLE_HEM, &hem[0], 1);
    ompf_cmpc_runs_of(c, OMPF_ROLE_HEM_DELTA, &hem[1], 1);
    nref = ompf_cmpc_runs_of(c, OMPF_ROLE_REFERENCE, refs, 256);
    size_t want_l = ompf_plan_total_runs(full, OMPF_ROLE_LGL);
    size_t want_b = ompf_plan_total_runs(full, OMPF_ROLE_BC);
    char logdir[PATH_MAX + 16];
    snprintf(logdir, sizeof logdir, "%s/logs", res->dir);
    if (mkdir(logdir, 0777) != 0 && errno != EEXIST)
        fprintf(stderr, "%s: %s: cannot create %s: %s (the steps' logs are lost)\n", PROG,
                name, logdir, strerror(errno));
    for (int t = T_CTC; t <= T_RANDOM; t++) {
        int is_bc = t == T_BC || t == T_BCU;
        size_t n = is_bc ? nb : nl;
        size_t want = is_bc ? want_b : want_l;
        if (n < want || n < 2) {
            snprintf(res->problem[t], sizeof res->problem[t],
                     "%zu of %zu %s runs succeeded: not combined", n, want,
                     is_bc ? "bc" : "lgl");
            continue;
        }
        snprintf(res->target_path[t], sizeof res->target_path[t], "%.3900s/fused-%s.ompf",
                 res->dir, tname[t]);
        char *args[MAX_ARGS + 8];
        size_t k = 0;
        args[k++] = "combine";
        args[k++] = "--strategy";
        args[k++] = (char *)tname[t];
        args[k++] = "-q";
        args[k++] = "-o";
        args[k++] = res->target_path[t];
        for (size_t i = 0; i < n && k < MAX_ARGS; i++)
            args[k++] = (char *)(is_bc ? bc[i] : lgl[i]);
        args[k] = NULL;
        char log[PATH_MAX + 64];
        snprintf(log, sizeof log, "%s/combine-%s.log", logdir, tname[t]);
        double ts = ompf_cmpi_now();
        char why[400];
        int x = ompf_cmpc_run_self(args, log, why, sizeof why, NULL);
        if (x == 0 && ompf_cmpc_file_nonempty(res->target_path[t])) {
            res->target_ok[t] = 1;
            fprintf(stderr, "  combine %-13s ok (%.1f s)\n", tname[t], ompf_cmpi_now() - ts);
        } else {
            res->step_failed = 1;
            res->io_error |= ompf_cmpc_step_io_error(x, why);
            snprintf(res->problem[t], sizeof res->problem[t], "combine failed: %.120s", why);
            fprintf(stderr, "  combine %-13s FAILED: %s (log %s)\n", tname[t], why, log);
        }
    }
    /* HEM profiles as recorded, and cleaned */
    for (int h = 0; h < 2; h++) {
        int t = h ? T_HEMD : T_HEM, tc = h ? T_HEMDC : T_HEMC;
        if (!hem[h]) {
            snprintf(res->problem[t], sizeof res->problem[t], "the %s run failed",
                     tname[t]);
            snprintf(res->problem[tc], sizeof res->problem[tc], "the %s run failed",
                     tname[t]);
            continue;
        }
        snprintf(res->target_path[t], sizeof res->target_path[t], "%s", hem[h]);
        res->target_ok[t] = 1;
        snprintf(res->target_path[tc], sizeof res->target_path[tc], "%.3900s/%s.ompf",
                 res->dir, tname[tc]);
        char *args[] = {"clean", "-q", "-o", res->target_path[tc], (char *)hem[h], NULL};
        char log[PATH_MAX + 64];
        snprintf(log, sizeof log, "%s/clean-%s.log", logdir, tname[t]);
        char why[400];
        int x = ompf_cmpc_run_self(args, log, why, sizeof why, NULL);
        if (x == 0 && ompf_cmpc_file_nonempty(res->target_path[tc])) {
            res->target_ok[tc] = 1;
            fprintf(stderr, "  clean   %-13s ok\n", tname[t]);
        } else {
            res->step_failed = 1;
            res->io_error |= ompf_cmpc_step_io_error(x, why);
            snprintf(res->problem[tc], sizeof res->problem[tc], "clean failed: %.120s", why);
            fprintf(stderr, "  clean   %-13s FAILED: %s (log %s)\n", tname[t], why, log);
        }
    }
    /* evaluate every target against the references */
    for (size_t i = 0; i < nref && i < 256; i++)
        res->refs[res->nrefs++] = strdup(refs[i]);
    if (nref < 2) {
        for (int t = 0; t < N_T; t++)
            if (res->target_ok[t])
                snprintf(res->problem[t], sizeof res->problem[t],
                         "not evaluated: %zu reference runs succeeded", nref);
    } else {
        char *args[MAX_ARGS + 300];
        char named[N_T][PATH_MAX + 32];
        size_t k = 0;
        args[k++] = "evaluate";
        args[k++] = "-q";
        args[k++] = "--allow-partial";
        args[k++] = "-r";
        for (size_t i = 0; i < nref; i++)
            args[k++] = (char *)refs[i];
        args[k++] = "--";
        size_t ntargets = 0;
        for (int t = 0; t < N_T; t++)
            if (res->target_ok[t]) {
                snprintf(named[t], sizeof named[t], "%s=%s", tname[t], res->target_path[t]);
                args[k++] = named[t];
                ntargets++;
            }
        args[k] = NULL;
        char outp[PATH_MAX + 64], errp[PATH_MAX + 64];
        snprintf(outp, sizeof outp, "%s/evaluate.txt", res->dir);
        snprintf(errp, sizeof errp, "%s/evaluate.log", logdir);
        if (ntargets) {
            double ts = ompf_cmpi_now();
            char why[400], *text = NULL;
            int x = ompf_cmpc_run_self(args, errp, why, sizeof why, &text);
            /* evaluate's own table, kept next to the runs */
            ompf_error_t err;
            memset(&err, 0, sizeof err);
            if (text && *text && write_text(outp, text, &err) != 0) {
                fprintf(stderr, "%s: %s: %s\n", PROG, name, err.msg);
                res->io_error = 1;
            }
            /* rows: "<target> <EPD> ..." after the header */
            char *save = NULL;
            for (char *line = text ? strtok_r(text, "\n", &save) : NULL; line;
                 line = strtok_r(NULL, "\n", &save)) {
                char nm[128], val[64], pairs[64];
                unsigned long long lo = 0;
                unsigned fl = 0;
                int got = sscanf(line, "%127s %63s %63s %llu %u", nm, val, pairs, &lo, &fl);
                if (got < 2)
                    continue;
                for (int t = 0; t < N_T; t++)
                    if (res->target_ok[t] && !strcmp(nm, tname[t])) {
                        char *end;
                        double v = strtod(val, &end);
                        if (end != val && !*end) {
                            res->epd[t] = v;
                            res->problem[t][0] = '\0';
                            if (got == 5) {
                                res->left_out[t] = lo;
                                if (fl > res->floor_pairs)
                                    res->floor_pairs = fl;
                            }
                        }
                    }
            }
            free(text);
            for (int t = 0; t < N_T; t++)
                if (res->target_ok[t] && isnan(res->epd[t])) {
                    snprintf(res->problem[t], sizeof res->problem[t],
                             "evaluation failed: %.120s", why[0] ? why : "no EPD");
                    res->step_failed = 1;
                }
            if (x == 0)
                fprintf(stderr, "  evaluate %zu targets: ok (%.1f s)\n", ntargets, ompf_cmpi_now() - ts);
            else
                fprintf(stderr, "  evaluate %zu targets: FAILED: %s (%.1f s)\n", ntargets,
                        why[0] ? why : "no message", ompf_cmpi_now() - ts);
            if (x != 0) {
                res->step_failed = 1;
                res->io_error |= ompf_cmpc_step_io_error(x, why);
            }
        }
    }
    rmdir(logdir); /* when no step left a log */
}
