/* EPD results out: the worst pairs of a target and the CSV rows
 * (columns: docs/evaluation.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epd_internal.h"
#include "ompfuse/csv.h"

static const ompf_eval_result_t *sort_res;
static int cmp_worst(const void *a, const void *b)
{
    double x = sort_res->pairs[*(const size_t *)a].tmd;
    double y = sort_res->pairs[*(const size_t *)b].tmd;
    if (x != y)
        return (x < y) - (x > y);
    return (*(const size_t *)a > *(const size_t *)b) -
           (*(const size_t *)a < *(const size_t *)b);
}

size_t ompf_eval_worst_pairs(const ompf_eval_result_t *r, size_t *idx,
                             size_t max)
{
    size_t n = 0;
    size_t *all = malloc((r->pairs_total ? r->pairs_total : 1) * sizeof *all);
    if (!all)
        return 0;
    for (size_t i = 0; i < r->pairs_total; i++)
        if (r->pairs[i].evaluated)
            all[n++] = i;
    /* qsort has no context argument in C11; results are read-only. */
    sort_res = r;
    qsort(all, n, sizeof *all, cmp_worst);
    sort_res = NULL;
    if (n > max)
        n = max;
    memcpy(idx, all, n * sizeof *idx);
    free(all);
    return n;
}

/* ---- CSV --------------------------------------------------------------- */

static size_t max_repeats(const ompf_eval_t *ev)
{
    size_t k = 0;
    for (size_t i = 0; i < ev->npairs; i++)
        if (ev->pairs[i].nrep > k)
            k = ev->pairs[i].nrep;
    return k;
}

static void csv_num(FILE *f, double v)
{
    if (!isnan(v))
        fprintf(f, "%.17g", v);
}

int ompf_eval_csv_header(const ompf_eval_t *ev, FILE *out)
{
    fputs("target,event_a,event_b,type,repeats,calibration,"
          "calibration_floor",
          out);
    size_t k = max_repeats(ev);
    for (size_t r = 1; r <= k; r++)
        fprintf(out, ",uncalibrated_%zu", r);
    fputs(",tmd,tmd_floor,left_out,binned,spearman_target,"
          "spearman_reference,status\n",
          out);
    return ferror(out) ? OMPF_EIO : 0;
}

int ompf_eval_csv_rows(const ompf_eval_t *ev, const ompf_eval_result_t *r,
                       FILE *out)
{
    size_t k = max_repeats(ev);
    for (size_t i = 0; i < r->pairs_total; i++) {
        const ompf_eval_pair_result_t *p = &r->pairs[i];
        const pair_t *pr = &ev->pairs[i];
        ompf_csv_field(out, r->target);
        fputc(',', out);
        ompf_csv_field(out, ev->evname[pr->ev[0]]);
        fputc(',', out);
        ompf_csv_field(out, ev->evname[pr->ev[1]]);
        fprintf(out, ",all,%zu,", pr->nrep);
        csv_num(out, p->calibration);
        fprintf(out, ",%d", p->calibration_floor);
        for (size_t q = 0; q < k; q++) {
            fputc(',', out);
            if (p->uncalibrated && q < pr->nrep && p->evaluated)
                csv_num(out, p->uncalibrated[q]);
        }
        fputc(',', out);
        csv_num(out, p->tmd);
        fprintf(out, ",%d,%llu,%llu,", p->tmd_floor,
                (unsigned long long)p->left_out,
                (unsigned long long)p->binned);
        csv_num(out, p->spearman_target);
        fputc(',', out);
        csv_num(out, p->spearman_reference);
        fputc(',', out);
        ompf_csv_field(out, p->evaluated ? "ok" : p->problem ? p->problem : "");
        fputc('\n', out);
        for (size_t t = 0; t < p->ntypes; t++) {
            const ompf_eval_type_result_t *tr = &p->types[t];
            ompf_csv_field(out, r->target);
            fputc(',', out);
            ompf_csv_field(out, ev->evname[pr->ev[0]]);
            fputc(',', out);
            ompf_csv_field(out, ev->evname[pr->ev[1]]);
            fputc(',', out);
            ompf_csv_field(out, tr->type);
            fprintf(out, ",%zu,", pr->nrep);
            csv_num(out, tr->problem && !tr->calibration ? NAN
                                                          : tr->calibration);
            fprintf(out, ",%d", tr->calibration_floor);
            for (size_t q = 0; q < k; q++) {
                fputc(',', out);
                if (tr->uncalibrated && q < pr->nrep)
                    csv_num(out, tr->uncalibrated[q]);
            }
            fputc(',', out);
            csv_num(out, tr->tmd);
            /* Spearman is per pair (all XUs): empty on type rows. */
            fprintf(out, ",%d,%llu,%llu,,,", tr->tmd_floor,
                    (unsigned long long)tr->left_out,
                    (unsigned long long)tr->binned);
            ompf_csv_field(out, tr->problem ? tr->problem : "ok");
            fputc('\n', out);
        }
    }
    return ferror(out) ? OMPF_EIO : 0;
}
