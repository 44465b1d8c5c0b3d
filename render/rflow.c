/* rflow.c - the report's PDF: pages that flow text, figures and tables,
 * and each section of the template in order (see rctx.h). */
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


/* --- the PDF flow ---------------------------------------------------------- */

typedef struct flow {
    rctx *r;
    pdfdoc *d;
    canvas *c;
    int page;
    double y, x0, w, top, bottom;
} flow;

static int flow_page(flow *f, kbv_err *e)
{
    int p = pdfdoc_add_page(f->d, &f->c, e);
    if (p < 0)
        return p;
    f->page = p;
    f->y = f->top;
    return 0;
}

/* Starts a new page unless h more points fit on this one. */
static int flow_need(flow *f, double h, kbv_err *e)
{
    if (f->y + h <= f->bottom || f->y <= f->top + 0.01)
        return 0;
    return flow_page(f, e);
}

static int flow_text(flow *f, const char *text, double size, int bold, canvas_rgba col, double gap, kbv_err *e)
{
    char *lines[200];
    int n = chart_wrap(f->c->fm, text, size, bold, f->w, lines, 200);
    int rc = 0;
    double lh = size * 1.3;
    for (int i = 0; i < n; i++) {
        if (rc == 0)
            rc = flow_need(f, lh, e);
        if (rc == 0) {
            canvas_color(f->c, col);
            canvas_text(f->c, f->x0, f->y + size, lines[i], size, bold, CANVAS_LEFT, 0);
            f->y += lh;
        }
        free(lines[i]);
    }
    f->y += gap;
    return rc;
}

static double text_height(flow *f, const char *text, double size, int bold)
{
    char *lines[200];
    int n = chart_wrap(f->c->fm, text, size, bold, f->w, lines, 200);
    for (int i = 0; i < n; i++)
        free(lines[i]);
    return n * size * 1.3;
}

static int flow_heading(flow *f, const char *title, int parent, double keep, int *mark, kbv_err *e)
{
    const rstyle *st = &f->r->st;
    int rc = flow_need(f, st->fs_large * 2.2 + keep, e);
    if (rc)
        return rc;
    if (f->y > f->top + 0.01)
        f->y += st->fs_large * 0.6;
    int m = pdfdoc_bookmark(f->d, parent, title, f->page, f->y > 10 ? f->y - 10 : 0, e);
    if (m < 0)
        return m;
    if (mark)
        *mark = m;
    canvas_color(f->c, st->text);
    canvas_text(f->c, f->x0, f->y + st->fs_large, title, parent < 0 ? st->fs_large : st->fs_normal, 1, CANVAS_LEFT, 0);
    f->y += (parent < 0 ? st->fs_large : st->fs_normal) * 1.8;
    return 0;
}

static int flow_caption(flow *f, const char *where, const char *text, const tvars *v, kbv_err *e)
{
    if (!text)
        return 0;
    char *s = NULL;
    int rc = rep_expand(f->r, where, text, v, &s, e);
    if (rc)
        return rc;
    rc = flow_text(f, s, f->r->st.fs_small, 0, f->r->st.text, 8, e);
    free(s);
    return rc;
}

static double caption_height(flow *f, const char *text, const tvars *v)
{
    char *s = NULL;
    kbv_err e;
    if (!text || rep_expand(f->r, "caption", text, v, &s, &e))
        return 0;
    double h = text_height(f, s, f->r->st.fs_small, 0) + 8;
    free(s);
    return h;
}

static int flow_figure(flow *f, fig_kind k, int arg, const char *caption, const tvars *v, kbv_err *e)
{
    double h = rfig_height(f->r, k, arg);
    int rc = flow_need(f, h + caption_height(f, caption, v) + 6, e);
    if (rc)
        return rc;
    canvas_save(f->c);
    canvas_translate(f->c, f->x0 + (f->w - f->r->st.fig_w) / 2, f->y);
    rfig_draw(f->r, f->c, k, arg, f->r->st.fig_w);
    canvas_restore(f->c);
    f->y += h + 6;
    return flow_caption(f, "caption", caption, v, e);
}

static int flow_table(flow *f, const tbl *t, const char *caption, const tvars *v, kbv_err *e)
{
    int rc, r0 = 0;
    double need = tbl_first_row_height(t, f->c, &f->r->st, f->w, 0) + caption_height(f, caption, v);
    if ((rc = flow_need(f, need, e)))
        return rc;
    if ((rc = flow_caption(f, "caption", caption, v, e)))
        return rc;
    while (1) {
        int next;
        double used;
        tbl_draw(t, f->c, &f->r->st, f->x0, f->y, f->w, r0, f->bottom - f->y, &next, &used);
        f->y += used + 8;
        if (next >= t->nrow)
            break;
        r0 = next;
        if ((rc = flow_page(f, e)))
            return rc;
        if ((rc = flow_text(f, f->r->labels[LBL_CONTINUED], f->r->st.fs_small, 0, f->r->st.muted, 2, e)))
            return rc;
    }
    return 0;
}

/* --- sections -------------------------------------------------------------- */

static int sec_summary(flow *f, kbv_err *e)
{
    const rmodel *m = f->r->m;
    const rstyle *st = &f->r->st;
    char dev[512], drv[256], clk[256], cal[256], harn[256], cfg[512], stat[256], b1[64], b2[64], b3[64];
    char trials[32];
    const cJSON *d = m->device;
    double mem = NAN, sms = NAN;
    const cJSON *v = d ? cJSON_GetObjectItemCaseSensitive(d, "memory_bytes") : NULL;
    if (cJSON_IsNumber(v))
        mem = v->valuedouble;
    v = d ? cJSON_GetObjectItemCaseSensitive(d, "sm_count") : NULL;
    if (cJSON_IsNumber(v))
        sms = v->valuedouble;
    snprintf(dev, sizeof dev, "%s, compute capability %s, %s SMs, %s GiB", rep_jstr(d, "name", "unknown"),
             rep_jtext(d, "compute_capability", b1, sizeof b1, "?"), isnan(sms) ? "?" : (snprintf(b2, sizeof b2, "%.0f", sms), b2),
             isnan(mem) ? "?" : (snprintf(b3, sizeof b3, "%.0f", mem / 1073741824.0), b3));
    snprintf(drv, sizeof drv, "driver %s, CUDA runtime %s, cuBLAS %s", rep_jtext(d, "driver", b1, sizeof b1, "unknown"),
             rep_jtext(d, "cuda_runtime", b2, sizeof b2, "unknown"), rep_jtext(d, "cublas", b3, sizeof b3, "unknown"));
    /* Clocks: every device field that names a clock, as collect recorded it. */
    size_t k = 0;
    clk[0] = 0;
    const cJSON *it;
    if (d)
        cJSON_ArrayForEach(it, d) {
            if (!it->string || (!strstr(it->string, "clock") && !strstr(it->string, "mhz")))
                continue;
            char val[64];
            const char *t = cJSON_IsNumber(it) ? (snprintf(val, sizeof val, "%.15g", it->valuedouble), val)
                            : cJSON_IsString(it) ? it->valuestring : NULL;
            if (!t)
                continue;
            /* "sm_max_mhz" reads as "SM max 1980 MHz". */
            char name[64];
            size_t nl = 0;
            for (const char *q = it->string; *q && nl + 1 < sizeof name; q++) {
                if (strcmp(q, "_mhz") == 0)
                    break;
                name[nl++] = *q == '_' ? ' ' : *q;
            }
            name[nl] = 0;
            if (strncmp(name, "sm ", 3) == 0)
                name[0] = 'S', name[1] = 'M';
            int mhz = strstr(it->string, "mhz") != NULL;
            int w = snprintf(clk + k, sizeof clk - k, "%s%s %s%s", k ? ", " : "", name, t, mhz ? " MHz" : "");
            if (w < 0 || (size_t)w >= sizeof clk - k)
                break;
            k += (size_t)w;
        }
    if (!k)
        snprintf(clk, sizeof clk, "not recorded in the manifest");
    /* Measured rates at the precision a measurement has: whole GB/s, one
     * decimal of TFLOP/s. */
    const cJSON *bw = d ? cJSON_GetObjectItemCaseSensitive(d, "copy_bandwidth_gbps") : NULL;
    const cJSON *f32 = d ? cJSON_GetObjectItemCaseSensitive(d, "fp32_tflops") : NULL;
    const cJSON *t32 = d ? cJSON_GetObjectItemCaseSensitive(d, "tf32_tflops") : NULL;
    if (cJSON_IsNumber(bw)) snprintf(b1, sizeof b1, "%.0f", bw->valuedouble);
    else rep_jtext(d, "copy_bandwidth_gbps", b1, sizeof b1, "?");
    if (cJSON_IsNumber(f32)) snprintf(b2, sizeof b2, "%.1f", f32->valuedouble);
    else rep_jtext(d, "fp32_tflops", b2, sizeof b2, "?");
    if (cJSON_IsNumber(t32)) snprintf(b3, sizeof b3, "%.1f", t32->valuedouble);
    else rep_jtext(d, "tf32_tflops", b3, sizeof b3, "?");
    snprintf(cal, sizeof cal, "copy %s GB/s, fp32 %s TFLOP/s, tf32 %s TFLOP/s", b1, b2, b3);
    snprintf(harn, sizeof harn, "kbv %s, commit %s", rep_jstr(m->harness, "version", "unknown"),
             rep_jstr(m->harness, "git_commit", "unknown"));
    const cJSON *rc_ = m->run_config;
    char dists[160] = "";
    const cJSON *dl = rc_ ? cJSON_GetObjectItemCaseSensitive(rc_, "distributions") : NULL;
    if (cJSON_IsArray(dl)) {
        size_t q = 0;
        cJSON_ArrayForEach(it, dl) if (cJSON_IsString(it) && q + 8 < sizeof dists) {
            int w = snprintf(dists + q, sizeof dists - q, "%s%s", q ? " " : "", it->valuestring);
            if (w > 0)
                q += (size_t)w;
        }
    }
    snprintf(cfg, sizeof cfg, "seed %s; atol %s, rtol %s; %s trials per distribution; distributions %s",
             rep_jtext(rc_, "seed", b1, sizeof b1, m->seed >= 0 ? "?" : "unknown"), rep_jtext(rc_, "atol", b2, sizeof b2, "?"),
             rep_jtext(rc_, "rtol", b3, sizeof b3, "?"),
             rep_jtext(rc_, "correct_trials", trials, sizeof trials, "?"),
             *dists ? dists : "?");
    snprintf(stat, sizeof stat, "%g%% confidence intervals, %ld bootstrap resamples", m->ci_level * 100, m->resamples);
    const char *keys[] = {"Run", "Collected", "Device", "Software", "Clocks", "Calibration", "Harness", "Settings",
                          "Statistics"};
    char run[256];
    if (m->n_unfinished > 0)
        snprintf(run, sizeof run, "%s (%d sets, %ld problems; incomplete: %ld of %ld pairs not collected)", m->run_id,
                 m->n_sets + m->n_bsets, m->n_problems, m->n_unfinished, m->n_pairs);
    else
        snprintf(run, sizeof run, "%s (%d sets, %ld problems)", m->run_id, m->n_sets + m->n_bsets, m->n_problems);
    const char *vals[] = {run, f->r->date_str, dev, drv, clk, cal, harn, cfg, stat};
    double kw = 0;
    for (int i = 0; i < 9; i++) {
        double w = canvas_text_width(f->c, keys[i], st->fs_small, 1);
        if (w > kw)
            kw = w;
    }
    kw += 10;
    for (int i = 0; i < 9; i++) {
        char *lines[8];
        int n = chart_wrap(f->c->fm, vals[i], st->fs_small, 0, f->w - kw, lines, 8);
        int rc = flow_need(f, n * st->fs_small * 1.35, e);
        if (rc) {
            for (int j = 0; j < n; j++)
                free(lines[j]);
            return rc;
        }
        canvas_color(f->c, st->text);
        canvas_text(f->c, f->x0, f->y + st->fs_small, keys[i], st->fs_small, 1, CANVAS_LEFT, 0);
        for (int j = 0; j < n; j++) {
            canvas_text(f->c, f->x0 + kw, f->y + st->fs_small, lines[j], st->fs_small, 0, CANVAS_LEFT, 0);
            f->y += st->fs_small * 1.35;
            free(lines[j]);
        }
    }
    f->y += 6;
    return 0;
}

static int verdict(rctx *r, const rm_set *s, char **out, kbv_err *e)
{
    tvars v = r->gv;
    rep_set_vars(&v, s);
    const rm_est *g[RM_NB] = {&s->b[RM_FP32].gm_correct, &s->b[RM_TF32].gm_correct};
    if (!g[0]->ok && !g[1]->ok)
        return rep_expand(r, "verdict.no_correct", r->t.verdict_none, &v, out, e);
    const char *verb[RM_NB];
    int side[RM_NB];
    for (int b = 0; b < RM_NB; b++) {
        /* Above: the whole interval over 1; below: the whole interval under 1. */
        side[b] = !g[b]->ok ? 0 : g[b]->lo > 1 ? 1 : g[b]->hi < 1 ? -1 : 0;
        verb[b] = side[b] > 0 ? r->t.verdict_above : side[b] < 0 ? r->t.verdict_below : r->t.verdict_overlap;
        char a[64], c[96];
        const char *nm = rmodel_baseline_name(b);
        char key[32];
        tvars_set(&v, nm, "%s", fmt_ratio(a, sizeof a, g[b]));
        snprintf(key, sizeof key, "%s_ci", nm);
        tvars_set(&v, key, "%s", fmt_range(c, sizeof c, g[b]));
        snprintf(key, sizeof key, "%s_verdict", nm);
        tvars_set(&v, key, "%s", verb[b]);
    }
    tvars_set(&v, "joiner", "%s", side[0] == side[1] ? r->t.verdict_same : r->t.verdict_differ);
    return rep_expand(r, "verdict.sentence", r->t.verdict_sentence, &v, out, e);
}

static int flow_intro(flow *f, const tsection *s, kbv_err *e)
{
    if (!s->intro)
        return 0;
    char *t = NULL;
    int rc = rep_expand(f->r, "intro", s->intro, NULL, &t, e);
    if (rc)
        return rc;
    rc = flow_text(f, t, f->r->st.fs_normal, 0, f->r->st.text, 6, e);
    free(t);
    return rc;
}

/* How much of a section must fit under its heading on the same page: the
 * introduction and the first block under it (a figure, a table's caption
 * and first rows), so that a heading never ends a page. */
static double section_keep(flow *f, const tsection *s, const tbl *tabs, int n_findings)
{
    rctx *r = f->r;
    const rmodel *m = r->m;
    /* A heading stays with its introduction and the first block under it. */
    double keep = 60;
    switch (s->id) {
    case SEC_INFLATION: keep = tbl_first_row_height(&tabs[1], f->c, &r->st, f->w, 0) + 20; break;
    case SEC_FAST_P: keep = chart_fast_p_height(&r->cx) + 30; break;
    case SEC_FOREST:
        keep = 140;
        if (m->n_sets > 0) {
            int r0, r1;
            rfig_forest_part(r, 0, 0, &r0, &r1);
            keep = chart_forest_height(&r->cx, r1 - r0) + 60;
        }
        break;
    case SEC_PROBLEMS: keep = 150; break;
    case SEC_SCATTER: keep = chart_scatter_height(&r->cx) + 30; break;
    case SEC_CLASSES: keep = chart_classes_height(&r->cx) + 30; break;
    case SEC_HACKS: keep = n_findings ? tbl_first_row_height(&tabs[3], f->c, &r->st, f->w, 0) + 20 : 30; break;
    case SEC_PARITY: keep = tabs[4].nrow ? tbl_first_row_height(&tabs[4], f->c, &r->st, f->w, 0) + 20 : 30; break;
    case SEC_DRIFT: keep = tabs[5].nrow ? tbl_first_row_height(&tabs[5], f->c, &r->st, f->w, 0) + 20 : 30; break;
    case SEC_LEVELS:
        /* The heading stays with the table's caption and first rows. */
        keep = tabs[6].nrow ? caption_height(f, s->caption, NULL) + 2 * tbl_first_row_height(&tabs[6], f->c, &r->st, f->w, 0)
                            : 30;
        break;
    case SEC_FAILURES: keep = rfig_any_failures(m) ? chart_failures_height(&r->cx) + 30 : 30; break;
    case SEC_TOLERANCE: keep = rfig_any_sweep(m) ? chart_tolerance_height(&r->cx) + 30 : 30; break;
    case SEC_BF16: keep = caption_height(f, s->caption, NULL) + 2 * tbl_first_row_height(&tabs[9], f->c, &r->st, f->w, 0); break;
    default: break;
    }
    if (s->intro) {
        char *it = NULL;
        kbv_err e;
        if (rep_expand(r, "intro", s->intro, NULL, &it, &e) == 0)
            keep += text_height(f, it, r->st.fs_normal, 0) + 6;
        free(it);
    }
    return keep;
}

/* The headline section: the answer first, one sentence a set; then the
 * numbers behind it. */
static int sec_headline(flow *f, const tsection *s, const tbl *tabs, kbv_err *e)
{
    rctx *r = f->r;
    const rmodel *m = r->m;
    int rc;
    /* An interrupted collect's report is not an answer: said before the
     * verdicts, which count its unfinished pairs as errors. */
    if (m->n_unfinished > 0) {
        char line[400];
        snprintf(line, sizeof line, "\xe2\x80\xa2 This run is incomplete: %ld of its %ld (set, problem) pairs were "
                 "not collected (collect was interrupted) and count as errors below; continue it with "
                 "kbv collect --resume and analyze it again before drawing any conclusion.", m->n_unfinished, m->n_pairs);
        if ((rc = flow_text(f, line, r->st.fs_normal, 0, r->st.text, 3, e)))
            return rc;
    }
    for (int i = 0; i < m->n_sets; i++) {
        char *t = NULL, *b = NULL;
        if ((rc = verdict(r, &m->sets[i], &t, e)))
            return rc;
        b = malloc(strlen(t) + 8);
        if (b)
            sprintf(b, "\xe2\x80\xa2 %s", t);
        rc = b ? flow_text(f, b, r->st.fs_normal, 0, r->st.text, 3, e) : err_set(e, KBV_ENOMEM, "out of memory");
        free(t);
        free(b);
        if (rc)
            return rc;
    }
    /* Pairs without a candidate file, one line a set: they are neither
     * errors nor findings, and no chart or per-problem table shows them. */
    for (int i = 0; i < m->n_sets; i++) {
        long nm = m->sets[i].group_counts[RM_G_MISSING];
        if (nm == 0)
            continue;
        char line[400];
        snprintf(line, sizeof line, "\xe2\x80\xa2 %s: %ld problem%s without a candidate (not counted as errors; "
                 "left out of the findings, the forests and the per-problem tables; fast_p still counts them "
                 "among all %ld problems).", m->sets[i].name, nm, nm == 1 ? "" : "s", m->sets[i].n_problems);
        if ((rc = flow_text(f, line, r->st.fs_normal, 0, r->st.text, 3, e)))
            return rc;
    }
    f->y += 4;
    return flow_table(f, &tabs[0], s->caption, NULL, e);
}

/* The forest section: every set's forest plot, in parts of a page each,
 * under the set's heading (mark: the section's bookmark). */
static int sec_forest(flow *f, const tsection *s, int mark, kbv_err *e)
{
    rctx *r = f->r;
    const rmodel *m = r->m;
    tvars v = r->gv;
    int rc;
    for (int i = 0; i < m->n_sets; i++) {
        const rm_set *st = &m->sets[i];
        rep_set_vars(&v, st);
        int parts = rfig_forest_parts(r, i);
        for (int k = 0; k < parts; k++) {
            int r0, r1;
            rfig_forest_part(r, i, k, &r0, &r1);
            tvars_set(&v, "part", "%d", k + 1);
            tvars_set(&v, "parts", "%d", parts);
            /* "part 2 of 3, " where a set needs several pages. */
            if (parts > 1)
                tvars_set(&v, "part_note", "part %d of %d, ", k + 1, parts);
            else
                tvars_set(&v, "part_note", "%s", "");
            tvars_set(&v, "first", "%d", r0 + 1);
            tvars_set(&v, "last", "%d", r1);
            double ch = caption_height(f, s->caption, &v);
            double h = chart_forest_height(&r->cx, r1 - r0);
            /* The set's heading stays with its first part; every part
             * carries its own caption, so that a page read alone says
             * what it shows. */
            if (k == 0 && (rc = flow_heading(f, st->name, mark, h + ch + 6, NULL, e)))
                return rc;
            if ((rc = flow_figure(f, FIG_FOREST, FOREST_ARG(i, k), s->caption, &v, e)))
                return rc;
        }
    }
    return 0;
}

/* The BF16 setting: the BF16 sets against their bf16 baseline beside the
 * FP32 sets they mirror, their fast_p, and one comparison per BF16 set
 * (tabs[9]: headline_bf16). */
static int sec_bf16(flow *f, const tsection *s, const tbl *tabs, kbv_err *e)
{
    rctx *r = f->r;
    const rmodel *m = r->m;
    int rc;
    /* The answer first, one sentence a BF16 set, in the verdict's words. */
    for (int j = 0; j < m->n_bsets; j++) {
        const rm_set *b = &m->bsets[j];
        const rm_est *g = &b->b[RM_BF16].gm_correct;
        char line[800], a[64], c[96], fpart[300] = "";
        if (b->cmp >= 0) {
            const rm_est *fg = &m->sets[b->cmp].b[RM_FP32].gm_correct;
            if (fg->ok)
                snprintf(fpart, sizeof fpart, "; %s against strict fp32: %s, CI %s", m->sets[b->cmp].name,
                         fmt_ratio(a, sizeof a, fg), fmt_ci(c, sizeof c, fg));
            else
                snprintf(fpart, sizeof fpart, "; %s has no correct problem against strict fp32",
                         m->sets[b->cmp].name);
        }
        if (!g->ok)
            snprintf(line, sizeof line, "\xe2\x80\xa2 %s has no correct problem among its %ld in the BF16 setting%s.",
                     b->name, b->n_problems, fpart);
        else
            snprintf(line, sizeof line, "\xe2\x80\xa2 %s %s bf16 (%s, %g%% CI %s) over its %ld of %ld problems that are "
                     "correct%s.", b->name,
                     g->lo > 1 ? r->t.verdict_above : g->hi < 1 ? r->t.verdict_below : r->t.verdict_overlap,
                     fmt_ratio(a, sizeof a, g), m->ci_level * 100, fmt_ci(c, sizeof c, g),
                     b->group_counts[RM_G_CORRECT], b->n_problems, fpart);
        if ((rc = flow_text(f, line, r->st.fs_normal, 0, r->st.text, 3, e)))
            return rc;
    }
    f->y += 4;
    if ((rc = flow_table(f, &tabs[9], s->caption, NULL, e)) ||
        (rc = flow_figure(f, FIG_BF16_FAST_P, 0, s->figure_caption, NULL, e)))
        return rc;
    for (int j = 0; j < m->n_bsets; j++) {
        const rm_set *b = &m->bsets[j];
        if (b->cmp >= 0) {
            tvars v = r->gv;
            rbf16_vars(r, j, &v);
            if ((rc = flow_figure(f, FIG_BF16_COMPARE, j, s->compare_caption, &v, e)))
                return rc;
            continue;
        }
        /* Said, not drawn: a run of the BF16 sets alone has no FP32 numbers
         * to set beside them. */
        char line[400];
        if (b->compare_with)
            snprintf(line, sizeof line, "%s mirrors the FP32 set %s, which this run did not time: no comparison.",
                     b->name, b->compare_with);
        else
            snprintf(line, sizeof line, "%s names no FP32 set that it mirrors (set.json compare_with): no comparison.",
                     b->name);
        if ((rc = flow_text(f, line, r->st.fs_normal, 0, r->st.muted, 6, e)))
            return rc;
    }
    return 0;
}

/* The methods section: each term with its text. */
static int sec_methods(flow *f, const tsection *s, kbv_err *e)
{
    rctx *r = f->r;
    int rc;
    for (int k = 0; k < s->n_items; k++) {
        char *term = NULL, *text = NULL;
        if ((rc = rep_expand(r, "items.term", s->items[k].term, NULL, &term, e)) == 0 &&
            (rc = rep_expand(r, "items.text", s->items[k].text, NULL, &text, e)) == 0) {
            /* A term stays with the first lines of its text. */
            rc = flow_need(f, r->st.fs_normal * 1.3 * 3, e);
            if (rc == 0)
                rc = flow_text(f, term, r->st.fs_normal, 1, r->st.text, 1, e);
            if (rc == 0)
                rc = flow_text(f, text, r->st.fs_normal, 0, r->st.text, 5, e);
        }
        free(term);
        free(text);
        if (rc)
            return rc;
    }
    return 0;
}

static int section(flow *f, const tsection *s, const tbl *tabs, int n_findings, kbv_err *e)
{
    rctx *r = f->r;
    const rmodel *m = r->m;
    int rc, mark;
    char *title = NULL;
    /* The BF16 section belongs to runs with BF16 sets: a run without any
     * renders as it did before the setting existed. */
    if (s->id == SEC_BF16 && m->n_bsets == 0)
        return 0;
    if ((rc = rep_expand(r, "title", s->title, NULL, &title, e)))
        return rc;
    double keep = section_keep(f, s, tabs, n_findings);
    rc = flow_heading(f, title, -1, keep, &mark, e);
    free(title);
    if (rc || (rc = flow_intro(f, s, e)))
        return rc;
    tvars v = r->gv;
    switch (s->id) {
    case SEC_SUMMARY:
        return sec_summary(f, e);
    case SEC_HEADLINE:
        return sec_headline(f, s, tabs, e);
    case SEC_INFLATION: {
        int any = 0;
        for (int i = 0; i < m->n_sets; i++)
            any |= m->sets[i].n_infl > 0;
        if (!any)
            return flow_text(f, "analysis.json has no inflation steps.", r->st.fs_normal, 0, r->st.muted, 6, e);
    }
        if ((rc = flow_table(f, &tabs[1], s->caption, NULL, e)))
            return rc;
        return flow_figure(f, FIG_INFLATION, 0, s->figure_caption, NULL, e);
    case SEC_FAST_P:
        for (int b = 0; b < RM_NB; b++) {
            tvars_set(&v, "baseline", "%s", rmodel_baseline_name(b));
            tvars_set(&v, "baseline_desc", "%s", b == 0 ? "strict fp32" : "tf32");
            if ((rc = flow_figure(f, FIG_FAST_P, b, s->figure_caption, &v, e)))
                return rc;
        }
        return flow_table(f, &tabs[2], s->caption, NULL, e);
    case SEC_FOREST:
        return sec_forest(f, s, mark, e);
    case SEC_SCATTER:
        tvars_set(&v, "n_points", "%d", chart_scatter_points(&r->cx));
        return flow_figure(f, FIG_SCATTER, 0, s->caption, &v, e);
    case SEC_CLASSES:
        return flow_figure(f, FIG_CLASSES, 0, s->caption, NULL, e);
    case SEC_HACKS:
        tvars_set(&v, "n_findings", "%d", n_findings);
        if (n_findings == 0)
            return s->empty ? flow_caption(f, "empty", s->empty, &v, e) : 0;
        return flow_table(f, &tabs[3], s->caption, &v, e);
    case SEC_PROBLEMS:
        for (int i = 0; i < m->n_sets; i++) {
            rep_set_vars(&v, &m->sets[i]);
            tbl t;
            if ((rc = rtab_problems(r, i, &t, e)))
                return rc;
            rc = flow_heading(f, m->sets[i].name, mark,
                              caption_height(f, s->caption, &v) + tbl_first_row_height(&t, f->c, &r->st, f->w, 0), NULL, e);
            if (rc == 0)
                rc = flow_table(f, &t, s->caption, &v, e);
            tbl_free(&t);
            if (rc)
                return rc;
        }
        return 0;
    case SEC_PARITY:
        if (!m->has_parity)
            return s->missing ? flow_caption(f, "missing", s->missing, &v, e) : 0;
        if (tabs[4].nrow == 0)
            return s->empty ? flow_caption(f, "empty", s->empty, &v, e) : 0;
        return flow_table(f, &tabs[4], s->caption, &v, e);
    case SEC_DRIFT:
        if (!m->has_drift)
            return s->missing ? flow_caption(f, "missing", s->missing, &v, e) : 0;
        if (tabs[5].nrow == 0)
            return s->empty ? flow_caption(f, "empty", s->empty, &v, e) : 0;
        return flow_table(f, &tabs[5], s->caption, &v, e);
    case SEC_LEVELS:
        if (!rfig_any_levels(m) && s->missing && (rc = flow_caption(f, "missing", s->missing, &v, e)))
            return rc;
        if (rfig_any_levels(m) && (rc = flow_table(f, &tabs[6], s->caption, &v, e)))
            return rc;
        for (int b = 0; b < RM_NB; b++) {
            tvars_set(&v, "baseline", "%s", rmodel_baseline_name(b));
            tvars_set(&v, "baseline_desc", "%s", b == 0 ? "strict fp32" : "tf32");
            if ((rc = flow_figure(f, FIG_LEVELS, b, s->figure_caption, &v, e)))
                return rc;
        }
        return 0;
    case SEC_FAILURES:
        if (!rfig_any_failures(m))
            return s->missing ? flow_caption(f, "missing", s->missing, &v, e) : 0;
        /* The figure prints every count ("2 of 24"); the table goes to
         * failures.csv and .tex only. */
        return flow_figure(f, FIG_FAILURES, 0, s->figure_caption, &v, e);
    case SEC_TOLERANCE:
        if (!rfig_any_sweep(m))
            return s->missing ? flow_caption(f, "missing", s->missing, &v, e) : 0;
        if ((rc = flow_figure(f, FIG_TOLERANCE, 0, s->figure_caption, &v, e)))
            return rc;
        return flow_table(f, &tabs[8], s->caption, &v, e);
    case SEC_METHODS:
        return sec_methods(f, s, e);
    case SEC_BF16:
        return sec_bf16(f, s, tabs, e);
    case SEC_N:
        break;
    }
    return 0;
}

int rflow_pdf(rctx *r, const tbl *tabs, int n_findings, kbv_err *e)
{
    pdfdoc *d = NULL;
    char *title = NULL, *sub = NULL;
    unsigned char *data = NULL;
    size_t len = 0;
    int rc;
    if ((rc = rep_expand(r, "title", r->t.title, NULL, &title, e)) ||
        (rc = rep_expand(r, "subtitle", r->t.subtitle, NULL, &sub, e)))
        goto done;
    if ((rc = pdfdoc_new(&d, r->fm, r->st.page_w, r->st.page_h, &r->date, title, "kbv-render " KBV_VERSION, e)))
        goto done;
    flow f = {r, d, NULL, 0, 0, r->st.margin, r->st.page_w - 2 * r->st.margin, r->st.margin,
              r->st.page_h - r->st.margin - 14};
    if ((rc = flow_page(&f, e)))
        goto done;
    if ((rc = flow_text(&f, title, r->st.fs_large, 1, r->st.text, 2, e)) ||
        (rc = flow_text(&f, sub, r->st.fs_normal, 0, r->st.muted, 10, e)))
        goto done;
    for (int i = 0; i < r->t.n_sections; i++)
        if ((rc = section(&f, &r->t.sections[i], tabs, n_findings, e)))
            goto done;
    int pages = pdfdoc_page_count(d);
    for (int p = 0; p < pages; p++) {
        tvars v = r->gv;
        tvars_set(&v, "page", "%d", p + 1);
        tvars_set(&v, "pages", "%d", pages);
        char *foot = NULL;
        if ((rc = rep_expand(r, "labels.page", r->t.labels[LBL_PAGE], &v, &foot, e)))
            goto done;
        canvas *c = pdfdoc_canvas(d, p);
        canvas_color(c, r->st.muted);
        canvas_text(c, r->st.page_w / 2, r->st.page_h - r->st.margin / 2, foot, r->st.fs_small, 0,
                    CANVAS_CENTER | CANVAS_BASELINE, 0);
        free(foot);
    }
    if ((rc = pdfdoc_save(d, &data, &len, e)))
        goto done;
    rc = rep_write_file(r, "report.pdf", data, len, e);
    r->stats.pages = pages;
done:
    free(data);
    free(title);
    free(sub);
    pdfdoc_free(d);
    return rc;
}

