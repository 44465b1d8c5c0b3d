/* suite.c - the problem registry: the union of the family tables in
 * collect/suite/problems/ .c files, presented in KernelBench order (level, then
 * number) whatever order the tables are listed in.  The tables are static
 * constant data, so the registry holds no state: suite_get() ranks the
 * problems on every call, which costs a few microseconds for a suite of a
 * few hundred problems and keeps the code free of initialisation order.
 */
#include <string.h>

#include "suite.h"

#include <math.h>
#include <stdio.h>
#include "problems/spec.h"
#include "problems/tables.h"

typedef struct {
    const suite_problem *rows;
    const int *count;
} suite_table;

static const suite_table tables[] = {
#define X(name) { name, &name##_count },
    SUITE_TABLES
#undef X
};

#define N_TABLES ((int)(sizeof(tables) / sizeof(tables[0])))

int suite_count(void)
{
    int n = 0;
    for (int t = 0; t < N_TABLES; t++) n += *tables[t].count;
    return n;
}

/* The problem at position k of the concatenated tables (table order). */
static const suite_problem *raw_get(int k)
{
    for (int t = 0; t < N_TABLES; t++) {
        if (k < *tables[t].count) return &tables[t].rows[k];
        k -= *tables[t].count;
    }
    return NULL;
}

static int before(const suite_problem *a, const suite_problem *b)
{
    if (a->level != b->level) return a->level < b->level;
    if (a->number != b->number) return a->number < b->number;
    return strcmp(a->id, b->id) < 0;
}

const suite_problem *suite_get(int index)
{
    int n = suite_count();
    if (index < 0 || index >= n) return NULL;
    for (int k = 0; k < n; k++) {
        const suite_problem *p = raw_get(k);
        int rank = 0;
        for (int j = 0; j < n; j++)
            if (j != k && before(raw_get(j), p)) rank++;
        if (rank == index) return p;
    }
    return NULL;
}

const suite_problem *suite_find(const char *id)
{
    if (!id) return NULL;
    int n = suite_count();
    for (int k = 0; k < n; k++) {
        const suite_problem *p = raw_get(k);
        if (strcmp(p->id, id) == 0) return p;
    }
    return NULL;
}

int64_t suite_numel(const suite_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

int64_t suite_bytes(const suite_tensor *t)
{
    return suite_numel(t) * (t->dtype == KBV_I64 ? 8 : 4);
}

double suite_floor_bytes(const suite_problem *p, int bf16)
{
    double io = 0, ref = 0;
    for (int k = 0; k < 2; k++) {
        const suite_tensor *t = k == 0 ? p->inputs : p->outputs;
        int n = k == 0 ? p->n_inputs : p->n_outputs;
        for (int i = 0; i < n; i++) {
            double b = (double)suite_bytes(&t[i]);
            ref += b;
            io += bf16 && t[i].dtype == KBV_F32 ? 2.0 * (double)suite_numel(&t[i]) : b;
        }
    }
    return ref > 0 ? p->min_bytes * io / ref : p->min_bytes;
}

double suite_floor_flops(const suite_problem *p)
{
    return p->floor_flops > 0 ? p->floor_flops : p->flops;
}

int suite_has_dist(const suite_problem *p, suite_dist d)
{
    if (d >= SUITE_D1 && d <= SUITE_D4) return 1;
    return d == SUITE_D5 && p && p->d5 != NULL;
}

const char *suite_dist_name(suite_dist d)
{
    switch (d) {
    case SUITE_D1: return "D1";
    case SUITE_D2: return "D2";
    case SUITE_D3: return "D3";
    case SUITE_D4: return "D4";
    case SUITE_D5: return "D5";
    }
    return "D?";
}

/* --- the distributions in words (kbv prompt, the manifest, kbv list) ------- */

/* A number as short as it can be written exactly enough: integers without a
 * decimal point, others with up to 6 significant digits. */
void suite_num_text(sbuf *b, double v)
{
    if (v == floor(v) && fabs(v) < 1e15) sb_printf(b, "%.0f", v);
    else sb_printf(b, "%.6g", v);
}

static void suite_range_text(sbuf *b, const suite_gen *g)
{
    suite_num_text(b, g->a);
    sb_puts(b, ", ");
    suite_num_text(b, g->b);
}

/* How D1 draws a tensor, in words a model can act on. */
void suite_gen_text(sbuf *b, const suite_tensor *t)
{
    const suite_gen *g = &t->gen;
    switch (g->kind) {
    case SUITE_GEN_UNIFORM:
        if (g->a == 0.0 && g->b == 1.0) {
            sb_puts(b, "U[0, 1) (torch.rand)");
        } else if (g->a == -g->b) {
            sb_puts(b, "U(-");
            suite_num_text(b, g->b);
            sb_puts(b, ", ");
            suite_num_text(b, g->b);
            sb_puts(b, t->role == SUITE_ROLE_PARAM ? ") (PyTorch's default initialisation)" : ")");
        } else {
            sb_puts(b, "U[");
            suite_num_text(b, g->a);
            sb_puts(b, ", ");
            suite_num_text(b, g->b);
            sb_puts(b, ")");
        }
        break;
    case SUITE_GEN_NORMAL:
        if (g->a == 0.0 && g->b == 1.0) {
            sb_puts(b, "N(0, 1) (torch.randn)");
        } else {
            sb_puts(b, "normal, mean ");
            suite_num_text(b, g->a);
            sb_puts(b, ", standard deviation ");
            suite_num_text(b, g->b);
        }
        break;
    case SUITE_GEN_RANDINT:
        sb_puts(b, "integers in [");
        suite_num_text(b, g->a);
        sb_puts(b, ", ");
        suite_num_text(b, g->b);
        sb_puts(b, ") (torch.randint)");
        break;
    case SUITE_GEN_CONST:
        sb_puts(b, "every element ");
        suite_num_text(b, g->a);
        sb_puts(b, " (PyTorch's default), but the hidden distributions redraw it from U[");
        suite_num_text(b, g->a - 0.5);
        sb_puts(b, ", ");
        suite_num_text(b, g->a + 0.5);
        sb_puts(b, "): read it, never assume it");
        break;
    case SUITE_GEN_SIGN:
        sb_puts(b, "+1 or -1 with equal probability");
        break;
    case SUITE_GEN_UNIFORM_RSCALE:
        sb_puts(b, "U[");
        suite_num_text(b, g->a);
        sb_puts(b, ", ");
        suite_num_text(b, g->b);
        sb_puts(b, ") times one random scalar s ~ U[0, 1) per draw");
        break;
    case SUITE_GEN_UNIFORM_SYM:
        sb_puts(b, "a symmetric matrix (U + U^T) / 2 with U ~ U[");
        suite_range_text(b, g);
        sb_puts(b, ")");
        break;
    case SUITE_GEN_UNIFORM_TRIU:
        sb_puts(b, "upper triangular: U[");
        suite_range_text(b, g);
        sb_puts(b, ") on and above the diagonal, 0 below");
        break;
    case SUITE_GEN_UNIFORM_TRIL:
        sb_puts(b, "lower triangular: U[");
        suite_range_text(b, g);
        sb_puts(b, ") on and below the diagonal, 0 above");
        break;
    case SUITE_GEN_SOFTMAX:
        sb_puts(b, "softmax over the last dimension of U[");
        suite_range_text(b, g);
        sb_puts(b, ") values (positive, rows sum to 1)");
        break;
    case SUITE_GEN_SOFTMAX_RSCALE:
        sb_puts(b, "softmax over the last dimension of U[");
        suite_range_text(b, g);
        sb_puts(b, ") values times one random scalar s ~ U[0, 1) per draw");
        break;
    case SUITE_GEN_ROW_SIGNED:
        sb_puts(b, "U[");
        suite_range_text(b, g);
        sb_puts(b, ") on even rows of the last dimension and minus U[");
        suite_range_text(b, g);
        sb_puts(b, ") on odd rows (mixed signs, each row single-signed)");
        break;
    case SUITE_GEN_ALTERNATING:
        suite_num_text(b, g->a);
        sb_puts(b, " at even flat indices, ");
        suite_num_text(b, g->b);
        sb_puts(b, " at odd ones");
        break;
    case SUITE_GEN_PACKED:
        sb_puts(b, "the model's parameters packed in registration order, each from PyTorch's default "
                   "initialisation (Linear and Conv weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)), "
                   "BatchNorm weight 1 and bias 0, which the hidden distributions redraw from U[0.5, 1.5) "
                   "and U[-0.5, 0.5)); the layer list gives each part's offset");
        break;
    default:
        sb_puts(b, "see the problem's KernelBench file");
        break;
    }
}

int suite_d5_text(sbuf *b, const suite_problem *p)
{
    if (!p->d5) return 0;
    int first = 1;
    for (int i = 0; i < p->n_inputs; i++) {
        suite_tensor t = p->inputs[i];
        if (t.role == SUITE_ROLE_PARAM) continue;
        t.gen = p->d5[i];
        sb_printf(b, "%s%s ", first ? "" : "; ", t.name);
        suite_gen_text(b, &t);
        first = 0;
    }
    return 1;
}

int suite_d5_label(sbuf *b, const suite_problem *p)
{
    if (!p->d5) return 0;
    int first = 1;
    for (int i = 0; i < p->n_inputs; i++) {
        const suite_tensor *t = &p->inputs[i];
        const suite_gen *g = &p->d5[i];
        /* Only the inputs D5 draws otherwise than D1. */
        if (t->role == SUITE_ROLE_PARAM || memcmp(g, &t->gen, sizeof *g) == 0) continue;
        sb_printf(b, "%s%s ", first ? "" : "; ", t->name);
        if (g->kind == SUITE_GEN_ROW_SIGNED) {
            sb_puts(b, "rows of alternating sign");
        } else if (g->kind == SUITE_GEN_ALTERNATING) {
            sb_puts(b, "alternating ");
            suite_num_text(b, g->a);
            sb_puts(b, ", ");
            suite_num_text(b, g->b);
        } else {
            suite_tensor d = *t;
            d.gen = *g;
            suite_gen_text(b, &d);
        }
        first = 0;
    }
    return 1;
}
