/* suite.h - the problem registry (DESIGN.md section 5).  Pure C data: it
 * builds and is tested without CUDA, and feeds `kbv list`, `kbv prompt`,
 * the manifest and the GPU code (gen, baseline, compare), which read the
 * specs and never change them.  Every pointer returned here is borrowed
 * from static tables and valid for the life of the process.
 */
#ifndef KBV_SUITE_H
#define KBV_SUITE_H

#include <stdint.h>
#include "kbv.h"
#include "sbuf.h"

/* C linkage, so that the CUDA C++ parts of collect can call it. */
#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SUITE_ROLE_INPUT = 0, SUITE_ROLE_PARAM = 1 } suite_role;

/* How D1 draws a tensor (KernelBench's generator, or PyTorch's default
 * initialisation for parameters). */
typedef enum {
    SUITE_GEN_UNIFORM = 0, /* U[a, b): torch.rand is U[0,1); Linear/Conv init is U(-k, k) */
    SUITE_GEN_NORMAL,      /* N(a, b^2): torch.randn is a = 0, b = 1 */
    SUITE_GEN_RANDINT,     /* integers in [a, b), torch.randint; stored as KBV_I64 or F32 */
    SUITE_GEN_CONST,       /* every element a (norm weight 1, bias 0); D2-D4 redraw it
                              from U(a - 0.5, a + 0.5) so that ignoring it fails */
    SUITE_GEN_SIGN,        /* +1 or -1 with equal probability (targets of a hinge loss) */
    SUITE_GEN_UNIFORM_RSCALE, /* U[a, b) times a scalar s ~ U[0,1) drawn once per
                              (seed, problem, dist, trial, input) from the same
                              keyed generator: KernelBench's torch.rand(()) scale */
    /* Structured matrices over the last two dimensions (KernelBench 13-15). */
    SUITE_GEN_UNIFORM_SYM,   /* (U + U^T) / 2 with U ~ U[a, b): symmetric */
    SUITE_GEN_UNIFORM_TRIU,  /* triu(U[a, b)): zero below the diagonal */
    SUITE_GEN_UNIFORM_TRIL,  /* tril(U[a, b)): zero above the diagonal */
    /* softmax over the last dimension of U[a, b) (KernelBench 98's inputs) */
    SUITE_GEN_SOFTMAX,
    SUITE_GEN_SOFTMAX_RSCALE, /* the same of U[a, b) * s, s as for UNIFORM_RSCALE */
    SUITE_GEN_ALTERNATING,   /* a at even flat indices, b at odd ones (hinge D5) */
    SUITE_GEN_ROW_SIGNED,    /* U[a, b) on even rows of the last dimension, minus
                                U[a, b) on odd ones (the activations' D5) */
    SUITE_GEN_PACKED         /* a level-3 network's parameters packed into one
                                tensor, each part from its own initialisation
                                (problems/net.h lists the parts) */
} suite_gen_kind;

typedef struct {
    suite_gen_kind kind;
    double a, b;
} suite_gen;

typedef struct {
    const char *name;
    kbv_dtype dtype;
    int ndim;
    int64_t shape[KBV_MAX_DIMS];
    suite_role role;
    suite_gen gen;
    /* 1 when hidden distributions must not scale it (indices, labels, a
     * target whose meaning is its sign). */
    int fixed_scale;
} suite_tensor;

typedef struct {
    const char *name;
    double value;
} suite_attr;

/* The distributions of section 5.  D5 exists only where a problem defines it. */
typedef enum { SUITE_D1 = 1, SUITE_D2, SUITE_D3, SUITE_D4, SUITE_D5 } suite_dist;

typedef struct suite_problem {
    const char *id;     /* L1_019_relu */
    int level;          /* 1, 2 or 3 */
    int number;         /* KernelBench's number */
    const char *name;   /* KernelBench file name without .py */
    const char *expr;   /* the PyTorch-equivalent computation, for prompts */
    int n_inputs;
    const suite_tensor *inputs;   /* get_inputs() order, then parameters */
    int n_outputs;
    const suite_tensor *outputs;
    int n_attrs;
    const suite_attr *attrs;
    double flops;       /* floating-point operations of one forward call */
    double min_bytes;   /* every input read once, every output written once */
    int uses_tf32;      /* 1 when the tf32 baseline differs (matrix product, conv) */
    /* D5, the problem's own hard case: how each input is drawn instead of
     * D1, one entry per input in input order (NULL when the problem has no
     * D5).  Parameters keep their initialisation in D5 whatever it says. */
    const suite_gen *d5;
    /* Which baseline implementation runs it; the GPU side (baseline.h)
     * dispatches on op and reads the attributes and shapes. */
    int op;
    /* The FLOPs that a correct computation cannot avoid, where an
     * algebraic identity removes most of `flops` (a row sum of a linear
     * layer is one matrix-vector product with W's column sums, a max
     * minus its own mean over a dimension of size 1 is 0; the global
     * average of a transposed convolution needs only each input plane's
     * sum); 0: all of `flops`.  The physical floor (DESIGN 5a step 6)
     * counts these, so that a candidate that uses the identity is not
     * taken for one that skips work. */
    double floor_flops;
} suite_problem;

int suite_count(void);
const suite_problem *suite_get(int index);            /* NULL when out of range */
const suite_problem *suite_find(const char *id);      /* NULL when unknown */

/* The distributions in words, appended to b: a number as short as it can
 * be written exactly enough; how a tensor's generator draws it ("U[0, 1)
 * (torch.rand)", ...); and a problem's D5 ("targets -1 at even flat
 * indices, 1 at odd ones; ..."), returning 0 (and adding nothing) when the
 * problem has none. */
void suite_num_text(sbuf *b, double v);
void suite_gen_text(sbuf *b, const suite_tensor *t);
int suite_d5_text(sbuf *b, const suite_problem *p);
/* The same in a few words, for a table cell: the inputs that D5 draws
 * otherwise than D1 ("x rows of alternating sign", "targets alternating 1,
 * -1"). */
int suite_d5_label(sbuf *b, const suite_problem *p);

/* Elements and bytes of a tensor. */
int64_t suite_numel(const suite_tensor *t);
int64_t suite_bytes(const suite_tensor *t);

/* The physical floor's bytes and FLOPs (DESIGN 5a step 6): min_bytes
 * scaled by the setting's input and output bytes over the float ones (in
 * the BF16 setting float tensors move two bytes an element), and the FLOPs
 * no correct computation avoids (floor_flops, else flops).  The worker's
 * probe and collect's own check of it (collect_main.c) both use these. */
double suite_floor_bytes(const suite_problem *p, int bf16);
double suite_floor_flops(const suite_problem *p);

/* Whether dist applies to the problem (D5 only where defined). */
int suite_has_dist(const suite_problem *p, suite_dist d);
const char *suite_dist_name(suite_dist d);             /* "D1".."D5" */

#ifdef __cplusplus
}
#endif

#endif
