/* rctx.h - what the parts of the report share (not a public header: only
 * render/report.c, rfig.c, rtab.c and rflow.c include it).
 *
 * report.c owns the context (rctx): the model, style, templates, fonts and
 * the temporary folder, and assembles the report; rfig.c draws the figures
 * (SVG and PNG), rtab.c builds the tables (CSV, LaTeX and the PDF's), rflow.c
 * lays out the PDF's pages and sections.  Every pointer in rctx is owned by
 * report_render, which frees them; the parts borrow the context. */
#ifndef KBV_RCTX_H
#define KBV_RCTX_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "chart.h"
#include "err.h"
#include "fontm.h"
#include "model.h"
#include "pdfdoc.h"
#include "report.h"
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
    rmodel bview;             /* the BF16 sets as a model's sets (chart_bf16_view): borrows from m */
    chart_ctx cxb;            /* the charts of the BF16 sets */
    char **bf_names;          /* file stem per BF16 set for its comparison figure */
    int *forest_rows;         /* rows per forest part, per set (forest_plan) */
    report_stats stats;
} rctx;

typedef enum { FIG_INFLATION, FIG_FAST_P, FIG_FOREST, FIG_SCATTER, FIG_CLASSES, FIG_LEVELS, FIG_FAILURES,
               FIG_TOLERANCE, FIG_BF16_FAST_P, FIG_BF16_COMPARE } fig_kind;


/* A forest figure's argument: its set and its part (0-based). */
#define FOREST_ARG(set, part) ((set) * 4096 + (part))
#define FOREST_SET(arg) ((arg) / 4096)
#define FOREST_PART(arg) ((arg) % 4096)

/* --- report.c: placeholders and output files --- */

/* --- placeholders ---------------------------------------------------------- */
const char *rep_jstr(const cJSON *o, const char *key, const char *dflt);

/* A number or string field as text; dflt when absent. */
const char *rep_jtext(const cJSON *o, const char *key, char *buf, size_t n, const char *dflt);

void rep_set_vars(tvars *v, const rm_set *s);

int rep_expand(rctx *r, const char *where, const char *s, const tvars *v, char **out, kbv_err *e);

/* Files go into the temporary report folder, which becomes visible only
 * when it is renamed into place after every file in it is complete; that
 * rename is what makes the report atomic.  Files are not fsync'ed one by
 * one: on a busy disk that took longer than drawing the whole report, and a
 * report can always be drawn again from analysis.json. */
int rep_write_file(rctx *r, const char *rel, const void *data, size_t len, kbv_err *e);

/* --- rfig.c: figures --- */

/* Whether the analysis has the breakdowns of analyze's levels.c (an older
 * one lacks them). */
int rfig_any_failures(const rmodel *m);

int rfig_any_sweep(const rmodel *m);

int rfig_any_levels(const rmodel *m);

/* Rows [*r0, *r1) of set si's shown problems that part k of its forest draws. */
void rfig_forest_part(const rctx *r, int si, int k, int *r0, int *r1);

int rfig_forest_parts(const rctx *r, int si);

/* How many rows each part of a set's forest gets: as many as fit on a page
 * with the set's heading and a caption of a few lines, spread evenly over
 * the parts, so that no part is a stub of a few rows and every part, in
 * the PDF and as a figure file, is one page with its own caption. */
int rfig_forest_plan(rctx *r, kbv_err *e);

double rfig_height(const rctx *r, fig_kind k, int arg);

void rfig_draw(const rctx *r, canvas *c, fig_kind k, int arg, double w);

/* File stems for per-set figures: the set's name with characters outside
 * [A-Za-z0-9._-] replaced, made unique by a suffix. */
int rfig_names(rctx *r, kbv_err *e);

int rfig_all(rctx *r, kbv_err *e);

/* --- rtab.c: tables --- */

/* Every CSV starts with its header row (no comment line before it), so
 * that CSV readers take the column names from the first line. */
int rtab_emit(rctx *r, const char *name, const tbl *disp, const tbl *data, const char *caption,
                      kbv_err *e);

int rtab_headline(rctx *r, tbl *disp, tbl *data, kbv_err *e);

/* A table cell of an estimate: "1.83x\n[1.61, 2.04]\nn = 8" (ratio) or
 * "0.42\n[0.31, 0.55]"; its three CSV cells; baseline b's fast_p at p (an
 * empty estimate when b has none there). */
void rtab_est_cell(char *buf, size_t n, const rm_est *x, int ratio, int with_n);
void rtab_csv_est(char (*cells)[48], int *k, const rm_est *x);
const rm_est *rtab_fast_at(const rm_base *b, double p);

int rtab_inflation(rctx *r, tbl *disp, tbl *data, kbv_err *e);

int rtab_fast_p(rctx *r, tbl *disp, tbl *data, kbv_err *e);

/* Hack findings: every problem that is not correct, hacks first. */
int rtab_hacks(rctx *r, tbl *disp, tbl *data, int *n_findings, kbv_err *e);

/* Baseline parity: every problem of the run whose baseline is flagged, in
 * run order, with its whole reason (wrapped). */
int rtab_parity(rctx *r, tbl *disp, tbl *data, kbv_err *e);

/* Baseline drift across sets: analysis.json's list, in its order (drift
 * descending): the slowest and the fastest set with their medians and
 * median SM clocks, and the cause. */
int rtab_drift(rctx *r, tbl *disp, tbl *data, kbv_err *e);

/* Per level and set: counts, geometric means and fast_1 against both
 * baselines (analysis.json's levels; the counts from the set's problems). */
int rtab_levels(rctx *r, tbl *disp, tbl *data, kbv_err *e);

/* Failures by distribution and by probe: one row per distribution or
 * probe, one column per set ("3 of 24"). */
int rtab_failures(rctx *r, tbl *disp, tbl *data, kbv_err *e);

/* The tolerance sweep: one row per tolerance, the share correct per set
 * ("0.91 (129)"; "0.94 (132)*" where the point is a lower bound). */
int rtab_tolerance(rctx *r, tbl *disp, tbl *data, kbv_err *e);

/* Per-problem rows of set si (si < 0: every set, with a set column, for
 * problems.tex).  Class and flags share a column, as do the three times and
 * the two peaks, each value on a line of its own, so that the numbers keep
 * their room on a PDF page and the LaTeX table fits a paper's text width;
 * problems.csv has one column each. */
int rtab_problems(rctx *r, int si, tbl *disp, kbv_err *e);

int rtab_problems_data(rctx *r, tbl *data, kbv_err *e);

/* The BF16 sets' pairs against bf16 (problems_bf16): every pair in the
 * CSV, the pairs with a candidate in the LaTeX table. */
int rtab_problems_bf16(rctx *r, tbl *disp, tbl *data, kbv_err *e);

/* --- rbf16.c: the BF16 setting's tables --- */

/* Per BF16 set: counts, geometric means and fast_1 against bf16, beside
 * the geometric mean and fast_1 of the FP32 set it mirrors against fp32
 * (headline_bf16). */
int rtab_bf16(rctx *r, tbl *disp, tbl *data, kbv_err *e);

/* fast_p of the BF16 sets against bf16 at the reported thresholds
 * (fast_p_bf16; CSV and LaTeX only). */
int rtab_bf16_fast_p(rctx *r, tbl *disp, tbl *data, kbv_err *e);

/* The comparison figure's placeholders for BF16 set j. */
void rbf16_vars(const rctx *r, int j, tvars *v);

/* --- rflow.c: the PDF --- */

int rflow_pdf(rctx *r, const tbl *tabs, int n_findings, kbv_err *e);

#endif
