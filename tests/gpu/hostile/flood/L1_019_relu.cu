// hostile: floods stdout and stderr on its first call, up to 8 GiB in 1 MiB
// writes of 'F' with a byte 0xff (never valid UTF-8) every 7 bytes: the
// output tail in the status detail must still leave the journal valid
// UTF-8.  The worker's output files are capped by RLIMIT_FSIZE (256 MiB):
// the write past the cap raises SIGXFSZ, which ends the worker, and the
// pair is recorded as a crash.
#include "kbv.h"
#include <string.h>
#include <unistd.h>

static char chunk[1 << 20];

extern "C" int kbv_forward(const kbv_call *)
{
    memset(chunk, 'F', sizeof chunk);
    for (size_t j = 0; j < sizeof chunk; j += 7) chunk[j] = (char)0xff;
    for (int i = 0; i < 8192; i++) {
        ssize_t k = write(1 + (i & 1), chunk, sizeof chunk);
        (void)k;
    }
    return 1;
}
