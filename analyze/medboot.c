/* medboot.c - tables of the exact bootstrap distribution of a median (see
 * medboot.h for the mathematics). */
#include "medboot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* lgamma without its global sign variable (lgamma_r), so that threads may
 * call it. */
static double lgam(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

struct medboot {
    medboot_table **by_n;  /* by_n[n], NULL where not built */
    size_t cap;
};

int medboot_new(medboot **out, kbv_err *e)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return err_set(e, KBV_ENOMEM, "out of memory");
    return 0;
}

static void table_free(medboot_table *t)
{
    if (!t) return;
    free(t->cdf);
    free(t->guide);
    free(t->stay);
    free(t);
}

void medboot_free(medboot *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->cap; i++) table_free(m->by_n[i]);
    free(m->by_n);
    free(m);
}

const medboot_table *medboot_get(const medboot *m, size_t n)
{
    return n < m->cap ? m->by_n[n] : NULL;
}

/* P(Binomial(n, j/n) <= k), summed from the k end of the shorter tail: the
 * terms fall monotonically away from k on that side, so the walk stops when
 * they no longer change the sum, and a term that underflows really is
 * negligible.  lck = log(n choose k); down[i] = i / (n - i + 1) and
 * up[i] = (n - i) / (i + 1), the ratios of neighbouring binomial
 * coefficients, computed once per n. */
static double binom_cdf(size_t n, size_t j, size_t k, double lck, const double *down, const double *up)
{
    if (k >= n) return 1;
    if (j == 0) return 1;
    if (j >= n) return 0;
    double p = (double)j / (double)n, q = 1 - p;
    double t = exp(lck + (double)k * log(p) + (double)(n - k) * log(q));
    if ((double)k <= (double)n * p) {
        /* Lower tail: i = k, k-1, ..., 0. */
        double sum = t, qp = q / p;
        for (size_t i = k; i > 0 && t > 1e-18 * sum; i--) {
            t *= down[i] * qp;
            sum += t;
        }
        return sum > 1 ? 1 : sum;
    }
    /* Upper tail from k+1: pmf(k+1) = pmf(k) (n-k)/(k+1) p/q. */
    double sum = 0, pq = p / q;
    for (size_t i = k; i < n; i++) {
        t *= up[i] * pq;
        sum += t;
        if (t <= 1e-18 * sum) break;
    }
    return sum > 1 ? 0 : 1 - sum;
}

static double log_choose(size_t n, size_t k)
{
    return lgam((double)n + 1) - lgam((double)k + 1) - lgam((double)(n - k) + 1);
}

static int table_build(size_t n, medboot_table **out, kbv_err *e)
{
    medboot_table *t = calloc(1, sizeof *t);
    double *down = malloc((n + 1) * sizeof *down), *up = malloc((n + 1) * sizeof *up);
    double *g_r1 = malloc((n + 1) * sizeof *g_r1);
    if (!t || !down || !up || !g_r1) goto nomem;
    t->n = n;
    t->cdf = calloc(n + 1, sizeof *t->cdf);
    if (!t->cdf) goto nomem;
    for (size_t i = 0; i <= n; i++) {
        down[i] = (double)i / (double)(n - i + 1);
        up[i] = (double)(n - i) / (double)(i + 1);
    }

    size_t r = (n + 1) / 2;  /* the (lower) middle order statistic */
    double lc_r1 = log_choose(n, r - 1);
    /* g_r1[j] = P(C(j) <= r - 1), C(j) ~ Binomial(n, j/n); P(J <= j) is its
     * complement. */
    t->cdf[0] = 0;
    g_r1[0] = 1;
    for (size_t j = 1; j <= n; j++) {
        g_r1[j] = binom_cdf(n, j, r - 1, lc_r1, down, up);
        double c = 1 - g_r1[j];
        t->cdf[j] = c < t->cdf[j - 1] ? t->cdf[j - 1] : c;
    }
    t->cdf[n] = 1;

    /* guide[g]: the first j whose cdf exceeds g/G, where the search for a
     * u in [g/G, (g+1)/G) starts. */
    size_t G = 8 * n;
    t->guide = calloc(G, sizeof *t->guide);
    if (!t->guide) goto nomem;
    t->guide_scale = (double)G;
    size_t j = 1;
    for (size_t g = 0; g < G; g++) {
        double lo = (double)g / (double)G;
        while (j < n && t->cdf[j] <= lo) j++;
        t->guide[g] = (uint32_t)j;
    }

    if (n % 2 == 0) {
        size_t m = n / 2;
        t->stay = calloc((MEDBOOT_GAPS + 1) * (n + 1), sizeof *t->stay);
        if (!t->stay) goto nomem;
        t->inv_nm = 1.0 / (double)(n - m);
        double lc_m = log_choose(n, m);
        for (j = 1; j <= n; j++) {
            /* r - 1 = m - 1 for even n: those values are in g_r1. */
            double g_prev_m1 = g_r1[j - 1];
            double g_m1 = g_r1[j];
            double g_m = binom_cdf(n, j, m, lc_m, down, up);
            double both = j > 1 && j < n
                ? exp(lc_m + (double)m * log((double)(j - 1) / (double)n) +
                      (double)(n - m) * log((double)(n - j) / (double)n))
                : 0;
            double pj = g_prev_m1 - g_m1;
            double pjj = g_prev_m1 - g_m + both;
            double s = pj > 1e-300 ? pjj / pj : 1;
            if (j == n || !(s < 1)) s = 1;
            if (!(s > 0)) s = 0;
            /* P(L - j <= k | J = j) = s + (1 - s) P(gap <= k), where
             * P(gap > k) = (1 - k/(n-j))^(n-m). */
            double *st = &t->stay[(MEDBOOT_GAPS + 1) * j];
            st[0] = s;
            for (size_t k = 1; k <= MEDBOOT_GAPS; k++) {
                double room = (double)(n - j);
                double tail = (double)k >= room ? 0 : pow(1 - (double)k / room, (double)(n - m));
                st[k] = s >= 1 || tail == 0 ? 1 : s + (1 - s) * (1 - tail);
                if (st[k] < st[k - 1]) st[k] = st[k - 1];
            }
        }
    }
    free(down);
    free(up);
    free(g_r1);
    *out = t;
    return 0;
nomem:
    free(down);
    free(up);
    free(g_r1);
    table_free(t);
    return err_set(e, KBV_ENOMEM, "out of memory building median bootstrap tables");
}

int medboot_prepare(medboot *m, size_t n, kbv_err *e)
{
    if (n == 0) return 0;
    if (n >= UINT32_MAX) return err_set(e, KBV_EINPUT, "too many samples (%zu) for one variant", n);
    if (n >= m->cap) {
        size_t cap = m->cap ? m->cap : 64;
        while (cap <= n) cap *= 2;
        medboot_table **p = realloc(m->by_n, cap * sizeof *p);
        if (!p) return err_set(e, KBV_ENOMEM, "out of memory");
        memset(p + m->cap, 0, (cap - m->cap) * sizeof *p);
        m->by_n = p;
        m->cap = cap;
    }
    if (m->by_n[n]) return 0;
    return table_build(n, &m->by_n[n], e);
}

double medboot_pair_prob(const medboot_table *t, size_t j, size_t l)
{
    size_t n = t->n;
    if (j < 1 || j > n || l < j || l > n) return 0;
    double pj = t->cdf[j] - t->cdf[j - 1];
    if (!t->stay) return l == j ? pj : 0;
    double s = t->stay[(MEDBOOT_GAPS + 1) * j];
    if (l == j) return pj * s;
    double room = (double)(n - j), e = 1 / t->inv_nm;
    double ps = pow(1 - (double)(l - j - 1) / room, e) - pow(1 - (double)(l - j) / room, e);
    return pj * (1 - s) * ps;
}

size_t medboot_draw_upper(const medboot_table *t, size_t j, double v, rng *r)
{
    const double *st = &t->stay[(MEDBOOT_GAPS + 1) * j];
    for (size_t k = 1; k <= MEDBOOT_GAPS; k++)
        if (v < st[k]) return j + k;
    /* A gap beyond the table: P(gap > k | gap > G) = ((n-j-k)/(n-j-G))^(n-m),
     * inverted with a fresh uniform. */
    if (j + MEDBOOT_GAPS + 1 > t->n) return t->n;  /* no room: only reachable through rounding */
    double room = (double)(t->n - j - MEDBOOT_GAPS);
    double w = rng_u01(r);
    double s = ceil(room * -expm1(log1p(-w) * t->inv_nm));
    if (s < 1) s = 1;
    if (s > room) s = room;
    return j + MEDBOOT_GAPS + (size_t)s;
}
