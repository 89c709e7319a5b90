/* The check macro of the C tests in tests/counters: a failed condition
 * prints file:line and a message, and is counted in `fails`, which the
 * test's main returns. */
#ifndef OMPF_TESTS_COUNTERS_CHECK_H
#define OMPF_TESTS_COUNTERS_CHECK_H

#include <stdio.h>

static int fails;
#define CHECK(c, ...)                                                       \
    do {                                                                    \
        if (!(c)) {                                                         \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);            \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
            fails++;                                                        \
        }                                                                   \
    } while (0)

#endif
