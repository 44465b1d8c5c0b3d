/* analysis.c - see analysis.h. */
#include "analysis.h"
#include "schema.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "drift.h"
#include "jio.h"
#include "log.h"
#include "medboot.h"
#include "rng.h"
#include "stats.h"

const double analysis_fastp_points[ANALYSIS_N_FASTP] = {0, 0.5, 0.8, 1, 1.5, 2};

double analysis_curve_point(int k)
{
    return pow(10.0, -1.0 + (double)k / 30.0);
}

void analysis_default_opts(const run_data *r, analysis_opts *o)
{
    o->seed = r->seed;
    o->resamples = 10000;
    o->level = 0.95;
    o->threads = 1;
}

enum { BL_FP32 = 0, BL_TF32 = 1, N_BL = 2 };

/* One variant's samples, sorted, with their logarithms. */
typedef struct vdata {
    double *x, *logx, *logmid, *logmid2; /* owned; the logmids for even n only (medboot.h) */
    size_t n;
    const medboot_table *t;    /* borrowed from the shared cache */
    double median;             /* NAN without samples */
} vdata;

/* Everything about one problem of the set being analysed. */
typedef struct pctx {
    vdata v[RUN_NV];
    classify_result cr;
    int has_s[N_BL];           /* a speedup against the baseline exists */
    double s[N_BL], ls[N_BL];  /* point speedup and its logarithm */
    double s_lo[N_BL], s_hi[N_BL];
} pctx;

/* An estimate with its interval on the ratio scale, and its n. */
typedef struct est {
    double e, lo, hi;
    long n;                    /* -1: no "n" key */
} est;

typedef struct shared {
    const run_data *r;
    const analysis_opts *o;
    const medboot *mb;
} shared;

/* --- JSON helpers --------------------------------------------------------- */

static cJSON *est_json(const est *x)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    jio_add_num(o, "estimate", x->e);
    jio_add_num(o, "ci_low", x->lo);
    jio_add_num(o, "ci_high", x->hi);
    if (x->n >= 0) cJSON_AddNumberToObject(o, "n", (double)x->n);
    return o;
}

static void add_est(cJSON *parent, const char *key, const est *x)
{
    cJSON *o = est_json(x);
    if (o) cJSON_AddItemToObject(parent, key, o);
}

static void add_num_or_null(cJSON *o, const char *key, int have, double v)
{
    if (have) jio_add_num(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

/* --- per-problem work ----------------------------------------------------- */

static int vdata_fill(vdata *d, const run_vec *src, const medboot *mb, kbv_err *e)
{
    d->n = src->n;
    d->median = NAN;
    if (!d->n) return 0;
    d->x = malloc(d->n * sizeof *d->x);
    d->logx = malloc(d->n * sizeof *d->logx);
    if (!d->x || !d->logx) return err_set(e, KBV_ENOMEM, "out of memory");
    memcpy(d->x, src->v, d->n * sizeof *d->x);
    stats_sort(d->x, d->n);
    for (size_t i = 0; i < d->n; i++) d->logx[i] = log(d->x[i]);
    if (d->n % 2 == 0) {
        d->logmid = malloc(d->n * sizeof *d->logmid);
        d->logmid2 = malloc(d->n * sizeof *d->logmid2);
        if (!d->logmid || !d->logmid2) return err_set(e, KBV_ENOMEM, "out of memory");
        for (size_t i = 0; i + 1 < d->n; i++) d->logmid[i] = log(0.5 * (d->x[i] + d->x[i + 1]));
        for (size_t i = 0; i + 2 < d->n; i++) d->logmid2[i] = log(0.5 * (d->x[i] + d->x[i + 2]));
    }
    d->median = stats_median_sorted(d->x, d->n);
    d->t = medboot_get(mb, d->n);
    if (!d->t) return err_set(e, KBV_ERUNTIME, "internal: no median table for n = %zu", d->n);
    return 0;
}

static void vdata_free(vdata *d)
{
    free(d->x);
    free(d->logx);
    free(d->logmid);
    free(d->logmid2);
    d->x = d->logx = d->logmid = d->logmid2 = NULL;
}

/* The bootstrap replicates of a problem's log speedups against both
 * baselines, replicate b against baseline bl into col[b * step + bl], and
 * their percentile intervals (tmp[bl], B values each, is scratch).  The
 * candidate's draws are shared by the two ratios; each variant has its own
 * stream, so the variants are resampled independently. */
static void speedup_ci(const shared *sh, size_t set, size_t prob, pctx *p, float *col, size_t step,
                       double *tmp[N_BL])
{
    size_t B = sh->o->resamples;
    rng rc, rb[N_BL];
    rng_init(&rc, sh->o->seed, set, prob, RNG_P_CAND);
    rng_init(&rb[BL_FP32], sh->o->seed, set, prob, RNG_P_FP32);
    rng_init(&rb[BL_TF32], sh->o->seed, set, prob, RNG_P_TF32);
    const vdata *c = &p->v[RUN_V_CAND];
    for (size_t b = 0; b < B; b++) {
        double lc = medboot_draw_log(c->t, c->x, c->logx, c->logmid, c->logmid2, &rc);
        for (int bl = 0; bl < N_BL; bl++) {
            if (!p->has_s[bl]) continue;
            const vdata *v = &p->v[1 + bl];
            tmp[bl][b] = medboot_draw_log(v->t, v->x, v->logx, v->logmid, v->logmid2, &rb[bl]) - lc;
        }
    }
    for (int bl = 0; bl < N_BL; bl++) {
        if (!p->has_s[bl]) continue;
        /* The geometric means' inner draws keep the random order; single
         * precision (a relative 6e-8 on a log speedup) halves their memory
         * traffic, while the problem's own interval uses the doubles. */
        for (size_t b = 0; b < B; b++) col[b * step + (size_t)bl] = (float)tmp[bl][b];
        double lo, hi;
        stats_percentile(tmp[bl], B, sh->o->level, &lo, &hi);
        p->s_lo[bl] = exp(lo);
        p->s_hi[bl] = exp(hi);
    }
}

double analysis_ratio_ci(const double *base_sorted, size_t nb, const double *cand_sorted, size_t nc,
                         uint64_t seed, size_t B, double level, double *lo, double *hi, kbv_err *e)
{
    medboot *mb = NULL;
    double *buf = malloc(B * sizeof *buf), point = NAN;
    vdata vb = {0}, vc = {0};
    run_vec sb = {(double *)base_sorted, nb, nb}, sc = {(double *)cand_sorted, nc, nc};
    *lo = *hi = NAN;
    if (!buf) {
        err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }
    if (medboot_new(&mb, e) || medboot_prepare(mb, nb, e) || medboot_prepare(mb, nc, e)) goto done;
    if (vdata_fill(&vb, &sb, mb, e) || vdata_fill(&vc, &sc, mb, e)) goto done;
    rng rc, rbase;
    rng_init(&rc, seed, 0, 0, RNG_P_CAND);
    rng_init(&rbase, seed, 0, 0, RNG_P_FP32);
    for (size_t b = 0; b < B; b++) {
        double c = medboot_draw_log(vc.t, vc.x, vc.logx, vc.logmid, vc.logmid2, &rc);
        buf[b] = medboot_draw_log(vb.t, vb.x, vb.logx, vb.logmid, vb.logmid2, &rbase) - c;
    }
    stats_percentile(buf, B, level, lo, hi);
    *lo = exp(*lo);
    *hi = exp(*hi);
    point = vb.median / vc.median;
done:
    vdata_free(&vb);
    vdata_free(&vc);
    medboot_free(mb);
    free(buf);
    return point;
}

/* --- set-level geometric means -------------------------------------------- */

/* The geometric means of a set (of speedups over its correct problems, of
 * max(1, s) over all problems, and those of the inflation steps) and their
 * intervals: a two-level bootstrap, B resamples of n problems with
 * replacement, each picked problem's log speedup redrawn from its own
 * samples, then BCa with the jackknife over problems.  The inner draws are
 * the problem's B stored replicates (exact median draws, in the random order
 * they were drawn): the c-th copy of problem i in outer resample b takes
 * replicate (b + c) mod B.  Copies within a resample thus get distinct,
 * independent draws (each outer resample has exactly the two-level
 * distribution), and with the replicates stored by b, then problem, outer
 * resample b reads one short stretch of memory after another. */

/* Per-set storage shared by the geometric means. */
typedef struct geo_store {
    /* reps[(b * (np + 1) + i) * N_BL + bl]: replicate b of problem i against
     * baseline bl; zero where the problem has no speedup, and in the extra
     * column np, which stands for a problem counted as a speedup of 1. */
    float *reps;
    size_t np;
} geo_store;

static double geo_value(const pctx *p, unsigned char use, int bl, int clamp)
{
    if (!(use & (1u << bl))) return 0;
    double v = p->ls[bl];
    return clamp && v < 0 ? 0 : v;
}

/* One geometric mean being bootstrapped: its members, its own stream, its
 * replicates, and where its estimates go.  All of a set's geometric means
 * walk the outer resamples together, so that each row of stored replicates
 * is brought from memory once for all of them; each keeps its own stream,
 * so the result is that of running them one after another. */
typedef struct geo_job {
    size_t n;
    size_t *map;                /* n storage columns (st->np: the zero column) */
    double *val[N_BL];          /* the members' point values (log s, clamped, 0) */
    int clamp;
    unsigned want;
    rng r;
    uint32_t *cnt;              /* per column, copies so far in resample gen[] */
    size_t *gen;
    double *reps[N_BL];         /* B outer replicates of the mean log speedup */
    est *out;                   /* out[bl] for the wanted baselines */
} geo_job;

#define GEO_MAX_JOBS 8

typedef struct geo_jobs {
    geo_job job[GEO_MAX_JOBS];
    int n;
} geo_jobs;

static void geo_jobs_free(geo_jobs *js)
{
    for (int k = 0; k < js->n; k++) {
        geo_job *j = &js->job[k];
        free(j->map);
        free(j->val[0]);
        free(j->val[1]);
        free(j->cnt);
        free(j->gen);
        free(j->reps[0]);
        free(j->reps[1]);
    }
    js->n = 0;
}

/* Adds a geometric mean over the members sub[0..n) of the set: member i
 * adds log s_i(baseline) when bit bl of use[i] is set and 0 (a speedup of
 * 1) otherwise; clamp makes it max(0, log s), i.e. max(1, s) (geomean_all).
 * Estimates go to out[bl] for the baselines in want; n = 0 gives nulls. */
static int geo_add(geo_jobs *js, const shared *sh, size_t set, const pctx *pc, const geo_store *st,
                   const size_t *sub, size_t n, const unsigned char *use, int clamp, unsigned want,
                   uint64_t purpose, est *out, kbv_err *e)
{
    for (int bl = 0; bl < N_BL; bl++)
        if (want & (1u << bl)) out[bl] = (est){NAN, NAN, NAN, (long)n};
    if (!n) return 0;
    if (js->n == GEO_MAX_JOBS) return err_set(e, KBV_ERUNTIME, "internal: too many geometric means");
    size_t B = sh->o->resamples;
    geo_job *j = &js->job[js->n++];
    memset(j, 0, sizeof *j);
    j->n = n;
    j->clamp = clamp;
    j->want = want;
    j->out = out;
    j->map = malloc(n * sizeof *j->map);
    j->val[0] = malloc(n * sizeof(double));
    j->val[1] = malloc(n * sizeof(double));
    j->cnt = calloc(st->np + 1, sizeof *j->cnt);
    j->gen = malloc((st->np + 1) * sizeof *j->gen);
    j->reps[0] = malloc(B * sizeof(double));
    j->reps[1] = malloc(B * sizeof(double));
    if (!j->map || !j->val[0] || !j->val[1] || !j->cnt || !j->gen || !j->reps[0] || !j->reps[1])
        return err_set(e, KBV_ENOMEM, "out of memory");
    for (size_t c = 0; c <= st->np; c++) j->gen[c] = SIZE_MAX;
    for (size_t k = 0; k < n; k++) {
        size_t i = sub[k];
        /* A member that adds nothing for the wanted baselines (geomean_all's
         * non-correct problems) reads the zero column. */
        j->map[k] = (use[i] & want) ? i : st->np;
        for (int bl = 0; bl < N_BL; bl++) j->val[bl][k] = geo_value(&pc[i], use[i], bl, clamp);
    }
    rng_init(&j->r, sh->o->seed, set, RNG_NO_PROBLEM, purpose);
    return 0;
}

/* Outer resample b of job j; clamp is a constant at each call, so that the
 * compiler drops the branch. */
static inline void geo_resample_one(geo_job *j, const float *base, size_t row, size_t b, size_t B, int clamp)
{
    double s0 = 0, s1 = 0;
    size_t n = j->n;
    for (size_t k = 0; k < n; k++) {
        size_t i = j->map[rng_below(&j->r, (uint32_t)n)];
        uint32_t c = j->cnt[i] & (uint32_t)-(int32_t)(j->gen[i] == b);
        j->cnt[i] = c + 1;
        j->gen[i] = b;
        size_t col = b + c;
        if (col >= B) col %= B;
        const float *d = &base[col * row + i * N_BL];
        if (clamp) {
            s0 += d[0] > 0 ? d[0] : 0;
            s1 += d[1] > 0 ? d[1] : 0;
        } else {
            s0 += d[0];
            s1 += d[1];
        }
    }
    j->reps[0][b] = s0 / (double)n;
    j->reps[1][b] = s1 / (double)n;
}

/* Runs every job's outer resamples, then their BCa intervals (jack: scratch
 * for the largest n). */
static void geo_jobs_run(geo_jobs *js, const shared *sh, const geo_store *st, double *jack)
{
    size_t B = sh->o->resamples, row = (st->np + 1) * N_BL;
    size_t row_bytes = row * sizeof(float);
    for (size_t b = 0; b < B; b++) {
        /* The picks land anywhere in a row, which defeats the hardware's
         * prefetch; fetching the row two resamples ahead keeps the loop from
         * waiting on memory. */
        if (b + 2 < B) {
            const char *ahead = (const char *)&st->reps[(b + 2) * row];
            for (size_t off = 0; off < row_bytes; off += 64) __builtin_prefetch(ahead + off);
        }
        for (int k = 0; k < js->n; k++) {
            if (js->job[k].clamp) geo_resample_one(&js->job[k], st->reps, row, b, B, 1);
            else geo_resample_one(&js->job[k], st->reps, row, b, B, 0);
        }
    }
    for (int k = 0; k < js->n; k++) {
        geo_job *j = &js->job[k];
        size_t n = j->n;
        for (int bl = 0; bl < N_BL; bl++) {
            if (!(j->want & (1u << bl))) continue;
            double S = 0;
            for (size_t m = 0; m < n; m++) S += j->val[bl][m];
            double theta = S / (double)n;
            size_t nj = 0;
            if (n >= 2)
                for (size_t m = 0; m < n; m++) jack[nj++] = (S - j->val[bl][m]) / (double)(n - 1);
            double lo, hi;
            stats_bca(theta, j->reps[bl], B, jack, nj, sh->o->level, &lo, &hi);
            j->out[bl].e = exp(theta);
            j->out[bl].lo = exp(lo);
            j->out[bl].hi = exp(hi);
        }
    }
}

/* Adds the geometric mean over the members of the set selected by
 * sel[i] & (1 << bl) for each wanted baseline: one job for both baselines
 * when they select the same problems, one each otherwise.  sub is scratch
 * (np entries). */
static int geo_select(geo_jobs *js, const shared *sh, size_t set, const pctx *pc, const geo_store *st,
                      const unsigned char *sel, unsigned want, uint64_t purpose, size_t *sub, est *out,
                      kbv_err *e)
{
    size_t np = st->np;
    int same = 1;
    if (want == 3)
        for (size_t i = 0; i < np; i++)
            if (((sel[i] >> 0) & 1) != ((sel[i] >> 1) & 1)) same = 0;
    unsigned passes[2] = {want, 0};
    if (want == 3 && !same) {
        passes[0] = 1;
        passes[1] = 2;
    }
    for (int k = 0; k < 2 && passes[k]; k++) {
        unsigned w = passes[k];
        size_t n = 0;
        for (size_t i = 0; i < np; i++)
            if (sel[i] & w) sub[n++] = i;
        int rc = geo_add(js, sh, set, pc, st, sub, n, sel, 0, w, purpose | ((uint64_t)(passes[1] ? w : 0) << 8),
                         out, e);
        if (rc) return rc;
    }
    return 0;
}

/* --- fast_p and shares ---------------------------------------------------- */

/* k of n qualify: the estimate k/n and the exact bootstrap-over-problems
 * percentile interval, the quantiles of Binomial(n, k/n) / n. */
static est share_est(long k, long n, double level, int with_n)
{
    est x = {NAN, NAN, NAN, with_n ? n : -1};
    if (n <= 0) return x;
    double q = (double)k / (double)n, a = (1 - level) / 2;
    x.e = q;
    x.lo = (double)stats_binom_quantile(n, q, a) / (double)n;
    x.hi = (double)stats_binom_quantile(n, q, 1 - a) / (double)n;
    return x;
}

static cJSON *fastp_json(const pctx *pc, size_t np, int bl, double p, double level)
{
    long k = 0;
    for (size_t i = 0; i < np; i++)
        k += pc[i].cr.cls == CL_CORRECT && pc[i].has_s[bl] && pc[i].s[bl] > p;
    est x = share_est(k, (long)np, level, 0);
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddNumberToObject(o, "p", p);
    jio_add_num(o, "estimate", x.e);
    jio_add_num(o, "ci_low", x.lo);
    jio_add_num(o, "ci_high", x.hi);
    return o;
}

/* --- memory --------------------------------------------------------------- */

static est memory_geomean(const shared *sh, size_t set, const double *v, size_t n, double *reps, double *jack)
{
    est x = {NAN, NAN, NAN, (long)n};
    if (!n) return x;
    size_t B = sh->o->resamples;
    rng r;
    rng_init(&r, sh->o->seed, set, RNG_NO_PROBLEM, RNG_G_MEMORY);
    double S = 0;
    for (size_t k = 0; k < n; k++) S += v[k];
    for (size_t b = 0; b < B; b++) {
        double sum = 0;
        for (size_t k = 0; k < n; k++) sum += v[rng_below(&r, (uint32_t)n)];
        reps[b] = sum / (double)n;
    }
    size_t nj = 0;
    if (n >= 2)
        for (size_t k = 0; k < n; k++) jack[nj++] = (S - v[k]) / (double)(n - 1);
    double lo, hi, theta = S / (double)n;
    stats_bca(theta, reps, B, jack, nj, sh->o->level, &lo, &hi);
    x.e = exp(theta);
    x.lo = exp(lo);
    x.hi = exp(hi);
    return x;
}

/* --- one set -------------------------------------------------------------- */

static cJSON *problem_json(const run_data *r, size_t set, size_t i, const pctx *p)
{
    const run_pair *pr = run_pair_at(r, set, i);
    cJSON *o = cJSON_CreateObject(), *flags, *ev, *it, *sub;
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "problem", r->problem_ids[i]);
    cJSON_AddStringToObject(o, "class", classify_class_names[p->cr.cls]);
    flags = cJSON_AddArrayToObject(o, "flags");
    for (int f = 0; f < FL_N; f++)
        if (p->cr.flags & (1u << f)) cJSON_AddItemToArray(flags, cJSON_CreateString(classify_flag_names[f]));
    ev = cJSON_AddArrayToObject(o, "evidence");
    it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "kind", "class");
    cJSON_AddStringToObject(it, "name", classify_class_names[p->cr.cls]);
    cJSON_AddStringToObject(it, "text", p->cr.class_text);
    cJSON_AddItemToArray(ev, it);
    for (int f = 0; f < FL_N; f++) {
        if (!(p->cr.flags & (1u << f))) continue;
        it = cJSON_CreateObject();
        cJSON_AddStringToObject(it, "kind", "flag");
        cJSON_AddStringToObject(it, "name", classify_flag_names[f]);
        cJSON_AddStringToObject(it, "text", p->cr.flag_text[f]);
        cJSON_AddItemToArray(ev, it);
    }
    sub = cJSON_AddObjectToObject(o, "speedup");
    for (int bl = 0; bl < N_BL; bl++) {
        const char *key = run_variant_names[1 + bl];
        if (p->has_s[bl]) {
            est x = {p->s[bl], p->s_lo[bl], p->s_hi[bl], -1};
            add_est(sub, key, &x);
        } else {
            cJSON_AddNullToObject(sub, key);
        }
    }
    sub = cJSON_AddObjectToObject(o, "time_ms");
    for (int v = 0; v < RUN_NV; v++) add_num_or_null(sub, run_variant_names[v], p->v[v].n > 0, p->v[v].median);
    sub = cJSON_AddObjectToObject(o, "n_samples");
    for (int v = 0; v < RUN_NV; v++) cJSON_AddNumberToObject(sub, run_variant_names[v], (double)p->v[v].n);
    sub = cJSON_AddObjectToObject(o, "peak_bytes");
    for (int v = 0; v < RUN_NV; v++) add_num_or_null(sub, run_variant_names[v], pr->have_mem[v], pr->peak_bytes[v]);
    add_num_or_null(o, "max_rel_err", !isnan(p->cr.max_rel_err), p->cr.max_rel_err);
    if (p->cr.tier >= 0) cJSON_AddStringToObject(o, "tier", run_tier_names[p->cr.tier]);
    else cJSON_AddNullToObject(o, "tier");
    return o;
}

static int set_build(const shared *sh, size_t set, cJSON **out, kbv_err *e)
{
    const run_data *r = sh->r;
    size_t np = r->n_problems, B = sh->o->resamples;
    double level = sh->o->level;
    int rc = 0;
    pctx *pc = calloc(np + 1, sizeof *pc);
    double *reps[N_BL] = {malloc(B * sizeof(double)), malloc(B * sizeof(double))};
    double *jack = malloc((np + 1) * sizeof *jack), *memv = malloc((np + 1) * sizeof *memv);
    size_t *sub = malloc((np + 1) * sizeof *sub);
    unsigned char *sel = calloc(np + 1, 1);
    geo_store st = {calloc((np + 1) * B * N_BL, sizeof(float)), np};
    geo_jobs jobs = {.n = 0};
    cJSON *o = cJSON_CreateObject();
    if (!pc || !reps[0] || !reps[1] || !jack || !memv || !sub || !sel || !st.reps || !o) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }

    long counts[CL_N] = {0};
    for (size_t i = 0; i < np; i++) {
        pctx *p = &pc[i];
        const run_pair *pr = run_pair_at(r, set, i);
        for (int v = 0; v < RUN_NV; v++)
            if ((rc = vdata_fill(&p->v[v], &pr->times[v], sh->mb, e))) goto done;
        classify_pair(r, pr, p->v[RUN_V_CAND].median, &p->cr);
        counts[p->cr.cls]++;
        /* An error has no speedup, whatever samples it left; nor has a
         * missing candidate or one whose records are not to be trusted. */
        for (int bl = 0; bl < N_BL; bl++) {
            p->has_s[bl] = p->cr.cls != CL_ERROR && p->cr.cls != CL_MISSING && p->cr.cls != CL_TAMPERING &&
                           p->v[RUN_V_CAND].n > 0 && p->v[1 + bl].n > 0;
            p->s[bl] = p->s_lo[bl] = p->s_hi[bl] = p->ls[bl] = NAN;
            if (p->has_s[bl]) {
                p->s[bl] = p->v[1 + bl].median / p->v[RUN_V_CAND].median;
                p->ls[bl] = log(p->s[bl]);
            }
        }
        if (p->has_s[0] || p->has_s[1]) speedup_ci(sh, set, i, p, st.reps + i * N_BL, (np + 1) * N_BL, reps);
    }

    cJSON_AddStringToObject(o, "name", r->set_names[set]);
    cJSON_AddNumberToObject(o, "n_problems", (double)np);
    cJSON *cj = cJSON_AddObjectToObject(o, "counts");
    for (int c = 0; c < CL_N; c++) cJSON_AddNumberToObject(cj, classify_class_names[c], (double)counts[c]);

    /* Geometric means: correct problems, all problems, and the inflation
     * steps (passing D1; passing D1 and the hidden distributions). */
    est g_correct[N_BL], g_all[N_BL], g_orig[N_BL], g_hidden[N_BL];
    for (size_t i = 0; i < np; i++)
        sel[i] = pc[i].cr.cls == CL_CORRECT ? (unsigned char)(pc[i].has_s[0] | pc[i].has_s[1] << 1) : 0;
    /* The selections are copied into the jobs, so sel can change between
     * them; the jobs then run together. */
    if ((rc = geo_select(&jobs, sh, set, pc, &st, sel, 3, RNG_G_CORRECT, sub, g_correct, e))) goto done;
    /* geomean_all: every problem, correct ones as max(1, s). */
    for (size_t i = 0; i < np; i++) sub[i] = i;
    if ((rc = geo_add(&jobs, sh, set, pc, &st, sub, np, sel, 1, 3, RNG_G_ALL, g_all, e))) goto done;
    for (size_t i = 0; i < np; i++)
        sel[i] = pc[i].cr.passes_d1 && pc[i].has_s[BL_FP32] ? 1 : 0;
    if ((rc = geo_select(&jobs, sh, set, pc, &st, sel, 1, RNG_G_ORIGINAL, sub, g_orig, e))) goto done;
    for (size_t i = 0; i < np; i++)
        if (pc[i].cr.cls == CL_HIDDEN_FAIL) sel[i] = 0;
    if ((rc = geo_select(&jobs, sh, set, pc, &st, sel, 1, RNG_G_HIDDEN, sub, g_hidden, e))) goto done;
    geo_jobs_run(&jobs, sh, &st, jack);

    cJSON *bj = cJSON_AddObjectToObject(o, "baselines");
    for (int bl = 0; bl < N_BL; bl++) {
        cJSON *b = cJSON_AddObjectToObject(bj, run_variant_names[1 + bl]);
        add_est(b, "geomean_speedup_correct", &g_correct[bl]);
        g_all[bl].n = (long)np;
        add_est(b, "geomean_speedup_all", &g_all[bl]);
        cJSON *fp = cJSON_AddArrayToObject(b, "fast_p");
        for (int k = 0; k < ANALYSIS_N_FASTP; k++)
            cJSON_AddItemToArray(fp, fastp_json(pc, np, bl, analysis_fastp_points[k], level));
        cJSON *fc = cJSON_AddArrayToObject(b, "fast_p_curve");
        for (int k = 0; k < ANALYSIS_N_CURVE; k++)
            cJSON_AddItemToArray(fc, fastp_json(pc, np, bl, analysis_curve_point(k), level));
    }

    /* Memory against the tf32 baseline, over correct problems with both
     * peaks recorded. */
    size_t nm = 0;
    long less = 0;
    for (size_t i = 0; i < np; i++) {
        const run_pair *pr = run_pair_at(r, set, i);
        if (pc[i].cr.cls != CL_CORRECT || !pr->have_mem[RUN_V_CAND] || !pr->have_mem[RUN_V_TF32]) continue;
        double c = pr->peak_bytes[RUN_V_CAND], b = pr->peak_bytes[RUN_V_TF32];
        if (!(c > 0 && b > 0)) continue;
        memv[nm++] = log(b / c);
        less += c < b;
    }
    est m_eff = memory_geomean(sh, set, memv, nm, reps[0], jack);
    est m_share = share_est(less, (long)nm, level, 1);
    cJSON *mj = cJSON_AddObjectToObject(o, "memory");
    add_est(mj, "efficiency_geomean", &m_eff);
    add_est(mj, "efficient_share", &m_share);

    cJSON *inf = cJSON_AddArrayToObject(o, "inflation");
    static const char *const steps[4][2] = {{"original", "fp32 baseline, D1 only"},
                                            {"hidden", "+ hidden distributions"},
                                            {"probes", "+ hack probes"},
                                            {"tf32", "+ tf32 baseline"}};
    const est *vals[4] = {&g_orig[BL_FP32], &g_hidden[BL_FP32], &g_correct[BL_FP32], &g_correct[BL_TF32]};
    for (int k = 0; k < 4; k++) {
        cJSON *step = cJSON_CreateObject();
        cJSON_AddStringToObject(step, "step", steps[k][0]);
        cJSON_AddStringToObject(step, "label", steps[k][1]);
        add_est(step, "geomean", vals[k]);
        cJSON_AddItemToArray(inf, step);
    }

    cJSON *pj = cJSON_AddArrayToObject(o, "problems");
    for (size_t i = 0; i < np; i++) cJSON_AddItemToArray(pj, problem_json(r, set, i, &pc[i]));

done:
    for (size_t i = 0; pc && i < np; i++)
        for (int v = 0; v < RUN_NV; v++) vdata_free(&pc[i].v[v]);
    free(pc);
    free(reps[0]);
    free(reps[1]);
    free(jack);
    free(memv);
    free(sub);
    free(sel);
    free(st.reps);
    geo_jobs_free(&jobs);
    if (rc) {
        cJSON_Delete(o);
        return rc;
    }
    *out = o;
    return 0;
}

/* --- threads over sets ---------------------------------------------------- */

typedef struct worker {
    const shared *sh;
    cJSON **sets;
    size_t first, step;
    int rc;
    kbv_err err;
    pthread_t tid;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (size_t s = w->first; s < w->sh->r->n_sets; s += w->step) {
        w->rc = set_build(w->sh, s, &w->sets[s], &w->err);
        if (w->rc) break;
    }
    return NULL;
}

int analysis_build(const run_data *r, const analysis_opts *o, cJSON **out, kbv_err *e)
{
    int rc = 0;
    medboot *mb = NULL;
    cJSON **sets = calloc(r->n_sets + 1, sizeof *sets);
    worker *ws = NULL;
    cJSON *root = NULL;
    if (o->resamples < 1 || o->resamples > 100000000) {
        free(sets);
        return err_set(e, KBV_EUSAGE, "bootstrap resamples must be between 1 and 1e8");
    }
    if (!sets) return err_set(e, KBV_ENOMEM, "out of memory");

    /* The median tables depend on the sample count only; building them all
     * first lets the threads share them read-only. */
    if ((rc = medboot_new(&mb, e))) goto done;
    for (size_t i = 0; i < r->n_sets * r->n_problems; i++)
        for (int v = 0; v < RUN_NV; v++)
            if ((rc = medboot_prepare(mb, r->pairs[i].times[v].n, e))) goto done;

    shared sh = {r, o, mb};
    size_t nt = o->threads < 1 ? 1 : (size_t)o->threads;
    if (nt > r->n_sets) nt = r->n_sets ? r->n_sets : 1;
    ws = calloc(nt, sizeof *ws);
    if (!ws) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }
    size_t started = 0;
    for (size_t t = 0; t < nt; t++) {
        ws[t] = (worker){.sh = &sh, .sets = sets, .first = t, .step = nt};
        if (t == 0) continue;
        if (pthread_create(&ws[t].tid, NULL, worker_main, &ws[t]) != 0) break;
        started = t;
    }
    /* Sets a thread failed to start are done here, after worker 0's own. */
    worker_main(&ws[0]);
    for (size_t t = 1; t <= started; t++) pthread_join(ws[t].tid, NULL);
    for (size_t t = started + 1; t < nt && !ws[0].rc; t++) worker_main(&ws[t]);
    for (size_t t = 0; t < nt; t++)
        if (ws[t].rc) {
            if (e) *e = ws[t].err;
            rc = ws[t].rc;
            goto done;
        }

    root = cJSON_CreateObject();
    if (!root) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }
    cJSON_AddStringToObject(root, KBV_K_SCHEMA, KBV_SCHEMA_ANALYSIS);
    cJSON_AddStringToObject(root, "run_id", r->run_id);
    cJSON_AddStringToObject(root, "created_utc", r->created_utc);
    static const char *const copied[] = {"harness", "device"};
    for (int k = 0; k < 2; k++) {
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(r->manifest, copied[k]);
        cJSON_AddItemToObject(root, copied[k], src ? cJSON_Duplicate(src, 1) : cJSON_CreateNull());
    }
    cJSON *cfg = cJSON_AddObjectToObject(root, "config");
    cJSON_AddNumberToObject(cfg, "bootstrap_resamples", (double)o->resamples);
    cJSON_AddNumberToObject(cfg, "bootstrap_seed", (double)o->seed);
    cJSON_AddNumberToObject(cfg, "ci_level", o->level);
    cJSON_AddItemToObject(cfg, "fast_p_points", cJSON_CreateDoubleArray(analysis_fastp_points, ANALYSIS_N_FASTP));
    cJSON_AddStringToObject(cfg, "memory_baseline", "tf32");
    cJSON *cl = cJSON_AddArrayToObject(root, "classes");
    for (int c = 0; c < CL_N; c++) cJSON_AddItemToArray(cl, cJSON_CreateString(classify_class_names[c]));
    cJSON *sj = cJSON_AddArrayToObject(root, "sets");
    for (size_t s = 0; s < r->n_sets; s++) {
        cJSON_AddItemToArray(sj, sets[s]);
        sets[s] = NULL;
    }
    /* Baselines whose median moved between the sets of the run (drift.h). */
    cJSON *drift = NULL;
    if ((rc = drift_build(r, o->level, &drift, e))) goto done;
    cJSON_AddItemToObject(root, "baseline_drift", drift);
    *out = root;
    root = NULL;
done:
    for (size_t s = 0; s < r->n_sets; s++) cJSON_Delete(sets[s]);
    free(sets);
    free(ws);
    cJSON_Delete(root);
    medboot_free(mb);
    return rc;
}
