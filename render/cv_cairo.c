/* cv_cairo.c - the Cairo backend of the canvas: SVG and PNG documents.
 *
 * Text is drawn with DejaVu Sans loaded from the very files fontm measured
 * (through a fontconfig pattern naming the file, so that no font matching
 * takes place), with hinting of outlines and metrics off so that advances
 * are the font's own, scaled linearly, as fontm assumes.  Both documents are
 * rendered into memory; the caller writes them out atomically.
 */
#include "canvas.h"
#include "png.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cairo.h>
#include "sbuf.h"
#include <cairo-svg.h>
#include <cairo-ft.h>
#include <fontconfig/fontconfig.h>

typedef struct cv_cairo {
    canvas base;
    int kind;
    double scale;
    cairo_surface_t *surface;
    cairo_t *cr;
    cairo_font_face_t *face[2];
    sbuf out;   /* the SVG text, owned until cc_finish hands it out */
} cv_cairo;

/* Cairo's stream callback: appends to the canvas's sbuf. */
static cairo_status_t buf_write(void *closure, const unsigned char *data, unsigned int length)
{
    sbuf *b = closure;
    /* The first chunk reserves 64 KiB, the size of a small figure. */
    if (!b->cap)
        sb_reserve(b, 65536);
    sb_add(b, (const char *)data, length);
    return b->failed ? CAIRO_STATUS_WRITE_ERROR : CAIRO_STATUS_SUCCESS;
}

#define CR(c) (((cv_cairo *)(c))->cr)

static void cc_move(canvas *c, double x, double y) { cairo_move_to(CR(c), x, y); }
static void cc_line(canvas *c, double x, double y) { cairo_line_to(CR(c), x, y); }
static void cc_curve(canvas *c, double x1, double y1, double x2, double y2, double x3, double y3)
{
    cairo_curve_to(CR(c), x1, y1, x2, y2, x3, y3);
}
static void cc_close(canvas *c) { cairo_close_path(CR(c)); }
static void cc_rect(canvas *c, double x, double y, double w, double h) { cairo_rectangle(CR(c), x, y, w, h); }
static void cc_fill(canvas *c) { cairo_fill(CR(c)); }
static void cc_stroke(canvas *c) { cairo_stroke(CR(c)); }
static void cc_clip(canvas *c) { cairo_clip(CR(c)); }
static void cc_save(canvas *c) { cairo_save(CR(c)); }
static void cc_restore(canvas *c) { cairo_restore(CR(c)); }
static void cc_translate(canvas *c, double dx, double dy) { cairo_translate(CR(c), dx, dy); }
static void cc_rgba(canvas *c, double r, double g, double b, double a)
{
    if (a >= 1)
        cairo_set_source_rgb(CR(c), r, g, b);
    else
        cairo_set_source_rgba(CR(c), r, g, b, a);
}
static void cc_lw(canvas *c, double w) { cairo_set_line_width(CR(c), w); }
static void cc_dash(canvas *c, const double *d, int n) { cairo_set_dash(CR(c), d, n, 0); }

static void cc_text(canvas *c, double x, double y, const char *s, double size, int bold, double angle)
{
    cv_cairo *k = (cv_cairo *)c;
    cairo_t *cr = k->cr;
    cairo_save(cr);
    cairo_new_path(cr);
    cairo_set_font_face(cr, k->face[bold ? 1 : 0]);
    cairo_set_font_size(cr, size);
    cairo_translate(cr, x, y);
    if (angle != 0)
        cairo_rotate(cr, -angle * M_PI / 180);
    cairo_move_to(cr, 0, 0);
    cairo_show_text(cr, s);
    cairo_new_path(cr);
    cairo_restore(cr);
}

static void cc_destroy(canvas *c)
{
    cv_cairo *k = (cv_cairo *)c;
    if (k->cr)
        cairo_destroy(k->cr);
    if (k->surface)
        cairo_surface_destroy(k->surface);
    for (int i = 0; i < 2; i++)
        if (k->face[i])
            cairo_font_face_destroy(k->face[i]);
    sb_free(&k->out);
    free(k);
}

static const canvas_ops cairo_ops = {
    cc_move, cc_line, cc_curve, cc_close, cc_rect, cc_fill, cc_stroke, cc_clip,
    cc_save, cc_restore, cc_translate, cc_rgba, cc_lw, cc_dash, cc_text, cc_destroy,
};

static cairo_font_face_t *face_for_file(const char *path)
{
    FcPattern *p = FcPatternCreate();
    if (!p)
        return NULL;
    FcPatternAddString(p, FC_FILE, (const FcChar8 *)path);
    FcPatternAddInteger(p, FC_INDEX, 0);
    cairo_font_face_t *f = cairo_ft_font_face_create_for_pattern(p);
    FcPatternDestroy(p);
    if (f && cairo_font_face_status(f) != CAIRO_STATUS_SUCCESS) {
        cairo_font_face_destroy(f);
        return NULL;
    }
    return f;
}

int canvas_cairo_new(canvas **out, int kind, double w, double h, double scale, const fontm *fm, kbv_err *e)
{
    *out = NULL;
    cv_cairo *k = calloc(1, sizeof *k);
    if (!k)
        return err_set(e, KBV_ENOMEM, "out of memory for a figure");
    k->base.ops = &cairo_ops;
    k->base.fm = fm;
    k->base.width = w;
    k->base.height = h;
    k->kind = kind;
    k->scale = scale;
    if (kind == CANVAS_SVG) {
        k->surface = cairo_svg_surface_create_for_stream(buf_write, &k->out, w, h);
    } else {
        int pw = (int)ceil(w * scale), ph = (int)ceil(h * scale);
        k->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, pw, ph);
    }
    if (cairo_surface_status(k->surface) != CAIRO_STATUS_SUCCESS) {
        cc_destroy(&k->base);
        return err_set(e, KBV_ERUNTIME, "cairo could not create a %.0fx%.0f pt surface", w, h);
    }
    k->cr = cairo_create(k->surface);
    for (int i = 0; i < 2; i++) {
        k->face[i] = face_for_file(fontm_path(fm, i));
        if (!k->face[i]) {
            const char *p = fontm_path(fm, i);
            cc_destroy(&k->base);
            return err_set(e, KBV_EINPUT, "%s: cairo could not load the font", p);
        }
    }
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
    cairo_set_font_options(k->cr, fo);
    cairo_font_options_destroy(fo);
    if (kind == CANVAS_PNG)
        cairo_scale(k->cr, scale, scale);
    /* A white page, so that the figure reads the same on a dark viewer. */
    cairo_set_source_rgb(k->cr, 1, 1, 1);
    cairo_paint(k->cr);
    cairo_set_line_join(k->cr, CAIRO_LINE_JOIN_MITER);
    cairo_set_line_cap(k->cr, CAIRO_LINE_CAP_BUTT);
    *out = &k->base;
    return 0;
}

/* Cairo names the SVG's top group after the surface's serial number, which
 * counts every surface the process has created ("surface1", "surface6",
 * ...), so the same figure drawn second would differ.  Every "surface<n>"
 * is renumbered in order of first appearance, which makes a figure's bytes
 * depend on the figure alone. */
static void svg_normalise_ids(sbuf *b)
{
    static const char key[] = "surface";
    const size_t kl = sizeof key - 1;
    unsigned long seen[64];
    int n_seen = 0;
    size_t r = 0, w = 0;
    while (r < b->len) {
        if (r + kl < b->len && memcmp(b->s + r, key, kl) == 0 && b->s[r + kl] >= '0' && b->s[r + kl] <= '9') {
            size_t q = r + kl;
            unsigned long v = 0;
            while (q < b->len && b->s[q] >= '0' && b->s[q] <= '9' && v < 100000000UL)
                v = v * 10 + (unsigned long)(b->s[q++] - '0');
            int idx = -1;
            for (int i = 0; i < n_seen; i++)
                if (seen[i] == v)
                    idx = i;
            if (idx < 0 && n_seen < 64) {
                seen[n_seen] = v;
                idx = n_seen++;
            }
            if (idx >= 0) {
                char num[32];
                int nl = snprintf(num, sizeof num, "%s%d", key, idx + 1);
                /* The new number is never longer than the old one (it
                 * counts from 1 while serials only grow), so the text is
                 * rewritten in place. */
                if ((size_t)nl <= q - r) {
                    memmove(b->s + w, num, (size_t)nl);
                    w += (size_t)nl;
                    r = q;
                    continue;
                }
            }
        }
        b->s[w++] = b->s[r++];
    }
    b->len = w;
}

int canvas_cairo_finish(canvas *c, unsigned char **data, size_t *len, kbv_err *e)
{
    cv_cairo *k = (cv_cairo *)c;
    *data = NULL;
    *len = 0;
    cairo_status_t st = cairo_status(k->cr);
    cairo_destroy(k->cr);
    k->cr = NULL;
    if (st == CAIRO_STATUS_SUCCESS) {
        if (k->kind == CANVAS_PNG) {
            cairo_surface_flush(k->surface);
            unsigned char *png = NULL;
            size_t n = 0;
            int rc = png_encode_rgb24(cairo_image_surface_get_data(k->surface),
                                      cairo_image_surface_get_width(k->surface),
                                      cairo_image_surface_get_height(k->surface),
                                      cairo_image_surface_get_stride(k->surface), 72.0 * k->scale, &png, &n, e);
            if (rc)
                return rc;
            *data = png;
            *len = n;
            return 0;
        } else {
            cairo_surface_finish(k->surface);
            st = cairo_surface_status(k->surface);
        }
    }
    if (st != CAIRO_STATUS_SUCCESS || k->out.failed)
        return err_set(e, KBV_ERUNTIME, "cairo failed to render a figure: %s",
                       k->out.failed ? "out of memory" : cairo_status_to_string(st));
    svg_normalise_ids(&k->out);
    *data = (unsigned char *)sb_take(&k->out, len);
    return 0;
}
