/* test_suite_registry.c - the suite's tables: ids unique and well formed,
 * KernelBench numbering, order, roles, and shapes, FLOPs and bytes of a
 * sample of problems against values computed by hand from KernelBench's
 * files and PyTorch's formulas. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "suite.h"
#include "bf16path.h"
#include "ops.h"

static const suite_problem *need(const char *id)
{
    const suite_problem *p = suite_find(id);
    if (!p) fail_msg("problem %s missing", id);
    return p;
}

static void expect_shape(const suite_tensor *t, int ndim, const int64_t *dims)
{
    assert_int_equal(t->ndim, ndim);
    for (int i = 0; i < ndim; i++) assert_int_equal(t->shape[i], dims[i]);
}

#define SHAPE_IS(t, ...)                                                          \
    do {                                                                       \
        const int64_t d_[] = { __VA_ARGS__ };                                  \
        expect_shape((t), (int)(sizeof d_ / sizeof d_[0]), d_);                \
    } while (0)

/* The id rule of DESIGN.md 5: L<level>_<3-digit number>_<file name, lower
 * case, trailing underscores dropped>. */
static void test_ids_follow_the_rule(void **state)
{
    (void)state;
    int n = suite_count();
    assert_true(n >= 100);
    for (int i = 0; i < n; i++) {
        const suite_problem *p = suite_get(i);
        char want[256], name[200];
        snprintf(name, sizeof name, "%s", p->name);
        size_t len = strlen(name);
        while (len > 0 && name[len - 1] == '_') name[--len] = 0;
        for (size_t k = 0; k < len; k++) name[k] = (char)tolower((unsigned char)name[k]);
        /* the file name starts with its number and an underscore */
        char num[16];
        snprintf(num, sizeof num, "%d_", p->number);
        if (strncmp(name, num, strlen(num)) != 0) fail_msg("%s: name does not start with %s", p->id, num);
        snprintf(want, sizeof want, "L%d_%03d_%s", p->level, p->number, name + strlen(num));
        if (strcmp(want, p->id) != 0) fail_msg("id %s, expected %s", p->id, want);
        for (const char *c = p->id + 1; *c; c++)
            if (!(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_'))
                fail_msg("%s: character '%c'", p->id, *c);
    }
}

static void test_ids_unique_and_findable(void **state)
{
    (void)state;
    int n = suite_count();
    for (int i = 0; i < n; i++) {
        const suite_problem *p = suite_get(i);
        assert_ptr_equal(suite_find(p->id), p);
        for (int j = i + 1; j < n; j++) {
            const suite_problem *q = suite_get(j);
            if (strcmp(p->id, q->id) == 0) fail_msg("duplicate id %s", p->id);
            if (p->level == q->level && p->number == q->number)
                fail_msg("duplicate number %d in level %d", p->number, p->level);
        }
    }
    assert_null(suite_find("L1_999_nothing"));
    assert_null(suite_find(NULL));
    assert_null(suite_get(-1));
    assert_null(suite_get(n));
}

/* Level 1 is complete: numbers 1..100 each once; suite order is level,
 * then number. */
static void test_level1_complete_and_ordered(void **state)
{
    (void)state;
    int seen[101] = { 0 };
    int n = suite_count(), l1 = 0, l2 = 0;
    for (int i = 0; i < n; i++) {
        const suite_problem *p = suite_get(i);
        if (p->level == 1) {
            assert_true(p->number >= 1 && p->number <= 100);
            seen[p->number]++;
            l1++;
        } else if (p->level == 2) {
            l2++;
        } else {
            /* level 3: KernelBench's 50 networks (test_suite_net.c) */
            assert_int_equal(p->level, 3);
            assert_true(p->number >= 1 && p->number <= 50);
        }
        if (i > 0) {
            const suite_problem *q = suite_get(i - 1);
            assert_true(q->level < p->level || (q->level == p->level && q->number < p->number));
        }
    }
    assert_int_equal(l1, 100);
    for (int k = 1; k <= 100; k++) assert_int_equal(seen[k], 1);
    assert_int_equal(l2, 99);
}

/* Level 2: every number once, all of 1..100 but 66 (training-mode
 * dropout before a softmax: a random output, docs/DESIGN.md 5.1). */
static void test_level2_numbers(void **state)
{
    (void)state;
    int seen[101] = { 0 };
    int n = suite_count();
    for (int i = 0; i < n; i++) {
        const suite_problem *p = suite_get(i);
        if (p->level != 2) continue;
        assert_true(p->number >= 1 && p->number <= 100);
        seen[p->number]++;
    }
    for (int k = 1; k <= 100; k++) {
        int want = k == 66 ? 0 : 1;
        if (seen[k] != want) fail_msg("level 2 number %d: %d problems", k, seen[k]);
    }
}

/* Every problem: inputs before parameters, outputs present, a baseline op,
 * positive FLOPs, and min_bytes equal to the bytes of its inputs and
 * outputs (the definition of DESIGN.md 5). */
static void test_problem_invariants(void **state)
{
    (void)state;
    int n = suite_count();
    for (int i = 0; i < n; i++) {
        const suite_problem *p = suite_get(i);
        assert_true(p->n_inputs >= 1);
        assert_true(p->n_outputs >= 1);
        if (p->op == OP_NONE) fail_msg("%s has no baseline op", p->id);
        if (!(p->flops > 0)) fail_msg("%s: flops %g", p->id, p->flops);
        int seen_param = 0;
        double bytes = 0;
        for (int k = 0; k < p->n_inputs; k++) {
            const suite_tensor *t = &p->inputs[k];
            if (t->role == SUITE_ROLE_PARAM) seen_param = 1;
            else if (seen_param) fail_msg("%s: input %s after a parameter", p->id, t->name);
            /* 0-d only for parameters such as nn.Parameter(torch.tensor(2.0)) */
            assert_true(t->ndim >= (t->role == SUITE_ROLE_PARAM ? 0 : 1) && t->ndim <= KBV_MAX_DIMS);
            for (int d = 0; d < t->ndim; d++) assert_true(t->shape[d] >= 1);
            bytes += (double)suite_bytes(t);
        }
        for (int k = 0; k < p->n_outputs; k++) bytes += (double)suite_bytes(&p->outputs[k]);
        if (bytes != p->min_bytes) fail_msg("%s: min_bytes %.0f, inputs + outputs %.0f", p->id,
                                            p->min_bytes, bytes);
        for (int k = 0; k < p->n_attrs; k++) assert_non_null(p->attrs[k].name);
    }
}

/* Shapes from KernelBench's files, and output extents from PyTorch's
 * formulas worked by hand. */
static void test_sample_shapes(void **state)
{
    (void)state;
    const suite_problem *p = need("L1_001_square_matrix_multiplication");
    SHAPE_IS(&p->inputs[0], 4096, 4096);
    SHAPE_IS(&p->outputs[0], 4096, 4096);
    p = need("L1_019_relu");
    SHAPE_IS(&p->inputs[0], 4096, 393216);
    p = need("L1_003_batched_matrix_multiplication");
    SHAPE_IS(&p->inputs[1], 128, 1024, 2048);
    SHAPE_IS(&p->outputs[0], 128, 512, 2048);
    p = need("L1_016_matmul_with_transposed_a");
    SHAPE_IS(&p->inputs[0], 8192, 2048);
    SHAPE_IS(&p->outputs[0], 2048, 4096);
    /* conv 11x11, stride 4, padding 2 on 224: (224 + 4 - 10 - 1) / 4 + 1 = 55 */
    p = need("L1_050_conv_standard_2d__square_input__square_kernel");
    SHAPE_IS(&p->outputs[0], 256, 96, 55, 55);
    SHAPE_IS(&p->inputs[1], 96, 3, 11, 11);
    SHAPE_IS(&p->inputs[2], 96);
    assert_int_equal(p->inputs[1].role, SUITE_ROLE_PARAM);
    /* transposed 3D, stride 2, padding (1, 2, 3), output_padding 1, groups 4:
     * D (12 - 1) 2 - 2 + 2 + 1 + 1 = 24, H 46 - 4 + 4 + 2 = 48, W 94 - 6 + 6 + 2 = 96 */
    p = need("L1_072_conv_transposed_3d_asymmetric_input_asymmetric_kernel___strided_padded_grouped");
    SHAPE_IS(&p->outputs[0], 8, 32, 24, 48, 96);
    SHAPE_IS(&p->inputs[1], 32, 8, 3, 5, 7);
    /* conv 1D, kernel 3, stride 3, dilation 4: (524280 - 8 - 1) / 3 + 1 = 174758 */
    p = need("L1_076_conv_standard_1d_dilated_strided");
    SHAPE_IS(&p->outputs[0], 64, 128, 174758);
    /* max pool 1D k 8, s 1, p 4, d 3: 65536 + 8 - 21 - 1 + 1 = 65523 */
    p = need("L1_041_max_pooling_1d");
    SHAPE_IS(&p->outputs[0], 64, 192, 65523);
    /* avg pool 2D k = s = 11 on 2048: floor(2037 / 11) + 1 = 186 */
    p = need("L1_045_average_pooling_2d");
    SHAPE_IS(&p->outputs[0], 16, 64, 186, 186);
    /* KernelBench 92 slices dim 0: [32767, 32769] */
    p = need("L1_092_cumsum_exclusive");
    SHAPE_IS(&p->outputs[0], 32767, 32769);
    /* sum keeps the dimension, argmax drops it and is int64 */
    p = need("L1_047_sum_reduction_over_a_dimension");
    SHAPE_IS(&p->outputs[0], 128, 1, 4095);
    p = need("L1_051_argmax_over_a_dimension");
    SHAPE_IS(&p->outputs[0], 128, 4095);
    assert_int_equal(p->outputs[0].dtype, KBV_I64);
    /* losses are scalars */
    p = need("L1_094_mseloss");
    assert_int_equal(p->outputs[0].ndim, 0);
    assert_int_equal(suite_numel(&p->outputs[0]), 1);
    p = need("L1_095_crossentropyloss");
    assert_int_equal(p->inputs[1].dtype, KBV_I64);
    assert_int_equal(p->inputs[1].fixed_scale, 1);
}

static void test_sample_flops_and_bytes(void **state)
{
    (void)state;
    const suite_problem *p = need("L1_001_square_matrix_multiplication");
    assert_true(p->flops == 137438953472.0);          /* 2 * 4096^3 */
    assert_true(p->min_bytes == 201326592.0);         /* 3 * 4096^2 * 4 */
    assert_true(p->uses_tf32);
    p = need("L1_003_batched_matrix_multiplication");
    assert_true(p->flops == 274877906944.0);          /* 2 * 128 * 512 * 2048 * 1024 */
    p = need("L1_019_relu");
    assert_true(p->flops == 1610612736.0);            /* 4096 * 393216 */
    assert_true(p->min_bytes == 12884901888.0);       /* 2 * 4096 * 393216 * 4 */
    assert_false(p->uses_tf32);
    /* 2 N Cout H W Cin k^2 + bias: 24576 * 3025 = 74342400; * 726 + 74342400 */
    p = need("L1_050_conv_standard_2d__square_input__square_kernel");
    assert_true(p->flops == 54046924800.0);
    p = need("L1_095_crossentropyloss");
    assert_true(p->min_bytes == 537133060.0);         /* 4 * 32768 * 4096 + 8 * 32768 + 4 */
    p = need("L1_012_matmul_with_diagonal_matrices");
    assert_true(p->flops == 16777216.0);              /* one multiply per element, 4096^2 */
}

/* floor_flops: only where an identity removes most of the FLOPs, each
 * well below the problem's FLOPs yet at least one operation per element
 * of the input it must read (x, and W for a linear layer); absent
 * elsewhere (0). */
static void test_floor_flops(void **state)
{
    (void)state;
    int n = 0;
    for (int i = 0; i < suite_count(); i++) {
        const suite_problem *p = suite_get(i);
        if (p->floor_flops == 0) continue;
        n++;
        assert_true(p->floor_flops > 0 && p->floor_flops < 0.1 * p->flops);
        double in = 0;
        for (int k = 0; k < p->n_inputs; k++) {
            double e = 1;
            for (int d = 0; d < p->inputs[k].ndim; d++) e *= (double)p->inputs[k].shape[d];
            if (k <= 1 || p->level == 2) in = in > e ? in : e;
        }
        assert_true(p->floor_flops >= in);
    }
    assert_int_equal(n, 7);
    const suite_problem *p = need("L2_014_gemm_divide_sum_scaling");
    /* W's column sums (H K additions) and the matrix-vector product (2 N K) */
    assert_true(p->floor_flops == 8192.0 * 8192 + 2.0 * 1024 * 8192);
    assert_true(need("L1_001_square_matrix_multiplication")->floor_flops == 0);
}

/* The bf16 baseline's path (bf16path.c): what `kbv list --json` prints
 * and the dispatcher follows. */
static void test_bf16_paths(void **state)
{
    (void)state;
    int n[3] = {0, 0, 0};
    for (int i = 0; i < suite_count(); i++) {
        bf16_path k = suite_bf16_path(suite_get(i));
        assert_true(k >= BF16_FALLBACK && k <= BF16_NATIVE_PRODUCER);
        n[k]++;
    }
    assert_int_equal(n[0] + n[1] + n[2], suite_count());
    /* products, activations, softmax, norms, convolutions, pooling,
     * reductions and losses are native */
    assert_int_equal(suite_bf16_path(need("L1_001_square_matrix_multiplication")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L1_019_relu")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L1_023_softmax")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L1_036_rmsnorm")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L1_050_conv_standard_2d__square_input__square_kernel")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L1_042_max_pooling_2d")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L1_051_argmax_over_a_dimension")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L1_095_crossentropyloss")), BF16_NATIVE);
    /* a linear layer with elementwise steps only is native; with a
     * reduction after it, its product is; a convolution's chain runs its
     * convolution in bf16 */
    assert_int_equal(suite_bf16_path(need("L2_063_gemm_relu_divide")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L2_014_gemm_divide_sum_scaling")), BF16_NATIVE_PRODUCER);
    assert_int_equal(suite_bf16_path(need("L2_021_conv2d_add_scale_sigmoid_groupnorm")), BF16_NATIVE_PRODUCER);
    /* so do two linear layers, a layer whose weight is not input 1 and a
     * convolution of a pooled input; the scans run kbv's scan on bfloat16
     * rows, attention PyTorch's math path natively */
    assert_int_equal(suite_bf16_path(need("L2_045_gemm_sigmoid_logsumexp")), BF16_NATIVE_PRODUCER);
    assert_int_equal(suite_bf16_path(need("L2_028_bmm_instancenorm_sum_residualadd_multiply")),
                     BF16_NATIVE_PRODUCER);
    assert_int_equal(suite_bf16_path(need("L2_038_convtranspose3d_avgpool_clamp_softmax_multiply")),
                     BF16_NATIVE_PRODUCER);
    assert_int_equal(suite_bf16_path(need("L1_089_cumsum")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L1_093_masked_cumsum")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L1_097_scaleddotproductattention")), BF16_NATIVE);
    /* the level-3 layer programs of linear layers, convolutions, batch
     * norms, poolings, activations, residual sums, concatenations and
     * shuffles are native, and with layer norms and causal softmax
     * attention (minGPT's); a network with other attention (ViT's, the
     * vision and ReLU attentions), a patch embedding or Swin's windows
     * fall back; the recurrent networks over a sequence run cuDNN's RNN
     * on bfloat16 data */
    assert_int_equal(suite_bf16_path(need("L3_001_mlp")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L3_002_shallowwidemlp")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L3_003_deepnarrowmlp")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L3_004_lenet5")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L3_011_vgg16")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L3_008_resnetbasicblock")), BF16_NATIVE);   /* batch norm, residual */
    assert_int_equal(suite_bf16_path(need("L3_007_googlenetinceptionv1")), BF16_NATIVE); /* concatenation */
    assert_int_equal(suite_bf16_path(need("L3_026_shufflenet")), BF16_NATIVE);          /* channel shuffle */
    assert_int_equal(suite_bf16_path(need("L3_020_mobilenetv2")), BF16_NATIVE);         /* ReLU6, depthwise */
    assert_int_equal(suite_bf16_path(need("L3_028_visiontransformer")), BF16_FALLBACK);
    assert_int_equal(suite_bf16_path(need("L3_043_mingptcausalattention")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L3_044_minigptblock")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L3_050_reluselfattention")), BF16_FALLBACK);
    assert_int_equal(suite_bf16_path(need("L3_031_visionattention")), BF16_FALLBACK);
    assert_int_equal(suite_bf16_path(need("L3_029_swinmlp")), BF16_FALLBACK);
    assert_int_equal(suite_bf16_path(need("L3_032_convolutionalvisiontransformer")), BF16_FALLBACK);
    assert_int_equal(suite_bf16_path(need("L3_046_netvladwithghostclusters")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L3_035_lstm")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L3_042_grubidirectionalhidden")), BF16_NATIVE);
    /* the single-step vanilla RNN cell is two linear layers around a tanh */
    assert_int_equal(suite_bf16_path(need("L3_033_vanillarnn")), BF16_NATIVE);
    assert_int_equal(suite_bf16_path(need("L3_034_vanillarnnhidden")), BF16_NATIVE);
    assert_string_equal(suite_bf16_path_name(BF16_NATIVE), "native");
    assert_string_equal(suite_bf16_path_name(BF16_NATIVE_PRODUCER), "native-producer");
    assert_string_equal(suite_bf16_path_name(BF16_FALLBACK), "fallback");
}

/* Generators and distributions: at level 1, D5 for the hinge loss
 * (alternating targets) and the elementwise activations (rows of
 * alternating sign) only; parameters and labels keep their scale; PyTorch's
 * Linear/Conv bound 1/sqrt(fan_in). */
static void test_generators(void **state)
{
    (void)state;
    int n = suite_count();
    for (int i = 0; i < n; i++) {
        const suite_problem *p = suite_get(i);
        assert_true(suite_has_dist(p, SUITE_D1));
        assert_true(suite_has_dist(p, SUITE_D4));
        /* the activations are problems 19-22, 25-32 and 88 */
        int act = p->level == 1 && ((p->number >= 19 && p->number <= 22) ||
                                    (p->number >= 25 && p->number <= 32) || p->number == 88);
        if (strcmp(p->id, "L1_100_hingeloss") == 0) assert_true(suite_has_dist(p, SUITE_D5));
        else if (act) {
            assert_true(suite_has_dist(p, SUITE_D5));
            assert_int_equal(p->d5[0].kind, SUITE_GEN_ROW_SIGNED);
            assert_true(p->d5[0].a == 0.0 && p->d5[0].b == 1.0);
        } else if (p->level == 1) assert_false(suite_has_dist(p, SUITE_D5));
    }
    const suite_problem *p = need("L1_100_hingeloss");
    assert_int_equal(p->d5[1].kind, SUITE_GEN_ALTERNATING);
    assert_int_equal(p->inputs[1].gen.kind, SUITE_GEN_SIGN);
    p = need("L1_050_conv_standard_2d__square_input__square_kernel");
    /* fan_in 3 * 11 * 11 = 363 */
    assert_true(p->inputs[1].gen.kind == SUITE_GEN_UNIFORM);
    assert_true(p->inputs[1].gen.b > 0.05248638 && p->inputs[1].gen.b < 0.05248639);
    assert_true(p->inputs[1].gen.a == -p->inputs[1].gen.b);
    p = need("L1_033_batchnorm");
    assert_int_equal(p->inputs[1].gen.kind, SUITE_GEN_CONST);
    assert_true(p->inputs[1].gen.a == 1.0);
    assert_true(p->inputs[2].gen.a == 0.0);
    assert_string_equal(suite_dist_name(SUITE_D1), "D1");
    assert_string_equal(suite_dist_name(SUITE_D5), "D5");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_follow_the_rule),
        cmocka_unit_test(test_ids_unique_and_findable),
        cmocka_unit_test(test_level1_complete_and_ordered),
        cmocka_unit_test(test_level2_numbers),
        cmocka_unit_test(test_problem_invariants),
        cmocka_unit_test(test_sample_shapes),
        cmocka_unit_test(test_sample_flops_and_bytes),
        cmocka_unit_test(test_floor_flops),
        cmocka_unit_test(test_bf16_paths),
        cmocka_unit_test(test_generators),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
