// crash: the host code aborts.
#include <stdlib.h>
#include "kbv.h"

extern "C" int kbv_forward(const kbv_call *c)
{
    (void)c;
    abort();
}
