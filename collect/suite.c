/* suite.c - the problem registry: the union of the family tables in
 * collect/problems/ .c files, presented in KernelBench order (level, then
 * number) whatever order the tables are listed in.  The tables are static
 * constant data, so the registry holds no state: suite_get() ranks the
 * problems on every call, which costs a few microseconds for a suite of a
 * few hundred problems and keeps the code free of initialisation order.
 */
#include <string.h>

#include "suite.h"
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
