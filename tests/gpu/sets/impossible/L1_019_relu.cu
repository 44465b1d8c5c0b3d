// impossible-speed: a correct ReLU for its first 30 calls (every check and
// probe); after that, a call with the pointers of one of its last 128 calls
// does nothing, as happens when a benchmark repeats one call to time it.
// Timed calls rotate among input sets in a secret order, but each set comes
// again within a round or two: its median time is then far below the time to
// read and write the tensors (and its verified timed outputs fail too).
#include "kbv.h"

/* More than a round of calls: the harness runs up to 32 untimed pre-roll
 * calls on the other input set before each timed one. */
#define RING 128
static const void *seen_in[RING];
static void *seen_out[RING];
static int calls;

__global__ void relu_k(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

extern "C" int kbv_forward(const kbv_call *c)
{
    int same = 0;
    for (int i = 0; i < RING; i++) same |= c->inputs[0].data == seen_in[i] && c->outputs[0].data == seen_out[i];
    seen_in[calls % RING] = c->inputs[0].data;
    seen_out[calls % RING] = c->outputs[0].data;
    if (++calls > 30 && same) return 0;
    relu_k<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data, (float *)c->outputs[0].data,
                                          kbv_numel(&c->inputs[0]));
    return cudaGetLastError() != cudaSuccess;
}
