/* conv_bf16.cu - the convolution runner's bf16 path (conv_runner_run_bf16,
 * base_impl.h): the same convolutions on bfloat16 tensors with float
 * compute, as PyTorch runs them for bfloat16, chosen among cuDNN's legacy
 * algorithms and graph plans by timing, like the tf32 variant (conv.cu's
 * header says why), unless a pin of an earlier run names the choice
 * (conv_apply_pin16).
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base_impl.h"
#include "conv_impl.h"

cudnnStatus_t conv16_describe(conv_runner *r, int rank, const int *xdims, const int *xstr, const int *ydims,
                              const int *ystr, const int *wdims, int nconv, const int *pad, const int *str,
                              const int *dil)
{
    const dnn_api &A = r->api;
    cudnnStatus_t st = A.cudnnCreateTensorDescriptor(&r->xd16);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnCreateTensorDescriptor(&r->yd16);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnCreateFilterDescriptor(&r->wd16);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnCreateConvolutionDescriptor(&r->cd16);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnSetTensorNdDescriptor(r->xd16, CUDNN_DATA_BFLOAT16, rank, xdims, xstr);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnSetTensorNdDescriptor(r->yd16, CUDNN_DATA_BFLOAT16, rank, ydims, ystr);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnSetFilterNdDescriptor(r->wd16, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NCHW, rank, wdims);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnSetConvolutionNdDescriptor(r->cd16, nconv, pad, str, dil, CUDNN_CROSS_CORRELATION,
                                               CUDNN_DATA_FLOAT);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnSetConvolutionGroupCount(r->cd16, (int)r->g.groups);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnSetConvolutionMathType(r->cd16, CUDNN_DEFAULT_MATH);
    return st;
}

namespace {

/* y[n, c, s] += bias[c] in place on bfloat16 [N C planes of S], float
 * arithmetic, one rounding: PyTorch adds a bfloat16 convolution's bias in
 * a pass of its own too.  Eight values per 16-byte access when S allows;
 * grid (x: chunks of a plane, y: planes). */
__global__ void __launch_bounds__(256) bias_bf16(__nv_bfloat16 *y, const __nv_bfloat16 *__restrict__ bias,
                                                 long long planes, long long S, long long C, int vec)
{
    for (long long pl = blockIdx.y; pl < planes; pl += gridDim.y) {
        float bv = __bfloat162float(bias[pl % C]);
        if (vec) {
            uint4 *p8 = reinterpret_cast<uint4 *>(y + pl * S);
            for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < S / 8;
                 i += (long long)gridDim.x * blockDim.x) {
                uint4 v = p8[i];
                unsigned w[4] = { v.x, v.y, v.z, v.w };
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    float lo = __uint_as_float(w[j] << 16) + bv, hi = __uint_as_float(w[j] & 0xffff0000u) + bv;
                    w[j] = (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(lo)) |
                           ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(hi)) << 16);
                }
                p8[i] = make_uint4(w[0], w[1], w[2], w[3]);
            }
        } else {
            __nv_bfloat16 *p = y + pl * S;
            for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < S;
                 i += (long long)gridDim.x * blockDim.x)
                p[i] = __float2bfloat16_rn(__bfloat162float(p[i]) + bv);
        }
    }
}

/* The cuDNN calls of one bf16 convolution with candidate c, one per chunk
 * of r->batch samples: a graph plan when c is one and the buffers have the
 * alignment the graph was built for, else the legacy algorithm (c's, or
 * for a plan the one in place, legacy16), whose math type is already on
 * cd16. */
cudnnStatus_t dnn_run16(base_ctx *b, conv_runner *r, const conv_cand &cand, const void *x, const void *w, void *y,
                        cudaStream_t s)
{
    const dnn_api &A = r->api;
    const float one = 1.0f, zero = 0.0f;
    const int plan = cand.plan >= 0 && r->graph16 && conv_graph_fits(r->graph16, x, w, y) ? cand.plan : -1;
    const conv_cand &c = cand.plan >= 0 ? r->legacy16 : cand;
    cudnnStatus_t st = A.cudnnSetStream(r->h, s);
    for (long long n0 = 0; st == CUDNN_STATUS_SUCCESS && n0 < r->g.n; n0 += r->batch) {
        const __nv_bfloat16 *xc = (const __nv_bfloat16 *)x + n0 * r->x_per;
        __nv_bfloat16 *yc = (__nv_bfloat16 *)y + n0 * r->y_per;
        if (plan >= 0)
            st = (cudnnStatus_t)conv_graph_exec(r->graph16, plan, xc, w, yc, b->ws);
        else if (!r->g.transposed)
            st = A.cudnnConvolutionForward(r->h, &one, r->xd16, xc, r->wd16, w, r->cd16,
                                           (cudnnConvolutionFwdAlgo_t)c.algo, b->ws, c.ws, &zero, r->yd16, yc);
        else
            st = A.cudnnConvolutionBackwardData(r->h, &one, r->wd16, w, r->xd16, xc, r->cd16,
                                                (cudnnConvolutionBwdDataAlgo_t)c.algo, b->ws, c.ws, &zero,
                                                r->yd16, yc);
    }
    return st;
}

struct contest16 {
    base_ctx *b;
    conv_runner *r;
    const void *x, *w;
    void *y;
};

int contestant16(void *ctx, int i, cudaStream_t s)
{
    const contest16 *c = (const contest16 *)ctx;
    const conv_cand &k = c->r->cand16[i];
    if (k.plan >= 0) {
        /* a plan that cannot run on these buffers is left out, not timed
         * as its fallback */
        if (!c->r->graph16 || !conv_graph_fits(c->r->graph16, c->x, c->w, c->y)) return 1;
    } else if (c->r->api.cudnnSetConvolutionMathType(c->r->cd16, k.math) != CUDNN_STATUS_SUCCESS) {
        return 1;
    }
    return dnn_run16(c->b, c->r, k, c->x, c->w, c->y, s) != CUDNN_STATUS_SUCCESS;
}

/* cuDNN's search on the bf16 descriptors (its first CONV_CANDS successful
 * results, any math type) and the graph API's plans for bfloat16 tensors
 * (conv_graph.cu, interleaved with them as for tf32; a plan whose buffers
 * lack its alignment runs the legacy algorithm in place, legacy16), the
 * workspace for them (those needing more than
 * the first are dropped when it cannot be had), then the re-timing on the
 * caller's buffers as for tf32 (base_contest, the search's first kept
 * unless another wins by the margin); y is overwritten.  The
 * workspace is not shrunk afterwards (see the end). */
int choose16(base_ctx *b, conv_runner *r, const void *x, const void *w, void *y, cudaStream_t s, kbv_err *e)
{
    const dnn_api &A = r->api;
    cudnnStatus_t st = A.cudnnSetStream(r->h, s);
    int got = 0;
    r->n_cand16 = 0;
    if (st == CUDNN_STATUS_SUCCESS && !r->g.transposed) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        st = A.cudnnFindConvolutionForwardAlgorithm(r->h, r->xd16, r->wd16, r->cd16, r->yd16,
                                                    CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf);
        if (st == CUDNN_STATUS_SUCCESS) r->n_cand16 = take_cands(perf, got, BASE_TF32, r->cand16);
    } else if (st == CUDNN_STATUS_SUCCESS) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        st = A.cudnnFindConvolutionBackwardDataAlgorithm(r->h, r->wd16, r->xd16, r->cd16, r->yd16,
                                                         CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, perf);
        if (st == CUDNN_STATUS_SUCCESS) r->n_cand16 = take_cands(perf, got, BASE_TF32, r->cand16);
    }
    if (st == CUDNN_STATUS_SUCCESS && r->n_cand16 == 0) st = CUDNN_STATUS_NOT_SUPPORTED;
    if (st != CUDNN_STATUS_SUCCESS) return conv_dnn_err(r, b, "algorithm search (bf16)", st, e);
    /* the graph API's plans (what PyTorch runs), interleaved with the
     * legacy results as for tf32; a failure leaves the legacy ones */
    const char *env = getenv("KBV_CONV_GRAPH");
    kbv_err ge;
    memset(&ge, 0, sizeof ge);
    conv_graph *cg = NULL;
    if (!(env && strcmp(env, "0") == 0) && conv_graph_create(A.lib, r->h, &r->gs16, 1, &cg, &ge) == 0 && cg) {
        r->graph16 = cg;
        conv_cand legacy[CONV_CANDS];
        int nl = r->n_cand16, ng = conv_graph_plans(cg), n = 0;
        for (int i = 0; i < nl; i++) legacy[i] = r->cand16[i];
        if (ng > CONV_GRAPH_PLANS) ng = CONV_GRAPH_PLANS;
        for (int i = 0; i < nl || i < ng; i++) {
            if (i < nl) r->cand16[n++] = legacy[i];
            if (i < ng) {
                conv_cand &c = r->cand16[n++];
                c.plan = i;
                c.algo = 0;
                c.math = CUDNN_DEFAULT_MATH;
                c.ws = conv_graph_ws(cg, i);
            }
        }
        r->n_cand16 = n;
    }
    r->legacy16 = r->cand16[0];   /* the search's first, always legacy */
    size_t most = 0;
    for (int i = 0; i < r->n_cand16; i++)
        if (r->cand16[i].ws > most) most = r->cand16[i].ws;
    kbv_err scratch;
    memset(&scratch, 0, sizeof scratch);
    if (base_need_ws(b, most, &scratch) != 0) {
        cudaGetLastError();   /* an allocation failure is not sticky */
        int n = 1;
        for (int i = 1; i < r->n_cand16; i++)
            if (r->cand16[i].ws <= r->cand16[0].ws) r->cand16[n++] = r->cand16[i];
        r->n_cand16 = n;
        int rc = base_need_ws(b, r->cand16[0].ws, e);
        if (rc) return rc;
    }
    r->ws_asked = b->ws_bytes;
    int best = 0;
    if (r->n_cand16 > 1) {
        float med[CONV_ALL];
        contest16 ctx = { b, r, x, w, y };
        int rc = base_contest(b, r->n_cand16, contestant16, &ctx, s, CONV_TUNE_BUDGET_MS, med, e);
        if (rc) return rc;
        best = base_contest_winner(med, r->n_cand16);
        if (best < 0) best = 0;
    }
    r->use16 = r->cand16[best];
    /* the legacy algorithm in place: the choice itself, or a plan's
     * fallback, the search's first (whose workspace the context has) */
    if (r->use16.plan < 0) r->legacy16 = r->use16;
    if (A.cudnnSetConvolutionMathType(r->cd16, r->legacy16.math) != CUDNN_STATUS_SUCCESS)
        return err_set(e, KBV_ERUNTIME, "baseline %s: cudnnSetConvolutionMathType failed", b->p->id);
    r->ready16 = 1;
    /* The workspace stays as grown for the candidates: another runner of
     * the context (the depthwise-separable problem's second convolution)
     * may have chosen after this one's fp32 sizing, and shrinking here could
     * take the room its bf16 choice needs. */
    return 0;
}

} /* namespace */

int conv_runner_run_bf16(base_ctx *b, conv_runner *r, const void *x, const void *w, const void *bias, void *y,
                         cudaStream_t s, kbv_err *e)
{
    if (!r->ready16) {
        /* a pin of an earlier run (found at create) replaces the search */
        if (!conv_apply_pin16(b, r)) {
            int rc = choose16(b, r, x, w, y, s, e);
            if (rc) return rc;
        }
    }
    cudnnStatus_t st = dnn_run16(b, r, r->use16, x, w, y, s);
    if (st != CUDNN_STATUS_SUCCESS) return conv_dnn_err(r, b, "bf16 convolution", st, e);
    if (bias) {
        long long S = r->y_per / r->g.cout, planes = r->g.n * r->g.cout;
        int vec = S % 8 == 0 && (uintptr_t)y % 16 == 0;
        long long per = vec ? S / 8 : S;
        unsigned gx = (unsigned)((per + 255) / 256), gy = (unsigned)(planes < 65535 ? planes : 65535);
        if (gx > 64) gx = 64;
        bias_bf16<<<dim3(gx, gy), 256, 0, s>>>((__nv_bfloat16 *)y, (const __nv_bfloat16 *)bias, planes, S,
                                               r->g.cout, vec);
        cudaError_t ce = cudaGetLastError();
        if (ce != cudaSuccess) return base_cuda_err(e, b, "bf16 bias launch", ce);
    }
    if (!r->noted16) {
        r->noted16 = 1;
        char nm[96];
        if (r->use16.plan >= 0 && r->graph16 && conv_graph_fits(r->graph16, x, w, y))
            conv_graph_describe(r->graph16, r->use16.plan, nm, sizeof nm);
        else
            snprintf(nm, sizeof nm, "legacy %s algo %d (math %d)", r->g.transposed ? "backward-data" : "forward",
                     r->legacy16.algo, (int)r->legacy16.math);
        base_note_choice(b, BASE_BF16, "conv: cuDNN bf16 %s, fp32 compute%s%s", nm,
                         bias ? ", bias by kbv's bf16 pass" : "", r->pinned16 ? " (pinned)" : "");
        conv_note_pin16(b, r);
    }
    return 0;
}
