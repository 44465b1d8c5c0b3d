/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/ahead: from its 31st
 * call on, every call also computes the ReLU of the other input buffer it
 * has seen into a private copy (and keeps its own output too), and a later
 * call on either buffer returns the copy instead of computing.  The harness's untimed pre-roll calls run
 * on the other set just before each timed call; were the timed inputs
 * already drawn then, the copy would be right and the timed call free.
 * They are drawn after the pre-roll, so the copy is stale: the verified
 * timed rounds fail (stale-output). */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "fakecuda.h"
#include "kbv.h"

static const float *seen[2];
static float *copy[2];
static int ready[2], n_seen, gone, calls;

static void relu(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0.0f;
}

/* Whether p is still mapped: the timed sets are freed before the memory
 * measurement's call, which may get one of their addresses again (an
 * attacker on a GPU would ask cudaPointerGetAttributes). */
static int mapped(const void *p)
{
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char v;
    return mincore((void *)((uintptr_t)p & ~(uintptr_t)(pg - 1)), 1, &v) == 0;
}

/* The first two input buffers after the checks are the timed sets; a
 * third one ends the trick. */
int kbv_forward(const kbv_call *c)
{
    const float *x = c->inputs[0].data;
    float *y = c->outputs[0].data;
    int64_t n = fake_elems(kbv_numel(&c->inputs[0]));
    int me = -1;
    if (++calls > 30 && !gone) {
        me = x == seen[0] ? 0 : x == seen[1] && n_seen > 1 ? 1 : -1;
        if (me < 0 && n_seen < 2) {
            me = n_seen++;
            seen[me] = x;
            copy[me] = malloc((size_t)n * sizeof(float));
            if (!copy[me]) return 12;
        }
        gone = me < 0;
    }
    if (me < 0) {
        relu(x, y, n);
        return 0;
    }
    /* Its own output is kept as well, so that without a pre-roll (calls
     * too long for one) every timed call is still a copy. */
    if (ready[me]) {
        memcpy(y, copy[me], (size_t)n * sizeof(float));
    } else {
        relu(x, y, n);
        memcpy(copy[me], y, (size_t)n * sizeof(float));
        ready[me] = 1;
    }
    if (n_seen == 2 && mapped(seen[1 - me])) {
        relu(seen[1 - me], copy[1 - me], n);
        ready[1 - me] = 1;
    }
    return 0;
}
