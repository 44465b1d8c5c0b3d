/* chain.h - level-2 problems as data: a producer (a linear layer, a matrix
 * product or a convolution) followed by fused elementwise steps, an
 * optional middle stage (a normalisation, a reduction over dim 1, a
 * softmax or a global average pool) and more elementwise steps.  Pure C:
 * the spec tables (l2_chain.c) and the CUDA interpreter (chain.cu) share
 * it.  Every problem whose op lies in a chain range has one spec.
 *
 * The tensor after the producer is seen as [N, C, S] (S = 1 after a linear
 * layer: C is then the feature dimension).
 */
#ifndef KBV_CHAIN_H
#define KBV_CHAIN_H

#include "suite.h"

enum chain_producer {
    CHAIN_LINEAR = 1,   /* y = x W^T (+ b): inputs x, weight [out, in], bias when has_bias */
    CHAIN_CONV,         /* cuDNN convolution (+ bias), weight [Cout, Cin/g, k...] */
    CHAIN_CONV_T        /* cuDNN transposed convolution (+ bias) */
};

enum chain_ew_kind {
    EW_END = 0,
    EW_ADD_C, EW_SUB_C, EW_MUL_C, EW_DIV_C,   /* with the constant a */
    EW_ADD_P, EW_SUB_P, EW_MUL_P, EW_MIN_P,   /* with input p: per channel, or a scalar */
    EW_RELU, EW_LEAKY,                        /* leaky: slope a */
    EW_GELU, EW_SIGMOID, EW_TANH, EW_SWISH, EW_MISH, EW_HARDSWISH,
    EW_CLAMP,                                 /* [a, b] (hardtanh too) */
    EW_SAVE,                                  /* remember the current value */
    EW_ADD_SAVED                              /* add the remembered value */
};

typedef struct {
    int kind;
    double a, b;
    int p;              /* input index of a parameter, for the _P kinds */
} chain_ew;

enum chain_mid {
    MID_NONE = 0,
    MID_BATCHNORM,      /* training statistics per channel over N and S; gamma, beta inputs */
    MID_GROUPNORM,      /* groups; gamma, beta inputs */
    MID_INSTANCENORM,   /* per (n, c) over S, no affine */
    MID_SUM_C, MID_MEAN_C, MID_MIN_C, MID_MAX_C, MID_LSE_C,   /* over dim 1, keepdim */
    MID_SOFTMAX_C,      /* softmax over dim 1 */
    MID_GAP             /* mean over S: [N, C, S] -> [N, C] */
};

#define CHAIN_MAX_EW 8

typedef struct {
    int op;                      /* the problem's op code */
    int producer;
    int has_bias;                /* the producer's own bias is input 2 */
    int transposed;              /* for CHAIN_CONV_T */
    chain_ew ew1[CHAIN_MAX_EW];  /* EW_END-terminated */
    int mid;
    int groups;                  /* MID_GROUPNORM */
    double eps;                  /* norms */
    int gamma, beta;             /* input indices of the norm's affine parameters, or -1 */
    chain_ew ew2[CHAIN_MAX_EW];
} chain_spec;

/* The spec of a chain op, or NULL. */
const chain_spec *suite_chain(int op);

#endif
