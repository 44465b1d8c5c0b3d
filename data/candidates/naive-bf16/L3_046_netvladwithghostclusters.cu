// naive-bf16: NetVLAD one plain kernel per step: tiled GEMM for the assignment,
// two-pass batch-norm statistics, one thread per row, per output or per cluster.
// L3_046_netvladwithghostclusters: out = NetVLAD(x): softmax(BatchNorm1d(x @ clusters)) over 48 clusters with the 16 ghosts then dropped, residuals to the 32 centres aggregated per sample, normalised per cluster over D, flattened and normalised (the model's steps below)
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

// BF16: float kernels on widened copies of the call's tensors
#define THREADS 256
#define TILE 16
#define KC 32LL       /* clusters */
#define CC 48LL       /* clusters and ghost clusters */
#define DD 512LL       /* feature size */
#define NN 100LL       /* features per sample */
#define BB 2048LL       /* samples */
#define P_CL 0LL
#define P_C2 24576LL
#define P_G 40960LL
#define P_B 41008LL

static float *asg, *stats, *asum, *vl, *cnorm;

/* y[m, n] = sum_k a[m, k] w[k, n] (w row-major [K, N]) */
__global__ void gemm_kn(const float *__restrict__ a, const float *__restrict__ w, float *__restrict__ y,
                        long long M, long long N, long long K)
{
    __shared__ float as[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    long long row = (long long)blockIdx.x * TILE + threadIdx.y;
    long long col = (long long)blockIdx.y * TILE + threadIdx.x;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += TILE) {
        long long ka = k0 + threadIdx.x, kw = k0 + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? a[row * K + ka] : 0.0f;
        ws[threadIdx.y][threadIdx.x] = (col < N && kw < K) ? w[kw * N + col] : 0.0f;
        __syncthreads();
        for (int j = 0; j < TILE; j++) acc += as[threadIdx.y][j] * ws[j][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) y[row * N + col] = acc;
}

/* Sum of v over the block, in a fixed order; every thread gets it. */
__device__ float block_sum(float v, float *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int o = THREADS / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) sh[threadIdx.x] += sh[threadIdx.x + o];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

/* one block per column of asg [R, C]: the mean, then the biased variance */
__global__ void col_stats(const float *__restrict__ x, float *__restrict__ mean, float *__restrict__ rstd, long long R)
{
    __shared__ float sh[THREADS];
    long long c = blockIdx.x;
    float s = 0.0f;
    for (long long r = threadIdx.x; r < R; r += THREADS) s += x[r * CC + c];
    float m = block_sum(s, sh) / (float)R;
    float q = 0.0f;
    for (long long r = threadIdx.x; r < R; r += THREADS) {
        float d = x[r * CC + c] - m;
        q += d * d;
    }
    float var = block_sum(q, sh) / (float)R;
    if (threadIdx.x == 0) {
        mean[c] = m;
        rstd[c] = 1.0f / sqrtf(var + 1e-5f);
    }
}

/* one thread per row: batch norm, softmax over C, in place */
__global__ void bn_softmax(float *__restrict__ x, const float *__restrict__ mean, const float *__restrict__ rstd,
                           const float *__restrict__ g, const float *__restrict__ b, long long R)
{
    long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    float *row = x + r * CC;
    float m = -INFINITY;
    for (long long c = 0; c < CC; c++) {
        row[c] = (row[c] - mean[c]) * rstd[c] * g[c] + b[c];
        m = fmaxf(m, row[c]);
    }
    float s = 0.0f;
    for (long long c = 0; c < CC; c++) {
        row[c] = expf(row[c] - m);
        s += row[c];
    }
    for (long long c = 0; c < CC; c++) row[c] /= s;
}

/* one thread per (b, k): the sum of the assignments over N */
__global__ void a_sum(const float *__restrict__ p, float *__restrict__ s)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= BB * KC) return;
    long long b = i / KC, k = i % KC;
    float acc = 0.0f;
    for (long long n = 0; n < NN; n++) acc += p[(b * NN + n) * CC + k];
    s[i] = acc;
}

/* one thread per (b, d, k): sum_n p[b, n, k] x[b, n, d] - a_sum[b, k] c2[d, k] */
__global__ void vlad_kernel(const float *__restrict__ p, const float *__restrict__ x, const float *__restrict__ s,
                            const float *__restrict__ c2, float *__restrict__ v)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < BB * DD * KC;
         i += (long long)gridDim.x * blockDim.x) {
        long long k = i % KC, d = (i / KC) % DD, b = i / (KC * DD);
        float acc = 0.0f;
        for (long long n = 0; n < NN; n++) acc += p[(b * NN + n) * CC + k] * x[(b * NN + n) * DD + d];
        v[i] = acc - s[b * KC + k] * c2[d * KC + k];
    }
}

/* one thread per (b, k): 1 / max(||v[b, :, k]||, 1e-12) */
__global__ void col_norm(const float *__restrict__ v, float *__restrict__ inv)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= BB * KC) return;
    long long b = i / KC, k = i % KC;
    float acc = 0.0f;
    for (long long d = 0; d < DD; d++) {
        float t = v[(b * DD + d) * KC + k];
        acc += t * t;
    }
    inv[i] = 1.0f / fmaxf(sqrtf(acc), 1e-12f);
}

/* one block per sample: the intra-normalised row, then its own norm */
__global__ void row_norm(const float *__restrict__ v, const float *__restrict__ inv, float *__restrict__ out)
{
    __shared__ float sh[THREADS];
    long long b = blockIdx.x;
    float acc = 0.0f;
    for (long long i = threadIdx.x; i < DD * KC; i += THREADS) {
        float t = v[b * DD * KC + i] * inv[b * KC + i % KC];
        acc += t * t;
    }
    float rn = 1.0f / fmaxf(sqrtf(block_sum(acc, sh)), 1e-12f);
    for (long long i = threadIdx.x; i < DD * KC; i += THREADS)
        out[b * DD * KC + i] = v[b * DD * KC + i] * inv[b * KC + i % KC] * rn;
}

static unsigned blocks(long long n)
{
    long long b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b > 65535 ? 65535 : (b < 1 ? 1 : b));
}

extern "C" int kbv_setup(const kbv_call *call)
{
    (void)call;
    if (cudaMalloc((void **)&asg, (size_t)(BB * NN * CC) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&stats, (size_t)(2 * CC) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&asum, (size_t)(BB * KC) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&cnorm, (size_t)(BB * KC) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&vl, (size_t)(BB * DD * KC) * sizeof(float)) != cudaSuccess) return 1;
    return 0;
}

static int forward_f32(const kbv_call *call)
{
    if (call->n_inputs != 2 || call->n_outputs != 1 || !asg) return 1;
    if (kbv_numel(&call->inputs[0]) != BB * NN * DD) return 1;
    cudaStream_t st = call->stream;
    const float *x = (const float *)call->inputs[0].data, *P = (const float *)call->inputs[1].data;
    float *out = (float *)call->outputs[0].data;
    long long R = BB * NN;
    dim3 grid((unsigned)((R + TILE - 1) / TILE), (unsigned)((CC + TILE - 1) / TILE));
    gemm_kn<<<grid, dim3(TILE, TILE), 0, st>>>(x, P + P_CL, asg, R, CC, DD);
    col_stats<<<(unsigned)CC, THREADS, 0, st>>>(asg, stats, stats + CC, R);
    bn_softmax<<<blocks(R), THREADS, 0, st>>>(asg, stats, stats + CC, P + P_G, P + P_B, R);
    a_sum<<<blocks(BB * KC), THREADS, 0, st>>>(asg, asum);
    vlad_kernel<<<blocks(BB * DD * KC), THREADS, 0, st>>>(asg, x, asum, P + P_C2, vl);
    col_norm<<<blocks(BB * KC), THREADS, 0, st>>>(vl, cnorm);
    row_norm<<<(unsigned)BB, THREADS, 0, st>>>(vl, cnorm, out);
    CHECK_LAUNCH();
}


/* The BF16 setting: float copies of the call's bfloat16 tensors (inputs,
 * then outputs, each 256-byte aligned) in one buffer. */
static float *wide_buf;
static size_t wide_bytes;

__global__ void widen(const bf16_t *__restrict__ a, float *__restrict__ b, long long n)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) b[t] = a[t];
}

__global__ void narrow(const float *__restrict__ a, bf16_t *__restrict__ b, long long n)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) b[t] = a[t];
}

extern "C" int kbv_forward(const kbv_call *call)
{
    kbv_tensor in[32], out[8];
    if (call->n_inputs > 32 || call->n_outputs > 8) return 1;
    size_t bytes = 0;
    for (int i = 0; i < call->n_inputs + call->n_outputs; i++) {
        const kbv_tensor *t = i < call->n_inputs ? &call->inputs[i] : &call->outputs[i - call->n_inputs];
        if (t->dtype == KBV_BF16) bytes += ((size_t)kbv_numel(t) * sizeof(float) + 255) & ~(size_t)255;
    }
    if (bytes > wide_bytes) {
        cudaFree(wide_buf);
        wide_buf = NULL;
        wide_bytes = 0;
        if (cudaMalloc((void **)&wide_buf, bytes) != cudaSuccess) return 1;
        wide_bytes = bytes;
    }
    char *at = (char *)wide_buf;
    for (int i = 0; i < call->n_inputs + call->n_outputs; i++) {
        int is_in = i < call->n_inputs;
        const kbv_tensor *t = is_in ? &call->inputs[i] : &call->outputs[i - call->n_inputs];
        kbv_tensor *w = is_in ? &in[i] : &out[i - call->n_inputs];
        *w = *t;
        if (t->dtype != KBV_BF16) continue;
        long long n = kbv_numel(t);
        w->data = at;
        w->dtype = KBV_F32;
        at += ((size_t)n * sizeof(float) + 255) & ~(size_t)255;
        if (is_in && n > 0)
            widen<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>((const bf16_t *)t->data, (float *)w->data, n);
    }
    kbv_call c = *call;
    c.inputs = in;
    c.outputs = out;
    int rc = forward_f32(&c);
    if (rc) return rc;
    for (int i = 0; i < call->n_outputs; i++) {
        long long n = kbv_numel(&call->outputs[i]);
        if (call->outputs[i].dtype == KBV_BF16 && n > 0)
            narrow<<<(unsigned)((n + 255) / 256), 256, 0, call->stream>>>((const float *)out[i].data,
                                                                       (bf16_t *)call->outputs[i].data, n);
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kbv_teardown(void)
{
    cudaFree(wide_buf);
    wide_buf = NULL;
    wide_bytes = 0;
    float **all[] = { &asg, &stats, &asum, &cnorm, &vl };
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++) {
        cudaFree(*all[i]);
        *all[i] = NULL;
    }
}
