/* Overwrites the options it parsed, as BOTS's argument parser does
 * (argv[i][1] = '*'), before its first parallel region starts the tool:
 * the tool then sees the overwritten strings in /proc/self/cmdline
 * (tests/tool/argv_started.py). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = 8;
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-' && argv[i][1]) {
            if (argv[i][1] == 'n' && i + 1 < argc)
                n = atoi(argv[i + 1]);
            argv[i][1] = '*';
        }
    long sum = 0;
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < n; i++) {
#pragma omp task shared(sum) firstprivate(i)
        {
#pragma omp atomic
            sum += i;
        }
    }
    printf("argv_mangle checksum = %ld\n", sum);
    return 0;
}
