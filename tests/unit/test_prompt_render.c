/* Unit tests of collect/suite/prompt.c: placeholder substitution, errors that
 * name the template line and the unknown placeholder, the input, output and
 * attribute lists for problems whose KernelBench definitions are known, and
 * the suggestions for mistyped problem ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "prompt.h"
#include "suite.h"

static const suite_problem *need(const char *id)
{
    const suite_problem *p = suite_find(id);
    assert_non_null(p);
    return p;
}

static char *render_ok(const char *tmpl, const char *id)
{
    char *out = NULL;
    kbv_err e = { 0 };
    int rc = prompt_render(tmpl, "t.txt", need(id), 0, &out, &e);
    if (rc != 0) fail_msg("render failed: %s", e.msg);
    assert_non_null(out);
    return out;
}

/* A blind prompt (issue 17) names shapes and dtypes but no value
 * distribution, no hidden transform and no D5; cumprod, the hinge loss, the
 * LSTM (L3_035) and NetVLAD (L3_047) are blind by default, the others not. */
static void test_blind(void **state)
{
    (void)state;
    const suite_problem *h = need("L1_100_hingeloss");
    assert_int_equal(prompt_blind_default(h), 1);
    assert_int_equal(prompt_blind_default(need("L1_090_cumprod")), 1);
    assert_int_equal(prompt_blind_default(need("L1_019_relu")), 0);
    /* KernelBench-Verified's LSTM and NetVLAD without ghost clusters too */
    assert_int_equal(prompt_blind_default(need("L3_035_lstm")), 1);
    assert_int_equal(prompt_blind_default(need("L3_047_netvladnoghostclusters")), 1);
    assert_int_equal(prompt_blind_default(need("L3_046_netvladwithghostclusters")), 0);
    char *seen = NULL, *blind = NULL;
    kbv_err e = { 0 };
    assert_int_equal(prompt_render("{{inputs}}{{distributions}}", "t.txt", h, 0, &seen, &e), 0);
    assert_int_equal(prompt_render("{{inputs}}{{distributions}}", "t.txt", h, 1, &blind, &e), 0);
    assert_non_null(strstr(seen, "torch.rand"));
    assert_non_null(strstr(seen, "D5"));
    static const char *const gone[] = {"torch.rand", "U[", "D2", "times 3", "D5", "alternating", "1 at even",
                                       "values:", NULL};
    for (int i = 0; gone[i]; i++)
        if (strstr(blind, gone[i])) fail_msg("blind prompt says '%s':\n%s", gone[i], blind);
    assert_non_null(strstr(blind, "[32768, 32768]"));   /* shapes stay */
    free(seen);
    free(blind);
}

static void test_plain_text_passes_through(void **state)
{
    (void)state;
    char *out = render_ok("no placeholders here\n{ single } braces }}\n", "L1_019_relu");
    assert_string_equal(out, "no placeholders here\n{ single } braces }}\n");
    free(out);
    out = render_ok("", "L1_019_relu");
    assert_string_equal(out, "");
    free(out);
}

/* The BF16 setting (issue 17): floating-point tensors are bfloat16 in the
 * lists and __nv_bfloat16 in the skeleton, integer ones stay int64, the
 * tolerance is 1e-2, the precision paragraph names the bf16 baseline, and
 * the BF16 note follows the template's text once; the FP32 prompt has
 * none of it. */
static void test_bf16(void **state)
{
    (void)state;
    static const char tmpl[] = "{{inputs}}|{{outputs}}|{{skeleton}}|{{tolerance}}|{{precision}}|END";
    const char *ids[] = {"L1_019_relu", "L1_001_square_matrix_multiplication", NULL};
    for (int k = 0; ids[k]; k++) {
        char *f = NULL, *b = NULL;
        kbv_err e = { 0 };
        assert_int_equal(prompt_render(tmpl, "t.txt", need(ids[k]), 0, &f, &e), 0);
        assert_int_equal(prompt_render(tmpl, "t.txt", need(ids[k]), PROMPT_BF16, &b, &e), 0);
        assert_non_null(strstr(f, "float32"));
        assert_null(strstr(f, "bfloat16"));
        assert_null(strstr(f, "BF16"));
        assert_non_null(strstr(f, "1e-3 + 1e-3"));
        /* What the placeholders say, before the note (which names float32
         * to say what to read instead). */
        const char *end0 = strstr(b, "|END");
        assert_non_null(end0);
        char *head = strndup(b, (size_t)(end0 - b));
        assert_non_null(head);
        assert_null(strstr(head, "float32"));
        assert_null(strstr(head, "const float *"));
        free(head);
        assert_non_null(strstr(b, "bfloat16"));
        assert_non_null(strstr(b, "const __nv_bfloat16 *"));
        assert_non_null(strstr(b, "__nv_bfloat16 *out"));
        assert_non_null(strstr(b, "|out - ref| <= max(1e-2 * min(1, max |ref|), 1.2e-7) + 1e-2 * |ref|"));
        assert_non_null(strstr(b, "one baseline, bf16"));
        assert_null(strstr(b, "TF32"));
        /* The note comes once, after everything the template says. */
        const char *end = strstr(b, "|END"), *note = strstr(b, "# The BF16 setting");
        assert_non_null(end);
        assert_non_null(note);
        assert_true(note > end);
        assert_null(strstr(note + 1, "# The BF16 setting"));
        assert_string_equal(note - 1, PROMPT_BF16_NOTE);
        free(f);
        free(b);
    }
    /* Integer inputs stay int64 (cross entropy's targets). */
    const suite_problem *ce = suite_find("L1_095_crossentropyloss");
    if (ce) {
        char *b = NULL;
        kbv_err e = { 0 };
        assert_int_equal(prompt_render("{{inputs}}", "t.txt", ce, PROMPT_BF16, &b, &e), 0);
        assert_non_null(strstr(b, "int64"));
        assert_non_null(strstr(b, "bfloat16"));
        free(b);
    }
    /* Blind and BF16 together. */
    char *bb = NULL;
    kbv_err e = { 0 };
    assert_int_equal(prompt_render("{{inputs}}", "t.txt", need("L1_100_hingeloss"), PROMPT_BLIND | PROMPT_BF16, &bb,
                                   &e), 0);
    assert_null(strstr(bb, "values:"));
    assert_non_null(strstr(bb, "bfloat16"));
    free(bb);
}

static void test_scalar_placeholders(void **state)
{
    (void)state;
    /* KernelBench 19_ReLU: level 1, number 19, torch.relu(x). */
    char *out = render_ok("{{id}}|{{level}}|{{number}}|{{name}}|{{expr}}", "L1_019_relu");
    assert_string_equal(out, "L1_019_relu|1|19|19_ReLU|torch.relu(x)");
    free(out);
}

static void test_computation_single_and_steps(void **state)
{
    (void)state;
    char *out = render_ok("{{computation}}", "L1_019_relu");
    assert_string_equal(out, "    out = torch.relu(x)\n");
    free(out);
    /* Every problem written as a list of steps renders one numbered line a
     * step, in order, then the line that names the result. */
    int seen = 0;
    for (int k = 0; k < suite_count(); k++) {
        const suite_problem *p = suite_get(k);
        if (!p->expr || !strchr(p->expr, ';')) continue;
        seen++;
        kbv_err e = { 0 };
        assert_int_equal(prompt_render("{{computation}}", "t.txt", p, 0, &out, &e), 0);
        int steps = 0;
        for (const char *c = p->expr, *start = p->expr;; c++) {
            if (*c == ';' || *c == '\0') {
                const char *a = start;
                while (a < c && *a == ' ') a++;
                if (a < c) steps++;
                if (*c == '\0') break;
                start = c + 1;
            }
        }
        char want[32];
        snprintf(want, sizeof want, "    %d. ", steps);
        assert_non_null(strstr(out, "    1. "));
        assert_non_null(strstr(out, want));
        snprintf(want, sizeof want, "    %d. ", steps + 1);
        assert_null(strstr(out, want));
        const char *tail = "    out = the result of the last step\n";
        assert_true(strlen(out) > strlen(tail));
        assert_string_equal(out + strlen(out) - strlen(tail), tail);
        free(out);
    }
    /* level 2 has such problems */
    if (suite_find("L2_021_conv2d_add_scale_sigmoid_groupnorm")) assert_true(seen > 0);
}

static void test_inputs_in_order_with_shapes(void **state)
{
    (void)state;
    /* 1_Square_matrix_multiplication_: A and B, N = 2048 * 2, torch.rand. */
    char *out = render_ok("{{inputs}}", "L1_001_square_matrix_multiplication");
    const char *a = strstr(out, "call->inputs[0]: A, input float32, shape [4096, 4096]");
    const char *b = strstr(out, "call->inputs[1]: B, input float32, shape [4096, 4096]");
    assert_non_null(a);
    assert_non_null(b);
    assert_true(a < b);
    assert_non_null(strstr(out, "U[0, 1) (torch.rand)"));
    assert_null(strstr(out, "call->inputs[2]"));
    free(out);
}

static void test_outputs_and_attrs(void **state)
{
    (void)state;
    char *out = render_ok("{{outputs}}", "L1_001_square_matrix_multiplication");
    /* 4096 * 4096 = 16777216 elements */
    assert_non_null(strstr(out, "call->outputs[0]: float32, shape [4096, 4096] (16777216 elements)"));
    free(out);
    /* 20_LeakyReLU: negative_slope = 0.01. */
    out = render_ok("{{attrs}}", "L1_020_leakyrelu");
    assert_non_null(strstr(out, "call->attrs[0]: negative_slope = 0.01"));
    free(out);
    /* 32_HardTanh: min_val = -1, max_val = 1, in that order. */
    out = render_ok("{{attrs}}", "L1_032_hardtanh");
    const char *lo = strstr(out, "call->attrs[0]: min_val = -1");
    const char *hi = strstr(out, "call->attrs[1]: max_val = 1");
    assert_non_null(lo);
    assert_non_null(hi);
    assert_true(lo < hi);
    free(out);
    out = render_ok("{{attrs}}", "L1_019_relu");
    assert_non_null(strstr(out, "none"));
    free(out);
}

static void test_skeleton_names_every_tensor(void **state)
{
    (void)state;
    char *out = render_ok("{{skeleton}}", "L1_001_square_matrix_multiplication");
    assert_non_null(strstr(out, "const float *A = (const float *)call->inputs[0].data;"));
    assert_non_null(strstr(out, "const float *B = (const float *)call->inputs[1].data;"));
    assert_non_null(strstr(out, "float *out = (float *)call->outputs[0].data;"));
    free(out);
}

static void test_precision_depends_on_matrix_product(void **state)
{
    (void)state;
    char *mm = render_ok("{{precision}}", "L1_001_square_matrix_multiplication");
    char *el = render_ok("{{precision}}", "L1_019_relu");
    assert_non_null(strstr(mm, "TF32"));
    assert_null(strstr(el, "TF32 tensor cores are allowed"));
    free(mm);
    free(el);
}

static void test_unknown_placeholder_is_named(void **state)
{
    (void)state;
    char *out = (char *)0x1;
    kbv_err e = { 0 };
    int rc = prompt_render("line one\nline two\nthen {{nope}} here\n", "tmpl.txt", need("L1_019_relu"), 0, &out,
                           &e);
    assert_int_equal(rc, KBV_EINPUT);
    assert_null(out);
    assert_non_null(strstr(e.msg, "tmpl.txt:3"));
    assert_non_null(strstr(e.msg, "{{nope}}"));
}

static void test_malformed_placeholders(void **state)
{
    (void)state;
    static const char *bad[] = { "{{id", "x {{ id }}", "{{id}", "{{}}", "{{a-b}}" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out = NULL;
        kbv_err e = { 0 };
        int rc = prompt_render(bad[i], "t.txt", need("L1_019_relu"), 0, &out, &e);
        if (rc != KBV_EINPUT) fail_msg("'%s' gave %d", bad[i], rc);
        assert_null(out);
        assert_non_null(strstr(e.msg, "t.txt:1"));
    }
}

static void test_every_placeholder_renders_for_every_problem(void **state)
{
    (void)state;
    for (int k = 0; k < suite_count(); k++) {
        const suite_problem *p = suite_get(k);
        assert_non_null(p);
        for (const char *const *n = prompt_placeholders(); *n; n++) {
            char tmpl[64], *out = NULL;
            kbv_err e = { 0 };
            snprintf(tmpl, sizeof tmpl, "<{{%s}}>", *n);
            if (prompt_render(tmpl, "t.txt", p, 0, &out, &e) != 0) fail_msg("%s {{%s}}: %s", p->id, *n, e.msg);
            assert_true(strlen(out) > 2);
            free(out);
        }
    }
}

static void test_suggestions(void **state)
{
    (void)state;
    const char *ids[5];
    int n = prompt_suggest("L1_019_rel", ids, 5);
    assert_true(n >= 1);
    assert_string_equal(ids[0], "L1_019_relu");
    /* "relu" is inside both ReLU ids; the shorter id is the closer one. */
    n = prompt_suggest("relu", ids, 5);
    assert_true(n >= 2);
    assert_string_equal(ids[0], "L1_019_relu");
    assert_string_equal(ids[1], "L1_020_leakyrelu");
    /* one letter wrong, case differs */
    n = prompt_suggest("L1_019_RELV", ids, 5);
    assert_true(n >= 1);
    assert_string_equal(ids[0], "L1_019_relu");
    assert_int_equal(prompt_suggest("zzzzzzzzzzzzzzzzzzzz", ids, 5), 0);
    assert_int_equal(prompt_suggest("relu", ids, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_text_passes_through),
        cmocka_unit_test(test_blind),
        cmocka_unit_test(test_bf16),
        cmocka_unit_test(test_scalar_placeholders),
        cmocka_unit_test(test_computation_single_and_steps),
        cmocka_unit_test(test_inputs_in_order_with_shapes),
        cmocka_unit_test(test_outputs_and_attrs),
        cmocka_unit_test(test_skeleton_names_every_tensor),
        cmocka_unit_test(test_precision_depends_on_matrix_product),
        cmocka_unit_test(test_unknown_placeholder_is_named),
        cmocka_unit_test(test_malformed_placeholders),
        cmocka_unit_test(test_every_placeholder_renders_for_every_problem),
        cmocka_unit_test(test_suggestions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
