/* chbf16.c - the charts of the BF16 setting (see chart.h). */
#include "chart.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "chaxis.h"

void chart_bf16_view(rmodel *view, const rmodel *full)
{
    /* A shallow copy: the view borrows every pointer of full and owns
     * nothing, so that the FP32 charts' code (legend, colours, bands) draws
     * the BF16 sets as it draws FP32 ones. */
    *view = *full;
    view->sets = full->bsets;
    view->n_sets = full->n_bsets;
    view->bsets = NULL;
    view->n_bsets = 0;
}

double chart_bf16_height(const chart_ctx *x)
{
    (void)x;
    return 300;
}

int chart_bf16_points(const rmodel *full, int j, int *both_correct)
{
    int n = 0, k = 0;
    const rm_set *bs = &full->bsets[j];
    for (int p = 0; p < bs->n_probs; p++) {
        const rm_problem *fq;
        const rm_est *f = rmodel_fp32_of(full, bs, p, &fq);
        if (!f || !f->ok || !bs->probs[p].sp[RM_BF16].ok)
            continue;
        n++;
        k += fq->group == RM_G_CORRECT && bs->probs[p].group == RM_G_CORRECT;
    }
    if (both_correct)
        *both_correct = k;
    return n;
}

/* A whisker with end caps from (x0, y0) to (x1, y1), horizontal or
 * vertical. */
static void whisker(canvas *c, double x0, double y0, double x1, double y1)
{
    canvas_segment(c, x0, y0, x1, y1);
    if (y0 == y1) {
        canvas_segment(c, x0, y0 - 2, x0, y0 + 2);
        canvas_segment(c, x1, y1 - 2, x1, y1 + 2);
    } else {
        canvas_segment(c, x0 - 2, y0, x0 + 2, y0);
        canvas_segment(c, x1 - 2, y1, x1 + 2, y1);
    }
}

void chart_bf16_compare(canvas *c, const chart_ctx *x, const rmodel *full, int j, double w)
{
    const rstyle *st = x->st;
    const rm_set *bs = &full->bsets[j];
    double fs = st->fs_small, h = chart_bf16_height(x);
    /* Square plot on the left, the key on the right. */
    double T = 20, B = h - 34, L = 46, side = B - T, R = L + side;
    if (R > w - 8)
        R = w - 8;
    span sp;
    chax_span_init(&sp);
    int both = 0, n = chart_bf16_points(full, j, &both);
    for (int p = 0; p < bs->n_probs; p++) {
        const rm_problem *fq;
        const rm_est *f = rmodel_fp32_of(full, bs, p, &fq);
        if (!f || !f->ok || !bs->probs[p].sp[RM_BF16].ok)
            continue;
        chax_span_add_est(&sp, f);
        chax_span_add_est(&sp, &bs->probs[p].sp[RM_BF16]);
    }
    /* Both axes over the same range, so that the diagonal is the line of
     * equal speedup. */
    axis ax, ay;
    chax_ratio_axis(&ax, &sp, L, R);
    chax_ratio_axis(&ay, &sp, B, T);
    tick tx[32], ty[32];
    int ntx = chax_ticks_ratio(&ax, tx, 32), nty = chax_ticks_ratio(&ay, ty, 32);
    char title[320], xl[200], yl[200];
    const char *fname = bs->cmp >= 0 ? full->sets[bs->cmp].name : (bs->compare_with ? bs->compare_with : "none");
    snprintf(title, sizeof title, "%s against %s (n = %d, %d correct in both)", bs->name, fname, n, both);
    chax_set_marker(c, x, j, L + 3, 7, 2.6, 0);
    canvas_color(c, st->text);
    chax_text_fit(c, L + 10, 7, title, fs, 1, CANVAS_LEFT | CANVAS_MIDDLE, w - L - 10);
    snprintf(xl, sizeof xl, "FP32 speedup vs strict fp32, %s (log scale)", fname);
    snprintf(yl, sizeof yl, "BF16 speedup vs bf16 (log)");
    chax_y_axis(c, x, &ay, ty, nty, L, R, 2, yl);
    chax_x_axis(c, x, &ax, tx, ntx, B, T, xl);
    chax_ref_line(c, x, chax_amap(&ax, 1), T, chax_amap(&ax, 1), B);
    chax_ref_line(c, x, L, chax_amap(&ay, 1), R, chax_amap(&ay, 1));
    /* The diagonal: equal speedup in both settings. */
    double lo = ax.lo > ay.lo ? ax.lo : ay.lo, hi = ax.hi < ay.hi ? ax.hi : ay.hi;
    static const double dash[2] = {3, 2};
    canvas_color(c, st->muted);
    canvas_width(c, st->line_thin);
    canvas_dash(c, dash, 2);
    canvas_segment(c, chax_amap(&ax, lo), chax_amap(&ay, lo), chax_amap(&ax, hi), chax_amap(&ay, hi));
    canvas_dash(c, NULL, 0);
    canvas_text(c, L + 3, T + 2, "more speedup in BF16", fs, 0, CANVAS_LEFT | CANVAS_TOP, 0);
    canvas_text(c, R - 3, B - 2, "more speedup in FP32", fs, 0, CANVAS_RIGHT | CANVAS_BOTTOM, 0);
    if (n == 0)
        canvas_text(c, (L + R) / 2, (T + B) / 2,
                    bs->cmp < 0 ? "no FP32 set to compare with in this run" : "no problem with both speedups", fs,
                    0, CANVAS_CENTER | CANVAS_MIDDLE, 0);
    chax_clip_rect(c, L - 4, T - 4, R + 4, B + 4);
    double mr = n > 100 ? 2.2 : 2.6;
    for (int p = 0; p < bs->n_probs; p++) {
        const rm_problem *fq, *q = &bs->probs[p];
        const rm_est *f = rmodel_fp32_of(full, bs, p, &fq);
        if (!f || !f->ok || !q->sp[RM_BF16].ok)
            continue;
        int filled = fq->group == RM_G_CORRECT && q->group == RM_G_CORRECT;
        chax_set_marker(c, x, j, chax_amap(&ax, f->est), chax_amap(&ay, q->sp[RM_BF16].est), mr, !filled);
    }
    canvas_color_a(c, st->text, 0.85);
    canvas_width(c, st->line_thin);
    for (int p = 0; p < bs->n_probs; p++) {
        const rm_problem *fq, *q = &bs->probs[p];
        const rm_est *f = rmodel_fp32_of(full, bs, p, &fq), *b = &q->sp[RM_BF16];
        if (!f || !f->ok || !b->ok)
            continue;
        double px = chax_amap(&ax, f->est), py = chax_amap(&ay, b->est);
        if (!isnan(f->lo) && !isnan(f->hi))
            whisker(c, chax_amap(&ax, f->lo), py, chax_amap(&ax, f->hi), py);
        if (!isnan(b->lo) && !isnan(b->hi))
            whisker(c, px, chax_amap(&ay, b->lo), px, chax_amap(&ay, b->hi));
    }
    canvas_restore(c);
    /* The key: what a filled and an open marker mean. */
    double kx = R + 14, ky = T + 6;
    if (kx + 60 < w) {
        chax_set_marker(c, x, j, kx + 3, ky, 2.6, 0);
        canvas_color(c, st->text);
        chax_text_fit(c, kx + 10, ky, "correct in both sets", fs, 0, CANVAS_LEFT | CANVAS_MIDDLE, w - kx - 10);
        chax_set_marker(c, x, j, kx + 3, ky + fs + 4, 2.6, 1);
        canvas_color(c, st->text);
        chax_text_fit(c, kx + 10, ky + fs + 4, "not correct in one of them", fs, 0, CANVAS_LEFT | CANVAS_MIDDLE,
                      w - kx - 10);
    }
}
