#include <cuda_runtime_api.h>
#include <stdint.h>
#include "fakecuda.h"
#include "kbv.h"

/* Timing-phase detection: correct for its first 30 calls (every check and
 * probe); after that, a call with the pointers of one of its last 128 calls
 * does nothing, as happens when a benchmark repeats one call to time it.  Timed
 * calls rotate among input sets in a secret order, but it meets each set
 * again within a round or two and skips them all: its median time falls under
 * the physical floor (impossible-speed),
 * and the verified timed outputs fail too (the timed-output probe). */
/* More than a round of calls: the harness runs up to 32 untimed pre-roll
 * calls on the other input set before each timed one. */
#define RING 128
static const void *seen_in[RING];
static void *seen_out[RING];
static int calls;

int kbv_forward(const kbv_call *c)
{
    const float *x = c->inputs[0].data;
    float *y = c->outputs[0].data;
    int same = 0;
    for (int i = 0; i < RING; i++) same |= x == seen_in[i] && (void *)y == seen_out[i];
    seen_in[calls % RING] = x;
    seen_out[calls % RING] = y;
    if (++calls > 30 && same) return 0;
    for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f;
    return 0;
}
