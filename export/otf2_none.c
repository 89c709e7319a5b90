/* Built when libotf2 was not found: the format says so. */
#include "ompfuse/export.h"

int ompf_export_otf2_available(void)
{
    return 0;
}

int ompf_export_otf2(const ompf_export_input_t *in, size_t n, const char *dir, ompf_error_t *err)
{
    (void)in, (void)n, (void)dir;
    return ompf_error_set(err, OMPF_EUNSUPP,
                          "OTF2 export: this ompfuse was built without libotf2 (install "
                          "libopen-trace-format2-dev, see scripts/setup.sh, and rebuild)");
}
