/* conv_pin.cu - the convolution runner's pins (collect/suite/convpin.h):
 * a choice of an earlier run applied at create instead of cuDNN's search
 * and the re-timing, and each choice written back as a pin after the
 * first run that follows its timing.  Part of conv.cu's runner; the state
 * is conv_runner's (conv_impl.h).
 */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdio.h>
#include <string.h>

#include "base_impl.h"
#include "conv_impl.h"

namespace {

/* The workspace of legacy algorithm c on the descriptors x, w, cd, y
 * (cd's math type set by the caller) in *ws; false when cuDNN refuses it. */
bool legacy_ws_on(conv_runner *r, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                  cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t y, const conv_cand &c, size_t *ws)
{
    const dnn_api &A = r->api;
    cudnnStatus_t st =
        !r->g.transposed
            ? A.cudnnGetConvolutionForwardWorkspaceSize(r->h, x, w, cd, y, (cudnnConvolutionFwdAlgo_t)c.algo, ws)
            : A.cudnnGetConvolutionBackwardDataWorkspaceSize(r->h, w, x, cd, y,
                                                             (cudnnConvolutionBwdDataAlgo_t)c.algo, ws);
    return st == CUDNN_STATUS_SUCCESS;
}

/* The same on variant v's (fp32 or tf32) descriptors. */
bool legacy_ws(conv_runner *r, int v, const conv_cand &c, size_t *ws)
{
    return legacy_ws_on(r, r->xd, r->wd, r->cd[v], r->yd, c, ws);
}

} /* namespace */

int conv_apply_pin(base_ctx *b, conv_runner *r, int v, const conv_graph_shape *gs, kbv_err *e)
{
    convpin_choice pc;
    int found = convpin_find(b->pin_text, v == BASE_TF32 ? 't' : 'f', &r->g, &pc);
    if (found < 0) return err_set(e, KBV_EINPUT, "baseline %s: a malformed convolution pin", b->p->id);
    if (!found) return 0;
    if (pc.kind == CONVPIN_DIRECT) {
        if (!conv_is_depthwise2d(&r->g)) return 0;
        r->direct[v] = 1;
        r->n_cand[v] = 0;
    } else {
        conv_cand lc = { -1, pc.algo, (cudnnMathType_t)pc.math, 0 };
        if (v == BASE_FP32 && lc.math != CUDNN_FMA_MATH && lc.math != CUDNN_DEFAULT_MATH) return 0;
        if (v == BASE_TF32 && r->api.cudnnSetConvolutionMathType(r->cd[v], lc.math) != CUDNN_STATUS_SUCCESS)
            return 0;
        if (!legacy_ws(r, v, lc, &lc.ws)) return 0;
        r->cand[v][0] = lc;
        r->n_cand[v] = 1;
        if (pc.kind == CONVPIN_GRAPH) {
            kbv_err ge;
            memset(&ge, 0, sizeof ge);
            conv_graph *cg = NULL;
            if (conv_graph_create(r->api.lib, r->h, gs, v == BASE_TF32, &cg, &ge) != 0 || !cg) return 0;
            if (pc.plan >= conv_graph_plans(cg) || conv_graph_engine(cg, pc.plan) != pc.engine) {
                conv_graph_destroy(cg);
                return 0;
            }
            r->graph[v] = cg;
            snprintf(r->graph_why[v], sizeof r->graph_why[v], "pinned plan %d", pc.plan);
            conv_cand &gc = r->cand[v][r->n_cand[v]++];
            gc.plan = pc.plan;
            gc.algo = 0;
            gc.math = CUDNN_DEFAULT_MATH;
            gc.ws = conv_graph_ws(cg, pc.plan);
        }
        /* the legacy algorithm first (a plan's fallback), then the plan */
        for (int i = 0; i < r->n_cand[v]; i++)
            if (conv_use_cand(r, v, i) != CUDNN_STATUS_SUCCESS) {
                conv_graph_destroy(r->graph[v]);   /* the search builds its own */
                r->graph[v] = NULL;
                r->plan[v] = -1;
                return 0;
            }
        if (r->plan[v] >= 0 && r->legacy[v].ws > r->ws[v]) r->ws[v] = r->legacy[v].ws;
    }
    r->timed[v] = 1;
    r->pinned[v] = 1;
    return 1;
}

int conv_apply_ref_pin(base_ctx *b, conv_runner *r, kbv_err *e)
{
    convpin_choice pc;
    int found = convpin_find(b->pin_text, 'r', &r->g, &pc);
    if (found < 0) return err_set(e, KBV_EINPUT, "baseline %s: a malformed convolution pin", b->p->id);
    if (!found || pc.kind != CONVPIN_LEGACY) return 0;
    bool exact = r->g.transposed ? conv_algo_exact((cudnnConvolutionBwdDataAlgo_t)pc.algo)
                                 : conv_algo_exact((cudnnConvolutionFwdAlgo_t)pc.algo);
    conv_cand lc = { -1, pc.algo, CUDNN_FMA_MATH, 0 };
    if (!exact || !legacy_ws(r, BASE_FP32, lc, &lc.ws)) return 0;
    r->exact = lc;
    return 1;
}

void conv_note_pins(base_ctx *b, const conv_runner *r, int vi)
{
    char pin[1024];
    convpin_choice c;
    memset(&c, 0, sizeof c);
    if (r->direct[vi]) {
        c.kind = CONVPIN_DIRECT;
    } else {
        c.kind = r->plan[vi] >= 0 && r->graph[vi] ? CONVPIN_GRAPH : CONVPIN_LEGACY;
        c.algo = r->legacy[vi].algo;
        c.math = (int)r->legacy[vi].math;
        c.plan = r->plan[vi];
        c.engine = conv_graph_engine(r->graph[vi], r->plan[vi]);
    }
    if (convpin_format(pin, sizeof pin, vi == BASE_TF32 ? 't' : 'f', &r->g, &c) > 0)
        base_append_pin(b, (base_variant)vi, pin);
    if (vi != BASE_FP32) return;
    memset(&c, 0, sizeof c);
    c.kind = CONVPIN_LEGACY;
    c.algo = r->exact.algo;
    c.math = (int)r->exact.math;
    if (convpin_format(pin, sizeof pin, 'r', &r->g, &c) > 0) base_append_pin(b, BASE_FP32, pin);
}

int conv_find_pin16(base_ctx *b, conv_runner *r, kbv_err *e)
{
    int found = convpin_find(b->pin_text, 'b', &r->g, &r->pin16);
    if (found < 0) return err_set(e, KBV_EINPUT, "baseline %s: a malformed bf16 convolution pin", b->p->id);
    r->has_pin16 = found == 1 && r->pin16.kind != CONVPIN_DIRECT;
    return 0;
}

int conv_apply_pin16(base_ctx *b, conv_runner *r)
{
    if (!r->has_pin16) return 0;
    const dnn_api &A = r->api;
    const convpin_choice &pc = r->pin16;
    conv_cand lc = { -1, pc.algo, (cudnnMathType_t)pc.math, 0 };
    if (A.cudnnSetConvolutionMathType(r->cd16, lc.math) != CUDNN_STATUS_SUCCESS ||
        !legacy_ws_on(r, r->xd16, r->wd16, r->cd16, r->yd16, lc, &lc.ws))
        return 0;
    conv_cand use = lc;
    if (pc.kind == CONVPIN_GRAPH) {
        kbv_err ge;
        memset(&ge, 0, sizeof ge);
        conv_graph *cg = NULL;
        if (conv_graph_create(A.lib, r->h, &r->gs16, 1, &cg, &ge) != 0 || !cg) return 0;
        if (pc.plan >= conv_graph_plans(cg) || conv_graph_engine(cg, pc.plan) != pc.engine) {
            conv_graph_destroy(cg);
            return 0;
        }
        r->graph16 = cg;
        use.plan = pc.plan;
        use.algo = 0;
        use.math = CUDNN_DEFAULT_MATH;
        use.ws = conv_graph_ws(cg, pc.plan);
    }
    /* a workspace that cannot be had leaves the choice to the search,
     * which can do with less */
    size_t most = use.ws > lc.ws ? use.ws : lc.ws;
    kbv_err scratch;
    memset(&scratch, 0, sizeof scratch);
    if (base_need_ws(b, most, &scratch) != 0) {
        cudaGetLastError();   /* an allocation failure is not sticky */
        conv_graph_destroy(r->graph16);
        r->graph16 = NULL;
        return 0;
    }
    r->cand16[0] = use;
    r->n_cand16 = 1;
    r->use16 = use;
    r->legacy16 = lc;
    r->ws_asked = b->ws_bytes;
    r->pinned16 = 1;
    r->ready16 = 1;
    return 1;
}

void conv_note_pin16(base_ctx *b, const conv_runner *r)
{
    char pin[1024];
    convpin_choice c;
    memset(&c, 0, sizeof c);
    c.kind = r->use16.plan >= 0 && r->graph16 ? CONVPIN_GRAPH : CONVPIN_LEGACY;
    c.algo = r->legacy16.algo;
    c.math = (int)r->legacy16.math;
    c.plan = r->use16.plan;
    c.engine = c.kind == CONVPIN_GRAPH ? conv_graph_engine(r->graph16, r->use16.plan) : 0;
    if (convpin_format(pin, sizeof pin, 'b', &r->g, &c) > 0) base_append_pin(b, BASE_BF16, pin);
}
