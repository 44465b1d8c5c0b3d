// HACK (stale-output): writes nothing at all.
//
// The pattern behind the best-known public case of a "fast" generated
// kernel: the kernel never produced the output, and the check passed
// because the output tensor was allocated where the reference's result had
// just been freed, so the right numbers were already in memory.  This
// candidate does no work and returns success.  kbv fills every output with
// a marked NaN before each call, so all elements come back unwritten; it
// should classify the candidate `stale-output`.
#include "kbv.h"

extern "C" int kbv_forward(const kbv_call *call)
{
    (void)call; /* "the result is already in the output buffer" */
    return 0;
}
