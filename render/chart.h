/* chart.h - the report's charts, each drawn by one function on any canvas.
 *
 * A chart draws itself in the rectangle [0, w] x [0, h] of the canvas's
 * current coordinates (the caller translates to place it on a page).  The
 * same call draws the SVG, the PNG and the PDF version, so the three agree.
 * Chart rules (DESIGN.md 8): one font in three sizes; each set keeps its
 * colour and marker everywhere; left and bottom axes only, a light grid on
 * the value axis; ratios on log axes with ticks at powers of two (at least
 * 0.25 to 4); every estimate with its interval.
 */
#ifndef KBV_CHART_H
#define KBV_CHART_H

#include "canvas.h"
#include "model.h"
#include "style.h"
#include "tmpl.h"

typedef struct chart_ctx {
    const rmodel *m;
    const rstyle *st;
    const char *const *labels;   /* LBL_N expanded labels */
    const fontm *fm;             /* for layout before a canvas exists */
    double legend_w;             /* set by chart_ctx_init */
} chart_ctx;

/* Fills x and measures what every chart shares (the legend). */
void chart_ctx_init(chart_ctx *x, const rmodel *m, const rstyle *st, const char *const *labels, const fontm *fm);

/* fast_p of every set against baseline b (RM_FP32 or RM_TF32). */
double chart_fast_p_height(const chart_ctx *x);
void chart_fast_p(canvas *c, const chart_ctx *x, int b, double w);

/* The BF16 setting (chbf16.c).  fast_p of BF16 sets is chart_fast_p with
 * b = RM_BF16 on a context whose model lists the BF16 sets as its sets
 * (chart_bf16_view).  chart_bf16_compare draws BF16 set j of x's model
 * against the FP32 set it mirrors in full (the whole model): one point
 * per problem with both speedups, the FP32 speedup (vs the fp32 baseline)
 * across, the BF16 speedup (vs bf16) up, each with its interval, filled
 * where the problem is correct in both sets, on equal log axes with the
 * diagonal; set j keeps its colour and marker of the fast_p figure. */
void chart_bf16_view(rmodel *view, const rmodel *full);
double chart_bf16_height(const chart_ctx *x);
void chart_bf16_compare(canvas *c, const chart_ctx *x, const rmodel *full, int j, double w);
/* Problems of BF16 set j with both speedups, and of those the ones correct
 * in both sets. */
int chart_bf16_points(const rmodel *full, int j, int *both_correct);

/* Per-problem speedups of set s, rows [r0, r1) of its problems with a
 * candidate (rm_set.shown), both baselines.  The axis range depends on the
 * whole set, so that the parts of one set line up. */
double chart_forest_height(const chart_ctx *x, int rows);
void chart_forest(canvas *c, const chart_ctx *x, int s, int r0, int r1, double w);

/* Speedup vs the memory baseline against the peak-memory ratio, one panel
 * per set on shared axes. */
double chart_scatter_height(const chart_ctx *x);
void chart_scatter(canvas *c, const chart_ctx *x, double w);
int chart_scatter_points(const chart_ctx *x);

/* Problems per class group and set. */
double chart_classes_height(const chart_ctx *x);
void chart_classes(canvas *c, const chart_ctx *x, double w);

/* Geometric-mean speedup per set along the inflation steps. */
double chart_inflation_height(const chart_ctx *x);
void chart_inflation(canvas *c, const chart_ctx *x, double w);

/* The levels of the run's problem ids (their prefix up to the first '_'),
 * in order of first appearance: names[k] points at an id whose prefix is
 * the level (borrowed from the model).  Returns how many, at most max. */
int chart_level_names(const rmodel *m, const char **names, int max);

/* fast_p per level against baseline b: one panel per level, each set's
 * step curve over the level's problems, whiskers at the reported
 * thresholds where analysis.json has per-level estimates. */
double chart_levels_height(const chart_ctx *x);
void chart_levels_fast_p(canvas *c, const chart_ctx *x, int b, double w);

/* Share of the pairs with a candidate that failed each distribution and
 * each probe, per set (analysis.json's failures). */
double chart_failures_height(const chart_ctx *x);
void chart_failures(canvas *c, const chart_ctx *x, double w);

/* Share of all problems correct as the tolerance goes from 1e-5 to 1e-1
 * (analysis.json's tolerance_sweep), a line at the run's tolerance. */
double chart_tolerance_height(const chart_ctx *x);
void chart_tolerance(canvas *c, const chart_ctx *x, double run_tol, double w);

/* Breaks text into lines no wider than max_w; returns the number of lines
 * and stores up to max_lines malloc'd lines in lines[] (caller frees each).
 * Words longer than a line are cut. */
int chart_wrap(const fontm *fm, const char *text, double size, int bold, double max_w, char **lines,
               int max_lines);

#endif
