/* analysis.c - see analysis.h. */
#include "analysis.h"
#include "schema.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "aroot.h"
#include "rvec.h"
#include "classify.h"
#include "jio.h"
#include "log.h"
#include "medboot.h"
#include "paired.h"
#include "prec.h"
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

/* A set's baselines fill the slots in the order prec_baselines gives them:
 * fp32 and tf32 for an FP32 set, bf16 alone (slot 0) for a BF16 set, whose
 * slot 1 then holds nothing.  Slot 0 is the headline's baseline. */
enum { BL_FP32 = 0, BL_TF32 = 1, N_BL = RUN_MAX_BL };

/* A sorted sample with its logarithms, for exact draws of its median. */
typedef struct vdata {
    double *x, *logx, *logmid, *logmid2; /* owned; the logmids for even n only (medboot.h) */
    size_t n;
    const medboot_table *t;    /* borrowed from the shared cache */
    double median;             /* NAN without values */
} vdata;

/* Everything about one problem of the set being analysed. */
typedef struct pctx {
    double median[RUN_NV];     /* time_ms: rvec_centre of the variant's samples, NAN without */
    /* The paired ratios baseline / candidate (paired.h), one sorted sample
     * per input set where the speedup is stratified (nq > 1), else q[bl][0]
     * alone; nr[bl] ratios in all. */
    vdata q[N_BL][PAIRED_MAX_STRATA];
    int nq[N_BL];
    size_t nr[N_BL];
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
    /* Every pair's paired ratios (N_BL is RUN_MAX_BL); owned by
     * analysis_build. */
    const paired_table *pt;
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

/* Fills d from the n values v (copied and sorted). */
static int vdata_fill(vdata *d, const double *v, size_t n, const medboot *mb, kbv_err *e)
{
    d->n = n;
    d->median = NAN;
    if (!d->n) return 0;
    d->x = malloc(d->n * sizeof *d->x);
    d->logx = malloc(d->n * sizeof *d->logx);
    if (!d->x || !d->logx) return err_set(e, KBV_ENOMEM, "out of memory");
    memcpy(d->x, v, d->n * sizeof *d->x);
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

/* The ratios of pair-and-baseline k into p->q[bl] (one sorted sample, or
 * one per input set where the speedup is stratified), p->nq[bl] and
 * p->nr[bl]. */
static int ratios_fill(const shared *sh, size_t k, pctx *p, int bl, kbv_err *e)
{
    const paired_table *t = sh->pt;
    const double *x = t->ratios[k];
    p->nr[bl] = t->n[k];
    p->nq[bl] = t->n_strata[k] ? t->n_strata[k] : 1;
    if (!t->n_strata[k]) return vdata_fill(&p->q[bl][0], x, t->n[k], sh->mb, e);
    for (int q = 0; q < t->n_strata[k]; q++) {
        int rc = vdata_fill(&p->q[bl][q], x, t->strata[k][q], sh->mb, e);
        if (rc) return rc;
        x += t->strata[k][q];
    }
    return 0;
}

/* B bootstrap replicates of the log of the median of the sorted ratios q,
 * resampling rounds (each ratio is one round's pair) with replacement, into
 * out[0..B).  The median of a resample is drawn from its exact distribution
 * (medboot.h), which is that of resampling the n pairs and taking the median
 * of their ratios.  Both baselines of a problem start the stream (seed, set,
 * problem, RNG_P_RATIO) afresh: with equal round counts they draw the same
 * order-statistic positions, so equal ratios give equal replicates, and two
 * aggregates over equal values equal intervals. */
static void ratio_reps(const vdata *q, int nq, uint64_t seed, size_t set, size_t prob, size_t B, double *out)
{
    rng r;
    rng_init(&r, seed, set, prob, RNG_P_RATIO);
    /* Stratified (nq > 1): rounds are resampled within each input set, and
     * the replicate is the mean of the sets' log medians, as the point
     * estimate is. */
    for (size_t b = 0; b < B; b++) {
        double sum = 0;
        for (int k = 0; k < nq; k++)
            sum += medboot_draw_log(q[k].t, q[k].x, q[k].logx, q[k].logmid, q[k].logmid2, &r);
        out[b] = sum / nq;
    }
}

/* The bootstrap replicates of a problem's log speedups against both
 * baselines, replicate b against baseline bl into col[b * step + bl], and
 * their percentile intervals (tmp, B values, is scratch). */
static void speedup_ci(const shared *sh, size_t set, size_t prob, pctx *p, float *col, size_t step, double *tmp)
{
    size_t B = sh->o->resamples;
    for (int bl = 0; bl < N_BL; bl++) {
        if (!p->has_s[bl]) continue;
        ratio_reps(p->q[bl], p->nq[bl], sh->o->seed, set, prob, B, tmp);
        /* The set's aggregates read these in the random order they were
         * drawn; single precision (a relative 6e-8 on a log speedup) halves
         * their memory traffic, while the problem's own interval uses the
         * doubles. */
        for (size_t b = 0; b < B; b++) col[b * step + (size_t)bl] = (float)tmp[b];
        double lo, hi;
        stats_percentile(tmp, B, sh->o->level, &lo, &hi);
        p->s_lo[bl] = exp(lo);
        p->s_hi[bl] = exp(hi);
    }
}

double analysis_paired_ci(const double *base, const double *cand, size_t n, uint64_t seed, size_t B, double level,
                          double *lo, double *hi, kbv_err *e)
{
    medboot *mb = NULL;
    double *buf = malloc((B ? B : 1) * sizeof *buf), *ratio = malloc((n ? n : 1) * sizeof *ratio), point = NAN;
    vdata q = {0};
    *lo = *hi = NAN;
    if (!buf || !ratio) {
        err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }
    if (!n || !B) {
        err_set(e, KBV_EUSAGE, "no pairs or no resamples");
        goto done;
    }
    for (size_t i = 0; i < n; i++) ratio[i] = base[i] / cand[i];
    if (medboot_new(&mb, e) || medboot_prepare(mb, n, e)) goto done;
    if (vdata_fill(&q, ratio, n, mb, e)) goto done;
    ratio_reps(&q, 1, seed, 0, 0, B, buf);
    stats_percentile(buf, B, level, lo, hi);
    *lo = exp(*lo);
    *hi = exp(*hi);
    point = q.median;
done:
    vdata_free(&q);
    medboot_free(mb);
    free(buf);
    free(ratio);
    return point;
}

/* --- the set's shared bootstrap over problems ----------------------------- */

/* Every aggregate of a set (the geometric means, the inflation steps,
 * memory efficiency, fast_p) is bootstrapped over problems with the same
 * draws, so that two aggregates over the same values get the same interval.
 *
 * Resample b is a stream of problem picks, uniform over the set's problems,
 * from its own generator (seed, set, b, RNG_G_PICKS).  An aggregate over
 * members M takes the first |M| picks that fall in M: that is |M| draws with
 * replacement from M (rejection sampling), the ordinary bootstrap of M, and
 * two aggregates over the same members take the same picks.  Each pick also
 * carries its copy number c (how often the stream picked that problem
 * before), and the c-th copy of problem i in resample b reads its replicate
 * (b + c) mod B: copies within a resample get distinct, independent draws of
 * the problem's speedup (so each resample has the two-level distribution,
 * problems then rounds), and every aggregate that picks the problem reads the
 * same draws.  With the replicates stored by b, then problem, resample b
 * reads one short stretch of memory after another. */

/* Per-set storage of the problems' replicates. */
typedef struct geo_store {
    /* reps[(b * (np + 1) + i) * N_BL + bl]: replicate b of problem i against
     * baseline bl; zero where the problem has no speedup, and in the extra
     * column np, which stands for a problem counted as a speedup of 1. */
    float *reps;
    size_t np;
} geo_store;

/* The pick stream of one resample. */
typedef struct picks {
    uint32_t *idx;     /* idx[k]: the problem picked k-th */
    uint32_t *copy;    /* copy[k]: how often idx[k] was picked before k */
    size_t n, cap;     /* picks drawn so far, room */
    uint32_t *cnt;     /* per problem: picks so far in resample gen[] */
    size_t *gen;
    size_t np, b;
    rng r;
} picks;

static int picks_new(picks *pk, size_t np, kbv_err *e)
{
    memset(pk, 0, sizeof *pk);
    pk->np = np;
    pk->cap = 4 * np + 64;
    pk->idx = malloc(pk->cap * sizeof *pk->idx);
    pk->copy = malloc(pk->cap * sizeof *pk->copy);
    pk->cnt = calloc(np + 1, sizeof *pk->cnt);
    pk->gen = malloc((np + 1) * sizeof *pk->gen);
    if (!pk->idx || !pk->copy || !pk->cnt || !pk->gen) return err_set(e, KBV_ENOMEM, "out of memory");
    for (size_t i = 0; i <= np; i++) pk->gen[i] = SIZE_MAX;
    return 0;
}

static void picks_free(picks *pk)
{
    free(pk->idx);
    free(pk->copy);
    free(pk->cnt);
    free(pk->gen);
}

static void picks_start(picks *pk, uint64_t seed, size_t set, size_t b)
{
    rng_init(&pk->r, seed, set, b, RNG_G_PICKS);
    pk->n = 0;
    pk->b = b;
}

/* Draws the next np picks (a small aggregate can need many). */
static int picks_more(picks *pk, kbv_err *e)
{
    if (pk->n + pk->np > pk->cap) {
        size_t cap = 2 * pk->cap;
        uint32_t *a = realloc(pk->idx, cap * sizeof *a);
        if (!a) return err_set(e, KBV_ENOMEM, "out of memory");
        pk->idx = a;
        a = realloc(pk->copy, cap * sizeof *a);
        if (!a) return err_set(e, KBV_ENOMEM, "out of memory");
        pk->copy = a;
        pk->cap = cap;
    }
    for (size_t k = 0; k < pk->np; k++) {
        uint32_t i = rng_below(&pk->r, (uint32_t)pk->np);
        uint32_t c = pk->gen[i] == pk->b ? pk->cnt[i] : 0;
        pk->cnt[i] = c + 1;
        pk->gen[i] = pk->b;
        pk->idx[pk->n] = i;
        pk->copy[pk->n++] = c;
    }
    return 0;
}

/* One aggregate (a geometric mean) being bootstrapped: its members, its
 * replicates, and where its estimates go. */
typedef struct agg {
    size_t n;                   /* members */
    uint32_t *col;              /* per problem: its storage column; st->np (the zero column) for a
                                   member counted as a speedup of 1 and for a non-member */
    unsigned char *member;      /* per problem: 1 for a member */
    const double *fixed;        /* per problem values used instead of replicates (memory; 0 for a
                                   non-member), or NULL; borrowed */
    double *val[N_BL];          /* the members' point values (log s, clamped, 0), in problem order */
    int clamp;
    unsigned want;
    double *reps[N_BL];         /* B outer replicates of the mean */
    est *out;                   /* out[bl] for the wanted baselines; borrowed */
} agg;

#define MAX_AGGS 8

typedef struct aggs {
    agg a[MAX_AGGS];
    int n;
} aggs;

static void aggs_free(aggs *as)
{
    for (int k = 0; k < as->n; k++) {
        agg *j = &as->a[k];
        free(j->col);
        free(j->member);
        free(j->val[0]);
        free(j->val[1]);
        free(j->reps[0]);
        free(j->reps[1]);
    }
    as->n = 0;
}

static double geo_value(const pctx *p, unsigned char use, int bl, int clamp)
{
    if (!(use & (1u << bl))) return 0;
    double v = p->ls[bl];
    return clamp && v < 0 ? 0 : v;
}

/* Adds an aggregate over the problems i with member[i] set.  Without fixed
 * values, member i adds log s_i(baseline) when bit bl of use[i] is set and
 * 0 (a speedup of 1) otherwise; clamp makes it max(0, log s), i.e.
 * max(1, s) (geomean_all).  With fixed (indexed by problem), member i adds
 * fixed[i] to out[0].  Estimates go to out[bl] for the baselines in want;
 * no members give nulls. */
static int agg_add(aggs *as, size_t B, const pctx *pc, size_t np, const unsigned char *member,
                   const unsigned char *use, const double *fixed, int clamp, unsigned want, est *out, kbv_err *e)
{
    size_t n = 0;
    for (size_t i = 0; i < np; i++) n += member[i] != 0;
    for (int bl = 0; bl < N_BL; bl++)
        if (want & (1u << bl)) out[bl] = (est){NAN, NAN, NAN, (long)n};
    if (!n) return 0;
    if (as->n == MAX_AGGS) return err_set(e, KBV_ERUNTIME, "internal: too many aggregates");
    agg *j = &as->a[as->n++];
    memset(j, 0, sizeof *j);
    j->n = n;
    j->fixed = fixed;
    j->clamp = clamp;
    j->want = want;
    j->out = out;
    j->col = malloc((np + 1) * sizeof *j->col);
    j->member = malloc(np + 1);
    j->val[0] = malloc(n * sizeof(double));
    j->val[1] = malloc(n * sizeof(double));
    j->reps[0] = malloc(B * sizeof(double));
    j->reps[1] = malloc(B * sizeof(double));
    if (!j->col || !j->member || !j->val[0] || !j->val[1] || !j->reps[0] || !j->reps[1])
        return err_set(e, KBV_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < np; i++) {
        j->member[i] = member[i] != 0;
        if (!member[i]) {
            j->col[i] = (uint32_t)np;
            continue;
        }
        if (fixed) {
            j->col[i] = (uint32_t)i;
            j->val[0][k] = fixed[i];
            j->val[1][k] = 0;
        } else {
            /* A member that adds nothing for the wanted baselines
             * (geomean_all's non-correct problems) reads the zero column. */
            j->col[i] = (use[i] & want) ? (uint32_t)i : (uint32_t)np;
            for (int bl = 0; bl < N_BL; bl++) j->val[bl][k] = geo_value(&pc[i], use[i], bl, clamp);
        }
        k++;
    }
    return 0;
}

/* Resample b of aggregate j.  A non-member pick reads zeros (the zero
 * column, or its fixed value 0) and does not count, so the loop has no
 * branch on membership, which is as random as the picks.  mode is a
 * constant at each call (0 plain, 1 clamped at 0, 2 fixed values), so that
 * the compiler drops the other cases. */
static inline int agg_resample(agg *j, picks *pk, const float *base, size_t row, size_t B, int mode, kbv_err *e)
{
    double s0 = 0, s1 = 0;
    size_t b = pk->b, got = 0;
    int rc;
    for (size_t k = 0; got < j->n; k++) {
        if (k == pk->n && (rc = picks_more(pk, e))) return rc;
        uint32_t i = pk->idx[k];
        got += j->member[i];
        if (mode == 2) {
            s0 += j->fixed[i];
            continue;
        }
        size_t rr = b + pk->copy[k];
        if (rr >= B) rr %= B;
        const float *d = &base[rr * row + (size_t)j->col[i] * N_BL];
        if (mode == 1) {
            s0 += d[0] > 0 ? d[0] : 0;
            s1 += d[1] > 0 ? d[1] : 0;
        } else {
            s0 += d[0];
            s1 += d[1];
        }
    }
    j->reps[0][b] = s0 / (double)j->n;
    j->reps[1][b] = s1 / (double)j->n;
    return 0;
}

/* Adds the aggregate over the problems selected by sel[i] & (1 << bl) for
 * each wanted baseline: one for both baselines when they select the same
 * problems, one each otherwise.  mem is scratch (np entries). */
static int agg_select(aggs *as, size_t B, const pctx *pc, size_t np, const unsigned char *sel, unsigned want,
                      unsigned char *mem, est *out, kbv_err *e)
{
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
        for (size_t i = 0; i < np; i++) mem[i] = (sel[i] & passes[k]) != 0;
        int rc = agg_add(as, B, pc, np, mem, sel, NULL, 0, passes[k], out, e);
        if (rc) return rc;
    }
    return 0;
}

/* The BCa intervals of the aggregates, from their replicates and the
 * jackknife over their members (jack: scratch for the largest n). */
static void aggs_finish(aggs *as, const shared *sh, double *jack)
{
    size_t B = sh->o->resamples;
    for (int k = 0; k < as->n; k++) {
        agg *j = &as->a[k];
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
            /* The replicates are sums of single-precision values, theta of
             * doubles: replicates that are all one value (every member's
             * ratios constant) give theta rounded, a relative 1e-7 beside it,
             * and an interval must hold its estimate (render refuses one that
             * does not). */
            int same = 1;
            for (size_t b = 1; b < B && same; b++) same = j->reps[bl][b] == j->reps[bl][0];
            if (same) lo = hi = theta;
            if (lo > theta) lo = theta;
            if (hi < theta) hi = theta;
            j->out[bl].e = exp(theta);
            j->out[bl].lo = exp(lo);
            j->out[bl].hi = exp(hi);
        }
    }
}

/* --- fast_p and shares ---------------------------------------------------- */

/* The thresholds p of fast_p: the reported points, then the curve. */
#define N_THR (ANALYSIS_N_FASTP + ANALYSIS_N_CURVE)

static double threshold(int t)
{
    return t < ANALYSIS_N_FASTP ? analysis_fastp_points[t] : analysis_curve_point(t - ANALYSIS_N_FASTP);
}

/* The bootstrap of fast_p over problems, on the set's shared resamples:
 * resample b takes the first np picks (the whole suite, as geomean_all),
 * each picked problem's speedup being its replicate for that copy, and
 * counts the correct ones above each threshold.  hist[(bl * N_THR + t) *
 * (np + 1) + k] counts the resamples with k qualifying. */
typedef struct fastp_boot {
    uint32_t *hist;
    double lpoint[ANALYSIS_N_FASTP];  /* log of the points (log 0 = -inf) */
    double lcurve[ANALYSIS_N_CURVE];  /* log of the curve's points, ascending */
    const unsigned char *ok;          /* ok[i] bit bl: problem i is correct with a speedup against bl; borrowed */
    size_t np;
} fastp_boot;

static int fastp_new(fastp_boot *f, size_t np, const unsigned char *ok, kbv_err *e)
{
    memset(f, 0, sizeof *f);
    f->np = np;
    f->ok = ok;
    f->hist = calloc((size_t)N_BL * N_THR * (np + 1), sizeof *f->hist);
    if (!f->hist) return err_set(e, KBV_ENOMEM, "out of memory");
    for (int t = 0; t < ANALYSIS_N_FASTP; t++)
        f->lpoint[t] = analysis_fastp_points[t] > 0 ? log(analysis_fastp_points[t]) : -HUGE_VAL;
    for (int k = 0; k < ANALYSIS_N_CURVE; k++) f->lcurve[k] = log(analysis_curve_point(k));
    return 0;
}

static void fastp_free(fastp_boot *f)
{
    free(f->hist);
}

/* How many of the curve's log thresholds lie strictly below v.  They are
 * log 10^(-1 + k/30), so the count is about 30 (v / ln 10 + 1) rounded up;
 * the two loops correct the rounding against the very values compared
 * (they rarely take a step), so the answer is exact in a few operations,
 * where a search would wait on a chain of dependent loads. */
static inline unsigned curve_below(const double *lc, double v)
{
    double x = 30.0 * (v / M_LN10 + 1.0);
    unsigned c = !(x > 0) ? 0 : x >= ANALYSIS_N_CURVE ? ANALYSIS_N_CURVE : (unsigned)x + 1;
    while (c > 0 && !(lc[c - 1] < v)) c--;
    while (c < ANALYSIS_N_CURVE && lc[c] < v) c++;
    return c;
}

static int fastp_resample(fastp_boot *f, picks *pk, const float *base, size_t row, size_t B, kbv_err *e)
{
    size_t np = f->np, b = pk->b;
    int rc;
    while (pk->n < np)
        if ((rc = picks_more(pk, e))) return rc;
    for (int bl = 0; bl < N_BL; bl++) {
        /* above[j] counts the qualifying picks above exactly the j lowest
         * curve thresholds, so the count above the k-th is the sum of
         * above[j] for j > k; the six points are counted directly. */
        uint32_t above[ANALYSIS_N_CURVE + 1] = {0}, point[ANALYSIS_N_FASTP] = {0};
        for (size_t k = 0; k < np; k++) {
            /* Without a branch on qualifying (as random as the picks): a
             * pick that does not qualify adds 0; its stored replicate is
             * finite all the same (zero without a speedup). */
            uint32_t i = pk->idx[k], w = (f->ok[i] >> bl) & 1u;
            size_t rr = b + pk->copy[k];
            if (rr >= B) rr %= B;
            double v = base[rr * row + (size_t)i * N_BL + (size_t)bl];
            above[curve_below(f->lcurve, v)] += w;
            for (int t = 0; t < ANALYSIS_N_FASTP; t++) point[t] += w & (uint32_t)(v > f->lpoint[t]);
        }
        uint32_t *h = &f->hist[(size_t)bl * N_THR * (np + 1)];
        for (int t = 0; t < ANALYSIS_N_FASTP; t++) h[(size_t)t * (np + 1) + point[t]]++;
        uint32_t cum = 0;
        for (int k = ANALYSIS_N_CURVE - 1; k >= 0; k--) {
            cum += above[k + 1];
            h[(size_t)(ANALYSIS_N_FASTP + k) * (np + 1) + cum]++;
        }
    }
    return 0;
}

/* The percentile interval of the counts in hist[0..np] over B resamples,
 * as shares of np. */
static void hist_interval(const uint32_t *hist, size_t np, size_t B, double level, double *lo, double *hi)
{
    double a = (1 - level) / 2;
    size_t rank[2] = {stats_quantile_index(B, a), stats_quantile_index(B, 1 - a)};
    double out[2];
    for (int s = 0; s < 2; s++) {
        size_t cum = 0, k = 0;
        for (k = 0; k < np; k++) {
            cum += hist[k];
            if (cum > rank[s]) break;
        }
        out[s] = (double)k / (double)np;
    }
    *lo = out[0];
    *hi = out[1];
}

/* Widens [x->lo, x->hi] to hold the Clopper-Pearson interval of k of n,
 * so that a share of 0 or 1, whose bootstrap interval has no width, still
 * gets a real one (DESIGN.md 7). */
static void widen_cp(est *x, long k, long n, double level)
{
    double lo, hi;
    stats_clopper_pearson(k, n, level, &lo, &hi);
    if (!(x->lo <= lo)) x->lo = lo;
    if (!(x->hi >= hi)) x->hi = hi;
}

/* k of n qualify: the estimate k/n and the exact bootstrap-over-problems
 * percentile interval, the quantiles of Binomial(n, k/n) / n, widened to the
 * Clopper-Pearson interval.  For a share without a second level of
 * replicates (the efficient share) the exact quantiles are the shared
 * bootstrap's with infinitely many resamples. */
static est share_est(long k, long n, double level, int with_n)
{
    est x = {NAN, NAN, NAN, with_n ? n : -1};
    if (n <= 0) return x;
    double q = (double)k / (double)n, a = (1 - level) / 2;
    x.e = q;
    x.lo = (double)stats_binom_quantile(n, q, a) / (double)n;
    x.hi = (double)stats_binom_quantile(n, q, 1 - a) / (double)n;
    widen_cp(&x, k, n, level);
    return x;
}

static cJSON *fastp_json(const pctx *pc, size_t np, int bl, int t, const fastp_boot *f, size_t B, double level)
{
    double p = threshold(t);
    est x = {NAN, NAN, NAN, -1};
    if (np) {
        long k = 0;
        for (size_t i = 0; i < np; i++)
            k += pc[i].cr.cls == CL_CORRECT && pc[i].has_s[bl] && pc[i].s[bl] > p;
        x.e = (double)k / (double)np;
        hist_interval(&f->hist[((size_t)bl * N_THR + (size_t)t) * (np + 1)], np, B, level, &x.lo, &x.hi);
        widen_cp(&x, k, (long)np, level);
    }
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddNumberToObject(o, "p", p);
    jio_add_num(o, "estimate", x.e);
    jio_add_num(o, "ci_low", x.lo);
    jio_add_num(o, "ci_high", x.hi);
    return o;
}

/* --- one set -------------------------------------------------------------- */

static cJSON *problem_json(const run_data *r, size_t set, size_t i, const pctx *p, const int *bv, int nbl)
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
    for (int bl = 0; bl < nbl; bl++) {
        const char *key = run_variant_names[bv[bl]];
        if (p->has_s[bl]) {
            /* n: the rounds the speedup pairs (paired.h). */
            est x = {p->s[bl], p->s_lo[bl], p->s_hi[bl], (long)p->nr[bl]};
            add_est(sub, key, &x);
        } else {
            cJSON_AddNullToObject(sub, key);
        }
    }
    /* The candidate and the set's baselines. */
    int vs[1 + RUN_MAX_BL] = {RUN_V_CAND, bv[0], bv[1]}, nv = 1 + nbl;
    sub = cJSON_AddObjectToObject(o, "time_ms");
    for (int k = 0; k < nv; k++)
        add_num_or_null(sub, run_variant_names[vs[k]], pr->times[vs[k]].n > 0, p->median[vs[k]]);
    sub = cJSON_AddObjectToObject(o, "n_samples");
    for (int k = 0; k < nv; k++)
        cJSON_AddNumberToObject(sub, run_variant_names[vs[k]], (double)pr->times[vs[k]].n);
    sub = cJSON_AddObjectToObject(o, "peak_bytes");
    for (int k = 0; k < nv; k++)
        add_num_or_null(sub, run_variant_names[vs[k]], pr->have_mem[vs[k]], pr->peak_bytes[vs[k]]);
    add_num_or_null(o, "max_rel_err", !isnan(p->cr.max_rel_err), p->cr.max_rel_err);
    if (p->cr.tier >= 0) cJSON_AddStringToObject(o, "tier", run_tier_names[p->cr.tier]);
    else cJSON_AddNullToObject(o, "tier");
    return o;
}

/* The bootstrap over problems of one set: B resamples, each one set of
 * problem picks shared by every aggregate in as and by fast_p (fb), over
 * the per-problem replicates in st. */
static int resample_set(const shared *sh, size_t set, size_t np, const geo_store *st, const unsigned char *ok,
                        aggs *as, picks *pk, fastp_boot *fb, kbv_err *e)
{
    size_t B = sh->o->resamples;
    int rc;
    if ((rc = picks_new(pk, np, e)) || (rc = fastp_new(fb, np, ok, e))) return rc;
    size_t row = (np + 1) * N_BL, row_bytes = row * sizeof(float);
    for (size_t b = 0; b < B; b++) {
        /* The picks land anywhere in a row, which defeats the hardware's
         * prefetch; fetching the row two resamples ahead keeps the loop
         * from waiting on memory. */
        if (b + 2 < B) {
            const char *ahead = (const char *)&st->reps[(b + 2) * row];
            for (size_t off = 0; off < row_bytes; off += 64) __builtin_prefetch(ahead + off);
        }
        picks_start(pk, sh->o->seed, set, b);
        for (int k = 0; k < as->n; k++) {
            agg *j = &as->a[k];
            rc = j->fixed ? agg_resample(j, pk, st->reps, row, B, 2, e)
               : j->clamp ? agg_resample(j, pk, st->reps, row, B, 1, e)
                          : agg_resample(j, pk, st->reps, row, B, 0, e);
            if (rc) return rc;
        }
        if ((rc = fastp_resample(fb, pk, st->reps, row, B, e))) return rc;
    }
    return 0;
}

/* The inflation decomposition of a set: the geometric mean against fp32 on
 * D1 only, with the hidden distributions, with the probes, and against tf32.
 * A BF16 set has one baseline: its steps are the first three, against bf16. */
static void add_inflation(cJSON *o, const est *g_orig, const est *g_hidden, const est *g_correct, int bf16)
{
    cJSON *inf = cJSON_AddArrayToObject(o, "inflation");
    static const char *const steps[4][2] = {{"original", "fp32 baseline, D1 only"},
                                            {"hidden", "+ hidden distributions"},
                                            {"probes", "+ hack probes"},
                                            {"tf32", "+ tf32 baseline"}};
    const est *vals[4] = {&g_orig[BL_FP32], &g_hidden[BL_FP32], &g_correct[BL_FP32], &g_correct[BL_TF32]};
    for (int k = 0; k < (bf16 ? 3 : 4); k++) {
        cJSON *step = cJSON_CreateObject();
        cJSON_AddStringToObject(step, "step", steps[k][0]);
        cJSON_AddStringToObject(step, "label", bf16 && k == 0 ? "bf16 baseline, D1 only" : steps[k][1]);
        add_est(step, "geomean", vals[k]);
        cJSON_AddItemToArray(inf, step);
    }
}

static int set_build(const shared *sh, size_t set, cJSON **out, kbv_err *e)
{
    const run_data *r = sh->r;
    size_t np = r->n_problems, B = sh->o->resamples, maxn = 1;
    double level = sh->o->level;
    int rc = 0, bv[RUN_MAX_BL], nbl = prec_baselines(r, set, bv), bf16 = prec_is_bf16(r, set);
    unsigned all_bl = (1u << nbl) - 1;
    for (size_t i = 0; i < np; i++)
        for (int v = 0; v < RUN_NV; v++)
            if (run_pair_at(r, set, i)->times[v].n > maxn) maxn = run_pair_at(r, set, i)->times[v].n;
    pctx *pc = calloc(np + 1, sizeof *pc);
    double *reps = malloc(B * sizeof(double)), *tmp = malloc(maxn * sizeof(double));
    double *jack = malloc((np + 1) * sizeof *jack), *memv = malloc((np + 1) * sizeof *memv);
    unsigned char *sel = calloc(np + 1, 1), *mem = calloc(np + 1, 1), *ok = calloc(np + 1, 1);
    geo_store st = {calloc((np + 1) * B * N_BL, sizeof(float)), np};
    aggs as = {.n = 0};
    picks pk = {0};
    fastp_boot fb = {0};
    cJSON *o = cJSON_CreateObject();
    if (!pc || !reps || !tmp || !jack || !memv || !sel || !mem || !ok || !st.reps || !o) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }

    long counts[CL_N] = {0};
    for (size_t i = 0; i < np; i++) {
        pctx *p = &pc[i];
        const run_pair *pr = run_pair_at(r, set, i);
        for (int v = 0; v < RUN_NV; v++) p->median[v] = rvec_centre(&pr->times[v], tmp);
        classify_pair(r, pr, p->median[RUN_V_CAND], &p->cr);
        counts[p->cr.cls]++;
        for (int bl = 0; bl < N_BL; bl++) {
            size_t k = (set * np + i) * N_BL + (size_t)bl;
            if ((rc = ratios_fill(sh, k, p, bl, e))) goto done;
            /* An error has no speedup, whatever samples it left; nor has a
             * missing candidate or one whose records are not to be trusted. */
            p->has_s[bl] = p->cr.cls != CL_ERROR && p->cr.cls != CL_MISSING && p->cr.cls != CL_TAMPERING &&
                           p->nr[bl] > 0;
            p->s[bl] = p->s_lo[bl] = p->s_hi[bl] = p->ls[bl] = NAN;
            if (p->has_s[bl]) {
                double sum = 0;
                for (int q = 0; q < p->nq[bl]; q++) sum += log(p->q[bl][q].median);
                p->ls[bl] = sum / p->nq[bl];
                p->s[bl] = p->nq[bl] == 1 ? p->q[bl][0].median : exp(p->ls[bl]);
            }
        }
        if (p->has_s[0] || p->has_s[1]) speedup_ci(sh, set, i, p, st.reps + i * N_BL, (np + 1) * N_BL, reps);
    }

    cJSON_AddStringToObject(o, "name", r->set_names[set]);
    cJSON_AddStringToObject(o, "precision", run_precision_names[bf16]);
    if (r->set_compare_with[set]) cJSON_AddStringToObject(o, "compare_with", r->set_compare_with[set]);
    cJSON_AddNumberToObject(o, "n_problems", (double)np);
    cJSON *cj = cJSON_AddObjectToObject(o, "counts");
    for (int c = 0; c < CL_N; c++) cJSON_AddNumberToObject(cj, classify_class_names[c], (double)counts[c]);

    /* The aggregates: geometric means over the correct problems and over
     * all problems, the inflation steps (passing D1; passing D1 and the
     * hidden distributions) and memory efficiency, all on the same draws. */
    est g_correct[N_BL], g_all[N_BL], g_orig[N_BL], g_hidden[N_BL], m_eff[N_BL];
    for (size_t i = 0; i < np; i++)
        ok[i] = pc[i].cr.cls == CL_CORRECT ? (unsigned char)(pc[i].has_s[0] | pc[i].has_s[1] << 1) : 0;
    if ((rc = agg_select(&as, B, pc, np, ok, all_bl, mem, g_correct, e))) goto done;
    /* geomean_all: every problem, correct ones as max(1, s). */
    memset(mem, 1, np);
    if ((rc = agg_add(&as, B, pc, np, mem, ok, NULL, 1, all_bl, g_all, e))) goto done;
    for (size_t i = 0; i < np; i++) sel[i] = pc[i].cr.passes_d1 && pc[i].has_s[BL_FP32] ? 1 : 0;
    if ((rc = agg_select(&as, B, pc, np, sel, 1, mem, g_orig, e))) goto done;
    for (size_t i = 0; i < np; i++)
        if (pc[i].cr.cls == CL_HIDDEN_FAIL) sel[i] = 0;
    if ((rc = agg_select(&as, B, pc, np, sel, 1, mem, g_hidden, e))) goto done;
    /* Memory against the tf32 baseline (bf16 in a BF16 set: the last of
     * the set's baselines), over correct problems with both peaks recorded. */
    long less = 0;
    int mbv = bv[nbl - 1];
    for (size_t i = 0; i < np; i++) {
        const run_pair *pr = run_pair_at(r, set, i);
        mem[i] = 0;
        memv[i] = 0;
        if (pc[i].cr.cls != CL_CORRECT || !pr->have_mem[RUN_V_CAND] || !pr->have_mem[mbv]) continue;
        double c = pr->peak_bytes[RUN_V_CAND], b = pr->peak_bytes[mbv];
        if (!(c > 0 && b > 0)) continue;
        mem[i] = 1;
        memv[i] = log(b / c);
        less += c < b;
    }
    if ((rc = agg_add(&as, B, pc, np, mem, NULL, memv, 0, 1, m_eff, e))) goto done;
    long n_mem = m_eff[0].n;

    if (np && (rc = resample_set(sh, set, np, &st, ok, &as, &pk, &fb, e))) goto done;
    aggs_finish(&as, sh, jack);

    cJSON *bj = cJSON_AddObjectToObject(o, "baselines");
    for (int bl = 0; bl < nbl; bl++) {
        cJSON *b = cJSON_AddObjectToObject(bj, run_variant_names[bv[bl]]);
        add_est(b, "geomean_speedup_correct", &g_correct[bl]);
        g_all[bl].n = (long)np;
        add_est(b, "geomean_speedup_all", &g_all[bl]);
        cJSON *fp = cJSON_AddArrayToObject(b, "fast_p");
        for (int t = 0; t < ANALYSIS_N_FASTP; t++)
            cJSON_AddItemToArray(fp, fastp_json(pc, np, bl, t, &fb, B, level));
        cJSON *fc = cJSON_AddArrayToObject(b, "fast_p_curve");
        for (int t = ANALYSIS_N_FASTP; t < N_THR; t++)
            cJSON_AddItemToArray(fc, fastp_json(pc, np, bl, t, &fb, B, level));
    }

    est m_share = share_est(less, n_mem, level, 1);
    cJSON *mj = cJSON_AddObjectToObject(o, "memory");
    add_est(mj, "efficiency_geomean", &m_eff[0]);
    add_est(mj, "efficient_share", &m_share);
    if (bf16) cJSON_AddStringToObject(mj, "baseline", run_variant_names[mbv]);

    add_inflation(o, g_orig, g_hidden, g_correct, bf16);

    cJSON *pj = cJSON_AddArrayToObject(o, "problems");
    for (size_t i = 0; i < np; i++) cJSON_AddItemToArray(pj, problem_json(r, set, i, &pc[i], bv, nbl));

done:
    for (size_t i = 0; pc && i < np; i++)
        for (int bl = 0; bl < N_BL; bl++)
            for (int q = 0; q < PAIRED_MAX_STRATA; q++) vdata_free(&pc[i].q[bl][q]);
    free(pc);
    free(reps);
    free(tmp);
    free(jack);
    free(memv);
    free(sel);
    free(mem);
    free(ok);
    free(st.reps);
    aggs_free(&as);
    picks_free(&pk);
    fastp_free(&fb);
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
    paired_table pt = {0};
    cJSON **sets = calloc(r->n_sets + 1, sizeof *sets);
    worker *ws = NULL;
    cJSON *root = NULL;
    if (o->resamples < 1 || o->resamples > 100000000) {
        rc = err_set(e, KBV_EUSAGE, "bootstrap resamples must be between 1 and 1e8");
        goto done;
    }
    if (!sets) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }

    /* The rounds of every pair against both baselines, and the median tables
     * for their counts: the tables depend on the count only, and building
     * them all first lets the threads share them read-only. */
    if ((rc = medboot_new(&mb, e)) || (rc = paired_table_build(r, &pt, e))) goto done;
    for (size_t k = 0; k < pt.len; k++) {
        if ((rc = medboot_prepare(mb, pt.n[k], e))) goto done;
        for (int q = 0; q < pt.n_strata[k]; q++)
            if ((rc = medboot_prepare(mb, pt.strata[k][q], e))) goto done;
    }

    shared sh = {r, o, mb, &pt};
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

    if ((rc = analysis_root(r, o, sets, &root, e))) goto done;
    *out = root;
    root = NULL;
done:
    for (size_t s = 0; sets && s < r->n_sets; s++) cJSON_Delete(sets[s]);
    paired_table_free(&pt);
    free(sets);
    free(ws);
    cJSON_Delete(root);
    medboot_free(mb);
    return rc;
}
