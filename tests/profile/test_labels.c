/* Reading labels into a profile's own trie: the nodes of a file are taken
 * as they come and checked for equal ones afterwards (profile/
 * file_read_labels.c, merge_appended).  A file that names one label under
 * two ids, which no writer makes but the format allows, must read as if
 * the label were named once: one node, and its XUs and children shared
 * (the tool writes such files: each thread names a worksharing
 * construct's label under an id of its own).
 * Checked on a small file and on one large enough for the partitioned
 * hash fill (label.c, hash_fill), against labels computed here; and
 * ompf_label_append, which the reader and fusion's output use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fbuild.h"
#include "fmt.h"
#include "gen.h"
#include "ompfuse/file.h"

static ompf_profile_t *read_bytes(bytes_t b)
{
    ompf_profile_t *p = NULL;
    ompf_read_info_t info;
    ompf_error_t err = {0};
    int rc = ompf_profile_read_mem(b.d, b.n, "labels.ompf", &p, &info, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    free(b.d);
    return p;
}

/* The trie a lookup per record gives (the reader before it appended):
 * records in the order resolution meets them (each after its parent;
 * here the files name parents first), through ompf_label_child. */
static void same_as_lookups(const ompf_profile_t *p, const fmt_label_rec_t *l, size_t n)
{
    ompf_profile_t *q;
    assert_int_equal(ompf_profile_create(&q), 0);
    uint32_t *node = malloc(n * sizeof *node);
    fmt_idmap_t at; /* record of each id */
    memset(&at, 0, sizeof at);
    for (size_t i = 0; i < n; i++) {
        uint32_t old, pr = l[i].parent ? fmt_idmap_get(&at, l[i].parent) : 0;
        assert_true(!l[i].parent || pr < i); /* parents first */
        assert_int_equal(ompf_label_child(q, l[i].parent ? node[pr] : OMPF_LABEL_ROOT,
                                          l[i].comp, &node[i]), 0);
        assert_int_equal(fmt_idmap_put(&at, l[i].id, (uint32_t)i, &old), 0);
    }
    fmt_idmap_free(&at);
    assert_int_equal(ompf_label_count(p), ompf_label_count(q));
    for (uint32_t x = 0; x < ompf_label_count(q); x++) {
        assert_int_equal(ompf_label_parent(p, x), ompf_label_parent(q, x));
        assert_int_equal(ompf_label_component(p, x), ompf_label_component(q, x));
        assert_int_equal(ompf_label_depth(p, x), ompf_label_depth(q, x));
    }
    free(node);
    ompf_profile_destroy(q);
}

static const char *label_of(const ompf_profile_t *p, size_t xu, char *buf, size_t n)
{
    ompf_label_format(p, ompf_xu_get(p, xu)->label, buf, n);
    return buf;
}

/* 0.1 under ids 1 and 2; 0.1.5 under ids 3 (child of 1) and 4 (child of 2);
 * 0.1.6 only under 2. */
static void test_small(void **state)
{
    (void)state;
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{1, 0, 1}, {2, 0, 1}, {3, 1, 5}, {4, 2, 5}, {5, 2, 6}};
    fb_labels(&f, l, 5);
    for (uint64_t lid = 1; lid <= 5; lid++)
        fb_xu(&f, 1, lid, 0, OMPF_XU_TASK);
    ompf_profile_t *p = read_bytes(fb_done(&f));
    assert_int_equal(ompf_label_count(p), 4); /* 0, 0.1, 0.1.5, 0.1.6 */
    same_as_lookups(p, l, 5);
    assert_int_equal(ompf_xu_count(p), 5);
    const char *want[] = {"0.1", "0.1", "0.1.5", "0.1.5", "0.1.6"};
    char buf[64];
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(label_of(p, i, buf, sizeof buf), want[i]);
    assert_int_equal(ompf_xu_get(p, 2)->label, ompf_xu_get(p, 3)->label);
    /* lookups after the read find the one node */
    uint32_t a, b;
    assert_int_equal(ompf_label_parse(p, "0.1.5", &a), 0);
    assert_int_equal(a, ompf_xu_get(p, 2)->label);
    assert_int_equal(ompf_label_parse(p, "0.1.7", &b), 0);
    assert_int_equal(ompf_label_count(p), 5);
    ompf_profile_destroy(p);
}

/* N ids in a binary tree (id i: parent i / 2, component i % 2 + 1, so id
 * i's label spells i's bits below the leading one), written children
 * first in the second half so that parents are resolved later too; with
 * dup, id N + 1 names the label of id D again and ids N + 2, N + 3 are its
 * children: component 1 (the label of id 2D) and 9 (new). */
#define N 100000u
#define D 777u

static void spell(uint64_t id, char *buf, size_t n)
{
    char tmp[128];
    size_t k = 0;
    for (; id > 1; id /= 2)
        tmp[k++] = (char)('1' + id % 2);
    size_t o = (size_t)snprintf(buf, n, "0");
    while (k > 0 && o + 2 < n) {
        buf[o++] = '.';
        buf[o++] = tmp[--k];
    }
    buf[o] = 0;
}

static void check_large(int dup)
{
    fb_t f;
    fb_prefix(&f);
    size_t nl = N - 1 + (dup ? 3 : 0), k = 0;
    fmt_label_rec_t *l = malloc(nl * sizeof *l);
    for (uint32_t i = 2; i <= N / 2; i++)
        l[k++] = (fmt_label_rec_t){i, i / 2 == 1 ? 0 : i / 2, i % 2 + 1};
    for (uint32_t i = N; i > N / 2; i--)
        l[k++] = (fmt_label_rec_t){i, i / 2 == 1 ? 0 : i / 2, i % 2 + 1};
    if (dup) {
        l[k++] = (fmt_label_rec_t){N + 1, D / 2, D % 2 + 1};
        l[k++] = (fmt_label_rec_t){N + 2, N + 1, 1};
        l[k++] = (fmt_label_rec_t){N + 3, N + 1, 9};
    }
    assert_int_equal(k, nl);
    fb_labels(&f, l, nl);
    uint64_t xl[] = {2, 3, D, 2 * D, N, N / 2 + 1, N + 1, N + 2, N + 3};
    size_t nx = dup ? 9 : 6;
    for (size_t i = 0; i < nx; i++)
        fb_xu(&f, 1, xl[i], 0, OMPF_XU_TASK);
    ompf_profile_t *p = read_bytes(fb_done(&f));
    /* the root and ids 2 .. N; with dup, one new node (component 9) */
    assert_int_equal(ompf_label_count(p), N + (dup ? 1 : 0));
    char got[128], want[128];
    for (size_t i = 0; i < 6; i++) {
        spell(xl[i], want, sizeof want);
        assert_string_equal(label_of(p, i, got, sizeof got), want);
    }
    if (dup) {
        assert_int_equal(ompf_xu_get(p, 6)->label, ompf_xu_get(p, 2)->label);
        assert_int_equal(ompf_xu_get(p, 7)->label, ompf_xu_get(p, 3)->label);
        spell(D, want, sizeof want);
        strcat(want, ".9");
        assert_string_equal(label_of(p, 8, got, sizeof got), want);
    }
    /* every node's label is distinct and found again by a lookup */
    for (uint32_t node = 1; node < ompf_label_count(p); node += 97) {
        uint32_t again;
        ompf_label_format(p, node, got, sizeof got);
        assert_int_equal(ompf_label_parse(p, got, &again), 0);
        assert_int_equal(again, node);
    }
    assert_int_equal(ompf_label_count(p), N + (dup ? 1 : 0));
    same_as_lookups(p, l, nl);
    free(l);
    ompf_profile_destroy(p);
}

/* One label under 10^6 ids: a hash fill that went on after the first
 * equal pair would probe one cluster of them all (quadratic: the fuzzer
 * found it as a 247-byte file that did not finish in 60 s; here it would
 * take many minutes, past the test's timeout). */
static void test_one_label_many_ids(void **state)
{
    (void)state;
    size_t n = 1000000;
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t *l = malloc(n * sizeof *l);
    for (size_t i = 0; i < n; i++)
        l[i] = (fmt_label_rec_t){i + 1, 0, 4};
    fb_labels(&f, l, n);
    free(l);
    fb_xu(&f, 1, n, 0, OMPF_XU_TASK);
    ompf_profile_t *p = read_bytes(fb_done(&f));
    assert_int_equal(ompf_label_count(p), 2);
    char buf[32];
    assert_string_equal(label_of(p, 0, buf, sizeof buf), "0.4");
    ompf_profile_destroy(p);
}

/* ompf_label_append: no lookup; the next lookup builds the index and
 * finds appended nodes, and refuses a trie given a child twice. */
static void test_append(void **state)
{
    (void)state;
    ompf_profile_t *p;
    assert_int_equal(ompf_profile_create(&p), 0);
    uint32_t a, b, c, again;
    assert_int_equal(ompf_label_append(p, OMPF_LABEL_ROOT, 3, &a), 0);
    assert_int_equal(ompf_label_append(p, a, 1, &b), 0);
    assert_int_equal(ompf_label_append(p, 9, 1, &c), OMPF_EINVAL); /* no node 9 */
    assert_int_equal(ompf_label_child(p, a, 1, &again), 0);
    assert_int_equal(again, b);
    assert_int_equal(ompf_label_count(p), 3);
    assert_int_equal(ompf_label_append(p, a, 1, &c), 0); /* a second 0.3.1 */
    assert_int_equal(ompf_label_child(p, a, 2, &again), OMPF_EINVAL);
    ompf_profile_destroy(p);
}

/* The tool names a worksharing construct's label under one id per thread.
 * Two "threads" (ids A | n and B | n, as the tool's) each name W labels
 * 0.i, alternately, so that equal nodes meet in the same round of the
 * fill; then each names 0.i.5 under its own id of 0.i (a level of 2W
 * nodes, wider than the merge's partitioned path, half of them equal to
 * the other half once their parents are merged), and B names 100 labels
 * 0.i.6.  Read into a profile's own trie, and into a shared trie
 * (combine's first input), after which a second file is looked up there;
 * both node for node the trie of a lookup per record. */
#define W 70000u
#define TA (1ull << 40)
#define TB (2ull << 40)

static fmt_label_rec_t *wide_records(size_t *n)
{
    size_t nl = 4 * (size_t)W + 100, k = 0;
    fmt_label_rec_t *l = malloc(nl * sizeof *l);
    for (uint64_t i = 1; i <= W; i++) {
        l[k++] = (fmt_label_rec_t){TA | i, 0, i};
        l[k++] = (fmt_label_rec_t){TB | i, 0, i};
    }
    for (uint64_t i = 1; i <= W; i++) {
        l[k++] = (fmt_label_rec_t){TB | (W + i), TB | i, 5};
        l[k++] = (fmt_label_rec_t){TA | (W + i), TA | i, 5};
    }
    for (uint64_t i = 1; i <= 100; i++)
        l[k++] = (fmt_label_rec_t){TB | (2 * W + i), TB | i, 6};
    *n = k;
    return l;
}

static bytes_t wide_file(void)
{
    fb_t f;
    fb_prefix(&f);
    size_t nl;
    fmt_label_rec_t *l = wide_records(&nl);
    fb_labels(&f, l, nl);
    free(l);
    uint64_t xl[] = {TA | 7, TB | 7, TB | (W + 7), TA | (W + 7), TB | (2 * W + 7), TA | W};
    for (size_t i = 0; i < 6; i++)
        fb_xu(&f, 1, xl[i], 0, OMPF_XU_TASK);
    return fb_done(&f);
}

static void check_wide(const ompf_profile_t *p, const ompf_profile_t *space)
{
    assert_int_equal(ompf_label_count(space), 1 + 2 * W + 100);
    const ompf_profile_t *lt = ompf_profile_label_space(p);
    assert_ptr_equal(lt, space);
    char buf[64];
    const char *want[] = {"0.7", "0.7", "0.7.5", "0.7.5", "0.7.6", "0.70000"};
    for (size_t i = 0; i < 6; i++) {
        ompf_label_format(lt, ompf_xu_get(p, i)->label, buf, sizeof buf);
        assert_string_equal(buf, want[i]);
    }
    assert_int_equal(ompf_xu_get(p, 0)->label, ompf_xu_get(p, 1)->label);
    assert_int_equal(ompf_xu_get(p, 2)->label, ompf_xu_get(p, 3)->label);
    size_t nl;
    fmt_label_rec_t *l = wide_records(&nl);
    same_as_lookups(space, l, nl);
    free(l);
}

static void test_wide_equal(void **state)
{
    (void)state;
    ompf_profile_t *p = read_bytes(wide_file());
    check_wide(p, p);
    ompf_profile_destroy(p);

    char *dir = gen_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/wide.ompf", dir);
    bytes_t b = wide_file();
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(b.d, 1, b.n, fp), b.n);
    fclose(fp);
    free(b.d);
    ompf_profile_t *space, *a, *c;
    assert_int_equal(ompf_profile_create(&space), 0);
    ompf_error_t err = {0};
    assert_int_equal(ompf_profile_read_into(path, 0, space, &a, NULL, &err), 0);
    check_wide(a, space);
    /* the second read looks its labels up in the merged trie */
    assert_int_equal(ompf_profile_read_into(path, 0, space, &c, NULL, &err), 0);
    check_wide(c, space);
    assert_int_equal(ompf_xu_get(a, 2)->label, ompf_xu_get(c, 2)->label);
    ompf_profile_destroy(a);
    ompf_profile_destroy(c);
    ompf_profile_destroy(space);
    gen_rmdir(dir);
}

static void test_large(void **state)
{
    (void)state;
    check_large(0);
}

static void test_large_dup(void **state)
{
    (void)state;
    check_large(1);
}

/* The binary tree of check_large (ids 2 .. N) written in the order of
 * perm, in chunks of 997 records, and XUs naming ids xl. */
static const uint64_t tree_xl[] = {2, 3, D, 2 * D, N, N / 2 + 1};
#define TREE_NX (sizeof tree_xl / sizeof *tree_xl)

static bytes_t tree_file(const uint32_t *perm)
{
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[997];
    size_t k = 0;
    for (size_t j = 0; j < N - 1; j++) {
        uint32_t i = perm[j];
        l[k++] = (fmt_label_rec_t){i, i / 2 == 1 ? 0 : i / 2, i % 2 + 1};
        if (k == 997 || j == N - 2) {
            fb_labels(&f, l, k);
            k = 0;
        }
    }
    for (size_t i = 0; i < TREE_NX; i++)
        fb_xu(&f, 1, tree_xl[i], 0, OMPF_XU_TASK);
    return fb_done(&f);
}

static void check_tree(const ompf_profile_t *p)
{
    const ompf_profile_t *lt = ompf_profile_label_space(p);
    assert_int_equal(ompf_label_count(lt), N); /* the root and ids 2 .. N */
    char got[128], want[128];
    for (size_t i = 0; i < TREE_NX; i++) {
        spell(tree_xl[i], want, sizeof want);
        ompf_label_format(lt, ompf_xu_get(p, i)->label, got, sizeof got);
        assert_string_equal(got, want);
    }
    /* every node after its parent, and its label distinct */
    for (uint32_t node = 1; node < ompf_label_count(lt); node++)
        assert_true(ompf_label_parent(lt, node) < node);
    ompf_profile_t *q;
    assert_int_equal(ompf_profile_create(&q), 0);
    for (uint32_t node = 1; node < ompf_label_count(lt); node++) {
        uint32_t again;
        ompf_label_format(lt, node, got, sizeof got);
        assert_int_equal(ompf_label_parse(q, got, &again), 0);
    }
    assert_int_equal(ompf_label_count(q), N);
    ompf_profile_destroy(q);
}

static char *write_tmp(const char *dir, const char *name, bytes_t b)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    gen_spit(path, b.d, b.n);
    free(b.d);
    return path;
}

/* Records before their parents (the tool writes a task's label in the
 * chunk of the thread that created it, which may come after its
 * children's): all of them (reversed), and a random order, read into a
 * profile's own trie and, after a parents-first file, into a shared one
 * (combine's second input, whose labels are looked up). */
static void test_children_first(void **state)
{
    (void)state;
    uint32_t *perm = malloc((N - 1) * sizeof *perm);
    char *dir = gen_tmpdir();
    for (uint32_t j = 0; j < N - 1; j++)
        perm[j] = j + 2;
    char *first = write_tmp(dir, "first.ompf", tree_file(perm));
    for (int order = 0; order < 2; order++) {
        if (order == 0)
            for (uint32_t j = 0; j < N - 1; j++)
                perm[j] = N - j;
        else
            for (uint32_t j = N - 2, x = 12345; j > 0; j--) {
                x = x * 1103515245u + 12345u;
                uint32_t r = (x >> 8) % (j + 1), t = perm[j];
                perm[j] = perm[r];
                perm[r] = t;
            }
        ompf_profile_t *p = read_bytes(tree_file(perm));
        check_tree(p);
        ompf_profile_destroy(p);
        char *path = write_tmp(dir, "later.ompf", tree_file(perm));
        ompf_profile_t *space, *a, *b;
        ompf_error_t err = {0};
        assert_int_equal(ompf_profile_create(&space), 0);
        assert_int_equal(ompf_profile_read_into(first, 0, space, &a, NULL, &err), 0);
        assert_int_equal(ompf_profile_read_into(path, 0, space, &b, NULL, &err), 0);
        check_tree(a);
        check_tree(b);
        for (size_t i = 0; i < TREE_NX; i++)
            assert_int_equal(ompf_xu_get(a, i)->label, ompf_xu_get(b, i)->label);
        ompf_profile_destroy(a);
        ompf_profile_destroy(b);
        ompf_profile_destroy(space);
        free(path);
    }
    free(first);
    free(perm);
    gen_rmdir(dir);
}

/* A read that fails leaves a shared trie as it was, whether it appended
 * (the trie held the root alone) or looked up; OMPF_LABELS_LAST drops the
 * trie's hash, and a later lookup builds it again. */
static void test_shared_trie_kept(void **state)
{
    (void)state;
    char *dir = gen_tmpdir();
    uint32_t *perm = malloc((N - 1) * sizeof *perm);
    for (uint32_t j = 0; j < N - 1; j++)
        perm[j] = j + 2;
    char *good = write_tmp(dir, "good.ompf", tree_file(perm));
    /* new labels, then one whose parent no record defines */
    fb_t f;
    fb_prefix(&f);
    fmt_label_rec_t l[] = {{1, 0, 7}, {2, 1, 8}, {3, 99, 1}};
    fb_labels(&f, l, 3);
    char *bad = write_tmp(dir, "bad.ompf", fb_done(&f));
    ompf_profile_t *space, *a, *b = (ompf_profile_t *)1;
    ompf_error_t err = {0};
    assert_int_equal(ompf_profile_create(&space), 0);
    assert_int_equal(ompf_profile_read_into(bad, 0, space, &b, NULL, &err), OMPF_EFORMAT);
    assert_null(b);
    assert_non_null(strstr(err.msg, "label id 3 has parent id 99"));
    assert_int_equal(ompf_label_count(space), 1);
    assert_int_equal(ompf_profile_read_into(good, 0, space, &a, NULL, &err), 0);
    check_tree(a);
    assert_int_equal(ompf_profile_read_into(bad, 0, space, &b, NULL, &err), OMPF_EFORMAT);
    assert_int_equal(ompf_label_count(space), N);
    uint32_t node;
    assert_int_equal(ompf_label_parse(space, "0.7", &node), 0);
    assert_int_equal(node, N); /* a new node, not one the failed read left */
    assert_int_equal(ompf_label_parse(space, "0.7", &node), 0);
    assert_int_equal(node, N);
    /* the last read: labels found, hash dropped, lookups still right */
    assert_int_equal(ompf_profile_read_into(good, OMPF_LABELS_LAST, space, &b, NULL, &err), 0);
    assert_int_equal(ompf_label_count(space), N + 1);
    for (size_t i = 0; i < TREE_NX; i++)
        assert_int_equal(ompf_xu_get(a, i)->label, ompf_xu_get(b, i)->label);
    assert_int_equal(ompf_label_parse(space, "0.7", &node), 0);
    assert_int_equal(node, N);
    ompf_profile_destroy(a);
    ompf_profile_destroy(b);
    ompf_profile_destroy(space);
    free(good);
    free(bad);
    free(perm);
    gen_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_large_dup),
        cmocka_unit_test(test_one_label_many_ids),
        cmocka_unit_test(test_append),
        cmocka_unit_test(test_wide_equal),
        cmocka_unit_test(test_children_first),
        cmocka_unit_test(test_shared_trie_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
