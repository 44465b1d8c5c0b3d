/* baseline.cu - the baseline dispatcher: picks the family that implements a
 * problem's op, owns the handles the families share (cuBLAS and its
 * workspace) and turns CUDA errors into kbv_err messages.  All device
 * memory goes through cudaMalloc, so the worker's interposed allocator
 * counts it toward the baseline's peak. */
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base_impl.h"

extern "C" {
#include "bf16path.h"
}

namespace {

const base_family *const families[] = {
    &base_fam_matmul, &base_fam_elementwise, &base_fam_softmax, &base_fam_norm,
    &base_fam_pool,   &base_fam_reduce,      &base_fam_scan,    &base_fam_loss,
    &base_fam_attention, &base_fam_conv, &base_fam_chain, &base_fam_conv_chain,
    /* the models' range lies inside the nets': first match wins */
    &base_fam_rnn, &base_fam_model, &base_fam_net, &base_fam_conv_net,
};

const base_family *family_of(int op)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (op >= families[i]->op_lo && op <= families[i]->op_hi) return families[i];
    return NULL;
}

/* cuBLAS workspace: what PyTorch gives cuBLAS on Hopper (32 MiB), so that
 * the library can pick the same split-K kernels. */
const size_t BLAS_WS_BYTES = (size_t)32 << 20;

} /* namespace */

double base_attr(const suite_problem *p, const char *name, double def)
{
    for (int i = 0; p && i < p->n_attrs; i++)
        if (strcmp(p->attrs[i].name, name) == 0) return p->attrs[i].value;
    return def;
}

int base_cuda_err(kbv_err *e, const base_ctx *b, const char *what, cudaError_t ce)
{
    return err_set(e, KBV_ERUNTIME, "baseline %s: %s: %s", b && b->p ? b->p->id : "?", what,
                   cudaGetErrorString(ce));
}

int base_need_blas(base_ctx *b, kbv_err *e)
{
    if (b->blas) return 0;
    cublasStatus_t bs = cublasCreate(&b->blas);
    if (bs != CUBLAS_STATUS_SUCCESS) {
        b->blas = NULL;
        return err_set(e, KBV_ERUNTIME, "baseline %s: cublasCreate: %s", b->p->id,
                       cublasGetStatusString(bs));
    }
    cudaError_t ce = cudaMalloc(&b->blas_ws, BLAS_WS_BYTES);
    if (ce != cudaSuccess) {
        b->blas_ws = NULL;
        return base_cuda_err(e, b, "cuBLAS workspace", ce);
    }
    b->blas_ws_bytes = BLAS_WS_BYTES;
    bs = cublasSetWorkspace(b->blas, b->blas_ws, b->blas_ws_bytes);
    if (bs == CUBLAS_STATUS_SUCCESS) bs = cublasSetMathMode(b->blas, CUBLAS_DEFAULT_MATH);
    if (bs == CUBLAS_STATUS_SUCCESS) bs = cublasSetPointerMode(b->blas, CUBLAS_POINTER_MODE_HOST);
    if (bs != CUBLAS_STATUS_SUCCESS)
        return err_set(e, KBV_ERUNTIME, "baseline %s: cuBLAS setup: %s", b->p->id,
                       cublasGetStatusString(bs));
    return 0;
}

int base_need_ws(base_ctx *b, size_t bytes, kbv_err *e)
{
    if (bytes <= b->ws_bytes) return 0;
    if (b->ws) cudaFree(b->ws);
    b->ws = NULL;
    b->ws_bytes = 0;
    if (bytes == 0) return 0;
    cudaError_t ce = cudaMalloc(&b->ws, bytes);
    if (ce != cudaSuccess) {
        b->ws = NULL;
        return base_cuda_err(e, b, "workspace", ce);
    }
    b->ws_bytes = bytes;
    return 0;
}

int base_shrink_ws(base_ctx *b, size_t bytes, kbv_err *e)
{
    if (bytes >= b->ws_bytes) return 0;
    if (b->ws) cudaFree(b->ws);
    b->ws = NULL;
    b->ws_bytes = 0;
    return base_need_ws(b, bytes, e);
}

unsigned base_grid(const base_ctx *b, long long items, int threads, int per_sm)
{
    long long need = (items + threads - 1) / threads;
    long long cap = (long long)(b->sm_count > 0 ? b->sm_count : 132) * per_sm;
    if (need > cap) need = cap;
    if (need < 1) need = 1;
    return (unsigned)need;
}

int base_bf16_widen(base_ctx *b, const kbv_call *call, unsigned keep, kbv_tensor *in, kbv_tensor *out,
                    kbv_call *wide, kbv_err *e)
{
    const suite_problem *p = b->p;
    if (call->n_inputs > BASE_MAX_TENSORS || call->n_outputs > BASE_MAX_TENSORS)
        return err_set(e, KBV_EINPUT, "baseline %s: too many tensors for the bf16 path", p->id);
    for (int i = 0; i < call->n_inputs; i++) {
        in[i] = call->inputs[i];
        if ((i < 32 && (keep >> i) & 1u) || in[i].dtype != KBV_BF16) continue;
        int64_t n = kbv_numel(&in[i]);
        if (!b->wide_in[i]) {
            cudaError_t ce = cudaMalloc(&b->wide_in[i], (size_t)(n > 0 ? n : 1) * sizeof(float));
            if (ce != cudaSuccess) {
                b->wide_in[i] = NULL;
                return base_cuda_err(e, b, "bf16 widened input", ce);
            }
        }
        int rc = gen_widen_bf16(in[i].data, (float *)b->wide_in[i], n, call->stream, e);
        if (rc) return rc;
        in[i].data = b->wide_in[i];
        in[i].dtype = KBV_F32;
    }
    for (int i = 0; i < call->n_outputs; i++) {
        out[i] = call->outputs[i];
        if (out[i].dtype != KBV_BF16) continue;
        int64_t n = kbv_numel(&out[i]);
        if (!b->wide_out[i]) {
            cudaError_t ce = cudaMalloc(&b->wide_out[i], (size_t)(n > 0 ? n : 1) * sizeof(float));
            if (ce != cudaSuccess) {
                b->wide_out[i] = NULL;
                return base_cuda_err(e, b, "bf16 float output", ce);
            }
        }
        out[i].data = b->wide_out[i];
        out[i].dtype = KBV_F32;
    }
    *wide = *call;
    wide->inputs = in;
    wide->outputs = out;
    return 0;
}

int base_bf16_narrow(const kbv_call *call, const kbv_call *wide, kbv_err *e)
{
    for (int i = 0; i < call->n_outputs; i++)
        if (call->outputs[i].dtype == KBV_BF16) {
            int rc = gen_narrow_bf16((const float *)wide->outputs[i].data, call->outputs[i].data,
                                     kbv_numel(&call->outputs[i]), call->stream, e);
            if (rc) return rc;
        }
    return 0;
}

/* The bf16 baseline of a family without a bfloat16 path: the inputs
 * widened to float (exactly), the family's tf32 computation (what PyTorch
 * runs for the products in float32; the fp32 one without a product), and
 * the outputs rounded to bfloat16.  It moves more bytes than PyTorch's
 * bfloat16 kernels, so its parity is not claimed, and its choice says so. */
int base_bf16_fallback(base_ctx *b, const kbv_call *call, kbv_err *e)
{
    kbv_tensor in[BASE_MAX_TENSORS], out[BASE_MAX_TENSORS];
    kbv_call wide;
    int rc = base_bf16_widen(b, call, 0u, in, out, &wide, e);
    if (rc) return rc;
    base_variant v = b->p->uses_tf32 ? BASE_TF32 : BASE_FP32;
    rc = b->fam->run(b, v, &wide, e);
    if (!rc) rc = base_bf16_narrow(call, &wide, e);
    if (!rc && !b->choice[2][0])
        snprintf(b->choice[2], sizeof b->choice[2],
                 "fallback, parity not claimed: inputs widened to fp32, the %s baseline (%s), outputs "
                 "rounded to bf16",
                 v == BASE_TF32 ? "tf32" : "fp32", b->choice[v][0] ? b->choice[v] : "kbv's own kernels");
    return rc;
}

extern "C" int base_available(const suite_problem *p, const char **why)
{
    static const char no_impl[] = "no baseline implementation for this op";
    if (why) *why = NULL;
    const base_family *f = p ? family_of(p->op) : NULL;
    if (!f) {
        if (why) *why = no_impl;
        return 0;
    }
    if (f->available) return f->available(p, why);
    return 1;
}

extern "C" int base_create(const suite_problem *p, const kbv_call *example, const char *pins,
                           base_ctx **out, kbv_err *e)
{
    *out = NULL;
    const base_family *f = family_of(p->op);
    if (!f) return err_set(e, KBV_EINPUT, "baseline.cu: %s: no baseline for op %d", p->id, p->op);
    const char *why = NULL;
    if (f->available && !f->available(p, &why))
        return err_set(e, KBV_ERUNTIME, "baseline %s: cannot run here: %s", p->id,
                       why ? why : "unavailable");
    if (suite_bf16_path(p) != BF16_FALLBACK && !f->run_bf16)
        return err_set(e, KBV_EINPUT, "baseline.cu: %s: bf16path.c says %s, family %s has no bf16 path", p->id,
                       suite_bf16_path_name(suite_bf16_path(p)), f->name);
    base_ctx *b = (base_ctx *)calloc(1, sizeof *b);
    if (!b) return err_set(e, KBV_ENOMEM, "baseline.cu: %s: out of memory", p->id);
    b->p = p;
    b->fam = f;
    cudaError_t ce = cudaGetDevice(&b->device);
    if (ce == cudaSuccess)
        ce = cudaDeviceGetAttribute(&b->sm_count, cudaDevAttrMultiProcessorCount, b->device);
    if (ce != cudaSuccess) {
        int rc = base_cuda_err(e, b, "device query", ce);
        base_destroy(b);
        return rc;
    }
    /* The GEMM pins go in before the family's create: a family that knows
     * its shapes (the matrix products) makes its GEMM choices there, and
     * with the pins read after it, L1_001's tf32 product was timed afresh
     * in every worker although the table named its kernel.  Convolutions
     * read the text itself during create (pin_text). */
    int rc = pins ? base_pin(b, pins, e) : 0;
    b->pin_text = pins;
    if (!rc) rc = f->create(b, example, e);
    b->pin_text = NULL;
    if (rc) {
        base_destroy(b);
        return rc;
    }
    *out = b;
    return 0;
}

extern "C" int base_run(base_ctx *b, base_variant v, const kbv_call *call, kbv_err *e)
{
    if (!b) return err_set(e, KBV_EINPUT, "baseline.cu: base_run on NULL");
    /* A problem without a matrix product has one baseline: tf32 = fp32. */
    if (!b->p->uses_tf32 && v == BASE_TF32) v = BASE_FP32;
    if (b->blas) {
        /* cublasSetStream returns the handle to cuBLAS's own workspace
         * pool: the context's (counted, PyTorch's size) is set again, for
         * the families that call cuBLAS directly (base_gemm does too) */
        cublasStatus_t bs = cublasSetStream(b->blas, call->stream);
        if (bs == CUBLAS_STATUS_SUCCESS && b->blas_ws) bs = cublasSetWorkspace(b->blas, b->blas_ws, b->blas_ws_bytes);
        if (bs != CUBLAS_STATUS_SUCCESS)
            return err_set(e, KBV_ERUNTIME, "baseline %s: cublasSetStream: %s", b->p->id,
                           cublasGetStatusString(bs));
    }
    /* The bf16 path is the registry's decision (bf16path.h), so that
     * `kbv list` says what runs. */
    if (v == BASE_BF16)
        return suite_bf16_path(b->p) != BF16_FALLBACK ? b->fam->run_bf16(b, call, e)
                                                       : base_bf16_fallback(b, call, e);
    return b->fam->run(b, v, call, e);
}

extern "C" int base_run_reference(base_ctx *b, const kbv_call *call, kbv_err *e)
{
    if (!b) return err_set(e, KBV_EINPUT, "baseline.cu: base_run_reference on NULL");
    b->reference = 1;
    int rc = base_run(b, BASE_FP32, call, e);
    b->reference = 0;
    return rc;
}

extern "C" size_t base_workspace_bytes(const base_ctx *b)
{
    return b ? b->blas_ws_bytes + b->ws_bytes : 0;
}

extern "C" void base_destroy(base_ctx *b)
{
    if (!b) return;
    if (b->fam && b->fam->destroy) b->fam->destroy(b);
    base_gemm_release(b);
    for (int i = 0; i < BASE_MAX_TENSORS; i++) {
        if (b->wide_in[i]) cudaFree(b->wide_in[i]);
        if (b->wide_out[i]) cudaFree(b->wide_out[i]);
    }
    if (b->blas) cublasDestroy(b->blas);
    if (b->blas_ws) cudaFree(b->blas_ws);
    if (b->ws) cudaFree(b->ws);
    free(b);
}
