/* chaxis.c - axes, spans, markers, the legend and fitted text for the
 * charts (see chaxis.h). */
#include "chaxis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fmt.h"

/* --- axes ------------------------------------------------------------------ */


double chax_amap(const axis *a, double v)
{
    if (v < a->lo)
        v = a->lo;
    if (v > a->hi)
        v = a->hi;
    double t = a->log ? (log(v) - log(a->lo)) / (log(a->hi) - log(a->lo)) : (v - a->lo) / (a->hi - a->lo);
    return a->p0 + t * (a->p1 - a->p0);
}



void chax_span_init(span *s)
{
    s->mn = INFINITY;
    s->mx = -INFINITY;
}

void chax_span_add(span *s, double v)
{
    if (isfinite(v) && v > 0) {
        if (v < s->mn)
            s->mn = v;
        if (v > s->mx)
            s->mx = v;
    }
}

void chax_span_add_est(span *s, const rm_est *e)
{
    if (!e->ok)
        return;
    chax_span_add(s, e->est);
    chax_span_add(s, e->lo);
    chax_span_add(s, e->hi);
}

/* Ratio axes run over powers of two and always cover 0.25 to 4. */
void chax_ratio_axis(axis *a, const span *s, double p0, double p1)
{
    int klo = -2, khi = 2;
    if (isfinite(s->mn) && s->mn < 0.25)
        klo = (int)floor(log2(s->mn) + 1e-9);
    if (isfinite(s->mx) && s->mx > 4)
        khi = (int)ceil(log2(s->mx) - 1e-9);
    if (klo < RATIO_MIN_K)
        klo = RATIO_MIN_K;
    if (khi > RATIO_MAX_K)
        khi = RATIO_MAX_K;
    a->log = 1;
    a->lo = ldexp(1, klo);
    a->hi = ldexp(1, khi);
    a->p0 = p0;
    a->p1 = p1;
}

/* Decimal labels throughout ("0.125", "0.031", "0.0039"), never a
 * fraction beside a decimal: two significant digits below 1/8. */
void chax_pow2_label(char *b, size_t n, int k)
{
    if (k >= 0)
        snprintf(b, n, "%.0f", ldexp(1, k));
    else if (k >= -3)
        snprintf(b, n, "%g", ldexp(1, k));
    else
        snprintf(b, n, "%.2g", ldexp(1, k));
}

/* A nice step for a linear axis from 0 to mx: 1, 2 or 5 times a power of
 * ten, giving at most about six ticks. */
double chax_nice_step(double mx)
{
    if (mx <= 0)
        return 1;
    double raw = mx / 5, p = pow(10, floor(log10(raw))), f = raw / p;
    double s = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    s *= p;
    return s < 1 ? 1 : s;
}


int chax_ticks_ratio(const axis *a, tick *t, int max)
{
    int n = 0;
    int klo = (int)lround(log2(a->lo)), khi = (int)lround(log2(a->hi));
    for (int k = klo; k <= khi && n < max; k++) {
        t[n].v = ldexp(1, k);
        chax_pow2_label(t[n].label, sizeof t[n].label, k);
        n++;
    }
    return n;
}

int chax_ticks_linear(const axis *a, double step, int decimals, tick *t, int max)
{
    int n = 0;
    for (double v = a->lo; v <= a->hi + step * 1e-9 && n < max; v += step) {
        t[n].v = v;
        snprintf(t[n].label, sizeof t[n].label, "%.*f", decimals, v);
        n++;
    }
    return n;
}

/* Horizontal axis at y, ticks and labels below; grid lines up to y_grid
 * when y_grid < y. */
void chax_x_axis(canvas *c, const chart_ctx *x, const axis *a, const tick *t, int n, double y, double y_grid,
                   const char *title)
{
    const rstyle *st = x->st;
    double fs = st->fs_small;
    if (y_grid < y) {
        canvas_color(c, st->grid);
        canvas_width(c, st->line_thin);
        for (int i = 0; i < n; i++)
            canvas_segment(c, chax_amap(a, t[i].v), y_grid, chax_amap(a, t[i].v), y);
    }
    canvas_color(c, st->axis);
    canvas_width(c, st->line_thin);
    canvas_segment(c, a->p0, y, a->p1, y);
    for (int i = 0; i < n; i++) {
        double px = chax_amap(a, t[i].v);
        canvas_segment(c, px, y, px, y + 3);
    }
    /* Labels are chosen outwards from the one at 1 (on a ratio axis; else
     * from the first), each kept only if it keeps clear of those chosen, so
     * that crowded ticks never print on top of each other and 1 is always
     * labelled. */
    int start = 0;
    for (int i = 0; i < n; i++)
        if (a->log && t[i].v == 1)
            start = i;
    double left[64], right[64];
    int keep[64] = {0};
    for (int i = 0; i < n && i < 64; i++) {
        double px = chax_amap(a, t[i].v), tw = canvas_text_width(c, t[i].label, fs, 0);
        left[i] = px - tw / 2;
        right[i] = px + tw / 2;
    }
    if (n > 0 && n <= 64) {
        keep[start] = 1;
        double edge = right[start];
        for (int i = start + 1; i < n; i++)
            if (left[i] >= edge + 4) {
                keep[i] = 1;
                edge = right[i];
            }
        edge = left[start];
        for (int i = start - 1; i >= 0; i--)
            if (right[i] <= edge - 4) {
                keep[i] = 1;
                edge = left[i];
            }
    }
    canvas_color(c, st->text);
    for (int i = 0; i < n && i < 64; i++)
        if (keep[i])
            canvas_text(c, chax_amap(a, t[i].v), y + 5, t[i].label, fs, 0, CANVAS_CENTER | CANVAS_TOP, 0);
    if (title)
        canvas_text(c, (a->p0 + a->p1) / 2, y + 9 + fs + fs, title, fs, 0, CANVAS_CENTER | CANVAS_BASELINE, 0);
}

/* Vertical axis at x0 with ticks and labels to the left, grid lines to
 * x_grid when x_grid > x0, and a title turned to read upwards at x_title. */
void chax_y_axis(canvas *c, const chart_ctx *x, const axis *a, const tick *t, int n, double x0, double x_grid,
                   double x_title, const char *title)
{
    const rstyle *st = x->st;
    double fs = st->fs_small;
    if (x_grid > x0) {
        canvas_color(c, st->grid);
        canvas_width(c, st->line_thin);
        for (int i = 0; i < n; i++)
            canvas_segment(c, x0, chax_amap(a, t[i].v), x_grid, chax_amap(a, t[i].v));
    }
    canvas_color(c, st->axis);
    canvas_width(c, st->line_thin);
    canvas_segment(c, x0, a->p0, x0, a->p1);
    for (int i = 0; i < n; i++)
        canvas_segment(c, x0 - 3, chax_amap(a, t[i].v), x0, chax_amap(a, t[i].v));
    canvas_color(c, st->text);
    double last = 1e9;
    for (int i = 0; i < n; i++) {
        double py = chax_amap(a, t[i].v);
        int must = a->log && t[i].v == 1;
        if (fabs(py - last) < fs + 1 && !must)
            continue;
        canvas_text(c, x0 - 5, py, t[i].label, fs, 0, CANVAS_RIGHT | CANVAS_MIDDLE, 0);
        last = py;
    }
    if (title)
        canvas_text(c, x_title, (a->p0 + a->p1) / 2, title, fs, 0, CANVAS_CENTER | CANVAS_TOP, 90);
}

/* A vertical or horizontal reference line at ratio 1. */
void chax_ref_line(canvas *c, const chart_ctx *x, double x0, double y0, double x1, double y1)
{
    static const double dash[2] = {3, 2};
    canvas_save(c);
    canvas_color(c, x->st->axis);
    canvas_width(c, x->st->line_thin);
    canvas_dash(c, dash, 2);
    canvas_segment(c, x0, y0, x1, y1);
    canvas_restore(c);
}

void chax_clip_rect(canvas *c, double x0, double y0, double x1, double y1)
{
    canvas_save(c);
    canvas_rect(c, x0, y0, x1 - x0, y1 - y0);
    canvas_clip(c);
}

const canvas_rgba chax_white = {1, 1, 1, 1};

void chax_set_marker(canvas *c, const chart_ctx *x, int s, double px, double py, double r, int open)
{
    canvas_rgba k = style_set_color(x->st, s);
    canvas_marker(c, (canvas_mark)style_set_mark(x->st, s), px, py, r, k, open ? chax_white : k);
}

/* --- markers and text ------------------------------------------------------ */

/* Draws s, shortened with an ellipsis to fit max_w. */
void chax_text_fit(canvas *c, double x0, double y, const char *s, double size, int bold, int anchor,
                     double max_w)
{
    if (canvas_text_width(c, s, size, bold) <= max_w) {
        canvas_text(c, x0, y, s, size, bold, anchor, 0);
        return;
    }
    size_t n = strlen(s);
    char *t = malloc(n + 4);
    if (!t)
        return;
    memcpy(t, s, n + 1);
    while (n > 0) {
        n--;
        while (n > 0 && ((unsigned char)t[n] & 0xC0) == 0x80)
            n--;
        memcpy(t + n, "\xe2\x80\xa6", 4);
        if (canvas_text_width(c, t, size, bold) <= max_w)
            break;
    }
    canvas_text(c, x0, y, t, size, bold, anchor, 0);
    free(t);
}

/* One set a line: a line sample (when line), the marker, the name. */
void chax_legend(canvas *c, const chart_ctx *x, double lx, double ly, int line)
{
    double fs = x->st->fs_small;
    for (int i = 0; i < x->m->n_sets; i++) {
        double y = ly + i * (fs + 4) + fs / 2;
        canvas_rgba k = style_set_color(x->st, i);
        if (line) {
            canvas_color(c, k);
            canvas_width(c, x->st->line);
            canvas_segment(c, lx, y, lx + 14, y);
        }
        chax_set_marker(c, x, i, lx + 7, y, 2.6, 0);
        canvas_color(c, x->st->text);
        chax_text_fit(c, lx + 18, y, x->m->sets[i].name, fs, 0, CANVAS_LEFT | CANVAS_MIDDLE, 120);
    }
}


/* qsort order of doubles. */
int chax_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
