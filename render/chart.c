/* chart.c - the report's charts (see chart.h): the context, text
 * wrapping, fast_p, forest, speed against memory, classes and inflation;
 * the appendix's breakdowns are in chbreak.c, shared drawing in chaxis.c. */
#include "chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chaxis.h"
#include "fmt.h"

/* --- context ---------------------------------------------------------------- */

void chart_ctx_init(chart_ctx *x, const rmodel *m, const rstyle *st, const char *const *labels, const fontm *fm)
{
    x->m = m;
    x->st = st;
    x->labels = labels;
    x->fm = fm;
    double w = 0;
    for (int i = 0; i < m->n_sets; i++) {
        double tw = fontm_width(fm, 0, st->fs_small, m->sets[i].name);
        if (tw > w)
            w = tw;
    }
    if (w > 120)
        w = 120;
    x->legend_w = w + 22;
}


/* --- text wrapping --------------------------------------------------------- */

int chart_wrap(const fontm *fm, const char *text, double size, int bold, double max_w, char **lines,
               int max_lines)
{
    /* One pass over the text: each line is measured as it is read, a
     * character at a time (advance widths add up), and reading stops at the
     * first character that does not fit, so a line costs its own length and
     * the whole text its length once, however long a word is.  The sums are
     * those a measure of the line from its start would make, in the same
     * order, so the breaks are the same. */
    int n = 0;
    const char *p = text;
    while (*p && n < max_lines) {
        if (*p == '\n') {
            p++;
            continue;
        }
        /* Take words while they fit; cut a word that alone is too wide. */
        double sum = 0;   /* advance widths at size 1 from p */
        const char *q = p, *last_fit = NULL;
        for (;;) {
            const char *r = q, *soft = NULL;
            int over = sum * size > max_w;
            while (!over && *r && *r != ' ' && *r != '\n') {
                const char *r2 = r;
                fontm_utf8_next(&r2);
                double s2 = sum + fontm_width_n(fm, bold, 1.0, r, (size_t)(r2 - r));
                if (s2 * size > max_w) {
                    over = 1;
                    break;
                }
                /* Identifiers break after '_', '-' or '/'. */
                if (*r == '_' || *r == '-' || *r == '/')
                    soft = r2;
                sum = s2;
                r = r2;
            }
            if (!over) {
                last_fit = r;
                if (*r != ' ')
                    break;
                sum += fontm_width_n(fm, bold, 1.0, r, 1);
                q = r + 1;
                continue;
            }
            if (!last_fit) {
                /* One word too wide: cut after the last '_', '-' or '/'
                 * that fits, else at the last character that fits. */
                const char *fit = r;
                if (soft && soft > p + (fit - p) / 3)
                    fit = soft;
                if (fit == p)
                    fontm_utf8_next(&fit);
                last_fit = fit;
            }
            break;
        }
        size_t len = (size_t)(last_fit - p);
        lines[n] = malloc(len + 1);
        if (lines[n]) {
            memcpy(lines[n], p, len);
            lines[n][len] = 0;
        }
        n++;
        p = last_fit;
        while (*p == ' ')
            p++;
    }
    return n;
}

/* --- fast_p ---------------------------------------------------------------- */

double chart_fast_p_height(const chart_ctx *x)
{
    double h = 200, leg = x->m->n_sets * (x->st->fs_small + 4) + 40;
    return h > leg ? h : leg;
}

static double *correct_speedups(const rm_set *s, int b, int *n);
static int share_band(canvas *c, const chart_ctx *x, const rm_set *s, int si, int b, const axis *ax,
                      const axis *ay);

/* The sorted speedups of set s's correct problems against baseline b
 * (malloc'd; *n their count); NULL when out of memory. */
static double *correct_speedups(const rm_set *s, int b, int *n)
{
    double *v = malloc((size_t)(s->n_probs ? s->n_probs : 1) * sizeof *v);
    *n = 0;
    if (!v)
        return NULL;
    for (int p = 0; p < s->n_probs; p++)
        if (s->probs[p].group == RM_G_CORRECT && s->probs[p].sp[b].ok)
            v[(*n)++] = s->probs[p].sp[b].est;
    qsort(v, (size_t)*n, sizeof *v, chax_cmp_double);
    return v;
}

/* fast_p's band over the whole axis: where k problems have a speedup above
 * p, the interval of k / N from analysis.json's fast_p_share_ci, as a step
 * band that changes where the estimate does.  Returns 0 (draws nothing)
 * when the analysis has no such table. */
static int share_band(canvas *c, const chart_ctx *x, const rm_set *s, int si, int b, const axis *ax,
                      const axis *ay)
{
    if (!s->share_lo || s->n_share != s->n_problems + 1 || s->n_problems <= 0)
        return 0;
    int k;
    double *v = correct_speedups(s, b, &k);
    if (!v)
        return 0;
    /* More correct problems than the set claims to have: the table has no
     * row for them, so no band. */
    if (k > s->n_problems) {
        free(v);
        return 0;
    }
    /* Breakpoints inside the axis, and the count above the axis start. */
    int first = 0;
    while (first < k && v[first] <= ax->lo)
        first++;
    canvas_color_a(c, style_set_color(x->st, si), x->m->n_sets > 4 ? x->st->band_alpha * 0.6 : x->st->band_alpha);
    int above = k - first;
    canvas_move(c, ax->p0, chax_amap(ay, s->share_hi[above]));
    for (int j = first; j < k && v[j] < ax->hi; j++) {
        canvas_line(c, chax_amap(ax, v[j]), chax_amap(ay, s->share_hi[above]));
        above--;
        canvas_line(c, chax_amap(ax, v[j]), chax_amap(ay, s->share_hi[above]));
    }
    canvas_line(c, ax->p1, chax_amap(ay, s->share_hi[above]));
    canvas_line(c, ax->p1, chax_amap(ay, s->share_lo[above]));
    /* Back along the lower edge, right to left. */
    int last = first;
    while (last < k && v[last] < ax->hi)
        last++;
    for (int j = last - 1; j >= first; j--) {
        canvas_line(c, chax_amap(ax, v[j]), chax_amap(ay, s->share_lo[above]));
        above++;
        canvas_line(c, chax_amap(ax, v[j]), chax_amap(ay, s->share_lo[above]));
    }
    canvas_line(c, ax->p0, chax_amap(ay, s->share_lo[above]));
    canvas_close(c);
    canvas_fill(c);
    free(v);
    return 1;
}

void chart_fast_p(canvas *c, const chart_ctx *x, int b, double w)
{
    const rmodel *m = x->m;
    const rstyle *st = x->st;
    double h = chart_fast_p_height(x);
    double lw = x->legend_w;
    double L = 46, R = lw + 12, T = 8, B = 34;
    axis ax, ay = {0, 0, 1, h - B, T};
    span sp;
    chax_span_init(&sp);
    for (int i = 0; i < m->n_sets; i++)
        for (int p = 0; p < m->sets[i].n_probs; p++)
            if (m->sets[i].probs[p].group == RM_G_CORRECT && m->sets[i].probs[p].sp[b].ok)
                chax_span_add(&sp, m->sets[i].probs[p].sp[b].est);
    /* The axis covers every speedup (down to 2^-10), so that each curve
     * starts at its fast_0 on the left. */
    chax_ratio_axis(&ax, &sp, L, w - R);
    if (ax.hi > 256)
        ax.hi = 256;
    tick tx[32], ty[8];
    int ntx = chax_ticks_ratio(&ax, tx, 32), nty = chax_ticks_linear(&ay, 0.25, 2, ty, 8);
    /* The y label names the baseline, so that the figure stands alone. */
    char ylab[160];
    snprintf(ylab, sizeof ylab, "%s vs %s", x->labels[LBL_FAST_P_Y],
             b == RM_FP32 ? "strict fp32" : b == RM_TF32 ? "tf32" : "bf16");
    chax_y_axis(c, x, &ay, ty, nty, L, w - R, 6, ylab);
    chax_x_axis(c, x, &ax, tx, ntx, h - B, h, x->labels[LBL_FAST_P_X]);
    chax_ref_line(c, x, chax_amap(&ax, 1), T, chax_amap(&ax, 1), h - B);

    chax_clip_rect(c, L, T - 2, w - R, h - B + 2);
    /* Bands first, so that no band hides another set's line. */
    for (int i = 0; i < m->n_sets; i++) {
        const rm_base *bs = &m->sets[i].b[b];
        if (share_band(c, x, &m->sets[i], i, b, &ax, &ay))
            continue;
        int ok = bs->n_curve > 1;
        for (int j = 0; j < bs->n_curve && ok; j++)
            ok = bs->curve[j].v.ok && !isnan(bs->curve[j].v.lo) && !isnan(bs->curve[j].v.hi) && bs->curve[j].p > 0;
        if (!ok) {
            /* No curve on a grid (DESIGN.md 6 requires only the fast_p
             * points): the points' intervals as whiskers instead. */
            canvas_color_a(c, style_set_color(st, i), 0.6);
            canvas_width(c, st->line);
            for (int j = 0; j < bs->n_fast_p; j++) {
                const rm_fp *q = &bs->fast_p[j];
                if (q->p <= 0 || !q->v.ok || isnan(q->v.lo) || isnan(q->v.hi))
                    continue;
                double px = chax_amap(&ax, q->p) + (i - (m->n_sets - 1) / 2.0) * 2.0;
                canvas_segment(c, px, chax_amap(&ay, q->v.lo), px, chax_amap(&ay, q->v.hi));
            }
            continue;
        }
        /* Many overlapping bands turn muddy; lighter ones stay readable. */
        canvas_color_a(c, style_set_color(st, i), m->n_sets > 4 ? st->band_alpha * 0.6 : st->band_alpha);
        int n = bs->n_curve;
        canvas_move(c, chax_amap(&ax, bs->curve[0].p), chax_amap(&ay, bs->curve[0].v.hi));
        for (int j = 0; j + 1 < n; j++) {
            canvas_line(c, chax_amap(&ax, bs->curve[j + 1].p), chax_amap(&ay, bs->curve[j].v.hi));
            canvas_line(c, chax_amap(&ax, bs->curve[j + 1].p), chax_amap(&ay, bs->curve[j + 1].v.hi));
        }
        canvas_line(c, chax_amap(&ax, bs->curve[n - 1].p), chax_amap(&ay, bs->curve[n - 1].v.lo));
        for (int j = n - 1; j > 0; j--) {
            canvas_line(c, chax_amap(&ax, bs->curve[j].p), chax_amap(&ay, bs->curve[j - 1].v.lo));
            canvas_line(c, chax_amap(&ax, bs->curve[j - 1].p), chax_amap(&ay, bs->curve[j - 1].v.lo));
        }
        canvas_close(c);
        canvas_fill(c);
    }
    /* The estimate, exactly: fast_p(p) = #{correct, s > p} / N drops at
     * every speedup s and is right-continuous there. */
    for (int i = 0; i < m->n_sets; i++) {
        const rm_set *s = &m->sets[i];
        if (s->n_problems <= 0)
            continue;
        double *v = malloc((size_t)(s->n_probs ? s->n_probs : 1) * sizeof *v);
        if (!v)
            continue;
        int k = 0;
        for (int p = 0; p < s->n_probs; p++)
            if (s->probs[p].group == RM_G_CORRECT && s->probs[p].sp[b].ok)
                v[k++] = s->probs[p].sp[b].est;
        qsort(v, (size_t)k, sizeof *v, chax_cmp_double);
        double N = (double)s->n_problems;
        int above = 0;
        for (int j = 0; j < k; j++)
            if (v[j] > ax.lo)
                above++;
        canvas_color(c, style_set_color(st, i));
        canvas_width(c, st->line);
        double yv = chax_amap(&ay, above / N);
        canvas_move(c, ax.p0, yv);
        for (int j = 0; j < k; j++) {
            if (v[j] <= ax.lo)
                continue;
            if (v[j] >= ax.hi)
                break;
            double px = chax_amap(&ax, v[j]);
            canvas_line(c, px, yv);
            above--;
            yv = chax_amap(&ay, above / N);
            canvas_line(c, px, yv);
        }
        canvas_line(c, ax.p1, yv);
        canvas_stroke(c);
        /* Each set's marker sits on its curve at its own p, spread over
         * 0.5 to 2, so that curves that run together can still be told
         * apart by shape. */
        double pm = m->n_sets > 1 ? pow(2, -1 + 2.0 * (i + 0.5) / m->n_sets) : 1;
        int fm = 0;
        for (int j = 0; j < k; j++)
            if (v[j] > pm)
                fm++;
        chax_set_marker(c, x, i, chax_amap(&ax, pm), chax_amap(&ay, fm / N), 2.8, 0);
        free(v);
    }
    canvas_restore(c);
    chax_legend(c, x, w - R + 12, T, 1);
}

/* --- forest ---------------------------------------------------------------- */

#define FR_ROW 11.0
#define FR_HEAD 24.0
#define FR_AXIS 34.0

double chart_forest_height(const chart_ctx *x, int rows)
{
    (void)x;
    return FR_HEAD + rows * FR_ROW + FR_AXIS;
}

void chart_forest(canvas *c, const chart_ctx *x, int si, int r0, int r1, double w)
{
    const rstyle *st = x->st;
    const rm_set *s = &x->m->sets[si];
    double fs = st->fs_small;
    if (r1 > s->n_shown)
        r1 = s->n_shown;
    int rows = r1 - r0 > 0 ? r1 - r0 : 0;
    double id_w = 0;
    for (int r = 0; r < s->n_shown; r++) {
        double tw = canvas_text_width(c, s->probs[s->shown[r]].id, fs, 0);
        if (tw > id_w)
            id_w = tw;
    }
    /* Long ids are cut at 175 pt (their number keeps them unique; the
     * per-problem tables print them whole), so that the plot keeps its room. */
    id_w = (id_w > 175 ? 175 : id_w) + 6;
    /* Text columns as wide as their widest entry in the whole set, so
     * that the pages of one set line up. */
    double tw = canvas_text_width(c, "vs fp32", fs, 1), cls_w = canvas_text_width(c, "class", fs, 1);
    for (int r = 0; r < s->n_shown; r++) {
        int p = s->shown[r];
        char buf[96];
        for (int b = 0; b < RM_NB; b++) {
            double t = canvas_text_width(c, fmt_2(buf, sizeof buf, s->probs[p].sp[b].ok ? s->probs[p].sp[b].est : NAN),
                                         fs, 0);
            if (t > tw)
                tw = t;
        }
        double t = canvas_text_width(c, s->probs[p].cls, fs, 0);
        if (t > cls_w)
            cls_w = t;
    }
    tw += 8;
    /* The estimates are printed right-aligned beside the plot (the
     * intervals are the whiskers, and the per-problem table prints them). */
    double px0 = id_w + 4, px1 = w - 2 * tw - cls_w - 16;
    double c1 = px1 + 8 + tw, c2 = c1 + tw, c3 = c2 + 8;
    span sp;
    chax_span_init(&sp);
    for (int r = 0; r < s->n_shown; r++)
        for (int b = 0; b < RM_NB; b++)
            chax_span_add_est(&sp, &s->probs[s->shown[r]].sp[b]);
    axis ax;
    chax_ratio_axis(&ax, &sp, px0, px1);
    tick tx[32];
    int ntx = chax_ticks_ratio(&ax, tx, 32);
    double yb = FR_HEAD + rows * FR_ROW;

    /* Header: column titles and which marker is which baseline. */
    canvas_color(c, st->text);
    canvas_text(c, 0, FR_HEAD - 5, "problem", fs, 1, CANVAS_LEFT, 0);
    canvas_text(c, c1, FR_HEAD - 5, "vs fp32", fs, 1, CANVAS_RIGHT, 0);
    canvas_text(c, c2, FR_HEAD - 5, "vs tf32", fs, 1, CANVAS_RIGHT, 0);
    canvas_text(c, c3, FR_HEAD - 5, "class", fs, 1, CANVAS_LEFT, 0);
    canvas_rgba k = style_set_color(st, si);
    double lx = px0;
    canvas_marker(c, (canvas_mark)style_set_mark(st, si), lx + 3, 6, 2.6, k, chax_white);
    canvas_color(c, st->text);
    lx += 9 + canvas_text(c, lx + 9, 6, x->labels[LBL_OPEN_MARKER], fs, 0, CANVAS_LEFT | CANVAS_MIDDLE, 0) + 10;
    canvas_marker(c, (canvas_mark)style_set_mark(st, si), lx + 3, 6, 2.6, k, k);
    canvas_color(c, st->text);
    canvas_text(c, lx + 9, 6, x->labels[LBL_FILLED_MARKER], fs, 0, CANVAS_LEFT | CANVAS_MIDDLE, 0);

    for (int r = r0; r < r1; r++) {
        double y = FR_HEAD + (r - r0) * FR_ROW;
        if (r % 2 == 1) {
            canvas_color(c, st->shade);
            canvas_rect(c, 0, y, w, FR_ROW);
            canvas_fill(c);
        }
    }
    chax_x_axis(c, x, &ax, tx, ntx, yb + 2, FR_HEAD, x->labels[LBL_SPEEDUP_AXIS]);
    if (rows > 0)
        chax_ref_line(c, x, chax_amap(&ax, 1), FR_HEAD, chax_amap(&ax, 1), yb + 2);
    for (int r = r0; r < r1; r++) {
        const rm_problem *p = &s->probs[s->shown[r]];
        double y = FR_HEAD + (r - r0) * FR_ROW + FR_ROW / 2;
        int good = p->group == RM_G_CORRECT;
        canvas_rgba col = good ? k : st->muted;
        canvas_color(c, good ? st->text : st->muted);
        chax_text_fit(c, 0, y, p->id, fs, 0, CANVAS_LEFT | CANVAS_MIDDLE, id_w - 4);
        char buf[96];
        for (int b = 0; b < RM_NB; b++)
            canvas_text(c, b == 0 ? c1 : c2, y, fmt_2(buf, sizeof buf, p->sp[b].ok ? p->sp[b].est : NAN), fs, 0,
                        CANVAS_RIGHT | CANVAS_MIDDLE, 0);
        canvas_text(c, c3, y, p->cls, fs, 0, CANVAS_LEFT | CANVAS_MIDDLE, 0);
        for (int b = 0; b < RM_NB; b++) {
            const rm_est *e = &p->sp[b];
            if (!e->ok)
                continue;
            double yy = y + (b == 0 ? -2.2 : 2.2);
            canvas_color(c, col);
            canvas_width(c, st->line);
            if (!isnan(e->lo) && !isnan(e->hi))
                canvas_segment(c, chax_amap(&ax, e->lo), yy, chax_amap(&ax, e->hi), yy);
            canvas_marker(c, (canvas_mark)style_set_mark(st, si), chax_amap(&ax, e->est), yy, 2.4, col,
                          b == 0 ? chax_white : col);
        }
    }
}

/* --- speed vs memory ------------------------------------------------------- */

typedef struct spt {
    int set;
    rm_est sp;
    double mem;
} spt;

static int scatter_collect(const chart_ctx *x, spt *out)
{
    int mb = strcmp(x->m->mem_baseline, "fp32") == 0 ? RM_FP32 : RM_TF32;
    int n = 0;
    for (int i = 0; i < x->m->n_sets; i++)
        for (int p = 0; p < x->m->sets[i].n_probs; p++) {
            const rm_problem *q = &x->m->sets[i].probs[p];
            double cp = q->peak[RM_CAND], bp = q->peak[mb == RM_FP32 ? RM_VFP32 : RM_VTF32];
            if (q->group != RM_G_CORRECT || !q->sp[mb].ok || !(cp > 0) || !(bp > 0))
                continue;
            if (out) {
                out[n].set = i;
                out[n].sp = q->sp[mb];
                out[n].mem = bp / cp;
            }
            n++;
        }
    return n;
}

int chart_scatter_points(const chart_ctx *x)
{
    return scatter_collect(x, NULL);
}

/* One panel per set, two to a row, on shared axes: one set's points no
 * longer hide another's. */
#define SC_PANEL_H 235.0
#define SC_GAP 14.0

static int scatter_cols(const chart_ctx *x)
{
    return x->m->n_sets > 1 ? 2 : 1;
}

double chart_scatter_height(const chart_ctx *x)
{
    int n = x->m->n_sets > 0 ? x->m->n_sets : 1, cols = scatter_cols(x);
    int rows = (n + cols - 1) / cols;
    return rows * SC_PANEL_H + (rows - 1) * SC_GAP;
}

void chart_scatter(canvas *c, const chart_ctx *x, double w)
{
    const rstyle *st = x->st;
    double fs = st->fs_small;
    int n = scatter_collect(x, NULL);
    spt *pts = calloc((size_t)(n ? n : 1), sizeof *pts);
    if (!pts)
        return;
    scatter_collect(x, pts);
    span sx, sy;
    chax_span_init(&sx);
    chax_span_init(&sy);
    for (int i = 0; i < n; i++) {
        chax_span_add_est(&sx, &pts[i].sp);
        chax_span_add(&sy, pts[i].mem);
    }
    int cols = scatter_cols(x), ns = x->m->n_sets > 0 ? x->m->n_sets : 1;
    double pw = (w - (cols - 1) * SC_GAP) / cols;
    for (int si = 0; si < ns; si++) {
        double ox = (si % cols) * (pw + SC_GAP), oy = (si / cols) * (SC_PANEL_H + SC_GAP);
        double L = ox + 40, R = ox + pw - 4, T = oy + 16, B = oy + SC_PANEL_H - 30;
        axis ax, ay;
        chax_ratio_axis(&ax, &sx, L, R);
        chax_ratio_axis(&ay, &sy, B, T);
        tick tx[32], ty[32];
        int ntx = chax_ticks_ratio(&ax, tx, 32), nty = chax_ticks_ratio(&ay, ty, 32);
        int k = 0;
        for (int i = 0; i < n; i++)
            k += pts[i].set == si;
        /* The panel's title: the set, its marker and its n. */
        char title[200];
        snprintf(title, sizeof title, "%s (n = %d)", si < x->m->n_sets ? x->m->sets[si].name : "", k);
        chax_set_marker(c, x, si, L + 3, oy + 6, 2.6, 0);
        canvas_color(c, st->text);
        chax_text_fit(c, L + 10, oy + 6, title, fs, 1, CANVAS_LEFT | CANVAS_MIDDLE, R - L - 10);
        chax_y_axis(c, x, &ay, ty, nty, L, R, ox + 2, si % cols == 0 ? x->labels[LBL_MEMORY_AXIS] : NULL);
        chax_x_axis(c, x, &ax, tx, ntx, B, T, x->labels[LBL_SCATTER_X]);
        chax_ref_line(c, x, chax_amap(&ax, 1), T, chax_amap(&ax, 1), B);
        chax_ref_line(c, x, L, chax_amap(&ay, 1), R, chax_amap(&ay, 1));
        /* Which way is better, in the left corners: the line at speedup 1
         * runs through the right part of the panel. */
        canvas_color(c, st->muted);
        canvas_text(c, L + 3, T + 2, "less memory", fs, 0, CANVAS_LEFT | CANVAS_TOP, 0);
        canvas_text(c, L + 3, B - 2, "more memory", fs, 0, CANVAS_LEFT | CANVAS_BOTTOM, 0);
        if (k == 0)
            canvas_text(c, (L + R) / 2, (T + B) / 2, "no correct problem with memory figures", fs, 0,
                        CANVAS_CENTER | CANVAS_MIDDLE, 0);
        chax_clip_rect(c, L - 4, T - 4, R + 4, B + 4);
        /* The speedup's interval as a whisker with end caps, drawn over
         * the marker, so that even a narrow one shows. */
        double mr = k > 100 ? 2.2 : 2.6;
        for (int i = 0; i < n; i++)
            if (pts[i].set == si)
                chax_set_marker(c, x, si, chax_amap(&ax, pts[i].sp.est), chax_amap(&ay, pts[i].mem), mr, 1);
        canvas_rgba dark = st->text;
        canvas_color_a(c, dark, 0.85);
        canvas_width(c, st->line_thin);
        for (int i = 0; i < n; i++) {
            const rm_est *e = &pts[i].sp;
            if (pts[i].set != si || isnan(e->lo) || isnan(e->hi))
                continue;
            double py = chax_amap(&ay, pts[i].mem), x0 = chax_amap(&ax, e->lo), x1 = chax_amap(&ax, e->hi);
            canvas_segment(c, x0, py, x1, py);
            canvas_segment(c, x0, py - 2, x0, py + 2);
            canvas_segment(c, x1, py - 2, x1, py + 2);
        }
        canvas_restore(c);
    }
    free(pts);
}

/* --- class counts ---------------------------------------------------------- */

#define CL_BAR 7.0
#define CL_GAP 1.5
#define CL_GROUP_GAP 9.0

double chart_classes_height(const chart_ctx *x)
{
    int n = x->m->n_sets > 0 ? x->m->n_sets : 1;
    return 10 + RM_NG_FOUND * (n * (CL_BAR + CL_GAP) + CL_GROUP_GAP) + 34;
}

void chart_classes(canvas *c, const chart_ctx *x, double w)
{
    const rstyle *st = x->st;
    const rmodel *m = x->m;
    double h = chart_classes_height(x), fs = st->fs_small;
    double lw = x->legend_w;
    double L = 0;
    for (int g = 0; g < RM_NG_FOUND; g++) {
        double tw = canvas_text_width(c, rmodel_group_name((rm_group)g), st->fs_normal, 0);
        if (tw > L)
            L = tw;
    }
    L += 12;
    double R = lw + 34, T = 10, B = 34;
    long mx = 1;
    for (int i = 0; i < m->n_sets; i++)
        for (int g = 0; g < RM_NG_FOUND; g++)
            if (m->sets[i].group_counts[g] > mx)
                mx = m->sets[i].group_counts[g];
    double step = chax_nice_step((double)mx);
    double top = ceil((double)mx / step) * step;
    axis ax = {0, 0, top, L, w - R};
    tick tx[16];
    int ntx = chax_ticks_linear(&ax, step, 0, tx, 16);
    chax_x_axis(c, x, &ax, tx, ntx, h - B, T - 4, x->labels[LBL_COUNT_AXIS]);
    int n = m->n_sets > 0 ? m->n_sets : 1;
    double gh = n * (CL_BAR + CL_GAP) + CL_GROUP_GAP;
    for (int g = 0; g < RM_NG_FOUND; g++) {
        double y0 = T + g * gh;
        canvas_color(c, st->text);
        canvas_text(c, L - 8, y0 + (n * (CL_BAR + CL_GAP)) / 2, rmodel_group_name((rm_group)g), st->fs_normal, 0,
                    CANVAS_RIGHT | CANVAS_MIDDLE, 0);
        for (int i = 0; i < m->n_sets; i++) {
            double y = y0 + i * (CL_BAR + CL_GAP);
            long v = m->sets[i].group_counts[g];
            double x1 = chax_amap(&ax, (double)v);
            canvas_rgba k = style_set_color(st, i);
            if (v > 0) {
                canvas_color_a(c, k, 0.55);
                canvas_rect(c, L, y, x1 - L, CL_BAR);
                canvas_fill(c);
            }
            chax_set_marker(c, x, i, x1, y + CL_BAR / 2, 2.6, 0);
            char buf[32];
            snprintf(buf, sizeof buf, "%ld", v);
            canvas_color(c, st->text);
            canvas_text(c, x1 + 5, y + CL_BAR / 2, buf, fs, 0, CANVAS_LEFT | CANVAS_MIDDLE, 0);
        }
    }
    canvas_color(c, st->axis);
    canvas_width(c, st->line_thin);
    canvas_segment(c, L, T - 4, L, h - B);
    chax_legend(c, x, w - lw + 4, T, 0);
}

/* --- inflation ------------------------------------------------------------- */

/* Lines the longest step label needs under the axis, for the bottom
 * margin. */
static int inflation_label_lines(const chart_ctx *x, double band)
{
    int most = 1, ref = -1, steps = 0;
    for (int i = 0; i < x->m->n_sets; i++)
        if (x->m->sets[i].n_infl > steps) {
            steps = x->m->sets[i].n_infl;
            ref = i;
        }
    for (int j = 0; j < steps; j++) {
        char *lines[3] = {0};
        int n = chart_wrap(x->fm, x->m->sets[ref].infl[j].label, x->st->fs_small, 0, band - 6, lines, 3);
        for (int l = 0; l < n; l++)
            free(lines[l]);
        if (n > most)
            most = n;
    }
    return most;
}

static double inflation_band(const chart_ctx *x, double w)
{
    int steps = 0;
    for (int i = 0; i < x->m->n_sets; i++)
        if (x->m->sets[i].n_infl > steps)
            steps = x->m->sets[i].n_infl;
    return steps ? (w - 46 - x->legend_w - 12) / steps : w;
}

double chart_inflation_height(const chart_ctx *x)
{
    double plot = 170, leg = x->m->n_sets * (x->st->fs_small + 4);
    if (leg > plot)
        plot = leg;
    return 8 + plot + 12 + inflation_label_lines(x, inflation_band(x, x->st->fig_w)) * (x->st->fs_small + 2);
}

void chart_inflation(canvas *c, const chart_ctx *x, double w)
{
    const rstyle *st = x->st;
    const rmodel *m = x->m;
    double h = chart_inflation_height(x), fs = st->fs_small;
    double lw = x->legend_w;
    double L = 46, R = lw + 12, T = 8;
    double B = 12 + inflation_label_lines(x, inflation_band(x, w)) * (fs + 2);
    int steps = 0, ref = -1;
    for (int i = 0; i < m->n_sets; i++)
        if (m->sets[i].n_infl > steps) {
            steps = m->sets[i].n_infl;
            ref = i;
        }
    span sy;
    chax_span_init(&sy);
    for (int i = 0; i < m->n_sets; i++)
        for (int j = 0; j < m->sets[i].n_infl; j++)
            chax_span_add_est(&sy, &m->sets[i].infl[j].gm);
    axis ay;
    chax_ratio_axis(&ay, &sy, h - B, T);
    tick ty[32];
    int nty = chax_ticks_ratio(&ay, ty, 32);
    chax_y_axis(c, x, &ay, ty, nty, L, w - R, 6, x->labels[LBL_INFLATION_AXIS]);
    canvas_color(c, st->axis);
    canvas_width(c, st->line_thin);
    canvas_segment(c, L, h - B, w - R, h - B);
    chax_ref_line(c, x, L, chax_amap(&ay, 1), w - R, chax_amap(&ay, 1));
    if (steps == 0) {
        canvas_color(c, st->text);
        canvas_text(c, (L + w - R) / 2, T + (h - B - T) / 4, "no inflation steps in analysis.json", st->fs_normal, 0,
                    CANVAS_CENTER | CANVAS_MIDDLE, 0);
        chax_legend(c, x, w - R + 12, T, 1);
        return;
    }
    double band = (w - R - L) / steps;
    double dodge = band / (m->n_sets + 2);
    if (dodge > 9)
        dodge = 9;
    canvas_color(c, st->text);
    for (int j = 0; j < steps; j++) {
        double cx = L + (j + 0.5) * band;
        canvas_color(c, st->axis);
        canvas_segment(c, cx, h - B, cx, h - B + 3);
        char *lines[3] = {0};
        int nl = chart_wrap(c->fm, m->sets[ref].infl[j].label, fs, 0, band - 6, lines, 3);
        canvas_color(c, st->text);
        for (int l = 0; l < nl; l++) {
            canvas_text(c, cx, h - B + 5 + l * (fs + 2), lines[l], fs, 0, CANVAS_CENTER | CANVAS_TOP, 0);
            free(lines[l]);
        }
    }
    for (int i = 0; i < m->n_sets; i++) {
        const rm_set *s = &m->sets[i];
        double off = (i - (m->n_sets - 1) / 2.0) * dodge;
        canvas_rgba k = style_set_color(st, i);
        canvas_color_a(c, k, 0.6);
        canvas_width(c, st->line_thin);
        int started = 0;
        for (int j = 0; j < s->n_infl; j++) {
            if (!s->infl[j].gm.ok) {
                if (started)
                    canvas_stroke(c);
                started = 0;
                continue;
            }
            double px = L + (j + 0.5) * band + off, py = chax_amap(&ay, s->infl[j].gm.est);
            if (!started)
                canvas_move(c, px, py);
            else
                canvas_line(c, px, py);
            started = 1;
        }
        if (started)
            canvas_stroke(c);
        for (int j = 0; j < s->n_infl; j++) {
            const rm_est *e = &s->infl[j].gm;
            if (!e->ok)
                continue;
            double px = L + (j + 0.5) * band + off;
            if (!isnan(e->lo) && !isnan(e->hi)) {
                canvas_color(c, k);
                canvas_width(c, st->line);
                canvas_segment(c, px, chax_amap(&ay, e->lo), px, chax_amap(&ay, e->hi));
            }
            chax_set_marker(c, x, i, px, chax_amap(&ay, e->est), 2.8, 0);
        }
    }
    chax_legend(c, x, w - R + 12, T, 1);
}
