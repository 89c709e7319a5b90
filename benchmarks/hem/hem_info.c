/*
 * Summary of profiles for the HEM experiment: mode, cleaned flag, XUs,
 * XUs with at least one missing value, missing values per event.
 *
 *   build/bin/hem_info PROFILE...
 * One line per profile:
 *   path mode=M cleaned=C xus=N xus_missing=K missing=e1:n1,e2:n2,...
 */
#include <stdio.h>

#include "ompfuse/file.h"
#include "ompfuse/profile.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: hem_info PROFILE...\n");
        return 2;
    }
    int rc = 0;
    for (int a = 1; a < argc; a++) {
        ompf_profile_t *p;
        ompf_error_t err;
        int r = ompf_profile_read(argv[a], &p, NULL, &err);
        if (r && r != OMPF_ETRUNC) {
            fprintf(stderr, "hem_info: %s\n", err.msg);
            rc = 2;
            continue;
        }
        size_t ne = ompf_event_count(p), n = ompf_xu_count(p), xm = 0;
        size_t miss[64] = {0};
        for (size_t i = 0; i < n; i++) {
            const double *v = ompf_xu_values_const(p, i);
            int any = 0;
            for (size_t e = 0; e < ne && e < 64; e++)
                if (ompf_is_missing(v[e])) {
                    miss[e]++;
                    any = 1;
                }
            xm += any;
        }
        const char *mode = ompf_meta_get(p, "mode");
        const char *cl = ompf_meta_get(p, "cleaned");
        printf("%s mode=%s cleaned=%s xus=%zu xus_missing=%zu missing=", argv[a],
               mode ? mode : "?", cl ? cl : "0", n, xm);
        for (size_t e = 0; e < ne && e < 64; e++)
            printf("%s%s:%zu", e ? "," : "", ompf_event_get(p, (uint32_t)e)->name,
                   miss[e]);
        /* what the emulator actually did (the tool's engine statistics) */
        const char *rot = ompf_meta_get(p, "hem_rotations");
        const char *sig = ompf_meta_get(p, "hem_signals");
        printf(" rotations=%s signals=%s", rot ? rot : "-", sig ? sig : "-");
        printf("\n");
        ompf_profile_destroy(p);
    }
    return rc;
}
