/* rvec.c - see rvec.h. */
#include "rvec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
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

double rvec_centre(const run_vec *v, double *tmp)
{
    if (!v->n) return NAN;
    size_t count[RUN_MAX_ISET + 1] = {0};
    for (size_t i = 0; v->iset && i < v->n; i++)
        if (v->iset[i] != RUN_NO_ISET) count[v->iset[i]]++;
    int strata = 0;
    for (int k = 0; k <= RUN_MAX_ISET; k++) strata += count[k] >= RVEC_ISET_MIN;
    if (strata < 2) {
        memcpy(tmp, v->v, v->n * sizeof *tmp);
        stats_sort(tmp, v->n);
        return stats_median_sorted(tmp, v->n);
    }
    double sum = 0;
    for (int k = 0; k <= RUN_MAX_ISET; k++) {
        if (count[k] < RVEC_ISET_MIN) continue;
        size_t m = 0;
        for (size_t i = 0; i < v->n; i++)
            if (v->iset[i] == k) tmp[m++] = v->v[i];
        stats_sort(tmp, m);
        sum += stats_median_sorted(tmp, m);
    }
    return sum / strata;
}
