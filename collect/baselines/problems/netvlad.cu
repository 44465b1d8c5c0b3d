/* netvlad.cu - NetVLAD (KernelBench level 3, 46 and 47) for rnn.cu's
 * model family (netvlad.h).
 *
 * fp32 and tf32: the assignment GEMM [B N, D] x [D, C] through base_gemm;
 * the batch statistics of its columns (two-level sums in double); one warp
 * per row applies the batch norm and the softmax and keeps the first K
 * columns; one strided batched GEMM per sample computes the aggregation
 * already transposed, vlad^T[b] = x_b^T [D, N] x a_b [N, K], into the
 * output, whose layout [b, d K + k] it is; one block per sample then
 * subtracts a_sum * clusters2, normalises each cluster's column over D
 * and the whole row, in place.
 *
 * bf16 is the same sequence on the bfloat16 tensors, as PyTorch eager runs
 * the model on them: both products through base_gemm_bf16 (cuBLAS with
 * bfloat16 operands and outputs, CUBLAS_COMPUTE_32F, as torch.matmul on
 * bfloat16 tensors),
 * the assignment and its probabilities kept in bfloat16, and the
 * statistics, the softmax and the normalisation computed in float by the
 * same kernels, which round once on store.  So x, the one large tensor,
 * is read twice in bfloat16, where the fallback (baseline.cu) would widen
 * it to float first and read the float copy twice.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>

#include "netvlad.h"

struct vlad_state {
    long long Bn, N, D;          /* samples, features per sample, feature width */
    int C, K;                    /* clusters with the ghosts, clusters */
    long long off[4];            /* params: clusters [D, C], clusters2 [D, K], bn gamma [C], bn beta [C] */
    void *assign, *prob;         /* [B N, C] and [B N, K]: float, or bfloat16 in the BF16 setting */
    double2 *part;               /* per block and column: sum and sum of squares */
    float2 *stat;                /* per column: mean, 1/sqrt(var + eps) */
    int part_blocks;
    long long rows_per;
};

namespace {

const int VLAD_THREADS = 256;

__device__ __forceinline__ float ldv(const float *p, long long i) { return p[i]; }
__device__ __forceinline__ float ldv(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void stv(float *p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void stv(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16_rn(v); }

/* The batch statistics, pass 1: block b sums its rows of a [R, C] per
 * column (blockDim.x = C * lanes, lanes threads per column). */
template <typename T>
__global__ void __launch_bounds__(256) col_sums(const T *__restrict__ a, long long R, int C, long long rows_per,
                                                double2 *__restrict__ part)
{
    __shared__ double2 sh[256];
    int lanes = blockDim.x / C, c = threadIdx.x % C, lane = threadIdx.x / C;
    long long r0 = (long long)blockIdx.x * rows_per, r1 = r0 + rows_per < R ? r0 + rows_per : R;
    double s = 0.0, ss = 0.0;
    for (long long r = r0 + lane; r < r1; r += lanes) {
        double v = ldv(a, r * C + c);
        s += v;
        ss += v * v;
    }
    sh[threadIdx.x] = make_double2(s, ss);
    __syncthreads();
    if (lane == 0) {
        for (int l = 1; l < lanes; l++) {
            s += sh[l * C + c].x;
            ss += sh[l * C + c].y;
        }
        part[(long long)blockIdx.x * C + c] = make_double2(s, ss);
    }
}

/* Pass 2: per column, mean and 1/sqrt(biased variance + eps). */
__global__ void col_finalize(const double2 *__restrict__ part, int blocks, int C, long long R, double eps,
                             float2 *__restrict__ stat)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    double s = 0.0, ss = 0.0;
    for (int k = 0; k < blocks; k++) {
        s += part[(long long)k * C + c].x;
        ss += part[(long long)k * C + c].y;
    }
    double mean = s / (double)R, var = ss / (double)R - mean * mean;
    if (var < 0.0) var = 0.0;
    stat[c] = make_float2((float)mean, (float)(1.0 / sqrt(var + eps)));
}

/* One warp per row of a [R, C] (C <= 64): the batch norm, the softmax over
 * C, the first K probabilities into p [R, K]. */
template <typename T>
__global__ void __launch_bounds__(256) bn_softmax(const T *__restrict__ a, const float2 *__restrict__ stat,
                                                  const T *__restrict__ gamma, const T *__restrict__ beta,
                                                  T *__restrict__ p, long long R, int C, int K)
{
    long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (row >= R) return;
    float v[2];
    float m = -INFINITY;
    for (int j = 0; j < 2; j++) {
        int c = lane + 32 * j;
        v[j] = -INFINITY;
        if (c < C) {
            float2 st = stat[c];
            v[j] = (ldv(a, row * C + c) - st.x) * st.y * ldv(gamma, c) + ldv(beta, c);
            m = fmaxf(m, v[j]);
        }
    }
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = 0.0f;
    for (int j = 0; j < 2; j++) {
        int c = lane + 32 * j;
        v[j] = c < C ? expf(v[j] - m) : 0.0f;
        s += v[j];
    }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    for (int j = 0; j < 2; j++) {
        int c = lane + 32 * j;
        if (c < K) stv(p, row * K + c, v[j] / s);
    }
}

/* One block per sample b: out[b] holds vlad^T [D, K]; a_sum[k] = sum over
 * N of p[b, n, k]; v = out - a_sum[k] clusters2[d, k]; each column k
 * divided by max(its norm over D, 1e-12), then the row by max(its norm,
 * 1e-12).  The row's norm after the first division follows from the
 * column norms: sum_k (n_k / max(n_k, eps))^2. */
template <typename T>
__global__ void __launch_bounds__(256) vlad_norm(T *__restrict__ out, const T *__restrict__ p,
                                                 const T *__restrict__ c2, int N, int D, int K)
{
    extern __shared__ float sm[];                     /* a_sum[K], colsq[K], then blockDim.x partials */
    float *a_sum = sm, *scale = sm + K, *part = sm + 2 * K;
    T *o = out + (long long)blockIdx.x * D * K;
    const T *pb = p + (long long)blockIdx.x * N * K;
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        float s = 0.0f;
        for (int n = 0; n < N; n++) s += ldv(pb, (long long)n * K + k);
        a_sum[k] = s;
    }
    __syncthreads();
    /* per column sums of squares: thread t covers column t % K and rows
     * d = t / K, t / K + groups, ... (blockDim.x a multiple of K) */
    int groups = blockDim.x / K, k = threadIdx.x % K, g = threadIdx.x / K;
    float ss = 0.0f;
    if (g < groups)
        for (int d = g; d < D; d += groups) {
            float v = ldv(o, (long long)d * K + k) - a_sum[k] * ldv(c2, (long long)d * K + k);
            ss += v * v;
        }
    part[threadIdx.x] = ss;
    __syncthreads();
    if (threadIdx.x < K) {
        float s = 0.0f;
        for (int j = 0; j < groups; j++) s += part[j * K + threadIdx.x];
        scale[threadIdx.x] = s;   /* the column's squared norm, for now */
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float tot = 0.0f;
        for (int j = 0; j < K; j++) {
            float n = sqrtf(scale[j]), q = n / fmaxf(n, 1e-12f);
            tot += q * q;
        }
        float rn = 1.0f / fmaxf(sqrtf(tot), 1e-12f);
        for (int j = 0; j < K; j++) scale[j] = rn / fmaxf(sqrtf(scale[j]), 1e-12f);
    }
    __syncthreads();
    for (long long i = threadIdx.x; i < (long long)D * K; i += blockDim.x) {
        int kk = (int)(i % K);
        stv(o, i, (ldv(o, i) - a_sum[kk] * ldv(c2, i)) * scale[kk]);
    }
}

/* The kernels between the two products, on float or bfloat16 tensors:
 * the column statistics of the assignment, then the batch norm with the
 * softmax into the probabilities. */
template <typename T>
void assign_probs(const vlad_state *s, const T *gamma, const T *beta, cudaStream_t st)
{
    long long R = s->Bn * s->N;
    int lanes = VLAD_THREADS / s->C;
    col_sums<T><<<(unsigned)s->part_blocks, (unsigned)(lanes * s->C), 0, st>>>((const T *)s->assign, R, s->C,
                                                                              s->rows_per, s->part);
    col_finalize<<<1, 64, 0, st>>>(s->part, s->part_blocks, s->C, R, 1e-5, s->stat);
    bn_softmax<T><<<(unsigned)((R * 32 + 255) / 256), 256, 0, st>>>((const T *)s->assign, s->stat, gamma, beta,
                                                                    (T *)s->prob, R, s->C, s->K);
}

/* The kernel after the aggregation: out normalised in place. */
template <typename T>
void normalise(const vlad_state *s, T *out, const T *c2, cudaStream_t st)
{
    size_t smem = (size_t)(2 * s->K + VLAD_THREADS) * sizeof(float);
    vlad_norm<T><<<(unsigned)s->Bn, VLAD_THREADS, smem, st>>>(out, (const T *)s->prob, c2, (int)s->N, (int)s->D,
                                                             s->K);
}

} /* namespace */

int vlad_create(base_ctx *b, const model_spec *sp, const model_plan *pl, vlad_state **out, kbv_err *e)
{
    *out = NULL;
    int C = sp->clusters + sp->ghost, K = sp->clusters;
    if (C > 64 || K < 1 || VLAD_THREADS % K != 0 || pl->n_parts < 4)
        return err_set(e, KBV_EINPUT, "baseline %s: NetVLAD's kernels need at most 64 clusters, K dividing %d "
                                      "and four parameter tensors", b->p->id, VLAD_THREADS);
    vlad_state *s = (vlad_state *)calloc(1, sizeof *s);
    if (!s) return err_set(e, KBV_ENOMEM, "baseline %s: out of memory", b->p->id);
    *out = s;
    s->Bn = pl->B;
    s->N = pl->T;
    s->D = sp->input;
    s->C = C;
    s->K = K;
    for (int i = 0; i < 4; i++) s->off[i] = pl->part[i].offset;
    long long R = s->Bn * s->N;
    s->part_blocks = b->sm_count * 4;
    s->rows_per = (R + s->part_blocks - 1) / s->part_blocks;
    /* float-sized: the bfloat16 setting uses half of each */
    cudaError_t ce = cudaMalloc(&s->assign, (size_t)(R * C) * sizeof(float));
    if (ce == cudaSuccess) ce = cudaMalloc(&s->prob, (size_t)(R * K) * sizeof(float));
    if (ce == cudaSuccess) ce = cudaMalloc(&s->part, (size_t)s->part_blocks * C * sizeof(double2));
    if (ce == cudaSuccess) ce = cudaMalloc(&s->stat, (size_t)C * sizeof(float2));
    if (ce != cudaSuccess) return base_cuda_err(e, b, "NetVLAD buffers", ce);
    return base_need_blas(b, e);
}

int vlad_run(base_ctx *b, base_variant v, vlad_state *s, const kbv_call *c, kbv_err *e)
{
    long long R = s->Bn * s->N, D = s->D, N = s->N;
    int C = s->C, K = s->K;
    cudaStream_t st = c->stream;
    const float *x = (const float *)c->inputs[0].data, *params = (const float *)c->inputs[1].data;
    float *out = (float *)c->outputs[0].data;
    int rc = base_gemm(b, v, 0, 0, R, C, D, 1.0f, x, D, 0, params + s->off[0], C, 0, 0.0f, (float *)s->assign, C, 0,
                       1, st, e);
    if (rc) return rc;
    assign_probs<float>(s, params + s->off[2], params + s->off[3], st);
    /* vlad^T[b] [D, K] = x_b^T [D, N] x p_b [N, K], straight into out */
    rc = base_gemm(b, v, 1, 0, D, K, N, 1.0f, x, D, N * D, (const float *)s->prob, K, N * K, 0.0f, out, K, D * K,
                   s->Bn, st, e);
    if (rc) return rc;
    normalise<float>(s, out, params + s->off[1], st);
    return 0;
}

int vlad_run_bf16(base_ctx *b, vlad_state *s, const kbv_call *c, kbv_err *e)
{
    long long R = s->Bn * s->N, D = s->D, N = s->N;
    int C = s->C, K = s->K;
    cudaStream_t st = c->stream;
    const __nv_bfloat16 *x = (const __nv_bfloat16 *)c->inputs[0].data;
    const __nv_bfloat16 *params = (const __nv_bfloat16 *)c->inputs[1].data;
    __nv_bfloat16 *out = (__nv_bfloat16 *)c->outputs[0].data;
    /* the fp32 path's products, on the bfloat16 tensors */
    int rc = base_gemm_bf16(b, 0, 0, R, C, D, 1.0f, x, D, 0, params + s->off[0], C, 0, s->assign, C, 0, 1, st, e);
    if (rc) return rc;
    assign_probs<__nv_bfloat16>(s, params + s->off[2], params + s->off[3], st);
    rc = base_gemm_bf16(b, 1, 0, D, K, N, 1.0f, x, D, N * D, s->prob, K, N * K, out, K, D * K, s->Bn, st, e);
    if (rc) return rc;
    normalise<__nv_bfloat16>(s, out, params + s->off[1], st);
    if (!b->choice[BASE_BF16][0])
        base_note_choice(b, BASE_BF16, "native bf16 NetVLAD: cuBLAS GEMMs with bf16 operands and outputs "
                                       "(CUBLAS_COMPUTE_32F, default algorithm) around kbv's batch-norm-softmax and "
                                       "normalisation passes (float arithmetic, bf16 stores)");
    return 0;
}

void vlad_destroy(vlad_state *s)
{
    if (!s) return;
    void *bufs[] = { s->assign, s->prob, s->part, s->stat };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) cudaFree(bufs[i]);
    free(s);
}
