/* CSV export/import: import -> export reproduces the CSV exactly, export
 * -> import -> export is stable, and bad CSV is reported by line:column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fmt.h"
#include "gen.h"
#include "ompfuse/csv.h"
#include "ompfuse/file.h"

static char *export_text(const ompf_profile_t *p, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    ompf_error_t err;
    assert_int_equal(ompf_csv_export(p, f, &err), 0);
    fclose(f);
    *len = n;
    return buf;
}

static int import_text(const char *text, size_t len, const char *name,
                       const ompf_csv_import_opts_t *o, ompf_profile_t **out, ompf_error_t *err)
{
    FILE *f = fmemopen((void *)text, len, "r");
    if (!len) /* fmemopen refuses size 0 in old glibc */
        f = fopen("/dev/null", "r");
    int rc = ompf_csv_import(f, name, o, out, err);
    fclose(f);
    return rc;
}

static void roundtrip(const gen_opts_t *o)
{
    ompf_profile_t *p = gen_profile(o);
    size_t n1, n2, n3;
    char *t1 = export_text(p, &n1);
    ompf_profile_t *q, *r;
    ompf_error_t err = {0};
    ompf_csv_import_opts_t io = {.program = "prog", .threads = 0};
    int rc = import_text(t1, n1, "t1.csv", &io, &q, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(ompf_xu_count(q), o->n_xu);
    char *t2 = export_text(q, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(t1, t2, n1);
    /* Through a profile file as well (the 10^6 case skips the repeats to
     * keep the suite fast under sanitizers: the text comparison above
     * already covers it). */
    if (o->n_xu > 100000) {
        free(t1);
        free(t2);
        ompf_profile_destroy(p);
        ompf_profile_destroy(q);
        return;
    }
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/i.ompf", dir);
    assert_int_equal(ompf_profile_write(q, path, &err), 0);
    assert_int_equal(ompf_profile_read(path, &r, NULL, &err), 0);
    assert_int_equal(ompf_profile_compare(q, r, &err), 0);
    char *t3 = export_text(r, &n3);
    assert_int_equal(n1, n3);
    assert_memory_equal(t1, t3, n1);
    /* Import of the re-export builds the same profile. */
    ompf_profile_t *s;
    assert_int_equal(import_text(t2, n2, "t1.csv", &io, &s, &err), 0);
    assert_int_equal(ompf_profile_compare(q, s, &err), 0);
    /* Labels and values equal the original's. */
    for (size_t i = 0; i < ompf_xu_count(p); i += 1 + ompf_xu_count(p) / 1000) {
        assert_int_equal(ompf_label_compare(p, ompf_xu_get(p, i)->label, q,
                                            ompf_xu_get(q, i)->label), 0);
        for (size_t e = 0; e < ompf_event_count(p); e++) {
            double a = ompf_xu_values_const(p, i)[e], b = ompf_xu_values_const(q, i)[e];
            if (ompf_is_missing(a))
                assert_true(ompf_is_missing(b));
            else
                assert_memory_equal(&a, &b, sizeof a);
        }
    }
    free(t1);
    free(t2);
    free(t3);
    ompf_profile_destroy(p);
    ompf_profile_destroy(q);
    ompf_profile_destroy(r);
    ompf_profile_destroy(s);
    gen_rmdir(dir);
}

static void test_roundtrip_sizes(void **state)
{
    (void)state;
    gen_opts_t o0 = {.n_xu = 0, .n_events = 2, .seed = 31};
    roundtrip(&o0);
    gen_opts_t o1 = {.n_xu = 1, .n_threads = 1, .n_events = 1, .seed = 32};
    roundtrip(&o1);
    gen_opts_t om = {.n_xu = 1000000, .n_threads = 64, .n_events = 2, .n_constructs = 9,
                     .missing_rate = 0.02, .seed = 33};
    roundtrip(&om);
}

static void test_roundtrip_special(void **state)
{
    (void)state;
    gen_opts_t o = {.n_xu = 20000, .n_threads = 16, .n_events = 5, .n_constructs = 12,
                    .missing_rate = 0.2, .special_values = 1, .seed = 34};
    roundtrip(&o);
}

static const char *const HDR = "xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n";

static void test_import_semantics(void **state)
{
    (void)state;
    const char *csv =
        "xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles,\"a,\"\"b\"\"\"\r\n"
        "7,fib.c:12,task,0.1.4198400.2,3,-1,100,250,12,0.25\r\n"
        "\r\n"
        "8,libfoo.so+0x1A2b,loop-chunk,0.3,0,2,5,6,,-1e-300\r\n"
        "9,\"odd, name\",task,0,1,0,1,2,1.8446744073709552e+19,\n";
    ompf_profile_t *p;
    ompf_error_t err = {0};
    ompf_csv_import_opts_t io = {.program = "fib", .threads = 8};
    int rc = import_text(csv, strlen(csv), "s.csv", &io, &p, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(ompf_xu_count(p), 3);
    assert_int_equal(ompf_event_count(p), 2);
    assert_string_equal(ompf_event_get(p, 1)->name, "a,\"b\"");
    assert_int_equal(ompf_construct_count(p), 3);
    const ompf_construct_t *c0 = ompf_construct_get(p, 0), *c1 = ompf_construct_get(p, 1),
                           *c2 = ompf_construct_get(p, 2);
    assert_string_equal(c0->file, "fib.c");
    assert_int_equal(c0->line, 12);
    assert_string_equal(c0->module, "");
    assert_string_equal(c0->name, "fib.c:12");
    assert_string_equal(c1->module, "libfoo.so");
    assert_int_equal(c1->offset, 0x1a2b);
    assert_null(c1->file);
    assert_string_equal(c1->name, "libfoo.so+0x1A2b");
    assert_string_equal(c2->name, "odd, name");
    assert_int_equal(ompf_thread_count(p), 4);
    assert_string_equal(ompf_meta_get(p, "program"), "fib");
    assert_string_equal(ompf_meta_get(p, "team_size"), "8");
    assert_string_equal(ompf_meta_get(p, "mode"), OMPF_MODE_IMPORTED);
    const ompf_xu_t *x = ompf_xu_get(p, 0);
    assert_int_equal(x->id, 7);
    assert_int_equal(x->kind, OMPF_XU_TASK);
    assert_int_equal(x->thread, 3);
    assert_int_equal(x->cpu, -1);
    assert_int_equal(x->team_size, 8);
    char buf[64];
    ompf_label_format(p, x->label, buf, sizeof buf);
    assert_string_equal(buf, "0.1.4198400.2");
    assert_true(ompf_xu_values_const(p, 0)[1] == 0.25);
    assert_true(ompf_is_missing(ompf_xu_values_const(p, 1)[0]));
    assert_true(ompf_xu_values_const(p, 1)[1] == -1e-300);
    assert_true(ompf_xu_values_const(p, 2)[0] == 18446744073709551616.0);
    assert_true(ompf_is_missing(ompf_xu_values_const(p, 2)[1]));
    /* The root label and a label shared as a prefix exist once. */
    ompf_label_format(p, ompf_xu_get(p, 2)->label, buf, sizeof buf);
    assert_string_equal(buf, "0");
    size_t n;
    char *out = export_text(p, &n);
    const char *want =
        "xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles,\"a,\"\"b\"\"\"\n"
        "7,fib.c:12,task,0.1.4198400.2,3,-1,100,250,12,0.25\n"
        "8,libfoo.so+0x1A2b,loop-chunk,0.3,0,2,5,6,,-1e-300\n"
        "9,\"odd, name\",task,0,1,0,1,2,1.8446744073709552e+19,\n";
    assert_string_equal(out, want);
    free(out);
    ompf_profile_destroy(p);
}

typedef struct bad {
    const char *csv;
    const char *fragment;
} bad_t;

static void test_bad_csv(void **state)
{
    (void)state;
    char buf[4][512];
    snprintf(buf[0], sizeof buf[0], "%s1,a:1,task,0,0,0,1,2,3\n1,a:1,task,0,0,0,1,2,3\n", HDR);
    const bad_t cases[] = {
        {"", "bad.csv:1:1: the file is empty"},
        {"xu,typ,kind,label,thread,cpu,start_ns,end_ns\n",
         "bad.csv:1:4: header column 2 is 'typ' but must be 'type'"},
        {"xu,type\n", "bad.csv:1:1: the header has 2 columns"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,e,e\n",
         "bad.csv:1:49: event 'e' appears twice"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,\n", "bad.csv:1:47: event column 9"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,a:1,task,0,0,0,1,2\n",
         "bad.csv:2:20: row has 8 fields but the header has 9"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,a:1,tsk,0,0,0,1,2,3\n",
         "bad.csv:2:7: column 'kind': 'tsk' is not an XU kind"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,a:1,task,0.x,0,0,1,2,3\n",
         "bad.csv:2:12: column 'label': '0.x'"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,a:1,task,0,-1,0,1,2,3\n",
         "bad.csv:2:14: column 'thread': '-1'"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,a:1,task,0,0,x,1,2,3\n",
         "bad.csv:2:16: column 'cpu': 'x'"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,a:1,task,0,0,0,1.5,2,3\n",
         "bad.csv:2:18: column 'start_ns': '1.5'"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,a:1,task,0,0,0,1,,3\n",
         "bad.csv:2:20: column 'end_ns': ''"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,a:1,task,0,0,0,1,2,12x\n",
         "bad.csv:2:22: column 'cycles': '12x' is not a number"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\nq,a:1,task,0,0,0,1,2,3\n",
         "bad.csv:2:1: column 'xu': 'q'"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,,task,0,0,0,1,2,3\n",
         "bad.csv:2:3: column 'type' is empty"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,\"a:1,task,0,0,0,1,2,3\n",
         "bad.csv:2:3: quoted field is not closed"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,a\"b,task,0,0,0,1,2,3\n",
         "bad.csv:2:4: quote inside an unquoted field"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,\"a\"b,task,0,0,0,1,2,3\n",
         "bad.csv:2:6: unexpected character after a closing quote"},
        {buf[0], "bad.csv:3:1: XU id 1 already appears on line 2"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,a:1,task,0,0,0,5,2,3\n",
         "bad.csv:2:20: column 'end_ns': '2' is not a time in ns not before start_ns"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,a:1,task,0,0,0,1,2,nan\n",
         "bad.csv:2:22: column 'cycles': 'nan' is not a number"},
        {"xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles\n1,a:1,task,0,9418400,0,1,2,3\n",
         "bad.csv:2:14: column 'thread': 9418400 is too large"},
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ompf_profile_t *p = (ompf_profile_t *)&failures;
        ompf_error_t err = {0};
        int rc = import_text(cases[i].csv, strlen(cases[i].csv), "bad.csv", NULL, &p, &err);
        int want = strstr(cases[i].fragment, "too large") ? OMPF_ERANGE : OMPF_EFORMAT;
        if (rc != want || p != NULL || !strstr(err.msg, cases[i].fragment)) {
            fprintf(stderr, "case %zu: got %d \"%s\", want \"%s\"\n", i, rc, err.msg,
                    cases[i].fragment);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

/* Integers are read exactly, never through double: counts up to 2^64-1 in
 * the xu, thread and time columns, and event values (test_exact_counts
 * for the counts no double holds).  export -> import -> export is
 * byte-identical. */
static void test_integers_exact(void **state)
{
    (void)state;
    const char *csv =
        "xu,type,kind,label,thread,cpu,start_ns,end_ns,cycles,big\n"
        "18446744073709551615,a:1,task,0.1,65535,-1,0,18446744073709551615,9007199254740992,"
        "18446744073709549568\n"
        "9007199254740993,a:1,task,0.2,0,2147483647,9007199254740993,9007199254740993,"
        "9007199254740994,-9007199254740992\n"
        "0,a:1,task,0.3,1,0,18446744073709551614,18446744073709551615,0,1\n";
    ompf_profile_t *p, *q;
    ompf_error_t err = {0};
    int rc = import_text(csv, strlen(csv), "x.csv", NULL, &p, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_true(ompf_xu_get(p, 0)->id == UINT64_MAX);
    assert_true(ompf_xu_get(p, 1)->id == 9007199254740993ull);
    assert_true(ompf_xu_get(p, 1)->start_ns == 9007199254740993ull);
    assert_true(ompf_xu_get(p, 0)->end_ns == UINT64_MAX);
    assert_true(ompf_xu_values_const(p, 0)[1] == 18446744073709549568.0);
    size_t n1, n2;
    char *t1 = export_text(p, &n1);
    assert_string_equal(t1, csv);
    assert_int_equal(import_text(t1, n1, "t1.csv", NULL, &q, &err), 0);
    char *t2 = export_text(q, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(t1, t2, n1);
    free(t1);
    free(t2);
    ompf_profile_destroy(p);
    ompf_profile_destroy(q);
}

typedef struct badnum {
    const char *row; /* after the header HDR */
    int rc;
    const char *fragment;
} badnum_t;

/* Out-of-range and non-decimal numbers, refused with line:column. */
static void test_bad_numbers(void **state)
{
    (void)state;
    static const badnum_t cases[] = {
        /* counts: start_ns at column 18, xu at column 1 */
        {"1,a:1,task,0,0,0,18446744073709551616,2,3", OMPF_ERANGE,
         "n.csv:2:18: column 'start_ns': 18446744073709551616 is above 2^64-1"},
        {"1,a:1,task,0,0,0,99999999999999999999999,2,3", OMPF_ERANGE,
         "n.csv:2:18: column 'start_ns': 99999999999999999999999 is above 2^64-1"},
        {"1,a:1,task,0,0,0,-1,2,3", OMPF_EFORMAT, "n.csv:2:18: column 'start_ns': '-1' is not"},
        {"1,a:1,task,0,0,0,0x10,2,3", OMPF_EFORMAT, "n.csv:2:18: column 'start_ns': '0x10' is not"},
        {"1,a:1,task,0,0,0,1e3,2,3", OMPF_EFORMAT, "n.csv:2:18: column 'start_ns': '1e3' is not"},
        {"1,a:1,task,0,0,0,1.5,2,3", OMPF_EFORMAT, "n.csv:2:18: column 'start_ns': '1.5' is not"},
        {"1,a:1,task,0,0,0,+1,2,3", OMPF_EFORMAT, "n.csv:2:18: column 'start_ns': '+1' is not"},
        {"1,a:1,task,0,0,0, 1,2,3", OMPF_EFORMAT, "n.csv:2:18: column 'start_ns': ' 1' is not"},
        {"18446744073709551616,a:1,task,0,0,0,1,2,3", OMPF_ERANGE,
         "n.csv:2:1: column 'xu': 18446744073709551616 is above 2^64-1"},
        {"0x10,a:1,task,0,0,0,1,2,3", OMPF_EFORMAT, "n.csv:2:1: column 'xu': '0x10' is not"},
        {"-1,a:1,task,0,0,0,1,2,3", OMPF_EFORMAT, "n.csv:2:1: column 'xu': '-1' is not"},
        {"1e3,a:1,task,0,0,0,1,2,3", OMPF_EFORMAT, "n.csv:2:1: column 'xu': '1e3' is not"},
        {"1,a:1,task,0,1.5,0,1,2,3", OMPF_EFORMAT, "n.csv:2:14: column 'thread': '1.5' is not"},
        {"1,a:1,task,0,0,0,1,0x2,3", OMPF_EFORMAT, "n.csv:2:20: column 'end_ns': '0x2' is not"},
        /* event values at column 22 */
        {"1,a:1,task,0,0,0,1,2,18446744073709551616", OMPF_ERANGE,
         "n.csv:2:22: column 'cycles': 18446744073709551616 is above 2^64-1"},
        /* counts up to 2^64-1 are exact (test_exact_counts); negative
         * integers a double cannot hold are refused */
        {"1,a:1,task,0,0,0,1,2,-9007199254740993", OMPF_ERANGE,
         "n.csv:2:22: column 'cycles': -9007199254740993 is below -2^53 and has no exact"},
        {"1,a:1,task,0,0,0,1,2,-18446744073709551615", OMPF_ERANGE,
         "n.csv:2:22: column 'cycles': -18446744073709551615 is below -2^53"},
        {"1,a:1,task,0,0,0,1,2,-18446744073709551616", OMPF_ERANGE,
         "n.csv:2:22: column 'cycles': -18446744073709551616 is above 2^64-1"},
        {"1,a:1,task,0,0,0,1,2,0x10", OMPF_EFORMAT, "n.csv:2:22: column 'cycles': '0x10' is not a number"},
        {"1,a:1,task,0,0,0,1,2,0x1p3", OMPF_EFORMAT, "n.csv:2:22: column 'cycles': '0x1p3' is not"},
        {"1,a:1,task,0,0,0,1,2,1e999", OMPF_ERANGE, "n.csv:2:22: column 'cycles': 1e999 is beyond"},
        {"1,a:1,task,0,0,0,1,2,infinity", OMPF_EFORMAT, "n.csv:2:22: column 'cycles': 'infinity' is not"},
        {"1,a:1,task,0,0,0,1,2,+1", OMPF_EFORMAT, "n.csv:2:22: column 'cycles': '+1' is not"},
        {"1,a:1,task,0,0,0,1,2, 1", OMPF_EFORMAT, "n.csv:2:22: column 'cycles': ' 1' is not"},
        {"1,a:1,task,0,0,0,1,2,1.", OMPF_EFORMAT, "n.csv:2:22: column 'cycles': '1.' is not"},
        {"1,a:1,task,0,0,0,1,2,.5", OMPF_EFORMAT, "n.csv:2:22: column 'cycles': '.5' is not"},
        {"1,a:1,task,0,0,0,1,2,1e", OMPF_EFORMAT, "n.csv:2:22: column 'cycles': '1e' is not"},
    };
    int failures = 0;
    char text[512];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(text, sizeof text, "%s%s\n", HDR, cases[i].row);
        ompf_profile_t *p = (ompf_profile_t *)&failures;
        ompf_error_t err = {0};
        int rc = import_text(text, strlen(text), "n.csv", NULL, &p, &err);
        if (rc != cases[i].rc || p != NULL || !strstr(err.msg, cases[i].fragment)) {
            fprintf(stderr, "case %zu: got %d \"%s\", want %d \"%s\"\n", i, rc, err.msg,
                    cases[i].rc, cases[i].fragment);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

/* Counts up to 2^64-1 in event columns, table-driven over the edges of a
 * double and of a uint64: exact through import, ompf_xu_value_u64, the
 * file (EXACT chunk, skippable) and export, byte for byte. */
static void test_exact_counts(void **state)
{
    (void)state;
    static const uint64_t vals[] = {0, 1, (1ull << 53) - 1, 1ull << 53, (1ull << 53) + 1,
                                    1ull << 63, UINT64_MAX - 1, UINT64_MAX};
    enum { N = sizeof vals / sizeof *vals };
    char csv[2048];
    size_t len = (size_t)snprintf(csv, sizeof csv, "xu,type,kind,label,thread,cpu,start_ns,"
                                  "end_ns,c,d\n");
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(csv + len, sizeof csv - len, "%d,a:1,task,0.%d,0,0,0,1,%llu,"
                                "%llu\n", i + 1, i + 1, (unsigned long long)vals[i],
                                (unsigned long long)vals[N - 1 - i]);
    ompf_profile_t *p, *q;
    ompf_error_t err = {0};
    assert_int_equal(import_text(csv, len, "e.csv", NULL, &p, &err), 0);
    for (int i = 0; i < N; i++) {
        uint64_t u = 0, w = 0;
        assert_true(ompf_xu_value_u64(p, (size_t)i, 0, &u));
        assert_true(ompf_xu_value_u64(p, (size_t)i, 1, &w));
        assert_true(u == vals[i] && w == vals[N - 1 - i]);
        assert_true(ompf_xu_values_const(p, (size_t)i)[0] == (double)vals[i]);
    }
    /* 2^53 + 1, 2^64 - 2 and 2^64 - 1 have no double, in both columns */
    assert_int_equal(ompf_xu_exact_count(p), 6);
    size_t n1;
    char *t1 = export_text(p, &n1);
    assert_int_equal(n1, len);
    assert_memory_equal(t1, csv, len);

    /* Through a file: the counts come back, and the EXACT chunk is
     * flagged skippable (older readers read the rounded values). */
    char path[] = "/tmp/ompf-exact-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(ompf_profile_write(p, path, &err), 0);
    assert_int_equal(ompf_profile_read(path, &q, NULL, &err), 0);
    assert_int_equal(ompf_profile_compare(p, q, &err), 0);
    assert_int_equal(ompf_xu_exact_count(q), 6);
    size_t n2;
    char *t2 = export_text(q, &n2);
    assert_int_equal(n2, len);
    assert_memory_equal(t2, csv, len);
    unsigned char *buf = NULL;
    size_t blen = 0;
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char chunk[4096];
    while ((n2 = fread(chunk, 1, sizeof chunk, f)) > 0) {
        buf = realloc(buf, blen + n2);
        memcpy(buf + blen, chunk, n2);
        blen += n2;
    }
    fclose(f);
    unlink(path);
    int seen = 0;
    for (size_t off = FMT_HEADER_SIZE; off + FMT_CHUNK_HEADER_SIZE <= blen;
         off += FMT_CHUNK_HEADER_SIZE + fmt_get_u64(buf + off + 8))
        if (fmt_get_u32(buf + off) == FMT_CHUNK_EXACT) {
            seen++;
            assert_true(fmt_get_u32(buf + off + 4) & FMT_CF_SKIPPABLE);
            assert_int_equal(fmt_get_u32(buf + off + 24), 6);
        }
    assert_int_equal(seen, 1);
    free(buf);

    /* An exact count applies only while its row holds its double. */
    double *row = ompf_xu_values(p, 4);
    uint64_t u;
    row[0] = 5;
    assert_true(ompf_xu_value_u64(p, 4, 0, &u) && u == 5);
    assert_int_equal(ompf_xu_value_set_u64(p, 4, 0, 7), 0); /* drops 2^53 + 1 */
    row[0] = 9007199254740992.0;
    assert_true(ompf_xu_value_u64(p, 4, 0, &u) && u == 1ull << 53);
    row[0] = 1.5;
    assert_false(ompf_xu_value_u64(p, 4, 0, &u));
    assert_int_equal(ompf_xu_exact_count(p), 5);
    assert_int_equal(ompf_xu_value_set_u64(p, 99, 0, 7), OMPF_EINVAL);
    free(t1);
    free(t2);
    ompf_profile_destroy(p);
    ompf_profile_destroy(q);
}

/* The header may name at most OMPF_MAX_EVENTS events: at the limit it
 * imports, one more is refused naming the limit and the column. */
static void test_column_limit(void **state)
{
    (void)state;
    for (unsigned n = OMPF_MAX_EVENTS; n <= OMPF_MAX_EVENTS + 1; n++) {
        size_t cap = 64 + (size_t)n * 8, len = 0;
        char *t = malloc(cap);
        len += (size_t)snprintf(t, cap, "xu,type,kind,label,thread,cpu,start_ns,end_ns");
        for (unsigned e = 0; e < n; e++)
            len += (size_t)snprintf(t + len, cap - len, ",e%u", e);
        t[len++] = '\n';
        ompf_profile_t *p = NULL;
        ompf_error_t err = {0};
        int rc = import_text(t, len, "w.csv", NULL, &p, &err);
        if (n == OMPF_MAX_EVENTS) {
            assert_int_equal(rc, 0);
            assert_int_equal(ompf_event_count(p), n);
        } else {
            assert_int_equal(rc, OMPF_ERANGE);
            assert_non_null(strstr(err.msg, "w.csv:1:"));
            assert_non_null(strstr(err.msg, "16385 event columns"));
            assert_non_null(strstr(err.msg, "OMPF_MAX_EVENTS = 16384"));
        }
        ompf_profile_destroy(p);
        free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import_semantics),
        cmocka_unit_test(test_bad_csv),
        cmocka_unit_test(test_roundtrip_special),
        cmocka_unit_test(test_roundtrip_sizes),
        cmocka_unit_test(test_integers_exact),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_exact_counts),
        cmocka_unit_test(test_column_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
