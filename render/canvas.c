/* canvas.c - what every backend shares: colours, anchored text, markers. */
#include "canvas.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int canvas_parse_color(const char *s, canvas_rgba *out)
{
    size_t n = s ? strlen(s) : 0;
    unsigned v[4] = {0, 0, 0, 255};
    if (!s || s[0] != '#' || (n != 7 && n != 9))
        return -1;
    for (size_t i = 0; i < (n - 1) / 2; i++) {
        unsigned x = 0;
        for (int k = 0; k < 2; k++) {
            char ch = s[1 + 2 * i + k];
            int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                    : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
            if (d < 0)
                return -1;
            x = x * 16 + (unsigned)d;
        }
        v[i] = x;
    }
    out->r = v[0] / 255.0;
    out->g = v[1] / 255.0;
    out->b = v[2] / 255.0;
    out->a = v[3] / 255.0;
    return 0;
}

void canvas_destroy(canvas *c)
{
    if (c)
        c->ops->destroy(c);
}

void canvas_segment(canvas *c, double x0, double y0, double x1, double y1)
{
    canvas_move(c, x0, y0);
    canvas_line(c, x1, y1);
    canvas_stroke(c);
}

/* Copies s, replacing every character Windows-1252 lacks by '?', so that
 * the backends draw exactly what fontm measured.  Returns a malloc'd
 * string or NULL. */
static char *safe_text(const char *s)
{
    size_t n = strlen(s);
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    size_t k = 0;
    const char *p = s;
    while (*p) {
        const char *start = p;
        unsigned cp = fontm_utf8_next(&p);
        if (fontm_cp1252(cp) == '?' && cp != '?') {
            o[k++] = '?';
        } else {
            memcpy(o + k, start, (size_t)(p - start));
            k += (size_t)(p - start);
        }
    }
    o[k] = 0;
    return o;
}

double canvas_text_width(const canvas *c, const char *s, double size, int bold)
{
    return fontm_width(c->fm, bold, size, s);
}

double canvas_text(canvas *c, double x, double y, const char *s, double size, int bold, int anchor,
                   double angle)
{
    if (!s || !*s)
        return 0;
    char *t = safe_text(s);
    if (!t)
        return 0;
    double w = fontm_width(c->fm, bold, size, t);
    double along = (anchor & 3) == CANVAS_CENTER ? -w / 2 : (anchor & 3) == CANVAS_RIGHT ? -w : 0;
    double cap = fontm_cap_height(c->fm, size);
    double across = (anchor & CANVAS_MIDDLE) ? cap / 2 : (anchor & CANVAS_TOP) ? cap
                    : (anchor & CANVAS_BOTTOM) ? -fontm_descent(c->fm, size) : 0;
    if (angle == 0) {
        x += along;
        y += across;
    } else {
        /* Reading upwards: the text runs towards -y and its top faces -x. */
        y -= along;
        x += across;
    }
    c->ops->text(c, x, y, t, size, bold, angle);
    free(t);
    return w;
}

int canvas_mark_parse(const char *name)
{
    static const char *names[MARK_N] = {"circle", "square", "triangle", "diamond", "triangle-down",
                                        "cross", "plus", "star"};
    for (int i = 0; i < MARK_N; i++)
        if (name && strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

static void poly(canvas *c, double x, double y, const double *pts, int n, double r)
{
    for (int i = 0; i < n; i++) {
        if (i == 0)
            canvas_move(c, x + r * pts[0], y + r * pts[1]);
        else
            canvas_line(c, x + r * pts[2 * i], y + r * pts[2 * i + 1]);
    }
    canvas_close(c);
}

static void mark_path(canvas *c, canvas_mark m, double x, double y, double r)
{
    static const double tri[] = {0, -1.15, 1.0, 0.58, -1.0, 0.58};
    static const double trid[] = {0, 1.15, -1.0, -0.58, 1.0, -0.58};
    static const double dia[] = {0, -1.25, 1.0, 0, 0, 1.25, -1.0, 0};
    double star[20];
    const double k = 0.5523 * r;
    switch (m) {
    case MARK_SQUARE:
        canvas_rect(c, x - 0.88 * r, y - 0.88 * r, 1.76 * r, 1.76 * r);
        break;
    case MARK_TRIANGLE:
        poly(c, x, y, tri, 3, r);
        break;
    case MARK_TRIANGLE_DOWN:
        poly(c, x, y, trid, 3, r);
        break;
    case MARK_DIAMOND:
        poly(c, x, y, dia, 4, r);
        break;
    case MARK_STAR:
        for (int i = 0; i < 10; i++) {
            double a = -M_PI / 2 + i * M_PI / 5, rr = i % 2 ? 0.5 : 1.25;
            star[2 * i] = rr * cos(a);
            star[2 * i + 1] = rr * sin(a);
        }
        poly(c, x, y, star, 10, r);
        break;
    case MARK_CROSS:
    case MARK_PLUS:
    case MARK_CIRCLE:
    default:
        canvas_move(c, x + r, y);
        canvas_curve(c, x + r, y + k, x + k, y + r, x, y + r);
        canvas_curve(c, x - k, y + r, x - r, y + k, x - r, y);
        canvas_curve(c, x - r, y - k, x - k, y - r, x, y - r);
        canvas_curve(c, x + k, y - r, x + r, y - k, x + r, y);
        canvas_close(c);
        break;
    }
}

void canvas_marker(canvas *c, canvas_mark m, double x, double y, double r, canvas_rgba line,
                   canvas_rgba fill)
{
    if (m == MARK_CROSS || m == MARK_PLUS) {
        /* Line markers have no inside; a thicker stroke keeps them as
         * visible as the filled shapes. */
        double d = m == MARK_CROSS ? r * 0.9 : r * 1.2;
        canvas_save(c);
        canvas_color(c, line);
        canvas_width(c, r * 0.55);
        if (m == MARK_CROSS) {
            canvas_segment(c, x - d, y - d, x + d, y + d);
            canvas_segment(c, x - d, y + d, x + d, y - d);
        } else {
            canvas_segment(c, x - d, y, x + d, y);
            canvas_segment(c, x, y - d, x, y + d);
        }
        canvas_restore(c);
        return;
    }
    canvas_save(c);
    if (fill.a > 0) {
        canvas_color(c, fill);
        mark_path(c, m, x, y, r);
        canvas_fill(c);
    }
    canvas_color(c, line);
    canvas_width(c, r * 0.3);
    mark_path(c, m, x, y, r);
    canvas_stroke(c);
    canvas_restore(c);
}
