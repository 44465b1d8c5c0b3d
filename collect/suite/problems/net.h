/* net.h - level-3 problems as data: a whole network written as a layer
 * program, a list of layers applied one after the other to a current
 * tensor, with one skip slot for residual connections.  Pure C: the spec
 * tables (l3_net.c), the prompt (prompt.c), input generation (gen.cu) and
 * the CUDA interpreter (net.cu) share it.
 *
 * A problem has two inputs: x, as KernelBench's get_inputs() draws it,
 * and `params`, every parameter of the model packed into one float32
 * tensor (the worker passes at most 64 tensors; ResNets have hundreds of
 * parameters).  The packed layout is the program's layers in order, each
 * layer's weight then its bias, each tensor contiguous and row-major in
 * PyTorch's shape, with no padding between them.  The tables write the
 * layers in the order the model registers its parameters, so that the
 * layout is also PyTorch's named_parameters() order; where that order
 * differs from the order the model uses them (a DenseNet registers all its
 * dense blocks before all its transition layers, though it runs them
 * interleaved; named_parameters() lists a module's own parameters, such as
 * ViT's positional embedding and cls token, before its children's; a
 * transformer layer registers its norms after its feed-forward layers),
 * the layers' `order` says where their parameters go.  Each part is drawn
 * from its own default initialisation (net_plan_make lists the parts).
 *
 * Training mode, as KernelBench evaluates (it never calls eval()):
 * BatchNorm2d normalises with the batch's statistics (biased variance);
 * its running statistics are buffers, not outputs, and are not modelled.
 * Dropout in KernelBench's models has p = 0.0, which is the identity in
 * training mode too, so NET_DROPOUT moves nothing.
 *
 * Transformer layers work on token tensors [N, T, C]: a linear layer maps
 * the last dimension; an attention layer takes the packed q, k, v that one
 * linear layer makes (minGPT's c_attn, nn.MultiheadAttention's in_proj,
 * whose weights are laid out alike: q's rows, then k's, then v's) and
 * gives the heads' outputs side by side, ready for the output projection.
 */
#ifndef KBV_NET_H
#define KBV_NET_H

#include <stddef.h>
#include <stdint.h>

#include "suite.h"

#ifdef __cplusplus
extern "C" {
#endif

enum net_kind {
    NET_END = 0,
    NET_LINEAR,     /* y = x W^T (+ b): W [out, in], b [out]; x is [N, in] */
    NET_CONV2D,     /* W [out, Cin / groups, k, k] (+ b [out]); stride s, padding p */
    NET_BN2D,       /* BatchNorm2d with batch statistics, eps; weight 1, bias 0 */
    NET_RELU,
    NET_MAXPOOL2D,  /* window k, stride s, padding p (implicit -inf), floor mode */
    NET_GAP,        /* AdaptiveAvgPool2d((1, 1)): [N, C, H, W] -> [N, C, 1, 1] */
    NET_FLATTEN,    /* [N, ...] -> [N, everything else] (a view: no data moves) */
    NET_DROPOUT,    /* Dropout(p = 0.0): the identity */
    NET_SAVE,       /* skip = current (the identity branch of a residual block) */
    NET_SWAP,       /* exchange current and skip (to run a downsample branch) */
    NET_ADD,        /* current = current + skip (shapes must agree) */
    NET_AVGPOOL2D,  /* window k, stride s, padding p (counted in the divisor), floor mode */
    NET_RELU6,      /* min(max(x, 0), 6) */
    NET_SIGMOID,    /* 1 / (1 + exp(-x)) */
    /* The stack of saved tensors (at most NET_STACK_MAX), for branches
     * whose outputs are concatenated (Inception, DenseNet, SqueezeNet's
     * Fire module, U-Net's skip connections); independent of the skip. */
    NET_PUSH,       /* push the current tensor (it stays current) */
    NET_EXCHANGE,   /* exchange the current tensor with the top of the stack */
    NET_CONCAT,     /* current = cat([the top k entries, oldest first, current], dim 1); pops k */
    NET_SHUFFLE,    /* channel shuffle in `groups` groups: [N, g, C/g, H, W] -> transpose(1, 2) */
    NET_CONVT2D,    /* ConvTranspose2d: W [Cin, out / groups, k, k] (+ b [out]); stride s,
                       padding p, no output padding: Hout = (H - 1) s - 2 p + k */
    NET_SOFTMAX,    /* softmax along the last dimension */
    /* Transformers: token tensors [N, T, C] (a linear layer and the
     * elementwise layers work over the last dimension of them too). */
    NET_LAYERNORM,  /* LayerNorm over the last dimension, eps; weight 1, bias 0 */
    NET_GELU_TANH,  /* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (minGPT's NewGELU) */
    NET_ATTENTION,  /* [N, T, 3C] (q, k, v side by side) -> [N, T, C]: `groups`
                       heads of C / heads; scores q k^T / sqrt(C / heads),
                       as the flags in `k` say; the heads' outputs side by side */
    NET_TOKENS,     /* [N, C, H, W] -> [N, H W, C]: x.view(N, C, H W).transpose(1, 2) */
    NET_UNTOKENS,   /* [N, H W, C] -> [N, C, H, W], H and W those of the last NET_TOKENS */
    NET_UNFOLD,     /* [N, C, H, W] -> [N, (H / k) (W / k), C k k]: x.unfold(2, k, k).unfold(3, k, k)
                       .reshape(N, -1, C k k), its elements in the order (c, h / k, w / k, h % k, w % k) */
    NET_CLS,        /* prepend a learned token [1, 1, C]: [N, T, C] -> [N, T + 1, C] ([N, C] is one token) */
    NET_POS,        /* add a learned [1, T, C] */
    NET_FIRST_TOKEN,/* x[:, 0]: [N, T, C] -> [N, C] */
    NET_GELU,       /* GELU, erf form (nn.GELU()) */
    /* Swin MLP: tokens [N, H W, C] of a square map (H = W). */
    NET_WINDOW_MLP, /* SwinMLPBlock's spatial MLP: windows of k x k tokens (the map padded
                       with zeros by k - s before and s after when the shift s > 0), per
                       head (`groups` heads of C / heads channels) a k^2 x k^2 mixing of
                       the window's tokens with a bias (Conv1d(heads k^2, heads k^2, 1,
                       groups=heads)), the windows put back and the padding cut off */
    NET_MERGE,      /* PatchMerging's gather: [N, H W, C] -> [N, H W / 4, 4 C], cat of
                       x[0::2, 0::2], x[1::2, 0::2], x[0::2, 1::2], x[1::2, 1::2] */
    NET_TOKEN_MEAN, /* the mean over the tokens: [N, T, C] -> [N, C] */
    NET_WINDOW_ATTN,/* Swin V2's window attention branch on tokens of a square map: the map
                       rolled by -s (s > 0), windows of k x k, qkv (no bias) + (q_bias, 0,
                       v_bias), cosine scores times exp(min(logit_scale, log 100)) per head
                       (`groups` heads), + 16 sigmoid(the position-bias MLP's table), the
                       shifted windows' -100 mask, softmax, times v, proj, windows put
                       back and rolled by +s.  Parts, in named_parameters() order:
                       logit_scale, q_bias, v_bias, cpb_mlp.0.weight, cpb_mlp.0.bias,
                       cpb_mlp.2.weight, qkv.weight, proj.weight, proj.bias (is_bias 0-8) */
    NET_KIND_COUNT
};

typedef struct {
    int kind;
    int out;        /* output features (linear) or channels (conv) */
    int k, s, p;    /* window, stride, padding (conv, pools); concat: the
                       entries it pops; attention: its NET_ATTN_* flags */
    int bias;       /* linear and conv: 1 when the layer has a bias */
    int groups;     /* conv: 0 or 1 for a dense convolution, else the groups
                       (the input channels for a depthwise one); shuffle:
                       its groups; attention: the heads */
    int init;       /* linear, conv, cls and pos: how the model initialises them (net_init) */
    int ceil;       /* max pool: 1 for ceil_mode=True (a last window may start
                       inside the input and run past its end) */
    int order;      /* where its parameters go: the plan lists (and packs)
                       the parts by order, then by place in the program, a
                       stable sort key (0 everywhere: program order).  For
                       models that register a module before modules that
                       run before it (a DenseNet's dense blocks before its
                       transitions, ViT's pos and cls before its patch
                       embedding, a transformer layer's norms after its
                       feed-forward layers). */
} net_layer;

/* What an attention layer does with its scores [T, T] per (sample, head). */
enum net_attn_flags {
    NET_ATTN_CAUSAL = 1,    /* masked_fill(key after query, -inf) */
    NET_ATTN_RELU = 2,      /* relu(scores) instead of softmax over the keys */
    NET_ATTN_SEQ_FIRST = 4  /* the input is [T, N, 3C] (batch_first=False): attend over dim 0 */
};

/* The initialisation of a linear or conv layer: PyTorch's default, or what
 * a model sets itself (MobileNetV2: kaiming_normal_ with mode fan_out for
 * convolutions, N(0, 0.01) for linear weights, zero biases). */
enum net_init {
    NET_INIT_DEFAULT = 0,   /* weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
    NET_INIT_KAIMING_OUT,   /* weight N(0, 2 / fan_out), fan_out = out k^2; bias 0 */
    NET_INIT_NORMAL_001,    /* weight N(0, 0.01^2); bias 0 */
    NET_INIT_XAVIER_ZERO,   /* weight U(-a, a), a = sqrt(6 / (fan_in + fan_out)); bias 0
                               (nn.MultiheadAttention's in_proj) */
    NET_INIT_DEFAULT_ZERO,  /* the default weight; bias 0 (its out_proj) */
    NET_INIT_RANDN,         /* cls and pos: torch.randn */
    NET_INIT_ZEROS          /* cls and pos: torch.zeros */
};

#define NET_MAX_LAYERS 1024
#define NET_STACK_MAX 8

typedef struct {
    int op;                    /* the problem's op code */
    int n_layers;
    const net_layer *layers;
    double eps;                /* batch norm */
} net_spec;

/* A tensor shape of the walk: [N, F], [N, T, C] or [N, C, H, W]. */
typedef struct {
    int ndim;
    int64_t d[4];
} net_shape;

/* One parameter tensor inside the packed `params` input. */
typedef struct {
    int layer;              /* index in the program */
    int is_bias;            /* 0: weight, 1: bias; NET_WINDOW_ATTN: its part, 0-8 */
    int64_t offset, count;  /* in floats, from the start of params */
    net_shape shape;        /* PyTorch's shape (ndim 1, 2 or 4) */
    suite_gen gen;          /* its default initialisation */
} net_param;

/* Everything the walk of a program over an input shape works out. */
typedef struct {
    net_shape in[NET_MAX_LAYERS];    /* the current tensor before layer i */
    net_shape out[NET_MAX_LAYERS];   /* and after it */
    net_param param[2 * NET_MAX_LAYERS];
    int n_params;
    int64_t n_param_floats;          /* the length of params */
    net_shape result;                /* the output */
    double flops;                    /* as the header of l3_net.c defines them */
    int has_conv;                    /* needs cuDNN */
    int stack_most;                  /* the deepest the stack gets */
} net_plan;

/* The spec of a network op, or NULL. */
const net_spec *suite_net(int op);
/* The spec of a problem whose op is a network's, or NULL. */
const net_spec *suite_net_of(const suite_problem *p);

/* Walks sp over an input of shape x (ndim 2 to 4): shapes, the packed
 * parameter layout and the FLOPs.  0, or -1 with the reason in why (a
 * layer that does not fit the shape before it, a skip used before it is
 * saved, a stack that overflows or is popped empty, a program longer than
 * NET_MAX_LAYERS).  plan is the caller's
 * (about 260 KB: allocate it rather than put it on the stack). */
int net_plan_make(const net_spec *sp, const int64_t *x, int ndim, net_plan *plan, char *why,
                  size_t why_len);

/* Part `part` (0 weight, 1 bias; net_param's is_bias) of layer l in pl,
 * or NULL. */
const net_param *net_param_of(const net_plan *pl, int l, int part);

/* 1 when L is a convolution over disjoint patches (dense, stride equal to
 * a kernel above 1, no padding): a patch embedding, which needs no cuDNN. */
int net_is_patch_conv(const net_layer *L);

/* Swin V2's position-bias MLP: hidden width, and its table of (2k - 1)^2
 * relative positions (dy, dx), each input log-spaced:
 * sign(v) log2(|v| + 1) / 3 of v = 8 d / (k - 1). */
#define NET_CPB_HIDDEN 512

/* The side of a square map of `tokens` tokens, or 0 when it is not square. */
int64_t net_side(int64_t tokens);

/* The layer's name as the prompt writes it ("conv2d", "batchnorm2d"). */
const char *net_kind_name(int kind);

/* The layer program of a network problem in words, one numbered line per
 * layer with its shapes, settings and the place of its parameters in
 * params, appended to b; -1 (and nothing appended) when p is not a
 * network or its program does not walk. */
int net_describe(sbuf *b, const suite_problem *p);

#ifdef __cplusplus
}
#endif

#endif
