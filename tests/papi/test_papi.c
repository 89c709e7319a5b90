/* PAPI preset names (counters/papi.c), table-driven like libpfm4's own
 * validation tests: every preset is encoded exactly as the perf event it
 * stands for, under its own name; names that are not presets we map are
 * refused with a sentence that points to the table, never encoded. */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "ompfuse/counters.h"

static int fails;
#define CHECK(c, ...)                                                  \
    do {                                                               \
        if (!(c)) {                                                    \
            fprintf(stderr, "FAIL: " __VA_ARGS__);                     \
            fputc('\n', stderr);                                       \
            fails++;                                                   \
        }                                                              \
    } while (0)

int main(void)
{
    size_t n = ompf_papi_preset_count();
    CHECK(n >= 10, "only %zu presets", n);
    for (size_t i = 0; i < n; i++) {
        const ompf_papi_preset_t *pp = ompf_papi_preset_at(i);
        CHECK(ompf_papi_preset_find(pp->papi) == pp, "%s not found by name", pp->papi);
        const char *names[2] = {pp->papi, pp->perf};
        ompf_cnt_set_t *s = NULL;
        ompf_error_t err;
        if (ompf_cnt_set_create(names, 2, &s, &err)) {
            CHECK(0, "%s: set: %s", pp->papi, err.msg);
            continue;
        }
        struct perf_event_attr a, b;
        ompf_cnt_set_attr(s, 0, &a, sizeof a);
        ompf_cnt_set_attr(s, 1, &b, sizeof b);
        /* encoding failures differ only by name; a preset must encode */
        CHECK(ompf_cnt_set_status(s, 1, NULL) != OMPF_CNT_UNKNOWN,
              "%s: libpfm4 does not know %s", pp->papi, pp->perf);
        CHECK(a.type == b.type && a.config == b.config && a.config1 == b.config1 &&
                  a.config2 == b.config2 && a.exclude_user == b.exclude_user &&
                  a.exclude_kernel == b.exclude_kernel,
              "%s encodes as type %u config %#llx, %s as type %u config %#llx", pp->papi,
              a.type, (unsigned long long)a.config, pp->perf, b.type,
              (unsigned long long)b.config);
        CHECK(!strcmp(ompf_cnt_set_name(s, 0), pp->papi), "%s recorded as %s", pp->papi,
              ompf_cnt_set_name(s, 0));
        ompf_event_t ev;
        ompf_cnt_set_event(s, 0, &ev);
        CHECK(!strcmp(ev.name, pp->papi), "profile event named %s, not %s", ev.name,
              pp->papi);
        ompf_cnt_set_destroy(s);
    }
    /* PAPI's own meanings of a few generic events (papiStdEventDefs) */
    static const struct {
        const char *papi;
        unsigned type;
        unsigned long long config;
    } known[] = {
        {"PAPI_TOT_CYC", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
        {"PAPI_TOT_INS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
        {"PAPI_BR_MSP", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
        {"PAPI_BR_INS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
        {"PAPI_L3_TCM", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
        {"PAPI_L1_DCM", PERF_TYPE_HW_CACHE,
         PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
             (PERF_COUNT_HW_CACHE_RESULT_MISS << 16)},
    };
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        ompf_cnt_set_t *s = NULL;
        ompf_error_t err;
        if (ompf_cnt_set_create(&known[i].papi, 1, &s, &err)) {
            CHECK(0, "%s: %s", known[i].papi, err.msg);
            continue;
        }
        struct perf_event_attr a;
        ompf_cnt_set_attr(s, 0, &a, sizeof a);
        CHECK(a.type == known[i].type && a.config == known[i].config,
              "%s: type %u config %#llx, want %u %#llx", known[i].papi, a.type,
              (unsigned long long)a.config, known[i].type, known[i].config);
        ompf_cnt_set_destroy(s);
    }
    /* not a preset we map, and a preset's name with a typo */
    static const char *const refused[] = {"PAPI_L2_TCM", "PAPI_TOT_CY", "PAPI_"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        ompf_cnt_set_t *s = NULL;
        ompf_error_t err;
        if (ompf_cnt_set_create(&refused[i], 1, &s, &err)) {
            CHECK(0, "%s: %s", refused[i], err.msg);
            continue;
        }
        const char *why = NULL;
        CHECK(ompf_cnt_set_status(s, 0, &why) == OMPF_CNT_UNKNOWN, "%s accepted", refused[i]);
        CHECK(why && strstr(why, refused[i]) && strstr(why, "ompfuse events --papi"),
              "%s: reason %s", refused[i], why ? why : "(none)");
        ompf_cnt_set_destroy(s);
    }
    printf("%zu presets checked: %d failed\n", n, fails);
    return fails != 0;
}
