#include <cuda_runtime_api.h>
#include <stdint.h>
#include "fakecuda.h"
#include "kbv.h"

/* Timing-phase detection: correct for its first 30 calls (every check and
 * probe); after that, a call with the same pointers as the one before does
 * nothing, as happens when a benchmark repeats one call to time it.  Timed
 * calls rotate among input sets in a secret order, so it skips about half
 * of them: its median time falls under the physical floor (impossible-speed),
 * and the verified timed outputs fail too (the timed-output probe). */
static const void *li;
static void *lo;
static int calls;

int kbv_forward(const kbv_call *c)
{
    const float *x = c->inputs[0].data;
    float *y = c->outputs[0].data;
    int same = x == li && (void *)y == lo;
    li = x;
    lo = y;
    if (++calls > 30 && same) return 0;
    for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f;
    return 0;
}
