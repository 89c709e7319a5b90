/* ompf_read_file, table-driven: sizes around the limit and the buffer's
 * growth steps, embedded NUL bytes, empty and missing files. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ompfuse/file.h"

typedef struct rcase {
    size_t size, max;
    int rc;
} rcase_t;

static const rcase_t cases[] = {
    {0, 16, 0},        {1, 16, 0},        {16, 16, 0},     {17, 16, OMPF_ERANGE},
    {4095, 4095, 0},   {4096, 4096, 0},   {4097, 1 << 20, 0},
    {100000, 99999, OMPF_ERANGE},         {100000, 100000, 0},
};

static void test_sizes(void **state)
{
    (void)state;
    char path[] = "/tmp/ompf-readfile-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const rcase_t *c = &cases[k];
        unsigned char *want = malloc(c->size + 1);
        for (size_t i = 0; i < c->size; i++)
            want[i] = (unsigned char)(i * 7 + k); /* NUL bytes included */
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(want, 1, c->size, f), c->size);
        fclose(f);
        char *data = (char *)1;
        size_t len = 99;
        int rc = ompf_read_file(path, c->max, &data, &len);
        printf("size %zu max %zu: rc %d\n", c->size, c->max, rc);
        assert_int_equal(rc, c->rc);
        if (rc == 0) {
            assert_int_equal(len, c->size);
            assert_memory_equal(data, want, c->size);
            assert_int_equal(data[len], '\0');
        } else {
            assert_null(data);
            assert_int_equal(len, 0);
        }
        free(data);
        free(want);
    }
    unlink(path);
}

static void test_missing(void **state)
{
    (void)state;
    char *data = (char *)1;
    errno = 0;
    assert_int_equal(ompf_read_file("/nonexistent/ompf", 16, &data, NULL),
                     OMPF_EIO);
    assert_int_equal(errno, ENOENT);
    assert_null(data);
    /* a directory opens but cannot be read */
    assert_int_equal(ompf_read_file("/tmp", 16, &data, NULL), OMPF_EIO);
    assert_null(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
