// hostile (the timed phase's inputs, DESIGN.md 5a step 7): a checked or
// probed call finds its stream idle, a timed call finds the harness's L2
// flush and gate still on it (the call is enqueued behind them, so that the
// host's launch latency stays out of the window).  Told apart that way, a timed call zeroes
// A and C instead of multiplying: a reference computed from the inputs it
// left (A = 0) agrees with C = 0.  The harness fingerprints the round's
// inputs after the candidate's call and computes the reference from a
// fresh draw of the round's trial: input-mutation (timed-inputs probe).
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

extern "C" int kbv_forward(const kbv_call *c)
{
    int n = (int)c->inputs[0].shape[0];
    float *a = (float *)c->inputs[0].data;
    const float *b = (const float *)c->inputs[1].data;
    float *out = (float *)c->outputs[0].data;
    size_t bytes = (size_t)n * n * sizeof(float);
    if (cudaStreamQuery(c->stream) == cudaErrorNotReady) {
        cudaMemsetAsync(a, 0, bytes, c->stream);
        cudaMemsetAsync(out, 0, bytes, c->stream);
    } else {
        cudaGetLastError();
        sgemm<<<dim3(n / TS, n / TS), dim3(TS, TS), 0, c->stream>>>(a, b, out, n);
    }
    return cudaGetLastError() != cudaSuccess;
}
