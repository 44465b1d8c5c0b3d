// hostile (a probe more than an attack): on its first call, prints the
// worker's virtual and resident memory (/proc/self/status: VmPeak, VmSize,
// VmRSS, VmData) to stderr and aborts, so that the crash's status detail
// carries the figures.  They say how much address space a CUDA worker
// needs, for choosing an RLIMIT_AS (kbv-collect sets none: the driver
// reserves a large part of the address space).  tests/gpu/hostile.sh prints
// them as a note.
#include "kbv.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" int kbv_forward(const kbv_call *)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256], out[1024] = "";
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmPeak:", 7) && strncmp(line, "VmSize:", 7) && strncmp(line, "VmRSS:", 6) &&
            strncmp(line, "VmData:", 7))
            continue;
        line[strcspn(line, "\n")] = 0;
        strncat(out, line, sizeof out - strlen(out) - 3);
        strcat(out, "; ");
    }
    if (f) fclose(f);
    fprintf(stderr, "vm: %s\n", out);
    fflush(stderr);
    abort();
}
