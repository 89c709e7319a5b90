/* See heap.h. */
/* Any libc header defines __GLIBC__ (through <features.h>) for the test
 * below: keep one before it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "heap.h"

void ompf_cli_heap_reuse(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_MAX, 0);              /* large arrays from the heap, not mmap */
    mallopt(M_TRIM_THRESHOLD, -1);       /* and freed memory kept there (-1: never
                                          * trimmed; INT_MAX let 10^7-XU profiles,
                                          * whose free top exceeds 2 GB, go back) */
#endif
}

#define THP_MIN_INPUT (16ll << 20)

void ompf_cli_heap_thp(char **argv)
{
#ifdef __GLIBC__
    const char *old = getenv("GLIBC_TUNABLES");
    if (getenv("OMPFUSE_NO_THP") || (old && strstr(old, "glibc.malloc.hugetlb")))
        return;
    char mode[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
    if (!f)
        return;
    if (!fgets(mode, sizeof mode, f))
        mode[0] = '\0';
    fclose(f);
    if (!strstr(mode, "[madvise]")) /* always: glibc need not ask; never: no use */
        return;
    long long in = 0;
    for (char **a = argv + 1; *a && in < THP_MIN_INPUT; a++) {
        struct stat st;
        if ((*a)[0] != '-' && stat(*a, &st) == 0 && S_ISREG(st.st_mode))
            in += (long long)st.st_size;
    }
    if (in < THP_MIN_INPUT)
        return;
    size_t n = (old ? strlen(old) + 1 : 0) + sizeof "glibc.malloc.hugetlb=1";
    char *tun = malloc(n);
    if (!tun)
        return;
    snprintf(tun, n, "%s%sglibc.malloc.hugetlb=1", old ? old : "", old ? ":" : "");
    char *keep = old ? strdup(old) : NULL;
    if (setenv("GLIBC_TUNABLES", tun, 1) == 0)
        execv("/proc/self/exe", argv);
    /* still here: run as we are, with the environment as it was */
    if (keep)
        setenv("GLIBC_TUNABLES", keep, 1);
    else
        unsetenv("GLIBC_TUNABLES");
    free(keep);
    free(tun);
#else
    (void)argv;
#endif
}
