// hostile: calls exit(0) inside kbv_forward, as if the process had finished
// its work.  The worker ends without a status record: kbv-collect records a
// crash ("worker exited with status 0 without a result").
#include "kbv.h"
#include <stdlib.h>

extern "C" int kbv_forward(const kbv_call *)
{
    exit(0);
}
