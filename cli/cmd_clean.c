/* Placeholder until issue #9 lands: says so instead of pretending. */
#include <stdio.h>
#include "commands.h"

int ompf_cmd_clean(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "ompfuse clean: not available in this build yet (issue #9)\n");
    return 2;
}
