/* Calls the taskloop of a library it is linked to (tests/tool/run_tests.py,
 * taskloop_dlopen): a library built with -fopenmp but linked without the
 * runtime (no DT_NEEDED on libomp), which the tool must still see calling
 * taskloop at start-up. */
#include <stdio.h>

long dlmod_run(void);

int main(void)
{
    printf("sum %ld\n", dlmod_run());
    return 0;
}
