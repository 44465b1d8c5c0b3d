/* canvas.h - the drawing surface every chart is drawn on.
 *
 * One piece of chart code draws each figure; a small table of operations
 * (the backend) turns the calls into SVG or PNG (Cairo) or into vector
 * operations on a PDF page (libharu).  Coordinates are points (1/72 inch),
 * origin at the top left, y growing downwards, as in Cairo; the PDF backend
 * flips them.  Text is UTF-8; it is drawn in DejaVu Sans and measured by
 * fontm, so that anchoring is the same in every backend.  Characters that
 * Windows-1252 lacks are drawn as '?' by every backend.
 */
#ifndef KBV_CANVAS_H
#define KBV_CANVAS_H

#include "err.h"
#include "fontm.h"

typedef struct canvas canvas;

typedef struct canvas_ops {
    void (*move_to)(canvas *c, double x, double y);
    void (*line_to)(canvas *c, double x, double y);
    void (*curve_to)(canvas *c, double x1, double y1, double x2, double y2, double x3, double y3);
    void (*close_path)(canvas *c);
    void (*rect)(canvas *c, double x, double y, double w, double h);
    void (*fill)(canvas *c);              /* fills and clears the path */
    void (*stroke)(canvas *c);            /* strokes and clears the path */
    void (*clip)(canvas *c);              /* intersects the clip with the path, clears it */
    void (*save)(canvas *c);
    void (*restore)(canvas *c);
    void (*translate)(canvas *c, double dx, double dy);   /* moves the origin */
    void (*set_rgba)(canvas *c, double r, double g, double b, double a);
    void (*set_line_width)(canvas *c, double w);
    void (*set_dash)(canvas *c, const double *dash, int n);   /* n == 0: solid */
    /* Text whose baseline starts at (x, y), turned by angle degrees
     * counter-clockwise (0 or 90); s holds only Windows-1252 characters. */
    void (*text)(canvas *c, double x, double y, const char *s, double size, int bold, double angle);
    void (*destroy)(canvas *c);
} canvas_ops;

/* A backend embeds this as its first member. */
struct canvas {
    const canvas_ops *ops;
    const fontm *fm;      /* borrowed */
    double width, height; /* points */
};

/* The colour of a set, a class, a line: components in 0..1. */
typedef struct canvas_rgba {
    double r, g, b, a;
} canvas_rgba;

/* Parses "#rrggbb" (alpha 1) or "#rrggbbaa"; -1 when malformed. */
int canvas_parse_color(const char *s, canvas_rgba *out);

static inline void canvas_move(canvas *c, double x, double y) { c->ops->move_to(c, x, y); }
static inline void canvas_line(canvas *c, double x, double y) { c->ops->line_to(c, x, y); }
static inline void canvas_curve(canvas *c, double x1, double y1, double x2, double y2, double x3, double y3)
{
    c->ops->curve_to(c, x1, y1, x2, y2, x3, y3);
}
static inline void canvas_close(canvas *c) { c->ops->close_path(c); }
static inline void canvas_rect(canvas *c, double x, double y, double w, double h) { c->ops->rect(c, x, y, w, h); }
static inline void canvas_fill(canvas *c) { c->ops->fill(c); }
static inline void canvas_stroke(canvas *c) { c->ops->stroke(c); }
static inline void canvas_clip(canvas *c) { c->ops->clip(c); }
static inline void canvas_save(canvas *c) { c->ops->save(c); }
static inline void canvas_restore(canvas *c) { c->ops->restore(c); }
static inline void canvas_translate(canvas *c, double dx, double dy) { c->ops->translate(c, dx, dy); }
static inline void canvas_width(canvas *c, double w) { c->ops->set_line_width(c, w); }
static inline void canvas_dash(canvas *c, const double *d, int n) { c->ops->set_dash(c, d, n); }
static inline void canvas_color(canvas *c, canvas_rgba k) { c->ops->set_rgba(c, k.r, k.g, k.b, k.a); }
static inline void canvas_color_a(canvas *c, canvas_rgba k, double alpha)
{
    c->ops->set_rgba(c, k.r, k.g, k.b, alpha);
}
void canvas_destroy(canvas *c);   /* NULL ok */

/* A straight line from (x0, y0) to (x1, y1), stroked. */
void canvas_segment(canvas *c, double x0, double y0, double x1, double y1);

/* Text anchors: horizontal part | vertical part. */
enum {
    CANVAS_LEFT = 0, CANVAS_CENTER = 1, CANVAS_RIGHT = 2,
    CANVAS_BASELINE = 0, CANVAS_MIDDLE = 4, CANVAS_TOP = 8, CANVAS_BOTTOM = 16
};

/* Draws text anchored at (x, y); angle 0 or 90 (reading upwards).  Returns
 * the width of the text in points. */
double canvas_text(canvas *c, double x, double y, const char *s, double size, int bold, int anchor,
                   double angle);
double canvas_text_width(const canvas *c, const char *s, double size, int bold);

/* Marker shapes, one per set. */
typedef enum {
    MARK_CIRCLE, MARK_SQUARE, MARK_TRIANGLE, MARK_DIAMOND, MARK_TRIANGLE_DOWN,
    MARK_CROSS, MARK_PLUS, MARK_STAR, MARK_N
} canvas_mark;

/* Name ("circle", "square", ...) to shape; -1 when unknown. */
int canvas_mark_parse(const char *name);
/* Draws a marker of radius r centred at (x, y): filled with fill (alpha
 * 0 for an open marker) and outlined with line. */
void canvas_marker(canvas *c, canvas_mark m, double x, double y, double r, canvas_rgba line,
                   canvas_rgba fill);

/* --- backends ------------------------------------------------------------- */

/* Cairo: an SVG document or a PNG image of w x h points (the PNG at `scale`
 * pixels per point).  canvas_cairo_finish renders the document into a
 * malloc'd buffer (*data, *len, owned by the caller); after it the canvas can
 * only be destroyed. */
enum { CANVAS_SVG = 1, CANVAS_PNG = 2 };
int canvas_cairo_new(canvas **out, int kind, double w, double h, double scale, const fontm *fm, kbv_err *e);
int canvas_cairo_finish(canvas *c, unsigned char **data, size_t *len, kbv_err *e);

#endif
