/* chain.c - the shapes of a level-2 chain (chain.h): after the producer,
 * after the middle stage and after each post stage.  The CUDA interpreter
 * sizes its buffers with them and the tests check the registry's output
 * shapes against them. */
#include <stddef.h>
#include <string.h>

#include "chain.h"

static double attr(const suite_problem *p, const char *name, double def)
{
    for (int i = 0; i < p->n_attrs; i++)
        if (strcmp(p->attrs[i].name, name) == 0) return p->attrs[i].value;
    return def;
}

long long chain_spatial(const chain_dims *d)
{
    long long s = 1;
    for (int i = 0; i < d->nd; i++) s *= d->d[i];
    return s;
}

long long chain_numel(const chain_dims *d)
{
    return d->N * d->C * chain_spatial(d);
}

static int pool_shape(const chain_stage *st, chain_dims *d)
{
    int s = st->s > 0 ? st->s : st->k;
    if (d->nd < 1 || st->k < 1 || st->pad < 0 || 2 * st->pad > st->k) return -1;
    for (int i = 0; i < d->nd; i++) {
        long long L = d->d[i] + 2 * st->pad - st->k;
        if (L < 0) return -1;
        d->d[i] = L / s + 1;
    }
    return 0;
}

int chain_stage_shape(const suite_problem *p, const chain_stage *st, chain_dims *d)
{
    switch (st->kind) {
    case ST_MAXPOOL: case ST_AVGPOOL:
        return pool_shape(st, d);
    case ST_SUM_C: case ST_MEAN_C: case ST_MAX_C: case ST_MIN_C: case ST_LSE_C:
        d->C = 1;
        return 0;
    case ST_SOFTMAX_C: case ST_SOFTMAX_S: case ST_CENTER_S:
        return 0;
    case ST_GROUPNORM:
        return st->axis >= 1 && d->C % st->axis == 0 ? 0 : -1;
    case ST_LAYERNORM_LAST:
        return d->nd >= 1 ? 0 : -1;
    case ST_SUM_S: case ST_MEAN_S:
        d->nd = 0;
        return 0;
    case ST_SUM_ALL: case ST_MEAN_ALL: case ST_MAX_ALL:
        d->C = 1;
        d->nd = 0;
        return 0;
    case ST_SUM_AXIS: case ST_MEAN_AXIS: case ST_MIN_AXIS:
        if (st->axis < 0 || st->axis >= d->nd) return -1;
        for (int i = st->axis; i + 1 < d->nd; i++) d->d[i] = d->d[i + 1];
        d->nd--;
        return 0;
    case ST_FLAT:
        d->d[0] = d->C * chain_spatial(d);
        d->C = 1;
        d->nd = 1;
        return 0;
    case ST_OUTER_ADD_P: {
        if (d->C != 1 || chain_spatial(d) != 1 || st->p < 1 || st->p >= p->n_inputs) return -1;
        long long cp = 1;
        for (int i = 0; i < p->inputs[st->p].ndim; i++) cp *= p->inputs[st->p].shape[i];
        d->d[0] = d->N;
        d->nd = 1;
        d->N = 1;
        d->C = cp;
        return 0;
    }
    case ST_ADD_X0:
        if (d->C != 1 || chain_spatial(d) != 1 || p->inputs[0].ndim != 2) return -1;
        d->C = p->inputs[0].shape[1];
        d->nd = 0;
        return 0;
    default:
        return -1;
    }
}

int chain_shapes(const suite_problem *p, const chain_spec *sp, chain_dims *after_producer,
                 chain_dims *after_mid, chain_dims *final_, long long *post_max)
{
    int wi = sp->w_in > 0 ? sp->w_in : 1;
    if (wi >= p->n_inputs) return -1;
    const suite_tensor *x = &p->inputs[0], *w = &p->inputs[wi];
    chain_dims d = { 0 };
    d.N = x->shape[0];
    if (sp->producer == CHAIN_LINEAR) {
        if (x->ndim != 2 || w->ndim != 2 || w->shape[1] != x->shape[1]) return -1;
        d.C = w->shape[0];
        if (sp->w2 > 0) {
            const suite_tensor *w2 = sp->w2 < p->n_inputs ? &p->inputs[sp->w2] : NULL;
            if (!w2 || w2->ndim != 2 || w2->shape[1] != w->shape[0]) return -1;
            d.C = w2->shape[0];
        }
    } else {
        int nd = x->ndim - 2, t = sp->producer == CHAIN_CONV_T;
        if (nd < 1 || nd > 3 || w->ndim != x->ndim) return -1;
        long long s = (long long)attr(p, "stride", 1), pd = (long long)attr(p, "padding", 0);
        long long op = (long long)attr(p, "output_padding", 0), dl = (long long)attr(p, "dilation", 1);
        d.C = t ? w->shape[1] : w->shape[0];
        d.nd = nd;
        for (int i = 0; i < nd; i++) {
            long long L = x->shape[2 + i], k = w->shape[2 + i];
            if (sp->in_pool > 0) L /= sp->in_pool;
            d.d[i] = t ? (L - 1) * s - 2 * pd + dl * (k - 1) + op + 1 : (L + 2 * pd - dl * (k - 1) - 1) / s + 1;
            if (d.d[i] < 1) return -1;
        }
    }
    *after_producer = d;
    if (sp->mid >= MID_SUM_C && sp->mid <= MID_LSE_C) d.C = 1;
    else if (sp->mid == MID_GAP) d.nd = 0;
    *after_mid = d;
    long long mx = 0;
    for (int i = 0; i < CHAIN_MAX_STAGES && sp->post[i].kind != ST_END; i++) {
        if (chain_stage_shape(p, &sp->post[i], &d)) return -1;
        if (chain_numel(&d) > mx) mx = chain_numel(&d);
    }
    *final_ = d;
    *post_max = mx;
    return 0;
}

const chain_spec *suite_chain(int op)
{
    static const struct {
        const chain_spec *rows;
        const int *count;
    } tables[] = {
#define X(name) { name, &name##_count },
        CHAIN_SPEC_TABLES
#undef X
    };
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (int i = 0; i < *tables[t].count; i++)
            if (tables[t].rows[i].op == op) return &tables[t].rows[i];
    return NULL;
}

static int ew_reads_input(const chain_ew *ops, int i)
{
    for (int k = 0; k < CHAIN_MAX_EW && ops[k].kind != EW_END; k++)
        if (ops[k].p == i) return 1;
    return 0;
}

int chain_reads_param(const chain_spec *sp, int i)
{
    if (!sp || i < 0) return 0;
    if (ew_reads_input(sp->ew1, i) || ew_reads_input(sp->ew2, i)) return 1;
    if (sp->mid != MID_NONE && (sp->gamma == i || sp->beta == i)) return 1;
    for (int k = 0; k < CHAIN_MAX_STAGES && sp->post[k].kind != ST_END; k++) {
        const chain_stage *st = &sp->post[k];
        if (ew_reads_input(st->ew, i) || st->gamma == i || st->beta == i) return 1;
        if (st->kind == ST_OUTER_ADD_P && st->p == i) return 1;
    }
    return 0;
}

int chain_reads_input(const chain_spec *sp, int i)
{
    if (chain_reads_param(sp, i)) return 1;
    for (int k = 0; sp && i == 0 && k < CHAIN_MAX_STAGES && sp->post[k].kind != ST_END; k++)
        if (sp->post[k].kind == ST_ADD_X0) return 1;
    return 0;
}
