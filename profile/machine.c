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
    /* k < n: the environment may grow between the passes (a thread's setenv) */
    for (size_t i = 0; v && envp && envp[i] && k < n; i++)
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

/* Value of variable key (kl bytes) in env (\x1f-joined K=V), or NULL;
 * *vl its length. */
static const char *env_value(const char *env, const char *key, size_t kl, size_t *vl)
{
    for (const char *q = env; *q;) {
        size_t l = strcspn(q, "\x1f");
        if (l > kl && q[kl] == '=' && !strncmp(q, key, kl)) {
            *vl = l - kl - 1;
            return q + kl + 1;
        }
        q += l + (q[l] != 0);
    }
    return NULL;
}

void ompf_omp_env_diff(const char *a, const char *b, const char *in_a, const char *in_b,
                       char *out, size_t len)
{
    size_t o = 0;
    if (len)
        out[0] = 0;
    for (int pass = 0; pass < 2 && len; pass++) {
        const char *x = pass ? b : a, *y = pass ? a : b;
        for (const char *p = x; *p && o + 1 < len;) {
            size_t l = strcspn(p, "\x1f"), kl = strcspn(p, "=");
            kl = kl < l ? kl : l;
            size_t xl = 0, yl = 0;
            const char *xv = env_value(x, p, kl, &xl), *yv = env_value(y, p, kl, &yl);
            /* pass 1: in a and not the same in b; pass 2: in b only */
            if (pass ? !yv : !yv || yl != xl || strncmp(xv, yv, xl)) {
                const char *av = pass ? yv : xv, *bv = pass ? xv : yv;
                size_t al = pass ? yl : xl, bl = pass ? xl : yl;
                o += (size_t)snprintf(out + o, len - o, "%s%.*s %s%.*s%s %s, %s%.*s%s %s",
                                      o ? "; " : "", (int)kl, p, av ? "'" : "unset",
                                      (int)al, av ? av : "", av ? "'" : "", in_a,
                                      bv ? "'" : "unset", (int)bl, bv ? bv : "", bv ? "'" : "",
                                      in_b);
                if (o >= len)
                    o = len - 1;
            }
            p += l + (p[l] != 0);
        }
    }
    if (len && !out[0])
        snprintf(out, len, "the same variables, differently encoded");
}
