/* base_impl.h - what the baseline families (collect/baselines/problems/ .cu files)
 * share with the dispatcher (collect/baselines/baseline.cu).  C++ only, private to
 * collect/.
 *
 * A family implements the problems whose op lies in [op_lo, op_hi].  Its
 * create() runs once per problem and worker (handles, algorithm choice,
 * workspaces, all untimed); run() only enqueues work on call->stream.  The
 * context owns every handle and allocation; destroy() releases the
 * family's own state and the dispatcher the shared handles.
 */
#ifndef KBV_BASE_IMPL_H
#define KBV_BASE_IMPL_H

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <stddef.h>

#include "gpu.h"
#include "ops.h"

extern "C" {
#include "convpin.h"
}

/* Four bfloat16 values at element 4 i4 of p (8-byte aligned), widened;
 * and four floats rounded to bfloat16 and stored there: the vector
 * accesses of the passes that read or write bfloat16 activations. */
__device__ __forceinline__ float4 base_ld4_bf16(const __nv_bfloat16 *p, long long i4)
{
    uint2 raw = reinterpret_cast<const uint2 *>(p)[i4];
    float2 lo = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(&raw.x));
    float2 hi = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(&raw.y));
    return make_float4(lo.x, lo.y, hi.x, hi.y);
}
__device__ __forceinline__ void base_st4_bf16(__nv_bfloat16 *p, long long i4, float4 v)
{
    __nv_bfloat162 lo = __floats2bfloat162_rn(v.x, v.y), hi = __floats2bfloat162_rn(v.z, v.w);
    uint2 raw;
    raw.x = *reinterpret_cast<const unsigned *>(&lo);
    raw.y = *reinterpret_cast<const unsigned *>(&hi);
    reinterpret_cast<uint2 *>(p)[i4] = raw;
}

/* Eight bfloat16 values at p (16-byte aligned), widened into v; and
 * eight floats rounded to bfloat16 and stored there: the 16-byte
 * accesses of the bfloat16 passes, statistics and parameter runs. */
__device__ __forceinline__ void base_ld8_bf16(const __nv_bfloat16 *p, float *v)
{
    uint4 raw = *reinterpret_cast<const uint4 *>(p);
    const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&raw);
#pragma unroll
    for (int u = 0; u < 4; u++) {
        float2 f = __bfloat1622float2(h[u]);
        v[2 * u] = f.x;
        v[2 * u + 1] = f.y;
    }
}
__device__ __forceinline__ void base_st8_bf16(__nv_bfloat16 *p, const float *v)
{
    uint4 raw;
    __nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&raw);
#pragma unroll
    for (int u = 0; u < 4; u++) h[u] = __floats2bfloat162_rn(v[2 * u], v[2 * u + 1]);
    *reinterpret_cast<uint4 *>(p) = raw;
}

/* Sums a and b over the block (blockDim.x a multiple of 32, at most 1024):
 * afterwards warp 0's threads hold the totals, every other thread 0.  Every
 * thread of the block must call it; it may be called again in the same
 * kernel (it synchronises before reusing its shared memory). */
__device__ __forceinline__ void block_sum2(double &a, double &b)
{
    __shared__ double sa[32], sb[32];
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_xor_sync(0xffffffffu, a, o);
        b += __shfl_xor_sync(0xffffffffu, b, o);
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) { sa[warp] = a; sb[warp] = b; }
    __syncthreads();
    a = b = 0.0;
    if (warp == 0) {
        int nw = blockDim.x >> 5;
        a = lane < nw ? sa[lane] : 0.0;
        b = lane < nw ? sb[lane] : 0.0;
        for (int o = 16; o > 0; o >>= 1) {
            a += __shfl_xor_sync(0xffffffffu, a, o);
            b += __shfl_xor_sync(0xffffffffu, b, o);
        }
    }
}

struct base_family;
struct gemm_tuner;

/* Room for a variant's choice text: a few kernels, one line. */
const int BASE_CHOICE_LEN = 512;
/* Room for a variant's pins: GEMM_SHAPES products of about 250 bytes, or
 * a network's convolutions (two pins of about 100 bytes each per shape). */
const int BASE_PINS_LEN = 32768;

/* The most input or output tensors of a problem the bf16 fallback handles
 * (the worker's own limit, WK_MAX_TENSORS). */
const int BASE_MAX_TENSORS = 64;

struct base_ctx {
    const suite_problem *p;
    const base_family *fam;
    int device;
    int sm_count;
    cublasHandle_t blas;       /* created on demand by base_need_blas */
    void *blas_ws;             /* cuBLAS workspace, set on the handle */
    size_t blas_ws_bytes;
    void *ws;                  /* a family's own workspace (cuDNN, reductions) */
    size_t ws_bytes;
    void *state;               /* a family's own host state, freed by its destroy */
    gemm_tuner *gemm;          /* base_gemm's timed kernel choices (gemm.cu) */
    int reference;             /* 1 inside base_run_reference: the fp32 run is the
                                  correctness reference (conv.cu's exact algorithm) */
    const char *pin_text;      /* during base_create only: the pins it was given
                                  (conv.cu reads its convolutions' there), or NULL */
    char choice[3][BASE_CHOICE_LEN];   /* per variant: what base_choice says (base_note_choice) */
    char pins[3][BASE_PINS_LEN];       /* per variant: what base_pins says (gemm.cu) */
    /* The bf16 fallback (baseline.cu): float copies of the bfloat16 inputs
     * and outputs, allocated at its first run. */
    void *wide_in[BASE_MAX_TENSORS], *wide_out[BASE_MAX_TENSORS];
};

struct base_family {
    const char *name;
    int op_lo, op_hi;
    int (*create)(base_ctx *b, const kbv_call *example, kbv_err *e);
    int (*run)(base_ctx *b, base_variant v, const kbv_call *call, kbv_err *e);
    void (*destroy)(base_ctx *b);            /* may be NULL */
    int (*available)(const suite_problem *p, const char **why);   /* may be NULL */
    /* BASE_BF16 on bfloat16 tensors, natively; NULL: the dispatcher's
     * fallback (baseline.cu), which base_choice names. */
    int (*run_bf16)(base_ctx *b, const kbv_call *call, kbv_err *e);
};

/* The families, one per .cu file. */
extern const base_family base_fam_matmul;
extern const base_family base_fam_elementwise;
extern const base_family base_fam_softmax;
extern const base_family base_fam_norm;
extern const base_family base_fam_pool;
extern const base_family base_fam_reduce;
extern const base_family base_fam_scan;
extern const base_family base_fam_loss;
extern const base_family base_fam_attention;
extern const base_family base_fam_conv;
extern const base_family base_fam_chain;
extern const base_family base_fam_conv_chain;
extern const base_family base_fam_net;
extern const base_family base_fam_conv_net;
extern const base_family base_fam_rnn;
extern const base_family base_fam_model;

/* A problem attribute by name, or def when the problem has none. */
double base_attr(const suite_problem *p, const char *name, double def);

/* 2D max pooling (max != 0: NaN propagating) or average pooling (the
 * padding counted in the divisor) of `planes` planes of H x W into OH x OW
 * (window k, stride s, padding p, floor mode) on stream st with pool.cu's
 * kernels, as PyTorch's native kernels run it; 0, or -1 when the launch
 * failed (cudaGetLastError says why).  The planes must fit 32-bit indices. */
int base_pool2d(const base_ctx *b, int max, const float *x, float *y, long long planes, int H, int W, int OH,
                int OW, int k, int s, int p, cudaStream_t st);
/* The same on bfloat16 planes (float arithmetic, one rounding). */
int base_pool2d_bf16(const base_ctx *b, int max, const void *x, void *y, long long planes, int H, int W, int OH,
                     int OW, int k, int s, int p, cudaStream_t st);

/* Row softmax (or log-softmax) of [rows, d] on stream s (softmax.cu). */
void base_softmax_rows(const float *x, float *y, long long rows, long long d, int log_softmax,
                       cudaStream_t s);
/* The same on bfloat16 rows (float arithmetic, one rounding per output);
 * x == y is allowed. */
void base_softmax_rows_bf16(const void *x, void *y, long long rows, long long d, int log_softmax, cudaStream_t s);

/* A row-major GEMM C[m,n] = alpha op(A) op(B) + beta C, batched with
 * strides (elements; 0 = shared), through the context's cuBLAS handle in
 * the variant's compute type (gemm.cu).  lda/ldb are the row lengths of
 * the stored buffers.  The first call of a shape times cuBLAS's and
 * cuBLASLt's candidate kernels on stream s (synchronising it, and
 * overwriting C when beta is 0) and keeps the fastest for the context. */
int base_gemm(base_ctx *b, base_variant v, int ta, int tb, long long m, long long n, long long k,
              float alpha, const float *A, long long lda, long long sa, const float *B,
              long long ldb, long long sb, float beta, float *C, long long ldc, long long sc,
              long long batch, cudaStream_t s, kbv_err *e);
/* base_gemm's product on bfloat16 operands and output with float
 * accumulation (CUBLAS_COMPUTE_32F, cuBLAS's default algorithm, beta 0):
 * what PyTorch's matmul and bmm run on bfloat16 tensors.  Row-major
 * C[i] = alpha op(A[i]) op(B[i]) as base_gemm's (leading dimensions,
 * batch strides); batch 1 is one cublasGemmEx.  On stream s, with the
 * context's workspace, as base_gemm.  The pointers belong to the caller. */
int base_gemm_bf16(base_ctx *b, int ta, int tb, long long m, long long n, long long k, float alpha, const void *A,
                   long long lda, long long sa, const void *B, long long ldb, long long sb, void *C, long long ldc,
                   long long sc, long long batch, cudaStream_t s, kbv_err *e);
/* A row-major bfloat16 linear layer Y[m, n] = X[m, k] W[n, k]^T (+ bias[n])
 * on stream s: bfloat16 operands, bias and output, float accumulation
 * (CUBLAS_COMPUTE_32F), the bias added by cuBLASLt's epilogue
 * (CUBLASLT_EPILOGUE_BIAS; none when bias is NULL): what PyTorch's F.linear
 * runs on bfloat16 tensors (cuBLASLt's gemm_and_bias).  The first call of a
 * shape builds its plan and times cuBLASLt's first few algorithms against
 * the heuristic's first (base_contest; synchronising s and overwriting Y),
 * names the choice in the bf16 variant's choice text and keeps it in b
 * (base_gemm_release frees it).  The pointers belong to the caller. */
int base_linear_bf16(base_ctx *b, long long m, long long n, long long k, const void *X, const void *W,
                     const void *bias, void *Y, cudaStream_t s, kbv_err *e);
/* Frees what base_gemm cached in b (called by base_destroy). */
void base_gemm_release(base_ctx *b);

/* --- convolutions through cuDNN (conv.cu) ---------------------------------
 * The geometry of one convolution is conv_geom (convpin.h; 1D runs as 2D
 * with a unit height). */
struct conv_runner;

/* The geometry from x [N, Cin, ...], the weight and y, with stride,
 * padding and dilation read from the problem's attributes by name
 * (stride_h, or stride for every axis; defaults 1, 0, 1). */
int conv_geom_from(const suite_problem *p, const kbv_tensor *x, const kbv_tensor *w,
                   const kbv_tensor *y, int transposed, conv_geom *g, kbv_err *e);
/* Loads cuDNN (once per runner), builds descriptors and keeps the first
 * few algorithms of each variant that cudnnFind* ranks, and for tf32 also
 * the graph API's plans (conv_graph.cu); the workspace they need comes
 * from base_need_ws of b. */
int conv_runner_create(base_ctx *b, const conv_geom *g, conv_runner **out, kbv_err *e);
/* For a depthwise 2D convolution, times cuDNN's choice against kbv's
 * direct depthwise kernel (PyTorch's own method for float32) on the given
 * buffers (contents irrelevant; y is overwritten) and keeps the faster per
 * variant; a no-op for other convolutions or NULL buffers.  Synchronises s. */
int conv_runner_tune(base_ctx *b, conv_runner *r, const float *x, const float *w, float *y,
                     cudaStream_t s, kbv_err *e);
/* y = conv(x, w) (+ bias[c] when bias is not NULL) on stream s.  The
 * first run of a variant times the kept algorithms on these buffers
 * (synchronising s) and keeps the fastest. */
int conv_runner_run(base_ctx *b, conv_runner *r, base_variant v, const float *x, const float *w,
                    const float *bias, float *y, cudaStream_t s, kbv_err *e);
/* y = conv(x, w) (+ bias[c]) on bfloat16 tensors, on stream s: cuDNN with
 * bfloat16 tensors and float compute (the first results of cudnnFind and
 * the graph API's plans, re-timed with base_contest at the first call,
 * which synchronises s and overwrites y), the bias by kbv's bfloat16 pass.
 * Names its choice in the bf16 variant's text once. */
int conv_runner_run_bf16(base_ctx *b, conv_runner *r, const void *x, const void *w, const void *bias, void *y,
                         cudaStream_t s, kbv_err *e);
void conv_runner_destroy(conv_runner *r);

/* --- one convolution as a cuDNN graph (conv_graph.cu) ----------------------
 * Execution plans from cuDNN's backend API (heuristic mode A, the way
 * PyTorch runs convolutions), which conv.cu times next to its legacy
 * algorithms.  Shapes of one cuDNN call (a batch chunk); x is the
 * convolution's input and y its output (for a transposed convolution,
 * cuDNN's backward-data dy and dx), packed NC(D)HW as the legacy
 * descriptors; align is the byte alignment (4 to 32, a power of two) that
 * every pointer given to conv_graph_exec has. */
const int CONV_GRAPH_PLANS = 6;
struct conv_graph;
struct cudnnContext;
struct conv_graph_shape {
    int rank;                 /* 4 or 5 */
    int transposed;           /* backward data instead of forward */
    long long x[5], x_str[5], w[5], w_str[5], y[5], y_str[5];
    long long pad[3], stride[3], dil[3];   /* rank - 2 of each */
    long long align;
    int bf16;                 /* x, w and y bfloat16 (the bf16 baseline), else float; compute float */
};
/* Builds the graph on handle h with the functions of the already opened
 * cuDNN library lib (a dlopen handle) and finalizes up to
 * CONV_GRAPH_PLANS plans in the heuristic's order, skipping engines that
 * down-convert their inputs and, unless allow_tc, tensor-core engines.
 * Fails (with the reason in e) when no plan is left. */
int conv_graph_create(void *lib, cudnnContext *h, const conv_graph_shape *sh, int allow_tc,
                      conv_graph **out, kbv_err *e);
int conv_graph_plans(const conv_graph *cg);
size_t conv_graph_ws(const conv_graph *cg, int i);
/* Plan i's cuDNN engine index, or -1 (a pin names it, convpin.h). */
long long conv_graph_engine(const conv_graph *cg, int i);
/* "graph plan i (engine N[, tensor cores])", for the debug line. */
void conv_graph_describe(const conv_graph *cg, int i, char *buf, size_t len);
/* Whether the pointers have the alignment the graph was built for. */
int conv_graph_fits(const conv_graph *cg, const void *x, const void *w, const void *y);
/* Runs plan i on the handle's stream (set by the caller): y = conv(x, w),
 * with ws the workspace of at least conv_graph_ws bytes.  Returns a
 * cudnnStatus_t. */
int conv_graph_exec(conv_graph *cg, int i, const void *x, const void *w, void *y, void *ws);
/* Destroys every descriptor; before the library is closed. */
void conv_graph_destroy(conv_graph *cg);

/* --- the bf16 baseline's float paths (baseline.cu) ----------------------
 * A call on bfloat16 tensors as a float call: every bfloat16 input widened
 * (exactly) into buffers the context keeps, except input i where bit i of
 * `keep` is set (the caller's producer reads those in bfloat16, and
 * nothing else reads them), every bfloat16 output redirected to a float
 * buffer of its own; in and out (BASE_MAX_TENSORS each) hold the float
 * descriptors that *wide points at. */
int base_bf16_widen(base_ctx *b, const kbv_call *call, unsigned keep, kbv_tensor *in, kbv_tensor *out,
                    kbv_call *wide, kbv_err *e);
/* Rounds the float outputs of wide into call's bfloat16 outputs. */
int base_bf16_narrow(const kbv_call *call, const kbv_call *wide, kbv_err *e);
/* The fallback: widen everything, the family's tf32 (or fp32) run, narrow;
 * its choice says "fallback, parity not claimed". */
int base_bf16_fallback(base_ctx *b, const kbv_call *call, kbv_err *e);

/* Shared helpers (baseline.cu). */
int base_need_blas(base_ctx *b, kbv_err *e);
int base_need_ws(base_ctx *b, size_t bytes, kbv_err *e);
/* Reallocates the workspace at `bytes` when it is larger (synchronises the
 * device through cudaFree); 0 or a negative KBV_E* code. */
int base_shrink_ws(base_ctx *b, size_t bytes, kbv_err *e);
int base_cuda_err(kbv_err *e, const base_ctx *b, const char *what, cudaError_t ce);
/* --- kernel choice by timing (contest.cu) ----------------------------------
 * The families that pick among a library's algorithms (GEMM, convolution)
 * time the contestants with base_contest and take base_contest_winner.
 * A contestant is enqueued by a callback: 0 when it was enqueued, non-zero
 * when it cannot run (it is then left out, with a median of -1). */
typedef int (*base_contestant)(void *ctx, int i, cudaStream_t s);
const int BASE_CONTEST_MAX = 16;
/* Times n (at most BASE_CONTEST_MAX) contestants on stream s the way the
 * worker times a variant: each run after an L2 flush (a scratch buffer
 * of twice the L2 size, allocated for the contest and freed before it
 * returns; without it the runs are warm) and between two events.  After
 * two warm-up passes (the first loads lazily loaded kernels, the second
 * drops contestants over 1.25 times the fastest, which cannot win), the
 * rest are timed in interleaved rounds, each starting one contestant
 * later, so that a change of clock or temperature during the contest
 * shifts every contestant alike.  Rounds: 3 to 7, as budget_ms allows.
 * med[i] gets contestant i's median, or -1.  Synchronises s; the outputs
 * the contestants write are garbage afterwards.  Only a CUDA error is an
 * error (0 or a negative KBV_E* code). */
int base_contest(base_ctx *b, int n, base_contestant run, void *ctx, cudaStream_t s,
                 float budget_ms, float *med, kbv_err *e);
/* The contest's winner: contestant 0 (the library's own choice, what
 * PyTorch would run) unless another's median is below BASE_CONTEST_MARGIN
 * times its median; then the fastest.  Without a median for 0, the
 * fastest with one; -1 when none has one.  The margin keeps two workers
 * from trading a kernel for an equal one on timing noise. */
const float BASE_CONTEST_MARGIN = 0.97f;
int base_contest_winner(const float *med, int n);
/* Appends one pin (base_pins text) to variant v's pins, joined by ';'; a
 * pin that does not fit whole is left out, since a cut one would not
 * parse. */
void base_append_pin(base_ctx *b, base_variant v, const char *pin);
/* Appends "text" (printf-style) to variant v's choice, after "; " when it
 * already says something, so that a problem with several library calls
 * names each; cut at BASE_CHOICE_LEN. */
void base_note_choice(base_ctx *b, base_variant v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Blocks for a grid-stride kernel: enough to fill every SM `per_sm` times,
 * fewer when the work is small. */
unsigned base_grid(const base_ctx *b, long long items, int threads, int per_sm);

#endif
