/* conv_impl.h - what conv.cu (the convolution runner) shares with
 * conv_bf16.cu (its bf16 path): cuDNN's function table, the runner's state
 * and two helpers.  C++ only, private to collect/baselines/problems/.  The
 * runner owns every descriptor and plan in it; conv_runner_destroy
 * (conv.cu) frees them.
 */
#ifndef KBV_CONV_IMPL_H
#define KBV_CONV_IMPL_H

#include <cudnn.h>

#include "base_impl.h"
#include "dnn_lib.h"

/* cuDNN's functions, resolved from the library dlopen'ed per runner. */
#define CONV_DNN_FNS(X) \
    DNN_CORE_FNS(X) \
    X(cudnnCreateFilterDescriptor) \
    X(cudnnSetFilterNdDescriptor) \
    X(cudnnDestroyFilterDescriptor) \
    X(cudnnCreateConvolutionDescriptor) \
    X(cudnnSetConvolutionNdDescriptor) \
    X(cudnnSetConvolutionGroupCount) \
    X(cudnnSetConvolutionMathType) \
    X(cudnnDestroyConvolutionDescriptor) \
    X(cudnnFindConvolutionForwardAlgorithm) \
    X(cudnnGetConvolutionForwardWorkspaceSize) \
    X(cudnnGetConvolutionBackwardDataWorkspaceSize) \
    X(cudnnConvolutionForward) \
    X(cudnnFindConvolutionBackwardDataAlgorithm) \
    X(cudnnConvolutionBackwardData) \
    X(cudnnAddTensor)

struct dnn_api {
    void *lib;
    CONV_DNN_FNS(DNN_FN)
};

/* Algorithms a runner keeps from the search and re-times, per variant, and
 * the time that re-timing may take (soft: two are always timed). */
const int CONV_CANDS = 4;
const float CONV_TUNE_BUDGET_MS = 200.0f;

/* Candidates of a variant in all: the legacy ones and the graph plans. */
const int CONV_ALL = CONV_CANDS + CONV_GRAPH_PLANS;

struct conv_cand {
    int plan;                 /* graph plan index, or -1 for a legacy algorithm */
    int algo;                 /* cudnnConvolutionFwdAlgo_t or BwdDataAlgo_t (legacy) */
    cudnnMathType_t math;     /* legacy */
    size_t ws;
};

struct conv_runner {
    dnn_api api;
    cudnnHandle_t h;
    conv_geom g;
    cudnnTensorDescriptor_t xd, yd, bd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd[2];   /* per variant */
    conv_cand legacy[2];                  /* per variant: the legacy algorithm in use, or the
                                             fallback of a graph plan */
    int plan[2];                          /* per variant: the graph plan in use, or -1 */
    size_t ws[2];                         /* per variant: the workspace its choice needs */
    int direct[2];                        /* per variant: the direct depthwise kernel instead */
    conv_cand exact;                      /* the correctness reference's algorithm: the fp32
                                             search's first exact one (conv_algo_exact) */
    conv_cand cand[2][CONV_ALL];          /* per variant: the search's first successful results,
                                             interleaved with the graph plans */
    int n_cand[2];
    conv_graph *graph[2];                 /* per variant: its graph plans (fp32: engines without
                                             tensor cores), or NULL */
    char graph_why[2][256];               /* per variant: why there is no graph, for KBV_CONV_DEBUG */
    int debug;                            /* KBV_CONV_DEBUG=1 */
    int timed[2];                         /* per variant: the candidates were re-timed */
    int pinned[2];                        /* per variant: the choice came from a pin (no search,
                                             no re-timing, no depthwise contest) */
    int noted[2];                         /* per variant: the choice is in the base's text */
    int tuning;                           /* conv_runner_tune is timing: nothing noted yet */
    size_t ws_floor;                      /* the context's workspace before this runner's */
    size_t ws_asked;                      /* the workspace size this runner last left */
    long long batch;                      /* samples per cuDNN call (divides g.n) */
    long long x_per, y_per;               /* elements of one sample of x and of y */
    /* The bf16 baseline (conv_runner_run_bf16): the same shapes with
     * bfloat16 tensors and float compute, made at create; cuDNN's search
     * and the re-timing of its first results happen at the first bf16 run
     * (a worker of the FP32 setting never pays for them). */
    cudnnTensorDescriptor_t xd16, yd16;
    cudnnFilterDescriptor_t wd16;
    cudnnConvolutionDescriptor_t cd16;
    conv_graph_shape gs16;                /* the graph path's shapes, bfloat16 */
    conv_graph *graph16;                  /* its plans, or NULL */
    conv_cand cand16[CONV_ALL];           /* legacy results interleaved with graph plans */
    int n_cand16;
    int ready16;                          /* searched and timed: use16 is the choice */
    int noted16;
    conv_cand use16;
    conv_cand legacy16;                   /* the legacy algorithm in place (a plan's fallback) */
    int has_pin16;                        /* base_create's text had a bf16 pin for this shape */
    int pinned16;                         /* use16 came from it, not from the search */
    convpin_choice pin16;
};

/* Makes candidate i of variant v the variant's choice (conv.cu).  A
 * legacy candidate becomes the legacy algorithm (tf32 takes the math type
 * the search used, fp32 stays FMA-only whatever the search reports); a
 * graph plan leaves the legacy algorithm in place as its fallback. */
cudnnStatus_t conv_use_cand(conv_runner *r, int v, int i);
/* Whether g is a depthwise 2D convolution, which kbv's direct kernel may
 * run (conv.cu). */
int conv_is_depthwise2d(const conv_geom *g);

/* Variant v's pin among b->pin_text (convpin.h), applied at create: its
 * choice in place, marked timed and pinned, so that neither the search
 * nor the re-timing runs.  1 when applied, 0 when there is none or it no
 * longer applies (cuDNN refuses the algorithm, the graph plan is gone or
 * has another engine): the search then runs as without pins.  Negative
 * for a malformed pin (conv_pin.cu). */
int conv_apply_pin(base_ctx *b, conv_runner *r, int v, const conv_graph_shape *gs, kbv_err *e);
/* The reference's pin: 1 when it names an exact algorithm that cuDNN
 * accepts (then in r->exact), 0 otherwise (the search finds one),
 * negative for a malformed pin (conv_pin.cu). */
int conv_apply_ref_pin(base_ctx *b, conv_runner *r, kbv_err *e);
/* Variant vi's choice as a pin in b's pins text, and for fp32 also the
 * reference's algorithm (conv_pin.cu). */
void conv_note_pins(base_ctx *b, const conv_runner *r, int vi);
/* The bf16 pin for r's shape among b->pin_text, kept in r (has_pin16,
 * pin16) for the bf16 path's first run, which chooses after create: 0, or
 * negative for a malformed pin (conv_pin.cu). */
int conv_find_pin16(base_ctx *b, conv_runner *r, kbv_err *e);
/* Applies the kept bf16 pin at the bf16 path's first run: use16 and
 * legacy16 set, the workspace grown, pinned16 and ready16 set; 1 when
 * applied, 0 when there is none, cuDNN refuses it or its workspace cannot
 * be had (the search then runs) (conv_pin.cu). */
int conv_apply_pin16(base_ctx *b, conv_runner *r);
/* The bf16 choice as a pin (role b) in b's bf16 pins text (conv_pin.cu). */
void conv_note_pin16(base_ctx *b, const conv_runner *r);

/* The message of a failed cuDNN call of runner r. */
int conv_dnn_err(const conv_runner *r, const base_ctx *b, const char *what, cudnnStatus_t st, kbv_err *e);

/* Whether an algorithm sums the products directly (implicit or explicit
 * GEMM, direct), not through an FFT or Winograd transform.  The transforms
 * trade accuracy for speed: on the H200 the Inception module's 5x5 branch
 * through WINOGRAD_NONFUSED differed from PyTorch's and from a direct loop
 * by up to 3.4e-3, failing 821 outputs of an exact candidate at 1e-3 +
 * 1e-3 |ref|.  So the correctness reference (base_run_reference) runs an
 * exact algorithm, while the timed fp32 baseline may run any FMA-math
 * one, as PyTorch's strict-FP32 mode may: restricted to exact algorithms
 * it ran the transposed convolutions L1_065 and L1_069 1.8x and 4.4x
 * slower than PyTorch (H200, e8efded). */
inline bool conv_algo_exact(cudnnConvolutionFwdAlgo_t a)
{
    return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
           a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}

inline bool conv_algo_exact(cudnnConvolutionBwdDataAlgo_t a)
{
    return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 || a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
}

/* Whether a search result may serve variant v (fp32: FMA or default math
 * only, so no tensor cores; exact: also only conv_algo_exact). */
template <class Perf>
inline bool cand_fits(const Perf &perf, int v, bool exact)
{
    if (perf.status != CUDNN_STATUS_SUCCESS) return false;
    if (v == BASE_TF32) return true;
    return (perf.mathType == CUDNN_FMA_MATH || perf.mathType == CUDNN_DEFAULT_MATH) &&
           (!exact || conv_algo_exact(perf.algo));
}

template <class Perf>
inline conv_cand cand_of(const Perf &perf)
{
    conv_cand c;
    c.plan = -1;
    c.algo = (int)perf.algo;
    c.math = perf.mathType;
    c.ws = perf.memory;
    return c;
}

/* The first CONV_CANDS successful results of a search, in its order, that
 * variant v may use (cand_fits). */
template <class Perf>
inline int take_cands(const Perf *perf, int got, int v, conv_cand *out)
{
    int n = 0;
    for (int i = 0; i < got && n < CONV_CANDS; i++)
        if (cand_fits(perf[i], v, false)) out[n++] = cand_of(perf[i]);
    return n;
}

/* The fp32 search's first exact result, the reference's algorithm, in
 * *out: 1, or 0 when the search has none. */
template <class Perf>
inline int take_exact(const Perf *perf, int got, conv_cand *out)
{
    for (int i = 0; i < got; i++)
        if (cand_fits(perf[i], BASE_FP32, true)) {
            *out = cand_of(perf[i]);
            return 1;
        }
    return 0;
}

/* The bf16 descriptors of r (conv_bf16.cu): the same packed dims as the
 * float ones, bfloat16 tensors, a float convolution.  0 or a cuDNN error
 * (conv_dnn_err's message is the caller's to make). */
cudnnStatus_t conv16_describe(conv_runner *r, int rank, const int *xdims, const int *xstr, const int *ydims,
                              const int *ystr, const int *wdims, int nconv, const int *pad, const int *str,
                              const int *dil);

#endif
