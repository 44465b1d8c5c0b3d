/* drift.c - see drift.h. */
#include "drift.h"

#include <stdlib.h>
#include <string.h>

#include "jio.h"
#include "rvec.h"
#include "ostat.h"
#include "stats.h"

double drift_median_ci(const double *x, size_t n, double level, double *lo, double *hi)
{
    /* Too few samples for the level give the whole range (see drift.h). */
    (void)ostat_median_ci(x, n, level, lo, hi);
    return ostat_median_sorted(x, n);
}

/* One set's numbers for a (problem, baseline). */
typedef struct dset {
    size_t set, n;
    double med, lo, hi;
    double mhz;            /* median SM clock; 0 when no sample has one */
    char *choice;          /* owned; NULL when the set has no baseline record */
} dset;

static int span_cmp(const void *a, const void *b)
{
    double x = ((const run_mhz_span *)a)->mhz, y = ((const run_mhz_span *)b)->mhz;
    return (x > y) - (x < y);
}

/* The value at 0-based rank i of the samples that spans s[0..n) (sorted by
 * clock) count. */
static double span_rank(const run_mhz_span *s, size_t n, size_t i)
{
    for (size_t k = 0; k < n; k++) {
        if (i < s[k].n) return s[k].mhz;
        i -= s[k].n;
    }
    return s[n - 1].mhz;
}

/* The median clock of m (the median as DESIGN 7 defines it), 0 when no
 * sample has a clock; buf holds at least m->n spans. */
static double mhz_median(const run_mhz *m, run_mhz_span *buf)
{
    if (!m->samples) return 0;
    memcpy(buf, m->s, m->n * sizeof *buf);
    qsort(buf, m->n, sizeof *buf, span_cmp);
    size_t c = m->samples;
    double a = span_rank(buf, m->n, (c - 1) / 2), b = span_rank(buf, m->n, c / 2);
    return a == b ? a : (a + b) / 2;
}

/* The distinct choices of a pair's baseline joined with " | " in journal
 * order; NULL (and 0) when there are none, a negative code without memory. */
static int choice_text(const run_pair *pr, int v, char **out, kbv_err *e)
{
    *out = NULL;
    if (!pr->n_choices[v]) return 0;
    size_t len = 1;
    for (size_t i = 0; i < pr->n_choices[v]; i++) len += strlen(pr->choices[v][i]) + 3;
    char *t = malloc(len);
    if (!t) return err_set(e, KBV_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < pr->n_choices[v]; i++) {
        size_t n = strlen(pr->choices[v][i]);
        if (i) {
            memcpy(t + k, " | ", 3);
            k += 3;
        }
        memcpy(t + k, pr->choices[v][i], n);
        k += n;
    }
    t[k] = '\0';
    *out = t;
    return 0;
}

/* Why the slowest set's baseline ran slower than the fastest set's: another
 * algorithm when both sets name their choice and the texts differ, else a
 * lower SM clock when both know their clock and the fastest set's is at
 * least DRIFT_CLOCK_LIMIT times the slowest's; else not explained. */
static const char *drift_cause(const dset *slow, const dset *fast)
{
    if (slow->choice && fast->choice && strcmp(slow->choice, fast->choice) != 0) return "algorithm";
    if (slow->mhz > 0 && fast->mhz > 0 && fast->mhz / slow->mhz >= DRIFT_CLOCK_LIMIT) return "clock";
    return "unexplained";
}

/* A flagged (problem, baseline) before sorting. */
typedef struct dflag {
    size_t prob;
    int bl;
    double drift;
    cJSON *json;
} dflag;

static int dflag_cmp(const void *a, const void *b)
{
    const dflag *x = a, *y = b;
    if (x->drift != y->drift) return x->drift > y->drift ? -1 : 1;
    if (x->prob != y->prob) return x->prob < y->prob ? -1 : 1;
    return (x->bl > y->bl) - (x->bl < y->bl);
}

static cJSON *entry_json(const run_data *r, size_t prob, int bl, double drift, const dset *ds, size_t nd,
                         size_t slow, size_t fast)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "problem", r->problem_ids[prob]);
    cJSON_AddStringToObject(o, "baseline", run_variant_names[bl]);
    jio_add_num(o, "drift", drift);
    if (ds[slow].mhz > 0 && ds[fast].mhz > 0) jio_add_num(o, "clock_ratio", ds[fast].mhz / ds[slow].mhz);
    cJSON_AddStringToObject(o, "cause", drift_cause(&ds[slow], &ds[fast]));
    cJSON *sa = cJSON_AddArrayToObject(o, "sets");
    for (size_t k = 0; k < nd; k++) {
        cJSON *s = cJSON_CreateObject();
        if (!s) break;
        cJSON_AddStringToObject(s, "set", r->set_names[ds[k].set]);
        jio_add_num(s, "median_ms", ds[k].med);
        jio_add_num(s, "ci_low_ms", ds[k].lo);
        jio_add_num(s, "ci_high_ms", ds[k].hi);
        cJSON_AddNumberToObject(s, "n", (double)ds[k].n);
        if (ds[k].mhz > 0) jio_add_num(s, "sm_mhz", ds[k].mhz);
        if (ds[k].choice) cJSON_AddStringToObject(s, "choice", ds[k].choice);
        cJSON_AddItemToArray(sa, s);
    }
    return o;
}

int drift_build(const run_data *r, double level, const unsigned char *skip, cJSON **out, kbv_err *e)
{
    int rc = 0;
    size_t maxn = 1, maxs = 1, nf = 0, nd = 0;
    for (size_t i = 0; i < r->n_sets * r->n_problems; i++)
        for (int v = RUN_V_FP32; v < RUN_NV; v++) {
            if (r->pairs[i].times[v].n > maxn) maxn = r->pairs[i].times[v].n;
            if (r->pairs[i].mhz[v].n > maxs) maxs = r->pairs[i].mhz[v].n;
        }
    double *buf = malloc(maxn * sizeof *buf);
    run_mhz_span *sbuf = malloc(maxs * sizeof *sbuf);
    dset *ds = calloc(r->n_sets + 1, sizeof *ds);
    dflag *fl = calloc((RUN_NV - 1) * r->n_problems + 1, sizeof *fl);
    cJSON *arr = cJSON_CreateArray();
    if (!buf || !sbuf || !ds || !fl || !arr) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t p = 0; p < r->n_problems; p++) {
        for (int v = RUN_V_FP32; v < RUN_NV; v++) {
            size_t slow = 0, fast = 0;
            for (size_t k = 0; k < nd; k++) {
                free(ds[k].choice);
                ds[k].choice = NULL;
            }
            nd = 0;
            for (size_t s = 0; s < r->n_sets; s++) {
                if (skip && skip[s * r->n_problems + p]) continue;
                const run_pair *pr = run_pair_at(r, s, p);
                const run_vec *t = &pr->times[v];
                if (!t->n) continue;
                dset *d = &ds[nd];
                d->set = s;
                d->n = t->n;
                d->med = rvec_centre_ci(t, level, buf, &d->lo, &d->hi);
                d->mhz = mhz_median(&pr->mhz[v], sbuf);
                if ((rc = choice_text(pr, v, &d->choice, e))) goto done;
                /* The first set wins a tie, so the choice does not depend
                 * on anything but the run's order. */
                if (d->med > ds[slow].med) slow = nd;
                if (d->med < ds[fast].med) fast = nd;
                nd++;
            }
            if (nd < 2) continue;
            double drift = ds[slow].med / ds[fast].med;
            if (!(drift > DRIFT_LIMIT) || !(ds[slow].lo > ds[fast].hi)) continue;
            fl[nf] = (dflag){p, v, drift, entry_json(r, p, v, drift, ds, nd, slow, fast)};
            if (!fl[nf].json) {
                rc = err_set(e, KBV_ENOMEM, "out of memory");
                goto done;
            }
            nf++;
        }
    }
    qsort(fl, nf, sizeof *fl, dflag_cmp);
    for (size_t k = 0; k < nf; k++) {
        cJSON_AddItemToArray(arr, fl[k].json);
        fl[k].json = NULL;
    }
    *out = arr;
    arr = NULL;
done:
    for (size_t k = 0; fl && k < nf; k++) cJSON_Delete(fl[k].json);
    for (size_t k = 0; ds && k < nd; k++) free(ds[k].choice);
    cJSON_Delete(arr);
    free(buf);
    free(sbuf);
    free(ds);
    free(fl);
    return rc;
}
