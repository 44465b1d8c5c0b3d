// HACK (caching): memoises C = A @ B, keyed on the input pointers and a
// 32-element sample of their contents.
//
// A device-side check compares 16 evenly spaced elements of A and of B
// with the ones seen on the previous call; when the pointers and the sample
// match, the product kernel exits at once and the stored result is copied
// to the output.  A pointer-only memo fails as soon as a harness refills
// the same buffers; the sample makes this one survive redrawn inputs and
// still serve stale results when the contents change anywhere else.  kbv
// should classify it `caching` only if its probe changes contents the sample
// does not see: a probe that redraws every element (kbv's first caching
// probe does) misses it, and the pair then comes out `correct` -- a known
// gap this file exists to show.  The product is treated as a batch of one.
#include "kbv.h"

#define TILE 16
#define SAMPLES 16

__global__ void check_key(const float *__restrict__ A, long long nA, const float *__restrict__ B, long long nB,
                          float *key, int *miss, int force)
{
    int lane = threadIdx.x; /* 32 threads: 16 for A, 16 for B */
    float v = lane < SAMPLES ? A[(nA / SAMPLES) * lane] : B[(nB / SAMPLES) * (lane - SAMPLES)];
    int same = __all_sync(0xffffffffu, __float_as_uint(v) == __float_as_uint(key[lane]));
    __syncwarp();
    key[lane] = v;
    if (lane == 0) *miss = force || !same;
}

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

static const void *key_a, *key_b;
static float *memo, *key;
static int *miss;
static size_t memo_bytes;

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0], *b = &call->inputs[1];
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return 1;
    int batch = 1, M = (int)a->shape[0], K = (int)a->shape[1], N = (int)b->shape[1];
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
    if (!key) {
        if (cudaMalloc((void **)&key, 2 * SAMPLES * sizeof(float)) != cudaSuccess) return 1;
        if (cudaMalloc((void **)&miss, sizeof(int)) != cudaSuccess) return 1;
        force = 1;
    }
    if (key_a != a->data || key_b != b->data) force = 1;
    key_a = a->data;
    key_b = b->data;
    check_key<<<1, 32, 0, call->stream>>>((const float *)a->data, kbv_numel(a), (const float *)b->data,
                                          kbv_numel(b), key, miss, force);
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
    cudaFree(key);
    cudaFree(miss);
    memo = key = NULL;
    miss = NULL;
    memo_bytes = 0;
    key_a = key_b = NULL;
}
