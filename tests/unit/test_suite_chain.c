/* test_suite_chain.c - the level-2 chain specifications against their
 * problems: every chain op has a spec, its parameter and norm indices name
 * parameters of the problem, conv chains need cuDNN and linear ones do not,
 * and the output shape is what the producer's formula and the middle stage
 * give (worked out here independently of the CUDA interpreter). */
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
        assert_int_equal(p->inputs[0].role, SUITE_ROLE_INPUT);
        assert_int_equal(p->inputs[1].role, SUITE_ROLE_PARAM);
        if (sp->has_bias) assert_int_equal(p->inputs[2].role, SUITE_ROLE_PARAM);
        check_ew(p, sp->ew1);
        check_ew(p, sp->ew2);
        if (sp->mid == MID_BATCHNORM || sp->mid == MID_GROUPNORM) {
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
    assert_true(chains >= 30);
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
        assert_int_equal(y->ndim, nd);
        for (int d = 0; d < nd; d++)
            if (y->shape[d] != shape[d])
                fail_msg("%s: output dim %d is %lld, expected %lld", p->id, d, (long long)y->shape[d],
                         (long long)shape[d]);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_chain_has_a_consistent_spec),
        cmocka_unit_test(test_chain_output_shapes),
        cmocka_unit_test(test_chain_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
