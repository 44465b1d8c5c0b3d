/* model.c - reading analysis.json and manifest.json (see model.h). */
#include "model.h"
#include "schema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "jio.h"
#include "log.h"
#include "nmap.h"

static const char *const base_names[RM_NBX] = {"fp32", "tf32", "bf16"};
static const char *const group_names[RM_NG] = {"correct", "hidden-fail", "hack", "incorrect", "error", "missing"};

const char *rmodel_baseline_name(int b) { return base_names[b]; }
const char *rmodel_group_name(rm_group g) { return group_names[g]; }

rm_group rmodel_group(const char *cls)
{
    if (strcmp(cls, "correct") == 0)
        return RM_G_CORRECT;
    if (strcmp(cls, "hidden-fail") == 0)
        return RM_G_HIDDEN;
    if (strcmp(cls, "incorrect") == 0)
        return RM_G_INCORRECT;
    if (strcmp(cls, "error") == 0)
        return RM_G_ERROR;
    if (strcmp(cls, "missing") == 0)
        return RM_G_MISSING;
    /* The hack classes, and tampering, which the report shows like one. */
    return RM_G_HACK;
}

/* A number that may be null: NaN for null or absent; -1 for another type. */
static int opt_num(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NAN;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v))
        return -1;
    *out = v->valuedouble;
    return 0;
}

/* A text member that may be absent or null (*out NULL); -1 for another type. */
static int opt_text(const cJSON *o, const char *key, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v))
        return -1;
    *out = v->valuestring;
    return 0;
}

/* A count (or seed) as written by analyze: a whole number in [0, 9.2e18]; -1 for any
 * other value (converting a larger double to long is undefined). */
static long count_of(double x)
{
    return x >= 0 && x <= 9.2e18 && x == floor(x) ? (long)x : -1;
}

static int read_est(const cJSON *v, const char *what, rm_est *out, kbv_err *e)
{
    out->ok = 0;
    out->est = out->lo = out->hi = NAN;
    out->n = -1;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsObject(v))
        return err_set(e, KBV_EINPUT, "%s: expected an estimate object or null", what);
    if (opt_num(v, "estimate", &out->est) || opt_num(v, "ci_low", &out->lo) || opt_num(v, "ci_high", &out->hi))
        return err_set(e, KBV_EINPUT, "%s: estimate, ci_low and ci_high must be numbers or null", what);
    double n;
    if (opt_num(v, "n", &n))
        return err_set(e, KBV_EINPUT, "%s.n: expected a number", what);
    if (!isnan(n) && count_of(n) < 0)
        return err_set(e, KBV_EINPUT, "%s.n: expected a count", what);
    out->n = isnan(n) ? -1 : count_of(n);
    out->ok = !isnan(out->est);
    return 0;
}

/* An estimate's values must lie in [lo, hi] (above lo when lo_open) and its
 * interval must hold it: analyze writes nothing else, so anything else is a
 * changed or foreign file, and a report drawn from it would mislead. */
static int in_range(const rm_est *x, const char *what, double lo, int lo_open, double hi, kbv_err *e)
{
    const double v[3] = {x->est, x->lo, x->hi};
    static const char *const nm[3] = {"estimate", "ci_low", "ci_high"};
    for (int i = 0; i < 3; i++) {
        if (isnan(v[i]))
            continue;
        if (!isfinite(v[i]) || v[i] < lo || (lo_open && v[i] <= lo) || v[i] > hi)
            return err_set(e, KBV_EINPUT, "%s.%s: %g is outside %s%g, %g]", what, nm[i], v[i], lo_open ? "(" : "[",
                           lo, hi);
    }
    if ((!isnan(x->lo) && !isnan(x->est) && x->lo > x->est) || (!isnan(x->hi) && !isnan(x->est) && x->est > x->hi) ||
        (!isnan(x->lo) && !isnan(x->hi) && x->lo > x->hi))
        return err_set(e, KBV_EINPUT, "%s: ci_low %g <= estimate %g <= ci_high %g does not hold", what, x->lo, x->est,
                       x->hi);
    return 0;
}

/* A ratio (speedup, geometric mean, memory efficiency): positive. */
static int read_ratio(const cJSON *v, const char *what, rm_est *out, kbv_err *e)
{
    int rc = read_est(v, what, out, e);
    return rc ? rc : in_range(out, what, 0, 1, HUGE_VAL, e);
}

/* A share (fast_p, efficient share): in [0, 1]. */
static int read_share(const cJSON *v, const char *what, rm_est *out, kbv_err *e)
{
    int rc = read_est(v, what, out, e);
    return rc ? rc : in_range(out, what, 0, 0, 1, e);
}

static int read_fp_list(const cJSON *b, const char *key, const char *what, rm_fp **out, int *n, kbv_err *e)
{
    char w[256];
    *out = NULL;
    *n = 0;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(b, key);
    if (!a || cJSON_IsNull(a))
        return 0;
    if (!cJSON_IsArray(a))
        return err_set(e, KBV_EINPUT, "%s.%s: expected an array", what, key);
    int k = cJSON_GetArraySize(a);
    *out = calloc((size_t)(k ? k : 1), sizeof **out);
    if (!*out)
        return err_set(e, KBV_ENOMEM, "out of memory reading %s", what);
    const cJSON *it;
    int i = 0;
    cJSON_ArrayForEach(it, a) {
        snprintf(w, sizeof w, "%s.%s[%d]", what, key, i);
        double p;
        if (opt_num(it, "p", &p) || isnan(p))
            return err_set(e, KBV_EINPUT, "%s.p: expected a number", w);
        if (!(p >= 0) || !isfinite(p))
            return err_set(e, KBV_EINPUT, "%s.p: %g is not a speedup threshold (>= 0)", w, p);
        (*out)[i].p = p;
        int rc = read_share(it, w, &(*out)[i].v, e);
        if (rc)
            return rc;
        i++;
    }
    *n = k;
    return 0;
}

static int class_index(const rmodel *m, const char *cls)
{
    for (int i = 0; i < m->n_classes; i++)
        if (strcmp(m->classes[i], cls) == 0)
            return i;
    return -1;
}

static int read_problem(const rmodel *m, const cJSON *p, const char *what, int bf16, rm_problem *out, kbv_err *e)
{
    char w[512];
    int rc;
    if ((rc = jio_get_str(p, "problem", what, &out->id, e)) || (rc = jio_get_str(p, "class", what, &out->cls, e)))
        return rc;
    if (class_index(m, out->cls) < 0)
        return err_set(e, KBV_EINPUT, "%s: class '%s' is not in the classes list", what, out->cls);
    out->group = rmodel_group(out->cls);
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(p, "flags");
    if (fl && cJSON_IsArray(fl)) {
        int k = cJSON_GetArraySize(fl);
        out->flags = calloc((size_t)(k ? k : 1), sizeof *out->flags);
        if (!out->flags)
            return err_set(e, KBV_ENOMEM, "out of memory reading %s", what);
        const cJSON *it;
        cJSON_ArrayForEach(it, fl) {
            if (!cJSON_IsString(it))
                return err_set(e, KBV_EINPUT, "%s.flags: expected strings", what);
            out->flags[out->n_flags++] = it->valuestring;
        }
    }
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(p, "evidence");
    if (ev && cJSON_IsArray(ev)) {
        int k = cJSON_GetArraySize(ev);
        out->ev = calloc((size_t)(k ? k : 1), sizeof *out->ev);
        if (!out->ev)
            return err_set(e, KBV_ENOMEM, "out of memory reading %s", what);
        const cJSON *it;
        cJSON_ArrayForEach(it, ev) {
            rm_evidence *x = &out->ev[out->n_ev];
            snprintf(w, sizeof w, "%s.evidence[%d]", what, out->n_ev);
            if ((rc = jio_get_str(it, "text", w, &x->text, e)))
                return rc;
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "kind");
            x->kind = cJSON_IsString(s) ? s->valuestring : "";
            s = cJSON_GetObjectItemCaseSensitive(it, "name");
            x->name = cJSON_IsString(s) ? s->valuestring : "";
            out->n_ev++;
        }
    }
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(p, "speedup");
    /* The set's own baselines; the others stay empty. */
    for (int b = 0; b < RM_NBX; b++) {
        read_est(NULL, what, &out->sp[b], e);
        if ((b == RM_BF16) != bf16)
            continue;
        snprintf(w, sizeof w, "%s.speedup.%s", what, base_names[b]);
        if ((rc = read_ratio(sp ? cJSON_GetObjectItemCaseSensitive(sp, base_names[b]) : NULL, w, &out->sp[b], e)))
            return rc;
    }
    static const char *const vn[RM_NVX] = {"candidate", "fp32", "tf32", "bf16"};
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "time_ms");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(p, "n_samples");
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(p, "peak_bytes");
    for (int v = 0; v < RM_NVX; v++) {
        double x;
        out->t_ms[v] = out->peak[v] = NAN;
        out->n_samples[v] = -1;
        if (v != RM_CAND && (v == RM_VBF16) != bf16)
            continue;
        if (opt_num(t, vn[v], &out->t_ms[v]) || opt_num(pk, vn[v], &out->peak[v]) || opt_num(ns, vn[v], &x))
            return err_set(e, KBV_EINPUT, "%s: time_ms, peak_bytes and n_samples of %s must be numbers or null",
                           what, vn[v]);
        if (!isnan(x) && count_of(x) < 0)
            return err_set(e, KBV_EINPUT, "%s: n_samples.%s: expected a count", what, vn[v]);
        if (!isnan(out->t_ms[v]) && !(out->t_ms[v] > 0 && isfinite(out->t_ms[v])))
            return err_set(e, KBV_EINPUT, "%s: time_ms.%s: %g is not a positive time", what, vn[v], out->t_ms[v]);
        if (!isnan(out->peak[v]) && !(out->peak[v] >= 0 && isfinite(out->peak[v])))
            return err_set(e, KBV_EINPUT, "%s: peak_bytes.%s: %g is not a byte count", what, vn[v], out->peak[v]);
        out->n_samples[v] = isnan(x) ? -1 : count_of(x);
    }
    if (opt_num(p, "max_rel_err", &out->max_rel_err))
        return err_set(e, KBV_EINPUT, "%s.max_rel_err: expected a number or null", what);
    const cJSON *tier = cJSON_GetObjectItemCaseSensitive(p, "tier");
    out->tier = cJSON_IsString(tier) ? tier->valuestring : NULL;
    return 0;
}

/* An analysis written before the class `missing` existed classed a pair
 * without a candidate file as `error`, its evidence "missing: no <file>".
 * Such a pair is read as `missing` (its count moved from error to missing),
 * so that old and new analyses give the same report.  Only that text: a
 * pair that an interrupted collect never finished is an error, and is
 * never hidden among the pairs without a candidate. */
static int old_missing(const rm_problem *q)
{
    if (strcmp(q->cls, "error") != 0)
        return 0;
    for (int k = 0; k < q->n_ev; k++)
        if (strncmp(q->ev[k].text, "missing: no ", 12) == 0)
            return 1;
    return 0;
}

/* A count member: a whole number >= 0; -1 for anything else. */
static long get_count(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? count_of(v->valuedouble) : -1;
}

static int read_fails(const cJSON *arr, const char *key, const char *what, rm_fail **out, int *n, kbv_err *e)
{
    const cJSON *it;
    *out = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof **out);
    if (!*out)
        return err_set(e, KBV_ENOMEM, "out of memory");
    cJSON_ArrayForEach(it, arr) {
        rm_fail *f = &(*out)[*n];
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, key);
        int dist = strcmp(key, "dist") == 0;
        f->run = get_count(it, dist ? "checked" : "run");
        f->failed = get_count(it, "failed");
        f->skipped = dist ? get_count(it, "skipped") : 0;
        if (!cJSON_IsString(nm) || f->run < 0 || f->failed < 0 || f->skipped < 0 || f->failed > f->run)
            return err_set(e, KBV_EINPUT, "%s: failures: an entry needs \"%s\", and counts with failed <= %s",
                           what, key, dist ? "checked" : "run");
        f->name = nm->valuestring;
        (*n)++;
    }
    return 0;
}

/* The breakdowns analyze's levels.c adds (levels, failures,
 * tolerance_sweep, fast_p_share_ci); each is optional, so that an older
 * analysis still renders (the report then says what it lacks). */
static int read_extras(rm_set *out, const cJSON *s, const char *what, kbv_err *e)
{
    char w[400];
    int rc;
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(s, "levels"), *it;
    if (cJSON_IsArray(lv)) {
        out->levels = calloc((size_t)cJSON_GetArraySize(lv) + 1, sizeof *out->levels);
        if (!out->levels)
            return err_set(e, KBV_ENOMEM, "out of memory");
        cJSON_ArrayForEach(it, lv) {
            rm_level *L = &out->levels[out->n_levels];
            snprintf(w, sizeof w, "%s: levels[%d]", what, out->n_levels);
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "level");
            L->n = get_count(it, "n_problems");
            if (!cJSON_IsString(nm) || L->n < 0)
                return err_set(e, KBV_EINPUT, "%s: needs \"level\" and \"n_problems\"", w);
            L->name = nm->valuestring;
            out->n_levels++;
            const cJSON *bl = cJSON_GetObjectItemCaseSensitive(it, "baselines");
            for (int b = 0; b < RM_NB; b++) {
                const cJSON *bo = bl ? cJSON_GetObjectItemCaseSensitive(bl, base_names[b]) : NULL;
                char w2[460];
                snprintf(w2, sizeof w2, "%s.baselines.%s", w, base_names[b]);
                if ((rc = read_est(bo ? cJSON_GetObjectItemCaseSensitive(bo, "geomean_speedup_correct") : NULL, w2,
                                   &L->b[b].gm_correct, e)) ||
                    (rc = read_est(bo ? cJSON_GetObjectItemCaseSensitive(bo, "geomean_speedup_all") : NULL, w2,
                                   &L->b[b].gm_all, e)) ||
                    (bo && (rc = read_fp_list(bo, "fast_p", w2, &L->b[b].fast_p, &L->b[b].n_fast_p, e))))
                    return rc;
            }
            /* The groups from the set's own problems, so that a pair
             * without a candidate counts as missing whatever the analysis
             * called it. */
            size_t nl = strlen(L->name);
            for (int p = 0; p < out->n_probs; p++)
                if (strncmp(out->probs[p].id, L->name, nl) == 0 && out->probs[p].id[nl] == '_')
                    L->group_counts[out->probs[p].group]++;
        }
    }
    const cJSON *fo = cJSON_GetObjectItemCaseSensitive(s, "failures");
    if (cJSON_IsObject(fo)) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(fo, "by_distribution");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(fo, "by_probe");
        if (!cJSON_IsArray(d) || !cJSON_IsArray(p))
            return err_set(e, KBV_EINPUT, "%s: failures needs the arrays by_distribution and by_probe", what);
        if ((rc = read_fails(d, "dist", what, &out->fail_dist, &out->n_fail_dist, e)) ||
            (rc = read_fails(p, "probe", what, &out->fail_probe, &out->n_fail_probe, e)))
            return rc;
        out->has_failures = 1;
    }
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(s, "tolerance_sweep");
    const cJSON *pts = ts ? cJSON_GetObjectItemCaseSensitive(ts, "points") : NULL;
    if (cJSON_IsArray(pts)) {
        out->sweep = calloc((size_t)cJSON_GetArraySize(pts) + 1, sizeof *out->sweep);
        if (!out->sweep)
            return err_set(e, KBV_ENOMEM, "out of memory");
        cJSON_ArrayForEach(it, pts) {
            rm_tol *t = &out->sweep[out->n_sweep];
            const cJSON *ex = cJSON_GetObjectItemCaseSensitive(it, "exact");
            if (opt_num(it, "tolerance", &t->tol) || opt_num(it, "share_correct", &t->share) || !(t->tol > 0) ||
                !(t->share >= 0 && t->share <= 1) || (t->n_correct = get_count(it, "n_correct")) < 0)
                return err_set(e, KBV_EINPUT, "%s: tolerance_sweep.points[%d]: needs tolerance > 0, "
                               "share_correct in [0, 1] and n_correct", what, out->n_sweep);
            t->exact = cJSON_IsTrue(ex);
            out->n_sweep++;
        }
    }
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(s, "fast_p_share_ci");
    if (cJSON_IsArray(sc) && cJSON_GetArraySize(sc) == out->n_problems + 1) {
        out->share_lo = calloc((size_t)out->n_problems + 1, sizeof *out->share_lo);
        out->share_hi = calloc((size_t)out->n_problems + 1, sizeof *out->share_hi);
        if (!out->share_lo || !out->share_hi)
            return err_set(e, KBV_ENOMEM, "out of memory");
        cJSON_ArrayForEach(it, sc) {
            const cJSON *a = cJSON_GetArrayItem(it, 0), *b = cJSON_GetArrayItem(it, 1);
            if (!cJSON_IsArray(it) || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) || !(a->valuedouble >= 0) ||
                !(b->valuedouble <= 1) || a->valuedouble > b->valuedouble)
                return err_set(e, KBV_EINPUT, "%s: fast_p_share_ci[%ld]: expected [low, high] within [0, 1]", what,
                               out->n_share);
            out->share_lo[out->n_share] = a->valuedouble;
            out->share_hi[out->n_share] = b->valuedouble;
            out->n_share++;
        }
    }
    return 0;
}

/* Marks the missing pairs and lists the others in s->shown. */
static int find_missing(rm_set *s, kbv_err *e)
{
    s->shown = calloc((size_t)(s->n_probs ? s->n_probs : 1), sizeof *s->shown);
    if (!s->shown)
        return err_set(e, KBV_ENOMEM, "out of memory");
    for (int p = 0; p < s->n_probs; p++) {
        rm_problem *q = &s->probs[p];
        if (old_missing(q)) {
            q->cls = "missing";
            q->group = RM_G_MISSING;
            if (s->group_counts[RM_G_ERROR] > 0)
                s->group_counts[RM_G_ERROR]--;
            s->group_counts[RM_G_MISSING]++;
        }
        if (q->group != RM_G_MISSING)
            s->shown[s->n_shown++] = p;
    }
    return 0;
}

static int read_set(rmodel *m, const cJSON *s, int idx, rm_set *out, kbv_err *e)
{
    char what[256], w[320];
    int rc;
    snprintf(what, sizeof what, "analysis.json: sets[%d]", idx);
    if ((rc = jio_get_str(s, "name", what, &out->name, e)))
        return rc;
    snprintf(what, sizeof what, "analysis.json: set '%s'", out->name);
    /* The setting: "precision" is absent in an analysis from before the
     * BF16 setting, whose sets are all FP32. */
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(s, "precision");
    if (pr && !(cJSON_IsString(pr) && (strcmp(pr->valuestring, "fp32") == 0 || strcmp(pr->valuestring, "bf16") == 0)))
        return err_set(e, KBV_EINPUT, "%s: precision must be \"fp32\" or \"bf16\"", what);
    out->bf16 = pr && strcmp(pr->valuestring, "bf16") == 0;
    out->cmp = -1;
    if (opt_text(s, "compare_with", &out->compare_with))
        return err_set(e, KBV_EINPUT, "%s: compare_with must be a set name", what);
    long long np = 0;
    if ((rc = jio_get_int(s, "n_problems", what, &np, e)))
        return rc;
    if (np < 0)
        return err_set(e, KBV_EINPUT, "%s: n_problems must not be negative", what);
    out->n_problems = (long)np;
    const cJSON *counts;
    if ((rc = jio_get_obj(s, "counts", what, &counts, e)))
        return rc;
    for (int c = 0; c < m->n_classes; c++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(counts, m->classes[c]);
        if (v && !cJSON_IsNumber(v))
            return err_set(e, KBV_EINPUT, "%s: counts.%s: expected a number", what, m->classes[c]);
        if (v && count_of(v->valuedouble) < 0)
            return err_set(e, KBV_EINPUT, "%s: counts.%s: expected a count", what, m->classes[c]);
        out->counts[c] = v ? count_of(v->valuedouble) : 0;
        out->group_counts[rmodel_group(m->classes[c])] += out->counts[c];
    }
    const cJSON *bl;
    if ((rc = jio_get_obj(s, "baselines", what, &bl, e)))
        return rc;
    for (int b = 0; b < RM_NBX; b++) {
        const cJSON *bo;
        if ((b == RM_BF16) != out->bf16)
            continue;
        snprintf(w, sizeof w, "%s: baselines", what);
        if ((rc = jio_get_obj(bl, base_names[b], w, &bo, e)))
            return rc;
        snprintf(w, sizeof w, "%s: baselines.%s", what, base_names[b]);
        char w2[400];
        snprintf(w2, sizeof w2, "%s.geomean_speedup_correct", w);
        if ((rc = read_ratio(cJSON_GetObjectItemCaseSensitive(bo, "geomean_speedup_correct"), w2, &out->b[b].gm_correct, e)))
            return rc;
        snprintf(w2, sizeof w2, "%s.geomean_speedup_all", w);
        if ((rc = read_ratio(cJSON_GetObjectItemCaseSensitive(bo, "geomean_speedup_all"), w2, &out->b[b].gm_all, e)))
            return rc;
        if ((rc = read_fp_list(bo, "fast_p", w, &out->b[b].fast_p, &out->b[b].n_fast_p, e)) ||
            (rc = read_fp_list(bo, "fast_p_curve", w, &out->b[b].curve, &out->b[b].n_curve, e)))
            return rc;
    }
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(s, "memory");
    snprintf(w, sizeof w, "%s: memory.efficiency_geomean", what);
    if ((rc = read_ratio(mem ? cJSON_GetObjectItemCaseSensitive(mem, "efficiency_geomean") : NULL, w, &out->mem_eff, e)))
        return rc;
    snprintf(w, sizeof w, "%s: memory.efficient_share", what);
    if ((rc = read_share(mem ? cJSON_GetObjectItemCaseSensitive(mem, "efficient_share") : NULL, w, &out->mem_share, e)))
        return rc;
    const cJSON *inf = cJSON_GetObjectItemCaseSensitive(s, "inflation");
    if (inf && cJSON_IsArray(inf)) {
        int k = cJSON_GetArraySize(inf);
        out->infl = calloc((size_t)(k ? k : 1), sizeof *out->infl);
        if (!out->infl)
            return err_set(e, KBV_ENOMEM, "out of memory reading %s", what);
        const cJSON *it;
        cJSON_ArrayForEach(it, inf) {
            rm_infl *x = &out->infl[out->n_infl];
            snprintf(w, sizeof w, "%s: inflation[%d]", what, out->n_infl);
            if ((rc = jio_get_str(it, "step", w, &x->step, e)) || (rc = jio_get_str(it, "label", w, &x->label, e)))
                return rc;
            char w2[400];
            snprintf(w2, sizeof w2, "%s.geomean", w);
            if ((rc = read_ratio(cJSON_GetObjectItemCaseSensitive(it, "geomean"), w2, &x->gm, e)))
                return rc;
            out->n_infl++;
        }
    }
    const cJSON *probs;
    if ((rc = jio_get_arr(s, "problems", what, &probs, e)))
        return rc;
    int k = cJSON_GetArraySize(probs);
    out->probs = calloc((size_t)(k ? k : 1), sizeof *out->probs);
    if (!out->probs)
        return err_set(e, KBV_ENOMEM, "out of memory reading %s", what);
    const cJSON *it;
    cJSON_ArrayForEach(it, probs) {
        snprintf(w, sizeof w, "%s: problems[%d]", what, out->n_probs);
        rc = read_problem(m, it, w, out->bf16, &out->probs[out->n_probs], e);
        out->n_probs++;   /* counted even on failure, so that its lists are freed */
        if (rc)
            return rc;
    }
    if ((rc = find_missing(out, e)))
        return rc;
    return read_extras(out, s, what, e);
}

/* --- parity ------------------------------------------------------------------ */

static const char *const parity_base_names[RM_NBX] = {"fp32_ratio", "tf32_ratio", "bf16_ratio"};

/* One problem of analysis.json's "parity" (analyze's verdict). */
static int read_parity_item(const cJSON *it, const char *w, rm_parity *q, kbv_err *e)
{
    int rc, within;
    if (!cJSON_IsObject(it))
        return err_set(e, KBV_EINPUT, "%s: expected an object", w);
    if ((rc = jio_get_str(it, "problem", w, &q->id, e)) || (rc = jio_get_bool(it, "within", w, &within, e)))
        return rc;
    for (int b = 0; b < RM_NBX; b++)
        if (opt_num(it, parity_base_names[b], &q->ratio[b]) || (!isnan(q->ratio[b]) && !(q->ratio[b] >= 0)))
            return err_set(e, KBV_EINPUT, "%s (%s): \"%s\" must be a number >= 0 or null", w, q->id,
                           parity_base_names[b]);
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(it, "reason");
    q->flagged = !within;
    q->reason = cJSON_IsString(why) ? why->valuestring : NULL;
    if (q->flagged && !q->reason)
        return err_set(e, KBV_EINPUT, "%s (%s): a problem not within the limit needs a string \"reason\"", w, q->id);
    return 0;
}

/* analysis.json's "parity" (analyze/parity.h): what the baselines' parity
 * with PyTorch was measured on, the limit, and each problem's verdict, in
 * run order.  Absent or null when the run had no parity.json.  Every string
 * is borrowed from m->analysis. */
static int read_parity(rmodel *m, kbv_err *e)
{
    static const char w[] = "analysis.json: parity";
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(m->analysis, "parity"), *probs, *it;
    if (!d || cJSON_IsNull(d))
        return 0;
    if (!cJSON_IsObject(d))
        return err_set(e, KBV_EINPUT, "%s: expected an object or null", w);
    int rc;
    long long ns;
    if ((rc = jio_get_str(d, "gpu", w, &m->parity_gpu, e)) || (rc = jio_get_str(d, "torch", w, &m->parity_torch, e)) ||
        (rc = jio_get_str(d, "cuda", w, &m->parity_cuda, e)) || (rc = jio_get_int(d, "samples", w, &ns, e)) ||
        (rc = jio_get_num(d, "limit", w, &m->parity_limit, e)) || (rc = jio_get_arr(d, "problems", w, &probs, e)))
        return rc;
    if (ns < 1 || !(m->parity_limit > 0))
        return err_set(e, KBV_EINPUT, "%s: \"samples\" must be at least 1 and \"limit\" above 0", w);
    m->parity_samples = (long)ns;
    int n = cJSON_GetArraySize(probs);
    m->parity = calloc((size_t)(n ? n : 1), sizeof *m->parity);
    if (!m->parity)
        return err_set(e, KBV_ENOMEM, "out of memory");
    cJSON_ArrayForEach(it, probs) {
        char wi[96];
        snprintf(wi, sizeof wi, "%s: problems[%d]", w, m->n_parity);
        if ((rc = read_parity_item(it, wi, &m->parity[m->n_parity], e)))
            return rc;
        m->n_parity_flagged += m->parity[m->n_parity].flagged;
        m->n_parity++;
    }
    m->has_parity = 1;
    /* Each problem row of every set points at its baseline's verdict when
     * it is not within the limit. */
    const char **ids = calloc((size_t)(n ? n : 1), sizeof *ids);
    nmap *by_id = NULL;
    if (!ids)
        return err_set(e, KBV_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++)
        ids[i] = m->parity[i].id;
    rc = nmap_build(ids, (size_t)n, &by_id, e);
    for (int i = 0; !rc && i < m->n_sets; i++)
        for (int p = 0; p < m->sets[i].n_probs; p++) {
            long k = nmap_find(by_id, m->sets[i].probs[p].id);
            if (k >= 0 && m->parity[k].flagged)
                m->sets[i].probs[p].parity = &m->parity[k];
        }
    nmap_free(by_id);
    free(ids);
    if (!rc) {
        const char *dev = m->device ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m->device, "name")) : NULL;
        if (dev && strcmp(dev, m->parity_gpu) != 0)
            log_warn("render", "parity measured on %s, the run on %s", m->parity_gpu, dev);
    }
    return rc;
}

/* --- baseline_drift --------------------------------------------------------- */

/* A number member that may be absent or null (*out NaN), else finite and
 * > 0; -1 for anything else. */
static int opt_pos(const cJSON *o, const char *key, double *out)
{
    if (opt_num(o, key, out))
        return -1;
    return isnan(*out) || (*out > 0 && isfinite(*out)) ? 0 : -1;
}

/* Reads analysis.json's baseline_drift (absent in an analysis made before it
 * existed: has_drift stays 0) and marks the problem in each set whose
 * median was compared.  The
 * causes (cause, clock_ratio, each set's sm_mhz and choice) came later: an
 * entry without them reads as unknown. */
static int read_drift(rmodel *m, kbv_err *e)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(m->analysis, "baseline_drift"), *it;
    if (!d)
        return 0;
    if (!cJSON_IsArray(d))
        return err_set(e, KBV_EINPUT, "analysis.json: baseline_drift: expected an array");
    int n = cJSON_GetArraySize(d), i = 0, rc;
    m->drift = calloc((size_t)(n ? n : 1), sizeof *m->drift);
    if (!m->drift)
        return err_set(e, KBV_ENOMEM, "out of memory");
    m->has_drift = 1;
    cJSON_ArrayForEach(it, d) {
        char w[96];
        snprintf(w, sizeof w, "analysis.json: baseline_drift[%d]", i);
        rm_drift *x = &m->drift[i];
        const char *bl;
        const cJSON *ss, *s;
        if (!cJSON_IsObject(it))
            return err_set(e, KBV_EINPUT, "%s: expected an object", w);
        if ((rc = jio_get_str(it, "problem", w, &x->problem, e)) || (rc = jio_get_str(it, "baseline", w, &bl, e)))
            return rc;
        x->baseline = strcmp(bl, "fp32") == 0   ? RM_FP32
                      : strcmp(bl, "tf32") == 0 ? RM_TF32
                      : strcmp(bl, "bf16") == 0 ? RM_BF16
                                                : -1;
        if (x->baseline < 0)
            return err_set(e, KBV_EINPUT, "%s: baseline '%s' is not fp32, tf32 or bf16", w, bl);
        if (opt_num(it, "drift", &x->drift) || !(x->drift > 0))
            return err_set(e, KBV_EINPUT, "%s: \"drift\" must be a number > 0", w);
        if (opt_pos(it, "clock_ratio", &x->clock_ratio))
            return err_set(e, KBV_EINPUT, "%s: \"clock_ratio\" must be a finite number > 0 or null", w);
        if (opt_text(it, "cause", &x->cause))
            return err_set(e, KBV_EINPUT, "%s: \"cause\" must be a string or null", w);
        if ((rc = jio_get_arr(it, "sets", w, &ss, e)))
            return rc;
        int k = cJSON_GetArraySize(ss);
        if (k < 2)
            return err_set(e, KBV_EINPUT, "%s: \"sets\" must list at least two sets", w);
        x->sets = calloc((size_t)k, sizeof *x->sets);
        if (!x->sets)
            return err_set(e, KBV_ENOMEM, "out of memory");
        i++;
        m->n_drift = i;
        cJSON_ArrayForEach(s, ss) {
            char w2[128];
            snprintf(w2, sizeof w2, "%s.sets[%d]", w, x->n_sets);
            rm_drift_set *q = &x->sets[x->n_sets];
            double nn;
            if (!cJSON_IsObject(s))
                return err_set(e, KBV_EINPUT, "%s: expected an object", w2);
            if ((rc = jio_get_str(s, "set", w2, &q->set, e)))
                return rc;
            if (opt_num(s, "median_ms", &q->med) || opt_num(s, "ci_low_ms", &q->lo) ||
                opt_num(s, "ci_high_ms", &q->hi) || opt_num(s, "n", &nn) || (!isnan(nn) && count_of(nn) < 0))
                return err_set(e, KBV_EINPUT, "%s: median_ms, ci_low_ms, ci_high_ms must be numbers or null, n a count",
                               w2);
            q->n = isnan(nn) ? -1 : count_of(nn);
            if (opt_pos(s, "sm_mhz", &q->mhz))
                return err_set(e, KBV_EINPUT, "%s: \"sm_mhz\" must be a finite number > 0 or null", w2);
            if (opt_text(s, "choice", &q->choice))
                return err_set(e, KBV_EINPUT, "%s: \"choice\" must be a string or null", w2);
            /* The first set wins a tie, as in analyze. */
            if (x->n_sets == 0 || q->med > x->sets[x->slow].med)
                x->slow = x->n_sets;
            if (x->n_sets == 0 || q->med < x->sets[x->fast].med)
                x->fast = x->n_sets;
            x->n_sets++;
        }
        /* Marked in the sets whose medians were compared, not in a set
         * where the problem has no baseline samples (a missing candidate). */
        for (int si = 0; si < m->n_sets; si++) {
            int compared = 0;
            for (int q = 0; q < x->n_sets && !compared; q++)
                compared = m->sets[si].name && strcmp(m->sets[si].name, x->sets[q].set) == 0;
            for (int p = 0; compared && p < m->sets[si].n_probs; p++)
                if (strcmp(m->sets[si].probs[p].id, x->problem) == 0)
                    m->sets[si].probs[p].drift |= 1u << x->baseline;
        }
    }
    return 0;
}

/* Moves the BF16 sets out of m->sets into m->bsets (both in analysis
 * order), so that every FP32 section draws the FP32 sets alone, and finds
 * the FP32 set each BF16 set compares with. */
static int split_sets(rmodel *m, kbv_err *e)
{
    int nb = 0;
    for (int i = 0; i < m->n_sets; i++)
        nb += m->sets[i].bf16;
    if (nb == 0)
        return 0;
    m->bsets = calloc((size_t)nb, sizeof *m->bsets);
    if (!m->bsets)
        return err_set(e, KBV_ENOMEM, "out of memory");
    int k = 0;
    for (int i = 0; i < m->n_sets; i++) {
        if (m->sets[i].bf16)
            m->bsets[m->n_bsets++] = m->sets[i];
        else
            m->sets[k++] = m->sets[i];
    }
    m->n_sets = k;
    for (int j = 0; j < m->n_bsets; j++) {
        rm_set *b = &m->bsets[j];
        for (int i = 0; b->compare_with && i < m->n_sets && b->cmp < 0; i++)
            if (strcmp(m->sets[i].name, b->compare_with) == 0)
                b->cmp = i;
        if (b->compare_with && b->cmp < 0)
            log_warn("render", "BF16 set %s compares with %s, which is not an FP32 set of this analysis", b->name,
                     b->compare_with);
    }
    return 0;
}

const rm_est *rmodel_fp32_of(const rmodel *m, const rm_set *bs, int p, const rm_problem **fq)
{
    *fq = NULL;
    if (bs->cmp < 0 || p < 0 || p >= bs->n_probs)
        return NULL;
    const rm_set *f = &m->sets[bs->cmp];
    const char *id = bs->probs[p].id;
    /* Both sets list the run's problems in run order: the same index first. */
    if (p < f->n_probs && strcmp(f->probs[p].id, id) == 0)
        *fq = &f->probs[p];
    for (int i = 0; !*fq && i < f->n_probs; i++)
        if (strcmp(f->probs[i].id, id) == 0)
            *fq = &f->probs[i];
    return *fq ? &(*fq)->sp[RM_FP32] : NULL;
}

/* analysis.json must describe the run beside it: the same run_id, and only
 * sets the manifest names (a file copied in from another run would put
 * another run's numbers under this run's summary). */
static int agrees_with_manifest(const rmodel *m, kbv_err *e)
{
    if (!m->manifest)
        return 0;
    const cJSON *rid = cJSON_GetObjectItemCaseSensitive(m->manifest, "run_id");
    if (!cJSON_IsString(rid) || strcmp(rid->valuestring, m->run_id) != 0)
        return err_set(e, KBV_EINPUT, "analysis.json: run_id '%s' is not the manifest's ('%s'): it belongs to another run",
                       m->run_id, cJSON_IsString(rid) ? rid->valuestring : "none");
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(m->manifest, "sets");
    for (int j = 0; j < m->n_sets + m->n_bsets; j++) {
        const rm_set *st = j < m->n_sets ? &m->sets[j] : &m->bsets[j - m->n_sets];
        int found = 0;
        const cJSON *it;
        if (cJSON_IsArray(ms))
            cJSON_ArrayForEach(it, ms) {
                const cJSON *n = cJSON_IsString(it) ? it : cJSON_GetObjectItemCaseSensitive(it, "name");
                if (cJSON_IsString(n) && strcmp(n->valuestring, st->name) == 0)
                    found = 1;
            }
        if (!found)
            return err_set(e, KBV_EINPUT, "analysis.json: set '%s' is not in manifest.json", st->name);
    }
    return 0;
}

int rmodel_load(rmodel **out, const char *run_dir, kbv_err *e)
{
    *out = NULL;
    char path[4096];
    int rc;
    rmodel *m = calloc(1, sizeof *m);
    if (!m)
        return err_set(e, KBV_ENOMEM, "out of memory");
    m->seed = -1;
    snprintf(path, sizeof path, "%s/analysis.json", run_dir);
    if (access(path, F_OK) != 0) {
        rc = err_set(e, KBV_EINPUT, "%s: not found (run `kbv analyze %s` first)", path, run_dir);
        goto fail;
    }
    if ((rc = jio_load(path, &m->analysis, e)))
        goto fail;
    const cJSON *a = m->analysis;
    const char *schema;
    if ((rc = jio_get_str(a, "schema", "analysis.json", &schema, e)))
        goto fail;
    if (strcmp(schema, KBV_SCHEMA_ANALYSIS) != 0) {
        rc = err_set(e, KBV_EINPUT, "%s: schema '%s' is not kbv-analysis/1", path, schema);
        goto fail;
    }
    if ((rc = jio_get_str(a, "run_id", "analysis.json", &m->run_id, e)) ||
        (rc = jio_get_str(a, "created_utc", "analysis.json", &m->created_utc, e)))
        goto fail;
    const cJSON *cl;
    if ((rc = jio_get_arr(a, "classes", "analysis.json", &cl, e)))
        goto fail;
    const cJSON *it;
    cJSON_ArrayForEach(it, cl) {
        if (!cJSON_IsString(it) || m->n_classes == RM_MAX_CLASSES) {
            rc = err_set(e, KBV_EINPUT, "analysis.json: classes: expected at most %d strings", RM_MAX_CLASSES);
            goto fail;
        }
        m->classes[m->n_classes++] = it->valuestring;
    }
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(a, "config");
    double x;
    m->ci_level = 0.95;
    m->resamples = 10000;
    m->mem_baseline = "tf32";
    if (cfg) {
        if (opt_num(cfg, "ci_level", &x) == 0 && !isnan(x))
            m->ci_level = x;
        if (opt_num(cfg, "bootstrap_resamples", &x) == 0 && count_of(x) >= 0)
            m->resamples = count_of(x);
        if (opt_num(cfg, "bootstrap_seed", &x) == 0 && count_of(x) >= 0)
            m->seed = count_of(x);
        const cJSON *mb = cJSON_GetObjectItemCaseSensitive(cfg, "memory_baseline");
        if (cJSON_IsString(mb) && (strcmp(mb->valuestring, "fp32") == 0 || strcmp(mb->valuestring, "tf32") == 0))
            m->mem_baseline = mb->valuestring;
    }
    m->device = cJSON_GetObjectItemCaseSensitive(a, "device");
    m->harness = cJSON_GetObjectItemCaseSensitive(a, "harness");
    m->n_pairs = m->n_unfinished = -1;
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(a, "pairs");
    if (pairs) {
        m->n_pairs = get_count(pairs, "total");
        m->n_unfinished = get_count(pairs, "unfinished");
        if (!cJSON_IsObject(pairs) || m->n_pairs < 0 || m->n_unfinished < 0 || m->n_unfinished > m->n_pairs) {
            rc = err_set(e, KBV_EINPUT, "%s: pairs: expected {total, unfinished}, counts with unfinished <= total", path);
            goto fail;
        }
    }

    snprintf(path, sizeof path, "%s/manifest.json", run_dir);
    if (access(path, F_OK) == 0) {
        if ((rc = jio_load(path, &m->manifest, e)))
            goto fail;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->manifest, "device");
        if (cJSON_IsObject(v))
            m->device = v;
        v = cJSON_GetObjectItemCaseSensitive(m->manifest, "harness");
        if (cJSON_IsObject(v))
            m->harness = v;
        v = cJSON_GetObjectItemCaseSensitive(m->manifest, "d5");
        if (cJSON_IsObject(v))
            m->d5 = v;
        v = cJSON_GetObjectItemCaseSensitive(m->manifest, "d5_label");
        if (cJSON_IsObject(v))
            m->d5_label = v;
        v = cJSON_GetObjectItemCaseSensitive(m->manifest, "config");
        if (cJSON_IsObject(v)) {
            m->run_config = v;
            if (opt_num(v, "seed", &x) == 0 && count_of(x) >= 0)
                m->seed = count_of(x);
        }
    } else {
        log_warn("render", "%s: not found; the run summary uses analysis.json's copies", path);
    }

    const cJSON *sets;
    if ((rc = jio_get_arr(a, "sets", "analysis.json", &sets, e)))
        goto fail;
    int ns = cJSON_GetArraySize(sets);
    m->sets = calloc((size_t)(ns ? ns : 1), sizeof *m->sets);
    if (!m->sets) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto fail;
    }
    cJSON_ArrayForEach(it, sets) {
        if ((rc = read_set(m, it, m->n_sets, &m->sets[m->n_sets], e))) {
            m->n_sets++;
            goto fail;
        }
        if (m->sets[m->n_sets].n_problems > m->n_problems)
            m->n_problems = m->sets[m->n_sets].n_problems;
        m->n_sets++;
    }
    if ((rc = split_sets(m, e)) || (rc = agrees_with_manifest(m, e)) || (rc = read_drift(m, e)) ||
        (rc = read_parity(m, e)))
        goto fail;
    *out = m;
    return 0;
fail:
    /* The readers above name the file "analysis.json"; the run folder in
     * front makes the message say which one. */
    if (rc == KBV_EINPUT && e && strncmp(e->msg, "analysis.json", 13) == 0)
        err_prefix(e, "%s", run_dir);
    rmodel_free(m);
    return rc;
}

int rmodel_d5_from(rmodel *m, const char *path, kbv_err *e)
{
    if (m->d5 || access(path, F_OK) != 0)
        return 0;
    int rc = jio_load(path, &m->d5_doc, e);
    if (rc)
        return rc;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(m->d5_doc, "schema");
    const cJSON *d5 = cJSON_GetObjectItemCaseSensitive(m->d5_doc, "d5");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "kbv-d5/1") != 0 || !cJSON_IsObject(d5))
        return err_set(e, KBV_EINPUT, "%s: not a kbv-d5/1 table", path);
    for (const cJSON *it = d5->child; it; it = it->next)
        if (!cJSON_IsString(it))
            return err_set(e, KBV_EINPUT, "%s: problem %.80s: its D5 is not a string", path,
                           it->string ? it->string : "?");
    const cJSON *lab = cJSON_GetObjectItemCaseSensitive(m->d5_doc, "d5_label");
    m->d5 = d5;
    m->d5_label = cJSON_IsObject(lab) ? lab : NULL;
    m->d5_from_suite = 1;
    return 0;
}

const char *rmodel_d5(const rmodel *m, const char *id)
{
    const cJSON *v = m->d5 ? cJSON_GetObjectItemCaseSensitive(m->d5, id) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *rmodel_d5_label(const rmodel *m, const char *id)
{
    const cJSON *v = m->d5_label ? cJSON_GetObjectItemCaseSensitive(m->d5_label, id) : NULL;
    return cJSON_IsString(v) ? v->valuestring : rmodel_d5(m, id);
}

void rmodel_free(rmodel *m)
{
    if (!m)
        return;
    cJSON_Delete(m->d5_doc);
    for (int i = 0; i < m->n_sets + m->n_bsets; i++) {
        rm_set *s = i < m->n_sets ? &m->sets[i] : &m->bsets[i - m->n_sets];
        for (int b = 0; b < RM_NBX; b++) {
            free(s->b[b].fast_p);
            free(s->b[b].curve);
        }
        free(s->infl);
        for (int p = 0; p < s->n_probs; p++) {
            free(s->probs[p].flags);
            free(s->probs[p].ev);
        }
        free(s->probs);
        free(s->shown);
        for (int l = 0; s->levels && l < s->n_levels; l++)
            for (int b = 0; b < RM_NB; b++)
                free(s->levels[l].b[b].fast_p);
        free(s->levels);
        free(s->fail_dist);
        free(s->fail_probe);
        free(s->sweep);
        free(s->share_lo);
        free(s->share_hi);
    }
    free(m->sets);
    free(m->bsets);
    free(m->parity);
    for (int i = 0; i < m->n_drift; i++)
        free(m->drift[i].sets);
    free(m->drift);
    cJSON_Delete(m->analysis);
    cJSON_Delete(m->manifest);
    free(m);
}
