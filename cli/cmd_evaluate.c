/* Placeholder until issue #4 lands: says so instead of pretending. */
#include <stdio.h>
#include "commands.h"

int ompf_cmd_evaluate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "ompfuse evaluate: not available in this build yet (issue #4)\n");
    return 2;
}
