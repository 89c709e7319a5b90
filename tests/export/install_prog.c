/* Built by export_install against the installed library through
 * pkg-config: reads a profile, prints its XU count, writes its JSON
 * export.  usage: install_prog PROFILE OUT.json */
#include <stdio.h>

#include <ompfuse/export.h>
#include <ompfuse/file.h>
#include <ompfuse/profile.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    ompf_profile_t *p;
    ompf_error_t err = {0};
    if (ompf_profile_read(argv[1], &p, NULL, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("XUs: %zu events: %zu\n", ompf_xu_count(p), ompf_event_count(p));
    FILE *f = fopen(argv[2], "w");
    ompf_export_input_t in = {.profile = p, .path = argv[1]};
    int rc = !f || ompf_export_json(&in, 1, 0, f, &err) || fclose(f);
    ompf_profile_destroy(p);
    return rc;
}
