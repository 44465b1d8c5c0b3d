/* conv.cu - convolutions and transposed convolutions through cuDNN, as
 * PyTorch runs them.
 *
 * cuDNN is loaded at run time (dlopen of the library suite_find_cudnn
 * finds: $KBV_CUDNN_LIB, the loader path, the CUDA toolkit, PyTorch's
 * bundled copy), so that kbv builds and runs on hosts without it and
 * `kbv list` can say which problems need it.  Functions are resolved into a
 * table per runner; nothing global.
 *
 * Per variant the runner has its own convolution descriptor: fp32 sets
 * CUDNN_FMA_MATH (no tensor cores; what PyTorch sets for float when TF32 is
 * off), tf32 CUDNN_DEFAULT_MATH (which allows TF32 tensor cores on Ampere
 * and later; what PyTorch sets with allow_tf32).
 *
 * The algorithm of each variant is chosen by timing.  PyTorch (benchmark
 * mode off) runs the first algorithm of cuDNN's heuristic that fits its
 * workspace.  cudnnFind* at create ranks the algorithms by one warm run
 * each, which is noisy: on the H200 its first pick left four tf32
 * convolutions 5-10% slower than PyTorch.  So create keeps the first four
 * successful results of the search (fp32: only FMA or default math
 * results, FFT and Winograd included as PyTorch may run them, and the
 * descriptor stays FMA; tf32: any math type, set on the
 * descriptor with the algorithm), and the first run of each variant times
 * them again on its own buffers with base_contest (contest.cu: cold L2,
 * interleaved rounds, medians) and keeps the search's first unless
 * another beats it by base_contest_winner's margin (3%), so that noise
 * does not trade it for an equal one.  The choice is named in the
 * journal (base_choice).  A ratio above
 * 1.05 then cannot come from a bad pick among cuDNN's algorithms.  The
 * workspace is sized for the largest of the four (counted by the context;
 * a candidate whose workspace cannot be allocated is dropped).
 *
 * PyTorch itself runs cuDNN through its graph (backend) API: the first
 * engine configuration of heuristic mode A that finalizes.  Some of those
 * engines cannot be selected through the legacy algorithm enum, and on the
 * H200 they left tf32 convolutions 5-14% faster in PyTorch than the best
 * legacy algorithm, and fp32 networks too (GoogLeNet and ResNet-101 ran
 * the legacy implicit_convolve_sgemm where PyTorch ran sm80_xmma fprop
 * kernels: tests/parity/kernels.py, data/parity/spot).  So each variant
 * also gets up to CONV_GRAPH_PLANS plans of the graph API (conv_graph.cu)
 * as candidates, interleaved with the legacy ones (legacy first, graph
 * first, legacy second, ...: the two that are always timed are the
 * search's first and PyTorch's pick), and the fastest of all wins.  The
 * fp32 variant's plans leave out every engine with cuDNN's tensor-core
 * note (as PyTorch does with TF32 off) and, like the tf32 ones, every
 * engine that down-converts its inputs.  A failure of the graph path only
 * leaves the legacy candidates; its reason is kept.  Should
 * a later run's buffers lack the alignment the graph was built for, the
 * variant runs its fallback: the fastest legacy candidate whose workspace
 * the chosen plan's covers (else the legacy one of least workspace), for
 * which the workspace is sized too.  KBV_CONV_DEBUG=1 prints each
 * variant's timings, its choice and the graph path's state to stderr;
 * KBV_CONV_GRAPH=0 turns the graph path off.
 *
 * The correctness reference (base_run_reference) is the fp32 variant with
 * the search's first exact algorithm instead (conv_algo_exact): the
 * transforms' rounding is PyTorch's business when it is timed, never the
 * yardstick of a candidate's error.
 *
 * A transposed convolution is cuDNN's backward-data pass of the
 * convolution whose filter is the transposed convolution's weight, exactly
 * as PyTorch computes it.  1D runs as 2D with a unit height.
 */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base_impl.h"
#include "dnn_lib.h"
#include "conv_impl.h"

extern "C" {
#include "suite_host.h"
}

namespace {

int dnn_load(dnn_api *a, const char *id, kbv_err *e)
{
    memset(a, 0, sizeof *a);
    char path[4096];
    a->lib = dnn_lib_open(id, path, sizeof path, e);
    if (!a->lib) return KBV_ERUNTIME;
    CONV_DNN_FNS(DNN_LOAD)
    return 0;
}

} /* namespace */

int conv_dnn_err(const conv_runner *r, const base_ctx *b, const char *what, cudnnStatus_t st, kbv_err *e)
{
    return err_set(e, KBV_ERUNTIME, "baseline %s: %s: %s", b->p->id, what,
                   r->api.cudnnGetErrorString ? r->api.cudnnGetErrorString(st) : "cuDNN error");
}

namespace {

} /* namespace */

cudnnStatus_t conv_use_cand(conv_runner *r, int v, int i)
{
    const conv_cand &c = r->cand[v][i];
    r->plan[v] = c.plan;
    r->ws[v] = c.ws;
    if (c.plan >= 0) return CUDNN_STATUS_SUCCESS;
    r->legacy[v] = c;
    if (v != BASE_TF32) return CUDNN_STATUS_SUCCESS;
    return r->api.cudnnSetConvolutionMathType(r->cd[v], c.math);
}

namespace {

/* The context's workspace for every candidate of the variant; when the
 * largest cannot be allocated, the candidates that need more than the
 * search's first are dropped, and only the first must fit. */
int need_cand_ws(base_ctx *b, conv_runner *r, int v, kbv_err *e)
{
    size_t before = b->ws_bytes, most = 0;
    for (int i = 0; i < r->n_cand[v]; i++)
        if (r->cand[v][i].ws > most) most = r->cand[v][i].ws;
    kbv_err scratch;
    memset(&scratch, 0, sizeof scratch);
    if (base_need_ws(b, most, &scratch) == 0) return 0;
    cudaGetLastError();   /* an allocation failure is not sticky */
    size_t first = r->cand[v][0].ws;
    int n = 1;
    for (int i = 1; i < r->n_cand[v]; i++)
        if (r->cand[v][i].ws <= first) r->cand[v][n++] = r->cand[v][i];
    r->n_cand[v] = n;
    return base_need_ws(b, first > before ? first : before, e);
}

/* Packed NC(D)HW descriptor dims and strides; 1D gets a unit height. */
int tensor_dims(long long n, long long c, const long long *sp, int nd, int dims[5], int strides[5])
{
    int rank = nd == 1 ? 4 : nd + 2;
    dims[0] = (int)n;
    dims[1] = (int)c;
    if (nd == 1) {
        dims[2] = 1;
        dims[3] = (int)sp[0];
    } else {
        for (int i = 0; i < nd; i++) dims[2 + i] = (int)sp[i];
    }
    strides[rank - 1] = 1;
    for (int i = rank - 2; i >= 0; i--) strides[i] = strides[i + 1] * dims[i + 1];
    return rank;
}

/* The byte alignment that every pointer of a cuDNN call has, declared in
 * the graph's tensors: 32 (the most PyTorch declares; cudaMalloc and
 * PyTorch's allocator give 256 or more), lowered to what the offsets of
 * the chunks of a split batch keep.  conv_graph_fits checks the base
 * pointers of each run against it. */
long long graph_align(const conv_runner *r, long long elem = (long long)sizeof(float))
{
    long long a = 32;
    if (r->batch < r->g.n) {
        long long xb = r->batch * r->x_per * elem;
        long long yb = r->batch * r->y_per * elem;
        while (a > 4 && (xb % a != 0 || yb % a != 0)) a /= 2;
    }
    return a;
}

/* Builds the graph plans of variant v and interleaves them with its legacy
 * candidates: legacy 0, graph 0, legacy 1, graph 1, ... (see the header
 * comment).  A failure keeps its reason and leaves the legacy candidates
 * as they were. */
void add_graph_cands(conv_runner *r, int v, const conv_graph_shape *gs)
{
    const char *env = getenv("KBV_CONV_GRAPH");
    if (env && strcmp(env, "0") == 0) {
        snprintf(r->graph_why[v], sizeof r->graph_why[v], "off (KBV_CONV_GRAPH=0)");
        return;
    }
    kbv_err ge;
    memset(&ge, 0, sizeof ge);
    conv_graph *cg = NULL;
    if (conv_graph_create(r->api.lib, r->h, gs, v == BASE_TF32, &cg, &ge) != 0 || !cg) {
        snprintf(r->graph_why[v], sizeof r->graph_why[v], "failed: %.240s", ge.msg[0] ? ge.msg : "unknown");
        return;
    }
    r->graph[v] = cg;
    conv_cand legacy[CONV_CANDS];
    memset(legacy, 0, sizeof legacy);
    int nl = r->n_cand[v] < CONV_CANDS ? r->n_cand[v] : CONV_CANDS;
    for (int i = 0; i < nl; i++) legacy[i] = r->cand[v][i];
    int ng = conv_graph_plans(cg), n = 0;
    if (ng > CONV_GRAPH_PLANS) ng = CONV_GRAPH_PLANS;
    for (int i = 0; i < nl || i < ng; i++) {
        if (i < nl) r->cand[v][n++] = legacy[i];
        if (i < ng) {
            conv_cand &c = r->cand[v][n++];
            c.plan = i;
            c.algo = 0;
            c.math = CUDNN_DEFAULT_MATH;
            c.ws = conv_graph_ws(cg, i);
        }
    }
    r->n_cand[v] = n;
    snprintf(r->graph_why[v], sizeof r->graph_why[v], "%d plan%s", ng, ng == 1 ? "" : "s");
}

/* cuDNN's search for variant v on r's descriptors: with cands, the
 * variant's candidates; with exact (fp32 only), the reference's exact
 * algorithm.  NOT_SUPPORTED when the search leaves no candidate or no
 * exact algorithm that was asked for.  The search runs the candidates, so
 * it needs the stream of the caller's device; it allocates its own
 * buffers. */
cudnnStatus_t search(conv_runner *r, int v, int cands, int exact)
{
    const dnn_api &A = r->api;
    cudnnStatus_t st;
    int got = 0, n = 0, found = 0;
    if (!r->g.transposed) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        st = A.cudnnFindConvolutionForwardAlgorithm(r->h, r->xd, r->wd, r->cd[v], r->yd,
                                                    CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf);
        if (st == CUDNN_STATUS_SUCCESS && cands) n = r->n_cand[v] = take_cands(perf, got, v, r->cand[v]);
        if (st == CUDNN_STATUS_SUCCESS && exact) found = take_exact(perf, got, &r->exact);
    } else {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        st = A.cudnnFindConvolutionBackwardDataAlgorithm(r->h, r->wd, r->xd, r->cd[v], r->yd,
                                                         CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, perf);
        if (st == CUDNN_STATUS_SUCCESS && cands) n = r->n_cand[v] = take_cands(perf, got, v, r->cand[v]);
        if (st == CUDNN_STATUS_SUCCESS && exact) found = take_exact(perf, got, &r->exact);
    }
    if (st == CUDNN_STATUS_SUCCESS && ((cands && n == 0) || (exact && !found))) st = CUDNN_STATUS_NOT_SUPPORTED;
    return st;
}

} /* namespace */

int conv_geom_from(const suite_problem *p, const kbv_tensor *x, const kbv_tensor *w,
                   const kbv_tensor *y, int transposed, conv_geom *g, kbv_err *e)
{
    memset(g, 0, sizeof *g);
    int nd = x->ndim - 2;
    if (nd < 1 || nd > 3 || w->ndim != x->ndim || y->ndim != x->ndim)
        return err_set(e, KBV_EINPUT, "baseline %s: convolution ranks do not match", p->id);
    static const char *const axes3[3] = { "d", "h", "w" };
    const char *const *axes = axes3 + (3 - nd);
    g->nd = nd;
    g->transposed = transposed;
    g->n = x->shape[0];
    g->cin = x->shape[1];
    g->cout = y->shape[1];
    /* groups from the weight: conv [Cout, Cin/g, k], transposed [Cin, Cout/g, k] */
    g->groups = transposed ? g->cout / w->shape[1] : g->cin / w->shape[1];
    if (g->groups < 1) g->groups = 1;
    for (int i = 0; i < nd; i++) {
        char nm[32];
        g->in[i] = x->shape[2 + i];
        g->out[i] = y->shape[2 + i];
        g->k[i] = (int)w->shape[2 + i];
        snprintf(nm, sizeof nm, "stride_%s", axes[i]);
        g->s[i] = (int)base_attr(p, nm, base_attr(p, "stride", 1));
        snprintf(nm, sizeof nm, "padding_%s", axes[i]);
        g->p[i] = (int)base_attr(p, nm, base_attr(p, "padding", 0));
        snprintf(nm, sizeof nm, "dilation_%s", axes[i]);
        g->d[i] = (int)base_attr(p, nm, base_attr(p, "dilation", 1));
    }
    return 0;
}

int conv_runner_create(base_ctx *b, const conv_geom *g, conv_runner **out, kbv_err *e)
{
    *out = NULL;
    conv_runner *r = (conv_runner *)calloc(1, sizeof *r);
    if (!r) return err_set(e, KBV_ENOMEM, "baseline %s: out of memory", b->p->id);
    r->g = *g;
    r->plan[0] = r->plan[1] = -1;
    const char *dbg = getenv("KBV_CONV_DEBUG");
    r->debug = dbg && strcmp(dbg, "1") == 0;
    for (int v = 0; v < 2; v++) snprintf(r->graph_why[v], sizeof r->graph_why[v], "not built");
    int rc = dnn_load(&r->api, b->p->id, e);
    if (rc) {
        free(r);
        return rc;
    }
    const dnn_api &A = r->api;
    cudnnStatus_t st = A.cudnnCreate(&r->h);
    if (st != CUDNN_STATUS_SUCCESS) {
        rc = conv_dnn_err(r, b, "cudnnCreate", st, e);
        r->h = NULL;
        conv_runner_destroy(r);
        return rc;
    }
    int xdims[5] = { 0 }, xstr[5] = { 0 }, ydims[5] = { 0 }, ystr[5] = { 0 }, wdims[5] = { 0 },
        wstr[5] = { 0 };
    /* cuDNN refuses a tensor of more than 2^31 - 1 elements, as PyTorch
     * finds too: like PyTorch, split the batch into equal chunks that fit
     * (KernelBench's pointwise conv has a 2.1e9-element output). */
    r->x_per = g->cin;
    r->y_per = g->cout;
    for (int i = 0; i < g->nd; i++) {
        r->x_per *= g->in[i];
        r->y_per *= g->out[i];
    }
    long long per = r->x_per > r->y_per ? r->x_per : r->y_per;
    r->batch = g->n;
    while (r->batch > 1 && (r->batch * per > 2147483647LL || g->n % r->batch != 0)) r->batch--;
    /* x is the convolution's input and y its output; for a transposed
     * convolution cuDNN's roles swap (dy = x, dx = y). */
    int rank = tensor_dims(r->batch, g->cin, g->in, g->nd, xdims, xstr);
    tensor_dims(r->batch, g->cout, g->out, g->nd, ydims, ystr);
    /* filter: conv [Cout, Cin/g, k...], transposed [Cin, Cout/g, k...] */
    long long kk[3] = { g->k[0], g->k[1], g->k[2] };
    if (g->transposed) tensor_dims(g->cin, g->cout / g->groups, kk, g->nd, wdims, wstr);
    else tensor_dims(g->cout, g->cin / g->groups, kk, g->nd, wdims, wstr);
    int pad[3] = { 0, 0, 0 }, str[3] = { 1, 1, 1 }, dil[3] = { 1, 1, 1 }, nconv = rank - 2;
    if (g->nd == 1) {
        pad[0] = 0; str[0] = 1; dil[0] = 1;
        pad[1] = g->p[0]; str[1] = g->s[0]; dil[1] = g->d[0];
    } else {
        for (int i = 0; i < g->nd; i++) { pad[i] = g->p[i]; str[i] = g->s[i]; dil[i] = g->d[i]; }
    }
    int bdims[5] = { 1, (int)g->cout, 1, 1, 1 }, bstr[5];
    bstr[rank - 1] = 1;
    for (int i = rank - 2; i >= 0; i--) bstr[i] = bstr[i + 1] * bdims[i + 1];
    /* the same shapes for the graph path */
    conv_graph_shape gs;
    memset(&gs, 0, sizeof gs);
    gs.rank = rank;
    gs.transposed = g->transposed;
    for (int i = 0; i < rank; i++) {
        gs.x[i] = xdims[i];
        gs.x_str[i] = xstr[i];
        gs.w[i] = wdims[i];
        gs.w_str[i] = wstr[i];
        gs.y[i] = ydims[i];
        gs.y_str[i] = ystr[i];
    }
    for (int i = 0; i < nconv; i++) {
        gs.pad[i] = pad[i];
        gs.stride[i] = str[i];
        gs.dil[i] = dil[i];
    }
    gs.align = graph_align(r);
    r->gs16 = gs;
    r->gs16.bf16 = 1;
    r->gs16.align = graph_align(r, 2);

    st = A.cudnnCreateTensorDescriptor(&r->xd);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnCreateTensorDescriptor(&r->yd);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnCreateTensorDescriptor(&r->bd);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnCreateFilterDescriptor(&r->wd);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnSetTensorNdDescriptor(r->xd, CUDNN_DATA_FLOAT, rank, xdims, xstr);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnSetTensorNdDescriptor(r->yd, CUDNN_DATA_FLOAT, rank, ydims, ystr);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnSetTensorNdDescriptor(r->bd, CUDNN_DATA_FLOAT, rank, bdims, bstr);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnSetFilterNdDescriptor(r->wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, rank, wdims);
    if (st != CUDNN_STATUS_SUCCESS) {
        rc = conv_dnn_err(r, b, "cuDNN descriptors", st, e);
        conv_runner_destroy(r);
        return rc;
    }
    /* bfloat16 tensors, float compute (cuDNN's PSEUDO_BFLOAT16_CONFIG, what
     * PyTorch runs for bfloat16), tensor cores allowed: conv_bf16.cu */
    st = conv16_describe(r, rank, xdims, xstr, ydims, ystr, wdims, nconv, pad, str, dil);
    if (st != CUDNN_STATUS_SUCCESS) {
        rc = conv_dnn_err(r, b, "cuDNN bf16 descriptors", st, e);
        conv_runner_destroy(r);
        return rc;
    }
    r->ws_floor = b->ws_bytes;
    rc = conv_find_pin16(b, r, e);   /* the bf16 path chooses later, after base_create's pins are gone */
    if (rc) {
        conv_runner_destroy(r);
        return rc;
    }
    for (int v = 0; v < 2; v++) {
        st = A.cudnnCreateConvolutionDescriptor(&r->cd[v]);
        if (st == CUDNN_STATUS_SUCCESS)
            st = A.cudnnSetConvolutionNdDescriptor(r->cd[v], nconv, pad, str, dil,
                                                   CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
        if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnSetConvolutionGroupCount(r->cd[v], (int)g->groups);
        if (st == CUDNN_STATUS_SUCCESS)
            st = A.cudnnSetConvolutionMathType(r->cd[v], v == BASE_TF32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH);
        if (st != CUDNN_STATUS_SUCCESS) {
            rc = conv_dnn_err(r, b, "convolution descriptor", st, e);
            conv_runner_destroy(r);
            return rc;
        }
        /* pins of an earlier run (base_create's) replace the search */
        int pinned = st == CUDNN_STATUS_SUCCESS ? conv_apply_pin(b, r, v, &gs, e) : 0;
        int ref_pinned = v == BASE_TF32 || pinned < 0 ? 1 : conv_apply_ref_pin(b, r, e);
        if (pinned < 0 || ref_pinned < 0) {
            conv_runner_destroy(r);
            return KBV_EINPUT;
        }
        if (st == CUDNN_STATUS_SUCCESS && (!pinned || !ref_pinned)) st = search(r, v, !pinned, !ref_pinned);
        if (st == CUDNN_STATUS_SUCCESS && !pinned) add_graph_cands(r, v, &gs);
        if (st == CUDNN_STATUS_SUCCESS && !pinned) st = conv_use_cand(r, v, 0);
        if (st != CUDNN_STATUS_SUCCESS) {
            rc = conv_dnn_err(r, b, v == BASE_TF32 ? "algorithm search (tf32)" : "algorithm search (fp32)",
                         st, e);
            conv_runner_destroy(r);
            return rc;
        }
        rc = need_cand_ws(b, r, v, e);
        /* the reference's workspace too (it is not among the candidates
         * when no candidate is exact) */
        if (!rc && v == BASE_FP32 && r->exact.ws > b->ws_bytes) rc = base_need_ws(b, r->exact.ws, e);
        if (rc) {
            conv_runner_destroy(r);
            return rc;
        }
    }
    r->ws_asked = b->ws_bytes;
    *out = r;
    return 0;
}

namespace {

/* Depthwise 2D convolution (groups = Cin = Cout, weight [C, 1, kh, kw]),
 * one thread per output element, as PyTorch's own depthwise kernel (which
 * PyTorch uses for float32 rather than cuDNN).  grid (x: outputs of a
 * plane, y: planes n * C + c); the taps of the plane's filter are read
 * through the cache. */
__global__ void __launch_bounds__(256) dw_conv2d(const float *__restrict__ x,
                                                 const float *__restrict__ w,
                                                 const float *__restrict__ bias,
                                                 float *__restrict__ y, long long planes, int C,
                                                 int H, int W, int OH, int OW, int kh, int kw, int sh,
                                                 int sw, int ph, int pw, int dh, int dw)
{
    unsigned per = (unsigned)OH * (unsigned)OW;
    for (long long plane = blockIdx.y; plane < planes; plane += gridDim.y) {
        int c = (int)(plane % C);
        const float *xp = x + plane * H * W;
        const float *wp = w + (long long)c * kh * kw;
        float b0 = bias ? bias[c] : 0.0f;
        for (unsigned u = blockIdx.x * blockDim.x + threadIdx.x; u < per; u += gridDim.x * blockDim.x) {
            int oh = (int)(u / (unsigned)OW), ow = (int)(u % (unsigned)OW);
            int h0 = oh * sh - ph, w0 = ow * sw - pw;
            float acc = 0.0f;
            for (int i = 0; i < kh; i++) {
                int hh = h0 + i * dh;
                if (hh < 0 || hh >= H) continue;
                const float *row = xp + (long long)hh * W;
                for (int j = 0; j < kw; j++) {
                    int ww = w0 + j * dw;
                    if (ww < 0 || ww >= W) continue;
                    acc = fmaf(row[ww], wp[i * kw + j], acc);
                }
            }
            y[plane * per + u] = acc + b0;
        }
    }
}

} /* namespace */

int conv_is_depthwise2d(const conv_geom *g)
{
    return g->nd == 2 && !g->transposed && g->groups == g->cin && g->cin == g->cout && g->groups > 1;
}

namespace {

void run_direct(const base_ctx *b, const conv_runner *r, const float *x, const float *w,
                const float *bias, float *y, cudaStream_t s)
{
    const conv_geom *g = &r->g;
    long long planes = g->n * g->cin, per = g->out[0] * g->out[1];
    unsigned gy = (unsigned)(planes < 65535 ? planes : 65535);
    long long gx = (per + 255) / 256, want = (long long)b->sm_count * 64 / (long long)gy;
    if (want < 1) want = 1;
    if (gx > want) gx = want;
    dw_conv2d<<<dim3((unsigned)gx, gy), 256, 0, s>>>(x, w, bias, y, planes, (int)g->cin, (int)g->in[0],
                                                     (int)g->in[1], (int)g->out[0], (int)g->out[1],
                                                     g->k[0], g->k[1], g->s[0], g->s[1], g->p[0],
                                                     g->p[1], g->d[0], g->d[1]);
}

} /* namespace */

namespace {

/* The two ways of a depthwise convolution for base_contest: 0 is cuDNN's
 * (already re-timed) choice, 1 kbv's direct kernel. */
struct dw_contest {
    base_ctx *b;
    conv_runner *r;
    int vi;
    const float *x, *w;
    float *y;
    int failed;               /* a CUDA error inside a run: the contest stops at the next check */
    kbv_err *e;
};

int dw_contestant(void *ctx, int way, cudaStream_t s)
{
    dw_contest *c = (dw_contest *)ctx;
    c->r->direct[c->vi] = way;
    if (conv_runner_run(c->b, c->r, (base_variant)c->vi, c->x, c->w, NULL, c->y, s, c->e)) {
        c->failed = 1;
        return 1;
    }
    return 0;
}

} /* namespace */

int conv_runner_tune(base_ctx *b, conv_runner *r, const float *x, const float *w, float *y,
                     cudaStream_t s, kbv_err *e)
{
    if (!conv_is_depthwise2d(&r->g) || !x || !w || !y) return 0;
    int rc = 0;
    r->tuning = 1;
    for (int v = 0; v < 2 && !rc; v++) {
        if (r->pinned[v]) continue;   /* a pin chose, direct or not */
        /* cuDNN's own choice first (its re-timing), outside the contest */
        r->direct[v] = 0;
        rc = conv_runner_run(b, r, (base_variant)v, x, w, NULL, y, s, e);
        if (rc) break;
        dw_contest ctx = { b, r, v, x, w, y, 0, e };
        float med[2];
        rc = base_contest(b, 2, dw_contestant, &ctx, s, CONV_TUNE_BUDGET_MS, med, e);
        if (!rc && ctx.failed) rc = KBV_ERUNTIME;   /* e says why */
        r->direct[v] = !rc && base_contest_winner(med, 2) == 1;
    }
    r->tuning = 0;
    return rc;
}

namespace {

/* Whether the variant's graph plan can run on these buffers: there is
 * one, and they have the alignment it was built for. */
int graph_runs(const conv_runner *r, int vi, const float *x, const float *w, const float *y)
{
    return r->plan[vi] >= 0 && r->graph[vi] && conv_graph_fits(r->graph[vi], x, w, y);
}

/* The cuDNN calls of one convolution with the variant's current choice,
 * or with the legacy algorithm *force where given (the reference's):
 * one per chunk of r->batch samples (one call unless the batch had to be
 * split; see conv_runner_create).  A graph plan runs when the buffers
 * allow it, the legacy algorithm (the plan's fallback) otherwise; the
 * bias is added after either. */
cudnnStatus_t dnn_run(base_ctx *b, conv_runner *r, int vi, const float *x, const float *w,
                      const float *bias, float *y, cudaStream_t s, const conv_cand *force = NULL)
{
    const dnn_api &A = r->api;
    const float one = 1.0f, zero = 0.0f;
    const int plan = !force && graph_runs(r, vi, x, w, y) ? r->plan[vi] : -1;
    const conv_cand &lc = force ? *force : r->legacy[vi];
    cudnnStatus_t st = A.cudnnSetStream(r->h, s);
    for (long long n0 = 0; st == CUDNN_STATUS_SUCCESS && n0 < r->g.n; n0 += r->batch) {
        const float *xc = x + n0 * r->x_per;
        float *yc = y + n0 * r->y_per;
        if (plan >= 0)
            st = (cudnnStatus_t)conv_graph_exec(r->graph[vi], plan, xc, w, yc, b->ws);
        else if (!r->g.transposed)
            st = A.cudnnConvolutionForward(r->h, &one, r->xd, xc, r->wd, w, r->cd[vi],
                                           (cudnnConvolutionFwdAlgo_t)lc.algo, b->ws, lc.ws, &zero,
                                           r->yd, yc);
        else
            st = A.cudnnConvolutionBackwardData(r->h, &one, r->wd, w, r->xd, xc, r->cd[vi],
                                                (cudnnConvolutionBwdDataAlgo_t)lc.algo, b->ws, lc.ws,
                                                &zero, r->yd, yc);
        if (st == CUDNN_STATUS_SUCCESS && bias)
            st = A.cudnnAddTensor(r->h, &one, r->bd, bias, &one, r->yd, yc);
    }
    return st;
}

/* Shrinks the context's workspace to what the variants need now: the
 * chosen algorithm's for a re-timed variant, the largest candidate's for
 * one still to be timed.  The baseline's measured peak memory is then that
 * of the algorithms it runs, not of those it tried.  Only while the
 * workspace is the size this runner left it: another user may have grown
 * it since, and then it stays.
 *
 * The shrink cannot see the runners created after this one whose needs the
 * workspace covered without growing (a network's later convolutions, whose
 * workspace is often smaller than its first ones'): it may leave less than
 * they need.  So every run and every re-timing asks for its own workspace
 * again first (base_need_ws), which regrows it where a shrink took too much;
 * without that, cuDNN was handed a workspace shorter than the size it was
 * told and wrote past its end (cudaErrorIllegalAddress in MobileNetV1 and
 * V2 and EfficientNet-B2, whose depthwise runners are tuned, and so
 * shrink, before their later convolutions ever run). */
int fit_ws(base_ctx *b, conv_runner *r, kbv_err *e)
{
    if (b->ws_bytes != r->ws_asked) return 0;
    size_t need = r->ws_floor > r->exact.ws ? r->ws_floor : r->exact.ws;
    for (int v = 0; v < 2; v++) {
        size_t vneed = r->ws[v];
        if (!r->timed[v])
            for (int i = 0; i < r->n_cand[v]; i++)
                if (r->cand[v][i].ws > vneed) vneed = r->cand[v][i].ws;
        if (vneed > need) need = vneed;
    }
    int rc = base_shrink_ws(b, need, e);
    r->ws_asked = b->ws_bytes;
    return rc;
}

/* The name of candidate c of variant vi, for the debug line. */
void cand_name(const conv_runner *r, int vi, const conv_cand &c, char *buf, size_t len)
{
    if (c.plan >= 0) conv_graph_describe(r->graph[vi], c.plan, buf, len);
    else snprintf(buf, len, "legacy algo %d (math %d)", c.algo, (int)c.math);
}

/* With KBV_CONV_DEBUG=1: one line per re-timed variant on stderr, with
 * each candidate's median (or why it has none), the choice and the state
 * of the graph path. */
void debug_line(const base_ctx *b, const conv_runner *r, int vi, const float *med, int chosen)
{
    if (!r->debug) return;
    char line[2048], nm[96];
    size_t at = 0;
    at += (size_t)snprintf(line + at, sizeof line - at, "kbv conv %s %s:", b->p->id,
                           vi == BASE_TF32 ? "tf32" : "fp32");
    for (int i = 0; i < r->n_cand[vi] && at < sizeof line; i++) {
        cand_name(r, vi, r->cand[vi][i], nm, sizeof nm);
        if (med[i] >= 0.0f)
            at += (size_t)snprintf(line + at, sizeof line - at, " [%s: %.4f ms, ws %zu]", nm, (double)med[i],
                                   r->cand[vi][i].ws);
        else
            at += (size_t)snprintf(line + at, sizeof line - at, " [%s: untimed or failed, ws %zu]", nm,
                                   r->cand[vi][i].ws);
    }
    if (at < sizeof line) {
        cand_name(r, vi, r->cand[vi][chosen], nm, sizeof nm);
        at += (size_t)snprintf(line + at, sizeof line - at, "; chose %s", nm);
    }
    if (at < sizeof line && r->plan[vi] >= 0) {
        cand_name(r, vi, r->legacy[vi], nm, sizeof nm);
        at += (size_t)snprintf(line + at, sizeof line - at, " (fallback %s)", nm);
    }
    if (at < sizeof line)
        snprintf(line + at, sizeof line - at, "; graph: %s", r->graph_why[vi]);
    fprintf(stderr, "%s\n", line);
}

/* The candidates of a variant for base_contest. */
struct retime_contest {
    base_ctx *b;
    conv_runner *r;
    int vi;
    const float *x, *w;
    float *y;
};

int retime_contestant(void *ctx, int i, cudaStream_t s)
{
    const retime_contest *c = (const retime_contest *)ctx;
    if (conv_use_cand(c->r, c->vi, i) != CUDNN_STATUS_SUCCESS) return 1;
    if (c->r->plan[c->vi] >= 0 && !graph_runs(c->r, c->vi, c->x, c->w, c->y)) return 1;
    return dnn_run(c->b, c->r, c->vi, c->x, c->w, NULL, c->y, s) != CUDNN_STATUS_SUCCESS;
}

/* Re-times the variant's candidates on the caller's buffers (see the
 * header comment) and keeps the fastest; y is overwritten.  Synchronises
 * s.  Only a CUDA error is an error: a candidate that fails is skipped (a
 * graph plan also when the buffers lack its alignment), and without
 * events the search's first stays.  When a graph plan wins, the legacy
 * algorithm left in place is its fallback: the fastest timed legacy
 * candidate whose workspace the plan's covers, else the legacy candidate
 * of least workspace (the variant's workspace then covers both). */
int retime(base_ctx *b, conv_runner *r, int vi, const float *x, const float *w, float *y,
           cudaStream_t s, kbv_err *e)
{
    r->timed[vi] = 1;
    float med[CONV_ALL];
    for (int i = 0; i < CONV_ALL; i++) med[i] = -1.0f;
    if (r->n_cand[vi] < 2) {
        debug_line(b, r, vi, med, 0);
        return 0;
    }
    /* every candidate's workspace, which an earlier runner's fit_ws may
     * have taken back */
    int rc = need_cand_ws(b, r, vi, e);
    if (rc) return rc;
    retime_contest ctx = { b, r, vi, x, w, y };
    rc = base_contest(b, r->n_cand[vi], retime_contestant, &ctx, s, CONV_TUNE_BUDGET_MS, med, e);
    if (rc) return rc;
    int best = base_contest_winner(med, r->n_cand[vi]);
    int chosen = best >= 0 ? best : 0;
    if (r->cand[vi][chosen].plan >= 0) {
        size_t pws = r->cand[vi][chosen].ws;
        int fb = -1;
        for (int i = 0; i < r->n_cand[vi]; i++) {
            const conv_cand &c = r->cand[vi][i];
            if (c.plan < 0 && med[i] >= 0.0f && c.ws <= pws && (fb < 0 || med[i] < med[fb])) fb = i;
        }
        if (fb < 0)
            for (int i = 0; i < r->n_cand[vi]; i++) {
                const conv_cand &c = r->cand[vi][i];
                if (c.plan < 0 && (fb < 0 || c.ws < r->cand[vi][fb].ws)) fb = i;
            }
        if (fb >= 0 && conv_use_cand(r, vi, fb) != CUDNN_STATUS_SUCCESS)
            return err_set(e, KBV_ERUNTIME, "baseline %s: cudnnSetConvolutionMathType failed", b->p->id);
    }
    if (conv_use_cand(r, vi, chosen) != CUDNN_STATUS_SUCCESS)
        return err_set(e, KBV_ERUNTIME, "baseline %s: cudnnSetConvolutionMathType failed", b->p->id);
    if (r->plan[vi] >= 0 && r->legacy[vi].ws > r->ws[vi]) r->ws[vi] = r->legacy[vi].ws;
    debug_line(b, r, vi, med, chosen);
    return fit_ws(b, r, e);
}

/* Names the variant's kernel in the base's choice text, once, after the
 * first run that follows every timing (not while conv_runner_tune is
 * still comparing). */
void note_choice(base_ctx *b, conv_runner *r, int vi, const float *x, const float *w,
                 const float *y)
{
    if (r->noted[vi] || r->tuning) return;
    r->noted[vi] = 1;
    conv_note_pins(b, r, vi);
    if (r->direct[vi]) {
        base_note_choice(b, (base_variant)vi, "conv: kbv direct depthwise kernel%s",
                         r->pinned[vi] ? " (pinned)" : "");
        return;
    }
    char nm[96];
    if (graph_runs(r, vi, x, w, y)) conv_graph_describe(r->graph[vi], r->plan[vi], nm, sizeof nm);
    else snprintf(nm, sizeof nm, "legacy %s algo %d (math %d)",
                  r->g.transposed ? "backward-data" : "forward", r->legacy[vi].algo,
                  (int)r->legacy[vi].math);
    const char *pin = r->pinned[vi] ? " (pinned)" : "";
    if (vi == BASE_FP32 && r->exact.algo != r->legacy[vi].algo)
        base_note_choice(b, (base_variant)vi, "conv: cuDNN %s%s (reference: algo %d)", nm, pin, r->exact.algo);
    else base_note_choice(b, (base_variant)vi, "conv: cuDNN %s%s", nm, pin);
}

} /* namespace */

int conv_runner_run(base_ctx *b, conv_runner *r, base_variant v, const float *x, const float *w,
                    const float *bias, float *y, cudaStream_t s, kbv_err *e)
{
    int vi = v == BASE_TF32 ? 1 : 0;
    if (r->direct[vi]) {
        run_direct(b, r, x, w, bias, y, s);
        cudaError_t ce = cudaGetLastError();
        if (ce != cudaSuccess) return base_cuda_err(e, b, "depthwise launch", ce);
        note_choice(b, r, vi, x, w, y);
        return 0;
    }
    if (vi == BASE_FP32 && b->reference) {
        /* the correctness reference: the exact algorithm, whatever the
         * timed fp32 baseline chose (conv_algo_exact) */
        int wrc = base_need_ws(b, r->exact.ws, e);
        if (wrc) return wrc;
        cudnnStatus_t st = dnn_run(b, r, vi, x, w, bias, y, s, &r->exact);
        return st == CUDNN_STATUS_SUCCESS ? 0 : conv_dnn_err(r, b, "convolution (reference)", st, e);
    }
    if (!r->timed[vi]) {
        int rc = retime(b, r, vi, x, w, y, s, e);
        if (rc) return rc;
    }
    /* the variant's workspace, which another runner's fit_ws may have taken
     * back (a no-op once every runner has run: the workspace then only
     * grows) */
    int wrc = base_need_ws(b, r->ws[vi], e);
    if (wrc) return wrc;
    cudnnStatus_t st = dnn_run(b, r, vi, x, w, bias, y, s);
    if (st != CUDNN_STATUS_SUCCESS) return conv_dnn_err(r, b, "convolution", st, e);
    note_choice(b, r, vi, x, w, y);
    return 0;
}


void conv_runner_destroy(conv_runner *r)
{
    if (!r) return;
    const dnn_api &A = r->api;
    if (A.lib) {
        /* the graph's descriptors first: its functions come from the
         * library, and its plans were made on the handle */
        for (int v = 0; v < 2; v++) {
            conv_graph_destroy(r->graph[v]);
            r->graph[v] = NULL;
        }
        conv_graph_destroy(r->graph16);
        r->graph16 = NULL;
        for (int v = 0; v < 2; v++)
            if (r->cd[v]) A.cudnnDestroyConvolutionDescriptor(r->cd[v]);
        if (r->cd16) A.cudnnDestroyConvolutionDescriptor(r->cd16);
        if (r->wd16) A.cudnnDestroyFilterDescriptor(r->wd16);
        if (r->yd16) A.cudnnDestroyTensorDescriptor(r->yd16);
        if (r->xd16) A.cudnnDestroyTensorDescriptor(r->xd16);
        if (r->wd) A.cudnnDestroyFilterDescriptor(r->wd);
        if (r->bd) A.cudnnDestroyTensorDescriptor(r->bd);
        if (r->yd) A.cudnnDestroyTensorDescriptor(r->yd);
        if (r->xd) A.cudnnDestroyTensorDescriptor(r->xd);
        if (r->h) A.cudnnDestroy(r->h);
        dlclose(A.lib);
    }
    free(r);
}

namespace {

/* The level-1 convolution problems: one runner, or two for the
 * depthwise-separable one (depthwise into an intermediate buffer, then
 * pointwise). */
struct conv_state {
    conv_runner *r1, *r2;
    float *mid;
};

int create(base_ctx *b, const kbv_call *ex, kbv_err *e)
{
    conv_state *cs = (conv_state *)calloc(1, sizeof *cs);
    if (!cs) return err_set(e, KBV_ENOMEM, "baseline %s: out of memory", b->p->id);
    b->state = cs;
    int op = b->p->op;
    const kbv_tensor *x = &ex->inputs[0], *w = &ex->inputs[1], *y = &ex->outputs[0];
    conv_geom g;
    int rc;
    if (op == OP_CONV_DWSEP) {
        /* depthwise: x -> mid with x's channels and y's spatial extent */
        kbv_tensor mid = *y;
        mid.shape[1] = x->shape[1];
        rc = conv_geom_from(b->p, x, w, &mid, 0, &g, e);
        if (rc) return rc;
        rc = conv_runner_create(b, &g, &cs->r1, e);
        if (rc) return rc;
        cudaError_t ce = cudaMalloc(&cs->mid, (size_t)kbv_numel(&mid) * sizeof(float));
        if (ce != cudaSuccess) {
            cs->mid = NULL;
            return base_cuda_err(e, b, "intermediate buffer", ce);
        }
        rc = conv_runner_tune(b, cs->r1, (const float *)x->data, (const float *)w->data, cs->mid,
                              ex->stream, e);
        if (rc) return rc;
        conv_geom g2;
        memset(&g2, 0, sizeof g2);
        g2.nd = 2;
        g2.n = mid.shape[0];
        g2.cin = mid.shape[1];
        g2.cout = y->shape[1];
        g2.groups = 1;
        for (int i = 0; i < 2; i++) {
            g2.in[i] = g2.out[i] = y->shape[2 + i];
            g2.k[i] = 1; g2.s[i] = 1; g2.p[i] = 0; g2.d[i] = 1;
        }
        return conv_runner_create(b, &g2, &cs->r2, e);
    }
    rc = conv_geom_from(b->p, x, w, y, op == OP_CONV_T, &g, e);
    if (rc) return rc;
    rc = conv_runner_create(b, &g, &cs->r1, e);
    if (rc) return rc;
    return conv_runner_tune(b, cs->r1, (const float *)x->data, (const float *)w->data,
                            (float *)y->data, ex->stream, e);
}

int run(base_ctx *b, base_variant v, const kbv_call *c, kbv_err *e)
{
    conv_state *cs = (conv_state *)b->state;
    const float *x = (const float *)c->inputs[0].data;
    const float *w = (const float *)c->inputs[1].data;
    float *y = (float *)c->outputs[0].data;
    if (b->p->op == OP_CONV_DWSEP) {
        int rc = conv_runner_run(b, cs->r1, v, x, w, NULL, cs->mid, c->stream, e);
        if (rc) return rc;
        return conv_runner_run(b, cs->r2, v, cs->mid, (const float *)c->inputs[2].data, NULL, y,
                               c->stream, e);
    }
    /* a bias is the third input when the module has one */
    const float *bias = c->n_inputs > 2 ? (const float *)c->inputs[2].data : NULL;
    return conv_runner_run(b, cs->r1, v, x, w, bias, y, c->stream, e);
}

/* bf16: the same convolutions on the bfloat16 tensors (conv_runner_run_bf16);
 * the depthwise-separable one keeps its intermediate in bfloat16 (in the
 * float intermediate's buffer, which has room), as PyTorch does. */
int run_bf16(base_ctx *b, const kbv_call *c, kbv_err *e)
{
    conv_state *cs = (conv_state *)b->state;
    if (!b->choice[BASE_BF16][0])
        base_note_choice(b, BASE_BF16, "native bf16: cuDNN on the bf16 tensors, fp32 compute");
    const void *x = c->inputs[0].data, *w = c->inputs[1].data;
    void *y = c->outputs[0].data;
    if (b->p->op == OP_CONV_DWSEP) {
        int rc = conv_runner_run_bf16(b, cs->r1, x, w, NULL, cs->mid, c->stream, e);
        if (rc) return rc;
        return conv_runner_run_bf16(b, cs->r2, cs->mid, c->inputs[2].data, NULL, y, c->stream, e);
    }
    const void *bias = c->n_inputs > 2 ? c->inputs[2].data : NULL;
    return conv_runner_run_bf16(b, cs->r1, x, w, bias, y, c->stream, e);
}

void destroy(base_ctx *b)
{
    conv_state *cs = (conv_state *)b->state;
    if (!cs) return;
    conv_runner_destroy(cs->r1);
    conv_runner_destroy(cs->r2);
    if (cs->mid) cudaFree(cs->mid);
    free(cs);
    b->state = NULL;
}

int available(const suite_problem *p, const char **why)
{
    return suite_host_available(p, why);
}

} /* namespace */

const base_family base_fam_conv = {
    "conv", OP_CONV, OP_CONV_LAST, create, run, destroy, available, run_bf16,
};
