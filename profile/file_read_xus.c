/* Pass 2 of the profile reader: the XUS chunks, decoded column by column
 * straight into the profile (dangling references of a truncated file drop
 * their XUs). */
#include <stdio.h>
#include <stdlib.h>

#include "file_read.h"

/* ---- pass 2: XUs ------------------------------------------------------ */

static int dec_xus(rd_t *r, const xus_loc_t *loc, double *row)
{
    r->chunk_index = loc->chunk;
    r->chunk_off = loc->off;
    r->chunk_type = FMT_CHUNK_XUS;
    fmt_cur_t c;
    int rc = rd_payload(r, &loc->h, r->buf + loc->off + FMT_CHUNK_HEADER_SIZE, &c);
    if (rc)
        return rc;
    size_t nev = ompf_event_count(r->p), nsrc = ompf_source_count(r->p);
    uint64_t n_ev = fmt_cur_uv(&c), n_prov = fmt_cur_uv(&c);
    if (c.bad)
        return rd_finish_payload(r, &c);
    if (n_ev != nev)
        return rd_fail(r, OMPF_EFORMAT, "XUs carry %llu values each but the profile has %zu "
                    "events; " MALFORMED, (unsigned long long)n_ev, nev);
    if (n_prov != nsrc)
        return rd_fail(r, OMPF_EFORMAT, "XUs carry %llu provenance ids each but the profile has "
                    "%zu sources; " MALFORMED, (unsigned long long)n_prov, nsrc);
    /* Locate every column, then read the rows across them. */
    size_t ncol = FMT_XU_COLUMNS + nev + nsrc;
    mcol_t *col = malloc(ncol * sizeof *col);
    if (!col)
        return rd_oom(r);
    uint64_t n = loc->h.count;
    for (size_t k = 0; k < ncol; k++)
        rd_mcol_begin(r, &col[k], &c, n, k < FMT_XU_COLUMNS,
                   k >= FMT_XU_COLUMNS && k < FMT_XU_COLUMNS + nev);
    rc = rd_finish_payload(r, &c);
    uint64_t prev[FMT_XU_COLUMNS] = {0};
    uint64_t *pprev = calloc(nsrc + 1, sizeof *pprev);
    if (!pprev && !rc)
        rc = rd_oom(r);
    size_t nth = ompf_thread_count(r->p);
    for (uint64_t i = 0; i < n && !rc; i++) {
        ompf_xu_t x = {0};
        x.id = prev[0] += (uint64_t)mcol_sv(&col[0]);
        uint64_t cid = prev[1] += (uint64_t)mcol_sv(&col[1]);
        uint64_t lid = prev[2] += (uint64_t)mcol_sv(&col[2]);
        uint64_t thread = mcol_uv(&col[3]), team_thread = mcol_uv(&col[4]),
                 team_size = mcol_uv(&col[5]), parts = mcol_uv(&col[6]);
        int64_t cpu = mcol_sv(&col[7]), core = mcol_sv(&col[8]),
                numa = mcol_sv(&col[9]);
        uint64_t kind = mcol_uv(&col[10]);
        x.start_ns = prev[11] += (uint64_t)mcol_sv(&col[11]);
        x.end_ns = x.start_ns + (uint64_t)mcol_sv(&col[12]);
        x.iter_start = prev[13] += (uint64_t)mcol_sv(&col[13]);
        x.iter_count = mcol_uv(&col[14]);
        for (size_t e = 0; e < nev; e++)
            row[e] = fmt_cur_value(&col[FMT_XU_COLUMNS + e].c);
        for (size_t k = 0; k < ncol; k++)
            if (col[k].c.bad) /* cannot happen after the column scan */
                rc = rd_finish_payload(r, &col[k].c);
        if (rc)
            break;
        if (team_thread > UINT32_MAX || team_size > UINT32_MAX || parts > UINT32_MAX ||
            cpu < INT32_MIN || cpu > INT32_MAX || core < INT32_MIN || core > INT32_MAX ||
            numa < INT32_MIN || numa > INT32_MAX || kind >= OMPF_XU_KIND_COUNT) {
            rc = rd_fail(r, OMPF_ERANGE, "XU id %llu has an out-of-range field (kind %llu, team "
                      "thread %llu, team size %llu, parts %llu, cpu %lld); " MALFORMED,
                      (unsigned long long)x.id, (unsigned long long)kind,
                      (unsigned long long)team_thread, (unsigned long long)team_size,
                      (unsigned long long)parts, (long long)cpu);
            break;
        }
        x.team_thread = (uint32_t)team_thread;
        x.team_size = (uint32_t)team_size;
        x.parts = (uint32_t)parts;
        x.cpu = (int32_t)cpu;
        x.core = (int32_t)core;
        x.numa = (int32_t)numa;
        x.kind = (uint8_t)kind;
        uint32_t type = fmt_idmap_get(&r->con_map, cid);
        uint32_t label = lid == 0 ? OMPF_LABEL_ROOT : fmt_idmap_get(&r->lab_map, lid);
        if (label == LABEL_DROPPED)
            label = NONE32;
        /* Source ids are read even for dropped XUs to keep columns aligned. */
        uint64_t *prov = pprev;
        for (size_t s = 0; s < nsrc; s++)
            prov[s] += (uint64_t)mcol_sv(&col[FMT_XU_COLUMNS + nev + s]);
        if (type == NONE32 || label == NONE32) {
            if (!r->truncated) {
                rc = rd_fail(r, OMPF_EFORMAT, "XU id %llu refers to %s id %llu, which is not "
                          "defined (dangling id); " MALFORMED, (unsigned long long)x.id,
                          type == NONE32 ? "construct" : "label",
                          (unsigned long long)(type == NONE32 ? cid : lid));
                break;
            }
            r->xus_dropped++;
            continue;
        }
        /* A complete profile without thread records (allowed by the data
         * model) has nothing to check thread indices against. */
        if (thread >= nth && (nth || r->truncated)) {
            if (!r->truncated) {
                rc = rd_fail(r, OMPF_ERANGE, "XU id %llu refers to thread %llu but the profile "
                          "has %zu threads; " MALFORMED, (unsigned long long)x.id,
                          (unsigned long long)thread, nth);
                break;
            }
            if (thread >= FMT_MAX_SALVAGE_THREADS || thread > UINT32_MAX) {
                r->xus_dropped++;
                continue;
            }
            /* Thread records are written last: invent the lost ones. */
            while (nth <= thread) {
                uint32_t idx;
                if (ompf_thread_add(r->p, -1, &idx)) {
                    rc = rd_oom(r);
                    break;
                }
                nth++;
            }
            if (rc)
                break;
        }
        if (thread > UINT32_MAX) {
            rc = rd_fail(r, OMPF_ERANGE, "XU id %llu has thread index %llu, out of range; "
                      MALFORMED, (unsigned long long)x.id, (unsigned long long)thread);
            break;
        }
        x.type = type;
        x.label = label;
        x.thread = (uint32_t)thread;
        int arc = ompf_xu_add(r->p, &x, row);
        if (arc) {
            rc = arc == OMPF_ENOMEM ? rd_oom(r)
                                    : rd_fail(r, OMPF_EFORMAT, "XU id %llu is rejected by the data "
                                           "model (%s); " MALFORMED, (unsigned long long)x.id,
                                           ompf_strerror(arc));
            break;
        }
        size_t xi = ompf_xu_count(r->p) - 1;
        if (nsrc && !ompf_profile_lean(r->p)) {
            uint64_t *dst = ompf_xu_provenance(r->p, xi);
            for (size_t s = 0; s < nsrc; s++)
                dst[s] = prov[s] - 1; /* stored as id + 1 */
        }
        r->xus_read++;
    }
    free(pprev);
    free(col);
    return rc;
}

int rd_pass2(rd_t *r)
{
    size_t nev = ompf_event_count(r->p);
    double *row = malloc((nev + 1) * sizeof *row);
    if (!row)
        return rd_oom(r);
    /* Reserve only what the file can really hold (a lying count is caught
     * when its chunk is decoded). */
    uint64_t want = r->xus_in_chunks;
    if (want > r->len)
        want = r->len;
    /* best effort: if the room cannot be had, ompf_xu_add grows as it goes
     * (and a lying count must not fail the read for memory) */
    if (want)
        (void)ompf_xu_reserve(r->p, (size_t)want);
    int rc = 0;
    rd_release_restart(r);
    for (size_t i = 0; i < r->n_xus && !rc; i++) {
        rc = dec_xus(r, &r->xus[i], row);
        rd_release(r, r->xus[i].off + FMT_CHUNK_HEADER_SIZE + (size_t)r->xus[i].h.stored);
    }
    free(row);
    /* A lean profile keeps no parts (profile.h), unless it packs them. */
    if (!rc && ompf__keeps_parts(r->p))
        rc = rd_attach_parts(r);
    return rc;
}
