/* test_suite_net.c - the level-3 layer programs (problems/net.h) against
 * their problems: every network op has a program that walks over its input
 * shape to its output shape, the packed parameter layout is contiguous and
 * adds up to the params tensor, the FLOPs and min_bytes in the table are
 * the walk's, known parameter counts of the architectures come out (worked
 * out here by hand, not by the walk), and malformed programs are refused
 * with a reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "suite.h"
#include "ops.h"
#include "l3model.h"
#include "net.h"

/* A layer program's op; the models of fixed structure (l3model.h, tested in
 * test_suite_model.c) take a range inside the net range. */
static int is_net(const suite_problem *p)
{
    if (p->op >= OP_MODEL_FIRST && p->op <= OP_MODEL_LAST) return 0;
    return (p->op >= OP_NET_FIRST && p->op <= OP_NET_LAST) ||
           (p->op >= OP_CONV_NET_FIRST && p->op <= OP_CONV_NET_LAST);
}

static net_plan *walk(const suite_problem *p)
{
    net_plan *pl = calloc(1, sizeof *pl);
    assert_non_null(pl);
    char why[200] = "";
    const net_spec *sp = suite_net_of(p);
    if (!sp) fail_msg("%s: no layer program", p->id);
    if (net_plan_make(sp, p->inputs[0].shape, p->inputs[0].ndim, pl, why, sizeof why))
        fail_msg("%s: %s", p->id, why);
    return pl;
}

static void test_every_network_walks_to_its_output(void **state)
{
    (void)state;
    int nets = 0;
    for (int i = 0; i < suite_count(); i++) {
        const suite_problem *p = suite_get(i);
        if (!is_net(p)) {
            if (p->level == 3) assert_non_null(suite_model_of(p));
            assert_null(suite_net_of(p));
            continue;
        }
        nets++;
        assert_int_equal(p->level, 3);
        const net_spec *sp = suite_net_of(p);
        assert_non_null(sp);
        assert_int_equal(sp->op, p->op);
        /* x, then the packed parameters */
        assert_int_equal(p->n_inputs, 2);
        assert_int_equal(p->inputs[0].role, SUITE_ROLE_INPUT);
        assert_int_equal(p->inputs[1].role, SUITE_ROLE_PARAM);
        assert_int_equal(p->inputs[1].gen.kind, SUITE_GEN_PACKED);
        assert_int_equal(p->inputs[1].ndim, 1);
        net_plan *pl = walk(p);
        /* the output shape */
        assert_int_equal(p->n_outputs, 1);
        const suite_tensor *o = &p->outputs[0];
        assert_int_equal(pl->result.ndim, o->ndim);
        for (int a = 0; a < o->ndim; a++) assert_int_equal(pl->result.d[a], o->shape[a]);
        /* the shapes chain: each layer's output from its input by the
         * layer's own formula (PyTorch's, written out here again) */
        net_shape skip = { 0, { 0, 0, 0, 0 } }, stack[NET_STACK_MAX];
        int depth = 0;
        for (int l = 0; l < sp->n_layers; l++) {
            const net_layer *L = &sp->layers[l];
            net_shape in = pl->in[l], want = in;
            if (l > 0) assert_memory_equal(&in, &pl->out[l - 1], sizeof in);
            switch (L->kind) {
            case NET_LINEAR: want.d[in.ndim - 1] = L->out; break;
            case NET_ATTENTION: want.d[2] = in.d[2] / 3; break;
            case NET_UNFOLD:
                want.ndim = 3;
                want.d[1] = (in.d[2] / L->k) * (in.d[3] / L->k);
                want.d[2] = in.d[1] * L->k * L->k;
                want.d[3] = 0;
                break;
            case NET_CLS:
                want.ndim = 3;
                want.d[1] = in.ndim == 2 ? 2 : in.d[1] + 1;
                want.d[2] = in.d[in.ndim - 1];
                break;
            case NET_MERGE:
                want.d[1] = in.d[1] / 4;
                want.d[2] = in.d[2] * 4;
                break;
            case NET_FIRST_TOKEN: case NET_TOKEN_MEAN:
                want.ndim = 2;
                want.d[1] = in.d[2];
                want.d[2] = 0;
                break;
            case NET_TOKENS:
                want.ndim = 3;
                want.d[1] = in.d[2] * in.d[3];
                want.d[2] = in.d[1];
                want.d[3] = 0;
                break;
            case NET_UNTOKENS: {
                /* back to the shape of the image the tokens came from */
                int t = l - 1;
                while (t >= 0 && sp->layers[t].kind != NET_TOKENS) t--;
                assert_true(t >= 0);
                want = pl->in[t];
                want.d[1] = in.d[2];
                break;
            }
            case NET_CONV2D: want.d[1] = L->out; /* fall through */
            case NET_MAXPOOL2D: case NET_AVGPOOL2D:
                for (int a = 2; a < 4; a++) {
                    int64_t span = in.d[a] + 2 * L->p - L->k;
                    want.d[a] = span / L->s + 1;
                    /* ceil mode: one more window where the floor leaves
                     * input over and that window starts inside it */
                    if (L->ceil && span % L->s && want.d[a] * L->s < in.d[a] + L->p) want.d[a]++;
                }
                break;
            case NET_CONVT2D:
                want.d[1] = L->out;
                want.d[2] = (in.d[2] - 1) * L->s - 2 * L->p + L->k;
                want.d[3] = (in.d[3] - 1) * L->s - 2 * L->p + L->k;
                break;
            case NET_PUSH:
                assert_true(depth < NET_STACK_MAX);
                stack[depth++] = in;
                break;
            case NET_EXCHANGE:
                assert_true(depth > 0);
                want = stack[depth - 1];
                stack[depth - 1] = in;
                break;
            case NET_CONCAT:
                assert_true(L->k >= 1 && L->k <= depth);
                for (int e = depth - L->k; e < depth; e++) want.d[1] += stack[e].d[1];
                depth -= L->k;
                break;
            case NET_GAP: want.d[2] = want.d[3] = 1; break;
            case NET_FLATTEN:
                want.ndim = 2;
                want.d[1] = in.ndim == 4 ? in.d[1] * in.d[2] * in.d[3] : in.d[1];
                want.d[2] = want.d[3] = 0;
                break;
            case NET_SAVE: skip = in; break;
            case NET_SWAP: want = skip; skip = in; break;
            case NET_ADD: assert_memory_equal(&skip, &in, sizeof in); break;
            default: break;
            }
            if (memcmp(&want, &pl->out[l], sizeof want) != 0)
                fail_msg("%s: layer %d (%s) ends in another shape", p->id, l + 1, net_kind_name(L->kind));
        }
        /* the layout: contiguous from 0 in the order the parts are listed
         * (the layers' order, then program order: checked below), each
         * part its shape's size, the whole the params tensor */
        int64_t at = 0;
        for (int q = 0; q < pl->n_params; q++) {
            const net_param *pp = &pl->param[q];
            if (pp->offset != at) fail_msg("%s: part %d at %lld, expected %lld", p->id, q,
                                           (long long)pp->offset, (long long)at);
            at += pp->count;
        }
        assert_int_equal(at, pl->n_param_floats);
        for (int q = 0; q < pl->n_params; q++) {
            const net_param *pp = &pl->param[q];
            int64_t n = 1;
            for (int a = 0; a < pp->shape.ndim; a++) n *= pp->shape.d[a];
            assert_int_equal(n, pp->count);
            if (q > 0) {
                /* by the layers' order, then in program order, weight before bias */
                const net_param *pq = &pl->param[q - 1];
                int o1 = sp->layers[pq->layer].order, o2 = sp->layers[pp->layer].order;
                assert_true(o2 > o1 || (o2 == o1 && (pp->layer > pq->layer ||
                                                     (pp->layer == pq->layer && pp->is_bias))));
            }
            int kind = sp->layers[pp->layer].kind;
            if (kind == NET_CLS || kind == NET_POS) {
                /* torch.randn or torch.zeros, as the model draws them */
                if (sp->layers[pp->layer].init == NET_INIT_ZEROS) {
                    assert_int_equal(pp->gen.kind, SUITE_GEN_CONST);
                    assert_true(pp->gen.a == 0.0);
                } else {
                    assert_int_equal(pp->gen.kind, SUITE_GEN_NORMAL);
                    assert_true(pp->gen.a == 0.0 && pp->gen.b == 1.0);
                }
            } else if (kind == NET_WINDOW_ATTN) {
                /* logit_scale log(10), q_bias and v_bias 0, then Linear
                 * defaults: cpb_mlp.0 (fan_in 2) weight and bias, cpb_mlp.2
                 * (fan_in 512), qkv and proj (fan_in C) */
                int part = pp->is_bias;
                int64_t C = pl->in[pp->layer].d[2];
                double fan = part <= 4 ? 2.0 : part == 5 ? 512.0 : (double)C;
                if (part <= 2) {
                    assert_int_equal(pp->gen.kind, SUITE_GEN_CONST);
                    assert_true(pp->gen.a == (part == 0 ? log(10.0) : 0.0));
                } else {
                    assert_int_equal(pp->gen.kind, SUITE_GEN_UNIFORM);
                    double k2 = pp->gen.b * pp->gen.b * fan;
                    assert_true(pp->gen.a == -pp->gen.b && k2 > 0.999999 && k2 < 1.000001);
                }
            } else if (kind == NET_BN2D || kind == NET_LAYERNORM) {
                assert_int_equal(pp->gen.kind, SUITE_GEN_CONST);
                assert_true(pp->gen.a == (pp->is_bias ? 0.0 : 1.0));
            } else {
                assert_true(kind == NET_LINEAR || kind == NET_CONV2D || kind == NET_CONVT2D ||
                            kind == NET_WINDOW_MLP || kind == NET_WINDOW_ATTN);
                /* U(-k, k), k = 1/sqrt(fan_in): fan_in is the weight's
                 * size over its dimension 0 (Cin / groups k^2; for a
                 * transposed convolution, whose weight is [Cin, Cout /
                 * groups, k, k], Cout / groups k^2, as PyTorch computes it) */
                int64_t fan = 1, fan_out = 1;
                const net_param *w = pp->is_bias ? pp - 1 : pp;
                for (int a = 1; a < w->shape.ndim; a++) fan *= w->shape.d[a];
                fan_out = w->shape.d[0] * (w->shape.ndim == 4 ? w->shape.d[2] * w->shape.d[3] : 1);
                int init = sp->layers[pp->layer].init;
                if (init != NET_INIT_DEFAULT && pp->is_bias) {
                    /* a model's own zero bias */
                    assert_int_equal(pp->gen.kind, SUITE_GEN_CONST);
                    assert_true(pp->gen.a == 0.0);
                } else if (init == NET_INIT_KAIMING_OUT) {
                    /* kaiming_normal_, mode fan_out: N(0, 2 / fan_out) */
                    assert_int_equal(pp->gen.kind, SUITE_GEN_NORMAL);
                    double v = pp->gen.b * pp->gen.b * (double)fan_out;
                    assert_true(pp->gen.a == 0.0 && v > 1.999999 && v < 2.000001);
                } else if (init == NET_INIT_NORMAL_001) {
                    assert_int_equal(pp->gen.kind, SUITE_GEN_NORMAL);
                    assert_true(pp->gen.a == 0.0 && pp->gen.b == 0.01);
                } else if (init == NET_INIT_XAVIER_ZERO) {
                    /* xavier_uniform_: U(-a, a), a^2 = 6 / (fan_in + fan_out) */
                    assert_int_equal(pp->gen.kind, SUITE_GEN_UNIFORM);
                    double a2 = pp->gen.b * pp->gen.b * (double)(fan + fan_out);
                    assert_true(pp->gen.a == -pp->gen.b && a2 > 5.999999 && a2 < 6.000001);
                } else {
                    assert_int_equal(pp->gen.kind, SUITE_GEN_UNIFORM);
                    assert_true(pp->gen.a == -pp->gen.b);
                    double k2 = pp->gen.b * pp->gen.b * (double)fan;
                    assert_true(k2 > 0.999999 && k2 < 1.000001);
                }
            }
        }
        assert_int_equal(pl->n_param_floats, p->inputs[1].shape[0]);
        /* the table's numbers are the walk's */
        if (pl->flops != p->flops) fail_msg("%s: flops %.1f, the walk %.1f", p->id, p->flops, pl->flops);
        double bytes = 4.0 * ((double)suite_numel(&p->inputs[0]) + (double)pl->n_param_floats +
                              (double)suite_numel(o));
        assert_true(bytes == p->min_bytes);
        /* convolutions need cuDNN, MLPs not */
        assert_int_equal(pl->has_conv, OP_NEEDS_CUDNN(p->op));
        assert_true(p->uses_tf32);
        free(pl);
    }
    assert_true(nets >= 36);
}

static int64_t linear_params(int64_t in, int64_t out)
{
    return in * out + out;
}

static int64_t conv_params(int64_t cin, int64_t cout, int64_t k, int bias)
{
    return cin * cout * k * k + (bias ? cout : 0);
}

/* An MBConv block: the expansion (unless the ratio is 1), the depthwise
 * convolution and the projection, each with a batch norm. */
static int64_t mbconv_params(int64_t in, int64_t out, int64_t k, int64_t e)
{
    int64_t h = in * e;
    return (e != 1 ? in * h + 2 * h : 0) + h * k * k + 2 * h + h * out + 2 * out;
}

/* GoogLeNet's Inception module: four branches, every convolution with a
 * bias. */
static int64_t inception_params(int64_t in, int64_t o1, int64_t r3, int64_t o3, int64_t r5, int64_t o5,
                                 int64_t pp)
{
    return conv_params(in, o1, 1, 1) + conv_params(in, r3, 1, 1) + conv_params(r3, o3, 3, 1) +
           conv_params(in, r5, 1, 1) + conv_params(r5, o5, 5, 1) + conv_params(in, pp, 1, 1);
}

/* A dense block of n layers (bn, then conv3x3 to 32 without a bias) on c0
 * channels, and a transition layer (bn, conv1x1 without a bias). */
static int64_t dense_params(int64_t c0, int n)
{
    int64_t t = 0;
    for (int i = 0; i < n; i++) t += 2 * (c0 + 32 * i) + conv_params(c0 + 32 * i, 32, 3, 0);
    return t;
}

static int64_t transition_params(int64_t c, int64_t o)
{
    return 2 * c + conv_params(c, o, 1, 0);
}

/* A Fire module: squeeze 1x1, expand 1x1 and 3x3, all with a bias. */
static int64_t fire_params(int64_t in, int64_t sq, int64_t e1, int64_t e3)
{
    return conv_params(in, sq, 1, 1) + conv_params(sq, e1, 1, 1) + conv_params(sq, e3, 3, 1);
}

/* A ShuffleNet unit with 3 groups: grouped 1x1 (weight [m, in / 3]), bn,
 * depthwise 3x3, bn, grouped 1x1 (weight [out, m / 3]), bn, and the 1x1
 * shortcut with its bn when the width changes. */
static int64_t shuffle_params(int64_t in, int64_t out)
{
    int64_t m = out / 4;
    return m * (in / 3) + 2 * m + m * 9 + 2 * m + out * (m / 3) + 2 * out +
           (in != out ? in * out + 2 * out : 0);
}

/* U-Net's double convolution (conv3x3 with bias and bn, twice) and its
 * transposed convolution (weight [in, out, 2, 2] and a bias). */
static int64_t dconv_params(int64_t in, int64_t c)
{
    return conv_params(in, c, 3, 1) + 2 * c + conv_params(c, c, 3, 1) + 2 * c;
}

static int64_t up_params(int64_t in, int64_t out)
{
    return in * out * 4 + out;
}

/* A Swin MLP block of width c and h heads (windows of 7). */
static int64_t swin_block(int64_t c, int64_t h)
{
    return 4 * c + h * 49 * 49 + h * 49 + linear_params(c, 4 * c) + linear_params(4 * c, c);
}

/* A Swin V2 block of width c and h heads (windows of 7): norm1, the
 * attention (logit_scale, q_bias, v_bias, cpb_mlp 2 -> 512 -> h without
 * the last bias, qkv without a bias, proj), norm2, fc1, fc2. */
static int64_t swin2_block(int64_t c, int64_t h)
{
    return 2 * c + h + 2 * c + linear_params(2, 512) + 512 * h + 3 * c * c + linear_params(c, c) + 2 * c +
           linear_params(c, 4 * c) + linear_params(4 * c, c);
}

/* Parameter counts of the architectures, from their layer sizes. */
static void test_known_parameter_counts(void **state)
{
    (void)state;
    struct { const char *id; int64_t want; } known[] = {
        { "L3_001_mlp", linear_params(16384, 16384) * 2 + linear_params(16384, 8192) },
        { "L3_003_deepnarrowmlp", linear_params(8192, 1024) + 15 * linear_params(1024, 1024) +
                                  linear_params(1024, 8192) },
        { "L3_004_lenet5", conv_params(1, 6, 5, 1) + conv_params(6, 16, 5, 1) + linear_params(400, 120) +
                           linear_params(120, 84) + linear_params(84, 20) },
        /* conv1, bn1, conv2, bn2, downsample conv and bn */
        { "L3_008_resnetbasicblock", conv_params(3, 64, 3, 0) + 128 + conv_params(64, 64, 3, 0) + 128 +
                                     conv_params(3, 64, 1, 0) + 128 },
        /* torchvision's published counts */
        { "L3_009_resnet18", 11689512 },
        { "L3_010_resnet101", 44549160 },
        /* bn, then the 1x1 convolution without a bias */
        { "L3_013_densenet121transitionlayer", 2 * 32 + conv_params(32, 64, 1, 0) },
        /* the commonly published count of MobileNetV1 (alpha 1, 1000 classes) */
        { "L3_019_mobilenetv1", 4231976 },
        /* torchvision's mobilenet_v2 count: KernelBench's drops only the residual sums */
        { "L3_020_mobilenetv2", 3504872 },
        /* expand 1x1, depthwise 5x5, project 1x1, each with a batch norm */
        { "L3_021_efficientnetmbconv", conv_params(112, 672, 1, 0) + 2 * 672 + 672 * 25 + 2 * 672 +
                                       conv_params(672, 192, 1, 0) + 2 * 192 },
        { "L3_022_efficientnetb0", conv_params(3, 32, 3, 0) + 64 + mbconv_params(32, 16, 3, 1) +
                                   mbconv_params(16, 24, 3, 6) + mbconv_params(24, 24, 3, 6) +
                                   mbconv_params(24, 40, 5, 6) + mbconv_params(40, 40, 5, 6) +
                                   mbconv_params(40, 80, 3, 6) + mbconv_params(80, 80, 3, 6) +
                                   mbconv_params(80, 112, 5, 6) + mbconv_params(112, 112, 5, 6) +
                                   mbconv_params(112, 192, 5, 6) + 2 * mbconv_params(192, 192, 5, 6) +
                                   mbconv_params(192, 320, 3, 6) + conv_params(320, 1280, 1, 0) + 2 * 1280 +
                                   linear_params(1280, 1000) },
        /* KernelBench's B1: every block expands (a ratio of 1 too), 3x3 depthwise */
        { "L3_023_efficientnetb1", conv_params(3, 32, 3, 0) + 64 + mbconv_params(32, 16, 3, 1) +
                                   32 * 32 + 2 * 32 + mbconv_params(16, 24, 3, 6) + mbconv_params(24, 40, 3, 6) +
                                   mbconv_params(40, 80, 3, 6) + mbconv_params(80, 112, 3, 6) +
                                   mbconv_params(112, 192, 3, 6) + mbconv_params(192, 320, 3, 6) +
                                   conv_params(320, 1280, 1, 0) + 2 * 1280 + linear_params(1280, 1000) },
        /* KernelBench's B2: expansion, depthwise, squeeze (C -> C/4) and
         * excite (C/4 -> C) 1x1 convolutions without biases, projection */
        { "L3_024_efficientnetb2", conv_params(3, 32, 3, 0) + 64 +
                                   mbconv_params(32, 96, 3, 3) + 2 * 96 * 24 + mbconv_params(96, 144, 3, 6) +
                                   2 * 576 * 144 + mbconv_params(144, 192, 3, 6) + 2 * 864 * 216 +
                                   mbconv_params(192, 288, 3, 6) + 2 * 1152 * 288 +
                                   mbconv_params(288, 384, 3, 6) + 2 * 1728 * 432 + conv_params(384, 1408, 1, 0) +
                                   2 * 1408 + linear_params(1408, 1000) },
        /* three stages of two convolutions with bias and batch norms, fc */
        { "L3_027_regnet", conv_params(3, 64, 3, 1) + conv_params(64, 64, 3, 1) + 4 * 64 +
                           conv_params(64, 128, 3, 1) + conv_params(128, 128, 3, 1) + 4 * 128 +
                           conv_params(128, 256, 3, 1) + conv_params(256, 256, 3, 1) + 4 * 256 +
                           linear_params(256, 10) },
        { "L3_006_googlenetinceptionmodule", inception_params(480, 192, 96, 208, 16, 48, 64) },
        { "L3_007_googlenetinceptionv1", conv_params(3, 64, 7, 1) + conv_params(64, 64, 1, 1) +
                                         conv_params(64, 192, 3, 1) +
                                         inception_params(192, 64, 96, 128, 16, 32, 32) +
                                         inception_params(256, 128, 128, 192, 32, 96, 64) +
                                         inception_params(480, 192, 96, 208, 16, 48, 64) +
                                         inception_params(512, 160, 112, 224, 24, 64, 64) +
                                         inception_params(512, 128, 128, 256, 24, 64, 64) +
                                         inception_params(512, 112, 144, 288, 32, 64, 64) +
                                         inception_params(528, 256, 160, 320, 32, 128, 128) +
                                         inception_params(832, 256, 160, 320, 32, 128, 128) +
                                         inception_params(832, 384, 192, 384, 48, 128, 128) +
                                         linear_params(1024, 1000) },
        { "L3_014_densenet121denseblock", dense_params(32, 6) },
        { "L3_015_densenet121", conv_params(3, 64, 7, 0) + 128 + dense_params(64, 6) + transition_params(256, 128) +
                                dense_params(128, 12) + transition_params(512, 256) + dense_params(256, 24) +
                                transition_params(1024, 512) + dense_params(512, 16) + 2 * 1024 +
                                linear_params(1024, 10) },
        { "L3_016_densenet201", conv_params(3, 64, 7, 0) + 128 + dense_params(64, 6) + transition_params(256, 128) +
                                dense_params(128, 12) + transition_params(512, 256) + dense_params(256, 48) +
                                transition_params(1792, 896) + dense_params(896, 32) + 2 * 1920 +
                                linear_params(1920, 10) },
        { "L3_017_squeezenetfiremodule", fire_params(3, 6, 64, 64) },
        /* torchvision's squeezenet1_0 count */
        { "L3_018_squeezenet", 1248424 },
        { "L3_018_squeezenet", conv_params(3, 96, 7, 1) + fire_params(96, 16, 64, 64) + fire_params(128, 16, 64, 64) +
                               fire_params(128, 32, 128, 128) + fire_params(256, 32, 128, 128) +
                               fire_params(256, 48, 192, 192) + fire_params(384, 48, 192, 192) +
                               fire_params(384, 64, 256, 256) + fire_params(512, 64, 256, 256) +
                               conv_params(512, 1000, 1, 1) },
        { "L3_025_shufflenetunit", shuffle_params(240, 480) },
        { "L3_026_shufflenet", conv_params(3, 24, 3, 0) + 48 + shuffle_params(24, 240) + 2 * shuffle_params(240, 240) +
                               shuffle_params(240, 480) + 6 * shuffle_params(480, 480) + shuffle_params(480, 960) +
                               2 * shuffle_params(960, 960) + conv_params(960, 1024, 1, 0) + 2 * 1024 +
                               linear_params(1024, 1000) },
        { "L3_045_unetsoftmax", dconv_params(8, 64) + dconv_params(64, 128) + dconv_params(128, 256) +
                                dconv_params(256, 512) + dconv_params(512, 1024) + up_params(1024, 512) +
                                dconv_params(1024, 512) + up_params(512, 256) + dconv_params(512, 256) +
                                up_params(256, 128) + dconv_params(256, 128) + up_params(128, 64) +
                                dconv_params(128, 64) + conv_params(64, 4, 1, 1) },
        /* in_proj [3C, C] and its bias, out_proj, the layer norm */
        { "L3_031_visionattention", linear_params(128, 384) + linear_params(128, 128) + 2 * 128 },
        /* c_attn, c_proj */
        { "L3_043_mingptcausalattention", linear_params(768, 2304) + linear_params(768, 768) },
        /* ln_1, attention, ln_2, c_fc, c_proj */
        { "L3_044_minigptblock", 2 * 768 + linear_params(768, 2304) + linear_params(768, 768) + 2 * 768 +
                                 linear_params(768, 3072) + linear_params(3072, 768) },
        { "L3_050_reluselfattention", linear_params(768, 2304) },
        /* pos_embedding [1, 197, 512], patch_to_embedding, cls_token, six
         * encoder layers (in_proj, out_proj, linear1, linear2, two norms),
         * mlp_head */
        { "L3_028_visiontransformer", 197 * 512 + linear_params(768, 512) + 512 +
                                      6 * (linear_params(512, 1536) + linear_params(512, 512) +
                                           linear_params(512, 2048) + linear_params(2048, 512) + 4 * 512) +
                                      linear_params(512, 2048) + linear_params(2048, 10) },
        /* patch_embed (conv, norm); per block norm1, spatial_mlp (heads 49 x 49
         * and its bias), norm2, fc1, fc2; PatchMerging's reduction (no bias)
         * and norm; norm; head */
        { "L3_029_swinmlp", conv_params(3, 96, 4, 1) + 2 * 96 + 2 * swin_block(96, 3) + 4 * 96 * 2 * 96 + 8 * 96 +
                            2 * swin_block(192, 6) + 4 * 192 * 2 * 192 + 8 * 192 + 6 * swin_block(384, 12) +
                            4 * 384 * 2 * 384 + 8 * 384 + 2 * swin_block(768, 24) + 2 * 768 +
                            linear_params(768, 1000) },
        /* patch_embed, the stages with PatchMerging V2 (reduction without a
         * bias, norm of 2C), norm, head */
        { "L3_030_swintransformerv2", conv_params(3, 96, 4, 1) + 2 * 96 + 2 * swin2_block(96, 3) +
                                      4 * 96 * 2 * 96 + 4 * 96 + 2 * swin2_block(192, 6) + 4 * 192 * 2 * 192 +
                                      4 * 192 + 6 * swin2_block(384, 12) + 4 * 384 * 2 * 384 + 4 * 384 +
                                      2 * swin2_block(768, 24) + 2 * 768 + linear_params(768, 1000) },
        /* conv1, linear_proj, six encoder layers, cls_token, fc_out */
        { "L3_032_convolutionalvisiontransformer", conv_params(3, 128, 4, 1) + linear_params(8192, 128) +
                                                   6 * (linear_params(128, 384) + linear_params(128, 128) +
                                                        linear_params(128, 512) + linear_params(512, 128) +
                                                        4 * 128) +
                                                   128 + linear_params(128, 1000) },
        { "L3_011_vgg16", 138357544 },
        { "L3_012_vgg19", 143667240 },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const suite_problem *p = suite_find(known[i].id);
        if (!p) fail_msg("%s missing", known[i].id);
        net_plan *pl = walk(p);
        if (pl->n_param_floats != known[i].want)
            fail_msg("%s: %lld parameters, expected %lld", p->id, (long long)pl->n_param_floats,
                     (long long)known[i].want);
        free(pl);
    }
}

/* AlexNet's feature map before the classifier is 256 x 6 x 6, and the
 * basic block's downsample runs on the block's input. */
static void test_intermediate_shapes(void **state)
{
    (void)state;
    const suite_problem *p = suite_find("L3_005_alexnet");
    assert_non_null(p);
    const net_spec *sp = suite_net_of(p);
    net_plan *pl = walk(p);
    int flat = -1;
    for (int l = 0; l < sp->n_layers; l++)
        if (sp->layers[l].kind == NET_FLATTEN) flat = l;
    assert_true(flat > 0);
    assert_int_equal(pl->in[flat].ndim, 4);
    assert_int_equal(pl->in[flat].d[1], 256);
    assert_int_equal(pl->in[flat].d[2], 6);
    assert_int_equal(pl->in[flat].d[3], 6);
    assert_int_equal(pl->out[flat].d[1], 9216);
    free(pl);

    p = suite_find("L3_008_resnetbasicblock");
    sp = suite_net_of(p);
    pl = walk(p);
    for (int l = 0; l < sp->n_layers; l++)
        if (sp->layers[l].kind == NET_SWAP) {
            assert_int_equal(pl->out[l].d[1], 3);   /* back to x */
            assert_int_equal(pl->in[l].d[1], 64);
        }
    free(pl);
}

/* The layers of the stack, ceil-mode pooling, the registration groups and
 * the transposed convolution on the registry's networks. */
static void test_branch_networks(void **state)
{
    (void)state;
    /* SqueezeNet: 512 -> conv7x7/2 -> 253 -> ceil-mode pool 3/2 -> 126
     * (floor mode would give 125), 63, 31 */
    const suite_problem *p = suite_find("L3_018_squeezenet");
    assert_non_null(p);
    const net_spec *sp = suite_net_of(p);
    net_plan *pl = walk(p);
    int64_t want[3][2] = { { 253, 126 }, { 126, 63 }, { 63, 31 } };
    int pools = 0;
    for (int l = 0; l < sp->n_layers; l++)
        if (sp->layers[l].kind == NET_MAXPOOL2D) {
            assert_true(pools < 3);
            assert_int_equal(sp->layers[l].ceil, 1);
            assert_int_equal(pl->in[l].d[2], want[pools][0]);
            assert_int_equal(pl->out[l].d[2], want[pools][1]);
            assert_int_equal(pl->out[l].d[3], want[pools][1]);
            pools++;
        }
    assert_int_equal(pools, 3);
    free(pl);

    /* the Inception module: the four branches' widths add up, the stack
     * is three deep at the concatenation */
    p = suite_find("L3_006_googlenetinceptionmodule");
    pl = walk(p);
    assert_int_equal(pl->stack_most, 3);
    assert_int_equal(pl->result.d[1], 192 + 208 + 48 + 64);
    free(pl);

    /* DenseNet-121: the first transition's batch norm (the 4 stem layers
     * and 36 dense layers into the program) lies after the stem and every
     * dense block, as the model registers them */
    p = suite_find("L3_015_densenet121");
    sp = suite_net_of(p);
    pl = walk(p);
    int first_trans = -1;
    for (int l = 4; l < sp->n_layers && first_trans < 0; l++)
        if (sp->layers[l].order == 2) first_trans = l;
    assert_int_equal(first_trans, 4 + 6 * 6);
    assert_int_equal(sp->layers[first_trans].kind, NET_BN2D);
    assert_int_equal(pl->in[first_trans].d[1], 256);
    int64_t stem = conv_params(3, 64, 7, 0) + 128;
    int64_t blocks = dense_params(64, 6) + dense_params(128, 12) + dense_params(256, 24) + dense_params(512, 16);
    for (int q = 0; q < pl->n_params; q++)
        if (pl->param[q].layer == first_trans && !pl->param[q].is_bias)
            assert_int_equal(pl->param[q].offset, stem + blocks);
    free(pl);

    /* U-Net: the transposed convolutions double the map, the decoder's
     * concatenation puts the upsampled half first */
    p = suite_find("L3_045_unetsoftmax");
    sp = suite_net_of(p);
    pl = walk(p);
    int ups = 0;
    for (int l = 0; l < sp->n_layers; l++)
        if (sp->layers[l].kind == NET_CONVT2D) {
            assert_int_equal(pl->out[l].d[2], 2 * pl->in[l].d[2]);
            assert_int_equal(pl->out[l].d[3], 2 * pl->in[l].d[3]);
            assert_int_equal(pl->out[l].d[1], pl->in[l].d[1] / 2);
            assert_int_equal(sp->layers[l + 1].kind, NET_EXCHANGE);
            assert_int_equal(sp->layers[l + 2].kind, NET_CONCAT);
            assert_int_equal(pl->out[l + 2].d[1], pl->in[l].d[1]);
            ups++;
        }
    assert_int_equal(ups, 4);
    assert_int_equal(pl->stack_most, 4);
    free(pl);
}

static int walks(const net_layer *layers, int n, const int64_t *x, int ndim, char *why, size_t len)
{
    net_spec sp = { OP_NET_FIRST, n, layers, 1e-5 };
    net_plan *pl = calloc(1, sizeof *pl);
    assert_non_null(pl);
    int rc = net_plan_make(&sp, x, ndim, pl, why, len);
    free(pl);
    return rc;
}

static void test_malformed_programs_are_refused(void **state)
{
    (void)state;
    char why[200];
    int64_t img[4] = { 2, 3, 8, 8 }, vec[2] = { 2, 16 };
    const net_layer add_first[] = { { NET_ADD, 0, 0, 0, 0, 0, 0, 0, 0, 0 } };
    assert_int_equal(walks(add_first, 1, img, 4, why, sizeof why), -1);
    assert_non_null(strstr(why, "nothing saved"));
    const net_layer linear_on_map[] = { { NET_LINEAR, 4, 0, 0, 0, 1, 0, 0, 0, 0 } };
    assert_int_equal(walks(linear_on_map, 1, img, 4, why, sizeof why), -1);
    assert_non_null(strstr(why, "layer 1 (linear)"));
    const net_layer conv_on_vec[] = { { NET_CONV2D, 4, 3, 1, 1, 1, 0, 0, 0, 0 } };
    assert_int_equal(walks(conv_on_vec, 1, vec, 2, why, sizeof why), -1);
    /* a residual sum of different shapes */
    const net_layer mismatch[] = { { NET_SAVE, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, { NET_CONV2D, 4, 3, 1, 1, 0, 0, 0, 0, 0 },
                                   { NET_ADD, 0, 0, 0, 0, 0, 0, 0, 0, 0 } };
    assert_int_equal(walks(mismatch, 3, img, 4, why, sizeof why), -1);
    assert_non_null(strstr(why, "layer 3 (add)"));
    /* groups that do not divide the channels */
    const net_layer bad_groups[] = { { NET_CONV2D, 4, 3, 1, 1, 0, 2, 0, 0, 0 } };
    assert_int_equal(walks(bad_groups, 1, img, 4, why, sizeof why), -1);
    assert_non_null(strstr(why, "groups"));
    /* a window larger than the map */
    const net_layer big[] = { { NET_MAXPOOL2D, 0, 9, 1, 0, 0, 0, 0, 0, 0 } };
    assert_int_equal(walks(big, 1, img, 4, why, sizeof why), -1);
    /* and a good one, with flatten and a linear layer after it */
    const net_layer good[] = { { NET_CONV2D, 4, 3, 1, 1, 1, 0, 0, 0, 0 }, { NET_BN2D, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
                               { NET_MAXPOOL2D, 0, 2, 2, 0, 0, 0, 0, 0, 0 }, { NET_FLATTEN, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
                               { NET_LINEAR, 5, 0, 0, 0, 0, 0, 0, 0, 0 } };
    net_spec sp = { OP_NET_FIRST, 5, good, 1e-5 };
    net_plan *pl = calloc(1, sizeof *pl);
    assert_int_equal(net_plan_make(&sp, img, 4, pl, why, sizeof why), 0);
    assert_int_equal(pl->result.ndim, 2);
    assert_int_equal(pl->result.d[1], 5);
    /* conv weight 4*3*9, bias 4, bn 4 + 4, linear 5 * 64 without a bias */
    assert_int_equal(pl->n_params, 5);
    assert_int_equal(pl->n_param_floats, 108 + 4 + 8 + 5 * 64);
    assert_int_equal(pl->param[4].offset, 108 + 4 + 8);
    /* FLOPs: conv 2*2*4*64*27 + 512 bias, bn 7 * 512, pool 4 * 128, linear 2*2*64*5 */
    assert_true(pl->flops == 2.0 * 2 * 4 * 64 * 27 + 512 + 7.0 * 512 + 4.0 * 128 + 2.0 * 2 * 64 * 5);
    free(pl);
    /* the stack: an exchange or a concatenation with nothing pushed, a
     * concatenation of maps of another size, too many pushes */
    const net_layer xchg_empty[] = { { .kind = NET_EXCHANGE } };
    assert_int_equal(walks(xchg_empty, 1, img, 4, why, sizeof why), -1);
    assert_non_null(strstr(why, "nothing pushed"));
    const net_layer cat_two[] = { { .kind = NET_PUSH }, { .kind = NET_CONCAT, .k = 2 } };
    assert_int_equal(walks(cat_two, 2, img, 4, why, sizeof why), -1);
    assert_non_null(strstr(why, "layer 2 (concat)"));
    const net_layer cat_size[] = { { .kind = NET_PUSH }, { .kind = NET_MAXPOOL2D, .k = 2, .s = 2 },
                                   { .kind = NET_CONCAT, .k = 1 } };
    assert_int_equal(walks(cat_size, 3, img, 4, why, sizeof why), -1);
    assert_non_null(strstr(why, "more than their channels"));
    net_layer pushes[NET_STACK_MAX + 1];
    for (int i = 0; i <= NET_STACK_MAX; i++) pushes[i] = (net_layer){ .kind = NET_PUSH };
    assert_int_equal(walks(pushes, NET_STACK_MAX, img, 4, why, sizeof why), 0);
    assert_int_equal(walks(pushes, NET_STACK_MAX + 1, img, 4, why, sizeof why), -1);
    assert_non_null(strstr(why, "full"));
    /* a shuffle whose groups do not divide the channels; ceil mode on an
     * average pool */
    const net_layer bad_shuffle[] = { { .kind = NET_SHUFFLE, .groups = 2 } };
    assert_int_equal(walks(bad_shuffle, 1, img, 4, why, sizeof why), -1);
    const net_layer ceil_avg[] = { { .kind = NET_AVGPOOL2D, .k = 3, .s = 2, .ceil = 1 } };
    assert_int_equal(walks(ceil_avg, 1, img, 4, why, sizeof why), -1);
    /* and a good branch program: push, conv 3 -> 4, exchange (x back),
     * conv 3 -> 5, concat: 9 channels; a transposed convolution 9 -> 2
     * (k 2, s 2) with its bias: 8 -> 16; a ceil-mode max pool 3/2: 16 -> 8
     * (floor mode: 7; the eighth window starts at 14, inside the input);
     * softmax; a shuffle */
    const net_layer branch[] = { { .kind = NET_PUSH }, { .kind = NET_CONV2D, .out = 4, .k = 1, .s = 1 },
                                 { .kind = NET_EXCHANGE }, { .kind = NET_CONV2D, .out = 5, .k = 3, .s = 1, .p = 1 },
                                 { .kind = NET_CONCAT, .k = 1 },
                                 { .kind = NET_CONVT2D, .out = 2, .k = 2, .s = 2, .bias = 1 },
                                 { .kind = NET_MAXPOOL2D, .k = 3, .s = 2, .ceil = 1 },
                                 { .kind = NET_SOFTMAX }, { .kind = NET_SHUFFLE, .groups = 2 } };
    net_spec sb = { OP_NET_FIRST, 9, branch, 1e-5 };
    pl = calloc(1, sizeof *pl);
    assert_int_equal(net_plan_make(&sb, img, 4, pl, why, sizeof why), 0);
    assert_int_equal(pl->out[4].d[1], 9);
    assert_int_equal(pl->out[5].d[2], 16);
    assert_int_equal(pl->out[6].d[2], 8);
    assert_int_equal(pl->result.d[1], 2);
    assert_int_equal(pl->stack_most, 1);
    /* the transposed weight [9, 2, 2, 2] and its bias [2], U(+-1/sqrt(2 * 4)) */
    assert_int_equal(pl->param[2].shape.d[0], 9);
    assert_int_equal(pl->param[2].shape.d[1], 2);
    assert_int_equal(pl->param[3].count, 2);
    assert_true(pl->param[2].gen.b * pl->param[2].gen.b * 8.0 > 0.999999 &&
                pl->param[2].gen.b * pl->param[2].gen.b * 8.0 < 1.000001);
    /* FLOPs: conv 2 * (2*4*64) * 3, conv 2 * (2*5*64) * 27, transposed
     * 2 * (2*9*64) * 2 * 4 + its bias per output (2*2*256), the pool 9
     * per output and softmax 5 per element of the pooled map (2*2*64) */
    assert_true(pl->flops == 2.0 * 512 * 3 + 2.0 * 640 * 27 + 2.0 * 1152 * 8 + 1024.0 + 9.0 * 256 + 5.0 * 256);
    free(pl);
    /* orders: order 1's parts listed and packed after order 0's, each
     * order's in program order */
    const net_layer grouped[] = { { .kind = NET_CONV2D, .out = 4, .k = 1, .s = 1, .order = 1 },
                                  { .kind = NET_BN2D },
                                  { .kind = NET_CONV2D, .out = 2, .k = 1, .s = 1, .bias = 1, .order = 1 } };
    net_spec sg = { OP_NET_FIRST, 3, grouped, 1e-5 };
    pl = calloc(1, sizeof *pl);
    assert_int_equal(net_plan_make(&sg, img, 4, pl, why, sizeof why), 0);
    const struct { int layer, is_bias; int64_t offset; } packed[] = {
        { 1, 0, 0 },    /* bn weight [4] */
        { 1, 1, 4 },    /* bn bias */
        { 0, 0, 8 },    /* conv 4 x 3 */
        { 2, 0, 20 },   /* conv 2 x 4 */
        { 2, 1, 28 },   /* its bias */
    };
    assert_int_equal(pl->n_params, 5);
    for (int q = 0; q < 5; q++) {
        assert_int_equal(pl->param[q].layer, packed[q].layer);
        assert_int_equal(pl->param[q].is_bias, packed[q].is_bias);
        assert_int_equal(pl->param[q].offset, packed[q].offset);
    }
    assert_int_equal(pl->n_param_floats, 30);
    assert_ptr_equal(net_param_of(pl, 0, 0), &pl->param[2]);
    free(pl);
    /* a negative order is refused */
    const net_layer negative[] = { { .kind = NET_BN2D, .order = -1 } };
    assert_int_equal(walks(negative, 1, img, 4, why, sizeof why), -1);
    assert_non_null(strstr(why, "negative order"));
    /* a depthwise convolution (weight [C, 1, k, k]) and an average pool */
    int64_t img6[4] = { 2, 6, 8, 8 };
    const net_layer dw[] = { { NET_CONV2D, 6, 3, 1, 1, 0, 6, 0, 0, 0 }, { NET_AVGPOOL2D, 0, 2, 2, 0, 0, 0, 0, 0, 0 } };
    net_spec sd = { OP_NET_FIRST, 2, dw, 1e-5 };
    pl = calloc(1, sizeof *pl);
    assert_int_equal(net_plan_make(&sd, img6, 4, pl, why, sizeof why), 0);
    assert_int_equal(pl->param[0].shape.d[1], 1);
    assert_int_equal(pl->n_param_floats, 6 * 9);
    assert_int_equal(pl->result.d[2], 4);
    /* 2 * outputs * 9 for the depthwise convolution, (4 + 1) per pooled output */
    assert_true(pl->flops == 2.0 * (2 * 6 * 64) * 9 + 5.0 * (2 * 6 * 16));
    free(pl);
}

/* An attention layer: its shapes, FLOPs and refusals; tokens of an image
 * and back. */
static void test_attention_programs(void **state)
{
    (void)state;
    char why[200];
    int64_t seq[3] = { 2, 5, 12 }, img[4] = { 2, 6, 3, 4 };
    /* c_attn (12 -> 36), causal attention with 2 heads, c_proj */
    const net_layer gpt[] = { { NET_LINEAR, 36, 0, 0, 0, 1, 0, 0, 0, 0 },
                              { NET_ATTENTION, 0, NET_ATTN_CAUSAL, 0, 0, 0, 2, 0, 0, 0 },
                              { NET_LINEAR, 12, 0, 0, 0, 1, 0, 0, 0, 0 } };
    net_spec sp = { OP_NET_FIRST, 3, gpt, 1e-5 };
    net_plan *pl = calloc(1, sizeof *pl);
    assert_int_equal(net_plan_make(&sp, seq, 3, pl, why, sizeof why), 0);
    assert_int_equal(pl->out[1].ndim, 3);
    assert_int_equal(pl->out[1].d[2], 12);
    assert_int_equal(pl->n_param_floats, 12 * 36 + 36 + 12 * 12 + 12);
    /* products 2*10*12*36 + bias, 4 N T^2 C + 5 per score (2 heads), 2*10*12*12 + bias */
    double want = 2.0 * 10 * 12 * 36 + 360 + 4.0 * 2 * 25 * 12 + 5.0 * 2 * 2 * 25 + 2.0 * 10 * 12 * 12 + 120;
    assert_true(pl->flops == want);
    free(pl);
    /* relu scores cost 2 a score */
    const net_layer relu[] = { { NET_ATTENTION, 0, NET_ATTN_CAUSAL | NET_ATTN_RELU, 0, 0, 0, 3, 0, 0, 0 } };
    int64_t qkv[3] = { 2, 5, 36 };
    net_spec sr = { OP_NET_FIRST, 1, relu, 1e-5 };
    pl = calloc(1, sizeof *pl);
    assert_int_equal(net_plan_make(&sr, qkv, 3, pl, why, sizeof why), 0);
    assert_true(pl->flops == 4.0 * 2 * 25 * 12 + 2.0 * 2 * 3 * 25);
    free(pl);
    /* heads that do not divide the features, attention on a map */
    const net_layer bad_heads[] = { { NET_ATTENTION, 0, 0, 0, 0, 0, 5, 0, 0, 0 } };
    assert_int_equal(walks(bad_heads, 1, qkv, 3, why, sizeof why), -1);
    assert_non_null(strstr(why, "heads"));
    assert_int_equal(walks(bad_heads, 1, img, 4, why, sizeof why), -1);
    /* tokens, a layer norm over the channels and back */
    const net_layer tok[] = { { NET_TOKENS, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, { NET_LAYERNORM, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
                              { NET_UNTOKENS, 0, 0, 0, 0, 0, 0, 0, 0, 0 } };
    net_spec st = { OP_NET_FIRST, 3, tok, 1e-5 };
    pl = calloc(1, sizeof *pl);
    assert_int_equal(net_plan_make(&st, img, 4, pl, why, sizeof why), 0);
    assert_int_equal(pl->out[0].d[1], 12);
    assert_int_equal(pl->out[0].d[2], 6);
    assert_int_equal(pl->param[0].count, 6);
    assert_memory_equal(&pl->result, &pl->in[0], sizeof pl->result);
    assert_true(pl->flops == 7.0 * 144);
    free(pl);
    /* untokens without tokens before it */
    assert_int_equal(walks(tok + 2, 1, seq, 3, why, sizeof why), -1);
    assert_non_null(strstr(why, "untokens"));
    /* the description says what the scores are */
    const suite_problem *p = suite_find("L3_050_reluselfattention");
    assert_non_null(p);
    sbuf b = { 0 };
    assert_int_equal(net_describe(&b, p), 0);
    char *text = sb_take(&b, NULL);
    assert_non_null(strstr(text, "heads 12 of size 64"));
    assert_non_null(strstr(text, "causal mask"));
    assert_non_null(strstr(text, "relu(scores)"));
    free(text);
}

/* Parameters in named_parameters() order where it differs from the
 * program's: a module's own parameters before its children's (ViT's
 * pos_embedding and cls_token, CViT's cls_token first), a transformer
 * layer's norms after linear2. */
static void test_registration_order(void **state)
{
    (void)state;
    const suite_problem *p = suite_find("L3_028_visiontransformer");
    assert_non_null(p);
    const net_spec *sp = suite_net_of(p);
    net_plan *pl = walk(p);
    assert_int_equal(sp->layers[pl->param[0].layer].kind, NET_POS);
    assert_int_equal(pl->param[0].count, 197 * 512);
    assert_int_equal(sp->layers[pl->param[1].layer].kind, NET_CLS);
    assert_int_equal(pl->param[1].offset, 197 * 512);
    assert_int_equal(sp->layers[pl->param[2].layer].kind, NET_LINEAR);   /* patch_to_embedding */
    assert_int_equal(pl->param[2].offset, 198 * 512);
    /* the first encoder layer: in_proj w, b, out_proj w, b, linear1 w, b,
     * linear2 w, b, then norm1 and norm2 */
    for (int q = 4; q < 12; q++) assert_int_equal(sp->layers[pl->param[q].layer].kind, NET_LINEAR);
    assert_int_equal(pl->param[8].shape.d[0], 2048);   /* linear1's weight [2048, 512] */
    for (int q = 12; q < 16; q++) assert_int_equal(sp->layers[pl->param[q].layer].kind, NET_LAYERNORM);
    assert_true(pl->param[12].layer < pl->param[8].layer);   /* norm1 runs before linear1 */
    free(pl);
    p = suite_find("L3_032_convolutionalvisiontransformer");
    sp = suite_net_of(p);
    pl = walk(p);
    assert_int_equal(sp->layers[pl->param[0].layer].kind, NET_CLS);
    assert_int_equal(pl->param[0].count, 128);
    assert_int_equal(sp->layers[pl->param[1].layer].kind, NET_CONV2D);
    assert_int_equal(pl->param[1].offset, 128);
    /* conv1 is a patch embedding: no cuDNN */
    assert_int_equal(pl->has_conv, 0);
    free(pl);
    /* Swin MLP: PatchMerging's reduction before its norm, the spatial MLP's
     * FLOPs over the padded map of a shifted block (9 x 9 windows of 7 on
     * 56 + 7), the last stage's 7x7 map unshifted */
    p = suite_find("L3_029_swinmlp");
    sp = suite_net_of(p);
    pl = walk(p);
    int merge = -1;
    for (int l = 0; l < sp->n_layers && merge < 0; l++)
        if (sp->layers[l].kind == NET_MERGE) merge = l;
    assert_true(merge > 0);
    assert_int_equal(sp->layers[merge + 1].kind, NET_LAYERNORM);
    assert_int_equal(sp->layers[merge + 2].kind, NET_LINEAR);
    int qn = -1, ql = -1;
    for (int q = 0; q < pl->n_params; q++) {
        if (pl->param[q].layer == merge + 1 && qn < 0) qn = q;
        if (pl->param[q].layer == merge + 2) ql = q;
    }
    assert_true(ql >= 0 && qn == ql + 1);
    for (int l = 0; l < sp->n_layers; l++) {
        const net_layer *L = &sp->layers[l];
        if (L->kind != NET_WINDOW_MLP) continue;
        if (pl->in[l].d[1] == 49) assert_int_equal(L->s, 0);
        else assert_true(L->s == 0 || L->s == 3);
    }
    free(pl);
    const net_layer shifted[] = { { .kind = NET_WINDOW_MLP, .k = 7, .s = 3, .groups = 3 } };
    int64_t map[3] = { 2, 56 * 56, 96 };
    net_spec ss = { OP_NET_FIRST, 1, shifted, 1e-5 };
    pl = calloc(1, sizeof *pl);
    char why[200];
    assert_int_equal(net_plan_make(&ss, map, 3, pl, why, sizeof why), 0);
    assert_true(pl->flops == 2.0 * 81 * (2.0 * 49 * 49 + 49) * 96);
    assert_int_equal(pl->param[0].shape.d[0], 3 * 49);
    free(pl);
    pl = calloc(1, sizeof *pl);
    /* the heads must divide the channels, the map be square */
    const net_layer bad[] = { { .kind = NET_WINDOW_MLP, .k = 7, .s = 3, .groups = 5 } };
    net_spec sb2 = { OP_NET_FIRST, 1, bad, 1e-5 };
    assert_int_equal(net_plan_make(&sb2, map, 3, pl, why, sizeof why), -1);
    int64_t rect[3] = { 2, 56 * 55, 96 };
    assert_int_equal(net_plan_make(&ss, rect, 3, pl, why, sizeof why), -1);
    assert_non_null(strstr(why, "square"));
    free(pl);
    p = suite_find("L3_032_convolutionalvisiontransformer");
    sp = suite_net_of(p);
    pl = walk(p);
    assert_int_equal(pl->has_conv, 0);
    assert_true(net_is_patch_conv(&sp->layers[0]));
    free(pl);
}

/* The prompt's layer list names every part of params at its offset. */
static void test_description_lists_the_layout(void **state)
{
    (void)state;
    const suite_problem *p = suite_find("L3_009_resnet18");
    assert_non_null(p);
    sbuf b = { 0 };
    assert_int_equal(net_describe(&b, p), 0);
    char *text = sb_take(&b, NULL);
    assert_non_null(text);
    net_plan *pl = walk(p);
    for (int q = 0; q < pl->n_params; q++) {
        char want[64];
        snprintf(want, sizeof want, " at params[%lld]", (long long)pl->param[q].offset);
        if (!strstr(text, want)) fail_msg("no '%s' in the description", want);
    }
    assert_non_null(strstr(text, "batch statistics"));
    free(pl);
    free(text);
    const suite_problem *l1 = suite_find("L1_019_relu");
    sbuf c = { 0 };
    assert_int_equal(net_describe(&c, l1), -1);
    sb_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_network_walks_to_its_output),
        cmocka_unit_test(test_known_parameter_counts),
        cmocka_unit_test(test_intermediate_shapes),
        cmocka_unit_test(test_branch_networks),
        cmocka_unit_test(test_malformed_programs_are_refused),
        cmocka_unit_test(test_description_lists_the_layout),
        cmocka_unit_test(test_attention_programs),
        cmocka_unit_test(test_registration_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
