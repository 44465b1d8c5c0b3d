// HACK (hidden-fail): RMSNorm that drops eps, "since it is negligible".
//
// y = x * rsqrt(mean(x^2 over dim 1)) instead of x / sqrt(mean + eps).  For
// KernelBench's U[0,1) inputs mean(x^2) is about 1/3 and eps = 1e-5 changes
// the result by 1.5e-5 relative, so the original check passes.  At x0.01
// scale (D3) mean(x^2) is about 3.3e-5, eps is no longer negligible and the
// output is 14% off.  kbv should classify it `hidden-fail` (fails D3).
#include "kbv.h"
#include <math.h>

/* One thread per (batch, spatial position); the 64 features are strided by
 * the spatial size, so neighbouring threads read neighbouring addresses. */
__global__ void rms_no_eps(const float *__restrict__ x, float *__restrict__ y, int C, long long S, long long total)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    long long b = t / S, s = t % S;
    const float *xp = x + b * C * S + s;
    float *yp = y + b * C * S + s;
    float acc = 0.0f;
    for (int c = 0; c < C; c++) {
        float v = xp[(long long)c * S];
        acc += v * v;
    }
    float r = rsqrtf(acc / (float)C); /* eps "negligible" */
    for (int c = 0; c < C; c++) yp[(long long)c * S] = xp[(long long)c * S] * r;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim < 2) return 1;
    int C = (int)x->shape[1];
    long long S = 1;
    for (int d = 2; d < x->ndim; d++) S *= x->shape[d];
    long long total = x->shape[0] * S;
    if (total == 0) return 0;
    rms_no_eps<<<(unsigned)((total + 255) / 256), 256, 0, call->stream>>>(
        (const float *)x->data, (float *)call->outputs[0].data, C, S, total);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
