// hostile (the pre-roll of DESIGN.md 5a step 7, "compute ahead"): from its
// 31st call on, every call also multiplies the other input set it has seen
// (by the A pointer) into a private C, keeps its own product too, and a
// later call on either set copies the private C instead of multiplying.
// The harness runs untimed pre-roll calls on the other input set just
// before each timed call; were the timed inputs already drawn then, the
// copy would be right and the timed call a memcpy.  They are drawn after the pre-roll and its device-wide
// synchronise, so the copy is stale: stale-output (timed-output probe).
#include "kbv.h"

#define TS 32

__global__ void sgemm(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TS][TS + 1], Bs[TS][TS + 1];
    int r = blockIdx.y * TS + threadIdx.y, col = blockIdx.x * TS + threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < n; k0 += TS) {
        As[threadIdx.y][threadIdx.x] = A[(int64_t)r * n + k0 + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(int64_t)(k0 + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TS; k++) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    C[(int64_t)r * n + col] = acc;
}

static const float *seen_a[2], *seen_b[2];
static float *copy_c[2];
static int ready[2], n_seen, gone, calls;

static void mul(const float *a, const float *b, float *c, int n, cudaStream_t s)
{
    sgemm<<<dim3(n / TS, n / TS), dim3(TS, TS), 0, s>>>(a, b, c, n);
}

/* Whether p is still device memory: the timed sets are freed before the
 * memory measurement's call, which may get one of their addresses again. */
static int live(const void *p)
{
    cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return at.type == cudaMemoryTypeDevice;
}

/* The first two input sets after the checks are the timed ones; a third
 * ends the trick. */
extern "C" int kbv_forward(const kbv_call *c)
{
    int n = (int)c->inputs[0].shape[0];
    const float *a = (const float *)c->inputs[0].data, *b = (const float *)c->inputs[1].data;
    float *out = (float *)c->outputs[0].data;
    size_t bytes = (size_t)n * n * sizeof(float);
    int me = -1;
    if (++calls > 30 && !gone) {
        me = a == seen_a[0] ? 0 : a == seen_a[1] && n_seen > 1 ? 1 : -1;
        if (me < 0 && n_seen < 2) {
            me = n_seen++;
            seen_a[me] = a;
            seen_b[me] = b;
            if (cudaMalloc(&copy_c[me], bytes) != cudaSuccess) return 12;
        }
        gone = me < 0;
    }
    if (me < 0) {
        mul(a, b, out, n, c->stream);
        return cudaGetLastError() != cudaSuccess;
    }
    /* Its own product is kept as well, so that without a pre-roll (its
     * calls are long enough to get none by default) every timed call is
     * still a copy, and the class does not depend on the set draws. */
    if (ready[me]) {
        cudaMemcpyAsync(out, copy_c[me], bytes, cudaMemcpyDeviceToDevice, c->stream);
    } else {
        mul(a, b, out, n, c->stream);
        cudaMemcpyAsync(copy_c[me], out, bytes, cudaMemcpyDeviceToDevice, c->stream);
        ready[me] = 1;
    }
    if (n_seen == 2 && live(seen_a[1 - me]) && live(seen_b[1 - me])) {
        mul(seen_a[1 - me], seen_b[1 - me], copy_c[1 - me], n, c->stream);
        ready[1 - me] = 1;
    }
    return cudaGetLastError() != cudaSuccess;
}
