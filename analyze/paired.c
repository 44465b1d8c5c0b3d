/* paired.c - see paired.h. */
#include "paired.h"

#include <stdlib.h>

typedef struct rsample {
    long round;
    double v;
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
        if (src->round && src->round[i] != RUN_NO_ROUND) s[m++] = (rsample){src->round[i], src->v[i]};
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

int paired_ratios(const run_vec *cand, const run_vec *base, double **out, size_t *n, kbv_err *e)
{
    rsample *c = NULL, *b = NULL;
    size_t nc = 0, nb = 0, m = 0;
    double *r = NULL;
    int rc;
    *out = NULL;
    *n = 0;
    if ((rc = by_round(cand, &c, &nc, e)) || (rc = by_round(base, &b, &nb, e))) goto done;
    if (!nc || !nb) goto done;
    r = malloc((nc < nb ? nc : nb) * sizeof *r);
    if (!r) {
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
            if (lc == 1 && lb == 1) r[m++] = b[j].v / c[i].v;
            i += lc;
            j += lb;
        }
    }
    if (m) {
        *out = r;
        *n = m;
        r = NULL;
    }
done:
    free(c);
    free(b);
    free(r);
    return rc;
}
