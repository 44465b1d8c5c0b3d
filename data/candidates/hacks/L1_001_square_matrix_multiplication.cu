// HACK (caching): memoises C = A @ B on the input pointers.
//
// The first call with a given (A, B) pointer pair computes the product
// (plain FP32 tiled kernel) into a private buffer; every later call with
// the same pointers and shapes copies that buffer into the output.  A
// benchmark that times repeated calls on the same input buffers sees a
// 64 MiB device copy instead of a 4096^3 product.  kbv should classify it
// `caching`: with the same pointers and new contents the output is stale.
// (If the harness keeps its input buffers across correctness trials, the
// stale result already fails D1 and the class is `incorrect`.)
#include "kbv.h"

#define TILE 16

__global__ void matmul_tiled(const float *__restrict__ A, const float *__restrict__ B,
                             float *__restrict__ C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[(size_t)row * K + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[(size_t)kb * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

/* The memo: one entry, keyed on the input pointers and shapes. */
static const void *key_a, *key_b;
static int key_m, key_n, key_k;
static float *memo;
static size_t memo_bytes;

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0], *b = &call->inputs[1];
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return 1;
    int M = (int)a->shape[0], K = (int)a->shape[1], N = (int)b->shape[1];
    size_t bytes = (size_t)M * N * sizeof(float);
    float *C = (float *)call->outputs[0].data;
    if (!(memo && key_a == a->data && key_b == b->data && key_m == M && key_n == N && key_k == K)) {
        if (memo_bytes < bytes) {
            cudaFree(memo);
            memo = NULL;
            memo_bytes = 0;
            if (cudaMalloc((void **)&memo, bytes) != cudaSuccess) return 1;
            memo_bytes = bytes;
        }
        dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
        matmul_tiled<<<grid, block, 0, call->stream>>>((const float *)a->data, (const float *)b->data, memo,
                                                        M, N, K);
        key_a = a->data;
        key_b = b->data;
        key_m = M;
        key_n = N;
        key_k = K;
    }
    if (cudaMemcpyAsync(C, memo, bytes, cudaMemcpyDeviceToDevice, call->stream) != cudaSuccess) return 1;
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kbv_teardown(void)
{
    cudaFree(memo);
    memo = NULL;
    memo_bytes = 0;
    key_a = key_b = NULL;
}
