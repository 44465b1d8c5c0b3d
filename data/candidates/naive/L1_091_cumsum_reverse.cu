// naive: scan along dim 1, one thread per row, sequential.
// L1_091_cumsum_reverse: out = torch.cumsum(x.flip(1), dim=1).flip(1)
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1

__global__ void scan_rows(const float *__restrict__ x, const float *__restrict__ mask, float *__restrict__ y,
                          long long rows, long long D)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const float *xr = x + i * D;
    const float *mr = mask ? mask + i * D : xr;
    (void)mr;
    float *yr = y + i * D;
    float s = 0.0f;
    for (long long j = D - 1; j >= 0; j--) {
        float v = xr[j];
        s += v;
        yr[j] = s;
    }
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2) return 1;
    long long rows = x->shape[0], D = x->shape[1];
    if (rows == 0) return 0;
    scan_rows<<<(unsigned)((rows + 127) / 128), 128, 0, call->stream>>>((const float *)x->data, (const float *)0, (float *)call->outputs[0].data, rows, D);
    CHECK_LAUNCH();
}
