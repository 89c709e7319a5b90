/* The declared-count limits of docs/format.md ("Limits"), table-driven:
 * for each limit a profile at the limit reads, one past it is refused with
 * OMPF_ERANGE and a message naming the file, the limit and the value.
 *
 * `test_profile_limits --write-events N PATH` writes a profile declaring N
 * events (no XUs) for the command-line tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gen.h"
#include "ompfuse/file.h"

typedef ompf_profile_t *(*build_fn)(uint32_t n);

static ompf_profile_t *fresh(void)
{
    ompf_profile_t *p;
    if (ompf_profile_create(&p))
        abort();
    return p;
}

static ompf_profile_t *with_events(uint32_t n)
{
    ompf_profile_t *p = fresh();
    char name[32];
    for (uint32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "e%u", i);
        ompf_event_t ev = {.name = name, .status = OMPF_EV_COUNTED, .source = -1};
        if (ompf_event_add(p, &ev, NULL))
            abort();
    }
    return p;
}

static ompf_profile_t *with_meta(uint32_t n)
{
    ompf_profile_t *p = fresh();
    char k[32];
    for (uint32_t i = 0; i < n; i++) {
        snprintf(k, sizeof k, "k%u", i);
        if (ompf_meta_set(p, k, "v"))
            abort();
    }
    return p;
}

static ompf_profile_t *with_sources(uint32_t n)
{
    ompf_profile_t *p = fresh();
    for (uint32_t i = 0; i < n; i++) {
        ompf_source_t s = {.run_id = i + 1, .path = "r.ompf"};
        if (ompf_source_add(p, &s, NULL))
            abort();
    }
    return p;
}

static ompf_profile_t *with_threads(uint32_t n)
{
    ompf_profile_t *p = fresh();
    for (uint32_t i = 0; i < n; i++)
        if (ompf_thread_add(p, -1, NULL))
            abort();
    return p;
}

static ompf_profile_t *with_constructs(uint32_t n)
{
    ompf_profile_t *p = fresh();
    for (uint32_t i = 0; i < n; i++) {
        ompf_construct_t c = {.module = "a.out", .build_id = "", .offset = i,
                              .kind = OMPF_CK_UNKNOWN, .name = "c"};
        if (ompf_construct_add(p, &c, NULL))
            abort();
    }
    return p;
}

typedef struct lcase {
    const char *what;
    build_fn build;
    uint32_t limit;
    const char *name; /* of the limit, in the message */
} lcase_t;

static const lcase_t cases[] = {
    {"events", with_events, OMPF_MAX_EVENTS, "OMPF_MAX_EVENTS"},
    {"metadata", with_meta, OMPF_MAX_META, "OMPF_MAX_META"},
    {"sources", with_sources, OMPF_MAX_SOURCES, "OMPF_MAX_SOURCES"},
    {"threads", with_threads, OMPF_MAX_THREADS, "OMPF_MAX_THREADS"},
    {"constructs", with_constructs, OMPF_MAX_CONSTRUCTS, "OMPF_MAX_CONSTRUCTS"},
};

static void test_limits(void **state)
{
    (void)state;
    char *dir = gen_tmpdir();
    char path[512];
    int failures = 0;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const lcase_t *c = &cases[k];
        snprintf(path, sizeof path, "%s/%s.ompf", dir, c->what);
        for (uint32_t n = c->limit; n <= c->limit + 1; n++) {
            ompf_profile_t *p = c->build(n);
            ompf_error_t err = {0};
            assert_int_equal(ompf_profile_write(p, path, &err), 0);
            ompf_profile_destroy(p);
            ompf_read_info_t info;
            int rc = ompf_profile_read(path, &p, &info, &err);
            char num[32];
            snprintf(num, sizeof num, "%u", n);
            int ok = n == c->limit
                         ? rc == 0 && p
                         : rc == OMPF_ERANGE && !p && strstr(err.msg, path) &&
                               strstr(err.msg, c->name) && strstr(err.msg, num);
            if (!ok) {
                fprintf(stderr, "%s, %u: rc %d: %s\n", c->what, n, rc, err.msg);
                failures++;
            }
            ompf_profile_destroy(p);
        }
    }
    gen_rmdir(dir);
    assert_int_equal(failures, 0);
}

/* Label depth: written with the streaming writer, which (like the tool)
 * does not look at depth; the reader refuses a chain deeper than the
 * limit.  In memory, ompf_label_child refuses to go deeper. */
static int write_chain(const char *path, uint32_t depth)
{
    ompf_profile_t *h = with_events(1);
    ompf_writer_t *w;
    ompf_wstream_t *s;
    ompf_error_t err;
    if (ompf_writer_create(path, h, &w, &err) || ompf_wstream_create(w, 0, &s))
        abort();
    ompf_profile_destroy(h);
    for (uint32_t i = 1; i <= depth; i++)
        if (ompf_wstream_label(s, i, i - 1, 1))
            abort();
    ompf_construct_t c = {.module = "a.out", .build_id = "", .offset = 1,
                          .kind = OMPF_CK_TASK};
    ompf_xu_t x = {.id = 1, .kind = OMPF_XU_TASK, .parts = 1, .cpu = -1, .core = -1,
                   .numa = -1, .start_ns = 1, .end_ns = 2};
    double v = 3;
    ompf_thread_t t = {0};
    double tv[4] = {0};
    t.total = tv, t.gap = tv + 1, t.enabled_ns = tv + 2, t.running_ns = tv + 3;
    if (ompf_wstream_construct(s, 1, &c) || ompf_wstream_xu(s, &x, 1, depth, &v) ||
        ompf_wstream_thread(s, &t))
        abort();
    return ompf_writer_finish(w, NULL, &err);
}

static void test_label_depth(void **state)
{
    (void)state;
    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/deep.ompf", dir);
    for (uint32_t d = OMPF_MAX_LABEL_DEPTH; d <= OMPF_MAX_LABEL_DEPTH + 1; d++) {
        assert_int_equal(write_chain(path, d), 0);
        ompf_profile_t *p = NULL;
        ompf_read_info_t info;
        ompf_error_t err = {0};
        int rc = ompf_profile_read(path, &p, &info, &err);
        if (d == OMPF_MAX_LABEL_DEPTH) {
            if (rc)
                fprintf(stderr, "%s\n", err.msg);
            assert_int_equal(rc, 0);
            assert_int_equal(ompf_label_depth(p, ompf_xu_get(p, 0)->label), d);
            uint32_t node;
            assert_int_equal(ompf_label_child(p, ompf_xu_get(p, 0)->label, 1, &node),
                             OMPF_ERANGE);
        } else {
            assert_int_equal(rc, OMPF_ERANGE);
            assert_null(p);
            assert_non_null(strstr(err.msg, path));
            assert_non_null(strstr(err.msg, "OMPF_MAX_LABEL_DEPTH"));
        }
        ompf_profile_destroy(p);
    }
    gen_rmdir(dir);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--write-events")) {
        ompf_profile_t *p = with_events((uint32_t)strtoul(argv[2], NULL, 10));
        ompf_error_t err;
        int rc = ompf_profile_write(p, argv[3], &err);
        if (rc)
            fprintf(stderr, "%s\n", err.msg);
        ompf_profile_destroy(p);
        return rc ? 2 : 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_label_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
