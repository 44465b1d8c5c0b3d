/* rvec.c - see rvec.h. */
#include "rvec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ostat.h"
#include "scan.h"
#include "stats.h"

int rvec_push(run_vec *v, double x, long round, int iset, kbv_err *e)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 64;
        double *p = realloc(v->v, cap * sizeof *p);
        if (!p) return err_set(e, KBV_ENOMEM, "out of memory");
        v->v = p;
        long *q = realloc(v->round, cap * sizeof *q);
        if (!q) return err_set(e, KBV_ENOMEM, "out of memory");
        v->round = q;
        signed char *k = realloc(v->iset, cap * sizeof *k);
        if (!k) return err_set(e, KBV_ENOMEM, "out of memory");
        v->iset = k;
        v->cap = cap;
    }
    v->v[v->n] = x;
    v->iset[v->n] = (signed char)iset;
    v->round[v->n++] = round;
    return 0;
}

/* A bad value is read as no set: the set is a statistic's stratum, never
 * evidence about the pair, so the grammar does not judge it. */
int rvec_iset_of(const cJSON *o)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "input_set");
    if (!cJSON_IsNumber(k)) return RUN_NO_ISET;
    double x = k->valuedouble;
    return x >= 0 && x <= RUN_MAX_ISET && x == floor(x) ? (int)x : RUN_NO_ISET;
}

/* The grammar has judged the record already; this only keeps the
 * conversion defined. */
long rvec_round_of(double x)
{
    return x >= 0 && x <= (double)RUN_MAX_ROUND && x == floor(x) ? (long)x : RUN_NO_ROUND;
}

double rvec_clock_of(int kind, double mhz)
{
    return kind == SCAN_NUMBER && mhz > 0 && isfinite(mhz) ? mhz : 0;
}

int rvec_mhz_push(run_mhz *m, double mhz, size_t n, kbv_err *e)
{
    if (!(mhz > 0) || !n) return 0;
    if (m->n && m->s[m->n - 1].mhz == mhz) {
        m->s[m->n - 1].n += n;
    } else {
        if (m->n == m->cap) {
            size_t cap = m->cap ? 2 * m->cap : 4;
            run_mhz_span *p = realloc(m->s, cap * sizeof *p);
            if (!p) return err_set(e, KBV_ENOMEM, "out of memory");
            m->s = p;
            m->cap = cap;
        }
        m->s[m->n++] = (run_mhz_span){mhz, n};
    }
    m->samples += n;
    return 0;
}

int rvec_strata(const signed char *iset, size_t n, size_t count[RUN_MAX_ISET + 1])
{
    memset(count, 0, (RUN_MAX_ISET + 1) * sizeof *count);
    for (size_t i = 0; iset && i < n; i++)
        if (iset[i] >= 0 && iset[i] <= RUN_MAX_ISET) count[iset[i]]++;
    int strata = 0;
    for (int k = 0; k <= RUN_MAX_ISET; k++) strata += count[k] >= RVEC_ISET_MIN;
    return strata;
}

/* The median of sorted x[0..n) and, when level > 0, its order-statistic
 * interval (ostat_median_ci: the whole range when n is too small for the
 * level). */
static double median_ci(const double *x, size_t n, double level, double *lo, double *hi)
{
    if (level > 0) (void)ostat_median_ci(x, n, level, lo, hi);
    return stats_median_sorted(x, n);
}

double rvec_centre_ci(const run_vec *v, double level, double *tmp, double *lo, double *hi)
{
    double l = NAN, h = NAN;
    if (lo) *lo = NAN;
    if (hi) *hi = NAN;
    if (!v->n) return NAN;
    if (!lo || !hi) level = 0;
    size_t count[RUN_MAX_ISET + 1];
    int strata = rvec_strata(v->iset, v->n, count);
    if (strata < 2) {
        memcpy(tmp, v->v, v->n * sizeof *tmp);
        stats_sort(tmp, v->n);
        double c = median_ci(tmp, v->n, level, &l, &h);
        if (level > 0) {
            *lo = l;
            *hi = h;
        }
        return c;
    }
    double sum = 0, sum_lo = 0, sum_hi = 0;
    for (int k = 0; k <= RUN_MAX_ISET; k++) {
        if (count[k] < RVEC_ISET_MIN) continue;
        size_t m = 0;
        for (size_t i = 0; i < v->n; i++)
            if (v->iset[i] == k) tmp[m++] = v->v[i];
        stats_sort(tmp, m);
        sum += median_ci(tmp, m, level, &l, &h);
        sum_lo += l;
        sum_hi += h;
    }
    if (level > 0) {
        *lo = sum_lo / strata;
        *hi = sum_hi / strata;
    }
    return sum / strata;
}

double rvec_centre(const run_vec *v, double *tmp)
{
    return rvec_centre_ci(v, 0, tmp, NULL, NULL);
}
