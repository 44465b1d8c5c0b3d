/* chain.h - level-2 problems as data: a producer (a linear layer, a matrix
 * product or a convolution) followed by fused elementwise steps, an
 * optional middle stage (a normalisation, a reduction over dim 1, a
 * softmax or a global average pool) and more elementwise steps.  Pure C:
 * the spec tables (l2_chain.c) and the CUDA interpreter (chain.cu) share
 * it.  Every problem whose op lies in a chain range has one spec.
 *
 * The tensor after the producer is seen as [N, C, S] (S = 1 after a linear
 * layer: C is then the feature dimension).
 *
 * After the second elementwise list, up to CHAIN_MAX_STAGES further stages
 * (chain_stage: pooling, reductions over channels, positions, one axis or
 * everything, a softmax, a group or layer norm, views) each take the
 * tensor of the stage before, with its spatial extents, and apply their
 * own elementwise list to every value they write.  chain_dims tracks the
 * shape through them (chain.c), for the interpreter and the tests alike.
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
    EW_ADD_SAVED,                             /* add the remembered value */
    EW_MUL_SAVED, EW_SUB_SAVED,               /* multiply by, subtract the remembered value */
    EW_MIN_C,                                 /* torch.min(x, a): NaN stays NaN */
    EW_ADD_T, EW_MUL_T                        /* with input p, a tensor of the current shape */
};
/* The remembered value starts as the value before the middle stage's
 * normalisation (after the producer's bias): x + f(norm(x)) needs it. */

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
#define CHAIN_MAX_STAGES 4

enum chain_stage_kind {
    ST_END = 0,
    ST_MAXPOOL, ST_AVGPOOL,       /* window k, stride s, padding p on every spatial axis;
                                     avg counts the padding (PyTorch's default) */
    ST_SUM_C, ST_MEAN_C, ST_MAX_C, ST_MIN_C, ST_LSE_C, /* over dim 1: C becomes 1 */
    ST_SOFTMAX_C,                 /* softmax over dim 1 */
    ST_SUM_S, ST_MEAN_S,          /* over the spatial positions: no spatial axes left */
    ST_SUM_ALL, ST_MEAN_ALL, ST_MAX_ALL, /* over C and the positions: [N, 1] */
    ST_SUM_AXIS, ST_MEAN_AXIS, ST_MIN_AXIS, /* over spatial axis `axis`, which goes (keepdim or not
                                                is only the output's shape) */
    ST_SOFTMAX_S,                 /* softmax over the positions of each (n, c) */
    ST_CENTER_S,                  /* x - its mean over the positions of each (n, c) */
    ST_GROUPNORM,                 /* groups `axis`; gamma, beta inputs */
    ST_LAYERNORM_LAST,            /* over the last axis; gamma, beta inputs of its length */
    ST_FLAT,                      /* view [N, C, S] as [N, 1, C S] (x.unsqueeze(1) of a linear output) */
    ST_OUTER_ADD_P,               /* [N] values + input p of C' values -> [C', N]: the broadcast
                                     of [N, 1] with [1, C', 1, 1] */
    ST_ADD_X0                     /* [N] values + the call's input 0 [N, F] -> [N, F] */
};

typedef struct {
    int kind;
    int k, s, pad;                /* pooling */
    int axis;                     /* ST_*_AXIS (0 = first spatial axis); groups of ST_GROUPNORM */
    int gamma, beta;              /* norms: input indices, or -1 */
    int p;                        /* ST_OUTER_ADD_P */
    double eps;
    chain_ew ew[CHAIN_MAX_EW];    /* applied to every value the stage writes */
} chain_stage;

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
    int w_in;                    /* input index of the producer's weight; 0 means 1 (bias after it) */
    int w2;                      /* linear: input index of a second layer's weight (its bias after it),
                                    applied after ew1; 0: none */
    int in_pool;                 /* conv: average-pool x with this window and stride first; 0: none */
    chain_stage post[CHAIN_MAX_STAGES];   /* ST_END-terminated */
} chain_spec;

/* A shape on its way through the stages: [N, C, d[0..nd-1]]. */
typedef struct {
    long long N, C;
    int nd;
    long long d[3];
} chain_dims;

/* The spec of a chain op, or NULL: looked up in the spec tables that the
 * level-2 table files export next to their problems (CHAIN_SPEC_TABLES). */
const chain_spec *suite_chain(int op);

#define CHAIN_SPEC_TABLES \
    X(suite_l2_chain_specs) \
    X(suite_l2_linear_specs) \
    X(suite_l2_conv2d_specs) \
    X(suite_l2_conv3d_specs)

#define X(name) extern const chain_spec name[]; extern const int name##_count;
CHAIN_SPEC_TABLES
#undef X

/* Elements of a shape, and its spatial size S. */
long long chain_numel(const chain_dims *d);
long long chain_spatial(const chain_dims *d);

/* The shape after stage st of problem p (whose inputs size ST_OUTER_ADD_P
 * and ST_ADD_X0): 0, or -1 when the stage does not fit the shape (a
 * pooling window larger than the extent, an axis out of range, a group
 * count that does not divide C). */
int chain_stage_shape(const suite_problem *p, const chain_stage *st, chain_dims *d);

/* The shape after the producer (of x and the weight, with the problem's
 * stride, padding, output padding and dilation attributes), then after
 * the middle stage; *post_max receives the largest element count of any
 * post stage's output (0 without post stages).  0 or -1 as above. */
int chain_shapes(const suite_problem *p, const chain_spec *sp, chain_dims *after_producer,
                 chain_dims *after_mid, chain_dims *final_, long long *post_max);

/* Whether the chain reads input i after its producer: an elementwise step
 * or a stage whose parameter is input i, a norm's affine parameter, or
 * (i == 0) a post stage that adds the call's input back (ST_ADD_X0).  A
 * path that keeps some inputs in bfloat16 for the producer must widen
 * these too where the steps read float. */
int chain_reads_input(const chain_spec *sp, int i);

/* chain_reads_input but for ST_ADD_X0's read of the call's input 0, which
 * that stage does in either type (chain_post.cu): the inputs that the
 * chain's steps, norms and parameter stages read. */
int chain_reads_param(const chain_spec *sp, int i);

#endif
