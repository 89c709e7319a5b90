/* The streaming writer from several threads at once, with labels whose
 * parents are written by other streams, and a writer that "crashes". */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

#include <cmocka.h>

#include "fmt.h"
#include "gen.h"
#include "ompfuse/file.h"
#include "wstream.h"

#define NTHREADS 8
#define PER_THREAD 5000
#define M 1000000ULL /* id space per thread */

typedef struct targ {
    ompf_writer_t *w;
    uint32_t t;
    pthread_barrier_t *bar;
    int rc;
} targ_t;

static uint64_t label_id(uint32_t t, uint32_t k) { return t * M + k + 1; }

static void *producer(void *arg)
{
    targ_t *a = arg;
    ompf_wstream_t *s;
    a->rc = ompf_wstream_create(a->w, 4096, &s); /* small: many flushes */
    pthread_barrier_wait(a->bar);
    if (a->rc)
        return NULL;
    ompf_construct_t shared = {.module = "/bin/app", .build_id = "ff", .offset = 0x77,
                               .kind = OMPF_CK_TASK};
    char file[32];
    snprintf(file, sizeof file, "t%u.c", a->t);
    ompf_construct_t own = {.module = "/bin/app", .build_id = "ff", .offset = 0x100 + a->t,
                            .kind = OMPF_CK_LOOP, .file = file, .line = 5, .function = "f"};
    a->rc |= ompf_wstream_construct(s, 7, &shared);
    a->rc |= ompf_wstream_construct(s, 100 + a->t, &own);
    for (uint32_t k = 0; k < PER_THREAD && !a->rc; k++) {
        /* Thread t's label k hangs below thread t-1's label k: a parent
         * written by another stream, possibly later in the file. */
        uint64_t parent = a->t == 0 ? 0 : label_id(a->t - 1, k);
        uint64_t comp = a->t == 0 ? k : a->t;
        a->rc |= ompf_wstream_label(s, label_id(a->t, k), parent, comp);
        ompf_xu_t x = {.id = label_id(a->t, k), .thread = a->t, .team_thread = a->t,
                       .team_size = NTHREADS, .parts = 1, .cpu = (int32_t)a->t, .core = -1,
                       .numa = -1, .kind = OMPF_XU_TASK, .start_ns = 10ULL * k,
                       .end_ns = 10ULL * k + 5};
        double v[2] = {(double)k, k % 3 ? a->t * 1.5 : OMPF_MISSING};
        a->rc |= ompf_wstream_xu(s, &x, k % 2 ? 7 : 100 + a->t, label_id(a->t, k), v);
    }
    ompf_thread_t th = {.index = a->t, .os_tid = 500 + (int32_t)a->t};
    double tot[2] = {1e6 + a->t, 2}, gap[2] = {a->t, 0}, en[2] = {1, 1}, run[2] = {1, 1};
    th.total = tot;
    th.gap = gap;
    th.enabled_ns = en;
    th.running_ns = run;
    a->rc |= ompf_wstream_thread(s, &th);
    return NULL;
}

static ompf_profile_t *header(void)
{
    ompf_profile_t *h;
    assert_int_equal(ompf_profile_create(&h), 0);
    assert_int_equal(ompf_meta_set(h, "program", "app"), 0);
    ompf_event_t e0 = {.name = "perf::TASK-CLOCK", .source = -1};
    ompf_event_t e1 = {.name = "perf::PAGE-FAULTS", .source = -1};
    assert_int_equal(ompf_event_add(h, &e0, NULL), 0);
    assert_int_equal(ompf_event_add(h, &e1, NULL), 0);
    return h;
}

static void test_concurrent_streams(void **state)
{
    (void)state;
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/s.ompf", dir);
    ompf_profile_t *h = header();
    ompf_error_t err = {0};
    ompf_writer_t *w;
    assert_int_equal(ompf_writer_create(path, h, &w, &err), 0);
    assert_non_null(strstr(ompf_writer_tmp_path(w), ".tmp."));
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, NTHREADS);
    pthread_t tid[NTHREADS];
    targ_t args[NTHREADS];
    for (uint32_t t = 0; t < NTHREADS; t++) {
        args[t] = (targ_t){.w = w, .t = t, .bar = &bar};
        assert_int_equal(pthread_create(&tid[t], NULL, producer, &args[t]), 0);
    }
    for (uint32_t t = 0; t < NTHREADS; t++) {
        pthread_join(tid[t], NULL);
        assert_int_equal(args[t].rc, 0);
    }
    pthread_barrier_destroy(&bar);
    /* The trailer updates what was learnt during the run. */
    assert_int_equal(ompf_event_set_status(h, 1, OMPF_EV_MULTIPLEXED, "time_running < "
                                           "time_enabled"), 0);
    assert_int_equal(ompf_meta_set(h, "program", "app2"), 0);
    assert_int_equal(ompf_meta_set(h, "end", "yes"), 0);
    assert_int_equal(ompf_writer_finish(w, h, &err), 0);
    assert_int_not_equal(access(path, F_OK), -1);

    ompf_profile_t *p;
    ompf_read_info_t info;
    int rc = ompf_profile_read(path, &p, &info, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(ompf_xu_count(p), NTHREADS * PER_THREAD);
    assert_true(info.chunks > 50); /* really flushed in many chunks */
    assert_string_equal(ompf_meta_get(p, "program"), "app2");
    assert_string_equal(ompf_meta_get(p, "end"), "yes");
    assert_int_equal(ompf_event_get(p, 1)->status, OMPF_EV_MULTIPLEXED);
    assert_string_equal(ompf_event_get(p, 1)->reason, "time_running < time_enabled");
    assert_int_equal(ompf_construct_count(p), 1 + NTHREADS);
    assert_int_equal(ompf_thread_count(p), NTHREADS);
    for (uint32_t t = 0; t < NTHREADS; t++) {
        const ompf_thread_t *th = ompf_thread_get_const(p, t);
        assert_int_equal(th->os_tid, 500 + (int)t);
        assert_true(th->total[0] == 1e6 + t);
    }
    /* Every XU once, with its label rebuilt across streams. */
    unsigned char *seen = calloc(NTHREADS * PER_THREAD, 1);
    char buf[256], want[256];
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        uint32_t t = (uint32_t)((x->id - 1) / M), k = (uint32_t)((x->id - 1) % M);
        assert_true(t < NTHREADS && k < PER_THREAD);
        assert_int_equal(seen[t * PER_THREAD + k], 0);
        seen[t * PER_THREAD + k] = 1;
        assert_int_equal(x->thread, t);
        int n = snprintf(want, sizeof want, "0.%u", k);
        for (uint32_t j = 1; j <= t; j++)
            n += snprintf(want + n, sizeof want - (size_t)n, ".%u", j);
        ompf_label_format(p, x->label, buf, sizeof buf);
        assert_string_equal(buf, want);
        const ompf_construct_t *c = ompf_construct_get(p, x->type);
        assert_int_equal(c->offset, k % 2 ? 0x77 : 0x100 + t);
        const double *v = ompf_xu_values_const(p, i);
        assert_true(v[0] == (double)k);
        if (k % 3)
            assert_true(v[1] == t * 1.5);
        else
            assert_true(ompf_is_missing(v[1]));
    }
    free(seen);
    ompf_profile_destroy(p);
    ompf_profile_destroy(h);
    gen_rmdir(dir);
}

/* A process that dies leaves <path>.tmp.<pid>, readable up to its last
 * complete chunk. */
static void test_crashed_writer(void **state)
{
    (void)state;
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/c.ompf", dir);
    ompf_profile_t *h = header();
    ompf_error_t err = {0};
    ompf_writer_t *w;
    assert_int_equal(ompf_writer_create(path, h, &w, &err), 0);
    ompf_wstream_t *s;
    assert_int_equal(ompf_wstream_create(w, 0, &s), 0);
    ompf_construct_t c = {.module = "/bin/app", .build_id = "", .offset = 1,
                          .kind = OMPF_CK_TASK};
    assert_int_equal(ompf_wstream_construct(s, 1, &c), 0);
    for (uint32_t k = 0; k < 1000; k++) {
        assert_int_equal(ompf_wstream_label(s, k + 1, 0, k), 0);
        ompf_xu_t x = {.id = k, .thread = 3, .parts = 1, .kind = OMPF_XU_LOOP_CHUNK};
        assert_int_equal(ompf_wstream_xu(s, &x, 1, k + 1, NULL), 0);
        if (k == 599)
            assert_int_equal(ompf_wstream_flush(s), 0);
    }
    /* 400 XUs are still buffered when the "crash" happens. */
    ompf_profile_t *p;
    ompf_read_info_t info;
    int rc = ompf_profile_read(ompf_writer_tmp_path(w), &p, &info, &err);
    assert_int_equal(rc, OMPF_ETRUNC);
    assert_non_null(p);
    assert_int_equal(info.truncated, 1);
    assert_int_equal(info.xus_read, 600);
    assert_int_equal(ompf_xu_count(p), 600);
    assert_non_null(strstr(info.note, "truncated after 600 XUs"));
    assert_non_null(strstr(err.msg, "truncated after 600 XUs"));
    /* The thread records were never written: the salvage invents them. */
    assert_int_equal(ompf_thread_count(p), 4);
    ompf_profile_destroy(p);

    /* A trailer with other events is refused; abort removes the file. */
    ompf_profile_t *bad;
    assert_int_equal(ompf_profile_create(&bad), 0);
    ompf_event_t e = {.name = "cycles", .source = -1};
    assert_int_equal(ompf_event_add(bad, &e, NULL), 0);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s", ompf_writer_tmp_path(w));
    assert_int_equal(ompf_writer_finish(w, bad, &err), OMPF_EMISMATCH);
    assert_non_null(strstr(err.msg, "trailer"));
    assert_int_not_equal(access(tmp, F_OK), 0);
    assert_int_not_equal(access(path, F_OK), 0);
    ompf_profile_destroy(bad);

    /* Explicit abort. */
    assert_int_equal(ompf_writer_create(path, h, &w, &err), 0);
    snprintf(tmp, sizeof tmp, "%s", ompf_writer_tmp_path(w));
    assert_int_equal(access(tmp, F_OK), 0);
    ompf_writer_abort(w);
    assert_int_not_equal(access(tmp, F_OK), 0);
    ompf_profile_destroy(h);
    gen_rmdir(dir);
}

/* ---- the streaming writer's column encoder ------------------------------ */

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A number of the kind column c of a test with shape m holds: all tiny
 * (the encoder's one-byte path), one large entry among tiny ones, mixed
 * magnitudes, extremes, constant (version 2's mode 1), an arithmetic
 * progression (constant deltas), constant but for the last entry. */
#define SHAPES 7
static uint64_t pick(uint64_t *seed, int m, size_t i, size_t n)
{
    uint64_t r = rnd(seed);
    switch (m) {
    case 4:
        return 5;
    case 5:
        return 7 + 3 * (uint64_t)i;
    case 6:
        return i + 1 == n ? r : 9;
    case 0:
        return r & 0x3f;
    case 1:
        return i == n / 2 ? r : r & 0x3f;
    case 2:
        return r >> (r & 63);
    default: {
        static const uint64_t ext[] = {0, 1, 0x7f, 0x80, 0x3fff, 0x4000, UINT64_MAX,
                                       UINT64_MAX - 1, 1ULL << 63, (1ULL << 63) - 1,
                                       0xffffffffULL, 0x80000000ULL};
        return ext[r % (sizeof ext / sizeof *ext)];
    }
    }
}

/* fmt_enc_xu_cols (the stream's buffers) must write exactly the bytes of
 * the row encoder (ompf_profile_write's), which the reader's tests cover:
 * same format, two layouts.  (Label paths: test_label_paths.) */
static void test_column_codec_matches_rows(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 15, 16, 17, 127, 128, 129, 1000};
    uint64_t seed = 0x2545f4914f6cdd1dULL;
    int runs_checked = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int m = 0; m < SHAPES; m++)
            for (uint32_t ne = 0; ne <= 3; ne += 3) {
                size_t n = sizes[si], cap = n ? n : 1;
                fmt_xu_cols_t c = {0};
                uint64_t *u64[7];
                for (int k = 0; k < 7; k++)
                    u64[k] = calloc(cap, 8);
                c.id = u64[0], c.cid = u64[1], c.lid = u64[2], c.start = u64[3];
                c.end = u64[4], c.iter_start = u64[5], c.iter_count = u64[6];
                c.thread = calloc(cap, 4), c.team_thread = calloc(cap, 4);
                c.team_size = calloc(cap, 4), c.parts = calloc(cap, 4);
                c.cpu = calloc(cap, 4), c.core = calloc(cap, 4), c.numa = calloc(cap, 4);
                c.kind = calloc(cap, 1);
                c.vals = calloc(cap * (ne ? ne : 1), sizeof(double));
                ompf_xu_t *xu = calloc(cap, sizeof *xu);
                fmt_xu_row_t *rows = calloc(cap, sizeof *rows);
                assert_non_null(xu);
                assert_non_null(rows);
                static const double specials[] = {0.5, -0.0, 1e300, -3.0, 9007199254740993.0};
                for (size_t i = 0; i < n; i++) {
                    ompf_xu_t *x = &xu[i];
                    x->id = c.id[i] = pick(&seed, m, i, n);
                    c.cid[i] = pick(&seed, m, i, n);
                    c.lid[i] = pick(&seed, m, i, n);
                    x->thread = c.thread[i] = (uint32_t)pick(&seed, m, i, n);
                    x->team_thread = c.team_thread[i] = (uint32_t)pick(&seed, m, i, n);
                    x->team_size = c.team_size[i] = (uint32_t)pick(&seed, m, i, n);
                    x->parts = c.parts[i] = (uint32_t)pick(&seed, m, i, n);
                    /* small negatives too: zigzag */
                    x->cpu = c.cpu[i] = (int32_t)(uint32_t)pick(&seed, m, i, n) - (m == 0 ? 20 : 0);
                    x->core = c.core[i] = (int32_t)(uint32_t)pick(&seed, m, i, n);
                    x->numa = c.numa[i] = m == 3 ? INT32_MIN : -1;
                    x->kind = c.kind[i] = (uint8_t)pick(&seed, m, i, n);
                    x->start_ns = c.start[i] = pick(&seed, m, i, n);
                    x->end_ns = c.end[i] = pick(&seed, m, i, n);
                    x->iter_start = c.iter_start[i] = pick(&seed, m, i, n);
                    x->iter_count = c.iter_count[i] = pick(&seed, m, i, n);
                    for (uint32_t e = 0; e < ne; e++) {
                        uint64_t r = rnd(&seed);
                        c.vals[i * ne + e] = r % 5 == 0   ? OMPF_MISSING
                                             : r % 5 == 1 ? specials[(r >> 8) % 5]
                                                          : (double)(pick(&seed, m, i, n) >> 12);
                    }
                    rows[i] = (fmt_xu_row_t){.xu = x, .cid = c.cid[i], .lid = c.lid[i],
                                             .values = c.vals + i * ne};
                }
                fmt_buf_t a = {0}, b = {0};
                fmt_enc_xus(&a, rows, n, ne, 0);
                fmt_enc_xu_cols(&b, &c, n, ne);
                assert_false(a.oom || b.oom);
                assert_int_equal(a.len, b.len);
                assert_memory_equal(a.data, b.data, a.len);
                /* thread .. kind constant from item 1 on: the same bytes
                 * from their items 0 and 1 alone (run_only, wstream.h) */
                int same = 1;
                for (size_t i = 2; i < n; i++)
                    same &= c.thread[i] == c.thread[1] && c.team_thread[i] == c.team_thread[1] &&
                            c.team_size[i] == c.team_size[1] && c.parts[i] == c.parts[1] &&
                            c.cpu[i] == c.cpu[1] && c.core[i] == c.core[1] &&
                            c.numa[i] == c.numa[1] && c.kind[i] == c.kind[1];
                if (same) {
                    for (size_t i = 2; i < n; i++) /* not read */
                        c.thread[i] = c.team_thread[i] = c.team_size[i] = c.parts[i] = 77,
                        c.cpu[i] = c.core[i] = c.numa[i] = 77, c.kind[i] = 77;
                    c.run_only = 1;
                    b.len = 0;
                    fmt_enc_xu_cols(&b, &c, n, ne);
                    c.run_only = 0;
                    assert_int_equal(a.len, b.len);
                    assert_memory_equal(a.data, b.data, a.len);
                    runs_checked++;
                }
                fmt_buf_free(&a);
                fmt_buf_free(&b);
                for (int k = 0; k < 7; k++)
                    free(u64[k]);
                free(c.thread), free(c.team_thread), free(c.team_size), free(c.parts);
                free(c.cpu), free(c.core), free(c.numa), free(c.kind), free(c.vals);
                free(xu), free(rows);
            }
    assert_true(runs_checked > 0);
}

/* Every field of an XU survives the stream at its extremes, and the
 * buffers' growth and reuse across flushes keeps records apart. */
static void test_stream_extremes(void **state)
{
    (void)state;
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/x.ompf", dir);
    ompf_profile_t *h = header();
    ompf_error_t err = {0};
    ompf_writer_t *w;
    assert_int_equal(ompf_writer_create(path, h, &w, &err), 0);
    ompf_wstream_t *s;
    assert_int_equal(ompf_wstream_create(w, 100000, &s), 0);
    ompf_construct_t c = {.module = "/bin/app", .build_id = "", .offset = 1,
                          .kind = OMPF_CK_TASK};
    assert_int_equal(ompf_wstream_construct(s, UINT64_MAX, &c), 0);
    enum { N = 20000 };
    uint64_t seed = 77;
    for (uint32_t k = 0; k < N; k++) {
        /* ids far apart and out of order: the hash id map */
        uint64_t lid = ((uint64_t)(k % 7) << 60) | ((uint64_t)k * 977 + 1);
        assert_int_equal(ompf_wstream_label(s, lid, 0, rnd(&seed)), 0);
        uint64_t r = rnd(&seed);
        ompf_xu_t x = {.id = k % 2 ? UINT64_MAX - k : (uint64_t)k << 20,
                       .thread = k % 3,
                       .team_thread = k % 5 ? 1 : UINT32_MAX,
                       .team_size = UINT32_MAX - k % 2,
                       .parts = 1 + k % 300,
                       .cpu = k % 11 ? -1 : INT32_MAX,
                       .core = k % 13 ? INT32_MIN : 3,
                       .numa = (int32_t)(r & 3) - 1,
                       .kind = (uint8_t)(k % 6),
                       .start_ns = r,
                       .end_ns = k % 17 ? r + k : r - 1, /* end before start too */
                       .iter_start = k % 4 ? 0 : UINT64_MAX - r,
                       .iter_count = r >> (k % 64)};
        double v[2] = {k % 9 ? (double)(r >> 11) : -0.0, k % 4 ? OMPF_MISSING : 0.25 * k};
        assert_int_equal(ompf_wstream_xu(s, &x, UINT64_MAX, lid, k % 10 == 3 ? NULL : v), 0);
    }
    ompf_thread_t th = {.index = 2, .os_tid = -1};
    assert_int_equal(ompf_wstream_thread(s, &th), 0); /* NULL arrays: missing */
    for (uint32_t t = 0; t < 2; t++) {
        ompf_thread_t o = {.index = t, .os_tid = 9};
        assert_int_equal(ompf_wstream_thread(s, &o), 0);
    }
    assert_int_equal(ompf_writer_finish(w, NULL, &err), 0);

    ompf_profile_t *p;
    ompf_read_info_t info;
    int rc = ompf_profile_read(path, &p, &info, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(ompf_xu_count(p), N);
    assert_true(info.chunks > 10);
    seed = 77;
    for (uint32_t k = 0; k < N; k++) {
        uint64_t comp = rnd(&seed), r = rnd(&seed);
        const ompf_xu_t *x = ompf_xu_get(p, k);
        assert_int_equal(x->id, k % 2 ? UINT64_MAX - k : (uint64_t)k << 20);
        assert_int_equal(x->thread, k % 3);
        assert_int_equal(x->team_thread, k % 5 ? 1 : UINT32_MAX);
        assert_int_equal(x->team_size, UINT32_MAX - k % 2);
        assert_int_equal(x->parts, 1 + k % 300);
        assert_int_equal(x->cpu, k % 11 ? -1 : INT32_MAX);
        assert_int_equal(x->core, k % 13 ? INT32_MIN : 3);
        assert_int_equal(x->numa, (int32_t)(r & 3) - 1);
        assert_int_equal(x->kind, k % 6);
        assert_int_equal(x->start_ns, r);
        assert_int_equal(x->end_ns, k % 17 ? r + k : r - 1);
        assert_int_equal(x->iter_start, k % 4 ? 0 : UINT64_MAX - r);
        assert_int_equal(x->iter_count, r >> (k % 64));
        assert_int_equal(ompf_label_component(p, x->label), comp);
        const double *v = ompf_xu_values_const(p, k);
        if (k % 10 == 3) {
            assert_true(ompf_is_missing(v[0]) && ompf_is_missing(v[1]));
            continue;
        }
        if (k % 9)
            assert_true(v[0] == (double)(r >> 11));
        else
            assert_true(v[0] == 0 && signbit(v[0]));
        if (k % 4)
            assert_true(ompf_is_missing(v[1]));
        else
            assert_true(v[1] == 0.25 * k);
    }
    assert_int_equal(ompf_thread_count(p), 3);
    assert_true(ompf_is_missing(ompf_thread_get_const(p, 2)->total[0]));
    ompf_profile_destroy(p);
    ompf_profile_destroy(h);
    gen_rmdir(dir);
}

/* Label paths (PATHS chunks): chains of 1..7 nodes (longer than
 * FMT_PATH_MAX: split) below the root, below earlier nodes, and below
 * nodes of another stream written later; components of every shape,
 * including runs of constant ones; XUs with constant columns. */
static void test_label_paths(void **state)
{
    (void)state;
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/p.ompf", dir);
    ompf_profile_t *h = header();
    ompf_error_t err = {0};
    ompf_writer_t *w;
    assert_int_equal(ompf_writer_create(path, h, &w, &err), 0);
    ompf_wstream_t *s, *s2;
    assert_int_equal(ompf_wstream_create(w, 3000, &s), 0); /* many flushes */
    assert_int_equal(ompf_wstream_create(w, 0, &s2), 0);
    ompf_construct_t c = {.module = "/bin/app", .build_id = "", .offset = 1,
                          .kind = OMPF_CK_TASK};
    assert_int_equal(ompf_wstream_construct(s, 3, &c), 0);
    enum { N = 6000, LATE = 1000000 };
    uint64_t seed = 99, next = 1;
    uint64_t *last = calloc(N, 8), (*comps)[8] = calloc(N, sizeof *comps);
    unsigned *len = calloc(N, sizeof *len);
    uint64_t *par = calloc(N, 8);
    assert_non_null(last);
    for (uint32_t k = 0; k < N; k++) {
        int m = (int)(k / 500) % SHAPES;
        unsigned n = 1 + (unsigned)(rnd(&seed) % 7);
        if (k % 1000 < 500)
            n = 2; /* runs of equal lengths: constant columns */
        for (unsigned j = 0; j < n; j++)
            comps[k][j] = pick(&seed, m, k, N);
        uint64_t parent = k % 3 == 0 ? 0 : k % 3 == 1 ? last[k / 2] : LATE + k % 5;
        par[k] = parent;
        len[k] = n;
        assert_int_equal(ompf_wstream_label_path(s, next, parent, comps[k], n), 0);
        last[k] = next + n - 1;
        next += n + 1; /* an XU id in between, as the tool does */
        ompf_xu_t x = {.id = next - 1, .thread = 0, .team_size = 2, .parts = 1, .cpu = 1,
                       .core = -1, .numa = 0, .kind = OMPF_XU_TASK, .start_ns = 100 * k,
                       .end_ns = 100 * k + 40};
        assert_int_equal(ompf_wstream_xu(s, &x, 3, last[k], NULL), 0);
    }
    for (uint64_t j = 0; j < 5; j++) /* the parents written late, elsewhere */
        assert_int_equal(ompf_wstream_label(s2, LATE + j, 0, 1000 + j), 0);
    ompf_thread_t th = {.index = 0, .os_tid = 1};
    assert_int_equal(ompf_wstream_thread(s, &th), 0);
    assert_int_equal(ompf_writer_finish(w, NULL, &err), 0);

    ompf_profile_t *p;
    int rc = ompf_profile_read(path, &p, NULL, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(ompf_xu_count(p), N);
    for (uint32_t k = 0; k < N; k++) {
        const ompf_xu_t *x = ompf_xu_get(p, k);
        assert_int_equal(x->start_ns, 100 * k);
        assert_int_equal(x->end_ns, 100 * k + 40);
        assert_int_equal(x->team_size, 2);
        assert_int_equal(x->cpu, 1);
        uint32_t node = x->label;
        for (unsigned j = len[k]; j-- > 0;) {
            assert_int_equal(ompf_label_component(p, node), comps[k][j]);
            node = ompf_label_parent(p, node);
        }
        /* the chain continues at the parent's label */
        if (par[k] == 0)
            assert_int_equal(ompf_label_depth(p, node), 0);
        else if (par[k] >= LATE)
            assert_int_equal(ompf_label_component(p, node), 1000 + par[k] - LATE);
        else
            assert_int_equal(node, ompf_xu_get(p, k / 2)->label);
    }
    ompf_profile_destroy(p);
    ompf_profile_destroy(h);
    free(last), free(comps), free(len), free(par);
    gen_rmdir(dir);
}

/* The columns thread .. kind are stored lazily, as runs of equal values
 * (wstream.h): runs of 1 to 700 XUs, flushes of one run of 1, 2, 3 and
 * many XUs and flushes that cut runs, then a salvage of a stream whose
 * last run is still pending; every XU reads back with its own fields. */
static uint32_t run_of(uint32_t k)
{
    /* k -> a run number: run lengths 1, 2, 3, 700, 1, 2, 3, 700, ... */
    static const uint32_t len[] = {1, 2, 3, 700};
    uint32_t r = 0;
    for (;;) {
        uint32_t l = len[r % 4];
        if (k < l)
            return r;
        k -= l;
        r++;
    }
}

static ompf_xu_t run_xu(uint32_t k)
{
    uint32_t r = run_of(k);
    ompf_xu_t x = {.id = k + 1, .thread = r % 3, .team_thread = r % 2, .team_size = 2 + r % 5,
                   .parts = 1 + r % 4, .cpu = (int32_t)(r % 7) - 1, .core = (int32_t)r,
                   .numa = -(int32_t)(r % 2), .kind = (uint8_t)(r % 6),
                   .start_ns = 10 * k, .end_ns = 10 * k + 5};
    return x;
}

static void test_runs_and_salvage(void **state)
{
    (void)state;
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/r.ompf", dir);
    ompf_profile_t *h = header();
    ompf_error_t err = {0};
    ompf_writer_t *w;
    assert_int_equal(ompf_writer_create(path, h, &w, &err), 0);
    ompf_wstream_t *s;
    assert_int_equal(ompf_wstream_create(w, 50000, &s), 0);
    ompf_construct_t c = {.module = "/bin/app", .build_id = "", .offset = 1,
                          .kind = OMPF_CK_TASK};
    assert_int_equal(ompf_wstream_construct(s, 1, &c), 0);
    assert_int_equal(ompf_wstream_label(s, 1, 0, 0), 0);
    enum { N = 5000 };
    for (uint32_t k = 0; k < N; k++) {
        ompf_xu_t x = run_xu(k);
        assert_int_equal(ompf_wstream_xu(s, &x, 1, 1, NULL), 0);
        /* flushes holding one run of 1, 2 and 3 XUs */
        if (k == 706 + 0 || k == 706 + 2 || k == 706 + 5)
            assert_int_equal(ompf_wstream_flush(s), 0);
    }
    /* the last run (XUs 4236 .. 4935, then 4936 ..) is still pending */
    assert_int_equal(fmt_ws_salvage(s, 0), 0);
    ompf_profile_t *p;
    ompf_read_info_t info;
    int rc = ompf_profile_read(ompf_writer_tmp_path(w), &p, &info, &err);
    assert_int_equal(rc, OMPF_ETRUNC);
    assert_int_equal(ompf_xu_count(p), N);
    for (uint32_t k = 0; k < N; k++) {
        const ompf_xu_t *x = ompf_xu_get(p, k);
        ompf_xu_t want = run_xu(k);
        assert_int_equal(x->id, want.id);
        assert_int_equal(x->thread, want.thread);
        assert_int_equal(x->team_thread, want.team_thread);
        assert_int_equal(x->team_size, want.team_size);
        assert_int_equal(x->parts, want.parts);
        assert_int_equal(x->cpu, want.cpu);
        assert_int_equal(x->core, want.core);
        assert_int_equal(x->numa, want.numa);
        assert_int_equal(x->kind, want.kind);
        assert_int_equal(x->start_ns, want.start_ns);
        assert_int_equal(x->end_ns, want.end_ns);
    }
    ompf_profile_destroy(p);
    ompf_writer_abort(w);
    ompf_profile_destroy(h);
    gen_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_streams),
        cmocka_unit_test(test_crashed_writer),
        cmocka_unit_test(test_column_codec_matches_rows),
        cmocka_unit_test(test_stream_extremes),
        cmocka_unit_test(test_label_paths),
        cmocka_unit_test(test_runs_and_salvage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
