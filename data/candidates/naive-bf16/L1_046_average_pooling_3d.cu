// naive-bf16: average (count_include_pad) pooling, one thread per output element.
// L1_046_average_pooling_3d: out = nn.AvgPool3d(kernel_size, stride, padding)(x)
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <cuda_bf16.h>
// bf16_t: a bfloat16 in memory, a float in arithmetic (reads widen exactly,
// writes round to nearest even), so that the kernels below load and store
// bfloat16 and compute in float.
struct bf16_t {
    __nv_bfloat16 v;
    __device__ __forceinline__ operator float() const { return __bfloat162float(v); }
    __device__ __forceinline__ bf16_t &operator=(float f) { v = __float2bfloat16_rn(f); return *this; }
    __device__ __forceinline__ bf16_t &operator+=(float f) { return *this = (float)*this + f; }
    __device__ __forceinline__ bf16_t &operator-=(float f) { return *this = (float)*this - f; }
    __device__ __forceinline__ bf16_t &operator*=(float f) { return *this = (float)*this * f; }
    __device__ __forceinline__ bf16_t &operator/=(float f) { return *this = (float)*this / f; }
};
#include <math.h>
#include <stdint.h>

#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1

/* 3-D pooling written as 3-D with unit leading dimensions:
 * kernel [3, 3, 3], stride [2, 2, 2], padding [1, 1, 1], dilation [1, 1, 1]. */
#define KD 3
#define KH 3
#define KW 3
__constant__ int S_[3] = {2, 2, 2};
__constant__ int P_[3] = {1, 1, 1};
__constant__ int DL[3] = {1, 1, 1};

__global__ void pool(const bf16_t *__restrict__ x, bf16_t *__restrict__ y, long long planes, long long ID, long long IH,
                     long long IW, long long OD, long long OH, long long OW)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = planes * OD * OH * OW;
    if (t >= total) return;
    long long ow = t % OW, oh = (t / OW) % OH, od = (t / (OW * OH)) % OD, pl = t / (OW * OH * OD);
    const bf16_t *xp = x + pl * ID * IH * IW;
    float acc = 0.0f;
    for (int a = 0; a < KD; a++)
        for (int b = 0; b < KH; b++)
            for (int c = 0; c < KW; c++) {
                long long id = od * S_[0] - P_[0] + (long long)a * DL[0];
                long long ih = oh * S_[1] - P_[1] + (long long)b * DL[1];
                long long iw = ow * S_[2] - P_[2] + (long long)c * DL[2];
                if (id < 0 || id >= ID || ih < 0 || ih >= IH || iw < 0 || iw >= IW) continue; /* padding counts as zero */
                float v = xp[(id * IH + ih) * IW + iw];
                acc += v;
            }
    y[t] = acc / (float)(KD * KH * KW);
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 1 || call->n_outputs < 1) return 1;
    const kbv_tensor *x = &call->inputs[0], *o = &call->outputs[0];
    if (x->ndim != 3 + 2 || o->ndim != x->ndim) return 1;
    long long in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
    for (int i = 0; i < 3; i++) {
        in[3 - 3 + i] = x->shape[2 + i];
        out[3 - 3 + i] = o->shape[2 + i];
    }
    long long planes = x->shape[0] * x->shape[1];
    long long total = planes * out[0] * out[1] * out[2];
    if (total == 0) return 0;
    pool<<<(unsigned)((total + 255) / 256), 256, 0, call->stream>>>((const bf16_t *)x->data, (bf16_t *)o->data, planes,
                                                                    in[0], in[1], in[2], out[0], out[1], out[2]);
    CHECK_LAUNCH();
}
