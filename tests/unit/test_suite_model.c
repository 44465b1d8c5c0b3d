/* test_suite_model.c - the level-3 models of fixed structure
 * (problems/l3model.h: the recurrent networks and NetVLAD) against their
 * problems: every model op has a spec that fits its x, the state inputs
 * and the output have the shapes PyTorch gives them, the packed layout is
 * contiguous in named_parameters() order and adds up to params, the
 * parameter counts of nn.LSTM and nn.GRU (worked out here by hand) come
 * out, the FLOPs and min_bytes in the table are the walk's, malformed specs
 * are refused with a reason, and the description names the gate order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "suite.h"
#include "ops.h"
#include "l3model.h"

static int is_model(const suite_problem *p)
{
    return (p->op >= OP_RNN_FIRST && p->op <= OP_RNN_LAST) || (p->op >= OP_MODEL_FIRST && p->op <= OP_MODEL_LAST);
}

static model_plan *walk(const suite_problem *p)
{
    model_plan *pl = calloc(1, sizeof *pl);
    assert_non_null(pl);
    char why[200] = "";
    const model_spec *sp = suite_model_of(p);
    if (!sp) fail_msg("%s: no model", p->id);
    if (model_plan_make(sp, p->inputs[0].shape, p->inputs[0].ndim, pl, why, sizeof why))
        fail_msg("%s: %s", p->id, why);
    return pl;
}

static void test_every_model_fits_its_problem(void **state)
{
    (void)state;
    int models = 0;
    for (int i = 0; i < suite_count(); i++) {
        const suite_problem *p = suite_get(i);
        if (!is_model(p)) {
            assert_null(suite_model_of(p));
            continue;
        }
        models++;
        assert_int_equal(p->level, 3);
        const model_spec *sp = suite_model_of(p);
        assert_non_null(sp);
        assert_int_equal(sp->op, p->op);
        model_plan *pl = walk(p);
        /* x, the state (h0, c0), then params */
        assert_int_equal(p->n_inputs, 2 + pl->n_state);
        assert_int_equal(p->inputs[0].role, SUITE_ROLE_INPUT);
        for (int s = 0; s < pl->n_state; s++) {
            const suite_tensor *t = &p->inputs[1 + s];
            assert_string_equal(t->name, s == 0 ? "h0" : "c0");
            assert_int_equal(t->role, SUITE_ROLE_INPUT);
            assert_int_equal(t->ndim, pl->state_ndim);
            for (int a = 0; a < t->ndim; a++) assert_int_equal(t->shape[a], pl->state[a]);
        }
        const suite_tensor *prm = &p->inputs[p->n_inputs - 1];
        assert_int_equal(prm->role, SUITE_ROLE_PARAM);
        assert_int_equal(prm->gen.kind, SUITE_GEN_PACKED);
        assert_int_equal(prm->ndim, 1);
        assert_int_equal(prm->shape[0], pl->n_param_floats);
        /* the output */
        assert_int_equal(p->n_outputs, 1);
        const suite_tensor *o = &p->outputs[0];
        assert_int_equal(o->ndim, pl->out_ndim);
        for (int a = 0; a < o->ndim; a++) assert_int_equal(o->shape[a], pl->out[a]);
        /* the layout: contiguous from 0 */
        int64_t at = 0;
        for (int q = 0; q < pl->n_parts; q++) {
            const model_part *pp = &pl->part[q];
            assert_int_equal(pp->offset, at);
            int64_t n = 1;
            for (int a = 0; a < pp->ndim; a++) n *= pp->d[a];
            assert_int_equal(n, pp->count);
            at += n;
        }
        assert_int_equal(at, pl->n_param_floats);
        /* the table's numbers are the walk's */
        if (pl->flops != p->flops) fail_msg("%s: flops %.1f, the walk %.1f", p->id, p->flops, pl->flops);
        double bytes = 0.0;
        for (int k = 0; k < p->n_inputs; k++) bytes += (double)suite_numel(&p->inputs[k]);
        bytes = 4.0 * (bytes + (double)suite_numel(o));
        if (bytes != p->min_bytes) fail_msg("%s: min_bytes %.0f, expected %.0f", p->id, p->min_bytes, bytes);
        /* the recurrent networks but the single-step cell need cuDNN */
        assert_int_equal(OP_NEEDS_CUDNN(p->op), sp->kind != MODEL_NETVLAD && !(sp->kind == MODEL_CAT_RNN &&
                                                                                p->inputs[0].ndim == 2));
        assert_true(p->uses_tf32);
        free(pl);
    }
    assert_int_equal(models, 12);
}

/* nn.LSTM's and nn.GRU's parameters per layer and direction: G gates of
 * H rows over the input and the state, and two biases. */
static int64_t rnn_layer(int64_t G, int64_t in, int64_t H)
{
    return G * H * in + G * H * H + 2 * G * H;
}

static void test_known_parameter_counts(void **state)
{
    (void)state;
    struct { const char *id; int64_t want; } known[] = {
        { "L3_033_vanillarnn", 16384LL * 32768 + 16384 + 8192LL * 16384 + 8192 },
        { "L3_034_vanillarnnhidden", 256 * 1280 + 256 + 128 * 256 + 128 },
        { "L3_035_lstm", rnn_layer(4, 128, 256) + 5 * rnn_layer(4, 256, 256) + 256 * 10 + 10 },
        { "L3_036_lstmhn", rnn_layer(4, 128, 256) + 5 * rnn_layer(4, 256, 256) + 256 * 10 + 10 },
        { "L3_038_lstmbidirectional", 2 * rnn_layer(4, 128, 256) + 10 * rnn_layer(4, 512, 256) + 512 * 10 + 10 },
        { "L3_039_gru", rnn_layer(3, 128, 256) + 5 * rnn_layer(3, 256, 256) },
        { "L3_042_grubidirectionalhidden", 2 * rnn_layer(3, 128, 256) + 10 * rnn_layer(3, 512, 256) },
        { "L3_046_netvladwithghostclusters", 512 * 48 + 512 * 32 + 2 * 48 },
        { "L3_047_netvladnoghostclusters", 512 * 32 + 512 * 32 + 2 * 32 },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const suite_problem *p = suite_find(known[i].id);
        if (!p) fail_msg("%s missing", known[i].id);
        model_plan *pl = walk(p);
        if (pl->n_param_floats != known[i].want)
            fail_msg("%s: %lld parameters, expected %lld", p->id, (long long)pl->n_param_floats,
                     (long long)known[i].want);
        free(pl);
    }
}

/* named_parameters() order and the initialisations. */
static void test_part_order_and_init(void **state)
{
    (void)state;
    model_plan *pl = walk(suite_find("L3_038_lstmbidirectional"));
    const char *want[] = { "lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0",
                           "lstm.weight_ih_l0_reverse", "lstm.weight_hh_l0_reverse", "lstm.bias_ih_l0_reverse",
                           "lstm.bias_hh_l0_reverse", "lstm.weight_ih_l1" };
    for (int i = 0; i < 9; i++) assert_string_equal(pl->part[i].name, want[i]);
    /* layer 1 reads both directions' features */
    assert_int_equal(pl->part[8].d[0], 1024);
    assert_int_equal(pl->part[8].d[1], 512);
    assert_string_equal(pl->part[pl->n_parts - 2].name, "fc.weight");
    assert_string_equal(pl->part[pl->n_parts - 1].name, "fc.bias");
    for (int i = 0; i < pl->n_parts - 2; i++) {
        /* U(-1/sqrt(hidden), 1/sqrt(hidden)) = U(-1/16, 1/16) */
        assert_int_equal(pl->part[i].gen.kind, SUITE_GEN_UNIFORM);
        assert_true(pl->part[i].gen.b == 0.0625 && pl->part[i].gen.a == -0.0625);
    }
    /* fc over 512 features */
    double k = pl->part[pl->n_parts - 1].gen.b;
    assert_true(k * k * 512.0 > 0.999999 && k * k * 512.0 < 1.000001);
    free(pl);

    pl = walk(suite_find("L3_046_netvladwithghostclusters"));
    assert_int_equal(pl->n_parts, 4);
    assert_string_equal(pl->part[0].name, "clusters");
    assert_string_equal(pl->part[1].name, "clusters2");
    assert_string_equal(pl->part[2].name, "batch_norm.weight");
    assert_string_equal(pl->part[3].name, "batch_norm.bias");
    assert_int_equal(pl->part[0].d[0], 512);
    assert_int_equal(pl->part[0].d[1], 48);
    assert_int_equal(pl->part[1].ndim, 3);
    assert_int_equal(pl->part[1].d[2], 32);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pl->part[i].gen.kind, SUITE_GEN_NORMAL);
        double v = pl->part[i].gen.b * pl->part[i].gen.b * 512.0;
        assert_true(pl->part[i].gen.a == 0.0 && v > 0.999999 && v < 1.000001);
    }
    assert_int_equal(pl->part[2].gen.kind, SUITE_GEN_CONST);
    assert_true(pl->part[2].gen.a == 1.0 && pl->part[3].gen.a == 0.0);
    free(pl);

    /* the cell: i2h over the concatenation, fan_in input + hidden */
    pl = walk(suite_find("L3_034_vanillarnnhidden"));
    assert_string_equal(pl->part[0].name, "i2h.weight");
    assert_int_equal(pl->part[0].d[1], 1280);
    k = pl->part[0].gen.b;
    assert_true(k * k * 1280.0 > 0.999999 && k * k * 1280.0 < 1.000001);
    assert_int_equal(pl->T, 256);
    assert_int_equal(pl->B, 8);
    free(pl);
}

/* The shapes that batch_first and the state layout give, worked out by hand. */
static void test_shapes(void **state)
{
    (void)state;
    model_plan *pl = walk(suite_find("L3_035_lstm"));   /* batch_first */
    assert_int_equal(pl->B, 10);
    assert_int_equal(pl->T, 512);
    assert_int_equal(pl->n_state, 2);
    free(pl);
    pl = walk(suite_find("L3_041_grubidirectional"));   /* seq-major, both directions */
    assert_int_equal(pl->B, 10);
    assert_int_equal(pl->T, 512);
    assert_int_equal(pl->n_state, 1);
    assert_int_equal(pl->state[0], 12);
    assert_int_equal(pl->out[2], 512);
    free(pl);
}

static int plan_of(const model_spec *sp, const int64_t *x, int ndim, char *why, size_t len)
{
    model_plan *pl = calloc(1, sizeof *pl);
    assert_non_null(pl);
    int rc = model_plan_make(sp, x, ndim, pl, why, len);
    free(pl);
    return rc;
}

static void test_malformed_specs_refused(void **state)
{
    (void)state;
    char why[200];
    int64_t x3[3] = { 4, 5, 8 }, x2[2] = { 4, 8 }, bad[3] = { 4, 5, 9 };
    model_spec gru = { 1, MODEL_GRU, MODEL_RES_CN, 8, 6, 2, 0, 0, 0, 0, 0 };
    assert_int_equal(plan_of(&gru, x3, 3, why, sizeof why), -1);
    assert_non_null(strstr(why, "c_n"));
    gru.result = MODEL_RES_HN;
    assert_int_equal(plan_of(&gru, x3, 3, why, sizeof why), 0);
    assert_int_equal(plan_of(&gru, bad, 3, why, sizeof why), -1);
    assert_non_null(strstr(why, "input size"));
    assert_int_equal(plan_of(&gru, x2, 2, why, sizeof why), -1);
    gru.result = MODEL_RES_HEAD_LAST;
    assert_int_equal(plan_of(&gru, x3, 3, why, sizeof why), -1);
    assert_non_null(strstr(why, "head"));
    /* the cell's one-step result needs a [B, input] x */
    model_spec cell = { 1, MODEL_CAT_RNN, MODEL_RES_HEAD_LAST, 8, 6, 1, 0, 0, 3, 0, 0 };
    assert_int_equal(plan_of(&cell, x2, 2, why, sizeof why), 0);
    assert_int_equal(plan_of(&cell, x3, 3, why, sizeof why), -1);
    model_spec vlad = { 1, MODEL_NETVLAD, MODEL_RES_VLAD, 8, 0, 0, 0, 1, 0, 0, 2 };
    assert_int_equal(plan_of(&vlad, x3, 3, why, sizeof why), -1);
    assert_non_null(strstr(why, "clusters"));
    model_spec none = { 1, 99, MODEL_RES_HN, 8, 6, 1, 0, 0, 0, 0, 0 };
    assert_int_equal(plan_of(&none, x3, 3, why, sizeof why), -1);
}

static void test_describe(void **state)
{
    (void)state;
    sbuf b = { 0 };
    assert_int_equal(model_describe(&b, suite_find("L3_036_lstmhn")), 0);
    assert_non_null(strstr(b.s, "model lstm: input 128, hidden 256, layers 6, directions 1, batch_first 1"));
    assert_non_null(strstr(b.s, "i, f, g, o"));
    assert_non_null(strstr(b.s, "discards it"));
    assert_non_null(strstr(b.s, "part lstm.weight_hh_l5: [1024, 256] at params["));
    assert_non_null(strstr(b.s, "state inputs after x: h0 [6, 10, 256], c0 [6, 10, 256]"));
    sb_free(&b);
    sbuf c = { 0 };
    assert_int_equal(model_describe(&c, suite_find("L3_042_grubidirectionalhidden")), 0);
    assert_non_null(strstr(c.s, "r, z, n"));
    assert_non_null(strstr(c.s, "part gru.bias_hh_l5_reverse: [768] at params[6505728]"));
    sb_free(&c);
    sbuf d = { 0 };
    assert_int_equal(model_describe(&d, suite_find("L3_001_mlp")), -1);
    assert_int_equal(d.len, 0);
    sb_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_model_fits_its_problem),
        cmocka_unit_test(test_known_parameter_counts),
        cmocka_unit_test(test_part_order_and_init),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_malformed_specs_refused),
        cmocka_unit_test(test_describe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
