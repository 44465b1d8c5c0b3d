// hostile: sleeps for 1000 s inside kbv_forward.  The wall-clock limit
// (--timeout) ends the worker; the pair is recorded as a timeout.
#include "kbv.h"
#include <unistd.h>

extern "C" int kbv_forward(const kbv_call *)
{
    sleep(1000);
    return 1;
}
