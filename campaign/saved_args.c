/* DIR/run.args: the `ompfuse run` command that made a campaign (working
 * directory first, then the arguments, NUL-separated: any byte but NUL may
 * appear in an argument), so that `ompfuse run --resume DIR` and the Slurm
 * array tasks repeat exactly that command. */
#include "campaign_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ompf_campaign_save_args(const char *dir, int argc, char *const *argv,
                            ompf_error_t *err)
{
    char path[PATH_MAX], tmp[PATH_MAX + 32], cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return ompf_error_set(err, OMPF_EIO, "cannot read the working "
                              "directory: %s", strerror(errno));
    snprintf(path, sizeof path, "%s/run.args", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return ompf_error_set(err, OMPF_EIO, "cannot write %s: %s", tmp,
                              strerror(errno));
    fwrite(cwd, 1, strlen(cwd) + 1, f);
    for (int i = 0; i < argc; i++)
        fwrite(argv[i], 1, strlen(argv[i]) + 1, f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return ompf_error_set(err, OMPF_EIO, "cannot write %s: %s", path,
                              strerror(errno));
    }
    return 0;
}

int ompf_campaign_load_args(const char *dir, char **cwd, int *argc,
                            char ***argv, ompf_error_t *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/run.args", dir);
    char *buf;
    size_t n;
    int rc = ompf_read_file(path, (size_t)1 << 24, &buf, &n);
    if (rc == OMPF_ENOMEM)
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    if (rc == OMPF_EIO)
        return ompf_error_set(err, OMPF_ENOTFOUND,
                              "%s: %s; --resume needs a directory made by "
                              "`ompfuse run --out DIR` (run that command "
                              "again instead)",
                              path, strerror(errno));
    if (rc)
        n = 0; /* larger than 16 MiB: damaged */
    if (n == 0 || buf[n - 1] != '\0') {
        free(buf); /* NULL when too large */
        return ompf_error_set(err, OMPF_EFORMAT,
                              "%s is damaged (it must end in a NUL byte); "
                              "run the original `ompfuse run` command again",
                              path);
    }
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += buf[i] == '\0';
    char **v = calloc(count + 1, sizeof *v);
    if (!v) {
        free(buf);
        return ompf_error_set(err, OMPF_ENOMEM, "out of memory");
    }
    size_t j = 0;
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
        v[j++] = buf + i;
    /* v[0] is the working directory and owns the buffer */
    *cwd = v[0];
    *argc = (int)count - 1;
    memmove(v, v + 1, count * sizeof *v);
    *argv = v;
    return 0;
}

void ompf_campaign_free_args(char *cwd, char **argv)
{
    free(cwd);
    free(argv);
}
