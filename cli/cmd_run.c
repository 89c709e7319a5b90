/* Placeholder until issue #5 lands: says so instead of pretending. */
#include <stdio.h>
#include "commands.h"

int ompf_cmd_run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "ompfuse run: not available in this build yet (issue #5)\n");
    return 2;
}
