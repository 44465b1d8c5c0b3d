// hostile: takes all the GPU memory in kbv_setup (cudaMalloc of 1 GiB
// blocks, then smaller ones down to 1 MiB, until every size fails) and keeps
// it.  The harness's next allocation fails: the pair is recorded as a
// launch-error whose detail says "out of memory", and the memory comes back
// when the worker ends, so the following pairs are unaffected.
#include "kbv.h"

static void *held[1 << 16];
static int n_held;

extern "C" int kbv_setup(const kbv_call *)
{
    for (size_t sz = (size_t)1 << 30; sz >= ((size_t)1 << 20); sz >>= 1) {
        while (n_held < (int)(sizeof held / sizeof held[0])) {
            void *p = nullptr;
            if (cudaMalloc(&p, sz) != cudaSuccess) {
                cudaGetLastError();
                break;
            }
            held[n_held++] = p;
        }
    }
    return 0;
}

extern "C" int kbv_forward(const kbv_call *)
{
    // Not reached when the harness cannot allocate; computes nothing if it is.
    return 0;
}
