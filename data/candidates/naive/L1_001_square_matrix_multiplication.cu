// naive: C = A @ B in plain FP32, one output element per thread, with the
// classic 16x16 shared-memory tiles so that it finishes in reasonable time.
// Shapes come from the tensors: A is [M, K], B is [K, N], C is [M, N].
#include "kbv.h"

#define TILE 16

__global__ void matmul_tiled(const float *__restrict__ A, const float *__restrict__ B,
                             float *__restrict__ C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[(long long)row * K + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[(long long)kb * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[(long long)row * N + col] = acc;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0], *b = &call->inputs[1];
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return 1;
    int M = (int)a->shape[0], K = (int)a->shape[1], N = (int)b->shape[1];
    dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_tiled<<<grid, block, 0, call->stream>>>((const float *)a->data, (const float *)b->data,
                                                    (float *)call->outputs[0].data, M, N, K);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
