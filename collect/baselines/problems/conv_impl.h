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
    conv_cand cand[2][CONV_ALL];          /* per variant: the search's first successful results,
                                             interleaved with the graph plans (tf32) */
    int n_cand[2];
    conv_graph *graph;                    /* the tf32 variant's graph plans, or NULL */
    char graph_why[256];                  /* why there is no graph, for KBV_CONV_DEBUG */
    int debug;                            /* KBV_CONV_DEBUG=1 */
    int timed[2];                         /* per variant: the candidates were re-timed */
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
};

/* The message of a failed cuDNN call of runner r. */
int conv_dnn_err(const conv_runner *r, const base_ctx *b, const char *what, cudnnStatus_t st, kbv_err *e);

/* Whether an algorithm sums the products directly (implicit or explicit
 * GEMM, direct), not through an FFT or Winograd transform.  The strict
 * fp32 baseline is also the correctness reference of every check, and the
 * transforms trade accuracy for speed: on the H200 the Inception module's
 * 5x5 branch through WINOGRAD_NONFUSED differed from PyTorch's and from a
 * direct loop by up to 3.4e-3, failing 821 outputs of an exact candidate
 * at 1e-3 + 1e-3 |ref|. */
inline bool conv_algo_exact(cudnnConvolutionFwdAlgo_t a)
{
    return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
           a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}

inline bool conv_algo_exact(cudnnConvolutionBwdDataAlgo_t a)
{
    return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 || a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
}

/* The first CONV_CANDS successful results of a search, in its order, that
 * the variant may use (fp32: FMA or default math only, and only the exact
 * algorithms, conv_algo_exact). */
template <class Perf>
inline int take_cands(const Perf *perf, int got, int v, conv_cand *out)
{
    int n = 0;
    for (int i = 0; i < got && n < CONV_CANDS; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS &&
            (v == BASE_TF32 || ((perf[i].mathType == CUDNN_FMA_MATH || perf[i].mathType == CUDNN_DEFAULT_MATH) &&
                                conv_algo_exact(perf[i].algo)))) {
            out[n].plan = -1;
            out[n].algo = (int)perf[i].algo;
            out[n].math = perf[i].mathType;
            out[n].ws = perf[i].memory;
            n++;
        }
    return n;
}

/* The bf16 descriptors of r (conv_bf16.cu): the same packed dims as the
 * float ones, bfloat16 tensors, a float convolution.  0 or a cuDNN error
 * (conv_dnn_err's message is the caller's to make). */
cudnnStatus_t conv16_describe(conv_runner *r, int rank, const int *xdims, const int *xstr, const int *ydims,
                              const int *ystr, const int *wdims, int nconv, const int *pad, const int *str,
                              const int *dil);

#endif
