/* style.h - templates/style.json: page, font, the three text sizes, line
 * widths and colours, and the colour and marker of each set.
 *
 * Every key is required and unknown keys are errors, so that a typo in a
 * style file is reported (naming the file and the key) instead of silently
 * ignored.
 */
#ifndef KBV_STYLE_H
#define KBV_STYLE_H

#include "canvas.h"
#include "err.h"

#define STYLE_MAX_SETS 16

typedef struct rstyle {
    double page_w, page_h, margin;
    char font_regular[1024], font_bold[1024];
    double fs_small, fs_normal, fs_large;   /* the three sizes, points */
    double line, line_thin;                 /* stroke widths, points */
    double png_scale;                       /* PNG pixels per point */
    double fig_w;                           /* figure width, points */
    double band_alpha;                      /* CI bands */
    canvas_rgba text, axis, grid, muted, rule, shade;
    canvas_rgba set_color[STYLE_MAX_SETS];
    int set_mark[STYLE_MAX_SETS];
    int n_set_styles;
} rstyle;

int style_load(rstyle *out, const char *path, kbv_err *e);

/* The colour and marker of set i (they repeat after n_set_styles sets). */
canvas_rgba style_set_color(const rstyle *s, int i);
int style_set_mark(const rstyle *s, int i);

#endif
