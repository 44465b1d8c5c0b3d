/* medboot.h - the exact bootstrap distribution of a sample median.
 *
 * Resampling n values with replacement from a sorted sample x_1 <= ... <= x_n
 * and taking the median gives x_J (n odd) or (x_J + x_L) / 2 (n even), where
 * J and L are the positions of the resample's middle order statistics.  Their
 * distribution depends on n only: with C(j) ~ Binomial(n, j/n) the number of
 * draws at positions <= j, P(J <= j) = P(C(j) >= r) for r = ceil(n/2), and for
 * n = 2m
 *   P(J = L = j) = P(C(j-1) <= m-1) - P(C(j) <= m) + (n choose m) ((j-1)/n)^m ((n-j)/n)^(n-m),
 * while given J = j < L exactly m draws fall at or below j and the other n - m
 * are uniform on j+1..n, so that P(L - j > t) = (1 - t/(n-j))^(n-m).
 * Drawing (J, L) by inverse-CDF sampling from tables built once per n costs a
 * few operations, against n for a resample; the draws are exactly those of
 * the ordinary bootstrap of the median.
 */
#ifndef KBV_MEDBOOT_H
#define KBV_MEDBOOT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "err.h"
#include "rng.h"

/* What a bootstrap stream is for: the last part of its rng_init key (the
 * key is (run seed, set index, problem index or bootstrap resample index,
 * purpose)).  The numbers stay as they were when a purpose is retired, so
 * that the others keep their streams. */
enum {
    RNG_P_RATIO = 2,     /* per-problem draws of the median of the paired ratios; the same
                            stream for both baselines (see analysis.c) */
    RNG_G_PICKS = 21     /* the problem picks of a set's bootstrap resample (key: set, resample, purpose) */
};

#define MEDBOOT_GAPS 6

typedef struct medboot_table {
    size_t n;
    double *cdf;      /* cdf[j] = P(J <= j), j = 0..n (1-based positions); cdf[n] = 1 */
    uint32_t *guide;  /* guide[g] = smallest j with cdf[j] > g/G, g = 0..G-1 */
    double guide_scale; /* G, a few buckets per position so that the search
                           after the guide rarely takes a step */
    /* n even: given J = j, the cumulative probabilities that L - j <= k for
     * k = 0..MEDBOOT_GAPS (stay[(MEDBOOT_GAPS + 1) j + k]); the rare longer
     * gaps come from the closed form.  NULL when n is odd. */
    double *stay;
    double inv_nm;    /* n even: 1 / (n - m) */
} medboot_table;

/* A cache of tables by n; tables are built by medboot_prepare and read-only
 * afterwards, so that threads may share a prepared cache. */
typedef struct medboot medboot;

int medboot_new(medboot **out, kbv_err *e);  /* caller frees with medboot_free */
void medboot_free(medboot *m);               /* NULL ok */
/* Builds the table for n (n >= 1) unless it exists.  Not thread-safe. */
int medboot_prepare(medboot *m, size_t n, kbv_err *e);
/* The table for n (borrowed from m), or NULL when it was not prepared. */
const medboot_table *medboot_get(const medboot *m, size_t n);

/* P(J = j, L = l), 1-based, l = j for n odd: the exact probability that a
 * resample's median is made of positions j and l (for tests and checks). */
double medboot_pair_prob(const medboot_table *t, size_t j, size_t l);

/* For n even: L given J = j (1-based) and a uniform v. */
size_t medboot_draw_upper(const medboot_table *t, size_t j, double v, rng *r);

/* Draws J, 1-based. */
static inline size_t medboot_draw_j(const medboot_table *t, rng *r)
{
    double u = rng_u01(r);
    size_t j = t->guide[(size_t)(u * t->guide_scale)];
    while (t->cdf[j] <= u) j++;
    return j;
}

/* Draws (J, L) as 0-based indices into the sorted sample. */
static inline void medboot_draw_idx(const medboot_table *t, rng *r, size_t *j_out, size_t *l_out)
{
    size_t j = medboot_draw_j(t, r), l = j;
    if (t->stay) {
        double v = rng_u01(r);
        if (v >= t->stay[(MEDBOOT_GAPS + 1) * j]) l = medboot_draw_upper(t, j, v, r);
    }
    *j_out = j - 1;
    *l_out = l - 1;
}

/* One bootstrap draw of the median of sorted x[0..t->n). */
static inline double medboot_draw(const medboot_table *t, const double *x, rng *r)
{
    size_t j, l;
    medboot_draw_idx(t, r, &j, &l);
    return j == l ? x[j] : 0.5 * (x[j] + x[l]);
}

/* The same draw on the log scale.  logx[i] = log(x[i]); for even n,
 * logmid[i] = log((x[i] + x[i+1]) / 2) and logmid2[i] = log((x[i] + x[i+2]) / 2)
 * (NULL for odd n), which save the logarithm in the common cases. */
static inline double medboot_draw_log(const medboot_table *t, const double *x, const double *logx,
                                      const double *logmid, const double *logmid2, rng *r)
{
    size_t j = medboot_draw_j(t, r);
    if (!t->stay) return logx[j - 1];
    double v = rng_u01(r);
    const double *st = &t->stay[(MEDBOOT_GAPS + 1) * j];
    /* Counting instead of branching: the gap is as random as the draw, so
     * a chain of branches would mispredict half the time. */
    unsigned k = (unsigned)(v >= st[0]) + (unsigned)(v >= st[1]) + (unsigned)(v >= st[2]);
    if (k < 3) {
        const double *tab[3] = {logx, logmid, logmid2};
        return tab[k][j - 1];
    }
    size_t l = medboot_draw_upper(t, j, v, r);
    return log(0.5 * (x[j - 1] + x[l - 1]));
}

#endif
