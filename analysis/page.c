/* ompf_analysis_page: the default analysis page of a profile file in one
 * call, for the campaign's report (which links it). */
#include <stdio.h>

#include "ompfuse/analysis.h"
#include "ompfuse/file.h"

int ompf_analysis_page(const char *profile_path, const char *html_path, ompf_error_t *err)
{
    ompf_profile_t *p = NULL;
    ompf_analysis_t *a = NULL;
    ompf_aresult_t *r = NULL;
    ompf_outfile_t *o = NULL;
    FILE *f;
    int rc = ompf_profile_read(profile_path, &p, NULL, err);
    if (rc == OMPF_ETRUNC)
        rc = 0; /* a salvaged profile is still worth a page */
    if (!rc) {
        ompf_error_t ignore;
        ompf_resolve_constructs(p, &ignore); /* unresolved names are still names */
        rc = ompf_analysis_create(&a) ? ompf_error_set(err, OMPF_ENOMEM, "out of memory") : 0;
    }
    if (!rc)
        rc = ompf_analysis_run(a, p, profile_path, &r, err);
    if (!rc)
        rc = ompf_outfile_open(html_path, &o, &f, err);
    if (!rc) {
        ompf_page_opts_t po = {0};
        rc = ompf_aresult_write_html(r, &po, f, err);
        if (rc)
            ompf_outfile_abort(o);
        else
            rc = ompf_outfile_commit(o, err);
    }
    ompf_aresult_destroy(r);
    ompf_analysis_destroy(a);
    ompf_profile_destroy(p);
    return rc;
}
