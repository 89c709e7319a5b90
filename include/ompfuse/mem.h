/* Memory of the large arrays that commands hold (combine holds every
 * input's XUs at once): shared by the libraries. */
#ifndef OMPF_MEM_H
#define OMPF_MEM_H

#include <stddef.h>

/* The whole pages of base[*gone, upto) go back to the system (*gone
 * moves to the last one's end): for an array read once from its start
 * whose rest is still in use, or a mapped file a pass is done with.  An
 * anonymous page given back reads as zeros, a file's is read again from
 * the page cache.  Advice only: at most a call per 4 MiB does anything,
 * so a loop may call it often. */
void ompf_give_back(const void *base, size_t *gone, size_t upto);

#endif
