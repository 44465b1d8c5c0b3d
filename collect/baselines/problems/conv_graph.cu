/* conv_graph.cu - one convolution (or the backward-data pass that computes
 * a transposed convolution) as a cuDNN operation graph, the way PyTorch
 * runs convolutions: cuDNN's backend API, heuristic mode A, engine
 * configurations tried in the heuristic's order.  Some of those engine
 * configurations cannot be selected through the legacy algorithm enum
 * that conv.cu searches, so conv.cu times the plans built here next to the
 * legacy algorithms and keeps the fastest (see conv.cu).
 *
 * The backend functions are resolved from the cuDNN library conv.cu has
 * already opened (its dlopen handle), into a table per graph.  Nothing
 * here is fatal to the caller: conv_graph_create fails with a message that
 * the caller keeps as the reason the graph path is off.
 *
 * Every descriptor made here lives until conv_graph_destroy: the plans
 * keep their engine configurations, and the configurations come from the
 * heuristic descriptor, so nothing is released early on the guess that
 * cuDNN copied it.
 */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base_impl.h"

namespace {

struct graph_api {
#define GRAPH_FN(name) decltype(&::name) name;
    GRAPH_FN(cudnnGetErrorString)
    GRAPH_FN(cudnnBackendCreateDescriptor)
    GRAPH_FN(cudnnBackendDestroyDescriptor)
    GRAPH_FN(cudnnBackendSetAttribute)
    GRAPH_FN(cudnnBackendGetAttribute)
    GRAPH_FN(cudnnBackendFinalize)
    GRAPH_FN(cudnnBackendExecute)
#undef GRAPH_FN
};

/* Heuristic results looked at (some are filtered out or fail to
 * finalize, so more than CONV_GRAPH_PLANS), and variant packs kept for
 * reuse (one per distinct set of pointers: a batch split into chunks
 * needs one per chunk). */
const int GRAPH_CFGS = 16;
const int GRAPH_PACKS = 16;

/* Unique ids of the three tensors in the graph and in variant packs. */
const int64_t UID_X = 1, UID_W = 2, UID_Y = 3;

struct graph_pack {
    cudnnBackendDescriptor_t d;
    const void *x, *w;
    void *y, *ws;
};

} /* namespace */

struct conv_graph {
    graph_api api;
    cudnnHandle_t h;
    long long align;
    int bf16;                             /* bfloat16 tensors */
    cudnnBackendDescriptor_t tx, tw, ty, conv, op, opgraph, heur;
    cudnnBackendDescriptor_t cfg[GRAPH_CFGS];
    int n_cfg;
    cudnnBackendDescriptor_t plan[CONV_GRAPH_PLANS];
    size_t ws[CONV_GRAPH_PLANS];
    long long engine[CONV_GRAPH_PLANS];   /* cuDNN's global engine index (debug line, pins) */
    int tc[CONV_GRAPH_PLANS];             /* the engine notes tensor cores */
    int n_plans;
    graph_pack pack[GRAPH_PACKS];
    int next_pack;
};

namespace {

int graph_load(graph_api *a, void *lib, kbv_err *e)
{
    memset(a, 0, sizeof *a);
    if (!lib) return err_set(e, KBV_ERUNTIME, "no cuDNN library handle");
#define GRAPH_SYM(name)                                                                      \
    do {                                                                                     \
        void *sym = dlsym(lib, #name);                                                       \
        if (!sym) return err_set(e, KBV_ERUNTIME, "cuDNN lacks %s", #name);                  \
        memcpy(&a->name, &sym, sizeof sym);                                                  \
    } while (0)
    GRAPH_SYM(cudnnGetErrorString);
    GRAPH_SYM(cudnnBackendCreateDescriptor);
    GRAPH_SYM(cudnnBackendDestroyDescriptor);
    GRAPH_SYM(cudnnBackendSetAttribute);
    GRAPH_SYM(cudnnBackendGetAttribute);
    GRAPH_SYM(cudnnBackendFinalize);
    GRAPH_SYM(cudnnBackendExecute);
#undef GRAPH_SYM
    return 0;
}

/* The message of a failed backend call: which step, cuDNN's status. */
int graph_err(const conv_graph *cg, const char *what, cudnnStatus_t st, kbv_err *e)
{
    return err_set(e, KBV_ERUNTIME, "%s: %s", what,
                   cg->api.cudnnGetErrorString ? cg->api.cudnnGetErrorString(st) : "cuDNN error");
}

/* A finalized tensor descriptor of rank dims, packed as given: FLOAT, or
 * BFLOAT16 for a graph of bfloat16 tensors. */
cudnnStatus_t make_tensor(const conv_graph *cg, int rank, const long long *dims,
                          const long long *strides, int64_t uid, cudnnBackendDescriptor_t *out)
{
    const graph_api &A = cg->api;
    int64_t d[5] = { 0, 0, 0, 0, 0 }, s[5] = { 0, 0, 0, 0, 0 };
    for (int i = 0; i < rank; i++) {
        d[i] = dims[i];
        s[i] = strides[i];
    }
    cudnnDataType_t dt = cg->bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    int64_t align = cg->align;
    cudnnStatus_t st = A.cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, out);
    if (st != CUDNN_STATUS_SUCCESS) {
        *out = NULL;
        return st;
    }
    st = A.cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank, d);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank, s);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1,
                                        &align);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnBackendFinalize(*out);
    return st;
}

/* The finalized convolution descriptor: cross-correlation in FLOAT,
 * symmetric padding. */
cudnnStatus_t make_conv(conv_graph *cg, const conv_graph_shape *sh)
{
    const graph_api &A = cg->api;
    int64_t nsp = sh->rank - 2;
    int64_t pad[3] = { 0, 0, 0 }, str[3] = { 1, 1, 1 }, dil[3] = { 1, 1, 1 };
    for (int i = 0; i < nsp; i++) {
        pad[i] = sh->pad[i];
        str[i] = sh->stride[i];
        dil[i] = sh->dil[i];
    }
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    cudnnStatus_t st = A.cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &cg->conv);
    if (st != CUDNN_STATUS_SUCCESS) {
        cg->conv = NULL;
        return st;
    }
    cudnnBackendDescriptor_t c = cg->conv;
    st = A.cudnnBackendSetAttribute(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &nsp);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE,
                                        1, &mode);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, nsp, pad);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, nsp, pad);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, nsp, str);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, nsp, dil);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnBackendFinalize(c);
    return st;
}

/* The finalized operation node: forward (x -> y), or backward data for a
 * transposed convolution (dy = x, dx = y, as conv.cu's legacy path), with
 * alpha 1 and beta 0 (y is overwritten). */
cudnnStatus_t make_op(conv_graph *cg, int transposed)
{
    const graph_api &A = cg->api;
    float alpha = 1.0f, beta = 0.0f;
    cudnnBackendDescriptorType_t type = transposed
                                            ? CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR
                                            : CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR;
    cudnnBackendAttributeName_t a_in = transposed ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY
                                                  : CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X;
    cudnnBackendAttributeName_t a_w = transposed ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W
                                                 : CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W;
    cudnnBackendAttributeName_t a_out = transposed ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX
                                                   : CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y;
    cudnnBackendAttributeName_t a_conv = transposed ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC
                                                    : CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC;
    cudnnBackendAttributeName_t a_alpha = transposed ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA
                                                     : CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA;
    cudnnBackendAttributeName_t a_beta = transposed ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA
                                                    : CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA;
    cudnnStatus_t st = A.cudnnBackendCreateDescriptor(type, &cg->op);
    if (st != CUDNN_STATUS_SUCCESS) {
        cg->op = NULL;
        return st;
    }
    cudnnBackendDescriptor_t o = cg->op;
    st = A.cudnnBackendSetAttribute(o, a_in, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->tx);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(o, a_w, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->tw);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(o, a_out, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->ty);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(o, a_conv, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->conv);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(o, a_alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(o, a_beta, CUDNN_TYPE_FLOAT, 1, &beta);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnBackendFinalize(o);
    return st;
}

/* The operation graph of the one node, on the runner's handle, and the
 * finalized mode-A heuristic for it. */
cudnnStatus_t make_heur(conv_graph *cg)
{
    const graph_api &A = cg->api;
    cudnnStatus_t st = A.cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &cg->opgraph);
    if (st != CUDNN_STATUS_SUCCESS) {
        cg->opgraph = NULL;
        return st;
    }
    st = A.cudnnBackendSetAttribute(cg->opgraph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->op);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(cg->opgraph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE,
                                        1, &cg->h);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnBackendFinalize(cg->opgraph);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    st = A.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &cg->heur);
    if (st != CUDNN_STATUS_SUCCESS) {
        cg->heur = NULL;
        return st;
    }
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    st = A.cudnnBackendSetAttribute(cg->heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->opgraph);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(cg->heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnBackendFinalize(cg->heur);
    return st;
}

/* Whether the engine of configuration cfg may run: never one that
 * converts the float inputs down (PyTorch excludes those too), and no
 * tensor-core engine unless allowed.  Its global index and tensor-core
 * note go to *engine and *tc.  An engine whose notes cannot be read is
 * refused. */
int engine_ok(const conv_graph *cg, cudnnBackendDescriptor_t cfg, int allow_tc, long long *engine,
              int *tc)
{
    const graph_api &A = cg->api;
    *engine = -1;
    *tc = 0;
    cudnnBackendDescriptor_t eng = NULL;
    if (A.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng) != CUDNN_STATUS_SUCCESS)
        return 0;
    int64_t got = 0;
    cudnnStatus_t st = A.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &eng);
    int ok = st == CUDNN_STATUS_SUCCESS && got == 1;
    if (ok) {
        int64_t idx = -1, n_idx = 0;
        if (A.cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n_idx,
                                       &idx) == CUDNN_STATUS_SUCCESS &&
            n_idx == 1)
            *engine = (long long)idx;
        cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
        memset(notes, 0, sizeof notes);
        int64_t n_notes = 0;
        st = A.cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                        CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n_notes, notes);
        if (st != CUDNN_STATUS_SUCCESS) ok = 0;
        if (n_notes > CUDNN_NUMERICAL_NOTE_TYPE_COUNT) n_notes = CUDNN_NUMERICAL_NOTE_TYPE_COUNT;
        for (int64_t i = 0; ok && i < n_notes; i++) {
            if (notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) ok = 0;
            if (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE) *tc = 1;
        }
        if (*tc && !allow_tc) ok = 0;
    }
    A.cudnnBackendDestroyDescriptor(eng);
    return ok;
}

/* A finalized execution plan for configuration cfg on the handle, and its
 * workspace size. */
cudnnStatus_t make_plan(const conv_graph *cg, cudnnBackendDescriptor_t cfg, cudnnBackendDescriptor_t *out,
                        size_t *ws)
{
    const graph_api &A = cg->api;
    *ws = 0;
    cudnnStatus_t st = A.cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, out);
    if (st != CUDNN_STATUS_SUCCESS) {
        *out = NULL;
        return st;
    }
    st = A.cudnnBackendSetAttribute(*out, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &cg->h);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(*out, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnBackendFinalize(*out);
    int64_t bytes = 0, got = 0;
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendGetAttribute(*out, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                        &got, &bytes);
    if (st == CUDNN_STATUS_SUCCESS && (got != 1 || bytes < 0)) st = CUDNN_STATUS_INTERNAL_ERROR;
    if (st != CUDNN_STATUS_SUCCESS) {
        A.cudnnBackendDestroyDescriptor(*out);
        *out = NULL;
        return st;
    }
    *ws = (size_t)bytes;
    return st;
}

/* A finalized variant pack for these pointers (kept in the graph's small
 * cache, so that repeated runs on the same buffers build none). */
cudnnStatus_t get_pack(conv_graph *cg, const void *x, const void *w, void *y, void *ws,
                       cudnnBackendDescriptor_t *out)
{
    for (int i = 0; i < GRAPH_PACKS; i++) {
        const graph_pack &p = cg->pack[i];
        if (p.d && p.x == x && p.w == w && p.y == y && p.ws == ws) {
            *out = p.d;
            return CUDNN_STATUS_SUCCESS;
        }
    }
    const graph_api &A = cg->api;
    graph_pack &p = cg->pack[cg->next_pack];
    cg->next_pack = (cg->next_pack + 1) % GRAPH_PACKS;
    if (p.d) A.cudnnBackendDestroyDescriptor(p.d);
    memset(&p, 0, sizeof p);
    cudnnBackendDescriptor_t d = NULL;
    cudnnStatus_t st = A.cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &d);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    int64_t uids[3] = { UID_X, UID_W, UID_Y };
    void *ptrs[3] = { const_cast<void *>(x), const_cast<void *>(w), y };
    void *wsp = ws;
    st = A.cudnnBackendSetAttribute(d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
    if (st == CUDNN_STATUS_SUCCESS)
        st = A.cudnnBackendSetAttribute(d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &wsp);
    if (st == CUDNN_STATUS_SUCCESS) st = A.cudnnBackendFinalize(d);
    if (st != CUDNN_STATUS_SUCCESS) {
        A.cudnnBackendDestroyDescriptor(d);
        return st;
    }
    p.d = d;
    p.x = x;
    p.w = w;
    p.y = y;
    p.ws = ws;
    *out = d;
    return st;
}

} /* namespace */

int conv_graph_create(void *lib, cudnnContext *h, const conv_graph_shape *sh, int allow_tc,
                      conv_graph **out, kbv_err *e)
{
    *out = NULL;
    if (sh->rank < 4 || sh->rank > 5) return err_set(e, KBV_EINPUT, "rank %d", sh->rank);
    if (sh->align < 4 || (sh->align & (sh->align - 1)))
        return err_set(e, KBV_EINPUT, "alignment %lld", sh->align);
    conv_graph *cg = (conv_graph *)calloc(1, sizeof *cg);
    if (!cg) return err_set(e, KBV_ENOMEM, "out of memory");
    int rc = graph_load(&cg->api, lib, e);
    if (rc) {
        free(cg);
        return rc;
    }
    cg->h = h;
    cg->align = sh->align;
    cg->bf16 = sh->bf16;
    const graph_api &A = cg->api;
    cudnnStatus_t st = make_tensor(cg, sh->rank, sh->x, sh->x_str, UID_X, &cg->tx);
    if (st == CUDNN_STATUS_SUCCESS) st = make_tensor(cg, sh->rank, sh->w, sh->w_str, UID_W, &cg->tw);
    if (st == CUDNN_STATUS_SUCCESS) st = make_tensor(cg, sh->rank, sh->y, sh->y_str, UID_Y, &cg->ty);
    if (st != CUDNN_STATUS_SUCCESS) {
        rc = graph_err(cg, "tensor descriptor", st, e);
        conv_graph_destroy(cg);
        return rc;
    }
    st = make_conv(cg, sh);
    if (st != CUDNN_STATUS_SUCCESS) {
        rc = graph_err(cg, "convolution descriptor", st, e);
        conv_graph_destroy(cg);
        return rc;
    }
    st = make_op(cg, sh->transposed);
    if (st != CUDNN_STATUS_SUCCESS) {
        rc = graph_err(cg, sh->transposed ? "backward-data operation" : "forward operation", st, e);
        conv_graph_destroy(cg);
        return rc;
    }
    st = make_heur(cg);
    if (st != CUDNN_STATUS_SUCCESS) {
        rc = graph_err(cg, "operation graph or heuristic", st, e);
        conv_graph_destroy(cg);
        return rc;
    }
    /* How many configurations the heuristic has, then that many (at most
     * GRAPH_CFGS) filled into descriptors made for them. */
    int64_t avail = 0;
    st = A.cudnnBackendGetAttribute(cg->heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                    0, &avail, NULL);
    if (st != CUDNN_STATUS_SUCCESS || avail <= 0) {
        rc = st != CUDNN_STATUS_SUCCESS ? graph_err(cg, "heuristic results", st, e)
                                        : err_set(e, KBV_ERUNTIME, "the heuristic has no configuration");
        conv_graph_destroy(cg);
        return rc;
    }
    int want = avail < GRAPH_CFGS ? (int)avail : GRAPH_CFGS;
    for (int i = 0; i < want; i++) {
        st = A.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cg->cfg[i]);
        if (st != CUDNN_STATUS_SUCCESS) {
            cg->cfg[i] = NULL;
            break;
        }
        cg->n_cfg = i + 1;
    }
    int64_t got = 0;
    st = cg->n_cfg > 0 ? A.cudnnBackendGetAttribute(cg->heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, cg->n_cfg, &got, cg->cfg)
                       : st;
    if (st != CUDNN_STATUS_SUCCESS || got <= 0) {
        rc = st != CUDNN_STATUS_SUCCESS ? graph_err(cg, "heuristic configurations", st, e)
                                        : err_set(e, KBV_ERUNTIME, "the heuristic returned no configuration");
        conv_graph_destroy(cg);
        return rc;
    }
    if (got > cg->n_cfg) got = cg->n_cfg;
    /* Plans in the heuristic's order, PyTorch's first being the first that
     * finalizes; a configuration that is refused or fails is skipped. */
    int refused = 0, failed = 0;
    cudnnStatus_t last = CUDNN_STATUS_SUCCESS;
    for (int i = 0; i < got && cg->n_plans < CONV_GRAPH_PLANS; i++) {
        long long engine = -1;
        int tc = 0;
        if (!engine_ok(cg, cg->cfg[i], allow_tc, &engine, &tc)) {
            refused++;
            continue;
        }
        int k = cg->n_plans;
        size_t ws = 0;
        st = make_plan(cg, cg->cfg[i], &cg->plan[k], &ws);
        if (st != CUDNN_STATUS_SUCCESS) {
            failed++;
            last = st;
            continue;
        }
        cg->ws[k] = ws;
        cg->engine[k] = engine;
        cg->tc[k] = tc;
        cg->n_plans = k + 1;
    }
    if (cg->n_plans == 0) {
        rc = err_set(e, KBV_ERUNTIME, "no plan: %lld configurations, %d refused by their notes, %d failed "
                     "to finalize%s%s", (long long)got, refused, failed, failed ? ", last: " : "",
                     failed && A.cudnnGetErrorString ? A.cudnnGetErrorString(last) : "");
        conv_graph_destroy(cg);
        return rc;
    }
    *out = cg;
    return 0;
}

int conv_graph_plans(const conv_graph *cg)
{
    return cg ? cg->n_plans : 0;
}

size_t conv_graph_ws(const conv_graph *cg, int i)
{
    return cg && i >= 0 && i < cg->n_plans ? cg->ws[i] : 0;
}

long long conv_graph_engine(const conv_graph *cg, int i)
{
    return cg && i >= 0 && i < cg->n_plans ? cg->engine[i] : -1;
}

void conv_graph_describe(const conv_graph *cg, int i, char *buf, size_t len)
{
    if (!buf || len == 0) return;
    if (!cg || i < 0 || i >= cg->n_plans) {
        snprintf(buf, len, "graph plan %d (none)", i);
        return;
    }
    snprintf(buf, len, "graph plan %d (engine %lld%s)", i, cg->engine[i], cg->tc[i] ? ", tensor cores" : "");
}

int conv_graph_fits(const conv_graph *cg, const void *x, const void *w, const void *y)
{
    if (!cg) return 0;
    uintptr_t a = (uintptr_t)cg->align;
    return (uintptr_t)x % a == 0 && (uintptr_t)w % a == 0 && (uintptr_t)y % a == 0;
}

int conv_graph_exec(conv_graph *cg, int i, const void *x, const void *w, void *y, void *ws)
{
    if (!cg || i < 0 || i >= cg->n_plans) return (int)CUDNN_STATUS_BAD_PARAM;
    cudnnBackendDescriptor_t pack = NULL;
    cudnnStatus_t st = get_pack(cg, x, w, y, ws, &pack);
    if (st == CUDNN_STATUS_SUCCESS) st = cg->api.cudnnBackendExecute(cg->h, cg->plan[i], pack);
    return (int)st;
}

void conv_graph_destroy(conv_graph *cg)
{
    if (!cg) return;
    const graph_api &A = cg->api;
    if (A.cudnnBackendDestroyDescriptor) {
        for (int i = 0; i < GRAPH_PACKS; i++)
            if (cg->pack[i].d) A.cudnnBackendDestroyDescriptor(cg->pack[i].d);
        for (int i = 0; i < cg->n_plans; i++)
            if (cg->plan[i]) A.cudnnBackendDestroyDescriptor(cg->plan[i]);
        for (int i = 0; i < cg->n_cfg; i++)
            if (cg->cfg[i]) A.cudnnBackendDestroyDescriptor(cg->cfg[i]);
        cudnnBackendDescriptor_t rest[7] = { cg->heur, cg->opgraph, cg->op, cg->conv, cg->ty, cg->tw, cg->tx };
        for (int i = 0; i < 7; i++)
            if (rest[i]) A.cudnnBackendDestroyDescriptor(rest[i]);
    }
    free(cg);
}
