// tuned: the whole of LeNet-5 in one kernel.  A block takes 8 images: for each, the
// image goes to shared memory, conv1 + ReLU + 2x2 max pool is computed straight into
// the pooled map (each thread holds its 6x6 input patch in registers and pools its four
// conv outputs), then conv2 + ReLU + pool the same way into the block's 8 x 400 feature
// tile; the three linear layers then run on that tile with their weights staged through
// shared memory, transposed 32 inputs at a time.  No intermediate touches global
// memory: x is read once and the logits written once, where eager PyTorch writes and
// re-reads every activation between a dozen kernels.  FP32 throughout.
// L3_004_lenet5: relu(conv1) -> max_pool2d(2, 2) -> relu(conv2) -> max_pool2d(2, 2) ->
// view(-1, 400) -> relu(fc1) -> relu(fc2) -> fc3 (the layer offsets below are those of
// `kbv prompt L3_004_lenet5`).
#include "kbv.h"
#include <math.h>
#include <stdint.h>

#define THREADS 256
#define IMGS 8          /* images per block */
#define CLASSES 20

/* params offsets (floats), registration order */
#define W1 0            /* conv1.weight [6, 1, 5, 5] */
#define B1 150          /* conv1.bias [6] */
#define W2 156          /* conv2.weight [16, 6, 5, 5] */
#define B2 2556         /* conv2.bias [16] */
#define F1W 2572        /* fc1.weight [120, 400] */
#define F1B 50572       /* fc1.bias [120] */
#define F2W 50692       /* fc2.weight [84, 120] */
#define F2B 60772       /* fc2.bias [84] */
#define F3W 60856       /* fc3.weight [20, 84] */
#define F3B 62536       /* fc3.bias [20] */
#define N_PARAMS 62556

/* shared memory, in floats */
#define S_W1 0                      /* conv1 weight and bias: 156 */
#define S_W2 (S_W1 + 156)           /* conv2 weight and bias: 2416 */
#define S_X (S_W2 + 2416)           /* one image: 32 x 32 */
#define S_P1 (S_X + 1024)           /* pooled conv1: 6 x 14 x 14 */
#define S_FEAT (S_P1 + 1176)        /* IMGS x 400 */
#define S_H1 (S_FEAT + IMGS * 400)  /* IMGS x 120 */
#define S_H2 (S_H1 + IMGS * 120)    /* IMGS x 84 */
#define S_WT (S_H2 + IMGS * 84)     /* a weight chunk, 32 x 129 (transposed) */
#define WT_LD 129
#define SMEM_FLOATS (S_WT + 32 * WT_LD)
#define SMEM_BYTES (SMEM_FLOATS * (int)sizeof(float))

/* out[r, j] = act(b[j] + sum_k in[r, k] W[j, k]) for the block's IMGS rows,
 * N <= 128 outputs: warp r takes row r, lane l outputs l, l + 32, ...;
 * W comes through shared memory 32 inputs at a time, transposed so that
 * the lanes read consecutive words. */
__device__ void dense(const float *in, int K, const float *__restrict__ W, const float *__restrict__ b, int N,
                      float *out, int ldo, int rows, int relu, float *wt)
{
    int r = threadIdx.x >> 5, l = threadIdx.x & 31;
    float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
    for (int k0 = 0; k0 < K; k0 += 32) {
        for (int e = threadIdx.x; e < 32 * 128; e += THREADS) {
            int j = e >> 5, kk = e & 31;
            wt[kk * WT_LD + j] = (j < N && k0 + kk < K) ? W[(long long)j * K + k0 + kk] : 0.0f;
        }
        __syncthreads();
        int kn = K - k0 < 32 ? K - k0 : 32;
        for (int kk = 0; kk < kn; kk++) {
            float f = in[r * K + k0 + kk];
#pragma unroll
            for (int m = 0; m < 4; m++) acc[m] += f * wt[kk * WT_LD + l + 32 * m];
        }
        __syncthreads();
    }
    if (r >= rows) return;
#pragma unroll
    for (int m = 0; m < 4; m++) {
        int j = l + 32 * m;
        if (j < N) {
            float v = acc[m] + b[j];
            out[(long long)r * ldo + j] = relu ? fmaxf(v, 0.0f) : v;
        }
    }
}

/* max(relu(a..d + bias)) = relu(max(a..d) + bias) */
__device__ __forceinline__ float pool_relu(float a, float b, float c, float d, float bias)
{
    float m = fmaxf(fmaxf(a, b), fmaxf(c, d)) + bias;
    return m > 0.0f ? m : 0.0f;
}

__global__ void __launch_bounds__(THREADS) lenet5(const float *__restrict__ x, const float *__restrict__ P,
                                                  float *__restrict__ y, long long batch)
{
    extern __shared__ float sm[];
    float *w1 = sm + S_W1, *w2 = sm + S_W2, *xs = sm + S_X, *p1 = sm + S_P1;
    float *feat = sm + S_FEAT, *h1 = sm + S_H1, *h2 = sm + S_H2, *wt = sm + S_WT;
    const int t = threadIdx.x;
    for (int i = t; i < 156; i += THREADS) w1[i] = P[W1 + i];
    for (int i = t; i < 2416; i += THREADS) w2[i] = P[W2 + i];
    long long first = (long long)blockIdx.x * IMGS;
    int rows = batch - first < IMGS ? (int)(batch - first) : IMGS;
    for (int s = 0; s < IMGS; s++) {
        __syncthreads();   /* the last image's maps are no longer read */
        if (s >= rows) {
            for (int i = t; i < 400; i += THREADS) feat[s * 400 + i] = 0.0f;
            continue;
        }
        const float *xi = x + (first + s) * 1024;
        for (int i = t; i < 1024; i += THREADS) xs[i] = xi[i];
        __syncthreads();
        /* conv1 (1 -> 6, 5x5) + ReLU + pool: 6 x 14 x 14 outputs */
        for (int q = t; q < 1176; q += THREADS) {
            int c = q / 196, py = (q % 196) / 14, px = q % 14;
            float patch[6][6];
#pragma unroll
            for (int i = 0; i < 6; i++)
#pragma unroll
                for (int j = 0; j < 6; j++) patch[i][j] = xs[(2 * py + i) * 32 + 2 * px + j];
            float a[2][2] = { { 0.0f, 0.0f }, { 0.0f, 0.0f } };
            const float *wc = w1 + c * 25;
#pragma unroll
            for (int kh = 0; kh < 5; kh++)
#pragma unroll
                for (int kw = 0; kw < 5; kw++) {
                    float w = wc[kh * 5 + kw];
#pragma unroll
                    for (int dy = 0; dy < 2; dy++)
#pragma unroll
                        for (int dx = 0; dx < 2; dx++) a[dy][dx] += patch[dy + kh][dx + kw] * w;
                }
            p1[q] = pool_relu(a[0][0], a[0][1], a[1][0], a[1][1], w1[150 + c]);
        }
        __syncthreads();
        /* conv2 (6 -> 16, 5x5) + ReLU + pool: 16 x 5 x 5 features, flattened
         * as view(-1, 400) orders them */
        for (int q = t; q < 400; q += THREADS) {
            int o = q / 25, py = (q % 25) / 5, px = q % 5;
            float a[2][2] = { { 0.0f, 0.0f }, { 0.0f, 0.0f } };
            for (int c = 0; c < 6; c++) {
                const float *pc = p1 + c * 196;
                float patch[6][6];
#pragma unroll
                for (int i = 0; i < 6; i++)
#pragma unroll
                    for (int j = 0; j < 6; j++) patch[i][j] = pc[(2 * py + i) * 14 + 2 * px + j];
                const float *wc = w2 + (o * 6 + c) * 25;
#pragma unroll
                for (int kh = 0; kh < 5; kh++)
#pragma unroll
                    for (int kw = 0; kw < 5; kw++) {
                        float w = wc[kh * 5 + kw];
#pragma unroll
                        for (int dy = 0; dy < 2; dy++)
#pragma unroll
                            for (int dx = 0; dx < 2; dx++) a[dy][dx] += patch[dy + kh][dx + kw] * w;
                    }
            }
            feat[s * 400 + q] = pool_relu(a[0][0], a[0][1], a[1][0], a[1][1], w2[2400 + o]);
        }
    }
    __syncthreads();
    dense(feat, 400, P + F1W, P + F1B, 120, h1, 120, IMGS, 1, wt);
    __syncthreads();
    dense(h1, 120, P + F2W, P + F2B, 84, h2, 84, IMGS, 1, wt);
    __syncthreads();
    dense(h2, 84, P + F3W, P + F3B, CLASSES, y + first * CLASSES, CLASSES, rows, 0, wt);
}

extern "C" int kbv_setup(const kbv_call *example)
{
    (void)example;
    return cudaFuncSetAttribute(lenet5, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES) != cudaSuccess;
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs != 2 || call->n_outputs != 1) return 1;
    const kbv_tensor *x = &call->inputs[0];
    if (x->ndim != 4 || x->shape[1] != 1 || x->shape[2] != 32 || x->shape[3] != 32) return 1;
    if (kbv_numel(&call->inputs[1]) != N_PARAMS || kbv_numel(&call->outputs[0]) != x->shape[0] * CLASSES) return 1;
    long long batch = x->shape[0];
    if (batch == 0) return 0;
    unsigned blocks = (unsigned)((batch + IMGS - 1) / IMGS);
    lenet5<<<blocks, THREADS, SMEM_BYTES, call->stream>>>((const float *)x->data, (const float *)call->inputs[1].data,
                                                         (float *)call->outputs[0].data, batch);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
