/* net.c - the walk of a layer program (see net.h): shapes, the packed
 * parameter layout, FLOPs, and the program in words for the prompt. */
#include "net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[NET_KIND_COUNT] = {
    "end", "linear", "conv2d", "batchnorm2d", "relu", "maxpool2d", "adaptive_avgpool2d(1)",
    "flatten", "dropout(p=0)", "save", "swap", "add", "avgpool2d", "relu6", "sigmoid",
    "push", "exchange", "concat", "channel_shuffle", "conv_transpose2d", "softmax(dim=-1)",
    "layernorm", "gelu_tanh", "attention", "tokens", "untokens", "unfold", "cls_token", "pos_embedding",
    "first_token", "gelu", "window_mlp", "patch_merge", "token_mean", "window_attention",
};

static const char *const wattn_parts[9] = {
    "logit_scale", "q_bias", "v_bias", "cpb_mlp.0.weight", "cpb_mlp.0.bias", "cpb_mlp.2.weight", "qkv.weight",
    "proj.weight", "proj.bias",
};

const char *net_kind_name(int kind)
{
    return kind >= 0 && kind < NET_KIND_COUNT ? kind_names[kind] : "?";
}

const net_spec *suite_net_of(const suite_problem *p)
{
    return p ? suite_net(p->op) : NULL;
}

static int64_t shape_numel(const net_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) n *= s->d[i];
    return n;
}

static int fail(char *why, size_t len, int layer, const char *kind, const char *what)
{
    if (why && len) snprintf(why, len, "layer %d (%s): %s", layer + 1, kind, what);
    return -1;
}

/* Appends a parameter of the given shape to the plan's layout. */
static void add_param(net_plan *pl, int layer, int is_bias, int ndim, const int64_t *d,
                      suite_gen gen)
{
    net_param *q = &pl->param[pl->n_params++];
    q->layer = layer;
    q->is_bias = is_bias;
    q->shape.ndim = ndim;
    for (int i = 0; i < 4; i++) q->shape.d[i] = i < ndim ? d[i] : 0;
    q->count = shape_numel(&q->shape);
    q->offset = pl->n_param_floats;
    q->gen = gen;
    pl->n_param_floats += q->count;
}

/* PyTorch's default init of a Linear or Conv weight and bias:
 * U(-1/sqrt(fan_in), 1/sqrt(fan_in)). */
static suite_gen kaiming(int64_t fan_in)
{
    double k = 1.0 / sqrt((double)fan_in);
    suite_gen g = { SUITE_GEN_UNIFORM, -k, k };
    return g;
}

/* A layer's weight and bias initialisation (net_init). */
static void layer_init(const net_layer *L, int64_t fan_in, int64_t fan_out, suite_gen *w, suite_gen *b)
{
    suite_gen zero = { SUITE_GEN_CONST, 0.0, 0.0 };
    if (L->init == NET_INIT_KAIMING_OUT) {
        suite_gen g = { SUITE_GEN_NORMAL, 0.0, sqrt(2.0 / (double)fan_out) };
        *w = g;
        *b = zero;
    } else if (L->init == NET_INIT_NORMAL_001) {
        suite_gen g = { SUITE_GEN_NORMAL, 0.0, 0.01 };
        *w = g;
        *b = zero;
    } else if (L->init == NET_INIT_XAVIER_ZERO) {
        double a = sqrt(6.0 / (double)(fan_in + fan_out));
        suite_gen g = { SUITE_GEN_UNIFORM, -a, a };
        *w = g;
        *b = zero;
    } else if (L->init == NET_INIT_DEFAULT_ZERO) {
        *w = kaiming(fan_in);
        *b = zero;
    } else {
        *w = *b = kaiming(fan_in);
    }
}

/* The saved tensors of the walk: the skip slot, the stack, and the image
 * shape of the last NET_TOKENS (which NET_UNTOKENS restores). */
typedef struct {
    net_shape skip;
    int have_skip;
    net_shape stack[NET_STACK_MAX];
    int depth;
    net_shape img;
} walk_saved;

/* A transposed convolution: its output shape into *o, its parameters
 * and FLOPs. */
static int walk_convt(const net_layer *L, int i, const net_shape *cur, net_shape *o, net_plan *pl, char *why,
                      size_t len)
{
    const char *nm = net_kind_name(L->kind);
    int64_t n = shape_numel(cur);
    if (cur->ndim != 4) return fail(why, len, i, nm, "input is not [N, C, H, W]");
    if (L->out < 1 || L->k < 1 || L->s < 1 || L->p < 0)
        return fail(why, len, i, nm, "bad channels, kernel, stride or padding");
    int64_t g = L->groups > 1 ? L->groups : 1, cin = cur->d[1];
    if (cin % g || L->out % g) return fail(why, len, i, nm, "channels not divisible by the groups");
    int64_t w[4] = { cin, L->out / g, L->k, L->k };
    /* PyTorch's fan_in of a transposed convolution's weight is its
     * dimension 1 times the window: out / groups k^2 */
    suite_gen gw, gb;
    layer_init(L, L->out / g * L->k * L->k, cin * L->k * L->k, &gw, &gb);
    int64_t bshape = L->out;
    add_param(pl, i, 0, 4, w, gw);
    if (L->bias) add_param(pl, i, 1, 1, &bshape, gb);
    o->d[1] = L->out;
    for (int a = 2; a < 4; a++) o->d[a] = (cur->d[a] - 1) * L->s - 2 * L->p + L->k;
    if (o->d[2] < 1 || o->d[3] < 1) return fail(why, len, i, nm, "the padding is larger than the output");
    /* every input element meets every tap of its group's output channels */
    pl->flops += 2.0 * (double)n * (double)(L->out / g) * L->k * L->k +
                 (L->bias ? (double)shape_numel(o) : 0.0);
    pl->has_conv = 1;
    return 0;
}

/* The transformer layers (token tensors [N, T, C], net.h): the shape
 * after L into *o, their parameters and FLOPs.  0, -1 with the reason in
 * why, or 1 when L is none of them. */
static int walk_token_layer(const net_layer *L, int i, const net_shape *cur, net_shape *img, net_plan *pl,
                            net_shape *out, char *why, size_t len)
{
    const char *nm = net_kind_name(L->kind);
    int64_t n = shape_numel(cur);
    net_shape o = *cur;
    switch (L->kind) {
    case NET_LAYERNORM: {
        if (cur->ndim != 2 && cur->ndim != 3) return fail(why, len, i, nm, "input is not [N, (T,) features]");
        suite_gen one = { SUITE_GEN_CONST, 1.0, 0.0 }, zero = { SUITE_GEN_CONST, 0.0, 0.0 };
        add_param(pl, i, 0, 1, &cur->d[cur->ndim - 1], one);
        add_param(pl, i, 1, 1, &cur->d[cur->ndim - 1], zero);
        pl->flops += 7.0 * (double)n;   /* as a batch norm */
        break;
    }
    case NET_GELU_TANH:
        pl->flops += 5.0 * (double)n;   /* as level 2 counts GELU */
        break;
    case NET_ATTENTION: {
        if (cur->ndim != 3) return fail(why, len, i, nm, "input is not [N, T, 3 C]");
        if (L->groups < 1 || cur->d[2] % (3LL * L->groups))
            return fail(why, len, i, nm, "the features are not 3 x heads x head size");
        o.d[2] = cur->d[2] / 3;
        /* two products of 2 T T C per sequence, then per score the scale
         * and softmax's max, exponential, sum and division (or a ReLU) */
        int sf = (L->k & NET_ATTN_SEQ_FIRST) != 0;
        double T = (double)cur->d[sf ? 0 : 1], B = (double)cur->d[sf ? 1 : 0], scores = B * L->groups * T * T;
        pl->flops += 4.0 * B * T * T * (double)o.d[2] + ((L->k & NET_ATTN_RELU) ? 2.0 : 5.0) * scores;
        break;
    }
    case NET_UNFOLD:
        if (cur->ndim != 4) return fail(why, len, i, nm, "input is not [N, C, H, W]");
        if (L->k < 1 || cur->d[2] % L->k || cur->d[3] % L->k)
            return fail(why, len, i, nm, "the image is not a whole number of patches");
        o.ndim = 3;
        o.d[1] = cur->d[2] / L->k * (cur->d[3] / L->k);
        o.d[2] = cur->d[1] * L->k * L->k;
        o.d[3] = 0;
        break;
    case NET_CLS: case NET_POS: {
        if (cur->ndim != 3 && !(cur->ndim == 2 && L->kind == NET_CLS))
            return fail(why, len, i, nm, "input is not [N, T, C]");
        int64_t c = cur->d[cur->ndim - 1], w[3] = { 1, L->kind == NET_POS ? cur->d[1] : 1, c };
        suite_gen randn = { SUITE_GEN_NORMAL, 0.0, 1.0 }, zero = { SUITE_GEN_CONST, 0.0, 0.0 };
        add_param(pl, i, 0, 3, w, L->init == NET_INIT_ZEROS ? zero : randn);
        if (L->kind == NET_POS) {
            pl->flops += (double)n;
        } else {
            o.ndim = 3;
            o.d[1] = cur->ndim == 2 ? 2 : cur->d[1] + 1;
            o.d[2] = c;
            o.d[3] = 0;
        }
        break;
    }
    case NET_FIRST_TOKEN:
        if (cur->ndim != 3) return fail(why, len, i, nm, "input is not [N, T, C]");
        o.ndim = 2;
        o.d[1] = cur->d[2];
        o.d[2] = 0;
        break;
    case NET_GELU:
        pl->flops += 5.0 * (double)n;   /* as level 2 counts GELU */
        break;
    case NET_WINDOW_MLP: case NET_MERGE: {
        int64_t side = cur->ndim == 3 ? net_side(cur->d[1]) : 0;
        if (side < 1) return fail(why, len, i, nm, "input is not the tokens of a square map [N, H W, C]");
        if (L->kind == NET_MERGE) {
            if (side % 2) return fail(why, len, i, nm, "the map's side is odd");
            o.d[1] = cur->d[1] / 4;
            o.d[2] = cur->d[2] * 4;
            break;
        }
        int64_t ws = L->k, sh = L->s, heads = L->groups;
        if (ws < 1 || sh < 0 || sh >= ws || side % ws || heads < 1 || cur->d[2] % heads)
            return fail(why, len, i, nm, "bad window, shift or heads for the map");
        int64_t w[3] = { heads * ws * ws, ws * ws, 1 };
        suite_gen g = kaiming(ws * ws);   /* Conv1d's fan_in: k^2 inputs a group, kernel 1 */
        add_param(pl, i, 0, 3, w, g);
        add_param(pl, i, 1, 1, w, g);
        /* the padded map's windows, each a product of 2 k^4 C and k^2 C
         * for the bias */
        int64_t wins = (side + (sh ? ws : 0)) / ws;
        pl->flops += (double)cur->d[0] * (double)(wins * wins) *
                     (2.0 * (double)(ws * ws) * (double)(ws * ws) + (double)(ws * ws)) * (double)cur->d[2];
        break;
    }
    case NET_WINDOW_ATTN: {
        int64_t side = cur->ndim == 3 ? net_side(cur->d[1]) : 0;
        if (side < 1) return fail(why, len, i, nm, "input is not the tokens of a square map [N, H W, C]");
        int64_t ws = L->k, sh = L->s, h = L->groups, C = cur->d[2], R = (2 * ws - 1) * (2 * ws - 1);
        if (ws < 2 || sh < 0 || sh >= ws || side % ws || h < 1 || C % h)
            return fail(why, len, i, nm, "bad window, shift or heads for the map");
        suite_gen zero = { SUITE_GEN_CONST, 0.0, 0.0 }, ls = { SUITE_GEN_CONST, log(10.0), 0.0 };
        int64_t d_ls[3] = { h, 1, 1 }, d_c[1] = { C }, d_w1[2] = { NET_CPB_HIDDEN, 2 }, d_b1[1] = { NET_CPB_HIDDEN },
                d_w2[2] = { h, NET_CPB_HIDDEN }, d_qkv[2] = { 3 * C, C }, d_p[2] = { C, C };
        add_param(pl, i, 0, 3, d_ls, ls);
        add_param(pl, i, 1, 1, d_c, zero);
        add_param(pl, i, 2, 1, d_c, zero);
        add_param(pl, i, 3, 2, d_w1, kaiming(2));
        add_param(pl, i, 4, 1, d_b1, kaiming(2));
        add_param(pl, i, 5, 2, d_w2, kaiming(NET_CPB_HIDDEN));
        add_param(pl, i, 6, 2, d_qkv, kaiming(C));
        add_param(pl, i, 7, 2, d_p, kaiming(C));
        add_param(pl, i, 8, 1, d_c, kaiming(C));
        /* tokens M: qkv 2 M C 3C and its bias, the normalisations of q and
         * k (3 a value), scores and times v 2 M k^2 C each, 7 a score (the
         * scale, bias, mask and softmax), proj 2 M C^2 + M C; the bias
         * table: the MLP (2 in out, bias, ReLU) and 16 sigmoid (4) */
        double M = (double)n / (double)C, dc = (double)C, k2 = (double)(ws * ws), hid = NET_CPB_HIDDEN;
        pl->flops += 6.0 * M * dc * dc + 3.0 * M * dc + 6.0 * M * dc + 4.0 * M * k2 * dc + 7.0 * M * (double)h * k2 +
                     2.0 * M * dc * dc + M * dc +
                     (double)R * (4.0 * hid + 2.0 * hid + 2.0 * hid * (double)h + 4.0 * (double)h);
        break;
    }
    case NET_TOKEN_MEAN:
        if (cur->ndim != 3) return fail(why, len, i, nm, "input is not [N, T, C]");
        o.ndim = 2;
        o.d[1] = cur->d[2];
        o.d[2] = 0;
        pl->flops += (double)n + (double)(cur->d[0] * cur->d[2]);   /* the sums, a division each */
        break;
    case NET_TOKENS:
        if (cur->ndim != 4) return fail(why, len, i, nm, "input is not [N, C, H, W]");
        *img = *cur;
        o.ndim = 3;
        o.d[1] = cur->d[2] * cur->d[3];
        o.d[2] = cur->d[1];
        o.d[3] = 0;
        break;
    case NET_UNTOKENS:
        if (cur->ndim != 3 || img->ndim != 4 || cur->d[0] != img->d[0] ||
            cur->d[1] != img->d[2] * img->d[3])
            return fail(why, len, i, nm, "no tokens of an image of this size before it");
        o = *img;
        o.d[1] = cur->d[2];
        break;
    default:
        return 1;
    }
    *out = o;
    return 0;
}

/* The stack's layers: push, exchange and concatenation. */
static int walk_stack(const net_layer *L, int i, const net_shape *cur, net_shape *o, walk_saved *sv,
                      net_plan *pl, char *why, size_t len)
{
    const char *nm = net_kind_name(L->kind);
    switch (L->kind) {
    case NET_PUSH:
        if (sv->depth == NET_STACK_MAX) return fail(why, len, i, nm, "the stack is full");
        sv->stack[sv->depth++] = *cur;
        if (sv->depth > pl->stack_most) pl->stack_most = sv->depth;
        break;
    case NET_EXCHANGE:
        if (sv->depth < 1) return fail(why, len, i, nm, "nothing pushed");
        *o = sv->stack[sv->depth - 1];
        sv->stack[sv->depth - 1] = *cur;
        break;
    case NET_CONCAT: {
        if (L->k < 1 || L->k > sv->depth) return fail(why, len, i, nm, "fewer entries pushed than it pops");
        if (cur->ndim != 4) return fail(why, len, i, nm, "input is not [N, C, H, W]");
        for (int e = sv->depth - L->k; e < sv->depth; e++) {
            const net_shape *t = &sv->stack[e];
            if (t->ndim != 4 || t->d[0] != cur->d[0] || t->d[2] != cur->d[2] || t->d[3] != cur->d[3])
                return fail(why, len, i, nm, "the tensors differ in more than their channels");
            o->d[1] += t->d[1];
        }
        sv->depth -= L->k;
        break;   /* data movement: no FLOPs */
    }
    default:
        break;
    }
    return 0;
}

/* One layer: the shape after it from cur, its parameters and FLOPs. */
static int walk_layer(const net_layer *L, int i, net_shape *cur, walk_saved *sv, net_plan *pl,
                      char *why, size_t len)
{
    const char *nm = net_kind_name(L->kind);
    int64_t n = shape_numel(cur);
    net_shape o = *cur;
    switch (L->kind) {
    case NET_LINEAR: {
        /* over the last dimension of [N, features] or [N, T, features] */
        if (cur->ndim != 2 && cur->ndim != 3) return fail(why, len, i, nm, "input is not [N, features]");
        if (L->out < 1) return fail(why, len, i, nm, "no output features");
        int last = cur->ndim - 1;
        int64_t w[2] = { L->out, cur->d[last] };
        double rows = (double)(n / cur->d[last]);
        suite_gen gw, gb;
        layer_init(L, cur->d[last], L->out, &gw, &gb);
        add_param(pl, i, 0, 2, w, gw);
        if (L->bias) add_param(pl, i, 1, 1, w, gb);
        o.d[last] = L->out;
        pl->flops += 2.0 * rows * (double)cur->d[last] * L->out + (L->bias ? rows * L->out : 0.0);
        break;
    }
    case NET_CONV2D: {
        if (cur->ndim != 4) return fail(why, len, i, nm, "input is not [N, C, H, W]");
        if (L->out < 1 || L->k < 1 || L->s < 1 || L->p < 0)
            return fail(why, len, i, nm, "bad channels, kernel, stride or padding");
        int64_t g = L->groups > 1 ? L->groups : 1, cin = cur->d[1];
        if (cin % g || L->out % g) return fail(why, len, i, nm, "channels not divisible by the groups");
        int64_t w[4] = { L->out, cin / g, L->k, L->k };
        suite_gen gw, gb;
        layer_init(L, cin / g * L->k * L->k, (int64_t)L->out * L->k * L->k, &gw, &gb);
        add_param(pl, i, 0, 4, w, gw);
        if (L->bias) add_param(pl, i, 1, 1, w, gb);
        o.d[1] = L->out;
        for (int a = 2; a < 4; a++) o.d[a] = (cur->d[a] + 2 * L->p - L->k) / L->s + 1;
        if (o.d[2] < 1 || o.d[3] < 1) return fail(why, len, i, nm, "the window is larger than the input");
        double outs = (double)shape_numel(&o);
        pl->flops += 2.0 * outs * (double)(cin / g) * L->k * L->k + (L->bias ? outs : 0.0);
        /* a patch embedding (dense, stride = kernel > 1, no padding) is a
         * product over disjoint patches: the baseline runs it as a GEMM */
        if (!net_is_patch_conv(L)) pl->has_conv = 1;
        break;
    }
    case NET_BN2D: {
        if (cur->ndim != 4) return fail(why, len, i, nm, "input is not [N, C, H, W]");
        suite_gen one = { SUITE_GEN_CONST, 1.0, 0.0 }, zero = { SUITE_GEN_CONST, 0.0, 0.0 };
        add_param(pl, i, 0, 1, &cur->d[1], one);
        add_param(pl, i, 1, 1, &cur->d[1], zero);
        pl->flops += 7.0 * (double)n;
        break;
    }
    case NET_RELU:
        pl->flops += (double)n;
        break;
    case NET_RELU6:
        pl->flops += 2.0 * (double)n;   /* a clamp, as level 2 counts it */
        break;
    case NET_SIGMOID:
        pl->flops += 3.0 * (double)n;   /* as level 2 counts it */
        break;
    case NET_MAXPOOL2D: case NET_AVGPOOL2D:
        if (cur->ndim != 4) return fail(why, len, i, nm, "input is not [N, C, H, W]");
        if (L->k < 1 || L->s < 1 || L->p < 0 || 2 * L->p > L->k)
            return fail(why, len, i, nm, "bad kernel, stride or padding");
        if (L->ceil && L->kind != NET_MAXPOOL2D) return fail(why, len, i, nm, "ceil mode is for max pooling only");
        for (int a = 2; a < 4; a++) {
            int64_t span = cur->d[a] + 2 * L->p - L->k;
            if (span < 0) {
                o.d[a] = 0;
                continue;
            }
            /* PyTorch's rule: ceil mode rounds up, but the last window must
             * start inside the input or its left padding */
            o.d[a] = (L->ceil ? (span + L->s - 1) / L->s : span / L->s) + 1;
            if (L->ceil && (o.d[a] - 1) * L->s >= cur->d[a] + L->p) o.d[a]--;
        }
        if (o.d[2] < 1 || o.d[3] < 1) return fail(why, len, i, nm, "the window is larger than the input");
        /* a comparison or addition per window element, a division per
         * average */
        pl->flops += ((double)L->k * L->k + (L->kind == NET_AVGPOOL2D)) * (double)shape_numel(&o);
        break;
    case NET_GAP:
        if (cur->ndim != 4) return fail(why, len, i, nm, "input is not [N, C, H, W]");
        o.d[2] = o.d[3] = 1;
        pl->flops += (double)n + (double)shape_numel(&o);
        break;
    case NET_FLATTEN:
        o.ndim = 2;
        o.d[1] = n / cur->d[0];
        o.d[2] = o.d[3] = 0;
        break;
    case NET_DROPOUT:
        break;
    case NET_SAVE:
        sv->skip = *cur;
        sv->have_skip = 1;
        break;
    case NET_SWAP:
        if (!sv->have_skip) return fail(why, len, i, nm, "nothing saved");
        o = sv->skip;
        sv->skip = *cur;
        break;
    case NET_ADD:
        if (!sv->have_skip) return fail(why, len, i, nm, "nothing saved");
        if (memcmp(&sv->skip, cur, sizeof *cur) != 0) return fail(why, len, i, nm, "the shapes differ");
        pl->flops += (double)n;
        break;
    case NET_PUSH: case NET_EXCHANGE: case NET_CONCAT:
        if (walk_stack(L, i, cur, &o, sv, pl, why, len)) return -1;
        break;
    case NET_SHUFFLE:
        if (cur->ndim != 4) return fail(why, len, i, nm, "input is not [N, C, H, W]");
        if (L->groups < 1 || cur->d[1] % L->groups)
            return fail(why, len, i, nm, "channels not divisible by the groups");
        break;   /* a permutation: no FLOPs */
    case NET_CONVT2D:
        if (walk_convt(L, i, cur, &o, pl, why, len)) return -1;
        break;
    case NET_SOFTMAX:
        pl->flops += 5.0 * (double)n;   /* as level 1 counts it */
        break;
    default: {
        int rc = walk_token_layer(L, i, cur, &sv->img, pl, &o, why, len);
        if (rc < 0) return -1;
        if (rc > 0) return fail(why, len, i, nm, "unknown layer kind");
        break;
    }
    }
    *cur = o;
    return 0;
}

int net_plan_make(const net_spec *sp, const int64_t *x, int ndim, net_plan *pl, char *why,
                  size_t why_len)
{
    memset(pl, 0, sizeof *pl);
    if (!sp || sp->n_layers < 1 || sp->n_layers > NET_MAX_LAYERS) {
        if (why && why_len) snprintf(why, why_len, "no program, or more than %d layers", NET_MAX_LAYERS);
        return -1;
    }
    if (ndim < 2 || ndim > 4) {
        if (why && why_len) snprintf(why, why_len, "the input has %d dimensions, not 2 to 4", ndim);
        return -1;
    }
    net_shape cur = { ndim, { 0, 0, 0, 0 } };
    walk_saved sv;
    memset(&sv, 0, sizeof sv);
    for (int a = 0; a < ndim; a++) cur.d[a] = x[a];
    for (int i = 0; i < sp->n_layers; i++) {
        pl->in[i] = cur;
        /* a window attention layer adds nine parts, any other two at most */
        if (pl->n_params > 2 * NET_MAX_LAYERS - 9) {
            if (why && why_len) snprintf(why, why_len, "layer %d: too many parameter parts", i + 1);
            return -1;
        }
        if (sp->layers[i].order < 0) {
            if (why && why_len) snprintf(why, why_len, "layer %d: negative order", i + 1);
            return -1;
        }
        if (walk_layer(&sp->layers[i], i, &cur, &sv, pl, why, why_len)) return -1;
        pl->out[i] = cur;
    }
    pl->result = cur;
    /* parameters of layers with a later `order` move behind the others
     * (a stable insertion sort: the program's order within one order),
     * and the offsets follow */
    for (int a = 1; a < pl->n_params; a++) {
        net_param t = pl->param[a];
        int b = a;
        while (b > 0 && sp->layers[pl->param[b - 1].layer].order > sp->layers[t.layer].order) {
            pl->param[b] = pl->param[b - 1];
            b--;
        }
        pl->param[b] = t;
    }
    int64_t at = 0;
    for (int a = 0; a < pl->n_params; a++) {
        pl->param[a].offset = at;
        at += pl->param[a].count;
    }
    return 0;
}

int64_t net_side(int64_t tokens)
{
    int64_t s = (int64_t)llround(sqrt((double)tokens));
    return s * s == tokens ? s : 0;
}

const net_param *net_param_of(const net_plan *pl, int l, int part)
{
    for (int q = 0; q < pl->n_params; q++)
        if (pl->param[q].layer == l && pl->param[q].is_bias == part) return &pl->param[q];
    return NULL;
}

int net_is_patch_conv(const net_layer *L)
{
    return L->kind == NET_CONV2D && L->k > 1 && L->s == L->k && L->p == 0 && L->groups <= 1;
}

/* --- the program in words ------------------------------------------------- */

static void put_shape(sbuf *b, const net_shape *s)
{
    sb_puts(b, "[");
    for (int i = 0; i < s->ndim; i++) sb_printf(b, "%s%lld", i ? ", " : "", (long long)s->d[i]);
    sb_puts(b, "]");
}

static void put_param(sbuf *b, const net_param *q, int init, int wattn)
{
    suite_tensor t;
    memset(&t, 0, sizeof t);
    /* a uniform weight of the model's own (xavier) is not PyTorch's default */
    t.role = init == NET_INIT_XAVIER_ZERO && !q->is_bias ? SUITE_ROLE_INPUT : SUITE_ROLE_PARAM;
    t.gen = q->gen;
    sb_printf(b, "; %s ", wattn && q->is_bias >= 0 && q->is_bias < 9 ? wattn_parts[q->is_bias]
                                : q->is_bias ? "bias" : "weight");
    put_shape(b, &q->shape);
    sb_printf(b, " at params[%lld], ", (long long)q->offset);
    suite_gen_text(b, &t);
    if (t.role == SUITE_ROLE_INPUT) sb_puts(b, " (xavier_uniform_, as nn.MultiheadAttention initialises in_proj)");
}

int net_describe(sbuf *b, const suite_problem *p)
{
    const net_spec *sp = suite_net_of(p);
    if (!sp || p->n_inputs < 1) return -1;
    net_plan *pl = calloc(1, sizeof *pl);
    if (!pl) return -1;
    if (net_plan_make(sp, p->inputs[0].shape, p->inputs[0].ndim, pl, NULL, 0)) {
        free(pl);
        return -1;
    }
    for (int i = 0; i < sp->n_layers; i++) {
        const net_layer *L = &sp->layers[i];
        sb_printf(b, "    %d. %s: ", i + 1, net_kind_name(L->kind));
        put_shape(b, &pl->in[i]);
        sb_puts(b, " -> ");
        put_shape(b, &pl->out[i]);
        if (L->kind == NET_CONV2D || L->kind == NET_CONVT2D || L->kind == NET_MAXPOOL2D ||
            L->kind == NET_AVGPOOL2D)
            sb_printf(b, "; kernel %d, stride %d, padding %d", L->k, L->s, L->p);
        if ((L->kind == NET_CONV2D || L->kind == NET_CONVT2D) && L->groups > 1)
            sb_printf(b, ", groups %d", L->groups);
        if (L->kind == NET_MAXPOOL2D && L->ceil) sb_puts(b, ", ceil mode");
        if (L->kind == NET_CONVT2D) sb_puts(b, " (output (H - 1) stride - 2 padding + kernel)");
        if (L->kind == NET_PUSH) sb_puts(b, "; push this tensor on the stack");
        if (L->kind == NET_EXCHANGE) sb_puts(b, "; exchange this tensor with the top of the stack");
        if (L->kind == NET_CONCAT)
            sb_printf(b, "; cat of the top %d stack entries (oldest first) and this tensor along "
                      "channels, popping them", L->k);
        if (L->kind == NET_SHUFFLE)
            sb_printf(b, "; groups %d: view [N, %d, C/%d, H, W], transpose(1, 2), view back", L->groups,
                      L->groups, L->groups);
        if (L->kind == NET_SOFTMAX) sb_puts(b, "; along the last dimension");
        if (L->kind == NET_AVGPOOL2D) sb_puts(b, " (padding counted in the divisor)");
        if (L->kind == NET_BN2D) {
            sb_puts(b, "; batch statistics (training mode, biased variance), eps ");
            suite_num_text(b, sp->eps);
        }
        if (L->kind == NET_LAYERNORM) {
            sb_puts(b, "; over the last dimension (biased variance), eps ");
            suite_num_text(b, sp->eps);
        }
        if (L->kind == NET_GELU_TANH) sb_puts(b, "; 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))");
        if (L->kind == NET_ATTENTION) {
            int64_t c = pl->out[i].d[2];
            sb_printf(b, "; heads %d of size %lld: q, k, v = the input's three thirds of the last dimension, "
                         "head h of each its columns [h d, (h + 1) d); per sample and head, scores = q k^T / "
                         "sqrt(%lld) [T, T]", L->groups, (long long)(c / L->groups), (long long)(c / L->groups));
            if (L->k & NET_ATTN_CAUSAL) sb_puts(b, ", causal mask (a key after the query gets -inf)");
            sb_puts(b, (L->k & NET_ATTN_RELU) ? ", then relu(scores)" : ", then softmax over the keys");
            sb_puts(b, ", times v [T, d]; head h's output is columns [h d, (h + 1) d) of the result");
        }
        if (L->kind == NET_TOKENS) sb_puts(b, "; x.view(N, C, H * W).transpose(1, 2)");
        if (L->kind == NET_UNTOKENS) sb_puts(b, "; x.transpose(1, 2).view(N, C, H, W)");
        if (L->kind == NET_SAVE) sb_puts(b, "; skip = this tensor");
        if (L->kind == NET_SWAP) sb_puts(b, "; continue from the skip, which keeps this tensor");
        if (L->kind == NET_ADD) sb_puts(b, "; this tensor + skip");
        if (L->kind == NET_ATTENTION && (L->k & NET_ATTN_SEQ_FIRST))
            sb_puts(b, "; batch_first=False: the sequence is dimension 0 and dimension 1 the batch (scores "
                       "are [N, N] per position and head)");
        if (L->kind == NET_UNFOLD)
            sb_printf(b, "; x.unfold(2, %d, %d).unfold(3, %d, %d).reshape(N, -1, C * %d): the flat order "
                         "(c, h / %d, w / %d, h %% %d, w %% %d) cut into rows", L->k, L->k, L->k, L->k,
                      L->k * L->k, L->k, L->k, L->k, L->k);
        if (L->kind == NET_CLS) sb_puts(b, "; torch.cat((token.expand(N, -1, -1), x), dim 1) (x [N, C] as one token)");
        if (L->kind == NET_POS) sb_puts(b, "; x + embedding (broadcast over N)");
        if (L->kind == NET_FIRST_TOKEN) sb_puts(b, "; x[:, 0]");
        if (L->kind == NET_GELU) sb_puts(b, "; 0.5 x (1 + erf(x / sqrt(2)))");
        if (L->kind == NET_WINDOW_MLP) {
            int64_t side = net_side(pl->in[i].d[1]);
            sb_printf(b, "; map %lld x %lld, window %d, shift %d, heads %d of %lld channels", (long long)side,
                      (long long)side, L->k, L->s, L->groups, (long long)(pl->in[i].d[2] / L->groups));
            if (L->s)
                sb_printf(b, ": the map padded with zeros, %d rows and columns before and %d after (F.pad), ",
                          L->k - L->s, L->s);
            else
                sb_puts(b, ": ");
            sb_puts(b, "cut into windows (window_partition), per window and head y[i] = sum over j of "
                       "weight[h k^2 + i, j] x[j] + bias[h k^2 + i] over its k^2 tokens i, j (row-major in the "
                       "window) and the head's channels, put back (window_reverse)");
            if (L->s) sb_puts(b, " and the padding cut off");
        }
        if (L->kind == NET_MERGE) sb_puts(b, "; torch.cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], "
                                             "x[:, 1::2, 1::2]], -1) of the map [N, H, W, C]");
        if (L->kind == NET_TOKEN_MEAN) sb_puts(b, "; the mean over dimension 1");
        if (L->kind == NET_WINDOW_ATTN) {
            int64_t side = net_side(pl->in[i].d[1]);
            sb_printf(b, "; map %lld x %lld, window %d, shift %d, heads %d of %lld channels: ", (long long)side,
                      (long long)side, L->k, L->s, L->groups, (long long)(pl->in[i].d[2] / L->groups));
            if (L->s) sb_printf(b, "torch.roll(map, (-%d, -%d), (1, 2)), ", L->s, L->s);
            sb_puts(b, "windows of k x k tokens (window_partition, row-major within the window); qkv = "
                       "x qkv.weight^T + cat(q_bias, zeros, v_bias), q, k, v its thirds, head h columns "
                       "[h d, (h + 1) d); scores = normalize(q) normalize(k)^T (F.normalize, eps 1e-12) * "
                       "exp(min(logit_scale[h], log(100))) + 16 sigmoid(table[r(i, j), h]), table = "
                       "cpb_mlp.2(relu(cpb_mlp.0(coords))) over the (2k - 1)^2 offsets (dy, dx) in [-(k - 1), "
                       "k - 1], row r = (dy + k - 1) (2k - 1) + dx + k - 1 for query i minus key j, "
                       "coords = sign(v) log2(|v| + 1) / log2(8) of v = 8 (dy, dx) / (k - 1)");
            if (L->s)
                sb_printf(b, "; + the shifted-window mask: -100 where query and key lie in different regions of "
                             "the rolled map (rows and columns split at H - %d and H - %d)", L->k, L->s);
            sb_puts(b, "; softmax over the keys, times v, heads side by side, x proj.weight^T + proj.bias; windows "
                       "put back");
            if (L->s) sb_printf(b, " and rolled by (%d, %d)", L->s, L->s);
        }
        for (int q = 0; q < pl->n_params; q++)
            if (pl->param[q].layer == i) put_param(b, &pl->param[q], L->init, L->kind == NET_WINDOW_ATTN);
        sb_puts(b, "\n");
    }
    free(pl);
    return 0;
}
