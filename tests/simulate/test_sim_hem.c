/* The simulator's HEM estimators (simulate/sim_internal.h) give exactly what
 * the real HEM modes compute (hem/estimate.c) on the same readings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ompfuse/hem.h"
#include "sim_internal.h"

static void test_same_estimates(void **state)
{
    (void)state;
    sim_rng_t r;
    sim_rng_init(&r, 42, 1, 2);
    for (int i = 0; i < 100000; i++) {
        /* Cumulative readings: value, enabled, running never decrease;
         * running <= enabled; include zero running and no multiplexing. */
        uint64_t e0 = sim_next(&r) % 1000000, e1 = e0 + sim_next(&r) % 1000000;
        uint64_t r0 = i % 7 == 0 ? 0 : sim_next(&r) % (e0 + 1);
        uint64_t r1 = r0 + (i % 5 == 0 ? 0 : sim_next(&r) % (e1 - e0 + 1));
        if (i % 11 == 0) {
            r0 = e0;
            r1 = e1;
        }
        uint64_t v0 = sim_next(&r) % 100000000, v1 = v0 + sim_next(&r) % 100000000;
        sim_reading_t a = {v0, e0, r0}, b = {v1, e1, r1};
        ompf_hem_reading_t ha = {v0, e0, r0}, hb = {v1, e1, r1};
        double s1 = sim_hem_cumulative(&a, &b), s2 = ompf_hem_cumulative(&ha, &hb);
        double d1 = sim_hem_delta(&a, &b), d2 = ompf_hem_delta(&ha, &hb);
        assert_true(s1 == s2);
        assert_int_equal(ompf_is_missing(d1), ompf_is_missing(d2));
        if (!ompf_is_missing(d1))
            assert_true(d1 == d2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_same_estimates)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
