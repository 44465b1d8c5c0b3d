/* levels.c - per-level aggregates, failures by distribution and probe, and
 * the tolerance sweep (see levels.h). */
#include "levels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jio.h"
#include "prec.h"
#include "rng.h"
#include "stats.h"

const double levels_tolerances[LEVELS_N_TOL] = {1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3,
                                                2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 1e-1};

/* The purposes of this file's random streams, apart from rng.h's (which
 * stop at 20), so that adding a level's streams changes no other number:
 * LEVELS_PURPOSE + 4 * level + 2 * baseline + (0: correct, 1: all). */
#define LEVELS_PURPOSE 4096u

#define LEVELS_MAX 16
#define NAME_MAX_LEN 16

/* The set's baselines, in prec_baselines' order: fp32 and tf32, or bf16. */
enum { N_BL = RUN_MAX_BL };

/* What levels.c needs of one problem of a set. */
typedef struct lprob {
    const char *cls;        /* borrowed from the tree */
    int correct, missing;
    int has_s[N_BL];
    double s[N_BL];
    int level;              /* index into the set's level names */
} lprob;

/* --- tolerance ---------------------------------------------------------- */

/* The tiers' thresholds (DESIGN.md 5a): tier k holds when every element has
 * |out - ref| <= T_k (1 + |ref|), which is the check's own criterion with
 * atol = rtol = T_k. */
static const double tier_t[3] = {1e-5, 1e-3, 1e-2};

static int same_tol(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fabs(b);
}

/* A record passes at atol = rtol = t when:
 *  - it has no non-finite or unwritten element where the reference is
 *    finite (else it fails at every tolerance: exact);
 *  - its tier holds at a threshold T <= t (exact pass), or fails at a
 *    threshold T >= t (exact fail);
 *  - otherwise max_abs_err <= t or max_rel_err <= t, each enough for every
 *    element to be within t + t |ref| (exact pass);
 *  - otherwise it is counted as failing, which is the approximation: the
 *    largest absolute and the largest relative error may belong to
 *    different elements, each of which could still pass.  Between the tier
 *    thresholds the sweep thus gives a lower bound on the share correct,
 *    exact at 1e-5, 1e-3 and 1e-2. */
int levels_check_passes(const run_check *c, double t, int *exact)
{
    *exact = 1;
    if (c->nonfinite > 0 || c->unwritten > 0)
        return 0;
    if (c->tier >= RUN_TIER_FP32 && c->tier <= RUN_TIER_NONE) {
        for (int j = 0; j < 3; j++) {
            if (tier_t[j] <= t * (1 + 1e-9) && c->tier <= j)
                return 1;
            if (tier_t[j] >= t * (1 - 1e-9) && c->tier > j)
                return 0;
        }
    }
    if (c->max_abs_err <= t || c->max_rel_err <= t)
        return 1;
    *exact = 0;
    return 0;
}

/* --- small helpers --------------------------------------------------------- */

static int pair_missing(const run_pair *p, const char *cls, const cJSON *prob)
{
    if (strcmp(cls, "missing") == 0)
        return 1;
    if (p->have_status && p->status && strcmp(p->status, "missing") == 0)
        return 1;
    /* An analysis made before the class existed calls such a pair an error
     * whose evidence starts "missing: no <file>" (an interrupted pair is an
     * error of another text, and stays one). */
    if (strcmp(cls, "error") == 0) {
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(prob, "evidence"), *it;
        cJSON_ArrayForEach(it, ev) {
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(it, "text");
            if (cJSON_IsString(t) && strncmp(t->valuestring, "missing: no ", 12) == 0)
                return 1;
        }
    }
    return 0;
}

static cJSON *est_obj(double e, double lo, double hi, long n)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    jio_add_num(o, "estimate", e);
    jio_add_num(o, "ci_low", lo);
    jio_add_num(o, "ci_high", hi);
    if (n >= 0)
        cJSON_AddNumberToObject(o, "n", (double)n);
    return o;
}

/* The geometric mean of exp(v[0..n)) with its BCa interval, bootstrap over
 * the n values (reps: B doubles, jack: n doubles of scratch). */
static cJSON *geo_obj(const double *v, size_t n, long n_out, const analysis_opts *o, rng *r, double *reps,
                      double *jack)
{
    if (n == 0)
        return est_obj(NAN, NAN, NAN, n_out);
    size_t B = o->resamples;
    double S = 0;
    for (size_t k = 0; k < n; k++)
        S += v[k];
    for (size_t b = 0; b < B; b++) {
        double sum = 0;
        for (size_t k = 0; k < n; k++)
            sum += v[rng_below(r, (uint32_t)n)];
        reps[b] = sum / (double)n;
    }
    size_t nj = 0;
    if (n >= 2)
        for (size_t k = 0; k < n; k++)
            jack[nj++] = (S - v[k]) / (double)(n - 1);
    double lo, hi, theta = S / (double)n;
    stats_bca(theta, reps, B, jack, nj, o->level, &lo, &hi);
    return est_obj(exp(theta), exp(lo), exp(hi), n_out);
}

/* k of n: k/n with the quantiles of Binomial(n, k/n) / n, the exact
 * percentile interval of the bootstrap over problems, widened to contain
 * the Clopper-Pearson interval of k/n as the set's own fast_p bands are
 * (DESIGN.md 7: never zero-width at 0 or 1). */
static cJSON *share_obj(long k, long n, double level, double p)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "p", p);
    if (n <= 0) {
        jio_add_num(o, "estimate", NAN);
        jio_add_num(o, "ci_low", NAN);
        jio_add_num(o, "ci_high", NAN);
        return o;
    }
    double q = (double)k / (double)n, a = (1 - level) / 2;
    jio_add_num(o, "estimate", q);
    double lo = (double)stats_binom_quantile(n, q, a) / (double)n;
    double hi = (double)stats_binom_quantile(n, q, 1 - a) / (double)n;
    double cp_lo, cp_hi;
    stats_clopper_pearson(k, n, level, &cp_lo, &cp_hi);
    if (cp_lo < lo) lo = cp_lo;
    if (cp_hi > hi) hi = cp_hi;
    jio_add_num(o, "ci_low", lo);
    jio_add_num(o, "ci_high", hi);
    return o;
}

/* --- one set --------------------------------------------------------------- */

static int add_levels(const run_data *r, const analysis_opts *o, size_t set, const cJSON *classes, lprob *lp,
                      size_t np, char (*names)[NAME_MAX_LEN], int n_levels, cJSON *sj, kbv_err *e)
{
    size_t B = o->resamples;
    double *reps = malloc((B ? B : 1) * sizeof *reps), *jack = malloc((np + 1) * sizeof *jack);
    double *v = malloc((np + 1) * sizeof *v);
    int rc = 0;
    cJSON *arr = cJSON_AddArrayToObject(sj, "levels");
    if (!reps || !jack || !v || !arr) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }
    int bv[RUN_MAX_BL], nbl = prec_baselines(r, set, bv);
    for (int L = 0; L < n_levels; L++) {
        cJSON *lo = cJSON_CreateObject();
        if (!lo) {
            rc = err_set(e, KBV_ENOMEM, "out of memory");
            goto done;
        }
        cJSON_AddItemToArray(arr, lo);
        long n = 0;
        for (size_t i = 0; i < np; i++)
            n += lp[i].level == L;
        cJSON_AddStringToObject(lo, "level", names[L]);
        cJSON_AddNumberToObject(lo, "n_problems", (double)n);
        cJSON *cj = cJSON_AddObjectToObject(lo, "counts");
        const cJSON *c;
        cJSON_ArrayForEach(c, classes) {
            if (!cJSON_IsString(c))
                continue;
            long k = 0;
            for (size_t i = 0; i < np; i++)
                k += lp[i].level == L && strcmp(lp[i].cls, c->valuestring) == 0;
            cJSON_AddNumberToObject(cj, c->valuestring, (double)k);
        }
        cJSON *bj = cJSON_AddObjectToObject(lo, "baselines");
        for (int bl = 0; bl < nbl; bl++) {
            cJSON *b = cJSON_AddObjectToObject(bj, run_variant_names[bv[bl]]);
            rng rg;
            size_t m = 0;
            for (size_t i = 0; i < np; i++)
                if (lp[i].level == L && lp[i].correct && lp[i].has_s[bl])
                    v[m++] = log(lp[i].s[bl]);
            rng_init(&rg, o->seed, set, RNG_NO_PROBLEM, LEVELS_PURPOSE + 4u * (unsigned)L + 2u * (unsigned)bl);
            cJSON_AddItemToObject(b, "geomean_speedup_correct", geo_obj(v, m, (long)m, o, &rg, reps, jack));
            /* KernelBench-Verified's score: max(1, s) for a correct
             * problem, 1 for every other. */
            m = 0;
            for (size_t i = 0; i < np; i++)
                if (lp[i].level == L) {
                    double x = lp[i].correct && lp[i].has_s[bl] ? log(lp[i].s[bl]) : 0;
                    v[m++] = x > 0 ? x : 0;
                }
            rng_init(&rg, o->seed, set, RNG_NO_PROBLEM, LEVELS_PURPOSE + 4u * (unsigned)L + 2u * (unsigned)bl + 1u);
            cJSON_AddItemToObject(b, "geomean_speedup_all", geo_obj(v, m, (long)m, o, &rg, reps, jack));
            cJSON *fp = cJSON_AddArrayToObject(b, "fast_p");
            for (int k = 0; k < ANALYSIS_N_FASTP; k++) {
                double p = analysis_fastp_points[k];
                long q = 0;
                for (size_t i = 0; i < np; i++)
                    q += lp[i].level == L && lp[i].correct && lp[i].has_s[bl] && lp[i].s[bl] > p;
                cJSON_AddItemToArray(fp, share_obj(q, n, o->level, p));
            }
        }
    }
done:
    free(reps);
    free(jack);
    free(v);
    return rc;
}

/* The order in which the report lists probes: DESIGN.md 5a's, then any
 * other name the journal has, alphabetically. */
static int probe_rank(const char *name)
{
    static const char *const order[] = {"input-independence", "identity", "caching", "input-mutation",
                                        "determinism", "deferred-work", "leftover-memory", "stale-output",
                                        "physical-floor"};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (strcmp(order[i], name) == 0)
            return (int)i;
    return 100;
}

static int cmp_probe(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int rx = probe_rank(x), ry = probe_rank(y);
    return rx != ry ? (rx < ry ? -1 : 1) : strcmp(x, y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds name to the list names[0..*n) unless it is there (names borrowed). */
static int name_add(const char **names, size_t *n, size_t cap, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0)
            return 0;
    if (*n == cap)
        return -1;
    names[(*n)++] = name;
    return 0;
}

#define MAX_NAMES 64

static int add_failures(const run_data *r, size_t set, const lprob *lp, size_t np, cJSON *sj, kbv_err *e)
{
    const char *dists[MAX_NAMES], *probes[MAX_NAMES];
    size_t nd = 0, npr = 0;
    for (size_t i = 0; i < np; i++) {
        const run_pair *p = run_pair_at(r, set, i);
        if (lp[i].missing)
            continue;
        for (size_t k = 0; k < p->n_checks; k++)
            if (name_add(dists, &nd, MAX_NAMES, p->checks[k].dist))
                return err_set(e, KBV_EINPUT, "set %s: more than %d distributions", r->set_names[set], MAX_NAMES);
        for (size_t k = 0; k < p->n_probes; k++)
            if (name_add(probes, &npr, MAX_NAMES, p->probes[k].name))
                return err_set(e, KBV_EINPUT, "set %s: more than %d probes", r->set_names[set], MAX_NAMES);
    }
    qsort(dists, nd, sizeof *dists, cmp_str);
    qsort(probes, npr, sizeof *probes, cmp_probe);
    cJSON *fo = cJSON_AddObjectToObject(sj, "failures");
    cJSON *da = fo ? cJSON_AddArrayToObject(fo, "by_distribution") : NULL;
    cJSON *pa = fo ? cJSON_AddArrayToObject(fo, "by_probe") : NULL;
    if (!da || !pa)
        return err_set(e, KBV_ENOMEM, "out of memory");
    for (size_t d = 0; d < nd; d++) {
        long checked = 0, failed = 0, skipped = 0;
        for (size_t i = 0; i < np; i++) {
            const run_pair *p = run_pair_at(r, set, i);
            if (lp[i].missing)
                continue;
            int any = 0, run = 0, fail = 0;
            for (size_t k = 0; k < p->n_checks; k++) {
                const run_check *c = &p->checks[k];
                if (strcmp(c->dist, dists[d]) != 0)
                    continue;
                any = 1;
                if (c->skipped)
                    continue;
                run = 1;
                fail |= !c->pass;
            }
            checked += run;
            failed += fail;
            skipped += any && !run;
        }
        cJSON *x = cJSON_CreateObject();
        if (!x)
            return err_set(e, KBV_ENOMEM, "out of memory");
        cJSON_AddStringToObject(x, "dist", dists[d]);
        cJSON_AddNumberToObject(x, "checked", (double)checked);
        cJSON_AddNumberToObject(x, "failed", (double)failed);
        cJSON_AddNumberToObject(x, "skipped", (double)skipped);
        cJSON_AddItemToArray(da, x);
    }
    for (size_t q = 0; q < npr; q++) {
        long run = 0, failed = 0;
        for (size_t i = 0; i < np; i++) {
            const run_pair *p = run_pair_at(r, set, i);
            if (lp[i].missing)
                continue;
            int ran = 0, fail = 0;
            for (size_t k = 0; k < p->n_probes; k++) {
                const run_probe *pr = &p->probes[k];
                if (strcmp(pr->name, probes[q]) != 0 || pr->pass < 0)
                    continue;
                ran = 1;
                fail |= pr->pass == 0;
            }
            run += ran;
            failed += fail;
        }
        cJSON *x = cJSON_CreateObject();
        if (!x)
            return err_set(e, KBV_ENOMEM, "out of memory");
        cJSON_AddStringToObject(x, "probe", probes[q]);
        cJSON_AddNumberToObject(x, "run", (double)run);
        cJSON_AddNumberToObject(x, "failed", (double)failed);
        cJSON_AddItemToArray(pa, x);
    }
    return 0;
}

/* A problem is correct at tolerance t when its class depends on the
 * tolerance only (correct, hidden-fail or incorrect: it built, ran, and no
 * probe failed) and every check that was not skipped passes at t.  At the
 * run's own tolerance (atol = rtol) a record's pass is used as it is. */
static int add_sweep(const run_data *r, size_t set, const lprob *lp, size_t np, cJSON *sj, kbv_err *e)
{
    cJSON *so = cJSON_AddObjectToObject(sj, "tolerance_sweep");
    cJSON *pts = so ? cJSON_AddArrayToObject(so, "points") : NULL;
    if (!pts)
        return err_set(e, KBV_ENOMEM, "out of memory");
    cJSON_AddNumberToObject(so, "n_problems", (double)np);
    for (int k = 0; k < LEVELS_N_TOL; k++) {
        double t = levels_tolerances[k];
        double atol, rtol;
        prec_tolerance(r, set, &atol, &rtol);
        int own = atol == rtol && same_tol(t, atol), exact = 1;
        long n = 0;
        for (size_t i = 0; i < np; i++) {
            const char *c = lp[i].cls;
            if (lp[i].missing ||
                (strcmp(c, "correct") != 0 && strcmp(c, "hidden-fail") != 0 && strcmp(c, "incorrect") != 0))
                continue;
            const run_pair *p = run_pair_at(r, set, i);
            int ok = 0;
            for (size_t q = 0; q < p->n_probes; q++)
                if (p->probes[q].pass == 0)
                    ok = -1;
            for (size_t q = 0; q < p->n_checks && ok >= 0; q++) {
                const run_check *ch = &p->checks[q];
                if (ch->skipped)
                    continue;
                int ex = 1, pass = own ? ch->pass : levels_check_passes(ch, t, &ex);
                exact &= ex;
                ok = pass ? 1 : -1;
            }
            n += ok > 0;
        }
        cJSON *x = cJSON_CreateObject();
        if (!x)
            return err_set(e, KBV_ENOMEM, "out of memory");
        cJSON_AddNumberToObject(x, "tolerance", t);
        cJSON_AddNumberToObject(x, "n_correct", (double)n);
        jio_add_num(x, "share_correct", np ? (double)n / (double)np : NAN);
        cJSON_AddBoolToObject(x, "exact", exact);
        cJSON_AddItemToArray(pts, x);
    }
    return 0;
}

/* fast_p's interval depends on its count k of N problems only, so the
 * report can draw the band of the whole curve, at every threshold of its
 * axis, from this table: [ci_low, ci_high] of k / N for k = 0..N, the same
 * interval as the set's fast_p points. */
static int add_share_ci(const analysis_opts *o, size_t np, cJSON *sj, kbv_err *e)
{
    cJSON *arr = cJSON_AddArrayToObject(sj, "fast_p_share_ci");
    if (!arr)
        return err_set(e, KBV_ENOMEM, "out of memory");
    for (size_t k = 0; k <= np && np > 0; k++) {
        cJSON *x = share_obj((long)k, (long)np, o->level, 0);
        cJSON *pair = cJSON_CreateArray();
        if (!x || !pair) {
            cJSON_Delete(x);
            cJSON_Delete(pair);
            return err_set(e, KBV_ENOMEM, "out of memory");
        }
        cJSON_AddItemToArray(pair, cJSON_CreateNumber(cJSON_GetObjectItem(x, "ci_low")->valuedouble));
        cJSON_AddItemToArray(pair, cJSON_CreateNumber(cJSON_GetObjectItem(x, "ci_high")->valuedouble));
        cJSON_Delete(x);
        cJSON_AddItemToArray(arr, pair);
    }
    return 0;
}

static double est_of(const cJSON *sp, const char *bl, int *ok)
{
    const cJSON *b = sp ? cJSON_GetObjectItemCaseSensitive(sp, bl) : NULL;
    const cJSON *v = b ? cJSON_GetObjectItemCaseSensitive(b, "estimate") : NULL;
    *ok = cJSON_IsNumber(v) && v->valuedouble > 0 && isfinite(v->valuedouble);
    return *ok ? v->valuedouble : NAN;
}

static int set_add(const run_data *r, const analysis_opts *o, size_t set, const cJSON *classes, cJSON *sj,
                   kbv_err *e)
{
    const cJSON *probs = cJSON_GetObjectItemCaseSensitive(sj, "problems"), *it;
    size_t np = r->n_problems;
    if (!cJSON_IsArray(probs) || (size_t)cJSON_GetArraySize(probs) != np)
        return err_set(e, KBV_ERUNTIME, "internal: set %s has no problem list of %zu", r->set_names[set], np);
    lprob *lp = calloc(np + 1, sizeof *lp);
    char names[LEVELS_MAX][NAME_MAX_LEN];
    int n_levels = 0, rc = 0, bv[RUN_MAX_BL], nbl = prec_baselines(r, set, bv);
    if (!lp)
        return err_set(e, KBV_ENOMEM, "out of memory");
    size_t i = 0;
    cJSON_ArrayForEach(it, probs) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(it, "class");
        lp[i].cls = cJSON_IsString(c) ? c->valuestring : "";
        lp[i].correct = strcmp(lp[i].cls, "correct") == 0;
        lp[i].missing = pair_missing(run_pair_at(r, set, i), lp[i].cls, it);
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(it, "speedup");
        for (int bl = 0; bl < nbl; bl++)
            lp[i].s[bl] = est_of(sp, run_variant_names[bv[bl]], &lp[i].has_s[bl]);
        /* The level: the id up to its first '_' ("L1"); ids without one
         * share the level "other". */
        const char *id = r->problem_ids[i], *us = strchr(id, '_');
        char lv[NAME_MAX_LEN];
        size_t len = us ? (size_t)(us - id) : 0;
        if (len == 0 || len >= NAME_MAX_LEN)
            snprintf(lv, sizeof lv, "other");
        else
            snprintf(lv, sizeof lv, "%.*s", (int)len, id);
        int L = -1;
        for (int k = 0; k < n_levels && L < 0; k++)
            if (strcmp(names[k], lv) == 0)
                L = k;
        if (L < 0) {
            if (n_levels == LEVELS_MAX) {
                rc = err_set(e, KBV_EINPUT, "set %s: more than %d levels of problem ids", r->set_names[set],
                             LEVELS_MAX);
                goto done;
            }
            L = n_levels++;
            snprintf(names[L], NAME_MAX_LEN, "%s", lv);
        }
        lp[i].level = L;
        i++;
    }
    if ((rc = add_share_ci(o, np, sj, e)) || (rc = add_levels(r, o, set, classes, lp, np, names, n_levels, sj, e)) ||
        (rc = add_failures(r, set, lp, np, sj, e)) || (rc = add_sweep(r, set, lp, np, sj, e)))
        goto done;
done:
    free(lp);
    return rc;
}

int levels_add(const run_data *r, const analysis_opts *o, cJSON *root, kbv_err *e)
{
    const cJSON *sets = cJSON_GetObjectItemCaseSensitive(root, "sets");
    const cJSON *classes = cJSON_GetObjectItemCaseSensitive(root, "classes");
    if (!cJSON_IsArray(sets) || (size_t)cJSON_GetArraySize(sets) != r->n_sets)
        return err_set(e, KBV_ERUNTIME, "internal: the analysis has no list of %zu sets", r->n_sets);
    size_t s = 0;
    cJSON *sj;
    cJSON_ArrayForEach(sj, sets) {
        int rc = set_add(r, o, s, classes, sj, e);
        if (rc)
            return rc;
        s++;
    }
    return 0;
}
