/* Placeholder until issue #3 lands: says so instead of pretending. */
#include <stdio.h>
#include "commands.h"

int ompf_cmd_combine(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "ompfuse combine: not available in this build yet (issue #3)\n");
    return 2;
}
