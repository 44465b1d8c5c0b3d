/* l3model.h - level-3 problems whose model has a fixed structure that a
 * layer program (net.h) cannot say: the recurrent networks (KernelBench
 * 33-42: a Linear-over-concatenation cell, nn.LSTM, nn.GRU, with or
 * without a linear head) and NetVLAD (46, 47).  Pure C: the spec table
 * (l3_rnn.c), the prompt (prompt.c), input generation (gen.cu) and the
 * baselines (rnn.cu) share it.
 *
 * A problem's inputs are x as get_inputs() draws it, the recurrent state
 * the model starts from (h0, then c0 for an LSTM; none for NetVLAD), then
 * `params`, every parameter packed into one float32 tensor in PyTorch's
 * named_parameters() order (the worker passes at most 64 tensors), each
 * part contiguous and row-major in PyTorch's shape, with no padding: for
 * nn.LSTM and nn.GRU, per layer and direction weight_ih_l{k}[_reverse],
 * weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, then the head's weight and
 * bias; for the cell of 33/34 i2h.weight, i2h.bias, h2o.weight,
 * h2o.bias; for NetVLAD the model's own parameters first (clusters,
 * clusters2), then its BatchNorm1d's weight and bias, as named_parameters()
 * lists a module's own parameters before its children's.  model_plan_make
 * lists the parts with their initialisations.
 *
 * Training mode, as KernelBench evaluates: dropout 0 is the identity;
 * NetVLAD's BatchNorm1d normalises with the batch's statistics.
 */
#ifndef KBV_L3MODEL_H
#define KBV_L3MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "suite.h"

#ifdef __cplusplus
extern "C" {
#endif

enum model_kind {
    MODEL_CAT_RNN = 1,  /* h' = tanh(i2h(cat(x_t, h))), y_t = h2o(h') (KernelBench 33, 34) */
    MODEL_LSTM,         /* nn.LSTM, gates i, f, g, o */
    MODEL_GRU,          /* nn.GRU, gates r, z, n */
    MODEL_NETVLAD,      /* NetVLAD with K clusters and G ghost clusters */
    MODEL_KIND_COUNT
};

/* What the model returns. */
enum model_result {
    MODEL_RES_HEAD_LAST = 1, /* the head on the last step's output: fc(out[:, -1, :]); for the
                                cell of 33 (one step) h2o(h') */
    MODEL_RES_HEAD_SEQ,      /* the head on every step's state, stacked [T, B, out] (34) */
    MODEL_RES_SEQ,           /* the last layer's output at every step (output of nn.GRU) */
    MODEL_RES_HN,            /* h_n: [layers * directions, B, hidden] */
    MODEL_RES_CN,            /* c_n of an LSTM */
    MODEL_RES_VLAD           /* NetVLAD's [B, D K] descriptor */
};

typedef struct {
    int op;            /* the problem's op code */
    int kind;          /* model_kind */
    int result;        /* model_result */
    int input, hidden; /* features of x (NetVLAD: the feature size D), of the state */
    int layers;        /* recurrent layers */
    int bidir;         /* 1: bidirectional */
    int batch_first;   /* 1: x is [B, T, input], else [T, B, input] */
    int head;          /* output features of the linear head; 0 without one */
    int clusters, ghost;   /* NetVLAD: K and G */
} model_spec;

#define MODEL_MAX_PARTS 64

/* One parameter tensor inside the packed `params` input. */
typedef struct {
    char name[32];          /* PyTorch's name: weight_ih_l0_reverse, fc.weight, clusters */
    int ndim;
    int64_t d[3];           /* PyTorch's shape */
    int64_t offset, count;  /* in floats, from the start of params */
    suite_gen gen;          /* its initialisation */
} model_part;

/* Everything a model's spec works out over the problem's x. */
typedef struct {
    int64_t T, B;                 /* steps and batch (NetVLAD: B and N, the features per sample) */
    int dirs;                     /* 1 or 2 */
    int gates;                    /* 4 (LSTM), 3 (GRU), 1 (cell) */
    int n_state;                  /* state inputs after x: 0, 1 (h0) or 2 (h0, c0) */
    int64_t state[3];             /* their shape: [layers * dirs, B, hidden] ([B, hidden] for the cell) */
    int state_ndim;
    model_part part[MODEL_MAX_PARTS];
    int n_parts;
    int64_t n_param_floats;       /* the length of params */
    int out_ndim;
    int64_t out[3];               /* the output's shape */
    double flops;                 /* as the header of l3_rnn.c defines them */
} model_plan;

/* The spec of a model op, or NULL. */
const model_spec *suite_model(int op);
/* The spec of a problem whose op is a model's, or NULL. */
const model_spec *suite_model_of(const suite_problem *p);

/* Whether a model with an input of x_ndim dimensions is KernelBench 33's
 * single step (cat, two linear layers and a tanh, x [B, input]), which
 * the baselines run as plain layers rather than through cuDNN's RNN API. */
int model_is_single_step(const model_spec *sp, int x_ndim);

/* Works out sp over an input x of ndim dimensions: the steps and batch,
 * the state's and the output's shapes, the packed parameter layout and the
 * FLOPs.  0, or -1 with the reason in why (x of the wrong rank or width,
 * too many parts).  plan is the caller's. */
int model_plan_make(const model_spec *sp, const int64_t *x, int ndim, model_plan *plan, char *why,
                    size_t why_len);

/* "lstm", "gru", "cat_rnn", "netvlad". */
const char *model_kind_name(int kind);
/* "head_last", "head_seq", "seq", "h_n", "c_n", "vlad". */
const char *model_result_name(int result);

/* The model in words, appended to b: one line of settings, the
 * computation (gate order and formulas), the inputs' roles and one line
 * per packed part ("part NAME: [shape] at params[OFFSET], INIT"); -1 (and
 * nothing appended) when p is not a model problem or its spec does not
 * fit its x. */
int model_describe(sbuf *b, const suite_problem *p);

#ifdef __cplusplus
}
#endif

#endif
