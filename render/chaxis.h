/* chaxis.h - what the chart modules share (render/chart.c and chbreak.c;
 * not a public header): axes with their ticks, value spans, set markers,
 * the legend and text cut to a width.  Pure drawing on a canvas the caller
 * owns; nothing here allocates beyond a call. */
#ifndef KBV_CHAXIS_H
#define KBV_CHAXIS_H

#include <stddef.h>
#include "canvas.h"
#include "chart.h"

/* Widest range a ratio axis may take: 2^-10 .. 2^12. */
#define RATIO_MIN_K (-10)
#define RATIO_MAX_K 12

typedef struct axis {
    int log;
    double lo, hi;   /* domain */
    double p0, p1;   /* positions of lo and hi */
} axis;

typedef struct span {
    double mn, mx;
} span;

typedef struct tick {
    double v;
    char label[24];
} tick;

/* Opaque white, the fill of an open marker. */
extern const canvas_rgba chax_white;

double chax_amap(const axis *a, double v);

void chax_span_init(span *s);

void chax_span_add(span *s, double v);

void chax_span_add_est(span *s, const rm_est *e);

/* Ratio axes run over powers of two and always cover 0.25 to 4. */
void chax_ratio_axis(axis *a, const span *s, double p0, double p1);

/* Decimal labels throughout ("0.125", "0.031", "0.0039"), never a
 * fraction beside a decimal: two significant digits below 1/8. */
void chax_pow2_label(char *b, size_t n, int k);

/* A nice step for a linear axis from 0 to mx: 1, 2 or 5 times a power of
 * ten, giving at most about six ticks. */
double chax_nice_step(double mx);

int chax_ticks_ratio(const axis *a, tick *t, int max);

int chax_ticks_linear(const axis *a, double step, int decimals, tick *t, int max);

/* Horizontal axis at y, ticks and labels below; grid lines up to y_grid
 * when y_grid < y. */
void chax_x_axis(canvas *c, const chart_ctx *x, const axis *a, const tick *t, int n, double y, double y_grid,
                   const char *title);

/* Vertical axis at x0 with ticks and labels to the left, grid lines to
 * x_grid when x_grid > x0, and a title turned to read upwards at x_title. */
void chax_y_axis(canvas *c, const chart_ctx *x, const axis *a, const tick *t, int n, double x0, double x_grid,
                   double x_title, const char *title);

/* A vertical or horizontal reference line at ratio 1. */
void chax_ref_line(canvas *c, const chart_ctx *x, double x0, double y0, double x1, double y1);

void chax_clip_rect(canvas *c, double x0, double y0, double x1, double y1);

void chax_set_marker(canvas *c, const chart_ctx *x, int s, double px, double py, double r, int open);

/* Draws s, shortened with an ellipsis to fit max_w. */
void chax_text_fit(canvas *c, double x0, double y, const char *s, double size, int bold, int anchor,
                     double max_w);

/* One set a line: a line sample (when line), the marker, the name. */
void chax_legend(canvas *c, const chart_ctx *x, double lx, double ly, int line);

/* qsort order of doubles. */
int chax_cmp_double(const void *a, const void *b);

#endif
