/* Placeholder until issue #5 lands: says so instead of pretending. */
#include <stdio.h>
#include "commands.h"

int ompf_cmd_campaign(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "ompfuse campaign: not available in this build yet (issue #5)\n");
    return 2;
}
