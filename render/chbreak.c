/* chbreak.c - the charts of the report's breakdowns (see chart.h): fast_p
 * per KernelBench level, failures by distribution and probe, and the
 * tolerance sweep. */
#include "chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chaxis.h"
#include "fmt.h"

/* --- per level --------------------------------------------------------------- */

/* Length of a level name returned by chart_level_names (an id's prefix). */
static size_t level_len(const char *name)
{
    const char *us = strchr(name, '_');
    return us ? (size_t)(us - name) : strlen(name);
}

int chart_level_names(const rmodel *m, const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < m->n_sets; i++)
        for (int p = 0; p < m->sets[i].n_probs; p++) {
            const char *id = m->sets[i].probs[p].id, *us = strchr(id, '_');
            size_t len = us ? (size_t)(us - id) : 0;
            if (len == 0)
                continue;
            int seen = 0;
            for (int k = 0; k < n && !seen; k++)
                seen = level_len(names[k]) == len && strncmp(names[k], id, len) == 0;
            if (!seen && n < max)
                names[n++] = id;   /* the name is the id's prefix of len characters */
        }
    return n;
}

static int in_level(const char *id, const char *name)
{
    size_t len = level_len(name);
    return strncmp(id, name, len) == 0 && id[len] == '_';
}

#define LV_MAX 8

double chart_levels_height(const chart_ctx *x)
{
    double leg = x->m->n_sets * (x->st->fs_small + 4) + 40;
    return leg > 190 ? leg : 190;
}

void chart_levels_fast_p(canvas *c, const chart_ctx *x, int b, double w)
{
    const rmodel *m = x->m;
    const rstyle *st = x->st;
    double h = chart_levels_height(x), fs = st->fs_small;
    const char *lv[LV_MAX];
    int nl = chart_level_names(m, lv, LV_MAX);
    if (nl == 0)
        nl = 1, lv[0] = "";
    /* The gap leaves room for the end labels of two neighbouring x axes
     * ("4" and "0.0078" ran together at 12 points). */
    double lw = x->legend_w, gap = 3 * fs + 4, L0 = 40, R0 = lw + 12, T = 16, B = 34;
    double pw = (w - L0 - R0 - (nl - 1) * gap) / nl;
    span sp;
    chax_span_init(&sp);
    for (int i = 0; i < m->n_sets; i++)
        for (int p = 0; p < m->sets[i].n_probs; p++)
            if (m->sets[i].probs[p].group == RM_G_CORRECT && m->sets[i].probs[p].sp[b].ok)
                chax_span_add(&sp, m->sets[i].probs[p].sp[b].est);
    char ylab[160];
    snprintf(ylab, sizeof ylab, "%s vs %s", x->labels[LBL_FAST_P_Y], b == RM_FP32 ? "strict fp32" : "tf32");
    for (int l = 0; l < nl; l++) {
        double L = L0 + l * (pw + gap), R = L + pw;
        axis ax, ay = {0, 0, 1, h - B, T};
        chax_ratio_axis(&ax, &sp, L, R);
        if (ax.hi > 256)
            ax.hi = 256;
        tick tx[32], ty[8];
        int ntx = chax_ticks_ratio(&ax, tx, 32), nty = chax_ticks_linear(&ay, 0.25, 2, ty, 8);
        chax_y_axis(c, x, &ay, ty, nty, L, R, 6, l == 0 ? ylab : NULL);
        chax_x_axis(c, x, &ax, tx, ntx, h - B, h, l == nl / 2 ? x->labels[LBL_FAST_P_X] : NULL);
        chax_ref_line(c, x, chax_amap(&ax, 1), T, chax_amap(&ax, 1), h - B);
        /* Each panel says its level and how many problems it has. */
        long nmax = 0;
        for (int i = 0; i < m->n_sets; i++) {
            long k = 0;
            for (int p = 0; p < m->sets[i].n_probs; p++)
                k += in_level(m->sets[i].probs[p].id, lv[l]);
            if (k > nmax)
                nmax = k;
        }
        char title[64];
        snprintf(title, sizeof title, "%.*s (N = %ld)", (int)level_len(lv[l]), lv[l], nmax);
        canvas_color(c, st->text);
        canvas_text(c, (L + R) / 2, T - 6, title, fs, 1, CANVAS_CENTER | CANVAS_BASELINE, 0);
        chax_clip_rect(c, L, T - 2, R, h - B + 2);
        for (int i = 0; i < m->n_sets; i++) {
            const rm_set *s = &m->sets[i];
            double *v = malloc((size_t)(s->n_probs ? s->n_probs : 1) * sizeof *v);
            if (!v)
                continue;
            int k = 0;
            long N = 0;
            for (int p = 0; p < s->n_probs; p++) {
                if (!in_level(s->probs[p].id, lv[l]))
                    continue;
                N++;
                if (s->probs[p].group == RM_G_CORRECT && s->probs[p].sp[b].ok)
                    v[k++] = s->probs[p].sp[b].est;
            }
            if (N == 0) {
                free(v);
                continue;
            }
            qsort(v, (size_t)k, sizeof *v, chax_cmp_double);
            canvas_rgba col = style_set_color(st, i);
            /* The intervals at the reported thresholds, from analyze's
             * per-level estimates where the analysis has them. */
            const rm_level *lvl = NULL;
            for (int q = 0; q < s->n_levels && !lvl; q++)
                if (strlen(s->levels[q].name) == level_len(lv[l]) &&
                    strncmp(s->levels[q].name, lv[l], level_len(lv[l])) == 0)
                    lvl = &s->levels[q];
            if (lvl) {
                canvas_color_a(c, col, 0.7);
                canvas_width(c, st->line);
                for (int j = 0; j < lvl->b[b].n_fast_p; j++) {
                    const rm_fp *q = &lvl->b[b].fast_p[j];
                    if (q->p <= 0 || !q->v.ok || isnan(q->v.lo) || isnan(q->v.hi))
                        continue;
                    double px = chax_amap(&ax, q->p) + (i - (m->n_sets - 1) / 2.0) * 2.5;
                    canvas_segment(c, px, chax_amap(&ay, q->v.lo), px, chax_amap(&ay, q->v.hi));
                }
            }
            int above = 0;
            for (int j = 0; j < k; j++)
                above += v[j] > ax.lo;
            canvas_color(c, col);
            canvas_width(c, st->line);
            double yv = chax_amap(&ay, above / (double)N);
            canvas_move(c, ax.p0, yv);
            for (int j = 0; j < k; j++) {
                if (v[j] <= ax.lo)
                    continue;
                if (v[j] >= ax.hi)
                    break;
                canvas_line(c, chax_amap(&ax, v[j]), yv);
                above--;
                yv = chax_amap(&ay, above / (double)N);
                canvas_line(c, chax_amap(&ax, v[j]), yv);
            }
            canvas_line(c, ax.p1, yv);
            canvas_stroke(c);
            int f1 = 0;
            for (int j = 0; j < k; j++)
                f1 += v[j] > 1;
            chax_set_marker(c, x, i, chax_amap(&ax, 1), chax_amap(&ay, f1 / (double)N), 2.6, 0);
            free(v);
        }
        canvas_restore(c);
    }
    chax_legend(c, x, w - R0 + 12, T, 1);
}

/* --- failures by distribution and probe ---------------------------------- */

#define FL_BAR 6.0
#define FL_GAP 1.5
#define FL_GROUP_GAP 7.0
#define FL_MAX 48

/* The distributions and probes of every set, in the first set's order,
 * then any another set adds; kind 0 distributions, 1 probes. */
static int fail_names(const rmodel *m, int kind, const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < m->n_sets; i++) {
        const rm_set *s = &m->sets[i];
        const rm_fail *f = kind ? s->fail_probe : s->fail_dist;
        int nf = kind ? s->n_fail_probe : s->n_fail_dist;
        for (int j = 0; j < nf; j++) {
            int seen = 0;
            for (int k = 0; k < n && !seen; k++)
                seen = strcmp(names[k], f[j].name) == 0;
            if (!seen && n < max)
                names[n++] = f[j].name;
        }
    }
    return n;
}

static const rm_fail *fail_find(const rm_set *s, int kind, const char *name)
{
    const rm_fail *f = kind ? s->fail_probe : s->fail_dist;
    int nf = kind ? s->n_fail_probe : s->n_fail_dist;
    for (int j = 0; j < nf; j++)
        if (strcmp(f[j].name, name) == 0)
            return &f[j];
    return NULL;
}

double chart_failures_height(const chart_ctx *x)
{
    const char *names[FL_MAX];
    int n = fail_names(x->m, 0, names, FL_MAX) + fail_names(x->m, 1, names, FL_MAX);
    int ns = x->m->n_sets > 0 ? x->m->n_sets : 1;
    return 16 + n * (ns * (FL_BAR + FL_GAP) + FL_GROUP_GAP) + 2 * 14 + 34;
}

void chart_failures(canvas *c, const chart_ctx *x, double w)
{
    const rmodel *m = x->m;
    const rstyle *st = x->st;
    double h = chart_failures_height(x), fs = st->fs_small;
    const char *names[2][FL_MAX];
    int nn[2] = {fail_names(m, 0, names[0], FL_MAX), fail_names(m, 1, names[1], FL_MAX)};
    double L = 0;
    for (int kind = 0; kind < 2; kind++)
        for (int j = 0; j < nn[kind]; j++) {
            double tw = canvas_text_width(c, names[kind][j], fs, 0);
            if (tw > L)
                L = tw;
        }
    L += 12;
    double R = x->legend_w + 40, T = 16, B = 34;
    axis ax = {0, 0, 1, L, w - R};
    tick tx[8];
    int ntx = chax_ticks_linear(&ax, 0.25, 2, tx, 8);
    chax_x_axis(c, x, &ax, tx, ntx, h - B, T - 4, "share of the pairs with a candidate that failed it");
    int ns = m->n_sets > 0 ? m->n_sets : 1;
    double gh = ns * (FL_BAR + FL_GAP) + FL_GROUP_GAP, y = T;
    static const char *const heads[2] = {"input distributions (checks)", "probes"};
    for (int kind = 0; kind < 2; kind++) {
        canvas_color(c, st->text);
        canvas_text(c, 0, y + fs, heads[kind], fs, 1, CANVAS_LEFT, 0);
        y += 14;
        for (int j = 0; j < nn[kind]; j++) {
            canvas_color(c, st->text);
            canvas_text(c, L - 8, y + ns * (FL_BAR + FL_GAP) / 2, names[kind][j], fs, 0,
                        CANVAS_RIGHT | CANVAS_MIDDLE, 0);
            for (int i = 0; i < m->n_sets; i++) {
                const rm_fail *f = fail_find(&m->sets[i], kind, names[kind][j]);
                double yy = y + i * (FL_BAR + FL_GAP);
                char buf[64];
                if (!f || f->run == 0) {
                    canvas_color(c, st->muted);
                    snprintf(buf, sizeof buf, "not run");
                    canvas_text(c, L + 4, yy + FL_BAR / 2, buf, fs, 0, CANVAS_LEFT | CANVAS_MIDDLE, 0);
                    continue;
                }
                double share = (double)f->failed / (double)f->run, x1 = chax_amap(&ax, share);
                canvas_rgba k = style_set_color(st, i);
                if (f->failed > 0) {
                    canvas_color_a(c, k, 0.55);
                    canvas_rect(c, L, yy, x1 - L, FL_BAR);
                    canvas_fill(c);
                }
                chax_set_marker(c, x, i, x1, yy + FL_BAR / 2, 2.4, 0);
                if (f->skipped > 0)
                    snprintf(buf, sizeof buf, "%ld of %ld (%ld skipped)", f->failed, f->run, f->skipped);
                else
                    snprintf(buf, sizeof buf, "%ld of %ld", f->failed, f->run);
                canvas_color(c, st->text);
                canvas_text(c, x1 + 5, yy + FL_BAR / 2, buf, fs, 0, CANVAS_LEFT | CANVAS_MIDDLE, 0);
            }
            y += gh;
        }
    }
    canvas_color(c, st->axis);
    canvas_width(c, st->line_thin);
    canvas_segment(c, L, T - 4, L, h - B);
    chax_legend(c, x, w - x->legend_w + 4, T, 0);
}

/* --- tolerance sweep ------------------------------------------------------ */

double chart_tolerance_height(const chart_ctx *x)
{
    double leg = x->m->n_sets * (x->st->fs_small + 4) + 40;
    return leg > 190 ? leg : 190;
}

void chart_tolerance(canvas *c, const chart_ctx *x, double run_tol, double w)
{
    const rmodel *m = x->m;
    const rstyle *st = x->st;
    double h = chart_tolerance_height(x);
    double L = 46, R = x->legend_w + 12, T = 8, B = 34;
    axis ax = {1, 1e-5, 1e-1, L, w - R}, ay = {0, 0, 1, h - B, T};
    tick tx[8], ty[8];
    int ntx = 0;
    for (int k = -5; k <= -1; k++) {
        tx[ntx].v = pow(10, k);
        snprintf(tx[ntx].label, sizeof tx[ntx].label, "1e%d", k);
        ntx++;
    }
    int nty = chax_ticks_linear(&ay, 0.25, 2, ty, 8);
    chax_y_axis(c, x, &ay, ty, nty, L, w - R, 6, "share of all problems correct");
    /* The run's own tolerance is named in the axis title, not beside its
     * line, where it would cross the curves. */
    int have_run = run_tol >= 1e-5 && run_tol <= 1e-1;
    chax_x_axis(c, x, &ax, tx, ntx, h - B, h,
           have_run ? "tolerance: atol = rtol (log scale); dashed: the run's tolerance" : "tolerance: atol = rtol (log scale)");
    if (have_run)
        chax_ref_line(c, x, chax_amap(&ax, run_tol), T, chax_amap(&ax, run_tol), h - B);
    for (int i = 0; i < m->n_sets; i++) {
        const rm_set *s = &m->sets[i];
        if (s->n_sweep == 0)
            continue;
        canvas_color(c, style_set_color(st, i));
        canvas_width(c, st->line);
        for (int j = 0; j < s->n_sweep; j++) {
            double px = chax_amap(&ax, s->sweep[j].tol), py = chax_amap(&ay, s->sweep[j].share);
            if (j == 0)
                canvas_move(c, px, py);
            else
                canvas_line(c, px, py);
        }
        canvas_stroke(c);
        /* Filled where the point is exact, open where it is a lower bound. */
        for (int j = 0; j < s->n_sweep; j++)
            chax_set_marker(c, x, i, chax_amap(&ax, s->sweep[j].tol), chax_amap(&ay, s->sweep[j].share), 2.6, !s->sweep[j].exact);
    }
    chax_legend(c, x, w - R + 12, T, 1);
}
