/* drift.c - see drift.h. */
#include "drift.h"

#include <stdlib.h>
#include <string.h>

#include "jio.h"
#include "stats.h"

double drift_median_ci(const double *x, size_t n, double level, double *lo, double *hi)
{
    /* P(x_(k) <= median) = P(B >= k) with B ~ Binomial(n, 1/2), so
     * [x_(k), x_(n+1-k)] misses the median with probability 2 P(B <= k-1),
     * below 1 - level for the k chosen here. */
    long k = stats_binom_quantile((long)n, 0.5, (1 - level) / 2);
    size_t i = k >= 1 ? (size_t)k - 1 : 0;
    if (i > (n - 1) / 2) i = (n - 1) / 2;
    *lo = x[i];
    *hi = x[n - 1 - i];
    return stats_median_sorted(x, n);
}

/* One set's numbers for a (problem, baseline). */
typedef struct dset {
    size_t set, n;
    double med, lo, hi;
} dset;

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

static cJSON *entry_json(const run_data *r, size_t prob, int bl, double drift, const dset *ds, size_t nd)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "problem", r->problem_ids[prob]);
    cJSON_AddStringToObject(o, "baseline", run_variant_names[bl]);
    jio_add_num(o, "drift", drift);
    cJSON *sa = cJSON_AddArrayToObject(o, "sets");
    for (size_t k = 0; k < nd; k++) {
        cJSON *s = cJSON_CreateObject();
        if (!s) break;
        cJSON_AddStringToObject(s, "set", r->set_names[ds[k].set]);
        jio_add_num(s, "median_ms", ds[k].med);
        jio_add_num(s, "ci_low_ms", ds[k].lo);
        jio_add_num(s, "ci_high_ms", ds[k].hi);
        cJSON_AddNumberToObject(s, "n", (double)ds[k].n);
        cJSON_AddItemToArray(sa, s);
    }
    return o;
}

int drift_build(const run_data *r, double level, cJSON **out, kbv_err *e)
{
    int rc = 0;
    size_t maxn = 1, nf = 0;
    for (size_t i = 0; i < r->n_sets * r->n_problems; i++)
        for (int v = RUN_V_FP32; v <= RUN_V_TF32; v++)
            if (r->pairs[i].times[v].n > maxn) maxn = r->pairs[i].times[v].n;
    double *buf = malloc(maxn * sizeof *buf);
    dset *ds = calloc(r->n_sets + 1, sizeof *ds);
    dflag *fl = calloc(2 * r->n_problems + 1, sizeof *fl);
    cJSON *arr = cJSON_CreateArray();
    if (!buf || !ds || !fl || !arr) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t p = 0; p < r->n_problems; p++) {
        for (int v = RUN_V_FP32; v <= RUN_V_TF32; v++) {
            size_t nd = 0, slow = 0, fast = 0;
            for (size_t s = 0; s < r->n_sets; s++) {
                const run_vec *t = &run_pair_at(r, s, p)->times[v];
                if (!t->n) continue;
                memcpy(buf, t->v, t->n * sizeof *buf);
                stats_sort(buf, t->n);
                dset *d = &ds[nd];
                d->set = s;
                d->n = t->n;
                d->med = drift_median_ci(buf, t->n, level, &d->lo, &d->hi);
                /* The first set wins a tie, so the choice does not depend
                 * on anything but the run's order. */
                if (d->med > ds[slow].med) slow = nd;
                if (d->med < ds[fast].med) fast = nd;
                nd++;
            }
            if (nd < 2) continue;
            double drift = ds[slow].med / ds[fast].med;
            if (!(drift > DRIFT_LIMIT) || !(ds[slow].lo > ds[fast].hi)) continue;
            fl[nf] = (dflag){p, v, drift, entry_json(r, p, v, drift, ds, nd)};
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
    cJSON_Delete(arr);
    free(buf);
    free(ds);
    free(fl);
    return rc;
}
