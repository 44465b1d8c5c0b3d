/* rtab.c - the report's tables: each built twice, for display (the PDF
 * and LaTeX) and as data (CSV), and written to tables/ (see rctx.h). */
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

void rtab_est_cell(char *buf, size_t n, const rm_est *x, int ratio, int with_n)
{
    est_cell(buf, n, x, ratio, with_n);
}

void rtab_csv_est(char (*cells)[48], int *k, const rm_est *x)
{
    csv_est(cells, k, x);
}

const rm_est *rtab_fast_at(const rm_base *b, double p)
{
    const rm_est *f = fast_at(b, p);
    return f ? f : &NULL_EST;
}

/* Every CSV starts with its header row (no comment line before it), so
 * that CSV readers take the column names from the first line. */
int rtab_emit(rctx *r, const char *name, const tbl *disp, const tbl *data, const char *caption,
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
    if ((rc = rep_write_file(r, rel, csv.s ? csv.s : "", csv.len, e)))
        goto done;
    snprintf(rel, sizeof rel, "tables/%s.tex", name);
    if ((rc = rep_write_file(r, rel, tex.s ? tex.s : "", tex.len, e)))
        goto done;
    r->stats.tables++;
done:
    sb_free(&csv);
    sb_free(&tex);
    return rc;
}

int rtab_headline(rctx *r, tbl *disp, tbl *data, kbv_err *e)
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

int rtab_inflation(rctx *r, tbl *disp, tbl *data, kbv_err *e)
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

int rtab_fast_p(rctx *r, tbl *disp, tbl *data, kbv_err *e)
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
int rtab_hacks(rctx *r, tbl *disp, tbl *data, int *n_findings, kbv_err *e)
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
int rtab_parity(rctx *r, tbl *disp, tbl *data, kbv_err *e)
{
    static const char *const dh[] = {"problem", "fp32\nratio", "tf32\nratio", "bf16\nratio", "reason"};
    /* What parity was measured on goes into every row of the CSV, whose
     * first line must be its header for CSV readers. */
    static const char *const ch[] = {"id", "fp32_ratio", "tf32_ratio", "bf16_ratio", "reason", "gpu", "torch",
                                     "cuda", "samples", "limit"};
    int rc;
    if ((rc = tbl_init(disp, 5, dh, "lrrrw", e)) || (rc = tbl_init(data, 10, ch, "lrrrllllll", e)))
        return rc;
    char ns[32], lim[32];
    snprintf(ns, sizeof ns, "%ld", r->m->parity_samples);
    snprintf(lim, sizeof lim, "%.2f", r->m->parity_limit);
    for (int i = 0; i < r->m->n_parity; i++) {
        const rm_parity *q = &r->m->parity[i];
        if (!q->flagged)
            continue;
        char a[RM_NBX][32], d[RM_NBX][48];
        for (int b = 0; b < RM_NBX; b++) {
            parity_ratio(a[b], sizeof a[b], q->ratio[b]);
            fmt_g(d[b], sizeof d[b], q->ratio[b]);
        }
        /* The reason wraps in its column, whole: a cut reason left the
         * reader without the measurement that explains it. */
        const char *why = parity_reason(q);
        const char *cp[5] = {q->id, a[RM_FP32], a[RM_TF32], a[RM_BF16], why};
        if ((rc = tbl_add(disp, cp, 0, 0, e)))
            return rc;
        const char *dp[10] = {q->id, d[RM_FP32], d[RM_TF32], d[RM_BF16], why,
                              r->m->parity_gpu ? r->m->parity_gpu : "", r->m->parity_torch ? r->m->parity_torch : "",
                              r->m->parity_cuda ? r->m->parity_cuda : "", ns, lim};
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
int rtab_drift(rctx *r, tbl *disp, tbl *data, kbv_err *e)
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
int rtab_levels(rctx *r, tbl *disp, tbl *data, kbv_err *e)
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
int rtab_failures(rctx *r, tbl *disp, tbl *data, kbv_err *e)
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
int rtab_tolerance(rctx *r, tbl *disp, tbl *data, kbv_err *e)
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
int rtab_problems(rctx *r, int si, tbl *disp, kbv_err *e)
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
            char c[10][320], fl[128];
            int k = 0;
            if (all)
                snprintf(c[k++], 160, "%s", sp == 0 ? s->name : "");
            /* A problem with a hard case of its own names it under its id. */
            const char *d5 = rmodel_d5_label(r->m, q->id);
            snprintf(c[k++], 320, "%s%s%.260s", q->id, d5 ? "\nD5: " : "", d5 ? d5 : "");
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

int rtab_problems_data(rctx *r, tbl *data, kbv_err *e)
{
    static const char *const ch[] = {
        "set", "problem", "class", "flags", "time_ms_candidate", "time_ms_fp32", "time_ms_tf32",
        "n_samples_candidate", "n_samples_fp32", "n_samples_tf32",
        "speedup_fp32", "speedup_fp32_ci_low", "speedup_fp32_ci_high",
        "speedup_tf32", "speedup_tf32_ci_low", "speedup_tf32_ci_high",
        "peak_bytes_candidate", "peak_bytes_fp32", "peak_bytes_tf32", "max_rel_err", "tier",
        "baseline_parity", "baseline_drift", "d5"};
    int rc;
    if ((rc = tbl_init(data, 24, ch, "llllrrrrrrrrrrrrrrrrllll", e)))
        return rc;
    for (int i = 0; i < r->m->n_sets; i++) {
        const rm_set *s = &r->m->sets[i];
        for (int p = 0; p < s->n_probs; p++) {
            const rm_problem *q = &s->probs[p];
            char d[24][320];
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
            const char *d5 = rmodel_d5(r->m, q->id);
            snprintf(d[k++], 320, "%s", d5 ? d5 : "");
            const char *dp[24];
            for (int j = 0; j < 24; j++)
                dp[j] = d[j];
            if ((rc = tbl_add(data, dp, 0, 0, e)))
                return rc;
        }
    }
    return 0;
}


/* The BF16 sets' pairs, one row each (problems_bf16): against the one bf16
 * baseline, with the columns of problems.csv that a BF16 pair has.  The
 * LaTeX table lists the pairs with a candidate, as problems.tex does. */
int rtab_problems_bf16(rctx *r, tbl *disp, tbl *data, kbv_err *e)
{
    enum { ND = 7, NC = 16 };
    static const char *const dh[ND] = {"set", "problem", "class\nflags", "time ms\ncand.\nbf16",
                                       "speedup\nvs bf16", "peak MiB\ncand.\nbaseline", "n\ncand."};
    static const char *const ch[NC] = {
        "set", "problem", "class", "flags", "time_ms_candidate", "time_ms_bf16", "n_samples_candidate",
        "n_samples_bf16", "speedup_bf16", "speedup_bf16_ci_low", "speedup_bf16_ci_high",
        "peak_bytes_candidate", "peak_bytes_bf16", "max_rel_err", "baseline_parity", "d5"};
    int rc;
    if ((rc = tbl_init(disp, ND, dh, "lwwrrrr", e)) || (rc = tbl_init(data, NC, ch, "llllrrrrrrrrrrll", e)))
        return rc;
    for (int i = 0; i < r->m->n_bsets; i++) {
        const rm_set *s = &r->m->bsets[i];
        for (int p = 0; p < s->n_probs; p++) {
            const rm_problem *q = &s->probs[p];
            char d[NC][320];
            int k = 0;
            snprintf(d[k++], 160, "%s", s->name);
            snprintf(d[k++], 160, "%s", q->id);
            snprintf(d[k++], 160, "%s", q->cls);
            flags_text(d[k++], 160, q, ";");
            fmt_g(d[k++], 160, q->t_ms[RM_CAND]);
            fmt_g(d[k++], 160, q->t_ms[RM_VBF16]);
            for (int v = 0; v < 2; v++) {
                long n = q->n_samples[v ? RM_VBF16 : RM_CAND];
                if (n >= 0)
                    snprintf(d[k++], 160, "%ld", n);
                else
                    d[k++][0] = 0;
            }
            fmt_g(d[k++], 160, q->sp[RM_BF16].ok ? q->sp[RM_BF16].est : NAN);
            fmt_g(d[k++], 160, q->sp[RM_BF16].lo);
            fmt_g(d[k++], 160, q->sp[RM_BF16].hi);
            fmt_g(d[k++], 160, q->peak[RM_CAND]);
            fmt_g(d[k++], 160, q->peak[RM_VBF16]);
            fmt_g(d[k++], 160, q->max_rel_err);
            snprintf(d[k++], 160, "%s", !r->m->has_parity ? "" : q->parity ? "exception" : "ok");
            const char *d5 = rmodel_d5(r->m, q->id);
            snprintf(d[k++], 320, "%s", d5 ? d5 : "");
            const char *dp[NC];
            for (int j = 0; j < NC; j++)
                dp[j] = d[j];
            if ((rc = tbl_add(data, dp, 0, 0, e)))
                return rc;
        }
        for (int sp = 0; sp < s->n_shown; sp++) {
            const rm_problem *q = &s->probs[s->shown[sp]];
            char c[ND][320], fl[128], t0[32], t1[32], a[64], ci[80], pc[32], pb[32];
            int k = 0;
            snprintf(c[k++], 160, "%s", sp == 0 ? s->name : "");
            snprintf(c[k++], 320, "%s", q->id);
            flags_mark(fl, sizeof fl, q, "\n");
            snprintf(c[k++], 160, "%s%s%.100s", q->cls, *fl ? "\n" : "", fl);
            snprintf(c[k++], 160, "%s\n%s", fmt_ms(t0, sizeof t0, q->t_ms[RM_CAND]),
                     fmt_ms(t1, sizeof t1, q->t_ms[RM_VBF16]));
            if (q->sp[RM_BF16].ok)
                snprintf(c[k++], 160, "%s\n%s", fmt_2(a, sizeof a, q->sp[RM_BF16].est),
                         fmt_ci(ci, sizeof ci, &q->sp[RM_BF16]));
            else
                snprintf(c[k++], 160, FMT_NA);
            snprintf(c[k++], 160, "%s\n%s", fmt_mib(pc, sizeof pc, q->peak[RM_CAND]),
                     fmt_mib(pb, sizeof pb, q->peak[RM_VBF16]));
            if (q->n_samples[RM_CAND] >= 0)
                snprintf(c[k++], 160, "%ld", q->n_samples[RM_CAND]);
            else
                snprintf(c[k++], 160, FMT_NA);
            const char *cp[ND];
            for (int j = 0; j < ND; j++)
                cp[j] = c[j];
            if ((rc = tbl_add(disp, cp, q->group != RM_G_CORRECT, sp == 0 && i > 0, e)))
                return rc;
        }
    }
    return 0;
}
