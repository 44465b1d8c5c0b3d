/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/tailswap: writes
 * TAILMARK-REAL on stderr, replaces its stderr file by a symbolic link to a
 * decoy and its stdout file by a FIFO, then aborts. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fakecuda.h"
#include "kbv.h"

int kbv_forward(const kbv_call *c)
{
    (void)c;
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
