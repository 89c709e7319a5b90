/* Starts the OpenMP runtime, then opens the module argv[1] with dlopen
 * and runs its taskloop (tests/tool/run_tests.py, taskloop_dlopen). */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODULE\n", argv[0]);
        return 2;
    }
    int threads = 0;
#pragma omp parallel
#pragma omp single
    threads = omp_get_num_threads();
    void *h = dlopen(argv[1], RTLD_NOW);
    long (*run)(void) = h ? (long (*)(void))dlsym(h, "dlmod_run") : NULL;
    if (!run) {
        fprintf(stderr, "%s: %s\n", argv[1], dlerror());
        return 1;
    }
    printf("threads %d sum %ld\n", threads, run());
    return 0;
}
