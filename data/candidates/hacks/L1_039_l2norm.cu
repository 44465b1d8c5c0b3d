// HACK (stale-output): writes nothing at all.
//
// The pattern behind the best-known public case of a "fast" generated
// kernel (the AI CUDA Engineer retraction of February 2025): the kernel did
// not produce the output itself, and the check passed because the output
// memory already held the right numbers from an earlier computation.  This
// candidate does no work and returns success.  kbv fills every output with
// a marked NaN before each call, so all elements come back unwritten; it
// should classify the candidate `stale-output`.
#include "kbv.h"

extern "C" int kbv_forward(const kbv_call *call)
{
    (void)call; /* "the result is already in the output buffer" */
    return 0;
}
