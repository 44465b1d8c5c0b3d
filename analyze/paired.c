/* paired.c - see paired.h. */
#include "paired.h"
#include "prec.h"
#include "rvec.h"

#include <stdlib.h>

typedef struct rsample {
    long round;
    double v;
    int iset;
} rsample;

static int cmp_round(const void *pa, const void *pb)
{
    const rsample *a = pa, *b = pb;
    return (a->round > b->round) - (a->round < b->round);
}

/* The samples of src that carry a round, sorted by round; *out owned by the
 * caller. */
static int by_round(const run_vec *src, rsample **out, size_t *n, kbv_err *e)
{
    *out = NULL;
    *n = 0;
    if (!src->n) return 0;
    rsample *s = malloc(src->n * sizeof *s);
    if (!s) return err_set(e, KBV_ENOMEM, "out of memory");
    size_t m = 0;
    for (size_t i = 0; i < src->n; i++)
        if (src->round && src->round[i] != RUN_NO_ROUND)
            s[m++] = (rsample){src->round[i], src->v[i], src->iset ? src->iset[i] : RUN_NO_ISET};
    /* qsort is not stable, but the order within a round does not matter:
     * a round held twice is dropped whole. */
    qsort(s, m, sizeof *s, cmp_round);
    *out = s;
    *n = m;
    return 0;
}

/* The number of entries from s[i] on with the round of s[i]. */
static size_t run_len(const rsample *s, size_t n, size_t i)
{
    size_t j = i + 1;
    while (j < n && s[j].round == s[i].round) j++;
    return j - i;
}

/* paired_ratios, with each ratio's input set in *sets (owned by the
 * caller, NULL when *n is 0): the set both records name, else
 * RUN_NO_ISET. */
static int ratios_with_sets(const run_vec *cand, const run_vec *base, double **out, signed char **sets,
                            size_t *n, kbv_err *e)
{
    rsample *c = NULL, *b = NULL;
    size_t nc = 0, nb = 0, m = 0;
    double *r = NULL;
    signed char *k = NULL;
    int rc;
    *out = NULL;
    *sets = NULL;
    *n = 0;
    if ((rc = by_round(cand, &c, &nc, e)) || (rc = by_round(base, &b, &nb, e))) goto done;
    if (!nc || !nb) goto done;
    r = malloc((nc < nb ? nc : nb) * sizeof *r);
    k = malloc((nc < nb ? nc : nb) * sizeof *k);
    if (!r || !k) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }
    /* A merge of the two sorted lists; a round held more than once by
     * either side is skipped whole. */
    size_t i = 0, j = 0;
    while (i < nc && j < nb) {
        if (c[i].round < b[j].round) {
            i += run_len(c, nc, i);
        } else if (b[j].round < c[i].round) {
            j += run_len(b, nb, j);
        } else {
            size_t lc = run_len(c, nc, i), lb = run_len(b, nb, j);
            if (lc == 1 && lb == 1) {
                k[m] = (signed char)(c[i].iset == b[j].iset ? c[i].iset : RUN_NO_ISET);
                r[m++] = b[j].v / c[i].v;
            }
            i += lc;
            j += lb;
        }
    }
    if (m) {
        *out = r;
        *sets = k;
        *n = m;
        r = NULL;
        k = NULL;
    }
done:
    free(c);
    free(b);
    free(r);
    free(k);
    return rc;
}

int paired_ratios(const run_vec *cand, const run_vec *base, double **out, size_t *n, kbv_err *e)
{
    signed char *sets = NULL;
    int rc = ratios_with_sets(cand, base, out, &sets, n, e);
    free(sets);
    return rc;
}

int paired_ratios_strata(const run_vec *cand, const run_vec *base, double **out, size_t *n,
                         size_t strata[PAIRED_MAX_STRATA], int *n_strata, kbv_err *e)
{
    signed char *sets = NULL;
    *n_strata = 0;
    int rc = ratios_with_sets(cand, base, out, &sets, n, e);
    if (rc || !*n) return rc;
    size_t count[PAIRED_MAX_STRATA];
    int ns = rvec_strata(sets, *n, count);
    if (ns >= 2) {
        /* Set after set, each in round order; the rest is dropped (as
         * rvec_centre drops it). */
        size_t m = 0;
        double *x = *out;
        for (int s = 0; s < PAIRED_MAX_STRATA; s++) {
            if (count[s] < RVEC_ISET_MIN) continue;
            strata[(*n_strata)++] = count[s];
            m += count[s];
        }
        double *y = malloc(m * sizeof *y);
        if (!y) {
            free(sets);
            free(*out);
            *out = NULL;
            *n = 0;
            *n_strata = 0;
            return err_set(e, KBV_ENOMEM, "out of memory");
        }
        size_t j = 0;
        for (int s = 0; s < PAIRED_MAX_STRATA; s++) {
            if (count[s] < RVEC_ISET_MIN) continue;
            for (size_t i = 0; i < *n; i++)
                if (sets[i] == s) y[j++] = x[i];
        }
        free(x);
        *out = y;
        *n = m;
    }
    free(sets);
    return 0;
}

void paired_table_free(paired_table *t)
{
    for (size_t k = 0; t->ratios && k < t->len; k++) free(t->ratios[k]);
    free(t->ratios);
    free(t->n);
    free(t->strata);
    free(t->n_strata);
    *t = (paired_table){0};
}

int paired_table_build(const run_data *r, paired_table *t, kbv_err *e)
{
    size_t npairs = r->n_sets * r->n_problems;
    *t = (paired_table){0};
    t->len = npairs * RUN_MAX_BL;
    t->ratios = calloc(t->len + 1, sizeof *t->ratios);
    t->n = calloc(t->len + 1, sizeof *t->n);
    t->strata = calloc(t->len + 1, sizeof *t->strata);
    t->n_strata = calloc(t->len + 1, sizeof *t->n_strata);
    if (!t->ratios || !t->n || !t->strata || !t->n_strata) {
        paired_table_free(t);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < npairs; i++) {
        int bv[RUN_MAX_BL], nbl = prec_baselines(r, i / r->n_problems, bv);
        for (int bl = 0; bl < nbl; bl++) {
            size_t k = i * RUN_MAX_BL + (size_t)bl;
            const run_pair *pr = &r->pairs[i];
            int rc = paired_ratios_strata(&pr->times[RUN_V_CAND], &pr->times[bv[bl]], &t->ratios[k], &t->n[k],
                                          t->strata[k], &t->n_strata[k], e);
            if (rc) {
                paired_table_free(t);
                return rc;
            }
        }
    }
    return 0;
}
