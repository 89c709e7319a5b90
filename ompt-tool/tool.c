/* libompfuse.so: OMPT entry point, configuration, threads, finalization.
 * Configuration and behaviour: docs/tool.md.  One file over 600 lines: the
 * start-up and the end of a run (configuration, threads, finalization)
 * run in a fixed order over one global state. */
#include <errno.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tool.h"

ft_global_t ft_g = {.lock = PTHREAD_MUTEX_INITIALIZER,
                    .life_lock = PTHREAD_MUTEX_INITIALIZER,
                    .pmu_slots = -1};

static const char *runtime_version;

/* ---- messages ------------------------------------------------------------ */

#define MAX_WARN_KEYS 128
static char *warn_keys[MAX_WARN_KEYS];
static int nwarn;

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

void ft_warn_once(const char *key, const char *fmt, ...)
{
    /* callers may hold ft_g.lock (constructs): use a separate lock */
    static pthread_mutex_t wl = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&wl);
    for (int i = 0; i < nwarn; i++)
        if (strcmp(warn_keys[i], key) == 0) {
            pthread_mutex_unlock(&wl);
            return;
        }
    if (nwarn < MAX_WARN_KEYS)
        warn_keys[nwarn++] = strdup(key);
    char msg[6000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "ompfuse: %s\n", msg);
    pthread_mutex_unlock(&wl);
}

void ft_verbose(const char *fmt, ...)
{
    if (!ft_g.verbose)
        return;
    char msg[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "ompfuse: %s\n", msg);
}

void ft_fail_strict(const char *fmt, ...)
{
    char msg[6000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr,
            "ompfuse: error: %s (OMPFUSE_STRICT=1: stopping the program "
            "with exit status %d)\n",
            msg, FT_EXIT_STRICT);
    if (ft_g.writer)
        unlink(ompf_writer_tmp_path(ft_g.writer));
    if (ft_g.writer2)
        unlink(ompf_writer_tmp_path(ft_g.writer2));
    _exit(FT_EXIT_STRICT);
}

/* A problem that degrades the run: a warning, or fatal under STRICT. */
void ft_degrade(const char *key, const char *msg)
{
    if (ft_g.strict)
        ft_fail_strict("%s", msg);
    ft_warn_once(key, "warning: %s", msg);
}

/* ---- threads ----------------------------------------------------------- */

ft_thread_t *ft_thread_new(int initial)
{
    size_t nev = ft_g.nev;
    ft_thread_t *t = calloc(1, sizeof *t);
    uint64_t *arr = calloc(3 * (nev ? nev : 1), sizeof(uint64_t));
    if (!t || !arr) {
        free(t);
        free(arr);
        ft_warn_once("nomem-thread", "warning: out of memory: a thread "
                                     "is not profiled");
        return NULL;
    }
    t->first = arr;
    t->last = arr + nev;
    t->gap = arr + 2 * nev;
    t->gapacc = t->gap;
    t->topo_cpu = INT32_MIN; /* no CPU looked up yet */
    t->os_tid = (int32_t)syscall(SYS_gettid);
    pthread_mutex_lock(&ft_g.lock);
    t->index = ft_g.nthreads++;
    t->id_base = (uint64_t)(t->index + 1) << 40;
    t->team_size = 1;
    t->next_all = ft_g.threads;
    ft_g.threads = t;
    pthread_mutex_unlock(&ft_g.lock);
    if (ompf_wstream_create(ft_g.writer, 0, &t->stream) != 0) {
        ft_warn_once("stream", "warning: cannot create an output stream "
                               "(out of memory): a thread is not profiled");
        t->ended = 1;
        return t;
    }
    if (ft_g.writer2 && ompf_wstream_create(ft_g.writer2, 0, &t->stream2)) {
        ft_warn_once("stream2", "warning: cannot create an output stream "
                                "(out of memory): a thread is missing from "
                                "the OMPFUSE_HEM_BOTH profile");
        t->stream2 = NULL;
    }
    ft_read_open(t, initial);
    return t;
}

/* Writes the thread record (totals as of the thread's last boundary). */
void ft_thread_finish(ft_thread_t *t, ompf_wstream_t *s, ompf_wstream_t *s2)
{
    size_t nev = ft_g.nev;
    double buf[4 * OMPF_CNT_MAX_EVENTS + 4];
    ompf_thread_t rec;
    memset(&rec, 0, sizeof rec);
    rec.index = t->index;
    rec.os_tid = t->os_tid;
    rec.total = buf;
    rec.gap = buf + nev;
    rec.enabled_ns = buf + 2 * nev;
    rec.running_ns = buf + 3 * nev;
    ft_read_check(t);
    for (size_t i = 0; i < nev && !ft_g.hem; i++) {
        int have = (t->have >> i) & 1;
        rec.total[i] = have ? (double)(t->last[i] - t->first[i]) : OMPF_MISSING;
        rec.gap[i] = have ? (double)t->gap[i] : OMPF_MISSING;
        rec.enabled_ns[i] = have ? (double)t->sample.enabled_ns : OMPF_MISSING;
        rec.running_ns[i] = have ? (double)t->sample.running_ns : OMPF_MISSING;
    }
    if (ft_g.hem)
        ft_hem_thread_record(t, ft_g.hem, &rec);
    if (s)
        ompf_wstream_thread(s, &rec);
    if (s2 && ft_g.hem) {
        ft_hem_thread_record(t, FT_HEM_CUMULATIVE + FT_HEM_DELTA - ft_g.hem,
                             &rec);
        ompf_wstream_thread(s2, &rec);
    }
    if (t->mux)
        ft_verbose("thread %u: counter group was multiplexed "
                   "(running %llu of %llu ns enabled)",
                   t->index, (unsigned long long)t->sample.running_ns,
                   (unsigned long long)t->sample.enabled_ns);
    ft_read_close(t);
}

/* ---- configuration ----------------------------------------------------- */

static void configure_events(void)
{
    const char *list = getenv("OMPFUSE_EVENTS");
    if (!list)
        list = "";
    ompf_error_t err = {0, ""};
    if (ompf_cnt_set_parse_cached(list, ft_cache_event, NULL, &ft_g.set,
                                  &err) != 0) {
        char msg[1200];
        snprintf(msg, sizeof msg, "OMPFUSE_EVENTS: %s; counting no events",
                 err.msg);
        ft_degrade("events-parse", msg);
        ompf_cnt_set_parse("", &ft_g.set, &err);
    }
    ft_g.nev = ompf_cnt_set_size(ft_g.set);
    for (size_t i = 0; i < ft_g.nev && ft_cache_on(); i++) {
        char enc[160]; /* encoded to text only when a cache keeps it */
        if (ompf_cnt_set_encoding(ft_g.set, i, enc, sizeof enc))
            ft_cache_put_event(ompf_cnt_set_name(ft_g.set, i), enc);
    }
    for (size_t i = 0; i < ft_g.nev; i++) {
        const char *why;
        if (ompf_cnt_set_status(ft_g.set, i, &why) != OMPF_CNT_OK) {
            char key[300], msg[600];
            snprintf(key, sizeof key, "ev-%s", ompf_cnt_set_name(ft_g.set, i));
            snprintf(msg, sizeof msg, "%s; its values are missing", why);
            ft_degrade(key, msg);
        }
    }
    /* a breakpoint that opens may still never fire (ompf_cnt_breakpoint_check):
     * said once, before the run's values all come out 0 */
    for (size_t i = 0; i < ft_g.nev; i++) {
        ompf_event_t ev;
        uint64_t got = 0;
        if (ompf_cnt_set_status(ft_g.set, i, NULL) != OMPF_CNT_OK ||
            ompf_cnt_set_event(ft_g.set, i, &ev) != 0 || ev.pe_type != PERF_TYPE_BREAKPOINT)
            continue;
        if (ompf_cnt_breakpoint_check(&got) == 0) {
            char msg[600];
            snprintf(msg, sizeof msg,
                     "event %s: breakpoints open on this machine but do not fire (a "
                     "self-test counted %llu of %d writes: the hypervisor does not "
                     "deliver debug-register hits); its values will be 0",
                     ompf_cnt_set_name(ft_g.set, i), (unsigned long long)got,
                     OMPF_CNT_BP_CHECK_WRITES);
            ft_degrade("bp-nofire", msg);
        }
        break; /* one check answers for every breakpoint */
    }
    /* in the HEM modes more events than slots is the point */
    if (!ft_g.hem && ft_g.pmu_slots >= 0 &&
        ft_g.nev > (size_t)ft_g.pmu_slots) {
        char msg[600];
        snprintf(msg, sizeof msg,
                 "configuration error: OMPFUSE_EVENTS names %zu events but "
                 "OMPFUSE_PMU_SLOTS=%ld; a run counts at most that many "
                 "(split them with `ompfuse plan`); counting the first %ld, "
                 "the others are missing",
                 ft_g.nev, ft_g.pmu_slots, ft_g.pmu_slots);
        ft_degrade("slots", msg);
        for (size_t i = (size_t)ft_g.pmu_slots; i < ft_g.nev; i++) {
            char why[300];
            snprintf(why, sizeof why,
                     "event %s: beyond OMPFUSE_PMU_SLOTS=%ld",
                     ompf_cnt_set_name(ft_g.set, i), ft_g.pmu_slots);
            ompf_cnt_set_fail(ft_g.set, i, OMPF_CNT_LIMIT, why);
        }
    }
    for (size_t i = 0; i < ft_g.nev; i++) {
        const char *why;
        ompf_cnt_fail_t f = ompf_cnt_set_status(ft_g.set, i, &why);
        ft_verbose("event %s: %s", ompf_cnt_set_name(ft_g.set, i),
                   f == OMPF_CNT_OK ? "encoded" : why);
    }
}

/* The other HEM estimator's mode (OMPFUSE_HEM_BOTH). */
static const char *other_mode(void)
{
    return ft_g.hem == FT_HEM_DELTA ? OMPF_MODE_HEM : OMPF_MODE_HEM_DELTA;
}

/* An integer setting from lo to hi: *out is left as it is when name is
 * unset, or, with one message (key), when it is not such a number. */
static void env_long(const char *name, long lo, long hi, const char *what,
                     const char *fallback, const char *key, long *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s=%s is not %s; %s", name, v, what, fallback);
        ft_degrade(key, msg);
        return;
    }
    *out = x;
}

static int configure(void)
{
    ft_g.verbose = env_flag("OMPFUSE_VERBOSE");
    ft_g.strict = env_flag("OMPFUSE_STRICT");
    ft_g.trace = env_flag("OMPFUSE_TRACE");
    const char *mode = getenv("OMPFUSE_MODE");
    ft_g.mode = OMPF_MODE_RUN;
    if (mode && *mode) {
        if (strcmp(mode, OMPF_MODE_RUN) == 0)
            ft_g.mode = OMPF_MODE_RUN;
        else if (strcmp(mode, OMPF_MODE_REFERENCE) == 0)
            ft_g.mode = OMPF_MODE_REFERENCE;
        else if (strcmp(mode, OMPF_MODE_HEM) == 0) {
            ft_g.mode = OMPF_MODE_HEM;
            ft_g.hem = FT_HEM_CUMULATIVE;
        } else if (strcmp(mode, OMPF_MODE_HEM_DELTA) == 0) {
            ft_g.mode = OMPF_MODE_HEM_DELTA;
            ft_g.hem = FT_HEM_DELTA;
        } else {
            char msg[400];
            snprintf(msg, sizeof msg,
                     "OMPFUSE_MODE=%s is not supported by this libompfuse.so "
                     "(supported: run, reference, hem, hem-delta); recording in "
                     "mode run",
                     mode);
            ft_degrade("mode", msg);
        }
    }
    long wait_ms = 50;
    env_long("OMPFUSE_TASKLOOP_WAIT_MS", 1, 60000, "a number of milliseconds from 1 to 60000",
             "using 50", "taskloop-wait", &wait_ms);
    ft_g.tl_wait_ns = wait_ms * 1000000L;
    const char *role = getenv("OMPFUSE_ROLE");
    ft_g.role = role && *role ? role : NULL;
    if (!ft_g.role && strcmp(ft_g.mode, OMPF_MODE_REFERENCE) == 0)
        ft_g.role = "reference";
    env_long("OMPFUSE_PMU_SLOTS", 0, LONG_MAX, "a non-negative number", "ignoring it",
             "slots-parse", &ft_g.pmu_slots);
    configure_events();
    ft_hem_configure();

    const char *out = getenv("OMPFUSE_OUTPUT");
    struct stat st;
    if (!out || !*out)
        ft_default_output(ft_g.out_path, sizeof ft_g.out_path, NULL);
    else if ((stat(out, &st) == 0 && S_ISDIR(st.st_mode)) ||
             out[strlen(out) - 1] == '/')
        ft_default_output(ft_g.out_path, sizeof ft_g.out_path, out);
    else
        snprintf(ft_g.out_path, sizeof ft_g.out_path, "%s", out);
    /* absolute: the program may change directory before the rename */
    if (ft_g.out_path[0] != '/') {
        char cwd[PATH_MAX], rel[sizeof ft_g.out_path];
        if (getcwd(cwd, sizeof cwd)) {
            snprintf(rel, sizeof rel, "%s", ft_g.out_path);
            const char *r = rel[0] == '.' && rel[1] == '/' ? rel + 2 : rel;
            int n = snprintf(ft_g.out_path, sizeof ft_g.out_path, "%s/%s",
                             cwd, r);
            if (n < 0 || (size_t)n >= sizeof ft_g.out_path)
                snprintf(ft_g.out_path, sizeof ft_g.out_path, "%s", rel);
        }
    }
    /* OMPFUSE_HEM_BOTH=1: the other estimator goes to a sibling file,
     * x.ompf -> x.<other mode>.ompf (same XUs, labels, run id) */
    if (ft_g.hem && env_flag("OMPFUSE_HEM_BOTH")) {
        size_t n = strlen(ft_g.out_path);
        int ext = n > 5 && strcmp(ft_g.out_path + n - 5, ".ompf") == 0;
        int w = snprintf(ft_g.out_path2, sizeof ft_g.out_path2, "%.*s.%s.ompf",
                         (int)(ext ? n - 5 : n), ft_g.out_path, other_mode());
        if (w < 0 || (size_t)w >= sizeof ft_g.out_path2) {
            ft_degrade("both-path", "OMPFUSE_HEM_BOTH: the output path is "
                                    "too long for the sibling profile; "
                                    "writing only the first");
            ft_g.out_path2[0] = '\0';
        }
    }
    return 0;
}

/* A copy of p's metadata and events for the sibling profile, with the
 * other estimator's mode and status reasons. */
static ompf_profile_t *sibling_of(const ompf_profile_t *p)
{
    ompf_profile_t *q = NULL;
    if (ompf_profile_create(&q) != 0)
        return NULL;
    int rc = 0;
    for (size_t i = 0; i < ompf_meta_count(p); i++) {
        const char *k, *v;
        ompf_meta_at(p, i, &k, &v);
        rc |= ompf_meta_set(q, k, strcmp(k, "mode") == 0 ? other_mode() : v);
    }
    if (ompf_meta_get(p, "mode"))
        rc |= ompf_meta_set(q, "hem_sibling", ft_g.out_path);
    for (size_t i = 0; i < ompf_event_count(p); i++) {
        ompf_event_t ev = *ompf_event_get(p, i);
        if (ev.status == OMPF_EV_ESTIMATED && ev.reason)
            ev.reason = ft_g.hem == FT_HEM_DELTA
                            ? "HEM estimate, cumulative scaling"
                            : "HEM estimate, delta scaling";
        rc |= ompf_event_add(q, &ev, NULL);
    }
    if (rc) {
        ompf_profile_destroy(q);
        return NULL;
    }
    return q;
}

static int build_header(void)
{
    if (ompf_profile_create(&ft_g.header) != 0)
        return OMPF_ENOMEM;
    if (ft_meta_fill(ft_g.header, runtime_version) != 0)
        return OMPF_ENOMEM;
    ft_hem_header(ft_g.header);
    if (ft_g.out_path2[0])
        ompf_meta_set(ft_g.header, "hem_sibling", ft_g.out_path2);
    for (size_t i = 0; i < ft_g.nev; i++) {
        ompf_event_t ev;
        ompf_cnt_set_event(ft_g.set, i, &ev);
        if (ft_g.hem && ev.status == OMPF_EV_COUNTED)
            ev.status = OMPF_EV_ESTIMATED;
        if (ompf_event_add(ft_g.header, &ev, NULL) != 0)
            return OMPF_ENOMEM;
    }
    return 0;
}

/* ---- OMPT entry points --------------------------------------------------- */

static void tool_finalize(ompt_data_t *tool_data);
/* libomp skips ompt finalize when exit() is called inside a parallel
 * region; this handler (registered after libomp's, so it runs first)
 * writes the profile in every case. */
static void finalize_at_exit(void) { tool_finalize(NULL); }
void ft_finalize_now(void) { tool_finalize(NULL); }

static int tool_initialize(ompt_function_lookup_t lookup,
                           int initial_device_num, ompt_data_t *tool_data)
{
    (void)initial_device_num;
    (void)tool_data;
    ompt_set_callback_t set_cb =
        (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set_cb) {
        ft_warn_once("noset", "warning: the OpenMP runtime offers no "
                              "ompt_set_callback; not profiling");
        return 0;
    }
    ft_g.get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
    /* the start-up's cost, step by step: OMPFUSE_VERBOSE */
    uint64_t step[9];
    int nstep = 0;
    struct rusage ru0, ru1; /* page faults: most of it on a VM */
    getrusage(RUSAGE_SELF, &ru0);
    step[nstep++] = ft_now_slow();
    ft_cache_load();
    step[nstep++] = ft_now_slow();
    ft_clock_init();
    step[nstep++] = ft_now_slow();
    ft_g.t0_ns = ft_now();
    ft_clk.rel = ft_clk.zero - ft_g.t0_ns;
    ft_g.pid = getpid();
    configure();
    step[nstep++] = ft_now_slow();
    if (ft_constructs_init((void *)lookup) != 0)
        return 0;
    step[nstep++] = ft_now_slow();
    ft_topo_init();
    (void)ft_cache_cpu_model(); /* into the cache if it was not there */
    ft_cache_save();
    step[nstep++] = ft_now_slow();
    if (build_header() != 0) {
        ft_warn_once("nomem", "warning: out of memory; not profiling");
        return 0;
    }
    step[nstep++] = ft_now_slow();
    ompf_error_t err = {0, ""};
    if (ompf_writer_create(ft_g.out_path, ft_g.header, &ft_g.writer, &err)) {
        char msg[6000];
        snprintf(msg, sizeof msg,
                 "cannot write the profile %s: %s; the program runs "
                 "without profiling (set OMPFUSE_OUTPUT to a writable file "
                 "or directory)",
                 ft_g.out_path, err.msg);
        if (ft_g.strict)
            ft_fail_strict("%s", msg);
        ft_warn_once("output", "error: %s", msg);
        return 0;
    }
    if (ft_g.out_path2[0]) {
        ompf_profile_t *h2 = sibling_of(ft_g.header);
        if (!h2 || ompf_writer_create(ft_g.out_path2, h2, &ft_g.writer2,
                                      &err) != 0) {
            char msg[6000];
            snprintf(msg, sizeof msg,
                     "OMPFUSE_HEM_BOTH: cannot write the profile %s: %s; "
                     "writing only %s", ft_g.out_path2,
                     h2 ? err.msg : "out of memory", ft_g.out_path);
            ft_degrade("output2", msg);
            ft_g.writer2 = NULL;
        }
        ompf_profile_destroy(h2);
    }
    step[nstep++] = ft_now_slow();
    /* membarrier lets callbacks skip a full fence (see ENTER) */
    ft_g.use_membarrier =
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
                0, 0) == 0;
    ft_g.acc_bytes = ft_g.nev * (ft_g.hem ? sizeof(ompf_hem_acc_t)
                                          : sizeof(uint64_t));
    ft_g.task_bytes = (sizeof(ft_task_t) + ft_g.acc_bytes + 15) & ~(size_t)15;
    ft_register_callbacks(set_cb);
    if (!ft_g.dispatch_ok)
        ft_warn_once("dispatch",
                     "warning: this OpenMP runtime (%s) sends no dispatch "
                     "events (libomp < 16): loop chunks and sections cannot "
                     "be seen and count as gap; tasks are recorded",
                     runtime_version ? runtime_version : "unknown");
    ft_g.active = 1;
    atexit(finalize_at_exit);
    ft_fatal_init();
    ft_verbose("profiling to %s (mode %s, %zu events, runtime %s)",
               ft_g.out_path, ft_g.mode, ft_g.nev,
               runtime_version ? runtime_version : "unknown");
    step[nstep++] = ft_now_slow();
    getrusage(RUSAGE_SELF, &ru1);
#define FT_MS(a, b) ((double)(step[b] - step[a]) / 1e6)
    ft_verbose("start-up took %.3f ms (cache %.3f, clock %.3f, configuration "
               "%.3f, constructs %.3f, topology %.3f, header %.3f, output "
               "%.3f, callbacks %.3f; %ld page faults)", FT_MS(0, 8), FT_MS(0, 1),
               FT_MS(1, 2), FT_MS(2, 3), FT_MS(3, 4), FT_MS(4, 5), FT_MS(5, 6),
               FT_MS(6, 7), FT_MS(7, 8),
               (ru1.ru_minflt + ru1.ru_majflt) - (ru0.ru_minflt + ru0.ru_majflt));
#undef FT_MS
    return 1;
}

static void tool_finalize(ompt_data_t *tool_data)
{
    (void)tool_data;
    if (!ft_g.active)
        return;
    /* a forked child that exits must not finish the parent's file */
    if (getpid() != ft_g.pid)
        return;
    ft_g.active = 0;
    /* stop every thread from touching its state, then wait for those
     * that are inside a callback right now */
    pthread_mutex_lock(&ft_g.life_lock);
    __atomic_store_n(&ft_g.closing, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&ft_g.life_lock);
    if (ft_g.use_membarrier)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    ft_thread_t *self = ft_self;
    pthread_mutex_lock(&ft_g.lock);
    ft_thread_t *all = ft_g.threads;
    pthread_mutex_unlock(&ft_g.lock);
    for (ft_thread_t *t = all; t; t = t->next_all) {
        if (t == self)
            continue;
        for (int spin = 0;
             __atomic_load_n(&t->in_cb, __ATOMIC_ACQUIRE) && spin < 200000;
             spin++)
            sched_yield();
    }
    ompf_wstream_t *fs = NULL, *fs2 = NULL;
    ompf_wstream_create(ft_g.writer, 0, &fs);
    if (ft_g.writer2)
        ompf_wstream_create(ft_g.writer2, 0, &fs2);
    int mux = 0;
    uint64_t recovered = 0, waited = 0;
    for (ft_thread_t *t = all; t; t = t->next_all) {
        recovered += t->tl_recovered;
        waited += t->tl_waited;
    }
    if (recovered)
        ft_verbose("%llu taskloop chunk(s) ran without a dispatch event; "
                   "their iteration ranges were read from the runtime "
                   "(%llu after waiting for the creating thread to store "
                   "them)",
                   (unsigned long long)recovered, (unsigned long long)waited);
    for (ft_thread_t *t = all; t; t = t->next_all) {
        if (t == self && !t->ended && ft_g.hem) {
            ft_hem_boundary(t);
        } else if (t == self && !t->ended && t->grp) {
            /* the finalizing thread can still read its own counters */
            if (ft_read_sample(t) == 0) {
                for (size_t i = 0; i < ft_g.nev; i++) {
                    ((uint64_t *)t->target)[i] +=
                        t->sample.value[i] - t->last[i];
                    t->last[i] = t->sample.value[i];
                }
            } else {
                ft_read_lost(t, "reading the counters failed at the end "
                                "(descriptor closed or replaced)");
            }
        }
        if (!t->ended) {
            ft_thread_finish(t, fs, fs2);
            t->ended = 1;
        }
        mux |= t->mux;
    }
    ompf_profile_t *trailer = NULL;
    char lost_buf[400]; /* ompf_event_add copies the reason */
    if (ompf_profile_create(&trailer) == 0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%u", ft_g.first_team ? ft_g.first_team : 1);
        ompf_meta_set(trailer, "team_size", buf);
        ft_hem_trailer(trailer);
        for (size_t i = 0; i < ft_g.nev; i++) {
            ompf_event_t ev;
            ompf_cnt_set_event(ft_g.set, i, &ev);
            unsigned nlost = 0;
            const char *lost = ft_read_lost_reason(i, &nlost);
            if (ev.status == OMPF_EV_COUNTED) {
                /* failed on every thread? then it is failed */
                int any = 0;
                for (ft_thread_t *t = all; t; t = t->next_all)
                    any |= (int)((t->have >> i) & 1);
                if (!any && all) {
                    ev.status = OMPF_EV_FAILED;
                    ev.reason = ft_read_fail_reason(i);
                    if (!ev.reason)
                        ev.reason = lost;
                    if (!ev.reason)
                        ev.reason = "could not be opened on any thread";
                } else if (ft_g.hem) {
                    ev.status = OMPF_EV_ESTIMATED;
                    ev.reason = ft_g.hem == FT_HEM_DELTA
                                    ? "HEM estimate, delta scaling"
                                    : "HEM estimate, cumulative scaling";
                } else if (mux) {
                    ev.status = OMPF_EV_MULTIPLEXED;
                    ev.reason = "the kernel multiplexed the counter group "
                                "(time running < time enabled)";
                }
            }
            if (lost && ev.status != OMPF_EV_FAILED) {
                /* counted elsewhere; says why some values are missing
                 * (the first thread's cause) */
                snprintf(lost_buf, sizeof lost_buf,
                         "values missing on %u thread(s): %s", nlost, lost);
                ev.reason = lost_buf;
            }
            ompf_event_add(trailer, &ev, NULL);
        }
    }
    if (mux)
        ft_warn_once("mux",
                     "%s: the counter group was multiplexed by the kernel "
                     "(time running < time enabled): the events do not fit "
                     "on the PMU at once; counts are incomplete and marked "
                     "multiplexed in the profile",
                     strcmp(ft_g.mode, OMPF_MODE_RUN) == 0 ? "error"
                                                           : "warning");
    ompf_error_t err = {0, ""};
    if (ompf_writer_finish(ft_g.writer, trailer, &err) != 0)
        ft_warn_once("finish", "error: writing the profile %s failed: %s",
                     ft_g.out_path, err.msg);
    else
        ft_verbose("wrote %s (%u threads)", ft_g.out_path, ft_g.nthreads);
    ft_g.writer = NULL;
    if (ft_g.writer2) {
        ompf_profile_t *t2 = trailer ? sibling_of(trailer) : NULL;
        if (ompf_writer_finish(ft_g.writer2, t2, &err) != 0)
            ft_warn_once("finish2", "error: writing the profile %s failed: "
                                    "%s", ft_g.out_path2, err.msg);
        else
            ft_verbose("wrote %s", ft_g.out_path2);
        ft_g.writer2 = NULL;
        ompf_profile_destroy(t2);
    }
    ompf_profile_destroy(trailer);
}

__attribute__((visibility("default")))
ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                          const char *rt_version)
{
    (void)omp_version;
    static ompt_start_tool_result_t result = {tool_initialize, tool_finalize,
                                              {.value = 0}};
    runtime_version = rt_version;
    return &result;
}
