/* chain.cu - the level-2 interpreter: runs a chain_spec (problems/chain.h).
 *
 * The producer is cuBLAS (a linear layer: one GEMM, x W^T) or cuDNN (a
 * convolution, without its bias).  Everything after it is fused as far as
 * the data flow allows: one elementwise pass applies the producer's bias
 * and the first steps; a middle stage computes statistics (norms) or a
 * reduction; a second elementwise pass applies the normalisation with its
 * affine parameters and the last steps.  PyTorch runs one kernel per step
 * (and cuBLASLt/cuDNN fuse only the bias), so the baseline reads and writes
 * the tensor at most as often as PyTorch does, usually fewer times.  Two
 * linear layers (w2) run the first steps on the first layer's output, and
 * an average pooling of the input (in_pool) runs before the convolution.
 * The post stages, if any, follow in chain_post.cu; the elementwise steps
 * themselves are in chain_ew.h.  The bf16 baseline's paths are in
 * chain_bf16.cu.
 *
 * The tensor after the producer is [N, C, S]; the elementwise kernels see
 * it as `rows` rows of L contiguous elements with a 2D grid (y: row), so
 * that the channel of an element needs no 64-bit division: for S > 1 a row
 * is one (n, c) plane (channel = row % C), for S = 1 (a linear layer) a row
 * is one sample (channel = position in the row).
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base_impl.h"
#include "chain_ew.h"

extern "C" {
#include "chain.h"
#include "suite_host.h"
}

namespace {

/* Stores of the elementwise pass: float, or bfloat16 (the bf16 baseline's
 * last pass, straight into the call's output). */
__device__ __forceinline__ void st4(float *y, long long i4, float4 v) { reinterpret_cast<float4 *>(y)[i4] = v; }
__device__ __forceinline__ void st4(__nv_bfloat16 *y, long long i4, float4 v) { base_st4_bf16(y, i4, v); }

/* Loads of a pass: four values at element 4 i4, as floats, from float or
 * bfloat16 (a bf16 producer's output read as it is; one value at a time:
 * chain_ew.h's row_value). */
__device__ __forceinline__ float4 ld4(const float *x, long long i4) { return reinterpret_cast<const float4 *>(x)[i4]; }
__device__ __forceinline__ float4 ld4(const __nv_bfloat16 *x, long long i4) { return base_ld4_bf16(x, i4); }

/* grid (x: chunks of a row, y: rows); in place is allowed (x == y, same
 * type). */
template <class TI, class TO>
__global__ void __launch_bounds__(256) ew_kernel(const TI *x, TO *y, ew_args A)
{
    for (long long row = blockIdx.y; row < A.rows; row += gridDim.y) {
        const TI *xr = x + row * A.L;
        TO *yr = y + row * A.L;
        if (A.L % 4 == 0) {
            long long l4 = A.L / 4;
            for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < l4;
                 i += (long long)gridDim.x * blockDim.x)
                st4(yr, i, apply4(A, ld4(xr, i), row, 4 * i));
        } else {
            for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < A.L;
                 j += (long long)gridDim.x * blockDim.x)
                st1(yr, j, apply(A, row_value(xr + j), row, j));
        }
    }
}


/* one block per plane (row of length L): sum and sum of squares, of the
 * values plus their channel's bias where bias is not NULL (channel =
 * plane % C) */
__global__ void __launch_bounds__(256) plane_sums(const float *__restrict__ x, long long L,
                                                  double2 *__restrict__ part, const float *__restrict__ bias,
                                                  long long C)
{
    const float *p = x + (long long)blockIdx.x * L;
    const float add = bias ? bias[blockIdx.x % C] : 0.0f;
    float s = 0.0f, ss = 0.0f;
    for (long long i = threadIdx.x; i < L; i += blockDim.x) {
        float v = p[i] + add;
        s += v;
        ss += v * v;
    }
    double a = s, b = ss;
    block_sum2(a, b);
    if (threadIdx.x == 0) part[blockIdx.x] = make_double2(a, b);
}

__device__ __forceinline__ float2 mean_rstd(double s, double ss, double n, double eps)
{
    double mean = s / n, var = ss / n - mean * mean;
    if (var < 0) var = 0;
    return make_float2((float)mean, (float)(1.0 / sqrt(var + eps)));
}

/* statistics from plane sums (S > 1): BN per channel, IN per plane, GN per
 * (n, group); one thread per statistic group */
__global__ void plane_finalize(const double2 *__restrict__ part, int norm, long long N, long long C,
                               long long S, int G, double eps, float2 *__restrict__ stat)
{
    long long groups = norm == MID_BATCHNORM ? C : norm == MID_INSTANCENORM ? N * C : N * G;
    long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= groups) return;
    double s = 0, ss = 0, cnt;
    if (norm == MID_BATCHNORM) {
        for (long long n = 0; n < N; n++) { s += part[n * C + g].x; ss += part[n * C + g].y; }
        cnt = (double)N * S;
    } else if (norm == MID_INSTANCENORM) {
        s = part[g].x; ss = part[g].y;
        cnt = (double)S;
    } else {
        long long n = g / G, gi = g % G, cg = C / G;
        for (long long c = gi * cg; c < (gi + 1) * cg; c++) { s += part[n * C + c].x; ss += part[n * C + c].y; }
        cnt = (double)cg * S;
    }
    stat[g] = mean_rstd(s, ss, cnt, eps);
}

/* batch norm over the rows of [N, C] (S = 1): grid (column blocks, row
 * slices); each thread sums one column over its slice of rows (coalesced
 * across the warp), one double2 partial per (slice, column). */
const int COL_SLICES = 64;

template <typename T>
__global__ void column_partial(const T *__restrict__ x, long long N, long long C, double2 *__restrict__ part)
{
    long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    long long per = (N + gridDim.y - 1) / gridDim.y;
    long long lo = (long long)blockIdx.y * per, hi = lo + per < N ? lo + per : N;
    float s = 0.0f, ss = 0.0f;
    for (long long n = lo; n < hi; n++) {
        float v = row_value(x + n * C + c);
        s += v;
        ss += v * v;
    }
    part[(long long)blockIdx.y * C + c] = make_double2(s, ss);
}

__global__ void column_finalize(const double2 *__restrict__ part, int slices, long long N, long long C,
                                double eps, float2 *__restrict__ stat)
{
    long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    double s = 0, ss = 0;
    for (int k = 0; k < slices; k++) {
        s += part[(long long)k * C + c].x;
        ss += part[(long long)k * C + c].y;
    }
    stat[c] = mean_rstd(s, ss, (double)N, eps);
}

/* group norm over [N, C] (S = 1): one warp per (n, group) of C / G
 * consecutive features, each plus its bias where bias is not NULL (G
 * groups a row) */
template <typename T>
__global__ void warp_group_stats(const T *__restrict__ x, long long groups, long long len, double eps,
                                 float2 *__restrict__ stat, const float *__restrict__ bias, int G)
{
    long long g = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (g >= groups) return;
    const T *p = x + g * len;
    const float *b = bias ? bias + (g % G) * len : NULL;
    double s = 0, ss = 0;
    long long i = lane;
    if (sizeof(T) == 2 && len % 8 == 0 && ((uintptr_t)p & 15) == 0) {
        /* bfloat16 eight values a load (a lane's two-byte loads left the
         * warp one 64-byte request at a time: L2_028's statistics took
         * 30 us against PyTorch's 20 at 4cfcd11); each eight summed in
         * float, then in double */
        for (i = 8 * lane; i < len; i += 8 * 32) {
            float f[8], a = 0.0f, q = 0.0f;
            base_ld8_bf16(reinterpret_cast<const __nv_bfloat16 *>(p + i), f);
#pragma unroll
            for (int u = 0; u < 8; u += 2) {
                if (b) { f[u] += b[i + u]; f[u + 1] += b[i + u + 1]; }
                a += f[u] + f[u + 1];
                q += f[u] * f[u] + f[u + 1] * f[u + 1];
            }
            s += a;
            ss += q;
        }
        i = len;
    }
    for (; i < len; i += 32) {
        double v = row_value(p + i) + (b ? b[i] : 0.0f);
        s += v;
        ss += v * v;
    }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, o);
        ss += __shfl_xor_sync(0xffffffffu, ss, o);
    }
    if (lane == 0) stat[g] = mean_rstd(s, ss, (double)len, eps);
}

/* reduction over dim 1 of [N, C, S] into [N, 1, S], S > 1: one thread per
 * (n, s), the channel loop coalesced across threads */
template <int MID>
__global__ void reduce_c_cols(const float *__restrict__ x, float *__restrict__ y, long long N,
                              long long C, long long S)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= N * S) return;
    long long n = t / S, s = t % S;
    const float *p = x + n * C * S + s;
    float acc = MID == MID_MIN_C ? INFINITY : (MID == MID_MAX_C || MID == MID_LSE_C) ? -INFINITY : 0.0f;
    for (long long c = 0; c < C; c++) {
        float v = p[c * S];
        if (MID == MID_MIN_C) acc = (v < acc || isnan(v)) ? v : acc;
        else if (MID == MID_MAX_C || MID == MID_LSE_C) acc = (v > acc || isnan(v)) ? v : acc;
        else acc += v;
    }
    if (MID == MID_LSE_C) {
        float m = acc, sum = 0.0f;
        for (long long c = 0; c < C; c++) sum += expf(p[c * S] - m);
        acc = m + logf(sum);
    } else if (MID == MID_MEAN_C) {
        acc /= (float)C;
    }
    y[t] = acc;
}

/* reduction of each row of [rows, L] to one value (S = 1 reductions over
 * the features, and the global average pool over S): one block per row.
 * With fuse, each value read first goes through the elementwise steps A
 * (bias and the operations before the reduction), which then need no pass
 * of their own over the producer's output.  Each thread keeps ROWS_ILP
 * loads in flight: with few rows (L2_056 reduces 128 rows of 32768) the
 * blocks are few and a loop of one load at a time waits on memory latency
 * (84 us on the H200 where PyTorch's sum takes 6); long rows also get
 * 1024 threads (rows_threads). */
const int ROWS_ILP = 4;

template <int MID>
__device__ __forceinline__ void rows_fold(float &acc, float v)
{
    if (MID == MID_MIN_C) acc = (v < acc || isnan(v)) ? v : acc;
    else if (MID == MID_MAX_C || MID == MID_LSE_C) acc = (v > acc || isnan(v)) ? v : acc;
    else acc += v;
}

template <int MID, typename T>
__global__ void __launch_bounds__(1024) reduce_rows(const T *__restrict__ x,
                                                    float *__restrict__ y, long long L, ew_args A,
                                                    int fuse)
{
    const T *p = x + (long long)blockIdx.x * L;
    __shared__ float sh[32];
    __shared__ float bc;
    float acc = MID == MID_MIN_C ? INFINITY : (MID == MID_MAX_C || MID == MID_LSE_C) ? -INFINITY : 0.0f;
    const long long step = blockDim.x;
    long long i = threadIdx.x;
    for (; i + (ROWS_ILP - 1) * step < L; i += ROWS_ILP * step) {
        float v[ROWS_ILP];
#pragma unroll
        for (int u = 0; u < ROWS_ILP; u++) v[u] = row_value(p + i + u * step);
        if (fuse) {
            /* the steps' dispatch once for the ROWS_ILP values */
            long long r[ROWS_ILP], j[ROWS_ILP];
#pragma unroll
            for (int u = 0; u < ROWS_ILP; u++) {
                r[u] = blockIdx.x;
                j[u] = i + u * step;
            }
            apply_n<ROWS_ILP>(A, v, r, j);
        }
#pragma unroll
        for (int u = 0; u < ROWS_ILP; u++) rows_fold<MID>(acc, v[u]);
    }
    for (; i < L; i += step) {
        float v = row_value(p + i);
        rows_fold<MID>(acc, fuse ? apply(A, v, blockIdx.x, i) : v);
    }
    /* block combine */
    for (int o = 16; o > 0; o >>= 1) rows_fold<MID>(acc, __shfl_xor_sync(0xffffffffu, acc, o));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    if (lane == 0) sh[warp] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float r = sh[0];
        for (int w = 1; w < nw; w++) rows_fold<MID>(r, sh[w]);
        bc = r;
    }
    __syncthreads();
    if (MID == MID_LSE_C) {
        float m = bc, s = 0.0f;
        long long k = threadIdx.x;
        for (; k + (ROWS_ILP - 1) * step < L; k += ROWS_ILP * step) {
            float v[ROWS_ILP];
            long long r[ROWS_ILP], j[ROWS_ILP];
#pragma unroll
            for (int u = 0; u < ROWS_ILP; u++) {
                v[u] = row_value(p + k + u * step);
                r[u] = blockIdx.x;
                j[u] = k + u * step;
            }
            if (fuse) apply_n<ROWS_ILP>(A, v, r, j);
#pragma unroll
            for (int u = 0; u < ROWS_ILP; u++) s += expf(v[u] - m);
        }
        for (; k < L; k += step) {
            float v = row_value(p + k);
            s += expf((fuse ? apply(A, v, blockIdx.x, k) : v) - m);
        }
        double a = s, b = 0.0;
        block_sum2(a, b);
        if (threadIdx.x == 0) y[blockIdx.x] = m + (float)log(a);
        return;
    }
    if (threadIdx.x == 0) y[blockIdx.x] = (MID == MID_MEAN_C || MID == MID_GAP) ? bc / (float)L : bc;
}

/* reduce_rows of the middle stage mid (a MID_*_C reduction) on g rows of
 * L values of type T, t threads a row. */
template <typename T>
void launch_reduce_rows(int mid, unsigned g, int t, cudaStream_t s, const T *x, float *y, long long L,
                        const ew_args &A, int fuse)
{
    switch (mid) {
    case MID_SUM_C: reduce_rows<MID_SUM_C><<<g, t, 0, s>>>(x, y, L, A, fuse); break;
    case MID_MEAN_C: reduce_rows<MID_MEAN_C><<<g, t, 0, s>>>(x, y, L, A, fuse); break;
    case MID_MIN_C: reduce_rows<MID_MIN_C><<<g, t, 0, s>>>(x, y, L, A, fuse); break;
    case MID_MAX_C: reduce_rows<MID_MAX_C><<<g, t, 0, s>>>(x, y, L, A, fuse); break;
    default: reduce_rows<MID_LSE_C><<<g, t, 0, s>>>(x, y, L, A, fuse); break;
    }
}

/* Threads per row of reduce_rows: 1024 for rows of 16384 or more (few
 * rows, each long: the loads in flight must come from one block), 256
 * otherwise (many short rows keep every SM busy anyway). */
int rows_threads(long long L)
{
    return L >= 16384 ? 1024 : 256;
}


int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    const chain_spec *sp = suite_chain(b->p->op);
    if (!sp) return err_set(e, KBV_EINPUT, "baseline %s: no chain spec for op %d", b->p->id, b->p->op);
    chain_state *cs = (chain_state *)calloc(1, sizeof *cs);
    if (!cs) return err_set(e, KBV_ENOMEM, "baseline %s: out of memory", b->p->id);
    b->state = cs;
    cs->spec = sp;
    chain_dims prod, fin;
    long long post_max;
    if (chain_shapes(b->p, sp, &prod, &cs->after_mid, &fin, &post_max))
        return err_set(e, KBV_EINPUT, "baseline %s: the chain's stages do not fit its shapes", b->p->id);
    if (chain_numel(&fin) != kbv_numel(&ex->outputs[0]))
        return err_set(e, KBV_EINPUT, "baseline %s: the chain ends in %lld values, the output holds %lld",
                       b->p->id, chain_numel(&fin), (long long)kbv_numel(&ex->outputs[0]));
    cs->N = prod.N;
    cs->C = prod.C;
    cs->S = chain_spatial(&prod);
    long long n = chain_numel(&prod);
    int rc;
    if (sp->producer == CHAIN_LINEAR) {
        rc = base_need_blas(b, e);
        if (!rc && sp->w2 > 0) {
            /* the first layer's output, before the second layer */
            long long hid = ex->inputs[sp->w_in > 0 ? sp->w_in : 1].shape[0];
            cudaError_t ce = cudaMalloc(&cs->hid, (size_t)(cs->N * hid) * sizeof(float));
            if (ce != cudaSuccess) {
                cs->hid = NULL;
                return base_cuda_err(e, b, "hidden layer buffer", ce);
            }
        }
    } else {
        /* the conv geometry from x (average-pooled first with in_pool), the
         * weight and the producer's output */
        kbv_tensor xin = ex->inputs[0], y = ex->inputs[0];
        const kbv_tensor *w = &ex->inputs[sp->w_in > 0 ? sp->w_in : 1];
        y.shape[1] = prod.C;
        for (int i = 0; i < prod.nd; i++) {
            y.shape[2 + i] = prod.d[i];
            if (sp->in_pool > 0) xin.shape[2 + i] /= sp->in_pool;
        }
        if (sp->in_pool > 0) {
            cudaError_t ce = cudaMalloc(&cs->xin, (size_t)kbv_numel(&xin) * sizeof(float));
            if (ce != cudaSuccess) {
                cs->xin = NULL;
                return base_cuda_err(e, b, "pooled input buffer", ce);
            }
        }
        conv_geom g;
        rc = conv_geom_from(b->p, &xin, w, &y, sp->producer == CHAIN_CONV_T, &g, e);
        if (!rc) rc = conv_runner_create(b, &g, &cs->conv, e);
    }
    if (rc) return rc;
    rc = chain_post_create(b, sp, &cs->post, e);
    if (rc) return rc;
    /* a buffer for the middle stage's result only where there is one (the
     * post stages read the producer's buffer otherwise) */
    if (cs->post && (sp->mid != MID_NONE || sp->ew2[0].kind != EW_END)) {
        cudaError_t ce = cudaMalloc(&cs->mid, (size_t)chain_numel(&cs->after_mid) * sizeof(float));
        if (ce != cudaSuccess) {
            cs->mid = NULL;
            return base_cuda_err(e, b, "middle buffer", ce);
        }
    }
    /* the producer writes into the output when the output has its shape
     * and no post stage follows */
    if (cs->post || kbv_numel(&ex->outputs[0]) != n) {
        cudaError_t ce = cudaMalloc(&cs->pre, (size_t)n * sizeof(float));
        if (ce != cudaSuccess) {
            cs->pre = NULL;
            return base_cuda_err(e, b, "intermediate buffer", ce);
        }
    }
    if (sp->mid == MID_BATCHNORM || sp->mid == MID_GROUPNORM || sp->mid == MID_INSTANCENORM) {
        long long groups = sp->mid == MID_BATCHNORM ? cs->C : sp->mid == MID_INSTANCENORM
                                                                  ? cs->N * cs->C : cs->N * sp->groups;
        if (sp->mid == MID_GROUPNORM && (sp->groups < 1 || cs->C % sp->groups))
            return err_set(e, KBV_EINPUT, "baseline %s: bad group count", b->p->id);
        cudaError_t ce = cudaMalloc(&cs->stat, (size_t)groups * sizeof(float2));
        if (ce == cudaSuccess && cs->S > 1)
            ce = cudaMalloc(&cs->part, (size_t)(cs->N * cs->C) * sizeof(double2));
        else if (ce == cudaSuccess && sp->mid == MID_BATCHNORM)
            ce = cudaMalloc(&cs->part, (size_t)(COL_SLICES * cs->C) * sizeof(double2));
        if (ce != cudaSuccess) return base_cuda_err(e, b, "statistics buffers", ce);
    }
    return 0;
}

template <class TI, class TO>
void launch_ew(const base_ctx *b, const TI *x, TO *y, ew_args A, cudaStream_t s)
{
    long long per_row = A.L % 4 == 0 ? A.L / 4 : A.L;
    unsigned gx = (unsigned)((per_row + 255) / 256);
    unsigned gy = (unsigned)(A.rows < 65535 ? A.rows : 65535);
    long long want = (long long)b->sm_count * 64 / (gy ? gy : 1);
    if (want < 1) want = 1;
    if ((long long)gx > want) gx = (unsigned)want;
    ew_kernel<TI, TO><<<dim3(gx, gy), 256, 0, s>>>(x, y, A);
}

/* The middle stage's norm statistics into cs->stat, from pre (float) or
 * stats16 (the bfloat16 producer output, S = 1), each value plus
 * fold_bias's channel value where it is not NULL.  -1 for an instance
 * norm without spatial extent. */
int norm_stats(const chain_state *cs, const float *pre, const __nv_bfloat16 *stats16, const float *fold_bias,
               cudaStream_t s)
{
    const chain_spec *sp = cs->spec;
    long long N = cs->N, C = cs->C, S = cs->S;
    if (S > 1) {
        plane_sums<<<(unsigned)(N * C), 256, 0, s>>>(pre, S, cs->part, fold_bias, C);
        long long groups = sp->mid == MID_BATCHNORM ? C : sp->mid == MID_INSTANCENORM ? N * C : N * sp->groups;
        plane_finalize<<<(unsigned)((groups + 127) / 128), 128, 0, s>>>(cs->part, sp->mid, N, C, S, sp->groups,
                                                                         sp->eps, cs->stat);
    } else if (sp->mid == MID_BATCHNORM) {
        dim3 grid((unsigned)((C + 255) / 256), COL_SLICES);
        if (stats16) column_partial<<<grid, 256, 0, s>>>(stats16, N, C, cs->part);
        else column_partial<<<grid, 256, 0, s>>>(pre, N, C, cs->part);
        column_finalize<<<(unsigned)((C + 127) / 128), 128, 0, s>>>(cs->part, COL_SLICES, N, C, sp->eps, cs->stat);
    } else if (sp->mid == MID_GROUPNORM) {
        long long groups = N * sp->groups;
        unsigned blocks = (unsigned)((groups * 32 + 255) / 256);
        if (stats16)
            warp_group_stats<<<blocks, 256, 0, s>>>(stats16, groups, C / sp->groups, sp->eps, cs->stat, fold_bias,
                                                    sp->groups);
        else
            warp_group_stats<<<blocks, 256, 0, s>>>(pre, groups, C / sp->groups, sp->eps, cs->stat, fold_bias,
                                                    sp->groups);
    } else {
        return -1;
    }
    return 0;
}

} /* namespace */

namespace {

/* Whether the middle stage of sp reduces each row of features (S = 1):
 * it reads the producer's output once, the steps before it applied as it
 * reads, in either element type. */
int reduces_rows(const chain_spec *sp, long long S)
{
    return S == 1 && (sp->mid == MID_SUM_C || sp->mid == MID_MEAN_C || sp->mid == MID_MIN_C ||
                      sp->mid == MID_MAX_C || sp->mid == MID_LSE_C);
}

} /* namespace */

namespace {

/* Whether the last pass B runs over the planes of shape d (S > 1) or
 * its rows of features (S = 1), so that a post stage on d can apply it
 * as it reads (in_ew's geometry). */
int pass_fits_stage(const ew_args &B, const chain_dims &d)
{
    const long long S = chain_spatial(&d);
    if (B.S != S || B.C != d.C) return 0;
    return S > 1 ? B.rows == d.N * d.C && B.L == S : B.rows == d.N && B.L == d.C;
}

/* Whether the inputs that the chain's steps and norms read after its
 * producer (chain_reads_param) are the BF16 setting's bfloat16 tensors in
 * c (a bf16 path that keeps every input: chain_run_bf16), not float ones
 * (c widened them, or the FP32 setting); the steps' ew_args then read
 * them as bfloat16 (pbf16). */
int params_bf16(const chain_spec *sp, const kbv_call *c)
{
    for (int i = 0; i < c->n_inputs; i++)
        if (chain_reads_param(sp, i)) return c->inputs[i].dtype == KBV_BF16;
    return 0;
}

/* Whether a list of steps (EW_END-terminated), or a pass, is cheap to
 * repeat on each read (chain_ew_cheap; a norm is, its statistics read
 * per channel or group). */
int list_cheap(const chain_ew *ops)
{
    for (int k = 0; k < CHAIN_MAX_EW && ops[k].kind != EW_END; k++)
        if (!chain_ew_cheap(ops[k].kind)) return 0;
    return 1;
}

int pass_cheap(const ew_args &B)
{
    for (int k = 0; k < B.n_ops; k++)
        if (!chain_ew_cheap(B.kind[k])) return 0;
    return 1;
}

/* Whether the first post stage of cs reads its input through the last
 * pass B itself (chain_post_reads_through), so that the pass's output is
 * never written. */
int post_reads_through(const chain_state *cs, const ew_args &B)
{
    return cs->post && pass_fits_stage(B, cs->after_mid) &&
           chain_post_reads_through(cs->post, cs->after_mid, pass_cheap(B));
}

/* Step 5 with the last pass B: the post stages from cur (float) or src16
 * (bfloat16), the first reading through B. */
int run_post_through(base_ctx *b, const kbv_call *c, const float *cur, const __nv_bfloat16 *src16, const ew_args &B,
                     void *out16, int *wrote16, kbv_err *e)
{
    chain_state *cs = (chain_state *)b->state;
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "chain launch", ce);
    return src16 ? chain_post_run16(b, cs->post, src16, B, cs->after_mid, c, out16, wrote16, e)
                 : chain_post_run_through(b, cs->post, cur, B, cs->after_mid, c, out16, wrote16, e);
}

} /* namespace */

chain_rest16 chain_rest_bf16(const chain_state *cs, int final16)
{
    const chain_spec *sp = cs->spec;
    if (cs->S != 1)
        return sp->mid == MID_NONE && sp->ew2[0].kind == EW_END &&
                       chain_post_reads_through(cs->post, cs->after_mid, list_cheap(sp->ew1))
                   ? REST16_POST : REST16_WIDEN;
    if (reduces_rows(sp, cs->S)) return REST16_ROWS;
    /* A linear output viewed as one map (L2_055, L2_098): with its bias
     * in the product's epilogue and no steps before the view, the stage
     * after the view reads the bfloat16 output as it is. */
    if (sp->producer == CHAIN_LINEAR && sp->mid == MID_NONE && sp->ew1[0].kind == EW_END &&
        sp->ew2[0].kind == EW_END && chain_post_view_reads16(cs->post, cs->after_mid))
        return REST16_POST;
    switch (sp->mid) {
    case MID_BATCHNORM: case MID_GROUPNORM: return REST16_STATS;
    case MID_SOFTMAX_C: return final16 && sp->ew2[0].kind == EW_END ? REST16_SOFTMAX : REST16_WIDEN;
    default: return REST16_WIDEN;
    }
}

/* Steps 2 to 5 of the chain on the producer's output pre (float): into
 * c's output, or into the middle buffer when post stages follow; c's
 * parameters are float.  With out16 (the bf16 baseline: the bfloat16
 * output of the call that c widens) and no post stages, a last
 * elementwise pass writes its result rounded into out16 instead, saving
 * the separate rounding pass, and *wrote16 says so.  bias_done: the
 * producer has added its bias already (a cuBLASLt epilogue).  pre16: the
 * producer's output is still this bfloat16 buffer: a reduction over each
 * row reads it as it is; a batch or group norm over a linear layer's
 * features keeps it in bfloat16 through its statistics to the last pass,
 * as PyTorch's bfloat16 kernels do (the first steps a bfloat16 pass in
 * place); a softmax over them with nothing after it is the bfloat16
 * softmax into out16; anything else widens it into pre in the pass of
 * the bias and the first steps. */
int chain_run_rest(base_ctx *b, const kbv_call *c, float *pre, kbv_err *e, void *out16, int *wrote16,
                   int bias_done, const void *pre16)
{
    if (wrote16) *wrote16 = 0;
    chain_state *cs = (chain_state *)b->state;
    const chain_spec *sp = cs->spec;
    cudaStream_t s = c->stream;
    const int wi = sp->w_in > 0 ? sp->w_in : 1;
    float *out = cs->post ? cs->mid : (float *)c->outputs[0].data;
    long long N = cs->N, C = cs->C, S = cs->S;
    /* 2. bias and the first steps, in place */
    ew_args A;
    memset(&A, 0, sizeof A);
    A.C = C; A.S = S;
    A.rows = S > 1 ? N * C : N;
    A.L = S > 1 ? S : C;
    /* The parameters the steps read are float, as c widened them, or
     * bfloat16 where the bf16 caller kept them (params_bf16) */
    A.pbf16 = params_bf16(sp, c);
    if (sp->w2 > 0) {
        /* the first steps went with the first layer */
        A.bias = bias_done ? NULL : (const float *)c->inputs[sp->w2 + 1].data;
    } else {
        A.bias = sp->has_bias && !bias_done ? (const float *)c->inputs[wi + 1].data : NULL;
        chain_fill_ops(&A, sp->ew1, c);
    }
    /* A per-channel bias straight before a batch or instance norm shifts
     * every value of its statistic group equally, so the norm removes it
     * exactly: skip the pass that would add it. */
    if (A.n_ops == 0 && (sp->mid == MID_BATCHNORM || sp->mid == MID_INSTANCENORM)) A.bias = NULL;
    const int row_reduction = reduces_rows(sp, S);
    const int fuse = row_reduction && (A.bias || A.n_ops);
    /* a bf16 producer's output (pre16): how chain_rest_bf16 says */
    const int final16 = out16 && wrote16 && !cs->post;
    const chain_rest16 how16 = pre16 ? chain_rest_bf16(cs, final16) : REST16_WIDEN;
    const __nv_bfloat16 *rows16 = how16 == REST16_ROWS ? (const __nv_bfloat16 *)pre16 : NULL;
    __nv_bfloat16 *stats16 = how16 == REST16_STATS ? (__nv_bfloat16 *)pre16 : NULL;
    __nv_bfloat16 *soft16 = how16 == REST16_SOFTMAX ? (__nv_bfloat16 *)pre16 : NULL;
    const __nv_bfloat16 *post16 = how16 == REST16_POST ? (const __nv_bfloat16 *)pre16 : NULL;
    /* A bias alone before a group norm (a batch or instance norm removes
     * it, above): the statistics and the last pass add it as they read,
     * one pass over the tensor fewer (PyTorch adds it in its own pass) */
    const float *fold_bias = A.bias && A.n_ops == 0 && sp->mid == MID_GROUPNORM && (!pre16 || stats16)
                                 ? (const float *)A.bias : NULL;
    if (post16) {
        /* no pass: the first post stage reads pre16 through A (step 5) */
    } else if (stats16 || soft16) {
        if ((A.bias && !fold_bias) || A.n_ops)
            chain_launch_ew_bf16(b, (const __nv_bfloat16 *)pre16, (__nv_bfloat16 *)pre16, A, s);
    } else if (pre16 && !rows16) {
        launch_ew(b, (const __nv_bfloat16 *)pre16, pre, A, s);
    } else if ((A.bias || A.n_ops) && !fuse && !fold_bias) {
        launch_ew(b, (const float *)pre, pre, A, s);
    }
    /* 3. middle stage */
    ew_args B;
    memset(&B, 0, sizeof B);
    B.C = C; B.S = S; B.rows = A.rows; B.L = A.L;
    B.pbf16 = A.pbf16;
    float *cur = pre;
    switch (sp->mid) {
    case MID_BATCHNORM: case MID_GROUPNORM: case MID_INSTANCENORM: {
        if (norm_stats(cs, pre, stats16, fold_bias, s) != 0)
            return err_set(e, KBV_EINPUT, "baseline %s: instance norm needs spatial extent", b->p->id);
        B.norm = sp->mid;
        B.bias = fold_bias;
        B.stat = cs->stat;
        B.G = sp->groups;
        B.gamma = sp->gamma >= 0 ? (const float *)c->inputs[sp->gamma].data : NULL;
        B.beta = sp->beta >= 0 ? (const float *)c->inputs[sp->beta].data : NULL;
        break;
    }
    case MID_SUM_C: case MID_MEAN_C: case MID_MIN_C: case MID_MAX_C: case MID_LSE_C: {
        if (S > 1) {
            unsigned g = (unsigned)((N * S + 255) / 256);
            switch (sp->mid) {
            case MID_SUM_C: reduce_c_cols<MID_SUM_C><<<g, 256, 0, s>>>(pre, out, N, C, S); break;
            case MID_MEAN_C: reduce_c_cols<MID_MEAN_C><<<g, 256, 0, s>>>(pre, out, N, C, S); break;
            case MID_MIN_C: reduce_c_cols<MID_MIN_C><<<g, 256, 0, s>>>(pre, out, N, C, S); break;
            case MID_MAX_C: reduce_c_cols<MID_MAX_C><<<g, 256, 0, s>>>(pre, out, N, C, S); break;
            default: reduce_c_cols<MID_LSE_C><<<g, 256, 0, s>>>(pre, out, N, C, S); break;
            }
        } else {
            unsigned g = (unsigned)N;
            int t = rows_threads(C);
            if (rows16) launch_reduce_rows(sp->mid, g, t, s, rows16, out, C, A, fuse);
            else launch_reduce_rows(sp->mid, g, t, s, (const float *)pre, out, C, A, fuse);
        }
        cur = out;
        B.C = 1; B.S = S; B.rows = N; B.L = S;
        break;
    }
    case MID_GAP:
        reduce_rows<MID_GAP><<<(unsigned)(N * C), rows_threads(S), 0, s>>>(pre, out, S, A, 0);
        cur = out;
        B.C = C; B.S = 1; B.rows = N; B.L = C;
        break;
    case MID_SOFTMAX_C:
        if (S != 1) return err_set(e, KBV_EINPUT, "baseline %s: softmax over channels of a map", b->p->id);
        if (soft16) {
            base_softmax_rows_bf16(soft16, out16, N, C, 0, s);
            *wrote16 = 1;
            cudaError_t ce = cudaGetLastError();
            return ce == cudaSuccess ? 0 : base_cuda_err(e, b, "chain launch", ce);
        }
        base_softmax_rows(pre, out, N, C, 0, s);
        cur = out;
        break;
    default:
        break;
    }
    /* 4. the normalisation and the last steps, into the output */
    chain_fill_ops(&B, sp->ew2, c);
    if (stats16 && final16) {
        chain_launch_ew_bf16(b, stats16, (__nv_bfloat16 *)out16, B, s);
        *wrote16 = 1;
    } else if (stats16 && post_reads_through(cs, B)) {
        /* 5, with this pass: L2_084's softmax over features after a
         * batch norm and a scale reads the bfloat16 tensor */
        return run_post_through(b, c, NULL, stats16, B, out16, wrote16, e);
    } else if (stats16) {
        launch_ew(b, (const __nv_bfloat16 *)stats16, out, B, s);
        cur = out;
    } else if ((B.norm || B.n_ops) && final16) {
        launch_ew(b, (const float *)cur, (__nv_bfloat16 *)out16, B, s);
        *wrote16 = 1;
    } else if ((B.norm || B.n_ops) && post_reads_through(cs, B)) {
        /* 5, with this pass: a group norm and a mean over each sample
         * read the tensor once instead of a read, a write and a read */
        return run_post_through(b, c, (const float *)cur, NULL, B, out16, wrote16, e);
    } else if (B.norm || B.n_ops) {
        launch_ew(b, (const float *)cur, out, B, s);
        cur = out;
    } else if (cur != out && !cs->post) {
        cudaError_t ce = cudaMemcpyAsync(out, cur, (size_t)kbv_numel(&c->outputs[0]) * sizeof(float),
                                         cudaMemcpyDeviceToDevice, s);
        if (ce != cudaSuccess) return base_cuda_err(e, b, "copy", ce);
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "chain launch", ce);
    /* 5. the post stages, from the result so far into the output */
    if (post16) return chain_post_run16(b, cs->post, post16, A, cs->after_mid, c, out16, wrote16, e);
    if (cs->post) return chain_post_run(b, cs->post, cur, cs->after_mid, c, out16, wrote16, e);
    return 0;
}


namespace {

int run(base_ctx *b, base_variant v, const kbv_call *c, kbv_err *e)
{
    chain_state *cs = (chain_state *)b->state;
    const chain_spec *sp = cs->spec;
    cudaStream_t s = c->stream;
    const float *x = (const float *)c->inputs[0].data;
    const int wi = sp->w_in > 0 ? sp->w_in : 1;
    const float *w = (const float *)c->inputs[wi].data;
    /* the main part ends in the output, or before the post stages */
    float *out = cs->post ? cs->mid : (float *)c->outputs[0].data;
    float *pre = cs->pre ? cs->pre : out;
    long long N = cs->N, C = cs->C;
    int rc;
    /* 1. producer */
    if (sp->producer == CHAIN_LINEAR && sp->w2 > 0) {
        /* two layers: the first with its bias and the first steps, then
         * the second, whose bias the next pass adds */
        long long in = c->inputs[0].shape[1], H = c->inputs[wi].shape[0];
        rc = base_gemm(b, v, 0, 1, N, H, in, 1.0f, x, in, 0, w, in, 0, 0.0f, cs->hid, H, 0, 1, s, e);
        if (rc) return rc;
        ew_args L1;
        memset(&L1, 0, sizeof L1);
        L1.C = H; L1.S = 1; L1.rows = N; L1.L = H;
        L1.bias = sp->has_bias ? (const float *)c->inputs[wi + 1].data : NULL;
        chain_fill_ops(&L1, sp->ew1, c);
        launch_ew(b, (const float *)cs->hid, cs->hid, L1, s);
        const float *w2 = (const float *)c->inputs[sp->w2].data;
        rc = base_gemm(b, v, 0, 1, N, C, H, 1.0f, cs->hid, H, 0, w2, H, 0, 0.0f, pre, C, 0, 1, s, e);
    } else if (sp->producer == CHAIN_LINEAR) {
        long long in = c->inputs[0].shape[1];
        rc = base_gemm(b, v, 0, 1, N, C, in, 1.0f, x, in, 0, w, in, 0, 0.0f, pre, C, 0, 1, s, e);
    } else {
        if (cs->xin) {
            chain_input_pool(b, x, cs->xin, c->inputs[0], sp->in_pool, s);
            x = cs->xin;
        }
        rc = conv_runner_run(b, cs->conv, v, x, w, NULL, pre, s, e);
    }
    if (rc) return rc;
    return chain_run_rest(b, c, pre, e, NULL, NULL, 0, NULL);
}

void destroy(base_ctx *b)
{
    chain_state *cs = (chain_state *)b->state;
    if (!cs) return;
    conv_runner_destroy(cs->conv);
    chain_post_destroy(cs->post);
    if (cs->hid) cudaFree(cs->hid);
    if (cs->xin) cudaFree(cs->xin);
    if (cs->mid) cudaFree(cs->mid);
    if (cs->pre) cudaFree(cs->pre);
    if (cs->part) cudaFree(cs->part);
    if (cs->stat) cudaFree(cs->stat);
    if (cs->pre16) cudaFree(cs->pre16);
    free(cs);
    b->state = NULL;
}

int available(const suite_problem *p, const char **why)
{
    return suite_host_available(p, why);
}

} /* namespace */

void chain_fill_ops(ew_args *A, const chain_ew *ops, const kbv_call *c)
{
    A->n_ops = 0;
    for (int k = 0; k < CHAIN_MAX_EW && ops[k].kind != EW_END; k++) {
        A->kind[k] = ops[k].kind;
        A->a[k] = (float)ops[k].a;
        A->b[k] = (float)ops[k].b;
        A->p[k] = NULL;
        A->p_scalar[k] = 0;
        if (ops[k].p >= 0 && ops[k].p < c->n_inputs) {
            A->p[k] = (const float *)c->inputs[ops[k].p].data;
            A->p_scalar[k] = ops[k].kind == EW_ADD_T || ops[k].kind == EW_MUL_T ? 2
                             : kbv_numel(&c->inputs[ops[k].p]) == 1;
        }
        A->n_ops = k + 1;
    }
}

const base_family base_fam_chain = {
    "chain", OP_CHAIN_FIRST, OP_CHAIN_LAST, create, run, destroy, NULL, chain_run_bf16,
};
const base_family base_fam_conv_chain = {
    "conv-chain", OP_CONV_CHAIN_FIRST, OP_CONV_CHAIN_LAST, create, run, destroy, available, chain_run_bf16,
};
