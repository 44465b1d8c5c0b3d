/* rfig.c - the report's figures: which exist, their sizes, and drawing
 * each one to its SVG and PNG files (see rctx.h). */
#include "rctx.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "afile.h"
#include "canvas.h"
#include "chart.h"
#include "cli.h"
#include "fmt.h"
#include "fontm.h"
#include "log.h"
#include "model.h"
#include "pdfdoc.h"
#include "style.h"
#include "table.h"
#include "tmpl.h"


/* --- figures --------------------------------------------------------------- */

/* Whether the analysis has the breakdowns of analyze's levels.c (an older
 * one lacks them). */
int rfig_any_failures(const rmodel *m)
{
    for (int i = 0; i < m->n_sets; i++)
        if (m->sets[i].has_failures)
            return 1;
    return 0;
}

int rfig_any_sweep(const rmodel *m)
{
    for (int i = 0; i < m->n_sets; i++)
        if (m->sets[i].n_sweep > 0)
            return 1;
    return 0;
}

int rfig_any_levels(const rmodel *m)
{
    for (int i = 0; i < m->n_sets; i++)
        if (m->sets[i].n_levels > 0)
            return 1;
    return 0;
}

/* The run's tolerance (atol of the manifest's config), NaN when unknown. */
static double run_tolerance(const rctx *r)
{
    const cJSON *v = r->m->run_config ? cJSON_GetObjectItemCaseSensitive(r->m->run_config, "atol") : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}


/* Rows [*r0, *r1) of set si's shown problems that part k of its forest draws. */
void rfig_forest_part(const rctx *r, int si, int k, int *r0, int *r1)
{
    int per = r->forest_rows[si], n = r->m->sets[si].n_shown;
    *r0 = k * per < n ? k * per : n;
    *r1 = *r0 + per < n ? *r0 + per : n;
}

int rfig_forest_parts(const rctx *r, int si)
{
    int per = r->forest_rows[si], n = r->m->sets[si].n_shown;
    return n <= per ? 1 : (n + per - 1) / per;
}

/* How many rows each part of a set's forest gets: as many as fit on a page
 * with the set's heading and a caption of a few lines, spread evenly over
 * the parts, so that no part is a stub of a few rows and every part, in
 * the PDF and as a figure file, is one page with its own caption. */
int rfig_forest_plan(rctx *r, kbv_err *e)
{
    r->forest_rows = calloc((size_t)(r->m->n_sets ? r->m->n_sets : 1), sizeof *r->forest_rows);
    if (!r->forest_rows)
        return err_set(e, KBV_ENOMEM, "out of memory");
    double inner = r->st.page_h - 2 * r->st.margin - 14;
    double avail = inner - r->st.fs_large * 2.8 - 6 * r->st.fs_small * 1.3 - 8 - 6;
    double row = chart_forest_height(&r->cx, 1) - chart_forest_height(&r->cx, 0);
    int fit = (int)floor((avail - chart_forest_height(&r->cx, 0)) / row);
    if (fit < 4)
        fit = 4;
    for (int i = 0; i < r->m->n_sets; i++) {
        int n = r->m->sets[i].n_shown, parts = n <= fit ? 1 : (n + fit - 1) / fit;
        r->forest_rows[i] = parts == 1 ? (n > 0 ? n : 1) : (n + parts - 1) / parts;
    }
    return 0;
}

double rfig_height(const rctx *r, fig_kind k, int arg)
{
    switch (k) {
    case FIG_INFLATION: return chart_inflation_height(&r->cx);
    case FIG_FAST_P: return chart_fast_p_height(&r->cx);
    case FIG_FOREST: {
        int r0, r1;
        rfig_forest_part(r, FOREST_SET(arg), FOREST_PART(arg), &r0, &r1);
        return chart_forest_height(&r->cx, r1 - r0);
    }
    case FIG_SCATTER: return chart_scatter_height(&r->cx);
    case FIG_CLASSES: return chart_classes_height(&r->cx);
    case FIG_LEVELS: return chart_levels_height(&r->cx);
    case FIG_FAILURES: return chart_failures_height(&r->cx);
    case FIG_TOLERANCE: return chart_tolerance_height(&r->cx);
    case FIG_BF16_FAST_P: return chart_fast_p_height(&r->cxb);
    case FIG_BF16_COMPARE: return chart_bf16_height(&r->cxb);
    }
    return 0;
}

void rfig_draw(const rctx *r, canvas *c, fig_kind k, int arg, double w)
{
    switch (k) {
    case FIG_INFLATION: chart_inflation(c, &r->cx, w); break;
    case FIG_FAST_P: chart_fast_p(c, &r->cx, arg, w); break;
    case FIG_FOREST: {
        int r0, r1;
        rfig_forest_part(r, FOREST_SET(arg), FOREST_PART(arg), &r0, &r1);
        chart_forest(c, &r->cx, FOREST_SET(arg), r0, r1, w);
        break;
    }
    case FIG_SCATTER: chart_scatter(c, &r->cx, w); break;
    case FIG_CLASSES: chart_classes(c, &r->cx, w); break;
    case FIG_LEVELS: chart_levels_fast_p(c, &r->cx, arg, w); break;
    case FIG_FAILURES: chart_failures(c, &r->cx, w); break;
    case FIG_TOLERANCE: chart_tolerance(c, &r->cx, run_tolerance(r), w); break;
    case FIG_BF16_FAST_P: chart_fast_p(c, &r->cxb, RM_BF16, w); break;
    case FIG_BF16_COMPARE: chart_bf16_compare(c, &r->cxb, r->m, arg, w); break;
    }
}

/* Draws one figure as SVG and as PNG into figures/<name>.svg|png, with a
 * margin of 6 points around the chart. */
static int figure_files(rctx *r, const char *name, fig_kind k, int arg, kbv_err *e)
{
    const double pad = 6;
    double w = r->st.fig_w, h = rfig_height(r, k, arg);
    for (int kind = CANVAS_SVG; kind <= CANVAS_PNG; kind++) {
        canvas *c = NULL;
        unsigned char *data = NULL;
        size_t len = 0;
        int rc = canvas_cairo_new(&c, kind, w + 2 * pad, h + 2 * pad, r->st.png_scale, r->fm, e);
        if (rc)
            return rc;
        canvas_translate(c, pad, pad);
        rfig_draw(r, c, k, arg, w);
        rc = canvas_cairo_finish(c, &data, &len, e);
        canvas_destroy(c);
        if (rc)
            return rc;
        char rel[512];
        snprintf(rel, sizeof rel, "figures/%s.%s", name, kind == CANVAS_SVG ? "svg" : "png");
        rc = rep_write_file(r, rel, data, len, e);
        free(data);
        if (rc)
            return rc;
    }
    r->stats.figures++;
    return 0;
}

/* File stems for per-set figures: the set's name with characters outside
 * [A-Za-z0-9._-] replaced, made unique by a suffix. */
static int stems(const rm_set *sets, int n_sets, const char *prefix, char ***out, kbv_err *e)
{
    char **names = calloc((size_t)(n_sets ? n_sets : 1), sizeof *names);
    *out = names;
    if (!names)
        return err_set(e, KBV_ENOMEM, "out of memory");
    for (int i = 0; i < n_sets; i++) {
        const char *n = sets[i].name;
        size_t len = strlen(n), k = strlen(prefix);
        char *s = malloc(len + k + 32);
        if (!s)
            return err_set(e, KBV_ENOMEM, "out of memory");
        memcpy(s, prefix, k);
        for (size_t j = 0; j < len && j < 80; j++) {
            char ch = n[j];
            int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                     ch == '_' || ch == '-';
            s[k++] = ok ? ch : '_';
        }
        s[k] = 0;
        for (int j = 0; j < i; j++)
            if (strcmp(names[j], s) == 0) {
                snprintf(s + k, 32, "_%d", i + 1);
                break;
            }
        names[i] = s;
    }
    return 0;
}

int rfig_names(rctx *r, kbv_err *e)
{
    int rc = stems(r->m->sets, r->m->n_sets, "forest_", &r->fig_names, e);
    return rc ? rc : stems(r->m->bsets, r->m->n_bsets, "bf16_vs_fp32_", &r->bf_names, e);
}

int rfig_all(rctx *r, kbv_err *e)
{
    int rc;
    if ((rc = figure_files(r, "inflation", FIG_INFLATION, 0, e)) ||
        (rc = figure_files(r, "fast_p_fp32", FIG_FAST_P, RM_FP32, e)) ||
        (rc = figure_files(r, "fast_p_tf32", FIG_FAST_P, RM_TF32, e)) ||
        (rc = figure_files(r, "scatter", FIG_SCATTER, 0, e)) ||
        (rc = figure_files(r, "classes", FIG_CLASSES, 0, e)) ||
        (rc = figure_files(r, "levels_fast_p_fp32", FIG_LEVELS, RM_FP32, e)) ||
        (rc = figure_files(r, "levels_fast_p_tf32", FIG_LEVELS, RM_TF32, e)))
        return rc;
    /* Figures of what an older analysis lacks are not drawn. */
    if (rfig_any_failures(r->m) && (rc = figure_files(r, "failures", FIG_FAILURES, 0, e)))
        return rc;
    if (rfig_any_sweep(r->m) && (rc = figure_files(r, "tolerance", FIG_TOLERANCE, 0, e)))
        return rc;
    /* The BF16 setting, when the run has BF16 sets: their fast_p, and each
     * one's comparison with the FP32 set it mirrors. */
    if (r->m->n_bsets > 0 && (rc = figure_files(r, "fast_p_bf16", FIG_BF16_FAST_P, 0, e)))
        return rc;
    for (int j = 0; j < r->m->n_bsets; j++)
        if (r->m->bsets[j].cmp >= 0 && (rc = figure_files(r, r->bf_names[j], FIG_BF16_COMPARE, j, e)))
            return rc;
    for (int i = 0; i < r->m->n_sets; i++) {
        int parts = rfig_forest_parts(r, i);
        for (int k = 0; k < parts; k++) {
            /* One file a part, each the size of a page: forest_<set> when
             * the set fits one page, else forest_<set>_part<k>. */
            char name[160];
            if (parts == 1)
                snprintf(name, sizeof name, "%s", r->fig_names[i]);
            else
                snprintf(name, sizeof name, "%s_part%d", r->fig_names[i], k + 1);
            if ((rc = figure_files(r, name, FIG_FOREST, FOREST_ARG(i, k), e)))
                return rc;
        }
    }
    return 0;
}

