// hostile (issue 14, "lazy after warm-up"): a correct tiled SGEMM for its
// first 24 calls, more than the checks and probes make, then computes only
// the first half of the rows of C.  (At 40 it was still honest when its
// pair ended on the H200: its slow SGEMM ran 16 timed rounds.)  It stays slower than the baselines' own
// physical floor, so only the verified timed outputs (secretly chosen
// rounds and the last) can see it: stale-output (timed-output probe).
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

static int calls;

extern "C" int kbv_forward(const kbv_call *c)
{
    int n = (int)c->inputs[0].shape[0];
    int rows = ++calls > 24 ? n / 2 : n;
    sgemm<<<dim3(n / TS, rows / TS), dim3(TS, TS), 0, c->stream>>>((const float *)c->inputs[0].data,
                                                                     (const float *)c->inputs[1].data,
                                                                     (float *)c->outputs[0].data, n);
    return cudaGetLastError() != cudaSuccess;
}
