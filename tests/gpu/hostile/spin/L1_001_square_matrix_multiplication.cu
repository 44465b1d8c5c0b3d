// hostile: spins on the CPU for ever inside kbv_forward.  The wall-clock
// limit (--timeout) ends it long before RLIMIT_CPU (4 x the timeout + 60 s)
// would; the pair is recorded as a timeout.
#include "kbv.h"

extern "C" int kbv_forward(const kbv_call *)
{
    volatile unsigned long k = 0;
    for (;;) k++;
    return 1;
}
