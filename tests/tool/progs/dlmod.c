/* A module that a program opens with dlopen after the OpenMP runtime has
 * started: its taskloop is one the tool did not see at start-up
 * (ompt-tool/imports.c), so no unwinder was loaded for it. */
static long v[1000];

long dlmod_run(void)
{
    long sum = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskloop num_tasks(8)
    for (int i = 0; i < 1000; i++)
        v[i] = i;
    for (int i = 0; i < 1000; i++)
        sum += v[i];
    return sum;
}
