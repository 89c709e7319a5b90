/* Facts about this machine recorded in profiles (metadata cpu_model) and by
 * the campaign launchers (markers of Slurm array tasks). */
#include <stdio.h>
#include <string.h>

#include "ompfuse/profile.h"

void ompf_cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        /* "model name" on x86, "Model" on some ARM kernels */
        if (strncmp(line, "model name", 10) == 0 ||
            strncmp(line, "Model", 5) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\n")] = '\0';
                snprintf(buf, len, "%s", c);
                break;
            }
        }
    }
    fclose(f);
}
