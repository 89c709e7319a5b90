/* Prints a profile as stable text lines for the tool tests:
 *   info truncated <0|1> xus_read <n> xus_dropped <n>
 *   meta <key> <value>
 *   event <name> <status>
 *   xu <label> <kind> <construct-name> <construct-kind> <thread> <team_thread>
 *      <team_size> <cpu> <iter_start> <iter_count> <parts> <start> <end> <values...>
 *   part <xu-index> <thread> <start> <end>   (after its xu line; XUs with
 *                                            recorded parts only)
 *   construct <name> <kind> <build-id> <offset> <module>
 *   thread <index> <tid> total <v...> gap <v...> enabled <v...> running <v...>
 * With -s (summary, for huge profiles): meta and event lines, then
 *   summary xus <n> threads <n> distinct_labels <n>
 * Exit 0 for a complete file, 3 for a salvaged truncated one, 1 on error. */
#include <stdio.h>
#include <stdlib.h>

#include "ompfuse/file.h"
#include "ompfuse/profile.h"

static void val(double v)
{
    if (ompf_is_missing(v))
        printf(" NA");
    else
        printf(" %.0f", v);
}

int main(int argc, char **argv)
{
    int summary = argc == 3 && argv[1][0] == '-' && argv[1][1] == 's';
    if (argc != 2 && !summary) {
        fprintf(stderr, "usage: %s [-s] PROFILE\n", argv[0]);
        return 2;
    }
    const char *path = argv[argc - 1];
    ompf_profile_t *p = NULL;
    ompf_read_info_t info;
    ompf_error_t err;
    int rc = ompf_profile_read(path, &p, &info, &err);
    if (rc != 0 && rc != OMPF_ETRUNC) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("info truncated %d xus_read %llu xus_dropped %llu\n",
           info.truncated, (unsigned long long)info.xus_read,
           (unsigned long long)info.xus_dropped);
    for (size_t i = 0; i < ompf_meta_count(p); i++) {
        const char *k, *v;
        ompf_meta_at(p, i, &k, &v);
        printf("meta %s %s\n", k, v);
    }
    size_t ne = ompf_event_count(p);
    for (uint32_t e = 0; e < ne; e++) {
        const ompf_event_t *ev = ompf_event_get(p, e);
        printf("event %s %s %s\n", ev->name,
               ompf_event_status_name((ompf_event_status_t)ev->status),
               ev->reason ? ev->reason : "");
    }
    if (summary) {
        size_t nl = ompf_label_count(p), distinct = 0;
        unsigned char *seen = calloc(nl ? nl : 1, 1);
        for (size_t i = 0; seen && i < ompf_xu_count(p); i++) {
            uint32_t l = ompf_xu_get(p, i)->label;
            if (l < nl && !seen[l]) {
                seen[l] = 1;
                distinct++;
            }
        }
        free(seen);
        printf("summary xus %zu threads %zu distinct_labels %zu\n",
               ompf_xu_count(p), ompf_thread_count(p), distinct);
        ompf_profile_destroy(p);
        return rc == OMPF_ETRUNC ? 3 : 0;
    }
    for (uint32_t c = 0; c < ompf_construct_count(p); c++) {
        const ompf_construct_t *k = ompf_construct_get(p, c);
        printf("construct %s %s %s %llu %s\n", k->name,
               ompf_construct_kind_name((ompf_construct_kind_t)k->kind),
               k->build_id && *k->build_id ? k->build_id : "-",
               (unsigned long long)k->offset,
               k->module && *k->module ? k->module : "-");
    }
    char lab[4096];
    for (size_t i = 0; i < ompf_xu_count(p); i++) {
        const ompf_xu_t *x = ompf_xu_get(p, i);
        const ompf_construct_t *c = ompf_construct_get(p, x->type);
        ompf_label_format(p, x->label, lab, sizeof lab);
        printf("xu %s %s %s %s %u %u %u %d %llu %llu %u %llu %llu", lab,
               ompf_xu_kind_name((ompf_xu_kind_t)x->kind),
               c ? c->name : "?",
               c ? ompf_construct_kind_name((ompf_construct_kind_t)c->kind)
                 : "?",
               x->thread, x->team_thread, x->team_size, x->cpu,
               (unsigned long long)x->iter_start,
               (unsigned long long)x->iter_count, x->parts,
               (unsigned long long)x->start_ns,
               (unsigned long long)x->end_ns);
        const double *v = ompf_xu_values_const(p, i);
        for (size_t e = 0; e < ne; e++)
            val(v[e]);
        printf("\n");
        uint32_t np;
        ompf_part_t one;
        const ompf_part_t *pt = ompf_xu_parts(p, i, &np, &one);
        for (uint32_t k = 0; ompf_xu_has_parts(p, i) && k < np; k++)
            printf("part %zu %u %llu %llu\n", i, pt[k].thread,
                   (unsigned long long)pt[k].start_ns, (unsigned long long)pt[k].end_ns);
    }
    for (uint32_t t = 0; t < ompf_thread_count(p); t++) {
        const ompf_thread_t *th = ompf_thread_get_const(p, t);
        printf("thread %u %d total", th->index, th->os_tid);
        for (size_t e = 0; e < ne; e++)
            val(th->total[e]);
        printf(" gap");
        for (size_t e = 0; e < ne; e++)
            val(th->gap[e]);
        printf(" enabled");
        for (size_t e = 0; e < ne; e++)
            val(th->enabled_ns ? th->enabled_ns[e] : OMPF_MISSING);
        printf(" running");
        for (size_t e = 0; e < ne; e++)
            val(th->running_ns ? th->running_ns[e] : OMPF_MISSING);
        printf("\n");
    }
    ompf_profile_destroy(p);
    return rc == OMPF_ETRUNC ? 3 : 0;
}
