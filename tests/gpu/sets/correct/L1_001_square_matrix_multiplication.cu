// A correct FP32 matrix product: 64x64 tiles, 4x4 outputs per thread,
// FP32 FMA only (no tensor cores).
#include "kbv.h"

#define TS 64
#define TK 16

__global__ void sgemm(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TK][TS + 1];
    __shared__ float Bs[TK][TS];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    int row0 = blockIdx.y * TS, col0 = blockIdx.x * TS;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < n; k0 += TK) {
        for (int i = threadIdx.x; i < TS * TK; i += 256) {
            int r = i / TK, k = i % TK;
            As[k][r] = A[(int64_t)(row0 + r) * n + k0 + k];
            int kk = i / TS, cc = i % TS;
            Bs[kk][cc] = B[(int64_t)(k0 + kk) * n + col0 + cc];
        }
        __syncthreads();
        for (int k = 0; k < TK; k++) {
            float a[4], bb[4];
            for (int i = 0; i < 4; i++) a[i] = As[k][ty * 4 + i];
            for (int j = 0; j < 4; j++) bb[j] = Bs[k][tx * 4 + j];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) acc[i][j] = fmaf(a[i], bb[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            C[(int64_t)(row0 + ty * 4 + i) * n + col0 + tx * 4 + j] = acc[i][j];
}

extern "C" int kbv_forward(const kbv_call *c)
{
    int n = (int)c->inputs[0].shape[0];
    if (n % TS) return 1; // the suite's shape is 4096
    dim3 grid(n / TS, n / TS);
    sgemm<<<grid, 256, 0, c->stream>>>((const float *)c->inputs[0].data, (const float *)c->inputs[1].data,
                                       (float *)c->outputs[0].data, n);
    return cudaGetLastError() != cudaSuccess;
}
