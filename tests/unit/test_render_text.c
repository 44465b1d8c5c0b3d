/* Unit tests of render/: text measuring (fontm) against advance widths read
 * by hand from DejaVu Sans's hmtx table (units per em 2048: 'H' 1540, '0'
 * 1303, ' ' 651, '?' 1087, en dash 1024), Windows-1252 mapping, text
 * anchoring through a recording canvas backend, and line wrapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canvas.h"
#include "chart.h"
#include "fontm.h"

#define REG "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
#define BOLD "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"

static int setup(void **state)
{
    fontm *f = NULL;
    kbv_err e = {0};
    if (fontm_open(&f, REG, BOLD, &e) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fontm_free(*state);
    return 0;
}

static void test_widths(void **state)
{
    const fontm *f = *state;
    assert_true(fabs(fontm_width(f, 0, 10, "H") - 1540.0 / 2048 * 10) < 1e-9);
    assert_true(fabs(fontm_width(f, 0, 8, "H0 0") - (1540.0 + 1303 + 651 + 1303) / 2048 * 8) < 1e-9);
    /* U+2013 is in Windows-1252 (0x96): its own width. */
    assert_true(fabs(fontm_width(f, 0, 10, "\xe2\x80\x93") - 1024.0 / 2048 * 10) < 1e-9);
    /* U+2265 is not: measured as the '?' the backends draw instead. */
    assert_true(fabs(fontm_width(f, 0, 10, "\xe2\x89\xa5") - 1087.0 / 2048 * 10) < 1e-9);
    /* Bold is wider than regular for the same text. */
    assert_true(fontm_width(f, 1, 10, "Headline") > fontm_width(f, 0, 10, "Headline"));
    assert_true(fabs(fontm_width_n(f, 0, 10, "H0", 1) - 1540.0 / 2048 * 10) < 1e-9);
}

static void test_cp1252(void **state)
{
    (void)state;
    assert_int_equal(fontm_cp1252('A'), 'A');
    assert_int_equal(fontm_cp1252(0x20AC), 0x80);   /* euro */
    assert_int_equal(fontm_cp1252(0x2013), 0x96);   /* en dash */
    assert_int_equal(fontm_cp1252(0x00D7), 0xD7);   /* multiplication sign */
    assert_int_equal(fontm_cp1252(0x2265), '?');
    assert_int_equal(fontm_cp1252(0x81), '?');      /* a C1 control */
    const char *s = "a\xc3\x97\xe2\x82\xac\xff";
    assert_int_equal(fontm_utf8_next(&s), 'a');
    assert_int_equal(fontm_utf8_next(&s), 0xD7);
    assert_int_equal(fontm_utf8_next(&s), 0x20AC);
    assert_int_equal(fontm_utf8_next(&s), 0xFFFD);
    assert_int_equal(fontm_utf8_next(&s), 0);
}

/* A backend that records the last text call. */
typedef struct rec {
    canvas base;
    double x, y, angle;
    char text[128];
    int calls;
} rec;

static void r_nop_xy(canvas *c, double x, double y) { (void)c; (void)x; (void)y; }
static void r_curve(canvas *c, double a, double b, double d, double e, double f, double g)
{
    (void)c; (void)a; (void)b; (void)d; (void)e; (void)f; (void)g;
}
static void r_nop(canvas *c) { (void)c; }
static void r_rect(canvas *c, double x, double y, double w, double h) { (void)c; (void)x; (void)y; (void)w; (void)h; }
static void r_rgba(canvas *c, double r, double g, double b, double a) { (void)c; (void)r; (void)g; (void)b; (void)a; }
static void r_lw(canvas *c, double w) { (void)c; (void)w; }
static void r_dash(canvas *c, const double *d, int n) { (void)c; (void)d; (void)n; }
static void r_text(canvas *c, double x, double y, const char *s, double size, int bold, double angle)
{
    rec *r = (rec *)c;
    (void)size;
    (void)bold;
    r->x = x;
    r->y = y;
    r->angle = angle;
    snprintf(r->text, sizeof r->text, "%s", s);
    r->calls++;
}
static const canvas_ops rec_ops = {r_nop_xy, r_nop_xy, r_curve, r_nop, r_rect, r_nop, r_nop, r_nop,
                                   r_nop, r_nop, r_nop_xy, r_rgba, r_lw, r_dash, r_text, r_nop};

static void test_anchor(void **state)
{
    rec r = {{&rec_ops, *state, 100, 100}, 0, 0, 0, "", 0};
    canvas *c = &r.base;
    double wH = 1540.0 / 2048 * 10;
    double w = canvas_text(c, 100, 50, "H", 10, 0, CANVAS_RIGHT, 0);
    assert_true(fabs(w - wH) < 1e-9);
    assert_true(fabs(r.x - (100 - wH)) < 1e-9);
    assert_true(fabs(r.y - 50) < 1e-9);
    canvas_text(c, 100, 50, "H", 10, 0, CANVAS_CENTER, 0);
    assert_true(fabs(r.x - (100 - wH / 2)) < 1e-9);
    /* Middle: the baseline moves down by half the cap height, which is
     * between 0.3 and 0.4 em for DejaVu Sans (cap height 0.73 em). */
    canvas_text(c, 100, 50, "H", 10, 0, CANVAS_LEFT | CANVAS_MIDDLE, 0);
    assert_true(r.y > 53 && r.y < 54);
    /* Turned to read upwards: centring moves the start down by half the
     * width, and the vertical anchor moves it right. */
    canvas_text(c, 20, 50, "H", 10, 0, CANVAS_CENTER, 90);
    assert_true(fabs(r.y - (50 + wH / 2)) < 1e-9);
    assert_true(fabs(r.x - 20) < 1e-9);
    assert_true(r.angle == 90);
    /* A character outside Windows-1252 reaches the backend as '?'. */
    canvas_text(c, 0, 0, "a\xe2\x89\xa5" "b", 10, 0, CANVAS_LEFT, 0);
    assert_string_equal(r.text, "a?b");
    /* Empty text draws nothing. */
    int before = r.calls;
    canvas_text(c, 0, 0, "", 10, 0, CANVAS_LEFT, 0);
    assert_int_equal(r.calls, before);
}

static void test_wrap(void **state)
{
    const fontm *f = *state;
    const char *text = "the quick brown fox jumps over the lazy dog again and again";
    char *lines[16];
    double max_w = 60;
    int n = chart_wrap(f, text, 10, 0, max_w, lines, 16);
    assert_true(n > 1);
    char joined[256] = "";
    for (int i = 0; i < n; i++) {
        assert_true(fontm_width(f, 0, 10, lines[i]) <= max_w);
        if (i)
            strcat(joined, " ");
        strcat(joined, lines[i]);
        free(lines[i]);
    }
    assert_string_equal(joined, text);
    /* An identifier wider than the line is cut after an underscore. */
    n = chart_wrap(f, "L2_012_gemm_multiply_leakyrelu", 10, 0, 80, lines, 16);
    assert_true(n >= 2);
    size_t l0 = strlen(lines[0]);
    assert_true(l0 > 0 && lines[0][l0 - 1] == '_');
    assert_true(fontm_width(f, 0, 10, lines[0]) <= 80);
    for (int i = 0; i < n; i++)
        free(lines[i]);
    /* Nothing to wrap: no lines. */
    assert_int_equal(chart_wrap(f, "", 10, 0, 80, lines, 16), 0);
}

static void test_colors_marks(void **state)
{
    (void)state;
    canvas_rgba k;
    assert_int_equal(canvas_parse_color("#0072B2", &k), 0);
    assert_true(fabs(k.r - 0) < 1e-12 && fabs(k.g - 0x72 / 255.0) < 1e-12 && fabs(k.b - 0xB2 / 255.0) < 1e-12);
    assert_true(k.a == 1);
    assert_int_equal(canvas_parse_color("#00000080", &k), 0);
    assert_true(fabs(k.a - 128 / 255.0) < 1e-12);
    assert_int_equal(canvas_parse_color("0072B2", &k), -1);
    assert_int_equal(canvas_parse_color("#0072BZ", &k), -1);
    assert_int_equal(canvas_mark_parse("diamond"), MARK_DIAMOND);
    assert_int_equal(canvas_mark_parse("hexagon"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_widths),
        cmocka_unit_test(test_cp1252),
        cmocka_unit_test(test_anchor),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_colors_marks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
