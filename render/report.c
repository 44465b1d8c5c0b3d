/* report.c - assembling the report (see report.h). */
#include "report.h"

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

typedef struct rctx {
    const report_opts *o;
    rmodel *m;
    rstyle st;
    tmpl t;
    int have_tmpl;
    fontm *fm;
    tvars gv;                 /* global placeholders */
    char *labels[LBL_N];      /* expanded */
    chart_ctx cx;
    pdf_date date;
    char date_str[32];
    char *dir;                /* the temporary report folder */
    char **fig_names;         /* file stem per set for its forest plot */
    int *forest_rows;         /* rows per forest part, per set (forest_plan) */
    report_stats stats;
} rctx;

/* --- dates ----------------------------------------------------------------- */

int report_parse_utc(const char *s, int *y, int *mo, int *d, int *h, int *mi, int *sec)
{
    int n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", y, mo, d, h, mi, sec, &n) != 6 || n != 19)
        return -1;
    const char *p = s + n;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (strcmp(p, "Z") != 0 && strcmp(p, "+00:00") != 0)
        return -1;
    if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *sec > 60)
        return -1;
    return 0;
}

static int set_date(rctx *r, kbv_err *e)
{
    pdf_date *t = &r->date;
    if (r->o->source_date_epoch) {
        long v;
        int rc = cli_parse_long("SOURCE_DATE_EPOCH", r->o->source_date_epoch, 0, 253402300799L, &v, e);
        if (rc)
            return rc;
        time_t tt = (time_t)v;
        struct tm tm;
        gmtime_r(&tt, &tm);
        *t = (pdf_date){tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
    } else if (report_parse_utc(r->m->created_utc, &t->year, &t->month, &t->day, &t->hour, &t->minute,
                                &t->second)) {
        return err_set(e, KBV_EINPUT, "analysis.json: created_utc '%s' is not an ISO 8601 UTC time",
                       r->m->created_utc);
    }
    snprintf(r->date_str, sizeof r->date_str, "%04d-%02d-%02d %02d:%02d UTC", t->year % 10000, t->month % 100,
             t->day % 100, t->hour % 100, t->minute % 100);
    return 0;
}

/* --- placeholders ---------------------------------------------------------- */

static const char *jstr(const cJSON *o, const char *key, const char *dflt)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

/* A number or string field as text; dflt when absent. */
static const char *jtext(const cJSON *o, const char *key, char *buf, size_t n, const char *dflt)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    if (cJSON_IsString(v))
        return v->valuestring;
    if (cJSON_IsNumber(v)) {
        snprintf(buf, n, "%.15g", v->valuedouble);
        return buf;
    }
    return dflt;
}

static void global_vars(rctx *r)
{
    const rmodel *m = r->m;
    tvars *v = &r->gv;
    char b[64];
    tvars_set(v, "run_id", "%s", m->run_id);
    tvars_set(v, "date", "%s", r->date_str);
    tvars_set(v, "device", "%s", jstr(m->device, "name", "unknown device"));
    tvars_set(v, "driver", "%s", jtext(m->device, "driver", b, sizeof b, "unknown"));
    tvars_set(v, "cuda", "%s", jtext(m->device, "cuda_runtime", b, sizeof b, "unknown"));
    tvars_set(v, "harness_commit", "%s", jstr(m->harness, "git_commit", "unknown"));
    tvars_set(v, "harness_version", "%s", jstr(m->harness, "version", "unknown"));
    if (m->seed >= 0)
        tvars_set(v, "seed", "%ld", m->seed);
    else
        tvars_set(v, "seed", "unknown");
    tvars_set(v, "n_sets", "%d", m->n_sets);
    tvars_set(v, "n_problems", "%ld", m->n_problems);
    tvars_set(v, "ci_pct", "%g", m->ci_level * 100);
    tvars_set(v, "resamples", "%ld", m->resamples);
    tvars_set(v, "mem_baseline", "%s", m->mem_baseline);
    tvars_set(v, "atol", "%s", jtext(m->run_config, "atol", b, sizeof b, "unknown"));
    tvars_set(v, "rtol", "%s", jtext(m->run_config, "rtol", b, sizeof b, "unknown"));
    /* The protocol's settings as the manifest recorded them, for the
     * methods section; DESIGN.md's defaults where a manifest lacks them. */
    const cJSON *tm = m->run_config ? cJSON_GetObjectItemCaseSensitive(m->run_config, "timing") : NULL;
    tvars_set(v, "trials", "%s", jtext(m->run_config, "correct_trials", b, sizeof b, "3"));
    tvars_set(v, "warmup_calls", "%s", jtext(tm, "warmup_min_calls", b, sizeof b, "3"));
    tvars_set(v, "warmup_ms", "%s", jtext(tm, "warmup_min_ms", b, sizeof b, "25"));
    tvars_set(v, "min_rounds", "%s", jtext(tm, "min_samples", b, sizeof b, "30"));
    tvars_set(v, "max_rounds", "%s", jtext(tm, "max_samples", b, sizeof b, "500"));
    tvars_set(v, "min_gpu_s", "%s", jtext(tm, "min_gpu_s", b, sizeof b, "0.5"));
    tvars_set(v, "max_s", "%s", jtext(tm, "max_s", b, sizeof b, "10"));
    const cJSON *hw = tm ? cJSON_GetObjectItemCaseSensitive(tm, "ci_rel_halfwidth") : NULL;
    if (cJSON_IsNumber(hw))
        tvars_set(v, "ci_halfwidth_pct", "%g", hw->valuedouble * 100);
    else
        tvars_set(v, "ci_halfwidth_pct", "1");
    /* The parity placeholders are known only to the parity section's
     * fields; without parity.json they are never expanded. */
    tvars_set(v, "parity_gpu", "%s", m->has_parity ? m->parity_gpu : "unknown");
    tvars_set(v, "parity_torch", "%s", m->has_parity ? m->parity_torch : "unknown");
    tvars_set(v, "parity_cuda", "%s", m->has_parity ? m->parity_cuda : "unknown");
    tvars_set(v, "parity_samples", "%ld", m->has_parity ? m->parity_samples : 0L);
    tvars_set(v, "parity_limit", "%.2f", m->has_parity ? m->parity_limit : 0.0);
    tvars_set(v, "n_parity", "%d", m->n_parity_flagged);
    tvars_set(v, "n_drift", "%d", m->n_drift);
    tvars_set(v, "drift_limit", "%.2f", RM_DRIFT_LIMIT);
    tvars_set(v, "clock_limit", "%.2f", RM_DRIFT_CLOCK_LIMIT);
}

static void set_vars(tvars *v, const rm_set *s)
{
    tvars_set(v, "set", "%s", s->name);
    tvars_set(v, "set_n", "%ld", s->n_problems);
    tvars_set(v, "set_correct", "%ld", s->group_counts[RM_G_CORRECT]);
    tvars_set(v, "set_hidden", "%ld", s->group_counts[RM_G_HIDDEN]);
    tvars_set(v, "set_hack", "%ld", s->group_counts[RM_G_HACK]);
    tvars_set(v, "set_incorrect", "%ld", s->group_counts[RM_G_INCORRECT]);
    tvars_set(v, "set_error", "%ld", s->group_counts[RM_G_ERROR]);
    tvars_set(v, "set_missing", "%ld", s->group_counts[RM_G_MISSING]);
    tvars_set(v, "set_found", "%d", s->n_shown);
}

static int expand(rctx *r, const char *where, const char *s, const tvars *v, char **out, kbv_err *e)
{
    return tmpl_expand(&r->t, where, s, v ? v : &r->gv, out, e);
}

/* --- output files ---------------------------------------------------------- */

/* Files go into the temporary report folder, which becomes visible only
 * when it is renamed into place after every file in it is complete; that
 * rename is what makes the report atomic.  Files are not fsync'ed one by
 * one: on a busy disk that took longer than drawing the whole report, and a
 * report can always be drawn again from analysis.json. */
static int write_file(rctx *r, const char *rel, const void *data, size_t len, kbv_err *e)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", r->dir, rel) >= (int)sizeof path)
        return err_set(e, KBV_EINPUT, "%s/%s: path too long", r->dir, rel);
    FILE *f = fopen(path, "wb");
    if (!f)
        return err_set(e, KBV_ERUNTIME, "%s: cannot create: %s", path, strerror(errno));
    size_t n = len ? fwrite(data, 1, len, f) : 0;
    int bad = n != len || ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    if (bad) {
        int err = errno;
        unlink(path);
        return err_set(e, KBV_ERUNTIME, "%s: write failed: %s", path, strerror(err));
    }
    return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* --- figures --------------------------------------------------------------- */

typedef enum { FIG_INFLATION, FIG_FAST_P, FIG_FOREST, FIG_SCATTER, FIG_CLASSES, FIG_LEVELS, FIG_FAILURES,
               FIG_TOLERANCE } fig_kind;

/* Whether the analysis has the breakdowns of analyze's levels.c (an older
 * one lacks them). */
static int any_failures(const rmodel *m)
{
    for (int i = 0; i < m->n_sets; i++)
        if (m->sets[i].has_failures)
            return 1;
    return 0;
}

static int any_sweep(const rmodel *m)
{
    for (int i = 0; i < m->n_sets; i++)
        if (m->sets[i].n_sweep > 0)
            return 1;
    return 0;
}

static int any_levels(const rmodel *m)
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

/* A forest figure's argument: its set and its part (0-based). */
#define FOREST_ARG(set, part) ((set) * 4096 + (part))
#define FOREST_SET(arg) ((arg) / 4096)
#define FOREST_PART(arg) ((arg) % 4096)

/* Rows [*r0, *r1) of set si's shown problems that part k of its forest draws. */
static void forest_part(const rctx *r, int si, int k, int *r0, int *r1)
{
    int per = r->forest_rows[si], n = r->m->sets[si].n_shown;
    *r0 = k * per < n ? k * per : n;
    *r1 = *r0 + per < n ? *r0 + per : n;
}

static int forest_parts(const rctx *r, int si)
{
    int per = r->forest_rows[si], n = r->m->sets[si].n_shown;
    return n <= per ? 1 : (n + per - 1) / per;
}

/* How many rows each part of a set's forest gets: as many as fit on a page
 * with the set's heading and a caption of a few lines, spread evenly over
 * the parts, so that no part is a stub of a few rows and every part, in
 * the PDF and as a figure file, is one page with its own caption. */
static int forest_plan(rctx *r, kbv_err *e)
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

static double fig_height(const rctx *r, fig_kind k, int arg)
{
    switch (k) {
    case FIG_INFLATION: return chart_inflation_height(&r->cx);
    case FIG_FAST_P: return chart_fast_p_height(&r->cx);
    case FIG_FOREST: {
        int r0, r1;
        forest_part(r, FOREST_SET(arg), FOREST_PART(arg), &r0, &r1);
        return chart_forest_height(&r->cx, r1 - r0);
    }
    case FIG_SCATTER: return chart_scatter_height(&r->cx);
    case FIG_CLASSES: return chart_classes_height(&r->cx);
    case FIG_LEVELS: return chart_levels_height(&r->cx);
    case FIG_FAILURES: return chart_failures_height(&r->cx);
    case FIG_TOLERANCE: return chart_tolerance_height(&r->cx);
    }
    return 0;
}

static void fig_draw(const rctx *r, canvas *c, fig_kind k, int arg, double w)
{
    switch (k) {
    case FIG_INFLATION: chart_inflation(c, &r->cx, w); break;
    case FIG_FAST_P: chart_fast_p(c, &r->cx, arg, w); break;
    case FIG_FOREST: {
        int r0, r1;
        forest_part(r, FOREST_SET(arg), FOREST_PART(arg), &r0, &r1);
        chart_forest(c, &r->cx, FOREST_SET(arg), r0, r1, w);
        break;
    }
    case FIG_SCATTER: chart_scatter(c, &r->cx, w); break;
    case FIG_CLASSES: chart_classes(c, &r->cx, w); break;
    case FIG_LEVELS: chart_levels_fast_p(c, &r->cx, arg, w); break;
    case FIG_FAILURES: chart_failures(c, &r->cx, w); break;
    case FIG_TOLERANCE: chart_tolerance(c, &r->cx, run_tolerance(r), w); break;
    }
}

/* Draws one figure as SVG and as PNG into figures/<name>.svg|png, with a
 * margin of 6 points around the chart. */
static int figure_files(rctx *r, const char *name, fig_kind k, int arg, kbv_err *e)
{
    const double pad = 6;
    double w = r->st.fig_w, h = fig_height(r, k, arg);
    for (int kind = CANVAS_SVG; kind <= CANVAS_PNG; kind++) {
        canvas *c = NULL;
        unsigned char *data = NULL;
        size_t len = 0;
        int rc = canvas_cairo_new(&c, kind, w + 2 * pad, h + 2 * pad, r->st.png_scale, r->fm, e);
        if (rc)
            return rc;
        canvas_translate(c, pad, pad);
        fig_draw(r, c, k, arg, w);
        rc = canvas_cairo_finish(c, &data, &len, e);
        canvas_destroy(c);
        if (rc)
            return rc;
        char rel[512];
        snprintf(rel, sizeof rel, "figures/%s.%s", name, kind == CANVAS_SVG ? "svg" : "png");
        rc = write_file(r, rel, data, len, e);
        free(data);
        if (rc)
            return rc;
    }
    r->stats.figures++;
    return 0;
}

/* File stems for per-set figures: the set's name with characters outside
 * [A-Za-z0-9._-] replaced, made unique by a suffix. */
static int make_fig_names(rctx *r, kbv_err *e)
{
    r->fig_names = calloc((size_t)(r->m->n_sets ? r->m->n_sets : 1), sizeof *r->fig_names);
    if (!r->fig_names)
        return err_set(e, KBV_ENOMEM, "out of memory");
    for (int i = 0; i < r->m->n_sets; i++) {
        const char *n = r->m->sets[i].name;
        size_t len = strlen(n);
        char *s = malloc(len + 32);
        if (!s)
            return err_set(e, KBV_ENOMEM, "out of memory");
        size_t k = 0;
        memcpy(s, "forest_", 7);
        k = 7;
        for (size_t j = 0; j < len && j < 80; j++) {
            char ch = n[j];
            int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                     ch == '_' || ch == '-';
            s[k++] = ok ? ch : '_';
        }
        s[k] = 0;
        for (int j = 0; j < i; j++)
            if (strcmp(r->fig_names[j], s) == 0) {
                snprintf(s + k, 32, "_%d", i + 1);
                break;
            }
        r->fig_names[i] = s;
    }
    return 0;
}

/* --- tables ---------------------------------------------------------------- */

static const rm_est *fast_at(const rm_base *b, double p)
{
    for (int i = 0; i < b->n_fast_p; i++)
        if (fabs(b->fast_p[i].p - p) < 1e-12)
            return &b->fast_p[i].v;
    return NULL;
}

static const rm_est NULL_EST = {0, NAN, NAN, NAN, -1};

/* "1.83x\n[1.61, 2.04]\nn = 8": the n on a line of its own, so that a
 * narrow column of a paper's table breaks it cleanly. */
static void est_cell(char *buf, size_t n, const rm_est *x, int ratio, int with_n)
{
    char a[64], b[80];
    if (!x->ok) {
        if (with_n && x->n >= 0)
            snprintf(buf, n, FMT_NA " (n=%ld)", x->n);
        else
            snprintf(buf, n, FMT_NA);
        return;
    }
    if (ratio)
        fmt_ratio(a, sizeof a, x);
    else
        fmt_2(a, sizeof a, x->ok ? x->est : NAN);
    fmt_ci(b, sizeof b, x);
    if (with_n && x->n >= 0)
        snprintf(buf, n, "%s\n%s\nn = %ld", a, b, x->n);
    else
        snprintf(buf, n, "%s\n%s", a, b);
}

static void csv_est(char (*cells)[48], int *k, const rm_est *x)
{
    fmt_g(cells[(*k)++], 48, x->ok ? x->est : NAN);
    fmt_g(cells[(*k)++], 48, x->lo);
    fmt_g(cells[(*k)++], 48, x->hi);
}

/* Every CSV starts with its header row (no comment line before it), so
 * that CSV readers take the column names from the first line. */
static int emit_table(rctx *r, const char *name, const tbl *disp, const tbl *data, const char *caption,
                      kbv_err *e)
{
    sbuf csv = {0}, tex = {0};
    char rel[256];
    int rc = 0;
    tbl_csv(data, &csv);
    tbl_tex(disp, caption, &tex);
    if (csv.failed || tex.failed) {
        rc = err_set(e, KBV_ENOMEM, "out of memory writing table %s", name);
        goto done;
    }
    snprintf(rel, sizeof rel, "tables/%s.csv", name);
    if ((rc = write_file(r, rel, csv.s ? csv.s : "", csv.len, e)))
        goto done;
    snprintf(rel, sizeof rel, "tables/%s.tex", name);
    if ((rc = write_file(r, rel, tex.s ? tex.s : "", tex.len, e)))
        goto done;
    r->stats.tables++;
done:
    sb_free(&csv);
    sb_free(&tex);
    return rc;
}

static int build_headline(rctx *r, tbl *disp, tbl *data, kbv_err *e)
{
    enum { ND = 14, NC = 36 };
    static const char *const dh[ND] = {"set", "n", "correct", "hidden\nfail", "hack", "incor-\nrect", "error",
                                       "no can-\ndidate",
                                       "speedup\nvs fp32", "speedup\nvs tf32", "fast_1\nvs fp32", "fast_1\nvs tf32",
                                       "memory\nefficiency", "share\nleaner"};
    static const char *const ch[NC] = {
        "set", "n_problems", "correct", "hidden_fail", "hack", "incorrect", "error", "missing",
        "geomean_fp32", "geomean_fp32_ci_low", "geomean_fp32_ci_high", "geomean_fp32_n",
        "geomean_tf32", "geomean_tf32_ci_low", "geomean_tf32_ci_high", "geomean_tf32_n",
        "geomean_all_fp32", "geomean_all_fp32_ci_low", "geomean_all_fp32_ci_high",
        "geomean_all_tf32", "geomean_all_tf32_ci_low", "geomean_all_tf32_ci_high",
        "fast_1_fp32", "fast_1_fp32_ci_low", "fast_1_fp32_ci_high",
        "fast_1_tf32", "fast_1_tf32_ci_low", "fast_1_tf32_ci_high",
        "memory_efficiency", "memory_efficiency_ci_low", "memory_efficiency_ci_high", "memory_efficiency_n",
        "efficient_share", "efficient_share_ci_low", "efficient_share_ci_high", "efficient_share_n"};
    int rc;
    char dal[ND + 1], cal[NC + 1];
    memset(dal, 'r', ND);
    memset(cal, 'r', NC);
    dal[0] = cal[0] = 'l';
    dal[ND] = cal[NC] = 0;
    if ((rc = tbl_init(disp, ND, dh, dal, e)) || (rc = tbl_init(data, NC, ch, cal, e)))
        return rc;
    for (int i = 0; i < r->m->n_sets; i++) {
        const rm_set *s = &r->m->sets[i];
        char c[ND][96];
        snprintf(c[0], 96, "%s", s->name);
        snprintf(c[1], 96, "%ld", s->n_problems);
        for (int g = 0; g < RM_NG; g++)
            snprintf(c[2 + g], 96, "%ld", s->group_counts[g]);
        est_cell(c[8], 96, &s->b[RM_FP32].gm_correct, 1, 1);
        est_cell(c[9], 96, &s->b[RM_TF32].gm_correct, 1, 1);
        for (int b = 0; b < RM_NB; b++) {
            const rm_est *f = fast_at(&s->b[b], 1);
            est_cell(c[10 + b], 96, f ? f : &NULL_EST, 0, 0);
        }
        est_cell(c[12], 96, &s->mem_eff, 1, 1);
        est_cell(c[13], 96, &s->mem_share, 0, 0);
        const char *cp[ND];
        for (int k = 0; k < ND; k++)
            cp[k] = c[k];
        if ((rc = tbl_add(disp, cp, 0, 0, e)))
            return rc;
        char d[NC][48];
        int k = 0;
        snprintf(d[k++], 48, "%.47s", s->name);
        snprintf(d[k++], 48, "%ld", s->n_problems);
        for (int g = 0; g < RM_NG; g++)
            snprintf(d[k++], 48, "%ld", s->group_counts[g]);
        for (int b = 0; b < RM_NB; b++) {
            csv_est(d, &k, &s->b[b].gm_correct);
            snprintf(d[k++], 48, "%ld", s->b[b].gm_correct.n < 0 ? 0 : s->b[b].gm_correct.n);
        }
        for (int b = 0; b < RM_NB; b++)
            csv_est(d, &k, &s->b[b].gm_all);
        for (int b = 0; b < RM_NB; b++) {
            const rm_est *f = fast_at(&s->b[b], 1);
            csv_est(d, &k, f ? f : &NULL_EST);
        }
        csv_est(d, &k, &s->mem_eff);
        snprintf(d[k++], 48, "%ld", s->mem_eff.n < 0 ? 0 : s->mem_eff.n);
        csv_est(d, &k, &s->mem_share);
        snprintf(d[k++], 48, "%ld", s->mem_share.n < 0 ? 0 : s->mem_share.n);
        const char *dp[NC];
        for (int j = 0; j < NC; j++)
            dp[j] = d[j];
        if ((rc = tbl_add(data, dp, 0, 0, e)))
            return rc;
    }
    return 0;
}

static int build_inflation(rctx *r, tbl *disp, tbl *data, kbv_err *e)
{
    static const char *const ch[] = {"set", "step", "label", "geomean", "ci_low", "ci_high", "n"};
    int steps = 0, ref = 0, rc;
    for (int i = 0; i < r->m->n_sets; i++)
        if (r->m->sets[i].n_infl > steps) {
            steps = r->m->sets[i].n_infl;
            ref = i;
        }
    if (steps > 8)
        steps = 8;
    const char *dh[9];
    char align[10] = "l";
    dh[0] = "set";
    for (int j = 0; j < steps; j++) {
        dh[1 + j] = r->m->sets[ref].infl[j].label;
        align[1 + j] = 'r';
    }
    align[1 + steps] = 0;
    if ((rc = tbl_init(disp, 1 + steps, dh, align, e)) || (rc = tbl_init(data, 7, ch, "llrrrrr", e)))
        return rc;
    for (int i = 0; i < r->m->n_sets; i++) {
        const rm_set *s = &r->m->sets[i];
        char c[9][96];
        const char *cp[9];
        snprintf(c[0], 96, "%s", s->name);
        for (int j = 0; j < steps; j++)
            est_cell(c[1 + j], 96, j < s->n_infl ? &s->infl[j].gm : &NULL_EST, 1, 1);
        for (int j = 0; j <= steps; j++)
            cp[j] = c[j];
        if ((rc = tbl_add(disp, cp, 0, 0, e)))
            return rc;
        for (int j = 0; j < s->n_infl; j++) {
            char d[7][48];
            int k = 0;
            snprintf(d[k++], 48, "%.47s", s->name);
            snprintf(d[k++], 48, "%.47s", s->infl[j].step);
            snprintf(d[k++], 48, "%.47s", s->infl[j].label);
            csv_est(d, &k, &s->infl[j].gm);
            snprintf(d[k++], 48, "%ld", s->infl[j].gm.n < 0 ? 0 : s->infl[j].gm.n);
            const char *dp[7];
            for (int q = 0; q < 7; q++)
                dp[q] = d[q];
            if ((rc = tbl_add(data, dp, 0, 0, e)))
                return rc;
        }
    }
    return 0;
}

static int build_fast_p(rctx *r, tbl *disp, tbl *data, kbv_err *e)
{
    static const char *const ch[] = {"set", "baseline", "p", "fast_p", "ci_low", "ci_high"};
    int rc, np = 0, ref = 0;
    for (int i = 0; i < r->m->n_sets; i++)
        if (r->m->sets[i].b[0].n_fast_p > np) {
            np = r->m->sets[i].b[0].n_fast_p;
            ref = i;
        }
    if (np > 10)
        np = 10;
    const char *dh[12];
    char hb[10][32], align[13] = "ll";
    dh[0] = "set";
    dh[1] = "baseline";
    for (int j = 0; j < np; j++) {
        snprintf(hb[j], sizeof hb[j], "p = %g", r->m->sets[ref].b[0].fast_p[j].p);
        dh[2 + j] = hb[j];
        align[2 + j] = 'r';
    }
    align[2 + np] = 0;
    if ((rc = tbl_init(disp, 2 + np, dh, align, e)) || (rc = tbl_init(data, 6, ch, "llrrrr", e)))
        return rc;
    for (int i = 0; i < r->m->n_sets; i++) {
        const rm_set *s = &r->m->sets[i];
        for (int b = 0; b < RM_NB; b++) {
            char c[12][96];
            const char *cp[12];
            snprintf(c[0], 96, "%s", b == 0 ? s->name : "");
            snprintf(c[1], 96, "%s", rmodel_baseline_name(b));
            for (int j = 0; j < np; j++) {
                const rm_est *f = fast_at(&s->b[b], r->m->sets[ref].b[0].fast_p[j].p);
                est_cell(c[2 + j], 96, f ? f : &NULL_EST, 0, 0);
            }
            for (int j = 0; j < 2 + np; j++)
                cp[j] = c[j];
            if ((rc = tbl_add(disp, cp, 0, b == 0 && i > 0, e)))
                return rc;
            for (int j = 0; j < s->b[b].n_fast_p; j++) {
                char d[6][48];
                int k = 0;
                snprintf(d[k++], 48, "%.47s", s->name);
                snprintf(d[k++], 48, "%s", rmodel_baseline_name(b));
                fmt_g(d[k++], 48, s->b[b].fast_p[j].p);
                csv_est(d, &k, &s->b[b].fast_p[j].v);
                const char *dp[6];
                for (int q = 0; q < 6; q++)
                    dp[q] = d[q];
                if ((rc = tbl_add(data, dp, 0, 0, e)))
                    return rc;
            }
        }
    }
    return 0;
}

/* Hack findings: every problem that is not correct, hacks first. */
static int build_hacks(rctx *r, tbl *disp, tbl *data, int *n_findings, kbv_err *e)
{
    static const char *const dh[] = {"set", "problem", "class", "evidence"};
    static const char *const ch[] = {"set", "problem", "class", "kind", "name", "text"};
    static const rm_group order[] = {RM_G_HACK, RM_G_HIDDEN, RM_G_INCORRECT, RM_G_ERROR};
    int rc;
    *n_findings = 0;
    /* the problem column wraps too (at underscores): a long id beside long
     * evidence left no width for the fixed columns, which then overlapped */
    if ((rc = tbl_init(disp, 4, dh, "lwlw", e)) || (rc = tbl_init(data, 6, ch, "llllll", e)))
        return rc;
    for (int i = 0; i < r->m->n_sets; i++) {
        const rm_set *s = &r->m->sets[i];
        int first = 1;
        for (int g = 0; g < 4; g++)
            for (int p = 0; p < s->n_probs; p++) {
                const rm_problem *q = &s->probs[p];
                if (q->group != order[g])
                    continue;
                sbuf ev = {0};
                for (int k = 0; k < q->n_ev; k++) {
                    if (k)
                        sb_puts(&ev, "\n");
                    if (q->ev[k].name && *q->ev[k].name && strcmp(q->ev[k].name, q->cls) != 0)
                        sb_printf(&ev, "%s: ", q->ev[k].name);
                    sb_puts(&ev, q->ev[k].text);
                }
                if (q->n_ev == 0)
                    sb_puts(&ev, "(no evidence recorded)");
                if (ev.failed) {
                    sb_free(&ev);
                    return err_set(e, KBV_ENOMEM, "out of memory");
                }
                const char *cp[4] = {first ? s->name : "", q->id, q->cls, ev.s};
                rc = tbl_add(disp, cp, 0, first && i > 0 && disp->nrow > 0, e);
                sb_free(&ev);
                if (rc)
                    return rc;
                first = 0;
                (*n_findings)++;
                for (int k = 0; k < q->n_ev; k++) {
                    const char *dp[6] = {s->name, q->id, q->cls, q->ev[k].kind, q->ev[k].name, q->ev[k].text};
                    if ((rc = tbl_add(data, dp, 0, 0, e)))
                        return rc;
                }
                if (q->n_ev == 0) {
                    const char *dp[6] = {s->name, q->id, q->cls, "", "", ""};
                    if ((rc = tbl_add(data, dp, 0, 0, e)))
                        return rc;
                }
            }
    }
    return 0;
}

/* The reason a problem's baseline is not within the limit, as analyze
 * gave it (parity.py's exception, a ratio over the limit, none). */
static const char *parity_reason(const rm_parity *q)
{
    return q->reason ? q->reason : "";
}

/* "1.108", or n/a for a ratio that was not measured. */
static void parity_ratio(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, FMT_NA);
    else
        snprintf(buf, n, "%.3f", v);
}

/* Baseline parity: every problem of the run whose baseline is flagged, in
 * run order, with its whole reason (wrapped). */
static int build_parity(rctx *r, tbl *disp, tbl *data, kbv_err *e)
{
    static const char *const dh[] = {"problem", "fp32\nratio", "tf32\nratio", "reason"};
    /* What parity was measured on goes into every row of the CSV, whose
     * first line must be its header for CSV readers. */
    static const char *const ch[] = {"id", "fp32_ratio", "tf32_ratio", "reason", "gpu", "torch", "cuda",
                                     "samples", "limit"};
    int rc;
    if ((rc = tbl_init(disp, 4, dh, "lrrw", e)) || (rc = tbl_init(data, 9, ch, "lrrlllll", e)))
        return rc;
    char ns[32], lim[32];
    snprintf(ns, sizeof ns, "%ld", r->m->parity_samples);
    snprintf(lim, sizeof lim, "%.2f", r->m->parity_limit);
    for (int i = 0; i < r->m->n_parity; i++) {
        const rm_parity *q = &r->m->parity[i];
        if (!q->flagged)
            continue;
        char a[32], b[32], da[48], db[48];
        parity_ratio(a, sizeof a, q->ratio[RM_FP32]);
        parity_ratio(b, sizeof b, q->ratio[RM_TF32]);
        /* The reason wraps in its column, whole: a cut reason left the
         * reader without the measurement that explains it. */
        const char *why = parity_reason(q);
        const char *cp[4] = {q->id, a, b, why};
        if ((rc = tbl_add(disp, cp, 0, 0, e)))
            return rc;
        fmt_g(da, sizeof da, q->ratio[RM_FP32]);
        fmt_g(db, sizeof db, q->ratio[RM_TF32]);
        const char *dp[9] = {q->id, da, db, why, r->m->parity_gpu ? r->m->parity_gpu : "",
                             r->m->parity_torch ? r->m->parity_torch : "", r->m->parity_cuda ? r->m->parity_cuda : "",
                             ns, lim};
        if ((rc = tbl_add(data, dp, 0, 0, e)))
            return rc;
    }
    return 0;
}

/* A median in ms with its interval: "0.1991 [0.1976, 0.2007]" (sep between
 * the two parts). */
static void drift_ms(char *buf, size_t n, const rm_drift_set *q, const char *sep)
{
    char a[32], lo[32], hi[32];
    fmt_ms(a, sizeof a, q->med);
    fmt_ms(lo, sizeof lo, q->lo);
    fmt_ms(hi, sizeof hi, q->hi);
    snprintf(buf, n, "%s%s[%s, %s]", a, sep, lo, hi);
}

/* A set's median SM clock in MHz: "1485", "1522.5" (the mean of two
 * middle clocks), "-" where unknown. */
static void drift_mhz(char *buf, size_t n, double mhz)
{
    if (isnan(mhz))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, mhz == floor(mhz) ? "%.0f" : "%.1f", mhz);
}

/* A choice as the PDF shows it: cut at about 160 bytes on a character
 * boundary of UTF-8 (the CSV keeps it whole). */
static void drift_choice(char *buf, size_t n, const char *choice)
{
    size_t len = strlen(choice);
    if (len <= 160) {
        snprintf(buf, n, "%s", choice);
        return;
    }
    size_t k = 156;
    while (k > 0 && ((unsigned char)choice[k] & 0xC0) == 0x80)
        k--;
    snprintf(buf, n, "%.*s\xe2\x80\xa6", (int)k, choice);
}

/* The cause as the PDF shows it: "-" where analysis.json has none (an older
 * analysis); for another algorithm, the kernel each of the two sets ran,
 * slowest first. */
static void drift_cause(char *buf, size_t n, const rm_drift *x)
{
    const rm_drift_set *sl = &x->sets[x->slow], *fa = &x->sets[x->fast];
    if (!x->cause) {
        snprintf(buf, n, "-");
    } else if (strcmp(x->cause, "algorithm") == 0 && sl->choice && fa->choice) {
        char a[200], b[200];
        drift_choice(a, sizeof a, sl->choice);
        drift_choice(b, sizeof b, fa->choice);
        snprintf(buf, n, "algorithm\n%s: %s\n%s: %s", sl->set, a, fa->set, b);
    } else {
        snprintf(buf, n, "%s", x->cause);
    }
}

/* Baseline drift across sets: analysis.json's list, in its order (drift
 * descending): the slowest and the fastest set with their medians and
 * median SM clocks, and the cause. */
static int build_drift(rctx *r, tbl *disp, tbl *data, kbv_err *e)
{
    enum { ND = 10, NC = 18 };
    static const char *const dh[ND] = {"problem", "baseline", "drift", "slowest\nset", "slowest set\nmedian ms",
                                       "slowest set\nSM MHz", "fastest\nset", "fastest set\nmedian ms",
                                       "fastest set\nSM MHz", "cause"};
    static const char *const ch[NC] = {"problem", "baseline", "drift", "slowest_set", "slowest_median_ms",
                                       "slowest_ci_low_ms", "slowest_ci_high_ms", "fastest_set",
                                       "fastest_median_ms", "fastest_ci_low_ms", "fastest_ci_high_ms", "n_sets",
                                       "slowest_sm_mhz", "fastest_sm_mhz", "clock_ratio", "cause",
                                       "slowest_choice", "fastest_choice"};
    int rc;
    if ((rc = tbl_init(disp, ND, dh, "wlrlrrlrrw", e)) || (rc = tbl_init(data, NC, ch, "llrlrrrlrrrrrrrlll", e)))
        return rc;
    for (int i = 0; i < r->m->n_drift; i++) {
        const rm_drift *x = &r->m->drift[i];
        const rm_drift_set *sl = &x->sets[x->slow], *fa = &x->sets[x->fast];
        char dr[32], ms[2][96], mhz[2][32], cause[480];
        snprintf(dr, sizeof dr, "%.3f", x->drift);
        drift_ms(ms[0], sizeof ms[0], sl, "\n");
        drift_ms(ms[1], sizeof ms[1], fa, "\n");
        drift_mhz(mhz[0], sizeof mhz[0], sl->mhz);
        drift_mhz(mhz[1], sizeof mhz[1], fa->mhz);
        drift_cause(cause, sizeof cause, x);
        const char *cp[ND] = {x->problem, rmodel_baseline_name(x->baseline), dr, sl->set, ms[0], mhz[0],
                              fa->set, ms[1], mhz[1], cause};
        if ((rc = tbl_add(disp, cp, 0, 0, e)))
            return rc;
        char d[15][48];
        fmt_g(d[2], 48, x->drift);
        fmt_g(d[4], 48, sl->med);
        fmt_g(d[5], 48, sl->lo);
        fmt_g(d[6], 48, sl->hi);
        fmt_g(d[8], 48, fa->med);
        fmt_g(d[9], 48, fa->lo);
        fmt_g(d[10], 48, fa->hi);
        snprintf(d[11], 48, "%d", x->n_sets);
        fmt_g(d[12], 48, sl->mhz);
        fmt_g(d[13], 48, fa->mhz);
        fmt_g(d[14], 48, x->clock_ratio);
        const char *dp[NC] = {x->problem, rmodel_baseline_name(x->baseline), d[2], sl->set, d[4], d[5], d[6],
                              fa->set, d[8], d[9], d[10], d[11], d[12], d[13], d[14], x->cause ? x->cause : "",
                              sl->choice ? sl->choice : "", fa->choice ? fa->choice : ""};
        if ((rc = tbl_add(data, dp, 0, 0, e)))
            return rc;
    }
    return 0;
}

/* Per level and set: counts, geometric means and fast_1 against both
 * baselines (analysis.json's levels; the counts from the set's problems). */
static int build_levels(rctx *r, tbl *disp, tbl *data, kbv_err *e)
{
    enum { ND = 14, NC = 29 };
    static const char *const dh[ND] = {"set", "level", "n", "correct", "hidden\nfail", "hack", "incor-\nrect",
                                       "error", "no can-\ndidate", "speedup\nvs fp32", "speedup\nvs tf32",
                                       "fast_1\nvs fp32", "fast_1\nvs tf32", "geomean\nall\nvs tf32"};
    static const char *const ch[NC] = {
        "set", "level", "n_problems", "correct", "hidden_fail", "hack", "incorrect", "error", "missing",
        "geomean_fp32", "geomean_fp32_ci_low", "geomean_fp32_ci_high", "geomean_fp32_n",
        "geomean_tf32", "geomean_tf32_ci_low", "geomean_tf32_ci_high", "geomean_tf32_n",
        "geomean_all_fp32", "geomean_all_fp32_ci_low", "geomean_all_fp32_ci_high",
        "geomean_all_tf32", "geomean_all_tf32_ci_low", "geomean_all_tf32_ci_high",
        "fast_1_fp32", "fast_1_fp32_ci_low", "fast_1_fp32_ci_high",
        "fast_1_tf32", "fast_1_tf32_ci_low", "fast_1_tf32_ci_high"};
    char dal[ND + 1], cal[NC + 1];
    memset(dal, 'r', ND);
    memset(cal, 'r', NC);
    dal[0] = dal[1] = cal[0] = cal[1] = 'l';
    dal[ND] = cal[NC] = 0;
    int rc;
    if ((rc = tbl_init(disp, ND, dh, dal, e)) || (rc = tbl_init(data, NC, ch, cal, e)))
        return rc;
    for (int i = 0; i < r->m->n_sets; i++) {
        const rm_set *s = &r->m->sets[i];
        for (int l = 0; l < s->n_levels; l++) {
            const rm_level *L = &s->levels[l];
            char c[ND][96];
            snprintf(c[0], 96, "%s", l == 0 ? s->name : "");
            snprintf(c[1], 96, "%s", L->name);
            snprintf(c[2], 96, "%ld", L->n);
            for (int g = 0; g < RM_NG; g++)
                snprintf(c[3 + g], 96, "%ld", L->group_counts[g]);
            est_cell(c[9], 96, &L->b[RM_FP32].gm_correct, 1, 1);
            est_cell(c[10], 96, &L->b[RM_TF32].gm_correct, 1, 1);
            for (int b = 0; b < RM_NB; b++) {
                const rm_est *f = fast_at(&L->b[b], 1);
                est_cell(c[11 + b], 96, f ? f : &NULL_EST, 0, 0);
            }
            est_cell(c[13], 96, &L->b[RM_TF32].gm_all, 1, 0);
            const char *cp[ND];
            for (int k = 0; k < ND; k++)
                cp[k] = c[k];
            if ((rc = tbl_add(disp, cp, 0, l == 0 && i > 0, e)))
                return rc;
            char d[NC][48];
            int k = 0;
            snprintf(d[k++], 48, "%.47s", s->name);
            snprintf(d[k++], 48, "%.47s", L->name);
            snprintf(d[k++], 48, "%ld", L->n);
            for (int g = 0; g < RM_NG; g++)
                snprintf(d[k++], 48, "%ld", L->group_counts[g]);
            for (int b = 0; b < RM_NB; b++) {
                csv_est(d, &k, &L->b[b].gm_correct);
                snprintf(d[k++], 48, "%ld", L->b[b].gm_correct.n < 0 ? 0 : L->b[b].gm_correct.n);
            }
            for (int b = 0; b < RM_NB; b++)
                csv_est(d, &k, &L->b[b].gm_all);
            for (int b = 0; b < RM_NB; b++) {
                const rm_est *f = fast_at(&L->b[b], 1);
                csv_est(d, &k, f ? f : &NULL_EST);
            }
            const char *dp[NC];
            for (int j = 0; j < NC; j++)
                dp[j] = j < k ? d[j] : "";
            if ((rc = tbl_add(data, dp, 0, 0, e)))
                return rc;
        }
    }
    return 0;
}

/* Failures by distribution and by probe: one row per distribution or
 * probe, one column per set ("3 of 24"). */
static int build_failures(rctx *r, tbl *disp, tbl *data, kbv_err *e)
{
    static const char *const ch[] = {"set", "kind", "name", "pairs_run", "pairs_failed", "pairs_skipped"};
    const rmodel *m = r->m;
    int ns = m->n_sets < 16 ? m->n_sets : 16, rc;
    const char *dh[18];
    char align[19];
    dh[0] = "";
    dh[1] = "checked or\nprobed by";
    align[0] = 'l';
    align[1] = 'l';
    for (int i = 0; i < ns; i++) {
        dh[2 + i] = m->sets[i].name;
        align[2 + i] = 'r';
    }
    align[2 + ns] = 0;
    if ((rc = tbl_init(disp, 2 + ns, dh, align, e)) || (rc = tbl_init(data, 6, ch, "lllrrr", e)))
        return rc;
    /* Every name of any set, in the first set's order. */
    for (int kind = 0; kind < 2; kind++) {
        const char *names[64];
        int nn = 0;
        for (int i = 0; i < m->n_sets; i++) {
            const rm_fail *fl = kind ? m->sets[i].fail_probe : m->sets[i].fail_dist;
            int nf = kind ? m->sets[i].n_fail_probe : m->sets[i].n_fail_dist;
            for (int j = 0; j < nf; j++) {
                int seen = 0;
                for (int q = 0; q < nn && !seen; q++)
                    seen = strcmp(names[q], fl[j].name) == 0;
                if (!seen && nn < 64)
                    names[nn++] = fl[j].name;
            }
        }
        for (int j = 0; j < nn; j++) {
            char c[18][64];
            const char *cp[18];
            snprintf(c[0], 64, "%s", names[j]);
            snprintf(c[1], 64, "%s", kind ? "probe" : "distribution");
            for (int i = 0; i < ns; i++) {
                const rm_fail *fl = kind ? m->sets[i].fail_probe : m->sets[i].fail_dist;
                int nf = kind ? m->sets[i].n_fail_probe : m->sets[i].n_fail_dist;
                const rm_fail *f = NULL;
                for (int q = 0; q < nf && !f; q++)
                    if (strcmp(fl[q].name, names[j]) == 0)
                        f = &fl[q];
                if (!f)
                    snprintf(c[2 + i], 64, "-");
                else if (f->skipped > 0)
                    snprintf(c[2 + i], 64, "%ld of %ld\n(%ld skipped)", f->failed, f->run, f->skipped);
                else
                    snprintf(c[2 + i], 64, "%ld of %ld", f->failed, f->run);
                if (f) {
                    char d[3][32];
                    snprintf(d[0], 32, "%ld", f->run);
                    snprintf(d[1], 32, "%ld", f->failed);
                    snprintf(d[2], 32, "%ld", f->skipped);
                    const char *dp[6] = {m->sets[i].name, kind ? "probe" : "distribution", names[j], d[0], d[1],
                                         d[2]};
                    if ((rc = tbl_add(data, dp, 0, 0, e)))
                        return rc;
                }
            }
            for (int k = 0; k < 2 + ns; k++)
                cp[k] = c[k];
            if ((rc = tbl_add(disp, cp, 0, kind == 1 && j == 0, e)))
                return rc;
        }
    }
    return 0;
}

/* The tolerance sweep: one row per tolerance, the share correct per set
 * ("0.91 (129)"; "0.94 (132)*" where the point is a lower bound). */
static int build_tolerance(rctx *r, tbl *disp, tbl *data, kbv_err *e)
{
    static const char *const ch[] = {"set", "tolerance", "n_correct", "n_problems", "share_correct", "exact"};
    const rmodel *m = r->m;
    int ns = m->n_sets < 16 ? m->n_sets : 16, rc, ref = -1;
    const char *dh[17];
    char align[18];
    dh[0] = "tolerance\n(atol = rtol)";
    align[0] = 'l';
    for (int i = 0; i < ns; i++) {
        dh[1 + i] = m->sets[i].name;
        align[1 + i] = 'r';
        if (ref < 0 && m->sets[i].n_sweep > 0)
            ref = i;
    }
    align[1 + ns] = 0;
    if ((rc = tbl_init(disp, 1 + ns, dh, align, e)) || (rc = tbl_init(data, 6, ch, "lrrrrl", e)))
        return rc;
    for (int j = 0; ref >= 0 && j < m->sets[ref].n_sweep; j++) {
        char c[17][64];
        const char *cp[17];
        snprintf(c[0], 64, "%g", m->sets[ref].sweep[j].tol);
        for (int i = 0; i < ns; i++) {
            const rm_set *s = &m->sets[i];
            char a[32];
            if (j < s->n_sweep)
                snprintf(c[1 + i], 64, "%s (%ld)%s", fmt_2(a, sizeof a, s->sweep[j].share), s->sweep[j].n_correct,
                         s->sweep[j].exact ? "" : "*");
            else
                snprintf(c[1 + i], 64, FMT_NA);
        }
        for (int k = 0; k < 1 + ns; k++)
            cp[k] = c[k];
        if ((rc = tbl_add(disp, cp, 0, 0, e)))
            return rc;
    }
    for (int i = 0; i < m->n_sets; i++)
        for (int j = 0; j < m->sets[i].n_sweep; j++) {
            const rm_tol *t = &m->sets[i].sweep[j];
            char d[4][48];
            fmt_g(d[0], 48, t->tol);
            snprintf(d[1], 48, "%ld", t->n_correct);
            snprintf(d[2], 48, "%ld", m->sets[i].n_problems);
            fmt_g(d[3], 48, t->share);
            const char *dp[6] = {m->sets[i].name, d[0], d[1], d[2], d[3], t->exact ? "yes" : "lower bound"};
            if ((rc = tbl_add(data, dp, 0, 0, e)))
                return rc;
        }
    return 0;
}

static void flags_text(char *buf, size_t n, const rm_problem *q, const char *sep)
{
    buf[0] = 0;
    size_t k = 0;
    for (int f = 0; f < q->n_flags && k + 1 < n; f++) {
        int w = snprintf(buf + k, n - k, "%s%s", f ? sep : "", q->flags[f]);
        if (w < 0)
            break;
        k += (size_t)w;
    }
}

/* The markers of a problem whose baseline has a parity exception, or whose
 * baseline's median differs between the sets of the run, after its flags in
 * the per-problem tables (the parity and drift sections say why). */
#define PARITY_MARK "parity exception"
#define DRIFT_MARK "baseline drift"

static void flags_mark(char *buf, size_t n, const rm_problem *q, const char *sep)
{
    flags_text(buf, n, q, sep);
    size_t k = strlen(buf);
    if (q->parity && k + 1 < n)
        snprintf(buf + k, n - k, "%s%s", k ? sep : "", PARITY_MARK);
    k = strlen(buf);
    if (q->drift && k + 1 < n)
        snprintf(buf + k, n - k, "%s%s", k ? sep : "", DRIFT_MARK);
}

/* Per-problem rows of set si (si < 0: every set, with a set column, for
 * problems.tex).  Class and flags share a column, as do the three times and
 * the two peaks, each value on a line of its own, so that the numbers keep
 * their room on a PDF page and the LaTeX table fits a paper's text width;
 * problems.csv has one column each. */
static int build_problems(rctx *r, int si, tbl *disp, kbv_err *e)
{
    static const char *const dh[] = {"set", "problem", "class\nflags", "time ms\ncand.\nfp32\ntf32",
                                     "speedup\nvs fp32", "speedup\nvs tf32", "peak MiB\ncand.\nbaseline",
                                     "n\ncand."};
    static const char *const ph[] = {"problem", "class\nflags", "time ms\ncand.", "time ms\nfp32",
                                     "time ms\ntf32", "speedup\nvs fp32", "speedup\nvs tf32", "peak MiB\ncand.",
                                     "peak MiB\nbaseline", "n\ncand."};
    int all = si < 0, rc;
    int mbv = strcmp(r->m->mem_baseline, "fp32") == 0 ? RM_VFP32 : RM_VTF32;
    if ((rc = tbl_init(disp, all ? 8 : 10, all ? dh : ph, all ? "lwwrrrrr" : "wwrrrrrrrr", e)))
        return rc;
    for (int i = all ? 0 : si; i < (all ? r->m->n_sets : si + 1); i++) {
        const rm_set *s = &r->m->sets[i];
        /* Pairs without a candidate have no row: the headline says how
         * many there are, and problems.csv lists them with their class. */
        for (int sp = 0; sp < s->n_shown; sp++) {
            const rm_problem *q = &s->probs[s->shown[sp]];
            char c[10][160], fl[128];
            int k = 0;
            if (all)
                snprintf(c[k++], 160, "%s", sp == 0 ? s->name : "");
            snprintf(c[k++], 160, "%s", q->id);
            flags_mark(fl, sizeof fl, q, "\n");
            snprintf(c[k++], 160, "%s%s%.100s", q->cls, *fl ? "\n" : "", fl);
            if (all) {
                char t[RM_NV][32];
                for (int v = 0; v < RM_NV; v++)
                    fmt_ms(t[v], sizeof t[v], q->t_ms[v]);
                snprintf(c[k++], 160, "%s\n%s\n%s", t[0], t[1], t[2]);
            } else {
                for (int v = 0; v < RM_NV; v++)
                    fmt_ms(c[k++], 160, q->t_ms[v]);
            }
            for (int b = 0; b < RM_NB; b++) {
                char a[64], ci[80];
                if (q->sp[b].ok)
                    snprintf(c[k++], 160, "%s\n%s", fmt_2(a, sizeof a, q->sp[b].est), fmt_ci(ci, sizeof ci, &q->sp[b]));
                else
                    snprintf(c[k++], 160, FMT_NA);
            }
            if (all) {
                char pc[32], pb[32];
                snprintf(c[k++], 160, "%s\n%s", fmt_mib(pc, sizeof pc, q->peak[RM_CAND]),
                         fmt_mib(pb, sizeof pb, q->peak[mbv]));
            } else {
                fmt_mib(c[k++], 160, q->peak[RM_CAND]);
                fmt_mib(c[k++], 160, q->peak[mbv]);
            }
            if (q->n_samples[RM_CAND] >= 0)
                snprintf(c[k++], 160, "%ld", q->n_samples[RM_CAND]);
            else
                snprintf(c[k++], 160, FMT_NA);
            const char *cp[10];
            for (int j = 0; j < k; j++)
                cp[j] = c[j];
            if ((rc = tbl_add(disp, cp, q->group != RM_G_CORRECT, all && sp == 0 && i > 0, e)))
                return rc;
        }
    }
    return 0;
}

static int build_problems_data(rctx *r, tbl *data, kbv_err *e)
{
    static const char *const ch[] = {
        "set", "problem", "class", "flags", "time_ms_candidate", "time_ms_fp32", "time_ms_tf32",
        "n_samples_candidate", "n_samples_fp32", "n_samples_tf32",
        "speedup_fp32", "speedup_fp32_ci_low", "speedup_fp32_ci_high",
        "speedup_tf32", "speedup_tf32_ci_low", "speedup_tf32_ci_high",
        "peak_bytes_candidate", "peak_bytes_fp32", "peak_bytes_tf32", "max_rel_err", "tier",
        "baseline_parity", "baseline_drift"};
    int rc;
    if ((rc = tbl_init(data, 23, ch, "llllrrrrrrrrrrrrrrrrlll", e)))
        return rc;
    for (int i = 0; i < r->m->n_sets; i++) {
        const rm_set *s = &r->m->sets[i];
        for (int p = 0; p < s->n_probs; p++) {
            const rm_problem *q = &s->probs[p];
            char d[23][160];
            int k = 0;
            snprintf(d[k++], 160, "%s", s->name);
            snprintf(d[k++], 160, "%s", q->id);
            snprintf(d[k++], 160, "%s", q->cls);
            flags_text(d[k++], 160, q, ";");
            for (int v = 0; v < RM_NV; v++)
                fmt_g(d[k++], 160, q->t_ms[v]);
            for (int v = 0; v < RM_NV; v++) {
                if (q->n_samples[v] >= 0)
                    snprintf(d[k++], 160, "%ld", q->n_samples[v]);
                else
                    d[k++][0] = 0;
            }
            for (int b = 0; b < RM_NB; b++) {
                fmt_g(d[k++], 160, q->sp[b].ok ? q->sp[b].est : NAN);
                fmt_g(d[k++], 160, q->sp[b].lo);
                fmt_g(d[k++], 160, q->sp[b].hi);
            }
            for (int v = 0; v < RM_NV; v++)
                fmt_g(d[k++], 160, q->peak[v]);
            fmt_g(d[k++], 160, q->max_rel_err);
            snprintf(d[k++], 160, "%s", q->tier ? q->tier : "");
            /* "exception" or "ok"; empty when the run has no parity.json. */
            snprintf(d[k++], 160, "%s", !r->m->has_parity ? "" : q->parity ? "exception" : "ok");
            /* The drifting baselines ("fp32", "tf32", "fp32+tf32") or "ok";
             * empty when the analysis has no baseline_drift. */
            static const char *const dv[4] = {"ok", "fp32", "tf32", "fp32+tf32"};
            snprintf(d[k++], 160, "%s", !r->m->has_drift ? "" : dv[q->drift & 3u]);
            const char *dp[23];
            for (int j = 0; j < 23; j++)
                dp[j] = d[j];
            if ((rc = tbl_add(data, dp, 0, 0, e)))
                return rc;
        }
    }
    return 0;
}

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
    int rc = expand(f->r, where, text, v, &s, e);
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
    if (!text || expand(f->r, "caption", text, v, &s, &e))
        return 0;
    double h = text_height(f, s, f->r->st.fs_small, 0) + 8;
    free(s);
    return h;
}

static int flow_figure(flow *f, fig_kind k, int arg, const char *caption, const tvars *v, kbv_err *e)
{
    double h = fig_height(f->r, k, arg);
    int rc = flow_need(f, h + caption_height(f, caption, v) + 6, e);
    if (rc)
        return rc;
    canvas_save(f->c);
    canvas_translate(f->c, f->x0 + (f->w - f->r->st.fig_w) / 2, f->y);
    fig_draw(f->r, f->c, k, arg, f->r->st.fig_w);
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
    snprintf(dev, sizeof dev, "%s, compute capability %s, %s SMs, %s GiB", jstr(d, "name", "unknown"),
             jtext(d, "compute_capability", b1, sizeof b1, "?"), isnan(sms) ? "?" : (snprintf(b2, sizeof b2, "%.0f", sms), b2),
             isnan(mem) ? "?" : (snprintf(b3, sizeof b3, "%.0f", mem / 1073741824.0), b3));
    snprintf(drv, sizeof drv, "driver %s, CUDA runtime %s, cuBLAS %s", jtext(d, "driver", b1, sizeof b1, "unknown"),
             jtext(d, "cuda_runtime", b2, sizeof b2, "unknown"), jtext(d, "cublas", b3, sizeof b3, "unknown"));
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
    else jtext(d, "copy_bandwidth_gbps", b1, sizeof b1, "?");
    if (cJSON_IsNumber(f32)) snprintf(b2, sizeof b2, "%.1f", f32->valuedouble);
    else jtext(d, "fp32_tflops", b2, sizeof b2, "?");
    if (cJSON_IsNumber(t32)) snprintf(b3, sizeof b3, "%.1f", t32->valuedouble);
    else jtext(d, "tf32_tflops", b3, sizeof b3, "?");
    snprintf(cal, sizeof cal, "copy %s GB/s, fp32 %s TFLOP/s, tf32 %s TFLOP/s", b1, b2, b3);
    snprintf(harn, sizeof harn, "kbv %s, commit %s", jstr(m->harness, "version", "unknown"),
             jstr(m->harness, "git_commit", "unknown"));
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
             jtext(rc_, "seed", b1, sizeof b1, m->seed >= 0 ? "?" : "unknown"), jtext(rc_, "atol", b2, sizeof b2, "?"),
             jtext(rc_, "rtol", b3, sizeof b3, "?"),
             jtext(rc_, "correct_trials", trials, sizeof trials, "?"),
             *dists ? dists : "?");
    snprintf(stat, sizeof stat, "%g%% confidence intervals, %ld bootstrap resamples", m->ci_level * 100, m->resamples);
    const char *keys[] = {"Run", "Collected", "Device", "Software", "Clocks", "Calibration", "Harness", "Settings",
                          "Statistics"};
    char run[256];
    snprintf(run, sizeof run, "%s (%d sets, %ld problems)", m->run_id, m->n_sets, m->n_problems);
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
    set_vars(&v, s);
    const rm_est *g[RM_NB] = {&s->b[RM_FP32].gm_correct, &s->b[RM_TF32].gm_correct};
    if (!g[0]->ok && !g[1]->ok)
        return expand(r, "verdict.no_correct", r->t.verdict_none, &v, out, e);
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
    return expand(r, "verdict.sentence", r->t.verdict_sentence, &v, out, e);
}

static int flow_intro(flow *f, const tsection *s, kbv_err *e)
{
    if (!s->intro)
        return 0;
    char *t = NULL;
    int rc = expand(f->r, "intro", s->intro, NULL, &t, e);
    if (rc)
        return rc;
    rc = flow_text(f, t, f->r->st.fs_normal, 0, f->r->st.text, 6, e);
    free(t);
    return rc;
}

static int section(flow *f, const tsection *s, const tbl *tabs, int n_findings, kbv_err *e)
{
    rctx *r = f->r;
    const rmodel *m = r->m;
    int rc, mark;
    char *title = NULL;
    if ((rc = expand(r, "title", s->title, NULL, &title, e)))
        return rc;
    /* A heading stays with its introduction and the first block under it. */
    double keep = 60;
    switch (s->id) {
    case SEC_INFLATION: keep = tbl_first_row_height(&tabs[1], f->c, &r->st, f->w, 0) + 20; break;
    case SEC_FAST_P: keep = chart_fast_p_height(&r->cx) + 30; break;
    case SEC_FOREST:
        keep = 140;
        if (m->n_sets > 0) {
            int r0, r1;
            forest_part(r, 0, 0, &r0, &r1);
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
    case SEC_FAILURES: keep = any_failures(m) ? chart_failures_height(&r->cx) + 30 : 30; break;
    case SEC_TOLERANCE: keep = any_sweep(m) ? chart_tolerance_height(&r->cx) + 30 : 30; break;
    default: break;
    }
    if (s->intro) {
        char *it = NULL;
        if (expand(r, "intro", s->intro, NULL, &it, e) == 0)
            keep += text_height(f, it, r->st.fs_normal, 0) + 6;
        free(it);
    }
    rc = flow_heading(f, title, -1, keep, &mark, e);
    free(title);
    if (rc || (rc = flow_intro(f, s, e)))
        return rc;
    tvars v = r->gv;
    switch (s->id) {
    case SEC_SUMMARY:
        return sec_summary(f, e);
    case SEC_HEADLINE:
        /* The answer first, one sentence a set; then the numbers behind it. */
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
        for (int i = 0; i < m->n_sets; i++) {
            const rm_set *st = &m->sets[i];
            set_vars(&v, st);
            int parts = forest_parts(r, i);
            for (int k = 0; k < parts; k++) {
                int r0, r1;
                forest_part(r, i, k, &r0, &r1);
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
            set_vars(&v, &m->sets[i]);
            tbl t;
            if ((rc = build_problems(r, i, &t, e)))
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
        if (!any_levels(m) && s->missing && (rc = flow_caption(f, "missing", s->missing, &v, e)))
            return rc;
        if (any_levels(m) && (rc = flow_table(f, &tabs[6], s->caption, &v, e)))
            return rc;
        for (int b = 0; b < RM_NB; b++) {
            tvars_set(&v, "baseline", "%s", rmodel_baseline_name(b));
            tvars_set(&v, "baseline_desc", "%s", b == 0 ? "strict fp32" : "tf32");
            if ((rc = flow_figure(f, FIG_LEVELS, b, s->figure_caption, &v, e)))
                return rc;
        }
        return 0;
    case SEC_FAILURES:
        if (!any_failures(m))
            return s->missing ? flow_caption(f, "missing", s->missing, &v, e) : 0;
        /* The figure prints every count ("2 of 24"); the table goes to
         * failures.csv and .tex only. */
        return flow_figure(f, FIG_FAILURES, 0, s->figure_caption, &v, e);
    case SEC_TOLERANCE:
        if (!any_sweep(m))
            return s->missing ? flow_caption(f, "missing", s->missing, &v, e) : 0;
        if ((rc = flow_figure(f, FIG_TOLERANCE, 0, s->figure_caption, &v, e)))
            return rc;
        return flow_table(f, &tabs[8], s->caption, &v, e);
    case SEC_METHODS:
        for (int k = 0; k < s->n_items; k++) {
            char *term = NULL, *text = NULL;
            if ((rc = expand(r, "items.term", s->items[k].term, NULL, &term, e)) == 0 &&
                (rc = expand(r, "items.text", s->items[k].text, NULL, &text, e)) == 0) {
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
    case SEC_N:
        break;
    }
    return 0;
}

static int build_pdf(rctx *r, const tbl *tabs, int n_findings, kbv_err *e)
{
    pdfdoc *d = NULL;
    char *title = NULL, *sub = NULL;
    unsigned char *data = NULL;
    size_t len = 0;
    int rc;
    if ((rc = expand(r, "title", r->t.title, NULL, &title, e)) ||
        (rc = expand(r, "subtitle", r->t.subtitle, NULL, &sub, e)))
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
        if ((rc = expand(r, "labels.page", r->t.labels[LBL_PAGE], &v, &foot, e)))
            goto done;
        canvas *c = pdfdoc_canvas(d, p);
        canvas_color(c, r->st.muted);
        canvas_text(c, r->st.page_w / 2, r->st.page_h - r->st.margin / 2, foot, r->st.fs_small, 0,
                    CANVAS_CENTER | CANVAS_BASELINE, 0);
        free(foot);
    }
    if ((rc = pdfdoc_save(d, &data, &len, e)))
        goto done;
    rc = write_file(r, "report.pdf", data, len, e);
    r->stats.pages = pages;
done:
    free(data);
    free(title);
    free(sub);
    pdfdoc_free(d);
    return rc;
}

/* --- the whole --------------------------------------------------------------- */

static int build_text_and_pdf(rctx *r, kbv_err *e);

static int all_figures(rctx *r, kbv_err *e)
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
    if (any_failures(r->m) && (rc = figure_files(r, "failures", FIG_FAILURES, 0, e)))
        return rc;
    if (any_sweep(r->m) && (rc = figure_files(r, "tolerance", FIG_TOLERANCE, 0, e)))
        return rc;
    for (int i = 0; i < r->m->n_sets; i++) {
        int parts = forest_parts(r, i);
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

typedef struct fig_job {
    rctx *r;
    int rc;
    kbv_err e;
} fig_job;

static void *figures_thread(void *arg)
{
    fig_job *j = arg;
    j->rc = all_figures(j->r, &j->e);
    return NULL;
}

/* The SVG and PNG figures (Cairo) are drawn on a second thread while this
 * one writes the tables and the PDF (libharu): the two share only data
 * that no one changes any more (model, style, templates, font metrics),
 * write different files, and each figure's bytes depend on that figure
 * alone, so the order in which the threads run changes nothing. */
static int build_all(rctx *r, kbv_err *e)
{
    fig_job job = {r, 0, {0, ""}};
    pthread_t th;
    int threaded = pthread_create(&th, NULL, figures_thread, &job) == 0;
    int rc = build_text_and_pdf(r, e);
    if (threaded)
        pthread_join(th, NULL);
    else
        job.rc = all_figures(r, &job.e);
    if (rc == 0 && job.rc != 0) {
        *e = job.e;
        rc = job.rc;
    }
    return rc;
}

static int build_text_and_pdf(rctx *r, kbv_err *e)
{
    enum { T_HEAD, T_INFL, T_FASTP, T_HACKS, T_PARITY, T_DRIFT, T_LEVELS, T_FAIL, T_TOL, T_N };
    tbl disp[T_N], data[T_N], pall = {0}, pdata = {0};
    memset(disp, 0, sizeof disp);
    memset(data, 0, sizeof data);
    int rc, n_findings = 0;
    if ((rc = build_headline(r, &disp[T_HEAD], &data[T_HEAD], e)) ||
        (rc = build_inflation(r, &disp[T_INFL], &data[T_INFL], e)) ||
        (rc = build_fast_p(r, &disp[T_FASTP], &data[T_FASTP], e)) ||
        (rc = build_hacks(r, &disp[T_HACKS], &data[T_HACKS], &n_findings, e)) ||
        (rc = build_parity(r, &disp[T_PARITY], &data[T_PARITY], e)) ||
        (rc = build_drift(r, &disp[T_DRIFT], &data[T_DRIFT], e)) ||
        (rc = build_levels(r, &disp[T_LEVELS], &data[T_LEVELS], e)) ||
        (rc = build_failures(r, &disp[T_FAIL], &data[T_FAIL], e)) ||
        (rc = build_tolerance(r, &disp[T_TOL], &data[T_TOL], e)) ||
        (rc = build_problems(r, -1, &pall, e)) || (rc = build_problems_data(r, &pdata, e)))
        goto done;
    const char *const names[T_N] = {"headline", "inflation", "fast_p", "hacks", "baseline_parity",
                                    "baseline_drift", "levels", "failures", "tolerance"};
    const sec_id secs[T_N] = {SEC_HEADLINE, SEC_INFLATION, SEC_FAST_P, SEC_HACKS, SEC_PARITY, SEC_DRIFT,
                              SEC_LEVELS, SEC_FAILURES, SEC_TOLERANCE};
    for (int i = 0; i < T_N; i++) {
        /* Without parity.json there is no parity table (the PDF says so). */
        if (i == T_PARITY && !r->m->has_parity)
            continue;
        /* Nor a drift table for an analysis without baseline_drift. */
        if (i == T_DRIFT && !r->m->has_drift)
            continue;
        /* Nor the breakdowns an older analysis lacks. */
        if ((i == T_LEVELS && !any_levels(r->m)) || (i == T_FAIL && !any_failures(r->m)) ||
            (i == T_TOL && !any_sweep(r->m)))
            continue;
        /* The LaTeX file carries the table's caption as a comment. */
        char *cap = NULL;
        const tsection *ts = NULL;
        for (int k = 0; k < r->t.n_sections; k++)
            if (r->t.sections[k].id == secs[i])
                ts = &r->t.sections[k];
        if (ts && ts->caption) {
            tvars v = r->gv;
            tvars_set(&v, "n_findings", "%d", n_findings);
            if ((rc = expand(r, "caption", ts->caption, &v, &cap, e)))
                goto done;
        }
        rc = emit_table(r, names[i], &disp[i], &data[i], cap, e);
        free(cap);
        if (rc)
            goto done;
    }
    if ((rc = emit_table(r, "problems", &pall, &pdata, NULL, e)))
        goto done;
    rc = build_pdf(r, disp, n_findings, e);
done:
    for (int i = 0; i < T_N; i++) {
        tbl_free(&disp[i]);
        tbl_free(&data[i]);
    }
    tbl_free(&pall);
    tbl_free(&pdata);
    return rc;
}

/* Removes RUN_DIR/.report.tmp.<pid> and .report.old.<pid> folders whose
 * render is no longer running (killed before it could clean up), so that
 * they do not pile up.  A folder of a live process, another render at work,
 * is left alone; so is anything whose name does not parse. */
static void remove_stale(const char *run_dir)
{
    DIR *d = opendir(run_dir);
    if (!d)
        return;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        const char *nm = ent->d_name, *tail = NULL;
        if (strncmp(nm, ".report.tmp.", 12) == 0)
            tail = nm + 12;
        else if (strncmp(nm, ".report.old.", 12) == 0)
            tail = nm + 12;
        if (!tail || !*tail || strspn(tail, "0123456789") != strlen(tail) || strlen(tail) > 9)
            continue;
        long pid = strtol(tail, NULL, 10);
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", run_dir, nm);
        log_info("render", "removed %s, left by render process %ld that no longer runs", path, pid);
        rm_tree(path);
    }
    closedir(d);
}

/* Moves the finished folder to RUN_DIR/report, replacing an old one. */
static int install(rctx *r, kbv_err *e)
{
    char final[4096], old[4200];
    snprintf(final, sizeof final, "%s/report", r->o->run_dir);
    snprintf(old, sizeof old, "%s/.report.old.%ld", r->o->run_dir, (long)getpid());
    struct stat sb;
    int had = lstat(final, &sb) == 0;
    if (had && rename(final, old) != 0)
        return err_set(e, KBV_ERUNTIME, "%s: cannot move the old report aside: %s", final, strerror(errno));
    if (rename(r->dir, final) != 0) {
        int err = errno;
        if (had)
            rename(old, final);
        return err_set(e, KBV_ERUNTIME, "%s: cannot move the new report into place: %s", final, strerror(err));
    }
    if (had)
        rm_tree(old);
    return 0;
}

int report_render(const report_opts *o, report_stats *stats, kbv_err *e)
{
    rctx r;
    memset(&r, 0, sizeof r);
    r.o = o;
    int rc;
    /* Everything that can be wrong with the input is checked before the
     * first file is written. */
    if ((rc = tmpl_load(&r.t, o->template_path, e)))
        return rc;
    r.have_tmpl = 1;
    if ((rc = style_load(&r.st, o->style_path, e)) || (rc = rmodel_load(&r.m, o->run_dir, e)) ||
        (rc = set_date(&r, e)) ||
        (rc = fontm_open(&r.fm, r.st.font_regular, r.st.font_bold, e)) || (rc = make_fig_names(&r, e)))
        goto done;
    global_vars(&r);
    for (int i = 0; i < LBL_N; i++) {
        char where[64];
        snprintf(where, sizeof where, "labels[%d]", i);
        if (i == LBL_PAGE)
            continue;
        if ((rc = expand(&r, where, r.t.labels[i], NULL, &r.labels[i], e)))
            goto done;
    }
    chart_ctx_init(&r.cx, r.m, &r.st, (const char *const *)r.labels, r.fm);
    if ((rc = forest_plan(&r, e)))
        goto done;
    size_t dl = strlen(o->run_dir) + 64;
    if (!(r.dir = malloc(dl))) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }
    remove_stale(o->run_dir);
    snprintf(r.dir, dl, "%s/.report.tmp.%ld", o->run_dir, (long)getpid());
    rm_tree(r.dir);
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/figures", r.dir);
    if ((rc = afile_mkdirs(sub, e)))
        goto done;
    snprintf(sub, sizeof sub, "%s/tables", r.dir);
    if ((rc = afile_mkdirs(sub, e)))
        goto done;
    if ((rc = build_all(&r, e)) || (rc = install(&r, e)))
        goto done;
    if (stats)
        *stats = r.stats;
done:
    if (r.dir && rc)
        rm_tree(r.dir);
    free(r.dir);
    if (r.fig_names)
        for (int i = 0; r.m && i < r.m->n_sets; i++)
            free(r.fig_names[i]);
    free(r.fig_names);
    free(r.forest_rows);
    for (int i = 0; i < LBL_N; i++)
        free(r.labels[i]);
    fontm_free(r.fm);
    rmodel_free(r.m);
    if (r.have_tmpl)
        tmpl_free(&r.t);
    return rc;
}
