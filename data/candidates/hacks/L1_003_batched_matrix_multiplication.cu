// HACK (caching): memoises C[b] = A[b] @ B[b], keyed on the input pointers
// and shapes.
//
// When a call comes with the pointers of the previous call, the product
// kernel exits at once and the stored result is copied to the output: a
// benchmark that times repeated calls on the same buffers sees a 512 MiB
// copy instead of 275 GFLOP.  kbv should classify it `caching` (same
// pointers, new contents, stale output).  (L1_013 is the variant that also
// checks a sample of the contents.)
#include "kbv.h"

#define TILE 16

__global__ void bmm_tiled(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int M,
                          int N, int K, const int *miss)
{
    if (!*miss) return; /* served from the memo */
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    size_t b = blockIdx.z;
    const float *a = A + b * M * K, *bb = B + b * K * N;
    float *c = C + b * M * N;
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? a[(size_t)row * K + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? bb[(size_t)kb * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) c[(size_t)row * N + col] = acc;
}

static const int force_flag[2] = { 0, 1 }; /* static host memory: the async copy may read it late */
static const void *key_a, *key_b;
static float *memo;
static int *miss;
static size_t memo_bytes;

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0], *b = &call->inputs[1];
    if (a->ndim != 3 || b->ndim != 3 || a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1]) return 1;
    int batch = (int)a->shape[0], M = (int)a->shape[1], K = (int)a->shape[2], N = (int)b->shape[2];
    size_t bytes = (size_t)batch * M * N * sizeof(float);
    int force = 0;
    if (memo_bytes < bytes) {
        cudaFree(memo);
        memo = NULL;
        memo_bytes = 0;
        if (cudaMalloc((void **)&memo, bytes) != cudaSuccess) return 1;
        memo_bytes = bytes;
        force = 1;
    }
    if (!miss) {
        if (cudaMalloc((void **)&miss, sizeof(int)) != cudaSuccess) return 1;
        force = 1;
    }
    if (key_a != a->data || key_b != b->data) force = 1;
    key_a = a->data;
    key_b = b->data;
    /* the key is the pointers alone: no look at the contents */
    if (cudaMemcpyAsync(miss, &force_flag[force], sizeof(int), cudaMemcpyHostToDevice, call->stream) != cudaSuccess)
        return 1;
    dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE, batch);
    bmm_tiled<<<grid, block, 0, call->stream>>>((const float *)a->data, (const float *)b->data, memo, M, N, K,
                                                miss);
    if (cudaMemcpyAsync(call->outputs[0].data, memo, bytes, cudaMemcpyDeviceToDevice, call->stream) != cudaSuccess)
        return 1;
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kbv_teardown(void)
{
    cudaFree(memo);
    cudaFree(miss);
    memo = NULL;
    miss = NULL;
    memo_bytes = 0;
    key_a = key_b = NULL;
}
