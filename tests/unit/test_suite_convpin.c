/* Unit tests of collect/suite/convpin: the pin text that a baseline's
 * convolutions write (base_pins) is the text they read back (collect
 * --pins), for every kind of choice; other shapes, roles and GEMM pins are
 * not taken for it; a damaged pin is an error, not a silent default. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "convpin.h"

/* A 2D convolution of ResNet's first layer, and a 3D transposed one. */
static conv_geom resnet_stem(void)
{
    conv_geom g;
    memset(&g, 0, sizeof g);
    g.nd = 2;
    g.n = 10;
    g.cin = 3;
    g.cout = 64;
    g.groups = 1;
    for (int i = 0; i < 2; i++) {
        g.in[i] = 224;
        g.out[i] = 112;
        g.k[i] = 7;
        g.s[i] = 2;
        g.p[i] = 3;
        g.d[i] = 1;
    }
    return g;
}

static conv_geom transposed3d(void)
{
    conv_geom g;
    memset(&g, 0, sizeof g);
    g.nd = 3;
    g.transposed = 1;
    g.n = 16;
    g.cin = 32;
    g.cout = 64;
    g.groups = 4;
    for (int i = 0; i < 3; i++) {
        g.in[i] = 16 + i;
        g.out[i] = 33 + 2 * i;
        g.k[i] = 3;
        g.s[i] = 2;
        g.p[i] = 1;
        g.d[i] = 1 + (i == 2);
    }
    return g;
}

static void round_trips_every_kind(void **state)
{
    (void)state;
    conv_geom g = transposed3d();
    convpin_choice kinds[3];
    memset(kinds, 0, sizeof kinds);
    kinds[0].kind = CONVPIN_LEGACY;
    kinds[0].algo = 6;
    kinds[0].math = 3;
    kinds[1].kind = CONVPIN_GRAPH;
    kinds[1].plan = 2;
    kinds[1].engine = 58;
    kinds[1].algo = 1;
    kinds[1].math = 0;
    kinds[2].kind = CONVPIN_DIRECT;
    for (int i = 0; i < 3; i++) {
        char pin[512];
        assert_true(convpin_format(pin, sizeof pin, 't', &g, &kinds[i]) > 0);
        convpin_choice back;
        memset(&back, 0x55, sizeof back);
        assert_int_equal(convpin_find(pin, 't', &g, &back), 1);
        assert_int_equal(back.kind, kinds[i].kind);
        if (kinds[i].kind != CONVPIN_DIRECT) {
            assert_int_equal(back.algo, kinds[i].algo);
            assert_int_equal(back.math, kinds[i].math);
        }
        if (kinds[i].kind == CONVPIN_GRAPH) {
            assert_int_equal(back.plan, 2);
            assert_int_equal(back.engine, 58);
        }
    }
}

static void finds_its_own_among_others(void **state)
{
    (void)state;
    conv_geom a = resnet_stem(), b = transposed3d();
    convpin_choice fa = { CONVPIN_LEGACY, 1, 3, 0, 0 }, ra = { CONVPIN_LEGACY, 0, 3, 0, 0 },
                   fb = { CONVPIN_LEGACY, 7, 3, 0, 0 };
    char p1[512], p2[512], p3[512], text[2048];
    assert_true(convpin_format(p1, sizeof p1, 'f', &a, &fa) > 0);
    assert_true(convpin_format(p2, sizeof p2, 'r', &a, &ra) > 0);
    assert_true(convpin_format(p3, sizeof p3, 'f', &b, &fb) > 0);
    /* a GEMM pin first, as base_pins joins them */
    snprintf(text, sizeof text, "0,0,0,1,4096,4096,4096,4096,4096,4096,0,0,0,1,256,256,256=default;%s;%s;%s", p3,
             p1, p2);
    convpin_choice c;
    assert_int_equal(convpin_find(text, 'f', &a, &c), 1);
    assert_int_equal(c.algo, 1);
    assert_int_equal(convpin_find(text, 'r', &a, &c), 1);
    assert_int_equal(c.algo, 0);
    assert_int_equal(convpin_find(text, 'f', &b, &c), 1);
    assert_int_equal(c.algo, 7);
    /* a bf16 pin is its own role: found as 'b' only */
    convpin_choice ba = { CONVPIN_GRAPH, 1, 0, 3, 77 };
    char p4[512], text2[2600];
    assert_true(convpin_format(p4, sizeof p4, 'b', &a, &ba) > 0);
    assert_true(strncmp(p4, "conv.b:", 7) == 0);
    snprintf(text2, sizeof text2, "%s;%s", text, p4);
    assert_int_equal(convpin_find(text2, 'b', &a, &c), 1);
    assert_int_equal(c.kind, CONVPIN_GRAPH);
    assert_int_equal(c.plan, 3);
    assert_int_equal(c.engine, 77);
    assert_int_equal(convpin_find(text, 'b', &a, &c), 0);
    assert_int_equal(convpin_find(text2, 'f', &a, &c), 1);
    assert_int_equal(c.algo, 1);
    assert_true(convpin_format(p4, sizeof p4, 'x', &a, &ba) < 0);
    /* no tf32 pin, no reference pin for b, nothing in NULL or "" */
    assert_int_equal(convpin_find(text, 't', &a, &c), 0);
    assert_int_equal(convpin_find(text, 'r', &b, &c), 0);
    assert_int_equal(convpin_find(NULL, 'f', &a, &c), 0);
    assert_int_equal(convpin_find("", 'f', &a, &c), 0);
    /* a shape that differs in one number only is another shape */
    conv_geom a2 = a;
    a2.p[1] = 2;
    assert_int_equal(convpin_find(text, 'f', &a2, &c), 0);
    conv_geom a3 = a;
    a3.groups = 3;
    assert_int_equal(convpin_find(text, 'f', &a3, &c), 0);
}

static void damaged_pins_are_errors(void **state)
{
    (void)state;
    conv_geom g = resnet_stem();
    convpin_choice c = { CONVPIN_LEGACY, 1, 3, 0, 0 };
    char pin[512];
    int n = convpin_format(pin, sizeof pin, 'f', &g, &c);
    assert_true(n > 0);
    const char *tails[] = { "=a1", "=a1m", "=am3", "=a1m3x", "=g1/a1m3", "=g1e/a1m3", "=g1e5", "=dd", "=" };
    char prefix[512];
    memcpy(prefix, pin, (size_t)(strchr(pin, '=') - pin));
    prefix[strchr(pin, '=') - pin] = 0;
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        char bad[600];
        snprintf(bad, sizeof bad, "%s%s", prefix, tails[i]);
        assert_int_equal(convpin_find(bad, 'f', &g, &c), -1);
    }
}

static void refuses_what_it_cannot_write(void **state)
{
    (void)state;
    conv_geom g = resnet_stem();
    convpin_choice c = { CONVPIN_LEGACY, 1, 3, 0, 0 };
    char small[16], pin[512];
    assert_int_equal(convpin_format(small, sizeof small, 'f', &g, &c), -1);
    assert_string_equal(small, "");
    assert_int_equal(convpin_format(pin, sizeof pin, 'x', &g, &c), -1);
    assert_int_equal(convpin_find("conv.x:0,2=a1m3", 'x', &g, &c), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trips_every_kind),
        cmocka_unit_test(finds_its_own_among_others),
        cmocka_unit_test(damaged_pins_are_errors),
        cmocka_unit_test(refuses_what_it_cannot_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
