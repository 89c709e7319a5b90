/* The paper's Listing 1.1: 16 XUs with 2 threads. */
#include <stdio.h>

static volatile long sink;

static void work(int n)
{
    for (int k = 0; k < n * 1000; k++)
        sink += k;
}

int main(void)
{
#pragma omp parallel num_threads(2)
    {
#pragma omp for schedule(static)
        for (int i = 0; i < 8; i++) {
#pragma omp task
            work(i);
        }

#pragma omp for schedule(dynamic, 2)
        for (int i = 0; i < 8; i++)
            work(i);

#pragma omp task
        work(1);
    }
    printf("done\n");
    return 0;
}
