/* Facts about this machine recorded in profiles (metadata cpu_model) and by
 * the campaign launchers (markers of Slurm array tasks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompfuse/profile.h"

void ompf_cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        /* "model name" on x86, "Model" on some ARM kernels */
        if (strncmp(line, "model name", 10) == 0 ||
            strncmp(line, "Model", 5) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\n")] = '\0';
                snprintf(buf, len, "%s", c);
                break;
            }
        }
    }
    fclose(f);
}

/* What changes how an OpenMP program runs (OMP_SCHEDULE for
 * schedule(runtime) loops, OMP_NUM_THREADS, binding, libomp's KMP_*), not
 * how the tool is attached. */
static int is_omp_var(const char *kv)
{
    if (strncmp(kv, "OMP_", 4) && strncmp(kv, "KMP_", 4))
        return 0;
    return strncmp(kv, "OMP_TOOL", 8) != 0 && strchr(kv, '=') != NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t ompf_omp_env(char *const *envp, char *buf, size_t len)
{
    size_t n = 0, k = 0, need = 0;
    for (size_t i = 0; envp && envp[i]; i++)
        n += (size_t)is_omp_var(envp[i]);
    const char **v = malloc((n ? n : 1) * sizeof *v);
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; v && envp && envp[i]; i++)
        if (is_omp_var(envp[i]))
            v[k++] = envp[i];
    if (v)
        qsort(v, k, sizeof *v, cmp_str);
    for (size_t i = 0; i < k; i++) {
        size_t l = strlen(v[i]);
        if (need + (i > 0) + l < len) {
            if (i)
                buf[need] = '\x1f';
            memcpy(buf + need + (i > 0), v[i], l + 1);
        }
        need += (i > 0) + l;
    }
    free(v);
    return need;
}
