/* l3model.c - the walk of a fixed-structure level-3 model (see l3model.h):
 * shapes, the packed parameter layout, FLOPs, and the model in words for
 * the prompt. */
#include "l3model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[MODEL_KIND_COUNT] = { "?", "cat_rnn", "lstm", "gru", "netvlad" };
static const char *const result_names[] = { "?", "head_last", "head_seq", "seq", "h_n", "c_n", "vlad" };

const char *model_kind_name(int kind)
{
    return kind > 0 && kind < MODEL_KIND_COUNT ? kind_names[kind] : "?";
}

const char *model_result_name(int result)
{
    return result >= MODEL_RES_HEAD_LAST && result <= MODEL_RES_VLAD ? result_names[result] : "?";
}

const model_spec *suite_model_of(const suite_problem *p)
{
    return p ? suite_model(p->op) : NULL;
}

static int fail(char *why, size_t len, const char *what)
{
    if (why && len) snprintf(why, len, "%s", what);
    return -1;
}

/* U(-1/sqrt(n), 1/sqrt(n)): PyTorch's default for nn.Linear (n = fan_in)
 * and for every weight and bias of nn.LSTM and nn.GRU (n = hidden). */
static suite_gen uniform_inv_sqrt(int64_t n)
{
    double k = 1.0 / sqrt((double)n);
    suite_gen g = { SUITE_GEN_UNIFORM, -k, k };
    return g;
}

/* Appends a part; -1 when the plan is full. */
static int add_part(model_plan *pl, const char *name, int ndim, int64_t d0, int64_t d1, int64_t d2, suite_gen gen)
{
    if (pl->n_parts >= MODEL_MAX_PARTS) return -1;
    model_part *q = &pl->part[pl->n_parts++];
    memset(q, 0, sizeof *q);
    snprintf(q->name, sizeof q->name, "%s", name);
    q->ndim = ndim;
    int64_t d[3] = { d0, d1, d2 };
    q->count = 1;
    for (int i = 0; i < ndim; i++) {
        q->d[i] = d[i];
        q->count *= d[i];
    }
    q->offset = pl->n_param_floats;
    q->gen = gen;
    pl->n_param_floats += q->count;
    return 0;
}

/* Elementwise FLOPs per hidden unit and step of a cell, as l3_rnn.c's
 * header counts them. */
static double cell_ew(int kind)
{
    return kind == MODEL_LSTM ? 19.0 : kind == MODEL_GRU ? 15.0 : 2.0;
}

static int plan_cat(const model_spec *sp, const int64_t *x, int ndim, model_plan *pl, char *why, size_t len)
{
    if (ndim != 2 && ndim != 3) return fail(why, len, "x is not [B, input] or [T, B, input]");
    if (x[ndim - 1] != sp->input) return fail(why, len, "x's last dimension is not the input size");
    if (sp->head < 1) return fail(why, len, "the cell needs its h2o head");
    pl->T = ndim == 3 ? x[0] : 1;
    pl->B = x[ndim - 2];
    pl->dirs = 1;
    pl->gates = 1;
    pl->n_state = 1;
    pl->state_ndim = 2;
    pl->state[0] = pl->B;
    pl->state[1] = sp->hidden;
    int64_t H = sp->hidden, I = sp->input, O = sp->head;
    suite_gen gi = uniform_inv_sqrt(I + H), go = uniform_inv_sqrt(H);
    if (add_part(pl, "i2h.weight", 2, H, I + H, 0, gi) || add_part(pl, "i2h.bias", 1, H, 0, 0, gi) ||
        add_part(pl, "h2o.weight", 2, O, H, 0, go) || add_part(pl, "h2o.bias", 1, O, 0, 0, go))
        return fail(why, len, "too many parameter parts");
    if (sp->result == MODEL_RES_HEAD_LAST && ndim == 2) {
        pl->out_ndim = 2;
        pl->out[0] = pl->B;
        pl->out[1] = O;
    } else if (sp->result == MODEL_RES_HEAD_SEQ && ndim == 3) {
        pl->out_ndim = 3;
        pl->out[0] = pl->T;
        pl->out[1] = pl->B;
        pl->out[2] = O;
    } else {
        return fail(why, len, "the cell returns h2o of one step ([B, input] x) or of every step ([T, B, input] x)");
    }
    double B = (double)pl->B;
    pl->flops = (double)pl->T * (2.0 * B * H * (I + H) + cell_ew(sp->kind) * B * H + 2.0 * B * O * H + B * O);
    return 0;
}

static int plan_recurrent(const model_spec *sp, const int64_t *x, int ndim, model_plan *pl, char *why, size_t len)
{
    if (ndim != 3) return fail(why, len, "x is not three-dimensional");
    if (x[2] != sp->input) return fail(why, len, "x's last dimension is not the input size");
    if (sp->layers < 1 || sp->hidden < 1) return fail(why, len, "no layers or no hidden units");
    pl->B = sp->batch_first ? x[0] : x[1];
    pl->T = sp->batch_first ? x[1] : x[0];
    pl->dirs = sp->bidir ? 2 : 1;
    pl->gates = sp->kind == MODEL_LSTM ? 4 : 3;
    pl->n_state = sp->kind == MODEL_LSTM ? 2 : 1;
    pl->state_ndim = 3;
    pl->state[0] = (int64_t)sp->layers * pl->dirs;
    pl->state[1] = pl->B;
    pl->state[2] = sp->hidden;
    int64_t H = sp->hidden, G = pl->gates;
    const char *mod = sp->kind == MODEL_LSTM ? "lstm" : "gru";
    suite_gen g = uniform_inv_sqrt(H);
    double B = (double)pl->B, T = (double)pl->T;
    for (int l = 0; l < sp->layers; l++) {
        int64_t in = l == 0 ? sp->input : H * pl->dirs;
        for (int d = 0; d < pl->dirs; d++) {
            const char *sfx = d ? "_reverse" : "";
            char nm[4][32];
            snprintf(nm[0], sizeof nm[0], "%s.weight_ih_l%d%s", mod, l, sfx);
            snprintf(nm[1], sizeof nm[1], "%s.weight_hh_l%d%s", mod, l, sfx);
            snprintf(nm[2], sizeof nm[2], "%s.bias_ih_l%d%s", mod, l, sfx);
            snprintf(nm[3], sizeof nm[3], "%s.bias_hh_l%d%s", mod, l, sfx);
            if (add_part(pl, nm[0], 2, G * H, in, 0, g) || add_part(pl, nm[1], 2, G * H, H, 0, g) ||
                add_part(pl, nm[2], 1, G * H, 0, 0, g) || add_part(pl, nm[3], 1, G * H, 0, 0, g))
                return fail(why, len, "too many parameter parts");
            pl->flops += T * (2.0 * B * G * H * (double)(in + H) + 2.0 * B * G * H + cell_ew(sp->kind) * B * H);
        }
    }
    if (sp->head > 0) {
        int64_t F = H * pl->dirs;
        suite_gen gf = uniform_inv_sqrt(F);
        if (add_part(pl, "fc.weight", 2, sp->head, F, 0, gf) || add_part(pl, "fc.bias", 1, sp->head, 0, 0, gf))
            return fail(why, len, "too many parameter parts");
        pl->flops += 2.0 * B * (double)F * sp->head + B * sp->head;
    }
    switch (sp->result) {
    case MODEL_RES_HEAD_LAST:
        if (sp->head < 1) return fail(why, len, "a head result without a head");
        pl->out_ndim = 2;
        pl->out[0] = pl->B;
        pl->out[1] = sp->head;
        break;
    case MODEL_RES_SEQ:
        pl->out_ndim = 3;
        pl->out[0] = sp->batch_first ? pl->B : pl->T;
        pl->out[1] = sp->batch_first ? pl->T : pl->B;
        pl->out[2] = H * pl->dirs;
        break;
    case MODEL_RES_HN: case MODEL_RES_CN:
        if (sp->result == MODEL_RES_CN && sp->kind != MODEL_LSTM) return fail(why, len, "c_n of a model without a cell state");
        pl->out_ndim = 3;
        for (int a = 0; a < 3; a++) pl->out[a] = pl->state[a];
        break;
    default:
        return fail(why, len, "a result a recurrent network does not have");
    }
    return 0;
}

static int plan_netvlad(const model_spec *sp, const int64_t *x, int ndim, model_plan *pl, char *why, size_t len)
{
    if (ndim != 3) return fail(why, len, "x is not [B, N, D]");
    if (x[2] != sp->input) return fail(why, len, "x's last dimension is not the feature size");
    if (sp->clusters < 1 || sp->ghost < 0 || sp->result != MODEL_RES_VLAD)
        return fail(why, len, "bad clusters or result");
    pl->B = x[0];
    pl->T = x[1];
    pl->dirs = 1;
    int64_t D = sp->input, K = sp->clusters, C = K + sp->ghost;
    /* init_sc * torch.randn with init_sc = 1/sqrt(D) */
    suite_gen g = { SUITE_GEN_NORMAL, 0.0, 1.0 / sqrt((double)D) };
    suite_gen one = { SUITE_GEN_CONST, 1.0, 0.0 }, zero = { SUITE_GEN_CONST, 0.0, 0.0 };
    if (add_part(pl, "clusters", 2, D, C, 0, g) || add_part(pl, "clusters2", 3, 1, D, K, g) ||
        add_part(pl, "batch_norm.weight", 1, C, 0, 0, one) || add_part(pl, "batch_norm.bias", 1, C, 0, 0, zero))
        return fail(why, len, "too many parameter parts");
    pl->out_ndim = 2;
    pl->out[0] = pl->B;
    pl->out[1] = D * K;
    double B = (double)pl->B, N = (double)pl->T;
    pl->flops = 2.0 * B * N * D * C      /* the assignment product */
              + 7.0 * B * N * C          /* batch norm: statistics and apply */
              + 5.0 * B * N * C          /* softmax */
              + B * N * K                /* a_sum */
              + B * D * K                /* a = a_sum * clusters2 */
              + 2.0 * B * K * N * D      /* vlad = assignment^T x */
              + B * D * K                /* vlad - a */
              + 3.0 * B * D * K          /* the intra norm over D */
              + 3.0 * B * D * K;         /* the norm over D K */
    return 0;
}

int model_plan_make(const model_spec *sp, const int64_t *x, int ndim, model_plan *pl, char *why, size_t why_len)
{
    memset(pl, 0, sizeof *pl);
    if (!sp) return fail(why, why_len, "no model");
    for (int a = 0; a < ndim; a++)
        if (x[a] < 1) return fail(why, why_len, "x has an empty dimension");
    switch (sp->kind) {
    case MODEL_CAT_RNN: return plan_cat(sp, x, ndim, pl, why, why_len);
    case MODEL_LSTM: case MODEL_GRU: return plan_recurrent(sp, x, ndim, pl, why, why_len);
    case MODEL_NETVLAD: return plan_netvlad(sp, x, ndim, pl, why, why_len);
    default: return fail(why, why_len, "unknown model kind");
    }
}

/* --- the model in words ------------------------------------------------------ */

static void put_dims(sbuf *b, int ndim, const int64_t *d)
{
    sb_puts(b, "[");
    for (int i = 0; i < ndim; i++) sb_printf(b, "%s%lld", i ? ", " : "", (long long)d[i]);
    sb_puts(b, "]");
}

static void put_computation(sbuf *b, const model_spec *sp, const model_plan *pl)
{
    int64_t H = sp->hidden;
    switch (sp->kind) {
    case MODEL_CAT_RNN:
        sb_printf(b, "    step: h = tanh(cat(x_t, h) @ i2h.weight^T + i2h.bias) (i2h.weight's first %d columns "
                     "multiply x_t, the last %lld h); y_t = h @ h2o.weight^T + h2o.bias; h starts as h0\n",
                  sp->input, (long long)H);
        if (sp->result == MODEL_RES_HEAD_SEQ)
            sb_printf(b, "    x is [T, B, input] (seq-major); %lld steps t = 0..T-1; out[t] = y_t\n", (long long)pl->T);
        else
            sb_puts(b, "    one step on x [B, input]; out = y\n");
        return;
    case MODEL_LSTM:
        sb_printf(b, "    cell (PyTorch's nn.LSTM): gates = x_t @ weight_ih^T + bias_ih + h @ weight_hh^T + bias_hh, "
                     "[B, 4 hidden], split in order i, f, g, o (rows 0..%lld of weight_ih and weight_hh are i, "
                     "then f, g, o); i, f, o = sigmoid; g = tanh; c = f * c + i * g; h = o * tanh(c)\n",
                  (long long)H - 1);
        break;
    case MODEL_GRU:
        sb_printf(b, "    cell (PyTorch's nn.GRU): gates in order r, z, n (rows 0..%lld of weight_ih, weight_hh "
                     "and both biases are r, then z, n); r = sigmoid(x_t W_ir^T + b_ir + h W_hr^T + b_hr); "
                     "z = sigmoid(x_t W_iz^T + b_iz + h W_hz^T + b_hz); n = tanh(x_t W_in^T + b_in + "
                     "r * (h W_hn^T + b_hn)); h = (1 - z) * n + z * h\n",
                  (long long)H - 1);
        break;
    case MODEL_NETVLAD: {
        int64_t K = sp->clusters, C = K + sp->ghost;
        sb_printf(b, "    x [B, N, D] with B %lld, N %lld, D %d; C = K + G = %lld clusters (K %d real, G %d ghost)\n",
                  (long long)pl->B, (long long)pl->T, sp->input, (long long)C, sp->clusters, sp->ghost);
        sb_puts(b, "    1. a = x.view(B N, D) @ clusters: [B N, C]\n"
                   "    2. a = BatchNorm1d(C) in training mode: per column c, (a - mean) / sqrt(biased variance + 1e-05) "
                   "* batch_norm.weight[c] + batch_norm.bias[c], statistics over all B N rows\n"
                   "    3. a = softmax over the C columns of each row; keep the first K columns (the ghost clusters are "
                   "dropped after the softmax); view as [B, N, K]\n"
                   "    4. a_sum = a.sum over N: [B, 1, K]; centre = a_sum * clusters2: [B, D, K]\n"
                   "    5. vlad = (a^T @ x per sample: [B, K, D]).transpose(1, 2) - centre: [B, D, K]\n"
                   "    6. vlad = vlad / max(||vlad||_2 over D, 1e-12) (each (b, k) column)\n"
                   "    7. out = vlad.reshape(B, D K) (element [b, d K + k]) / max(||row||_2, 1e-12)\n");
        return;
    }
    }
    sb_printf(b, "    %d layers, %s; layer l > 0 reads layer l-1's output at every step%s\n", sp->layers,
              sp->bidir ? "bidirectional: the forward direction runs t = 0..T-1, the reverse direction t = T-1..0 "
                          "with its own parameters (*_reverse) and state; a layer's output at step t is "
                          "[forward h_t, reverse h_t] (2 hidden features)"
                        : "one direction, t = 0..T-1",
              sp->bidir ? " (both directions' features)" : "");
    sb_printf(b, "    x is %s; state index l * %d + direction (0 forward, 1 reverse) in h0%s and in the final "
                 "states h_n%s; dropout 0 (the identity)\n",
              sp->batch_first ? "[B, T, input] (batch_first)" : "[T, B, input] (seq-major)", pl->dirs,
              sp->kind == MODEL_LSTM ? ", c0" : "", sp->kind == MODEL_LSTM ? ", c_n" : "");
    switch (sp->result) {
    case MODEL_RES_HEAD_LAST:
        sb_printf(b, "    out = the last layer's output at step T-1 (%s) @ fc.weight^T + fc.bias\n",
                  sp->bidir ? "[forward h after step T-1, reverse h after its first step, which is t = T-1]"
                            : "its h after the last step");
        break;
    case MODEL_RES_SEQ:
        sb_printf(b, "    out = the last layer's output at every step, %s\n",
                  sp->batch_first ? "[B, T, directions hidden]" : "[T, B, directions hidden]");
        break;
    case MODEL_RES_HN:
        sb_puts(b, "    out = h_n, every layer's and direction's final h: [layers directions, B, hidden]\n");
        break;
    case MODEL_RES_CN:
        sb_puts(b, "    out = c_n, every layer's and direction's final c: [layers directions, B, hidden]\n");
        break;
    }
    if (sp->head > 0 && sp->result != MODEL_RES_HEAD_LAST)
        sb_puts(b, "    (the model also applies fc to the last step and discards it: fc's parameters are in "
                   "params, and nothing of it reaches the output)\n");
}

int model_describe(sbuf *b, const suite_problem *p)
{
    const model_spec *sp = suite_model_of(p);
    if (!sp || p->n_inputs < 1) return -1;
    model_plan *pl = calloc(1, sizeof *pl);
    if (!pl) return -1;
    if (model_plan_make(sp, p->inputs[0].shape, p->inputs[0].ndim, pl, NULL, 0)) {
        free(pl);
        return -1;
    }
    sb_printf(b, "    model %s: input %d, hidden %d, layers %d, directions %d, batch_first %d, head %d, "
                 "clusters %d, ghost %d, steps %lld, batch %lld, result %s\n",
              model_kind_name(sp->kind), sp->input, sp->hidden, sp->layers, pl->dirs, sp->batch_first, sp->head,
              sp->clusters, sp->ghost, (long long)pl->T, (long long)pl->B, model_result_name(sp->result));
    put_computation(b, sp, pl);
    if (pl->n_state) {
        sb_puts(b, "    state inputs after x: h0 ");
        put_dims(b, pl->state_ndim, pl->state);
        if (pl->n_state > 1) {
            sb_puts(b, ", c0 ");
            put_dims(b, pl->state_ndim, pl->state);
        }
        sb_puts(b, "\n");
    }
    for (int i = 0; i < pl->n_parts; i++) {
        const model_part *q = &pl->part[i];
        suite_tensor t;
        memset(&t, 0, sizeof t);
        t.role = SUITE_ROLE_PARAM;
        t.gen = q->gen;
        sb_printf(b, "    part %s: ", q->name);
        put_dims(b, q->ndim, q->d);
        sb_printf(b, " at params[%lld], ", (long long)q->offset);
        suite_gen_text(b, &t);
        sb_puts(b, "\n");
    }
    free(pl);
    return 0;
}

int model_is_single_step(const model_spec *sp, int x_ndim)
{
    return sp && sp->kind == MODEL_CAT_RNN && x_ndim == 2;
}
