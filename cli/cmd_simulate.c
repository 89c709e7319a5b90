/* Placeholder until issue #6 lands: says so instead of pretending. */
#include <stdio.h>
#include "commands.h"

int ompf_cmd_simulate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "ompfuse simulate: not available in this build yet (issue #6)\n");
    return 2;
}
