/* report.c - assembling the report (see report.h): the context, dates,
 * placeholders, output files, and the order of the whole (rctx.h). */
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

const char *rep_jstr(const cJSON *o, const char *key, const char *dflt)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

/* A number or string field as text; dflt when absent. */
const char *rep_jtext(const cJSON *o, const char *key, char *buf, size_t n, const char *dflt)
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
    tvars_set(v, "device", "%s", rep_jstr(m->device, "name", "unknown device"));
    tvars_set(v, "driver", "%s", rep_jtext(m->device, "driver", b, sizeof b, "unknown"));
    tvars_set(v, "cuda", "%s", rep_jtext(m->device, "cuda_runtime", b, sizeof b, "unknown"));
    tvars_set(v, "harness_commit", "%s", rep_jstr(m->harness, "git_commit", "unknown"));
    tvars_set(v, "harness_version", "%s", rep_jstr(m->harness, "version", "unknown"));
    if (m->seed >= 0)
        tvars_set(v, "seed", "%ld", m->seed);
    else
        tvars_set(v, "seed", "unknown");
    tvars_set(v, "n_sets", "%d", m->n_sets + m->n_bsets);
    tvars_set(v, "n_problems", "%ld", m->n_problems);
    tvars_set(v, "ci_pct", "%g", m->ci_level * 100);
    tvars_set(v, "resamples", "%ld", m->resamples);
    tvars_set(v, "mem_baseline", "%s", m->mem_baseline);
    tvars_set(v, "atol", "%s", rep_jtext(m->run_config, "atol", b, sizeof b, "unknown"));
    tvars_set(v, "rtol", "%s", rep_jtext(m->run_config, "rtol", b, sizeof b, "unknown"));
    /* The BF16 setting's tolerance; collect's 1e-2 where the manifest
     * predates recording it. */
    const cJSON *tb = m->run_config ? cJSON_GetObjectItemCaseSensitive(m->run_config, "tolerance_bf16") : NULL;
    tvars_set(v, "n_bf16_sets", "%d", m->n_bsets);
    tvars_set(v, "atol_bf16", "%s", rep_jtext(tb, "atol", b, sizeof b, "0.01"));
    tvars_set(v, "rtol_bf16", "%s", rep_jtext(tb, "rtol", b, sizeof b, "0.01"));
    /* Runs since the scale-aware rule record its factor (atol_scale); an
     * older run's absolute term was the plain atol. */
    const cJSON *sc = tb ? cJSON_GetObjectItemCaseSensitive(tb, "atol_scale") : NULL;
    int scaled = cJSON_IsString(sc) && sc->valuestring[0];
    tvars_set(v, "atol_bf16_scale", "%s", scaled ? " min(1, max |ref|)" : "");
    /* Runs since the float32 floor of that term record it (atol_min). */
    const cJSON *amin = tb ? cJSON_GetObjectItemCaseSensitive(tb, "atol_min") : NULL;
    char floor_txt[96] = "";
    if (cJSON_IsNumber(amin) && amin->valuedouble > 0)
        snprintf(floor_txt, sizeof floor_txt, ", and never below %.3g, float32's epsilon", amin->valuedouble);
    tvars_set(v, "bf16_tol_note", "%s%s",
              scaled ? "max |ref| over the output tensor: KernelBench-Verified's BF16 tolerance with its absolute "
                       "term scaled down for tensors of small values"
                     : "KernelBench-Verified's BF16 tolerance",
              floor_txt);
    /* Where the per-problem tables' D5 texts come from. */
    tvars_set(v, "d5_source", "%s",
              !m->d5 ? "not known for this run"
              : m->d5_from_suite ? "as kbv's suite defines it (templates/d5.json), since this run's manifest predates naming it"
                                 : "as the run's manifest records it");
    /* The protocol's settings as the manifest recorded them, for the
     * methods section; DESIGN.md's defaults where a manifest lacks them. */
    const cJSON *tm = m->run_config ? cJSON_GetObjectItemCaseSensitive(m->run_config, "timing") : NULL;
    tvars_set(v, "trials", "%s", rep_jtext(m->run_config, "correct_trials", b, sizeof b, "3"));
    tvars_set(v, "warmup_calls", "%s", rep_jtext(tm, "warmup_min_calls", b, sizeof b, "3"));
    tvars_set(v, "warmup_ms", "%s", rep_jtext(tm, "warmup_min_ms", b, sizeof b, "25"));
    tvars_set(v, "min_rounds", "%s", rep_jtext(tm, "min_samples", b, sizeof b, "30"));
    tvars_set(v, "max_rounds", "%s", rep_jtext(tm, "max_samples", b, sizeof b, "500"));
    tvars_set(v, "min_gpu_s", "%s", rep_jtext(tm, "min_gpu_s", b, sizeof b, "0.5"));
    tvars_set(v, "max_s", "%s", rep_jtext(tm, "max_s", b, sizeof b, "10"));
    const cJSON *scope = tm ? cJSON_GetObjectItemCaseSensitive(tm, "max_s_scope") : NULL;
    tvars_set(v, "max_s_of", "%s",
              cJSON_IsString(scope) && !strcmp(scope->valuestring, "pair")
                  ? "of the pair's timed calls and pre-rolls"
                  : "of one variant's timed calls and pre-rolls");
    /* Which interval the rule judged: by timed input set since the
     * manifest names the minimum rounds a set needs, pooled before. */
    const cJSON *iset_min = tm ? cJSON_GetObjectItemCaseSensitive(tm, "stop_input_set_min") : NULL;
    if (cJSON_IsNumber(iset_min))
        tvars_set(v, "stop_by_set", " (taken as it is reported: by timed input set where two sets hold %g rounds each)",
                  iset_min->valuedouble);
    else
        tvars_set(v, "stop_by_set", "%s", " (pooled over the rounds)");
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

void rep_set_vars(tvars *v, const rm_set *s)
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

int rep_expand(rctx *r, const char *where, const char *s, const tvars *v, char **out, kbv_err *e)
{
    return tmpl_expand(&r->t, where, s, v ? v : &r->gv, out, e);
}

/* --- output files ---------------------------------------------------------- */

/* Files go into the temporary report folder, which becomes visible only
 * when it is renamed into place after every file in it is complete; that
 * rename is what makes the report atomic.  Files are not fsync'ed one by
 * one: on a busy disk that took longer than drawing the whole report, and a
 * report can always be drawn again from analysis.json. */
int rep_write_file(rctx *r, const char *rel, const void *data, size_t len, kbv_err *e)
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

/* --- the whole --------------------------------------------------------------- */

static int build_text_and_pdf(rctx *r, kbv_err *e);

typedef struct fig_job {
    rctx *r;
    int rc;
    kbv_err e;
} fig_job;

static void *figures_thread(void *arg)
{
    fig_job *j = arg;
    j->rc = rfig_all(j->r, &j->e);
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
        job.rc = rfig_all(r, &job.e);
    if (rc == 0 && job.rc != 0) {
        *e = job.e;
        rc = job.rc;
    }
    return rc;
}

static int build_text_and_pdf(rctx *r, kbv_err *e)
{
    enum { T_HEAD, T_INFL, T_FASTP, T_HACKS, T_PARITY, T_DRIFT, T_LEVELS, T_FAIL, T_TOL, T_BF16, T_BF16FP, T_N };
    tbl disp[T_N], data[T_N], pall = {0}, pdata = {0}, bdisp = {0}, bdata = {0};
    memset(disp, 0, sizeof disp);
    memset(data, 0, sizeof data);
    int rc, n_findings = 0;
    if ((rc = rtab_headline(r, &disp[T_HEAD], &data[T_HEAD], e)) ||
        (rc = rtab_inflation(r, &disp[T_INFL], &data[T_INFL], e)) ||
        (rc = rtab_fast_p(r, &disp[T_FASTP], &data[T_FASTP], e)) ||
        (rc = rtab_hacks(r, &disp[T_HACKS], &data[T_HACKS], &n_findings, e)) ||
        (rc = rtab_parity(r, &disp[T_PARITY], &data[T_PARITY], e)) ||
        (rc = rtab_drift(r, &disp[T_DRIFT], &data[T_DRIFT], e)) ||
        (rc = rtab_levels(r, &disp[T_LEVELS], &data[T_LEVELS], e)) ||
        (rc = rtab_failures(r, &disp[T_FAIL], &data[T_FAIL], e)) ||
        (rc = rtab_tolerance(r, &disp[T_TOL], &data[T_TOL], e)) ||
        (rc = rtab_bf16(r, &disp[T_BF16], &data[T_BF16], e)) ||
        (rc = rtab_bf16_fast_p(r, &disp[T_BF16FP], &data[T_BF16FP], e)) ||
        (rc = rtab_problems(r, -1, &pall, e)) || (rc = rtab_problems_data(r, &pdata, e)))
        goto done;
    const char *const names[T_N] = {"headline", "inflation", "fast_p", "hacks", "baseline_parity",
                                    "baseline_drift", "levels", "failures", "tolerance", "headline_bf16",
                                    "fast_p_bf16"};
    const sec_id secs[T_N] = {SEC_HEADLINE, SEC_INFLATION, SEC_FAST_P, SEC_HACKS, SEC_PARITY, SEC_DRIFT,
                              SEC_LEVELS, SEC_FAILURES, SEC_TOLERANCE, SEC_BF16, SEC_N};
    for (int i = 0; i < T_N; i++) {
        /* Without parity.json there is no parity table (the PDF says so). */
        if (i == T_PARITY && !r->m->has_parity)
            continue;
        /* Nor a drift table for an analysis without baseline_drift. */
        if (i == T_DRIFT && !r->m->has_drift)
            continue;
        /* Nor the breakdowns an older analysis lacks. */
        if ((i == T_LEVELS && !rfig_any_levels(r->m)) || (i == T_FAIL && !rfig_any_failures(r->m)) ||
            (i == T_TOL && !rfig_any_sweep(r->m)))
            continue;
        /* The BF16 tables exist for a run with BF16 sets only. */
        if ((i == T_BF16 || i == T_BF16FP) && r->m->n_bsets == 0)
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
            if ((rc = rep_expand(r, "caption", ts->caption, &v, &cap, e)))
                goto done;
        }
        rc = rtab_emit(r, names[i], &disp[i], &data[i], cap, e);
        free(cap);
        if (rc)
            goto done;
    }
    if ((rc = rtab_emit(r, "problems", &pall, &pdata, NULL, e)))
        goto done;
    /* A run with BF16 sets lists their pairs apart: their one baseline is
     * not problems.csv's two. */
    if (r->m->n_bsets > 0 && ((rc = rtab_problems_bf16(r, &bdisp, &bdata, e)) ||
                              (rc = rtab_emit(r, "problems_bf16", &bdisp, &bdata, NULL, e))))
        goto done;
    rc = rflow_pdf(r, disp, n_findings, e);
done:
    for (int i = 0; i < T_N; i++) {
        tbl_free(&disp[i]);
        tbl_free(&data[i]);
    }
    tbl_free(&pall);
    tbl_free(&pdata);
    tbl_free(&bdisp);
    tbl_free(&bdata);
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

/* A run whose manifest names no D5 (collected before it did) gets the
 * suite's table that ships beside the report template, templates/d5.json,
 * and the per-problem caption says so. */
static int d5_fallback(rctx *r, kbv_err *e)
{
    char path[4200];
    const char *slash = strrchr(r->o->template_path, '/');
    if (slash)
        snprintf(path, sizeof path, "%.*s/d5.json", (int)(slash - r->o->template_path), r->o->template_path);
    else
        snprintf(path, sizeof path, "d5.json");
    return rmodel_d5_from(r->m, path, e);
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
        (rc = d5_fallback(&r, e)) || (rc = set_date(&r, e)) ||
        (rc = fontm_open(&r.fm, r.st.font_regular, r.st.font_bold, e)) || (rc = rfig_names(&r, e)))
        goto done;
    global_vars(&r);
    for (int i = 0; i < LBL_N; i++) {
        char where[64];
        snprintf(where, sizeof where, "labels[%d]", i);
        if (i == LBL_PAGE)
            continue;
        if ((rc = rep_expand(&r, where, r.t.labels[i], NULL, &r.labels[i], e)))
            goto done;
    }
    chart_ctx_init(&r.cx, r.m, &r.st, (const char *const *)r.labels, r.fm);
    chart_bf16_view(&r.bview, r.m);
    chart_ctx_init(&r.cxb, &r.bview, &r.st, (const char *const *)r.labels, r.fm);
    if ((rc = rfig_forest_plan(&r, e)))
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
    if (r.bf_names)
        for (int i = 0; r.m && i < r.m->n_bsets; i++)
            free(r.bf_names[i]);
    free(r.bf_names);
    free(r.forest_rows);
    for (int i = 0; i < LBL_N; i++)
        free(r.labels[i]);
    fontm_free(r.fm);
    rmodel_free(r.m);
    if (r.have_tmpl)
        tmpl_free(&r.t);
    return rc;
}

