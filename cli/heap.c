/* See heap.h. */
/* Any libc header defines __GLIBC__ (through <features.h>) for the test
 * below: keep one before it. */
#include <limits.h>
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

void ompf_cli_heap_return(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 128 * 1024); /* glibc's default, but fixed */
#endif
}
