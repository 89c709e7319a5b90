/* Placeholder until issue #2 lands: says so instead of pretending. */
#include <stdio.h>
#include "commands.h"

int ompf_cmd_export(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "ompfuse export: not available in this build yet (issue #2)\n");
    return 2;
}
