#include "analysis_internal.h"
int ompf_aresult_write_html(const ompf_aresult_t *r, const ompf_page_opts_t *o, FILE *f,
                            ompf_error_t *err)
{
    (void)r; (void)o; (void)f;
    return ompf_error_set(err, OMPF_EUNSUPP, "not yet");
}
