/* gemm.cu - the baselines' matrix products (base_gemm, base_linear_bf16,
 * base_impl.h) and their kernel choices, as pins too (base_pin, base_pins).
 *
 * Row-major products are computed as column-major ones with the operands
 * swapped (matmul.cu's header says how).
 *
 * The kernel is chosen by timing, not by one heuristic.  cublasGemmEx with
 * CUBLAS_GEMM_DEFAULT runs the single kernel cuBLAS's heuristic predicts
 * to be fastest, and that prediction is sometimes wrong by 10-25% (on the
 * H200 the einsum GEMM 1048576x768x256 in tf32 ran 1.26x slower than
 * PyTorch, whose call reached a different kernel through a different path
 * into the same library).  A baseline slower than PyTorch inflates every
 * speedup (DESIGN 5), so on the first GEMM of each shape base_gemm asks
 * cuBLASLt for its best few algorithms for the same compute type (so fp32
 * stays on FMA kernels: CUBLAS_COMPUTE_32F yields no tensor-core
 * algorithm) and times them against the cublasGemmEx default with
 * base_contest (contest.cu: cold L2, interleaved rounds, medians; about
 * 200 ms per shape).  An algorithm of cuBLASLt must beat the default by
 * base_contest_winner's margin (3%) to replace it, so that two workers
 * of one run do not trade a kernel for an equal one on timing noise; the
 * choice is named in the journal (base_choice).  Either way the product is the same: same
 * alpha, beta, layouts and compute type; only the kernel differs.  The
 * choice is cached per context and shape (a handful of shapes per
 * problem); a ratio above 1.05 can then no longer come from a bad
 * heuristic pick.  cuBLASLt runs in the context's cuBLAS workspace, which
 * base_workspace_bytes already counts, and the heuristic is limited to it.
 *
 * A bf16 linear layer (base_linear_bf16) runs through cuBLASLt with a bias
 * epilogue; its algorithm is chosen the same way among cuBLASLt's
 * heuristic results.  Every choice is also written as pin text, and a
 * table of pins from an earlier run (base_pin) replaces the timing.
 */
#include <cuda_runtime.h>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base_impl.h"

namespace {

/* --- base_gemm: kernel choice by timing ----------------------------------- */

/* Bounds of the search: cuBLASLt algorithms asked for, the time the
 * rounds of one shape's contest aim at (base_contest: at least three
 * rounds whatever it says), and the shapes remembered per context (more
 * shapes than that run the default untimed). */
const int LT_ALGOS = 8;
const float TUNE_BUDGET_MS = 200.0f;
const int GEMM_SHAPES = 8;

/* What identifies a choice: everything cuBLASLt's heuristic sees, the
 * operand alignments included (an algorithm picked for 256-byte aligned
 * buffers may not run on less aligned ones). */
enum {
    K_V, K_TA, K_TB, K_BETA0, K_M, K_N, K_K, K_LDA, K_LDB, K_LDC, K_SA, K_SB, K_SC, K_BATCH,
    K_ALA, K_ALB, K_ALC, K_COUNT
};

struct gemm_args {
    base_variant v;
    int ta, tb;
    long long m, n, k;
    float alpha, beta;
    const float *A, *B;
    float *C;
    long long lda, ldb, ldc, sa, sb, sc, batch;
    cudaStream_t s;
};

/* The cuBLASLt descriptors of one shape: Lt's A is kbv's B and Lt's B is
 * kbv's A (the column-major view above); C doubles as D. */
struct lt_plan {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
};

struct gemm_pick {
    long long key[K_COUNT];
    int use_lt;                  /* 0: cublasGemmEx's default */
    int pinned;                  /* 1: taken from base_pin, not timed */
    lt_plan plan;
    cublasLtMatmulAlgo_t algo;
};

} /* namespace */

/* A choice made in an earlier run (base_pin): the key of a product and
 * its kernel, the default or a cuBLASLt algorithm as the library stored it. */
struct gemm_pin {
    long long key[K_COUNT];
    int use_lt;
    cublasLtMatmulAlgo_t algo;
};

/* One bf16 linear layer's cuBLASLt plan (base_linear_bf16): the shape and
 * operand alignments it was made for, the descriptors, and the algorithm
 * that won its contest. */
struct lt_bf16_plan {
    long long m, n, k, al_x, al_w, al_y;
    int has_bias;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
};

/* A bf16 linear layer's choice of an earlier run (base_pin, text
 * "bf16.lin:M,N,K,BIAS,ALX,ALW,ALY=lt:HEX"): the plan's key and its
 * cuBLASLt algorithm as the library stored it. */
enum { B16_M, B16_N, B16_K, B16_BIAS, B16_ALX, B16_ALW, B16_ALY, B16_COUNT };
#define BF16_PIN_PREFIX "bf16.lin:"

struct bf16_pin {
    long long key[B16_COUNT];
    cublasLtMatmulAlgo_t algo;
};

struct gemm_tuner {
    cublasLtHandle_t lt;         /* NULL until the first search */
    int lt_broken;               /* cublasLtCreate failed: defaults only */
    int n;
    gemm_pick pick[GEMM_SHAPES];
    int n_pins;
    gemm_pin pins[2 * GEMM_SHAPES];
    int n_bf16;
    lt_bf16_plan bf16[GEMM_SHAPES];
    int n_bf16_pins;
    bf16_pin bf16_pins[GEMM_SHAPES];
};

namespace {

/* The largest power of two (at most 256) that divides the address of every
 * matrix of a batch. */
long long align_bytes(const void *p, long long stride, long long batch)
{
    unsigned long long a = (unsigned long long)(uintptr_t)p;
    if (batch > 1) a |= (unsigned long long)stride * sizeof(float);
    if (a == 0) return 256;
    unsigned long long low = a & (~a + 1);
    return low > 256 ? 256 : (long long)low;
}

void make_key(const gemm_args &g, long long key[K_COUNT])
{
    key[K_V] = g.v;
    key[K_TA] = g.ta;
    key[K_TB] = g.tb;
    key[K_BETA0] = g.beta == 0.0f;
    key[K_M] = g.m;
    key[K_N] = g.n;
    key[K_K] = g.k;
    key[K_LDA] = g.lda;
    key[K_LDB] = g.ldb;
    key[K_LDC] = g.ldc;
    key[K_BATCH] = g.batch > 1 ? g.batch : 1;
    key[K_SA] = key[K_BATCH] > 1 ? g.sa : 0;
    key[K_SB] = key[K_BATCH] > 1 ? g.sb : 0;
    key[K_SC] = key[K_BATCH] > 1 ? g.sc : 0;
    key[K_ALA] = align_bytes(g.A, g.sa, key[K_BATCH]);
    key[K_ALB] = align_bytes(g.B, g.sb, key[K_BATCH]);
    key[K_ALC] = align_bytes(g.C, g.sc, key[K_BATCH]);
}

cublasComputeType_t compute_of(base_variant v)
{
    return v == BASE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

/* The path the baseline always had: cuBLAS's own heuristic choice. */
cublasStatus_t run_default(base_ctx *b, const gemm_args &g)
{
    cublasOperation_t opb = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opa = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (g.batch <= 1)
        return cublasGemmEx_64(b->blas, opb, opa, g.n, g.m, g.k, &g.alpha, g.B, CUDA_R_32F, g.ldb,
                               g.A, CUDA_R_32F, g.lda, &g.beta, g.C, CUDA_R_32F, g.ldc,
                               compute_of(g.v), CUBLAS_GEMM_DEFAULT);
    return cublasGemmStridedBatchedEx_64(b->blas, opb, opa, g.n, g.m, g.k, &g.alpha, g.B,
                                         CUDA_R_32F, g.ldb, g.sb, g.A, CUDA_R_32F, g.lda, g.sa,
                                         &g.beta, g.C, CUDA_R_32F, g.ldc, g.sc, g.batch,
                                         compute_of(g.v), CUBLAS_GEMM_DEFAULT);
}

cublasStatus_t run_lt(base_ctx *b, const gemm_tuner *t, const lt_plan &pl,
                      const cublasLtMatmulAlgo_t *algo, const gemm_args &g)
{
    return cublasLtMatmul(t->lt, pl.op, &g.alpha, g.B, pl.la, g.A, pl.lb, &g.beta, g.C, pl.lc, g.C,
                          pl.lc, algo, b->blas_ws, b->blas_ws_bytes, g.s);
}

void plan_free(lt_plan *pl)
{
    if (pl->lc) cublasLtMatrixLayoutDestroy(pl->lc);
    if (pl->lb) cublasLtMatrixLayoutDestroy(pl->lb);
    if (pl->la) cublasLtMatrixLayoutDestroy(pl->la);
    if (pl->op) cublasLtMatmulDescDestroy(pl->op);
    memset(pl, 0, sizeof *pl);
}

cublasStatus_t layout(cublasLtMatrixLayout_t *l, long long rows, long long cols, long long ld,
                      long long stride, long long batch)
{
    cublasStatus_t st = cublasLtMatrixLayoutCreate(l, CUDA_R_32F, (uint64_t)rows, (uint64_t)cols,
                                                   (int64_t)ld);
    if (st != CUBLAS_STATUS_SUCCESS) {
        *l = NULL;
        return st;
    }
    if (batch > 1) {
        int32_t count = (int32_t)batch;
        int64_t off = (int64_t)stride;
        st = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                              sizeof count);
        if (st == CUBLAS_STATUS_SUCCESS)
            st = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &off, sizeof off);
    }
    return st;
}

/* Descriptors for C^T [n x m] = op(B)^T [n x k] op(A)^T [k x m], column-major,
 * with the compute type of the variant and float scaling, as cublasGemmEx. */
cublasStatus_t plan_make(const gemm_args &g, lt_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    long long batch = g.batch > 1 ? g.batch : 1;
    int32_t opb = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    int32_t opa = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t st = cublasLtMatmulDescCreate(&pl->op, compute_of(g.v), CUDA_R_32F);
    if (st != CUBLAS_STATUS_SUCCESS) pl->op = NULL;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulDescSetAttribute(pl->op, CUBLASLT_MATMUL_DESC_TRANSA, &opb, sizeof opb);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulDescSetAttribute(pl->op, CUBLASLT_MATMUL_DESC_TRANSB, &opa, sizeof opa);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = layout(&pl->la, g.tb ? g.k : g.n, g.tb ? g.n : g.k, g.ldb, g.sb, batch);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = layout(&pl->lb, g.ta ? g.m : g.k, g.ta ? g.k : g.m, g.lda, g.sa, batch);
    if (st == CUBLAS_STATUS_SUCCESS) st = layout(&pl->lc, g.n, g.m, g.ldc, g.sc, batch);
    if (st != CUBLAS_STATUS_SUCCESS) plan_free(pl);
    return st;
}

/* Up to LT_ALGOS algorithms of cuBLASLt's heuristic for the plan, best
 * predicted first, limited to the context's workspace and to the
 * operands' alignments.  Returns how many; 0 when cuBLASLt has none. */
int lt_candidates(const base_ctx *b, const gemm_tuner *t, const lt_plan &pl,
                  const long long key[K_COUNT], cublasLtMatmulHeuristicResult_t *res)
{
    cublasLtMatmulPreference_t pref = NULL;
    if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS) return 0;
    uint64_t ws = (uint64_t)b->blas_ws_bytes;
    uint32_t al_a = (uint32_t)key[K_ALB], al_b = (uint32_t)key[K_ALA], al_c = (uint32_t)key[K_ALC];
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                  &al_a, sizeof al_a);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                  &al_b, sizeof al_b);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                  &al_c, sizeof al_c);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                  &al_c, sizeof al_c);
    int got = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulAlgoGetHeuristic(t->lt, pl.op, pl.la, pl.lb, pl.lc, pl.lc, pref,
                                            LT_ALGOS, res, &got);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS) return 0;
    /* keep the usable ones, in the heuristic's order */
    int n = 0;
    for (int i = 0; i < got; i++)
        if (res[i].state == CUBLAS_STATUS_SUCCESS && res[i].workspaceSize <= b->blas_ws_bytes)
            res[n++] = res[i];
    return n;
}

/* The contestants of one shape for base_contest: 0 is cublasGemmEx's
 * default, i > 0 cuBLASLt's algorithm i - 1. */
struct gemm_contest {
    base_ctx *b;
    const gemm_tuner *t;
    const lt_plan *pl;
    const cublasLtMatmulHeuristicResult_t *res;
    const gemm_args *g;
};

int gemm_contestant(void *ctx, int i, cudaStream_t)
{
    const gemm_contest *c = (const gemm_contest *)ctx;
    cublasStatus_t st = i == 0 ? run_default(c->b, *c->g)
                               : run_lt(c->b, c->t, *c->pl, &c->res[i - 1].algo, *c->g);
    return st != CUBLAS_STATUS_SUCCESS;
}

/* "cuBLASLt algo 6 tile 21 stages 17 splitK 1 ...": the configuration
 * attributes that tell two algorithms apart (cublasLtMatmulAlgoConfig). */
void describe_lt(const cublasLtMatmulAlgo_t *algo, char *buf, size_t len)
{
    static const struct { cublasLtMatmulAlgoConfigAttributes_t attr; const char *name; } keys[] = {
        { CUBLASLT_ALGO_CONFIG_ID, "algo" },
        { CUBLASLT_ALGO_CONFIG_TILE_ID, "tile" },
        { CUBLASLT_ALGO_CONFIG_STAGES_ID, "stages" },
        { CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "splitK" },
        { CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, "reduction" },
        { CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, "swizzle" },
        { CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, "custom" },
        { CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, "cluster" },
    };
    size_t at = (size_t)snprintf(buf, len, "cuBLASLt");
    for (size_t k = 0; k < sizeof keys / sizeof keys[0] && at < len; k++) {
        /* cuBLASLt wants the attribute's exact size (16 to 32 bits): ask
         * for it first; a zeroed 64-bit slot then reads right on a
         * little-endian host */
        uint64_t v = 0;
        size_t need = 0, wrote = 0;
        if (cublasLtMatmulAlgoConfigGetAttribute(algo, keys[k].attr, NULL, 0, &need) !=
                CUBLAS_STATUS_SUCCESS ||
            need == 0 || need > sizeof v ||
            cublasLtMatmulAlgoConfigGetAttribute(algo, keys[k].attr, &v, need, &wrote) !=
                CUBLAS_STATUS_SUCCESS)
            continue;
        at += (size_t)snprintf(buf + at, len - at, " %s %llu", keys[k].name, (unsigned long long)v);
    }
}

/* Appends "KEY=default" or "KEY=lt:HEX" for pk to variant v's pins. */
void append_pin(base_ctx *b, base_variant v, const gemm_pick *pk)
{
    char text[512];
    size_t n = 0;
    for (int i = 0; i < K_COUNT && n < sizeof text; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%lld", i ? "," : "", pk->key[i]);
    if (n < sizeof text) n += (size_t)snprintf(text + n, sizeof text - n, "=%s", pk->use_lt ? "lt:" : "default");
    if (pk->use_lt) {
        const unsigned char *bytes = (const unsigned char *)&pk->algo;
        for (size_t i = 0; i < sizeof pk->algo && n + 2 < sizeof text; i++)
            n += (size_t)snprintf(text + n, sizeof text - n, "%02x", bytes[i]);
    }
    if (n + 1 < sizeof text) base_append_pin(b, v, text);
}

/* Names the choice of shape g in the variant's choice text. */
void note_pick(base_ctx *b, const gemm_args &g, const gemm_pick *pk)
{
    char what[200];
    if (pk->use_lt) describe_lt(&pk->algo, what, sizeof what);
    else snprintf(what, sizeof what, "cublasGemmEx default");
    if (pk->pinned) {
        size_t l = strlen(what);
        snprintf(what + l, sizeof what - l, " (pinned)");
    }
    append_pin(b, g.v, pk);
    if (g.batch > 1)
        base_note_choice(b, g.v, "GEMM %lldx%lldx%lld x%lld: %s", g.m, g.n, g.k, g.batch, what);
    else
        base_note_choice(b, g.v, "GEMM %lldx%lldx%lld: %s", g.m, g.n, g.k, what);
}

/* The kernel for a new shape (see the header comment), stored in *pk. */
int tune(base_ctx *b, gemm_tuner *t, const gemm_args &g, gemm_pick *pk, kbv_err *e)
{
    memset(pk, 0, sizeof *pk);
    make_key(g, pk->key);
    /* Timing overwrites C, which only beta = 0 allows; a batch count must
     * fit cuBLASLt's int32, and a shared (stride 0) operand of a batch is
     * left to cublasGemmStridedBatchedEx. */
    long long batch = pk->key[K_BATCH];
    if (g.beta != 0.0f || g.m <= 0 || g.n <= 0 || g.k <= 0 || batch > 2147483647LL ||
        (batch > 1 && (g.sa == 0 || g.sb == 0 || g.sc == 0)))
        return 0;
    if (!t->lt && !t->lt_broken && cublasLtCreate(&t->lt) != CUBLAS_STATUS_SUCCESS) {
        t->lt = NULL;
        t->lt_broken = 1;
    }
    if (!t->lt) return 0;
    lt_plan pl;
    if (plan_make(g, &pl) != CUBLAS_STATUS_SUCCESS) return 0;
    /* A pinned choice is used as it is, without timing; a cuBLASLt
     * algorithm only when the library still accepts it for this plan. */
    for (int i = 0; i < t->n_pins; i++) {
        const gemm_pin *pin = &t->pins[i];
        if (memcmp(pin->key, pk->key, sizeof pin->key) != 0) continue;
        cublasLtMatmulHeuristicResult_t check;
        if (!pin->use_lt) {
            plan_free(&pl);
            pk->pinned = 1;
            return 0;
        }
        if (cublasLtMatmulAlgoCheck(t->lt, pl.op, pl.la, pl.lb, pl.lc, pl.lc, &pin->algo, &check) ==
                CUBLAS_STATUS_SUCCESS &&
            check.state == CUBLAS_STATUS_SUCCESS && check.workspaceSize <= b->blas_ws_bytes) {
            pk->use_lt = 1;
            pk->pinned = 1;
            pk->plan = pl;
            pk->algo = pin->algo;
            return 0;
        }
        break;
    }
    cublasLtMatmulHeuristicResult_t res[LT_ALGOS];
    memset(res, 0, sizeof res);
    int n = lt_candidates(b, t, pl, pk->key, res);
    if (n == 0) {
        plan_free(&pl);
        return 0;             /* nothing to time: the default it is */
    }
    float med[1 + LT_ALGOS];
    gemm_contest ctx = { b, t, &pl, res, &g };
    int rc = base_contest(b, 1 + n, gemm_contestant, &ctx, g.s, TUNE_BUDGET_MS, med, e);
    int best_i = rc ? -1 : base_contest_winner(med, 1 + n) - 1;
    if (rc || best_i < 0) {
        plan_free(&pl);
        return rc;
    }
    pk->use_lt = 1;
    pk->plan = pl;
    pk->algo = res[best_i].algo;
    return 0;
}

/* The cuBLAS handle of b (made on first use) on stream s.  cublasSetStream
 * resets the handle to cuBLAS's own workspace pool, so the context's
 * workspace (counted, and the size PyTorch gives cuBLAS) is set again
 * after it, as PyTorch does.  0 or a negative KBV_E* code. */
int blas_on_stream(base_ctx *b, cudaStream_t s, kbv_err *e)
{
    int rc = base_need_blas(b, e);
    if (rc) return rc;
    cublasStatus_t bs = cublasSetStream(b->blas, s);
    if (bs == CUBLAS_STATUS_SUCCESS) bs = cublasSetWorkspace(b->blas, b->blas_ws, b->blas_ws_bytes);
    if (bs != CUBLAS_STATUS_SUCCESS)
        return err_set(e, KBV_ERUNTIME, "baseline %s: cuBLAS stream/workspace: %s", b->p->id,
                       cublasGetStatusString(bs));
    return 0;
}

} /* namespace */

int base_gemm(base_ctx *b, base_variant v, int ta, int tb, long long m, long long n, long long k,
              float alpha, const float *A, long long lda, long long sa, const float *B,
              long long ldb, long long sb, float beta, float *C, long long ldc, long long sc,
              long long batch, cudaStream_t s, kbv_err *e)
{
    int rc = blas_on_stream(b, s, e);
    if (rc) return rc;
    cublasStatus_t bs;
    if (!b->gemm) {
        b->gemm = (gemm_tuner *)calloc(1, sizeof *b->gemm);
        if (!b->gemm) return err_set(e, KBV_ENOMEM, "baseline %s: out of memory", b->p->id);
    }
    gemm_tuner *t = b->gemm;
    gemm_args g = { v, ta, tb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, sa, sb, sc, batch, s };
    long long key[K_COUNT];
    make_key(g, key);
    const gemm_pick *pk = NULL;
    for (int i = 0; i < t->n && !pk; i++)
        if (memcmp(t->pick[i].key, key, sizeof key) == 0) pk = &t->pick[i];
    if (!pk && t->n < GEMM_SHAPES) {
        rc = tune(b, t, g, &t->pick[t->n], e);
        if (rc) return rc;
        pk = &t->pick[t->n++];
        note_pick(b, g, pk);
    }
    if (pk && pk->use_lt) bs = run_lt(b, t, pk->plan, &pk->algo, g);
    else bs = run_default(b, g);
    if (bs != CUBLAS_STATUS_SUCCESS)
        return err_set(e, KBV_ERUNTIME, "baseline %s: cuBLAS%s GEMM %lldx%lldx%lld: %s", b->p->id,
                       pk && pk->use_lt ? "Lt" : "", m, n, k, cublasGetStatusString(bs));
    return 0;
}

namespace {

/* --- base_linear_bf16: a bf16 linear layer through cuBLASLt -------------- */

void bf16_plan_free(lt_bf16_plan *pl)
{
    if (pl->ld) cublasLtMatrixLayoutDestroy(pl->ld);
    if (pl->lb) cublasLtMatrixLayoutDestroy(pl->lb);
    if (pl->la) cublasLtMatrixLayoutDestroy(pl->la);
    if (pl->op) cublasLtMatmulDescDestroy(pl->op);
    pl->op = NULL;
    pl->la = pl->lb = pl->ld = NULL;
}

/* The descriptors of Y^T [n x m] = W [n x k] X^T [k x m] in column-major
 * terms (W's row-major [n, k] buffer is a column-major [k, n] matrix, used
 * transposed; X's row-major [m, k] buffer is X^T), bfloat16 operands and
 * output, float accumulation and scaling, and with a bias the epilogue
 * that adds it to every column of Y^T (one value per output feature). */
cublasStatus_t bf16_plan_make(lt_bf16_plan *pl)
{
    int32_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    uint32_t epi = pl->has_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    int32_t bias_t = CUDA_R_16BF;
    cublasStatus_t st = cublasLtMatmulDescCreate(&pl->op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (st != CUBLAS_STATUS_SUCCESS) pl->op = NULL;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulDescSetAttribute(pl->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulDescSetAttribute(pl->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulDescSetAttribute(pl->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (st == CUBLAS_STATUS_SUCCESS && pl->has_bias)
        st = cublasLtMatmulDescSetAttribute(pl->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_t,
                                            sizeof bias_t);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatrixLayoutCreate(&pl->la, CUDA_R_16BF, (uint64_t)pl->k, (uint64_t)pl->n, (int64_t)pl->k);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatrixLayoutCreate(&pl->lb, CUDA_R_16BF, (uint64_t)pl->k, (uint64_t)pl->m, (int64_t)pl->k);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatrixLayoutCreate(&pl->ld, CUDA_R_16BF, (uint64_t)pl->n, (uint64_t)pl->m, (int64_t)pl->n);
    if (st != CUBLAS_STATUS_SUCCESS) bf16_plan_free(pl);
    return st;
}

/* One bf16 product with algorithm algo; the bias pointer is set on the
 * plan's descriptor for this call (the inputs change between calls). */
cublasStatus_t bf16_exec(base_ctx *b, const gemm_tuner *t, const lt_bf16_plan *pl,
                         const cublasLtMatmulAlgo_t *algo, const void *X, const void *W,
                         const void *bias, void *Y, cudaStream_t s)
{
    if (pl->has_bias) {
        cublasStatus_t st = cublasLtMatmulDescSetAttribute(pl->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                           sizeof bias);
        if (st != CUBLAS_STATUS_SUCCESS) return st;
    }
    const float one = 1.0f, zero = 0.0f;
    return cublasLtMatmul(t->lt, pl->op, &one, W, pl->la, X, pl->lb, &zero, Y, pl->ld, Y, pl->ld, algo,
                          b->blas_ws, b->blas_ws_bytes, s);
}

struct bf16_contest {
    base_ctx *b;
    const gemm_tuner *t;
    const lt_bf16_plan *pl;
    const cublasLtMatmulHeuristicResult_t *res;
    const void *X, *W, *bias;
    void *Y;
};

int bf16_contestant(void *ctx, int i, cudaStream_t s)
{
    const bf16_contest *c = (const bf16_contest *)ctx;
    return bf16_exec(c->b, c->t, c->pl, &c->res[i].algo, c->X, c->W, c->bias, c->Y, s) !=
           CUBLAS_STATUS_SUCCESS;
}

void bf16_key(const lt_bf16_plan *pl, long long key[B16_COUNT])
{
    key[B16_M] = pl->m;
    key[B16_N] = pl->n;
    key[B16_K] = pl->k;
    key[B16_BIAS] = pl->has_bias;
    key[B16_ALX] = pl->al_x;
    key[B16_ALW] = pl->al_w;
    key[B16_ALY] = pl->al_y;
}

/* Appends the plan's choice to the bf16 pins, as bf16_pin's text. */
void bf16_append_pin(base_ctx *b, const lt_bf16_plan *pl)
{
    long long key[B16_COUNT];
    bf16_key(pl, key);
    char text[512];
    size_t n = (size_t)snprintf(text, sizeof text, BF16_PIN_PREFIX);
    for (int i = 0; i < B16_COUNT && n < sizeof text; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%lld", i ? "," : "", key[i]);
    if (n < sizeof text) n += (size_t)snprintf(text + n, sizeof text - n, "=lt:");
    const unsigned char *bytes = (const unsigned char *)&pl->algo;
    for (size_t i = 0; i < sizeof pl->algo && n + 2 < sizeof text; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%02x", bytes[i]);
    if (n + 1 < sizeof text) base_append_pin(b, BASE_BF16, text);
}

/* The pinned algorithm of the plan's key, when base_pin named one and the
 * library still accepts it for the plan within the workspace: 1 and
 * pl->algo set, else 0. */
int bf16_use_pin(const base_ctx *b, const gemm_tuner *t, lt_bf16_plan *pl)
{
    long long key[B16_COUNT];
    bf16_key(pl, key);
    for (int i = 0; i < t->n_bf16_pins; i++) {
        const bf16_pin *pin = &t->bf16_pins[i];
        if (memcmp(pin->key, key, sizeof key) != 0) continue;
        cublasLtMatmulHeuristicResult_t check;
        if (cublasLtMatmulAlgoCheck(t->lt, pl->op, pl->la, pl->lb, pl->ld, pl->ld, &pin->algo, &check) !=
                CUBLAS_STATUS_SUCCESS ||
            check.state != CUBLAS_STATUS_SUCCESS || check.workspaceSize > b->blas_ws_bytes)
            return 0;
        pl->algo = pin->algo;
        return 1;
    }
    return 0;
}

/* The plan's algorithm: a pinned one (bf16_use_pin), else cuBLASLt's
 * heuristic's first (what PyTorch's gemm_and_bias runs) unless another of
 * its first LT_ALGOS beats it by base_contest_winner's margin, timed as
 * base_gemm times its contestants.  The contest overwrites Y.  The choice
 * is noted and appended to the bf16 pins.  0, or a negative KBV_E* code. */
int bf16_plan_choose(base_ctx *b, gemm_tuner *t, lt_bf16_plan *pl, const void *X, const void *W,
                     const void *bias, void *Y, cudaStream_t s, kbv_err *e)
{
    char what[200];
    if (bf16_use_pin(b, t, pl)) {
        describe_lt(&pl->algo, what, sizeof what);
        base_note_choice(b, BASE_BF16, "GEMM %lldx%lldx%lld bf16: %s (pinned), %s", pl->m, pl->n, pl->k, what,
                         pl->has_bias ? "bias epilogue" : "no bias");
        bf16_append_pin(b, pl);
        return 0;
    }
    cublasLtMatmulPreference_t pref = NULL;
    if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS)
        return err_set(e, KBV_ERUNTIME, "baseline %s: cuBLASLt preference", b->p->id);
    uint64_t ws = (uint64_t)b->blas_ws_bytes;
    uint32_t al_a = (uint32_t)pl->al_w, al_b = (uint32_t)pl->al_x, al_d = (uint32_t)pl->al_y;
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                             &ws, sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a,
                                                  sizeof al_a);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b,
                                                  sizeof al_b);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_d,
                                                  sizeof al_d);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d,
                                                  sizeof al_d);
    cublasLtMatmulHeuristicResult_t res[LT_ALGOS];
    memset(res, 0, sizeof res);
    int got = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulAlgoGetHeuristic(t->lt, pl->op, pl->la, pl->lb, pl->ld, pl->ld, pref, LT_ALGOS, res,
                                            &got);
    cublasLtMatmulPreferenceDestroy(pref);
    int n = 0;
    for (int i = 0; st == CUBLAS_STATUS_SUCCESS && i < got; i++)
        if (res[i].state == CUBLAS_STATUS_SUCCESS && res[i].workspaceSize <= b->blas_ws_bytes) res[n++] = res[i];
    if (n == 0)
        return err_set(e, KBV_ERUNTIME, "baseline %s: cuBLASLt has no bf16 algorithm for %lldx%lldx%lld%s",
                       b->p->id, pl->m, pl->n, pl->k, pl->has_bias ? " with a bias epilogue" : "");
    int best = 0;
    if (n > 1) {
        float med[LT_ALGOS];
        bf16_contest ctx = { b, t, pl, res, X, W, bias, Y };
        int rc = base_contest(b, n, bf16_contestant, &ctx, s, TUNE_BUDGET_MS, med, e);
        if (rc) return rc;
        best = base_contest_winner(med, n);
        if (best < 0) best = 0;
    }
    pl->algo = res[best].algo;
    describe_lt(&pl->algo, what, sizeof what);
    base_note_choice(b, BASE_BF16, "GEMM %lldx%lldx%lld bf16: %s%s, %s", pl->m, pl->n, pl->k, what,
                     best == 0 ? " (the heuristic's first)" : " (timed)",
                     pl->has_bias ? "bias epilogue" : "no bias");
    bf16_append_pin(b, pl);
    return 0;
}

} /* namespace */

int base_gemm_bf16(base_ctx *b, int ta, int tb, long long m, long long n, long long k, float alpha, const void *A,
                   long long lda, long long sa, const void *B, long long ldb, long long sb, void *C, long long ldc,
                   long long sc, long long batch, cudaStream_t s, kbv_err *e)
{
    int rc = blas_on_stream(b, s, e);
    if (rc) return rc;
    cublasStatus_t bs;
    /* row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T */
    const float zero = 0.0f;
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (batch <= 1)
        bs = cublasGemmEx_64(b->blas, opb, opa, n, m, k, &alpha, B, CUDA_R_16BF, ldb, A, CUDA_R_16BF, lda, &zero, C,
                             CUDA_R_16BF, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    else
        bs = cublasGemmStridedBatchedEx_64(b->blas, opb, opa, n, m, k, &alpha, B, CUDA_R_16BF, ldb, sb, A,
                                           CUDA_R_16BF, lda, sa, &zero, C, CUDA_R_16BF, ldc, sc, batch,
                                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (bs != CUBLAS_STATUS_SUCCESS)
        return err_set(e, KBV_ERUNTIME, "baseline %s: bf16 GEMM %lldx%lldx%lld: %s", b->p->id, m, n, k,
                       cublasGetStatusString(bs));
    return 0;
}

int base_linear_bf16(base_ctx *b, long long m, long long n, long long k, const void *X, const void *W,
                     const void *bias, void *Y, cudaStream_t s, kbv_err *e)
{
    int rc = base_need_blas(b, e);
    if (rc) return rc;
    if (!b->gemm) {
        b->gemm = (gemm_tuner *)calloc(1, sizeof *b->gemm);
        if (!b->gemm) return err_set(e, KBV_ENOMEM, "baseline %s: out of memory", b->p->id);
    }
    gemm_tuner *t = b->gemm;
    if (!t->lt && !t->lt_broken && cublasLtCreate(&t->lt) != CUBLAS_STATUS_SUCCESS) {
        t->lt = NULL;
        t->lt_broken = 1;
    }
    if (!t->lt) return err_set(e, KBV_ERUNTIME, "baseline %s: cublasLtCreate failed", b->p->id);
    long long al_x = align_bytes(X, 0, 1), al_w = align_bytes(W, 0, 1), al_y = align_bytes(Y, 0, 1);
    int has_bias = bias != NULL;
    lt_bf16_plan *pl = NULL;
    for (int i = 0; i < t->n_bf16 && !pl; i++) {
        lt_bf16_plan *q = &t->bf16[i];
        if (q->m == m && q->n == n && q->k == k && q->has_bias == has_bias && q->al_x == al_x &&
            q->al_w == al_w && q->al_y == al_y)
            pl = q;
    }
    if (!pl) {
        if (t->n_bf16 >= GEMM_SHAPES)
            return err_set(e, KBV_ERUNTIME, "baseline %s: more than %d bf16 GEMM shapes", b->p->id, GEMM_SHAPES);
        pl = &t->bf16[t->n_bf16];
        memset(pl, 0, sizeof *pl);
        pl->m = m;
        pl->n = n;
        pl->k = k;
        pl->has_bias = has_bias;
        pl->al_x = al_x;
        pl->al_w = al_w;
        pl->al_y = al_y;
        cublasStatus_t st = bf16_plan_make(pl);
        if (st != CUBLAS_STATUS_SUCCESS)
            return err_set(e, KBV_ERUNTIME, "baseline %s: cuBLASLt bf16 descriptors: %s", b->p->id,
                           cublasGetStatusString(st));
        rc = bf16_plan_choose(b, t, pl, X, W, bias, Y, s, e);
        if (rc) {
            bf16_plan_free(pl);
            return rc;
        }
        t->n_bf16++;
    }
    cublasStatus_t st = bf16_exec(b, t, pl, &pl->algo, X, W, bias, Y, s);
    if (st != CUBLAS_STATUS_SUCCESS)
        return err_set(e, KBV_ERUNTIME, "baseline %s: cuBLASLt bf16 GEMM %lldx%lldx%lld: %s", b->p->id, m, n, k,
                       cublasGetStatusString(st));
    return 0;
}

void base_gemm_release(base_ctx *b)
{
    gemm_tuner *t = b->gemm;
    if (!t) return;
    for (int i = 0; i < t->n; i++)
        if (t->pick[i].use_lt) plan_free(&t->pick[i].plan);
    for (int i = 0; i < t->n_bf16; i++) bf16_plan_free(&t->bf16[i]);
    if (t->lt) cublasLtDestroy(t->lt);
    free(t);
    b->gemm = NULL;
}

namespace {

int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* The "=lt:HEX" of a pin (from s[i], up to len) into *algo; 0 when well
 * formed. */
int parse_algo(const char *s, size_t i, size_t len, cublasLtMatmulAlgo_t *algo)
{
    if (len - i != 3 + 2 * sizeof *algo || memcmp(s + i, "lt:", 3) != 0) return -1;
    unsigned char *bytes = (unsigned char *)algo;
    for (size_t k = 0; k < sizeof *algo; k++) {
        int hi = hexval(s[i + 3 + 2 * k]), lo = hexval(s[i + 4 + 2 * k]);
        if (hi < 0 || lo < 0) return -1;
        bytes[k] = (unsigned char)(hi * 16 + lo);
    }
    return 0;
}

/* The n comma-separated numbers of a pin's key, from s[*i] up to len and
 * ending at its '=', into key; *i then indexes the choice.  0 when well
 * formed. */
int parse_key(const char *s, size_t len, size_t *i, long long *key, int n)
{
    for (int k = 0; k < n; k++) {
        char *end = NULL;
        char buf[32];
        size_t j = *i;
        while (j < len && s[j] != ',' && s[j] != '=') j++;
        if (j == *i || j - *i >= sizeof buf) return -1;
        memcpy(buf, s + *i, j - *i);
        buf[j - *i] = 0;
        key[k] = strtoll(buf, &end, 10);
        if (*end) return -1;
        if (j >= len || s[j] != (k + 1 < n ? ',' : '=')) return -1;
        *i = j + 1;
    }
    return 0;
}

/* One "KEY=CHOICE" of len bytes into *pin; 0 when well formed. */
int parse_pin(const char *s, size_t len, gemm_pin *pin)
{
    memset(pin, 0, sizeof *pin);
    size_t i = 0;
    if (parse_key(s, len, &i, pin->key, K_COUNT)) return -1;
    if (len - i == 7 && memcmp(s + i, "default", 7) == 0) return 0;
    if (parse_algo(s, i, len, &pin->algo)) return -1;
    pin->use_lt = 1;
    return 0;
}

/* One bf16 linear layer's "bf16.lin:KEY=lt:HEX" of len bytes into *pin; 0
 * when well formed. */
int parse_bf16_pin(const char *s, size_t len, bf16_pin *pin)
{
    memset(pin, 0, sizeof *pin);
    size_t i = strlen(BF16_PIN_PREFIX);
    if (parse_key(s, len, &i, pin->key, B16_COUNT)) return -1;
    return parse_algo(s, i, len, &pin->algo);
}

} /* namespace */

extern "C" const char *base_pins(const base_ctx *b, base_variant v)
{
    return b ? b->pins[v == BASE_BF16 ? 2 : v == BASE_TF32 ? 1 : 0] : "";
}

extern "C" int base_pin(base_ctx *b, const char *pins, kbv_err *e)
{
    if (!b->gemm) {
        b->gemm = (gemm_tuner *)calloc(1, sizeof *b->gemm);
        if (!b->gemm) return err_set(e, KBV_ENOMEM, "baseline %s: out of memory", b->p->id);
    }
    gemm_tuner *t = b->gemm;
    for (const char *s = pins; *s;) {
        const char *end = strchr(s, ';');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        gemm_pin pin;
        bf16_pin pin16;
        size_t pre16 = strlen(BF16_PIN_PREFIX);
        /* a convolution's pin is conv.cu's, read at create (convpin.h) */
        if (len > pre16 && strncmp(s, BF16_PIN_PREFIX, pre16) == 0) {
            if (parse_bf16_pin(s, len, &pin16))
                return err_set(e, KBV_EINPUT, "baseline %s: a malformed bf16 pin '%.60s'", b->p->id, s);
            if (t->n_bf16_pins < GEMM_SHAPES) t->bf16_pins[t->n_bf16_pins++] = pin16;
        } else if (len > 0 && strncmp(s, "conv.", 5) != 0) {
            if (parse_pin(s, len, &pin))
                return err_set(e, KBV_EINPUT, "baseline %s: a malformed pin '%.60s'", b->p->id, s);
            if (t->n_pins < 2 * GEMM_SHAPES) t->pins[t->n_pins++] = pin;
        }
        s += len + (end ? 1 : 0);
    }
    return 0;
}
