/* Unit tests of render/'s backends: the same drawing gives the same SVG,
 * PNG and PDF bytes twice; the PNG decodes (by this test's own reading of
 * the PNG format with zlib) to the pixels drawn; the PDF embeds the font and
 * carries the date it was given, not the clock's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "canvas.h"
#include "pdfdoc.h"

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

/* A red square at (10, 10)-(30, 30) on white, a band with alpha, text, a
 * dashed line, every marker. */
static void draw(canvas *c)
{
    canvas_rgba red = {1, 0, 0, 1}, blue = {0, 0, 1, 1};
    canvas_color(c, red);
    canvas_rect(c, 10, 10, 20, 20);
    canvas_fill(c);
    canvas_color_a(c, blue, 0.2);
    canvas_rect(c, 40, 10, 20, 20);
    canvas_fill(c);
    canvas_color(c, blue);
    canvas_width(c, 1);
    double d[2] = {3, 2};
    canvas_dash(c, d, 2);
    canvas_segment(c, 0, 50, 100, 50);
    canvas_dash(c, NULL, 0);
    for (int m = 0; m < MARK_N; m++)
        canvas_marker(c, (canvas_mark)m, 10 + 10 * m, 70, 3, blue, red);
    canvas_text(c, 50, 90, "fast_p 1.83x [1.60\xe2\x80\x93" "2.05]", 8, 0, CANVAS_CENTER, 0);
    canvas_text(c, 5, 60, "up", 8, 1, CANVAS_CENTER, 90);
}

static void render(const fontm *f, int kind, unsigned char **data, size_t *len)
{
    canvas *c = NULL;
    kbv_err e = {0};
    assert_int_equal(canvas_cairo_new(&c, kind, 120, 100, 2, f, &e), 0);
    draw(c);
    assert_int_equal(canvas_cairo_finish(c, data, len, &e), 0);
    canvas_destroy(c);
}

static void test_svg(void **state)
{
    unsigned char *a, *b;
    size_t na, nb;
    render(*state, CANVAS_SVG, &a, &na);
    render(*state, CANVAS_SVG, &b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    assert_true(na > 5 && memcmp(a, "<?xml", 5) == 0);
    assert_non_null(memmem(a, na, "width=\"120pt\"", 13));
    free(a);
    free(b);
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Decodes an 8-bit RGB PNG into rgb (w*h*3 bytes, malloc'd). */
static unsigned char *png_decode(const unsigned char *p, size_t n, uint32_t *w, uint32_t *h)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    assert_memory_equal(p, sig, 8);
    size_t pos = 8, zlen = 0;
    unsigned char *z = malloc(n);
    *w = *h = 0;
    while (pos + 12 <= n) {
        uint32_t len = be32(p + pos);
        const unsigned char *type = p + pos + 4, *data = p + pos + 8;
        assert_true(be32(data + len) == (uint32_t)crc32(0, type, len + 4));
        if (memcmp(type, "IHDR", 4) == 0) {
            *w = be32(data);
            *h = be32(data + 4);
            assert_int_equal(data[8], 8);
            assert_int_equal(data[9], 2);
        } else if (memcmp(type, "IDAT", 4) == 0) {
            memcpy(z + zlen, data, len);
            zlen += len;
        } else if (memcmp(type, "tIME", 4) == 0) {
            fail_msg("a PNG with a time chunk is not reproducible");
        }
        pos += 12 + len;
    }
    size_t row = *w * 3 + 1;
    uLongf rawlen = row * *h;
    unsigned char *raw = malloc(rawlen), *rgb = malloc(rawlen);
    assert_int_equal(uncompress(raw, &rawlen, z, zlen), Z_OK);
    assert_int_equal(rawlen, row * *h);
    for (uint32_t y = 0; y < *h; y++) {
        unsigned char *r = raw + y * row, *o = rgb + y * (row - 1), *up = y ? rgb + (y - 1) * (row - 1) : NULL;
        for (size_t i = 0; i < row - 1; i++) {
            int a = i >= 3 ? o[i - 3] : 0, b = up ? up[i] : 0, c = (up && i >= 3) ? up[i - 3] : 0, v = r[1 + i];
            switch (r[0]) {
            case 0: break;
            case 1: v += a; break;
            case 2: v += b; break;
            case 3: v += (a + b) / 2; break;
            case 4: v += paeth(a, b, c); break;
            default: fail_msg("bad filter %d", r[0]);
            }
            o[i] = (unsigned char)v;
        }
    }
    free(z);
    free(raw);
    return rgb;
}

static void test_png(void **state)
{
    unsigned char *a, *b;
    size_t na, nb;
    render(*state, CANVAS_PNG, &a, &na);
    render(*state, CANVAS_PNG, &b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    uint32_t w, h;
    unsigned char *rgb = png_decode(a, na, &w, &h);
    assert_int_equal(w, 240);   /* 120 pt at 2 pixels per point */
    assert_int_equal(h, 200);
    /* Inside the red square (pixels 20..60): pure red; outside: white. */
    const unsigned char *px = rgb + (40 * w + 40) * 3;
    assert_int_equal(px[0], 255);
    assert_int_equal(px[1], 0);
    assert_int_equal(px[2], 0);
    px = rgb + (5 * w + 5) * 3;
    assert_true(px[0] == 255 && px[1] == 255 && px[2] == 255);
    /* The band: blue at alpha 0.2 over white is (204, 204, 255) give or
     * take rounding. */
    px = rgb + (40 * w + 100) * 3;
    assert_true(abs(px[0] - 204) <= 1 && abs(px[1] - 204) <= 1 && px[2] == 255);
    free(rgb);
    free(a);
    free(b);
}

static void make_pdf(const fontm *f, const pdf_date *dt, unsigned char **data, size_t *len)
{
    pdfdoc *d = NULL;
    kbv_err e = {0};
    canvas *c = NULL;
    assert_int_equal(pdfdoc_new(&d, f, 200, 150, dt, "title", "kbv-render test", &e), 0);
    assert_int_equal(pdfdoc_add_page(d, &c, &e), 0);
    draw(c);
    assert_int_equal(pdfdoc_bookmark(d, -1, "Section", 0, 20, &e), 0);
    assert_int_equal(pdfdoc_bookmark(d, 0, "Sub", 0, 40, &e), 1);
    assert_int_equal(pdfdoc_add_page(d, &c, &e), 1);
    canvas_translate(c, 10, 10);
    draw(c);
    assert_true(pdfdoc_bookmark(d, -1, "bad", 5, 0, &e) < 0);
    if (pdfdoc_save(d, data, len, &e))
        fail_msg("%s", e.msg);
    pdfdoc_free(d);
}

static void test_pdf(void **state)
{
    pdf_date dt = {2026, 11, 29, 23, 0, 0}, dt2 = {2030, 1, 2, 3, 4, 5};
    unsigned char *a, *b, *c;
    size_t na, nb, nc;
    make_pdf(*state, &dt, &a, &na);
    make_pdf(*state, &dt, &b, &nb);
    make_pdf(*state, &dt2, &c, &nc);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    assert_true(na > 5 && memcmp(a, "%PDF-", 5) == 0);
    assert_non_null(memmem(a, na, "D:20261129230000", 16));
    assert_non_null(memmem(c, nc, "D:20300102030405", 16));
    assert_null(memmem(c, nc, "D:2026", 6));
    /* The font is embedded (a FontFile2 stream) under DejaVu's name. */
    assert_non_null(memmem(a, na, "/FontFile2", 10));
    assert_non_null(memmem(a, na, "DejaVuSans", 10));
    assert_non_null(memmem(a, na, "/Outlines", 9));
    free(a);
    free(b);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_svg),
        cmocka_unit_test(test_png),
        cmocka_unit_test(test_pdf),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
