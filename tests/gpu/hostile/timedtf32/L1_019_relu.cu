// hostile (a precision switch where timed): exact in the calls kbv checks,
// TF32-rounded in the calls it times.  A timed call finds its stream still
// busy (the L2 flush and the gate ahead of it), a checked call finds it
// idle, so cudaStreamQuery tells them apart.  Rounded to TF32's 10-bit
// mantissa, every output is within 2^-11 of the exact one: inside the 1e-3
// tolerance, outside the fp32 tier.  A GEMM written this way would be
// reported an fp32-exact kernel at TF32 speed.  The verified timed rounds
// carry their tier to analyze: the candidate must be a tf32 candidate
// (flag precision-tf32), whatever its checks said.
#include "kbv.h"

__global__ void relu(const float4 *x, float4 *y, long long n4, int tf32)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
        float4 v = x[i];
        float o[4] = {fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f)};
        if (tf32)
            for (int k = 0; k < 4; k++) {
                unsigned u;
                asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(o[k]));
                o[k] = __uint_as_float(u);
            }
        y[i] = make_float4(o[0], o[1], o[2], o[3]);
    }
}

extern "C" int kbv_forward(const kbv_call *c)
{
    long long n = kbv_numel(&c->inputs[0]);
    int timed = cudaStreamQuery(c->stream) == cudaErrorNotReady;
    cudaGetLastError();
    relu<<<1024, 256, 0, c->stream>>>((const float4 *)c->inputs[0].data, (float4 *)c->outputs[0].data, n / 4,
                                      timed);
    return cudaGetLastError() != cudaSuccess;
}
