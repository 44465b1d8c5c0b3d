/* test_suite_chain.c - the level-2 chain specifications against their
 * problems: every chain op has a spec, its parameter and norm indices name
 * parameters of the problem, conv chains need cuDNN and linear ones do not,
 * and the output shape is what the producer's formula and the middle stage
 * give (worked out here independently of the CUDA interpreter); the post
 * stages' indices name parameters and chain_shapes (chain.c) ends in the
 * output's shape, with samples of each stage worked by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "suite.h"
#include "ops.h"
#include "chain.h"

static double attr(const suite_problem *p, const char *name, double def)
{
    for (int i = 0; i < p->n_attrs; i++)
        if (strcmp(p->attrs[i].name, name) == 0) return p->attrs[i].value;
    return def;
}

static int is_chain(const suite_problem *p)
{
    return (p->op >= OP_CHAIN_FIRST && p->op <= OP_CHAIN_LAST) ||
           (p->op >= OP_CONV_CHAIN_FIRST && p->op <= OP_CONV_CHAIN_LAST);
}

static void check_ew(const suite_problem *p, const chain_ew *ew)
{
    int k = 0;
    for (; k < CHAIN_MAX_EW && ew[k].kind != EW_END; k++) {
        int kind = ew[k].kind;
        if (kind == EW_ADD_P || kind == EW_SUB_P || kind == EW_MUL_P || kind == EW_MIN_P) {
            if (ew[k].p < 1 || ew[k].p >= p->n_inputs) fail_msg("%s: parameter index %d", p->id, ew[k].p);
            assert_int_equal(p->inputs[ew[k].p].role, SUITE_ROLE_PARAM);
        }
        /* a whole-tensor operand is a call input, not a parameter */
        if (kind == EW_ADD_T || kind == EW_MUL_T) {
            if (ew[k].p < 1 || ew[k].p >= p->n_inputs) fail_msg("%s: tensor index %d", p->id, ew[k].p);
            assert_int_equal(p->inputs[ew[k].p].role, SUITE_ROLE_INPUT);
        }
        if (kind == EW_DIV_C) assert_true(ew[k].a != 0.0);
        if (kind == EW_CLAMP) assert_true(ew[k].a <= ew[k].b);
    }
    if (k == CHAIN_MAX_EW) fail_msg("%s: elementwise list not terminated", p->id);
}

static void test_every_chain_has_a_consistent_spec(void **state)
{
    (void)state;
    int n = suite_count(), chains = 0;
    for (int i = 0; i < n; i++) {
        const suite_problem *p = suite_get(i);
        if (!is_chain(p)) {
            assert_int_not_equal(p->level, 2);
            continue;
        }
        chains++;
        const chain_spec *sp = suite_chain(p->op);
        if (!sp) fail_msg("%s: no chain spec", p->id);
        assert_int_equal(sp->op, p->op);
        /* conv chains need cuDNN, linear ones not */
        if (sp->producer == CHAIN_LINEAR) assert_false(OP_NEEDS_CUDNN(p->op));
        else assert_true(OP_NEEDS_CUDNN(p->op));
        int wi = sp->w_in > 0 ? sp->w_in : 1;
        if (sp->w2) {
            /* a second linear layer: weight and bias are parameters */
            assert_int_equal(sp->producer, CHAIN_LINEAR);
            assert_int_equal(p->inputs[sp->w2].role, SUITE_ROLE_PARAM);
            assert_int_equal(p->inputs[sp->w2 + 1].role, SUITE_ROLE_PARAM);
        }
        for (int k = 0; k < wi; k++) assert_int_equal(p->inputs[k].role, SUITE_ROLE_INPUT);
        assert_int_equal(p->inputs[wi].role, SUITE_ROLE_PARAM);
        if (sp->has_bias) assert_int_equal(p->inputs[wi + 1].role, SUITE_ROLE_PARAM);
        check_ew(p, sp->ew1);
        check_ew(p, sp->ew2);
        int k = 0;
        for (; k < CHAIN_MAX_STAGES && sp->post[k].kind != ST_END; k++) {
            const chain_stage *st = &sp->post[k];
            check_ew(p, st->ew);
            if (st->gamma >= 0) assert_int_equal(p->inputs[st->gamma].role, SUITE_ROLE_PARAM);
            if (st->beta >= 0) assert_int_equal(p->inputs[st->beta].role, SUITE_ROLE_PARAM);
            if (st->kind == ST_OUTER_ADD_P) assert_int_equal(p->inputs[st->p].role, SUITE_ROLE_PARAM);
        }
        /* whatever the stages, they end in the output's number of values */
        chain_dims a, m, f;
        long long mx;
        if (chain_shapes(p, sp, &a, &m, &f, &mx)) fail_msg("%s: the stages do not fit the shapes", p->id);
        if (chain_numel(&f) != suite_numel(&p->outputs[0]))
            fail_msg("%s: the chain ends in %lld values, the output has %lld", p->id, chain_numel(&f),
                     (long long)suite_numel(&p->outputs[0]));
        if (sp->mid == MID_GROUPNORM && sp->gamma < 0) {
            /* a norm without affine parameters (instance norm of a row) */
            assert_true(sp->beta < 0);
        } else if (sp->mid == MID_BATCHNORM || sp->mid == MID_GROUPNORM) {
            assert_true(sp->gamma > 0 && sp->gamma < p->n_inputs);
            assert_true(sp->beta > 0 && sp->beta < p->n_inputs);
            /* PyTorch's affine defaults */
            assert_int_equal(p->inputs[sp->gamma].gen.kind, SUITE_GEN_CONST);
            assert_true(p->inputs[sp->gamma].gen.a == 1.0);
            assert_true(p->inputs[sp->beta].gen.a == 0.0);
        }
        if (sp->mid == MID_GROUPNORM) assert_true(sp->groups >= 1);
        assert_true(p->uses_tf32);
    }
    /* level 2 complete but for 66 (docs/DESIGN.md 5.1 says why) */
    assert_int_equal(chains, 99);
}

/* Output shape = producer shape, reduced by the middle stage. */
static void test_chain_output_shapes(void **state)
{
    (void)state;
    int n = suite_count();
    for (int i = 0; i < n; i++) {
        const suite_problem *p = suite_get(i);
        if (!is_chain(p)) continue;
        const chain_spec *sp = suite_chain(p->op);
        if (sp->post[0].kind != ST_END || sp->w_in > 1 || sp->w2 || sp->in_pool)
            continue; /* test_post_stage_samples */
        const suite_tensor *x = &p->inputs[0], *w = &p->inputs[1], *y = &p->outputs[0];
        int64_t shape[KBV_MAX_DIMS];
        int nd;
        if (sp->producer == CHAIN_LINEAR) {
            assert_int_equal(x->ndim, 2);
            assert_int_equal(w->shape[1], x->shape[1]);
            nd = 2;
            shape[0] = x->shape[0];
            shape[1] = w->shape[0];
        } else {
            nd = x->ndim;
            int s = (int)attr(p, "stride", 1), pd = (int)attr(p, "padding", 0);
            int op = (int)attr(p, "output_padding", 0);
            shape[0] = x->shape[0];
            shape[1] = sp->producer == CHAIN_CONV_T ? w->shape[1] : w->shape[0];
            assert_int_equal(sp->producer == CHAIN_CONV_T ? w->shape[0] : w->shape[1], x->shape[1]);
            for (int d = 2; d < nd; d++) {
                int64_t L = x->shape[d], k = w->shape[d];
                shape[d] = sp->producer == CHAIN_CONV_T ? (L - 1) * s - 2 * pd + (k - 1) + op + 1
                                                        : (L + 2 * pd - (k - 1) - 1) / s + 1;
            }
        }
        if (sp->mid >= MID_SUM_C && sp->mid <= MID_LSE_C) {
            shape[1] = 1;
        } else if (sp->mid == MID_GAP) {
            nd = 2;
        }
        /* PyTorch keeps some reduced axes (keepdim, a second global pool of
         * a 1x1 map): compare the extents other than 1, in order */
        int64_t want[KBV_MAX_DIMS], got[KBV_MAX_DIMS];
        int nw = 0, ng = 0;
        for (int d = 0; d < nd; d++)
            if (shape[d] != 1) want[nw++] = shape[d];
        for (int d = 0; d < y->ndim; d++)
            if (y->shape[d] != 1) got[ng++] = y->shape[d];
        if (nw != ng) fail_msg("%s: %d extents other than 1, expected %d", p->id, ng, nw);
        for (int d = 0; d < nw; d++)
            if (got[d] != want[d])
                fail_msg("%s: output extent %d is %lld, expected %lld", p->id, d, (long long)got[d],
                         (long long)want[d]);
    }
}

/* Samples worked by hand from the KernelBench files. */
static void test_chain_samples(void **state)
{
    (void)state;
    /* ConvTranspose2d k 4, s 2, p 1, output_padding 1 on 256: 255 * 2 - 2 + 3 + 1 + 1 = 513 */
    const suite_problem *p = suite_find("L2_005_convtranspose2d_subtract_tanh");
    assert_non_null(p);
    assert_int_equal(p->outputs[0].shape[2], 513);
    assert_int_equal(p->inputs[3].gen.kind, SUITE_GEN_NORMAL);    /* torch.randn bias */
    /* Linear 8192 -> 8192 on 1024 rows, then a row sum: [1024, 1] */
    p = suite_find("L2_014_gemm_divide_sum_scaling");
    assert_non_null(p);
    assert_int_equal(p->outputs[0].shape[0], 1024);
    assert_int_equal(p->outputs[0].shape[1], 1);
    assert_true(p->flops >= 2.0 * 1024 * 8192 * 8192);
    const chain_spec *sp = suite_chain(p->op);
    assert_int_equal(sp->has_bias, 0);
    assert_int_equal(sp->mid, MID_SUM_C);
    /* nn.Parameter(torch.tensor(2.0)) is a 0-d parameter starting at 2 */
    p = suite_find("L2_068_matmul_min_subtract");
    assert_non_null(p);
    assert_int_equal(p->inputs[3].ndim, 0);
    assert_true(p->inputs[3].gen.kind == SUITE_GEN_CONST && p->inputs[3].gen.a == 2.0);
    /* Gemm + GroupNorm(16) + Hardtanh(-2, 2) */
    p = suite_find("L2_030_gemm_groupnorm_hardtanh");
    assert_non_null(p);
    sp = suite_chain(p->op);
    assert_int_equal(sp->mid, MID_GROUPNORM);
    assert_int_equal(sp->groups, 16);
    assert_int_equal(sp->ew2[0].kind, EW_CLAMP);
    assert_true(sp->ew2[0].a == -2.0 && sp->ew2[0].b == 2.0);
    assert_null(suite_chain(OP_RELU));
}

static void expect_final(const char *id, long long N, long long C, int nd, long long d0, long long d1, long long d2)
{
    const suite_problem *p = suite_find(id);
    if (!p) fail_msg("%s: not in the registry", id);
    chain_dims a, m, f;
    long long mx;
    assert_int_equal(chain_shapes(p, suite_chain(p->op), &a, &m, &f, &mx), 0);
    if (f.N != N || f.C != C || f.nd != nd) fail_msg("%s: [%lld, %lld] nd %d", id, f.N, f.C, f.nd);
    long long want[3] = { d0, d1, d2 };
    for (int i = 0; i < nd; i++)
        if (f.d[i] != want[i]) fail_msg("%s: axis %d is %lld, expected %lld", id, i, f.d[i], want[i]);
}

/* The post stages' shapes, worked by hand from the KernelBench files. */
static void test_post_stage_samples(void **state)
{
    (void)state;
    /* conv3d k3 on 16x32x32: 14x30x30; maxpool 2 twice: 7x15x15, 3x7x7 */
    expect_final("L2_006_conv3d_softmax_maxpool_maxpool", 128, 16, 3, 3, 7, 7);
    /* convT3d k5 s2 p2 on 32: 63; maxpool 2: 31; maxpool 3: 10; sum over C */
    expect_final("L2_078_convtranspose3d_max_max_sum", 16, 1, 3, 10, 10, 10);
    /* conv3d on 24x32x32: 22x30x30, min over the depth: 30x30 */
    expect_final("L2_024_conv3d_min_softmax", 128, 24, 2, 30, 30, 0);
    /* convT2d k3 s2 p1 op1 on 128: 256; min over C, sum over H: [16, 1, 256] */
    expect_final("L2_036_convtranspose2d_min_sum_gelu_add", 16, 1, 1, 256, 0, 0);
    /* features as one map: 32768 / 2 = 16384, then everything summed */
    expect_final("L2_055_matmul_maxpool_sum_scale", 128, 1, 0, 0, 0, 0);
    /* [1024, 1] + [1, 8192, 1, 1]: 8192 x 1024 values */
    expect_final("L2_075_gemm_groupnorm_min_biasadd", 1, 8192, 1, 1024, 0, 0);
    /* [2048, 1] + x [2048, 8192] */
    expect_final("L2_051_gemm_subtract_globalavgpool_logsumexp_gelu_residualadd", 2048, 8192, 0, 0, 0, 0);
    /* layer norm keeps the shape; avgpool 2 on 32x64x64 */
    expect_final("L2_003_convtranspose3d_sum_layernorm_avgpool_gelu", 32, 64, 3, 16, 32, 32);
    /* linear 2048 -> 4096, sigmoid, linear 4096 -> 1024, logsumexp: [16384] */
    expect_final("L2_045_gemm_sigmoid_logsumexp", 16384, 1, 0, 0, 0, 0);
    /* avgpool 2 of 32x64x64: 16x32x32; convT k3 s2 p1 op1: 32x64x64 */
    expect_final("L2_038_convtranspose3d_avgpool_clamp_softmax_multiply", 32, 64, 3, 32, 64, 64);
    /* the weight after x and add_input */
    const suite_problem *p = suite_find("L2_026_convtranspose3d_add_hardswish");
    assert_non_null(p);
    assert_int_equal(suite_chain(p->op)->w_in, 2);
    /* a pooling window wider than its extent does not fit */
    chain_dims d = { .N = 1, .C = 1, .nd = 1, .d = { 3, 0, 0 } };
    chain_stage st = { .kind = ST_MAXPOOL, .k = 4 };
    assert_int_equal(chain_stage_shape(p, &st, &d), -1);
    st.kind = ST_MIN_AXIS;
    st.axis = 1;
    assert_int_equal(chain_stage_shape(p, &st, &d), -1);
}

/* What each chain reads after its producer (chain_reads_input, and
 * chain_reads_param without ST_ADD_X0's x): a bf16 path that leaves the
 * producer's inputs in bfloat16 widens exactly the latter. */
static void test_inputs_read_after_the_producer(void **state)
{
    (void)state;
    /* x + original_x: the call's input again at the end */
    const suite_problem *p = suite_find("L2_051_gemm_subtract_globalavgpool_logsumexp_gelu_residualadd");
    assert_non_null(p);
    const chain_spec *sp = suite_chain(p->op);
    assert_true(chain_reads_input(sp, 0));
    assert_false(chain_reads_input(sp, 1));
    assert_true(chain_reads_input(sp, 3));   /* self.subtract */
    /* but the stage that adds x back reads it in either type: no
     * parameter read of x, so the bf16 path keeps it bfloat16 */
    assert_false(chain_reads_param(sp, 0));
    assert_true(chain_reads_param(sp, 3));
    /* x is the product's alone */
    p = suite_find("L2_022_matmul_scale_residualadd_clamp_logsumexp_mish");
    assert_non_null(p);
    assert_false(chain_reads_input(suite_chain(p->op), 0));
    /* the added tensor comes before the weight */
    p = suite_find("L2_026_convtranspose3d_add_hardswish");
    assert_non_null(p);
    assert_true(chain_reads_input(suite_chain(p->op), 1));
    assert_false(chain_reads_input(suite_chain(p->op), 0));
    /* group norm's affine parameters */
    p = suite_find("L2_030_gemm_groupnorm_hardtanh");
    assert_non_null(p);
    sp = suite_chain(p->op);
    assert_true(chain_reads_input(sp, sp->gamma) && chain_reads_input(sp, sp->beta));
    assert_false(chain_reads_input(NULL, 0));
    /* Every input of every chain is read by someone: the producer (x, its
     * weight and bias, a second layer's) or a step after it; an input that
     * neither reads would be one the bf16 path forgets to widen. */
    int chains = 0;
    for (int k = 0; k < suite_count(); k++) {
        p = suite_get(k);
        sp = suite_chain(p->op);
        if (!sp) continue;
        chains++;
        int wi = sp->w_in > 0 ? sp->w_in : 1;
        for (int i = 0; i < p->n_inputs; i++) {
            int producer = i == 0 || i == wi || (sp->has_bias && i == wi + 1) ||
                           (sp->w2 > 0 && (i == sp->w2 || i == sp->w2 + 1));
            /* KernelBench's model 26 declares a bias it never uses */
            int unused = strcmp(p->id, "L2_026_convtranspose3d_add_hardswish") == 0 && i == 4;
            if (!producer && !unused && !chain_reads_input(sp, i))
                fail_msg("%s: input %d (%s) is read by nothing", p->id, i, p->inputs[i].name);
            /* the two differ only in x that ST_ADD_X0 adds back */
            if (chain_reads_param(sp, i) != chain_reads_input(sp, i) && i != 0)
                fail_msg("%s: input %d: chain_reads_param differs beyond x", p->id, i);
            if (unused && chain_reads_input(sp, i)) fail_msg("%s: input %d is read after all", p->id, i);
        }
    }
    assert_true(chains >= 97);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_chain_has_a_consistent_spec),
        cmocka_unit_test(test_chain_output_shapes),
        cmocka_unit_test(test_chain_samples),
        cmocka_unit_test(test_post_stage_samples),
        cmocka_unit_test(test_inputs_read_after_the_producer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
