// hostile: writes TAILMARK-REAL on stderr, then puts a symbolic link to a
// decoy file ("TAILMARK-FAKE") in place of its stderr file and a FIFO in
// place of its stdout file in the scratch folder (which the worker sandbox
// lets it write), and aborts.  kbv-collect reads the crash's output tail
// through the descriptors it opened: the detail quotes TAILMARK-REAL, not
// the decoy, and collect does not wait on the FIFO.
#include "kbv.h"
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

extern "C" int kbv_forward(const kbv_call *)
{
    fputs("TAILMARK-REAL\n", stderr);
    fflush(stderr);
    FILE *d = fopen("decoy", "w");
    if (d) {
        fputs("TAILMARK-FAKE\n", d);
        fclose(d);
    }
    unlink("stderr.txt");
    if (symlink("decoy", "stderr.txt") != 0) perror("symlink");
    unlink("stdout.txt");
    if (mkfifo("stdout.txt", 0600) != 0) perror("mkfifo");
    abort();
}
