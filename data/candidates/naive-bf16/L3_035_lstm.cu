// naive-bf16: per layer and direction, one tiled GEMM for the input projections of
// every step, then per step a GEMM with weight_hh and one thread per hidden unit.
// L3_035_lstm: out = out, _ = lstm(x, (h0, c0)) (6 layers, batch_first, with h0 and c0 as inputs where the model draws its own in every call); fc(out[:, -1, :])
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

#define KIND 0      /* 0 LSTM, 1 GRU, 2 the tanh cell over cat(x, h) with one bias */
#define G 4            /* gates */
#define HID 256LL
#define LAYERS 6
#define DIRS 1
#define IN 128LL
#define STEPS 512LL
#define BATCH 10LL
#define BATCH_FIRST 1
#define RESULT 0     /* 0 head on the last step, 1 head on every step, 2 the sequence, 3 h_n, 4 c_n */
#define OUTF 10LL
#define FC_W 3026944LL
#define FC_B 3029504LL
#define N_INPUTS 4

/* per layer and direction: weight_ih, weight_hh, bias_ih, bias_hh (-1: none)
 * offsets in params, the input width, and the row lengths of the two
 * weights as stored (the cell's two matrices are column blocks of i2h) */
struct layer { long long wi, wh, bi, bh, in, ldi, ldh; };
static const layer NET[] = {
    { 0LL, 131072LL, 393216LL, 394240LL, 128LL, 128LL, 256LL },
    { 395264LL, 657408LL, 919552LL, 920576LL, 256LL, 256LL, 256LL },
    { 921600LL, 1183744LL, 1445888LL, 1446912LL, 256LL, 256LL, 256LL },
    { 1447936LL, 1710080LL, 1972224LL, 1973248LL, 256LL, 256LL, 256LL },
    { 1974272LL, 2236416LL, 2498560LL, 2499584LL, 256LL, 256LL, 256LL },
    { 2500608LL, 2762752LL, 3024896LL, 3025920LL, 256LL, 256LL, 256LL },
};

static float *xs, *gx, *seq[2], *hbuf[2], *cbuf, *rec, *hn, *cn;

/* y[m, n] = sum_k a[m, k] w[n, k] + b[n]: a rows lda apart, w rows ldw apart */
__global__ void gemm_kernel(const float *__restrict__ a, long long lda, const float *__restrict__ w,
                            long long ldw, const float *__restrict__ b, float *__restrict__ y, long long M,
                            long long N, long long K)
{
    __shared__ float as[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    long long row = (long long)blockIdx.x * TILE + threadIdx.y;
    long long col = (long long)blockIdx.y * TILE + threadIdx.x;
    long long wrow = (long long)blockIdx.y * TILE + threadIdx.y;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += TILE) {
        long long k = k0 + threadIdx.x;
        as[threadIdx.y][threadIdx.x] = (row < M && k < K) ? a[row * lda + k] : 0.0f;
        ws[threadIdx.y][threadIdx.x] = (wrow < N && k < K) ? w[wrow * ldw + k] : 0.0f;
        __syncthreads();
        for (int j = 0; j < TILE; j++) acc += as[threadIdx.y][j] * ws[threadIdx.x][j];
        __syncthreads();
    }
    if (row < M && col < N) y[row * N + col] = acc + (b ? b[col] : 0.0f);
}

__device__ float sigm(float v) { return 1.0f / (1.0f + expf(-v)); }

/* one thread per (b, j): the gates from the input projection gxt [B, G H]
 * and the recurrent product r [B, G H] (biases included), the new state
 * into hnew (and c in place), and the layer output at its column */
__global__ void cell_kernel(const float *__restrict__ gxt, const float *__restrict__ r,
                            const float *__restrict__ hold, float *__restrict__ hnew, float *__restrict__ c,
                            float *__restrict__ y, long long yld)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= BATCH * HID) return;
    long long b = i / HID, j = i % HID;
    const float *gi = gxt + b * G * HID, *gr = r + b * G * HID;
    float h;
    if (KIND == 0) {
        float ig = sigm(gi[j] + gr[j]), fg = sigm(gi[HID + j] + gr[HID + j]);
        float gg = tanhf(gi[2 * HID + j] + gr[2 * HID + j]), og = sigm(gi[3 * HID + j] + gr[3 * HID + j]);
        float cv = fg * c[i] + ig * gg;
        c[i] = cv;
        h = og * tanhf(cv);
    } else if (KIND == 1) {
        float rg = sigm(gi[j] + gr[j]), zg = sigm(gi[HID + j] + gr[HID + j]);
        float ng = tanhf(gi[2 * HID + j] + rg * gr[2 * HID + j]);
        h = (1.0f - zg) * ng + zg * hold[i];
    } else {
        h = tanhf(gi[j] + gr[j]);
    }
    hnew[i] = h;
    y[b * yld + j] = h;
}

/* x [B, T, F] -> [T, B, F] (or the reverse with back) */
__global__ void swap01(const float *__restrict__ x, float *__restrict__ y, long long A, long long Bd, long long F)
{
    long long total = A * Bd * F;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long f = i % F, r = i / F, a = r / Bd, bb = r % Bd;
        y[(bb * A + a) * F + f] = x[i];
    }
}

__global__ void copy_kernel(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        y[i] = x[i];
}

static unsigned blocks(long long n)
{
    long long b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b > 65535 ? 65535 : (b < 1 ? 1 : b));
}

static void gemm(const float *a, long long lda, const float *w, long long ldw, const float *b, float *y,
                 long long M, long long N, long long K, cudaStream_t st)
{
    dim3 grid((unsigned)((M + TILE - 1) / TILE), (unsigned)((N + TILE - 1) / TILE));
    gemm_kernel<<<grid, dim3(TILE, TILE), 0, st>>>(a, lda, w, ldw, b, y, M, N, K);
}

extern "C" int kbv_setup(const kbv_call *call)
{
    (void)call;
    long long seqn = STEPS * BATCH * (IN > DIRS * HID ? IN : DIRS * HID);
    if (cudaMalloc((void **)&xs, (size_t)(STEPS * BATCH * IN) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&gx, (size_t)(STEPS * BATCH * G * HID) * sizeof(float)) != cudaSuccess) return 1;
    for (int i = 0; i < 2; i++) {
        if (cudaMalloc((void **)&seq[i], (size_t)seqn * sizeof(float)) != cudaSuccess) return 1;
        if (cudaMalloc((void **)&hbuf[i], (size_t)(BATCH * HID) * sizeof(float)) != cudaSuccess) return 1;
    }
    if (cudaMalloc((void **)&cbuf, (size_t)(BATCH * HID) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&rec, (size_t)(BATCH * G * HID) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&hn, (size_t)(LAYERS * DIRS * BATCH * HID) * sizeof(float)) != cudaSuccess) return 1;
    if (cudaMalloc((void **)&cn, (size_t)(LAYERS * DIRS * BATCH * HID) * sizeof(float)) != cudaSuccess) return 1;
    return 0;
}

static int forward_f32(const kbv_call *call)
{
    if (call->n_inputs != N_INPUTS || call->n_outputs != 1 || !xs) return 1;
    if (kbv_numel(&call->inputs[0]) != STEPS * BATCH * IN) return 1;
    cudaStream_t st = call->stream;
    const float *x = (const float *)call->inputs[0].data, *h0 = (const float *)call->inputs[1].data;
    const float *c0 = KIND == 0 ? (const float *)call->inputs[2].data : NULL;
    const float *P = (const float *)call->inputs[N_INPUTS - 1].data;
    float *out = (float *)call->outputs[0].data;
    /* the layers read a seq-major [T, B, features] sequence */
    if (BATCH_FIRST) swap01<<<blocks(STEPS * BATCH * IN), THREADS, 0, st>>>(x, xs, BATCH, STEPS, IN);
    else copy_kernel<<<blocks(STEPS * BATCH * IN), THREADS, 0, st>>>(x, xs, STEPS * BATCH * IN);
    const float *cur = xs;
    int which = 0;
    for (int l = 0; l < LAYERS; l++) {
        float *y = seq[which];
        for (int d = 0; d < DIRS; d++) {
            const layer &Ly = NET[l * DIRS + d];
            long long s = (long long)l * DIRS + d;
            gemm(cur, Ly.in, P + Ly.wi, Ly.ldi, P + Ly.bi, gx, STEPS * BATCH, G * HID, Ly.in, st);
            copy_kernel<<<blocks(BATCH * HID), THREADS, 0, st>>>(h0 + s * BATCH * HID, hbuf[0], BATCH * HID);
            if (KIND == 0) copy_kernel<<<blocks(BATCH * HID), THREADS, 0, st>>>(c0 + s * BATCH * HID, cbuf, BATCH * HID);
            int hb = 0;
            for (long long k = 0; k < STEPS; k++) {
                long long t = d ? STEPS - 1 - k : k;
                gemm(hbuf[hb], HID, P + Ly.wh, Ly.ldh, Ly.bh >= 0 ? P + Ly.bh : NULL, rec, BATCH, G * HID, HID, st);
                cell_kernel<<<blocks(BATCH * HID), THREADS, 0, st>>>(gx + t * BATCH * G * HID, rec, hbuf[hb],
                                                                     hbuf[1 - hb], cbuf,
                                                                     y + t * BATCH * DIRS * HID + d * HID, DIRS * HID);
                hb = 1 - hb;
            }
            copy_kernel<<<blocks(BATCH * HID), THREADS, 0, st>>>(hbuf[hb], hn + s * BATCH * HID, BATCH * HID);
            if (KIND == 0) copy_kernel<<<blocks(BATCH * HID), THREADS, 0, st>>>(cbuf, cn + s * BATCH * HID, BATCH * HID);
        }
        cur = y;
        which = 1 - which;
    }
    long long F = DIRS * HID;
    if (RESULT == 0) gemm(cur + (STEPS - 1) * BATCH * F, F, P + FC_W, F, P + FC_B, out, BATCH, OUTF, F, st);
    else if (RESULT == 1) gemm(cur, F, P + FC_W, F, P + FC_B, out, STEPS * BATCH, OUTF, F, st);
    else if (RESULT == 2 && BATCH_FIRST) swap01<<<blocks(STEPS * BATCH * F), THREADS, 0, st>>>(cur, out, STEPS, BATCH, F);
    else if (RESULT == 2) copy_kernel<<<blocks(STEPS * BATCH * F), THREADS, 0, st>>>(cur, out, STEPS * BATCH * F);
    else copy_kernel<<<blocks(LAYERS * DIRS * BATCH * HID), THREADS, 0, st>>>(RESULT == 3 ? hn : cn, out,
                                                                              LAYERS * DIRS * BATCH * HID);
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
    float **all[] = { &xs, &gx, &seq[0], &seq[1], &hbuf[0], &hbuf[1], &cbuf, &rec, &hn, &cn };
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++) {
        cudaFree(*all[i]);
        *all[i] = NULL;
    }
}
