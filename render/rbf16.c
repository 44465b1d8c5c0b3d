/* rbf16.c - the tables of the BF16 setting (see rctx.h): each BF16 set
 * against its bf16 baseline, beside the FP32 set it mirrors against fp32. */
#include "rctx.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "fmt.h"

int rtab_bf16(rctx *r, tbl *disp, tbl *data, kbv_err *e)
{
    enum { ND = 13, NC = 27 };
    static const char *const dh[ND] = {"set", "FP32\nset", "n", "correct", "hidden\nfail", "hack", "incor-\nrect",
                                       "error", "no can-\ndidate", "speedup\nvs bf16", "FP32 set\nvs fp32",
                                       "fast_1\nvs bf16", "FP32 set\nfast_1"};
    static const char *const ch[NC] = {
        "set", "compare_with", "n_problems", "correct", "hidden_fail", "hack", "incorrect", "error", "missing",
        "geomean_bf16", "geomean_bf16_ci_low", "geomean_bf16_ci_high", "geomean_bf16_n",
        "geomean_all_bf16", "geomean_all_bf16_ci_low", "geomean_all_bf16_ci_high",
        "fast_1_bf16", "fast_1_bf16_ci_low", "fast_1_bf16_ci_high",
        "fp32_set_geomean_fp32", "fp32_set_geomean_fp32_ci_low", "fp32_set_geomean_fp32_ci_high",
        "fp32_set_geomean_fp32_n", "fp32_set_fast_1_fp32", "fp32_set_fast_1_fp32_ci_low",
        "fp32_set_fast_1_fp32_ci_high", "fp32_set_n_problems"};
    int rc;
    char dal[ND + 1], cal[NC + 1];
    memset(dal, 'r', ND);
    memset(cal, 'r', NC);
    dal[0] = dal[1] = cal[0] = cal[1] = 'l';
    dal[ND] = cal[NC] = 0;
    if ((rc = tbl_init(disp, ND, dh, dal, e)) || (rc = tbl_init(data, NC, ch, cal, e)))
        return rc;
    static const rm_est none = {0, NAN, NAN, NAN, -1};
    for (int i = 0; i < r->m->n_bsets; i++) {
        const rm_set *s = &r->m->bsets[i];
        const rm_set *f = s->cmp >= 0 ? &r->m->sets[s->cmp] : NULL;
        const rm_est *fg = f ? &f->b[RM_FP32].gm_correct : &none;
        const rm_est *ff = f ? rtab_fast_at(&f->b[RM_FP32], 1) : &none;
        char c[ND][96];
        snprintf(c[0], 96, "%s", s->name);
        snprintf(c[1], 96, "%s", s->compare_with ? s->compare_with : "-");
        snprintf(c[2], 96, "%ld", s->n_problems);
        for (int g = 0; g < RM_NG; g++)
            snprintf(c[3 + g], 96, "%ld", s->group_counts[g]);
        rtab_est_cell(c[9], 96, &s->b[RM_BF16].gm_correct, 1, 1);
        rtab_est_cell(c[10], 96, fg, 1, 1);
        rtab_est_cell(c[11], 96, rtab_fast_at(&s->b[RM_BF16], 1), 0, 0);
        rtab_est_cell(c[12], 96, ff, 0, 0);
        const char *cp[ND];
        for (int k = 0; k < ND; k++)
            cp[k] = c[k];
        if ((rc = tbl_add(disp, cp, 0, 0, e)))
            return rc;
        char d[NC][48];
        int k = 0;
        snprintf(d[k++], 48, "%.47s", s->name);
        snprintf(d[k++], 48, "%.47s", s->compare_with ? s->compare_with : "");
        snprintf(d[k++], 48, "%ld", s->n_problems);
        for (int g = 0; g < RM_NG; g++)
            snprintf(d[k++], 48, "%ld", s->group_counts[g]);
        rtab_csv_est(d, &k, &s->b[RM_BF16].gm_correct);
        snprintf(d[k++], 48, "%ld", s->b[RM_BF16].gm_correct.n < 0 ? 0 : s->b[RM_BF16].gm_correct.n);
        rtab_csv_est(d, &k, &s->b[RM_BF16].gm_all);
        rtab_csv_est(d, &k, rtab_fast_at(&s->b[RM_BF16], 1));
        rtab_csv_est(d, &k, fg);
        snprintf(d[k++], 48, "%ld", fg->n < 0 ? 0 : fg->n);
        rtab_csv_est(d, &k, ff);
        snprintf(d[k++], 48, "%ld", f ? f->n_problems : 0);
        const char *dp[NC];
        for (int j = 0; j < NC; j++)
            dp[j] = d[j];
        if ((rc = tbl_add(data, dp, 0, 0, e)))
            return rc;
    }
    return 0;
}

int rtab_bf16_fast_p(rctx *r, tbl *disp, tbl *data, kbv_err *e)
{
    static const char *const ch[] = {"set", "baseline", "p", "fast_p", "ci_low", "ci_high"};
    int rc, np = 0, ref = 0;
    for (int i = 0; i < r->m->n_bsets; i++)
        if (r->m->bsets[i].b[RM_BF16].n_fast_p > np) {
            np = r->m->bsets[i].b[RM_BF16].n_fast_p;
            ref = i;
        }
    if (np > 10)
        np = 10;
    const char *dh[11];
    char hb[10][32], align[12] = "l";
    dh[0] = "set";
    for (int j = 0; j < np; j++) {
        snprintf(hb[j], sizeof hb[j], "p = %g", r->m->bsets[ref].b[RM_BF16].fast_p[j].p);
        dh[1 + j] = hb[j];
        align[1 + j] = 'r';
    }
    align[1 + np] = 0;
    if ((rc = tbl_init(disp, 1 + np, dh, align, e)) || (rc = tbl_init(data, 6, ch, "llrrrr", e)))
        return rc;
    for (int i = 0; i < r->m->n_bsets; i++) {
        const rm_base *b = &r->m->bsets[i].b[RM_BF16];
        char c[11][96];
        const char *cp[11];
        snprintf(c[0], 96, "%s", r->m->bsets[i].name);
        for (int j = 0; j < np; j++)
            rtab_est_cell(c[1 + j], 96, rtab_fast_at(b, r->m->bsets[ref].b[RM_BF16].fast_p[j].p), 0, 0);
        for (int j = 0; j < 1 + np; j++)
            cp[j] = c[j];
        if ((rc = tbl_add(disp, cp, 0, 0, e)))
            return rc;
        for (int j = 0; j < b->n_fast_p; j++) {
            char d[6][48];
            int k = 0;
            snprintf(d[k++], 48, "%.47s", r->m->bsets[i].name);
            snprintf(d[k++], 48, "bf16");
            fmt_g(d[k++], 48, b->fast_p[j].p);
            rtab_csv_est(d, &k, &b->fast_p[j].v);
            const char *dp[6];
            for (int q = 0; q < 6; q++)
                dp[q] = d[q];
            if ((rc = tbl_add(data, dp, 0, 0, e)))
                return rc;
        }
    }
    return 0;
}

void rbf16_vars(const rctx *r, int j, tvars *v)
{
    const rm_set *s = &r->m->bsets[j];
    int both = 0, n = chart_bf16_points(r->m, j, &both);
    rep_set_vars(v, s);
    tvars_set(v, "compare_with", "%s", s->compare_with ? s->compare_with : "none");
    tvars_set(v, "n_points", "%d", n);
    tvars_set(v, "n_both", "%d", both);
}
