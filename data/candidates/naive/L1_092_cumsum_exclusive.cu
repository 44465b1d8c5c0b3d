// naive: scan along dim 1, one thread per row, sequential.
// L1_092_cumsum_exclusive: out = torch.cumsum(torch.cat((torch.zeros_like(x.select(1, 0).unsqueeze(1)), x), dim=1)[:-1], dim=1)
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1

__global__ void scan_rows(const float *__restrict__ x, float *__restrict__ y, long long rows, long long D)
{
    /* out [rows, D + 1]: out[i, 0] = 0, out[i, j] = x[i, 0] + ... + x[i, j - 1] */
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const float *xr = x + i * D;
    float *yr = y + i * (D + 1);
    float s = 0.0f;
    yr[0] = 0.0f;
    for (long long j = 0; j < D; j++) {
        s += xr[j];
        yr[j + 1] = s;
    }
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 2) return 1;
    const kbv_tensor *o = &call->outputs[0];
    if (o->ndim != 2 || o->shape[1] != x->shape[1] + 1 || o->shape[0] > x->shape[0]) return 1;
    long long rows = o->shape[0], D = x->shape[1];
    if (rows == 0) return 0;
    scan_rows<<<(unsigned)((rows + 127) / 128), 128, 0, call->stream>>>((const float *)x->data, (float *)call->outputs[0].data, rows, D);
    CHECK_LAUNCH();
}
