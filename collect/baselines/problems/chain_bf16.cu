/* chain_bf16.cu - the level-2 chains' bf16 baseline (chain_run_bf16): the
 * paths bf16path.c chooses, on the bfloat16 tensors of a BF16-setting
 * call.  A linear layer with elementwise steps only is one cuBLASLt
 * product and one bfloat16 pass; other linear chains run their layers in
 * bfloat16 and the rest of the chain as chain.cu does in fp32; a
 * convolution's chain runs its convolution in bfloat16, then its steps
 * on the bfloat16 output when they are elementwise only, else as in fp32
 * on the widened output.  The elementwise steps themselves are
 * chain_ew.h's.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "base_impl.h"
#include "chain_ew.h"

extern "C" {
#include "bf16path.h"
#include "chain.h"
}

namespace {

/* The elementwise steps A on bfloat16 rows, x to y (in place allowed):
 * eight values (16 bytes) a load where the row length allows, float
 * arithmetic, each result rounded to bfloat16 once. */
__global__ void __launch_bounds__(256) ew_kernel_bf16(const __nv_bfloat16 *x, __nv_bfloat16 *y, ew_args A)
{
    for (long long row = blockIdx.y; row < A.rows; row += gridDim.y) {
        const __nv_bfloat16 *xr = x + row * A.L;
        __nv_bfloat16 *yr = y + row * A.L;
        if (A.L % 8 == 0) {
            long long l8 = A.L / 8;
            for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < l8;
                 i += (long long)gridDim.x * blockDim.x) {
                float v[8];
                base_ld8_bf16(xr + 8 * i, v);
                float4 lo = apply4(A, make_float4(v[0], v[1], v[2], v[3]), row, 8 * i);
                float4 hi = apply4(A, make_float4(v[4], v[5], v[6], v[7]), row, 8 * i + 4);
                const float w[8] = { lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w };
                base_st8_bf16(yr + 8 * i, w);
            }
        } else {
            for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < A.L;
                 j += (long long)gridDim.x * blockDim.x)
                yr[j] = __float2bfloat16_rn(apply(A, __bfloat162float(xr[j]), row, j));
        }
    }
}

/* The elementwise steps A on bfloat16 rows whose length is no multiple
 * of eight, taken flat: eight values (16 bytes) a load across row ends,
 * the row and column of the first worked out from its flat index (one
 * division per eight values, 32-bit where the tensor allows) and the
 * others' stepped from it, channels too; float arithmetic, one rounding;
 * the last n % 8 values one at a time.  x and y 16-byte aligned (in
 * place allowed).  The row-wise kernel's scalar path took 0.7 TB/s on a
 * transposed 3-d convolution's output (L2_100), 4x PyTorch's three
 * separate vectorised passes; this kernel with a 64-bit remainder per
 * value still took 3.3 ms there against PyTorch's 0.8 for one pass. */
__global__ void __launch_bounds__(256) ew_flat_bf16(const __nv_bfloat16 *x, __nv_bfloat16 *y, ew_args A)
{
    const long long n = A.rows * A.L, n8 = n / 8;
    const bool narrow = n < 0x7fffffffLL;
    for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < n8;
         q += (long long)gridDim.x * blockDim.x) {
        float v[8];
        base_ld8_bf16(x + 8 * q, v);
        long long r[8], j[8], c[8];
        long long row = narrow ? (long long)((unsigned)(8 * q) / (unsigned)A.L) : 8 * q / A.L;
        long long col = 8 * q - row * A.L;
        long long ch = A.S > 1 ? (narrow ? (long long)((unsigned)row % (unsigned)A.C) : row % A.C) : 0;
#pragma unroll
        for (int u = 0; u < 8; u++) {
            r[u] = row;
            j[u] = col;
            c[u] = A.S > 1 ? ch : col;
            if (++col == A.L) {
                col = 0;
                row++;
                if (++ch == A.C) ch = 0;
            }
        }
        apply_nc<8>(A, v, r, j, c);
        base_st8_bf16(y + 8 * q, v);
    }
    if (blockIdx.x == 0)
        for (long long i = 8 * n8 + threadIdx.x; i < n; i += blockDim.x) {
            long long row = i / A.L;
            y[i] = __float2bfloat16_rn(apply(A, __bfloat162float(x[i]), row, i - row * A.L));
        }
}

} /* namespace */

void chain_launch_ew_bf16(const base_ctx *b, const __nv_bfloat16 *x, __nv_bfloat16 *y, ew_args A, cudaStream_t s)
{
    if (A.L % 8 != 0 && ((uintptr_t)x & 15) == 0 && ((uintptr_t)y & 15) == 0) {
        ew_flat_bf16<<<base_grid(b, A.rows * A.L / 8 + 1, 256, 8), 256, 0, s>>>(x, y, A);
        return;
    }
    long long per_row = A.L % 8 == 0 ? A.L / 8 : A.L;
    unsigned gx = (unsigned)((per_row + 255) / 256);
    unsigned gy = (unsigned)(A.rows < 65535 ? A.rows : 65535);
    long long want = (long long)b->sm_count * 64 / (gy ? gy : 1);
    if (want < 1) want = 1;
    if ((long long)gx > want) gx = (unsigned)want;
    ew_kernel_bf16<<<dim3(gx, gy), 256, 0, s>>>(x, y, A);
}

namespace {

/* bf16, a single linear layer whose steps are elementwise (no middle
 * stage, no post stage): what PyTorch runs on bfloat16 tensors, with its
 * separate elementwise kernels fused.  The product with its bias is one
 * cuBLASLt call (bfloat16 operands, bias and output, CUBLAS_COMPUTE_32F,
 * the bias epilogue: base_linear_bf16) into the call's output; the steps
 * then run in one pass over it in place (two with a second list), reading
 * the bfloat16 parameters as they are, float arithmetic, the value
 * rounded to bfloat16 once per pass. */
int run_bf16_linear_ew(base_ctx *b, const kbv_call *call, kbv_err *e)
{
    chain_state *cs = (chain_state *)b->state;
    const chain_spec *sp = cs->spec;
    const int wi = sp->w_in > 0 ? sp->w_in : 1;
    long long N = cs->N, C = cs->C, K = call->inputs[0].shape[1];
    __nv_bfloat16 *y = (__nv_bfloat16 *)call->outputs[0].data;
    /* the choice text begins with what kind of baseline this is; the
     * product's kernel follows it (base_linear_bf16 names it) */
    if (!b->choice[BASE_BF16][0])
        base_note_choice(b, BASE_BF16, "native bf16: cuBLASLt GEMM, bf16 operands, bias and output, "
                                       "CUBLAS_COMPUTE_32F, %s; then the chain's elementwise steps in one "
                                       "pass per list on the bf16 output (fp32 arithmetic)",
                         sp->has_bias ? "the bias as its epilogue" : "no bias");
    int rc = base_linear_bf16(b, N, C, K, call->inputs[0].data, call->inputs[wi].data,
                              sp->has_bias ? call->inputs[wi + 1].data : NULL, y, call->stream, e);
    if (rc) return rc;
    const chain_ew *lists[2] = { sp->ew1, sp->ew2 };
    for (int l = 0; l < 2; l++) {
        ew_args A;
        memset(&A, 0, sizeof A);
        A.C = C; A.S = 1; A.rows = N; A.L = C;
        A.pbf16 = 1;
        chain_fill_ops(&A, lists[l], call);
        if (A.n_ops) chain_launch_ew_bf16(b, y, y, A, call->stream);
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return base_cuda_err(e, b, "bf16 chain launch", ce);
    return 0;
}

/* The input's average pooling (in_pool) on bfloat16, as PyTorch's
 * avg_pool on a bfloat16 tensor: window k, stride k on each of the nd
 * spatial axes of x [planes, in...], no padding, a float sum, the mean
 * rounded once; one output element a thread. */
__global__ void __launch_bounds__(256) input_pool_bf16(const __nv_bfloat16 *__restrict__ x,
                                                       __nv_bfloat16 *__restrict__ y, long long planes, int nd,
                                                       long long i0, long long i1, long long i2, int k)
{
    long long in_d[3] = { i0, i1, i2 }, out_d[3], per_out = 1, per_in = 1;
    for (int a = 0; a < 3; a++) {
        if (a >= nd) in_d[a] = 1;
        out_d[a] = a < nd ? in_d[a] / k : 1;
        per_out *= out_d[a];
        per_in *= in_d[a];
    }
    long long total = planes * per_out;
    int k1 = nd > 1 ? k : 1, k2 = nd > 2 ? k : 1;
    float inv = 1.0f / (float)(k * k1 * k2);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long pl = i / per_out, r = i - pl * per_out;
        long long o2 = r % out_d[2], o1 = (r / out_d[2]) % out_d[1], o0 = r / (out_d[2] * out_d[1]);
        const __nv_bfloat16 *base = x + pl * per_in;
        float sum = 0.0f;
        for (int a = 0; a < k; a++)
            for (int b1 = 0; b1 < k1; b1++)
                for (int c = 0; c < k2; c++)
                    sum += __bfloat162float(base[((o0 * k + a) * in_d[1] + o1 * k1 + b1) * in_d[2] + o2 * k2 + c]);
        y[i] = __float2bfloat16_rn(sum * inv);
    }
}

/* The bfloat16 buffer of the producer's output (N C S values), made on
 * first use and kept with the chain's state. */
int need_pre16(base_ctx *b, kbv_err *e)
{
    chain_state *cs = (chain_state *)b->state;
    long long n = cs->N * cs->C * cs->S;
    if (cs->pre16) return 0;
    cudaError_t ce = cudaMalloc(&cs->pre16, (size_t)(n > 0 ? n : 1) * 2);
    if (ce != cudaSuccess) {
        cs->pre16 = NULL;
        return base_cuda_err(e, b, "bf16 producer output", ce);
    }
    return 0;
}

/* Whether the operation list b may run in the pass of list a: together
 * they fit one list, and b reads no remembered value before it remembers
 * one (a pass starts its remembered value at the value it reads). */
int ew_lists_join(const chain_ew *a, const chain_ew *b)
{
    int na = 0, nb = 0;
    while (na < CHAIN_MAX_EW && a[na].kind != EW_END) na++;
    for (; nb < CHAIN_MAX_EW && b[nb].kind != EW_END; nb++) {
        int k = b[nb].kind;
        if (k == EW_SAVE) break;
        if (k == EW_ADD_SAVED || k == EW_MUL_SAVED || k == EW_SUB_SAVED) return na == 0;
    }
    while (nb < CHAIN_MAX_EW && b[nb].kind != EW_END) nb++;
    return na + nb <= CHAIN_MAX_EW;
}

/* bf16, a convolution's chain of elementwise steps only (no middle stage,
 * no post stage): the convolution into the call's bfloat16 output, then
 * its bias and every step in one bfloat16 pass in place (two when the
 * lists cannot join), the parameters read as they are, float arithmetic:
 * PyTorch's kernels for these steps fused, reading and writing bfloat16
 * as they do.  x is the convolution's input (pooled already). */
int run_bf16_conv_ew(base_ctx *b, const kbv_call *call, const void *x, kbv_err *e)
{
    chain_state *cs = (chain_state *)b->state;
    const chain_spec *sp = cs->spec;
    const int wi = sp->w_in > 0 ? sp->w_in : 1;
    void *y = call->outputs[0].data;
    int rc = conv_runner_run_bf16(b, cs->conv, x, call->inputs[wi].data, NULL, y, call->stream, e);
    if (rc) return rc;
    ew_args A, B;
    memset(&A, 0, sizeof A);
    A.C = cs->C; A.S = cs->S;
    A.rows = cs->S > 1 ? cs->N * cs->C : cs->N;
    A.L = cs->S > 1 ? cs->S : cs->C;
    A.pbf16 = 1;
    B = A;
    A.bias = sp->has_bias ? call->inputs[wi + 1].data : NULL;
    if (ew_lists_join(sp->ew1, sp->ew2)) {
        chain_ew joined[CHAIN_MAX_EW + 1];
        int n = 0;
        for (int k = 0; k < CHAIN_MAX_EW && sp->ew1[k].kind != EW_END; k++) joined[n++] = sp->ew1[k];
        for (int k = 0; k < CHAIN_MAX_EW && sp->ew2[k].kind != EW_END; k++) joined[n++] = sp->ew2[k];
        joined[n].kind = EW_END;
        chain_fill_ops(&A, joined, call);
    } else {
        chain_fill_ops(&A, sp->ew1, call);
        chain_fill_ops(&B, sp->ew2, call);
    }
    if (A.bias || A.n_ops) chain_launch_ew_bf16(b, (const __nv_bfloat16 *)y, (__nv_bfloat16 *)y, A, call->stream);
    if (B.n_ops) chain_launch_ew_bf16(b, (const __nv_bfloat16 *)y, (__nv_bfloat16 *)y, B, call->stream);
    cudaError_t ce = cudaGetLastError();
    return ce == cudaSuccess ? 0 : base_cuda_err(e, b, "bf16 chain launch", ce);
}

/* bf16, a convolution's chain: the convolution on the bfloat16 input
 * (average-pooled first in bfloat16 where the chain says so) and weight
 * (cuDNN, bfloat16 tensors, float compute: conv_runner_run_bf16).  A
 * chain of elementwise steps only runs them on its bfloat16 output
 * (run_bf16_conv_ew); any other writes a bfloat16 buffer, which the
 * pass of its bias and first steps widens into the float intermediate,
 * and runs the rest of the chain as in fp32 on the widened parameters
 * (chain_run_rest), the output rounded once. */
int run_bf16_conv(base_ctx *b, const kbv_call *call, kbv_err *e)
{
    chain_state *cs = (chain_state *)b->state;
    const chain_spec *sp = cs->spec;
    const int wi = sp->w_in > 0 ? sp->w_in : 1;
    const int ew_only = sp->mid == MID_NONE && !cs->post && !cs->pre;
    if (!b->choice[BASE_BF16][0]) {
        if (ew_only)
            base_note_choice(b, BASE_BF16, "native bf16 convolution (bf16 input and weight%s), then its bias and "
                                           "the chain's steps in one bf16 pass per list on its output (fp32 "
                                           "arithmetic)",
                             cs->xin ? ", the input average-pooled in bf16 first" : "");
        else if (chain_rest_bf16(cs, !cs->post) == REST16_POST)
            base_note_choice(b, BASE_BF16, "native bf16 convolution (bf16 input and weight%s), then the first post "
                                           "stage reads its bf16 output (bias and first steps applied as it "
                                           "reads), the rest in fp32, output rounded to bf16 (by that stage "
                                           "itself when it is the last, over each plane's positions)",
                             cs->xin ? ", the input average-pooled in bf16 first" : "");
        else
            base_note_choice(b, BASE_BF16, "native bf16 convolution (bf16 input and weight%s), then the chain's "
                                           "fp32 steps on its widened output, output rounded to bf16",
                             cs->xin ? ", the input average-pooled in bf16 first" : "");
    }
    const void *x = call->inputs[0].data;
    if (cs->xin) {
        /* the pooled input in bfloat16, in the float buffer of the fp32
         * path (half of it) */
        const kbv_tensor &xt = call->inputs[0];
        int nd = xt.ndim - 2;
        if (nd < 1 || nd > 3) return err_set(e, KBV_EINPUT, "baseline %s: pooled input of %d axes", b->p->id, xt.ndim);
        long long d[3] = { 1, 1, 1 }, out = xt.shape[0] * xt.shape[1];
        for (int i = 0; i < nd; i++) {
            d[i] = xt.shape[2 + i];
            out *= d[i] / sp->in_pool;
        }
        input_pool_bf16<<<base_grid(b, out, 256, 8), 256, 0, call->stream>>>(
            (const __nv_bfloat16 *)x, (__nv_bfloat16 *)cs->xin, xt.shape[0] * xt.shape[1], nd, d[0], d[1], d[2],
            sp->in_pool);
        x = cs->xin;
    }
    if (ew_only) return run_bf16_conv_ew(b, call, x, e);
    int rc = need_pre16(b, e);
    if (rc) return rc;
    kbv_tensor in[BASE_MAX_TENSORS], out[BASE_MAX_TENSORS];
    kbv_call wide;
    /* everything but x and the weight widened (the convolution reads
     * them in bfloat16; x is widened too where a step reads it again):
     * the parameters the steps read */
    unsigned keep = (chain_reads_input(sp, 0) ? 0u : 1u) | (wi < 32 && !chain_reads_input(sp, wi) ? 1u << wi : 0u);
    rc = base_bf16_widen(b, call, keep, in, out, &wide, e);
    if (rc) return rc;
    rc = conv_runner_run_bf16(b, cs->conv, x, call->inputs[wi].data, NULL, cs->pre16, call->stream, e);
    if (rc) return rc;
    float *o = cs->post ? cs->mid : (float *)wide.outputs[0].data;
    float *pre = cs->pre ? cs->pre : o;
    int wrote16 = 0;
    rc = chain_run_rest(b, &wide, pre, e, call->outputs[0].data, &wrote16, 0, cs->pre16);
    if (!rc && !wrote16) rc = base_bf16_narrow(call, &wide, e);
    return rc;
}

} /* namespace */

/* bf16 (the paths are bf16path.c's): a single linear layer whose steps
 * are all elementwise runs natively (run_bf16_linear_ew); a convolution's
 * chain runs its convolution in bf16 (run_bf16_conv); another linear
 * chain (a norm, a reduction, a softmax or post stages after its layer,
 * or a second layer) runs each layer as PyTorch's nn.Linear does in
 * bfloat16 (one cuBLASLt product with the bias as its epilogue, bfloat16
 * output: base_linear_bf16; the first layer's steps one bfloat16 pass
 * between them); the rest of the chain takes the last layer's bfloat16
 * output as chain_rest_bf16 says (kept in bfloat16 where its middle
 * stage allows, else widened and run as in fp32 on the widened
 * parameters, the output rounded to bfloat16 once). */
int chain_run_bf16(base_ctx *b, const kbv_call *call, kbv_err *e)
{
    chain_state *cs = (chain_state *)b->state;
    const chain_spec *sp = cs->spec;
    /* bf16path.c decides, and the dispatcher sends only the native paths
     * here */
    bf16_path path = suite_bf16_path(b->p);
    if (path == BF16_NATIVE && sp->producer == CHAIN_LINEAR && !cs->post && !cs->pre)
        return run_bf16_linear_ew(b, call, e);
    if (path == BF16_NATIVE_PRODUCER && sp->producer != CHAIN_LINEAR) return run_bf16_conv(b, call, e);
    if (path != BF16_NATIVE_PRODUCER || sp->producer != CHAIN_LINEAR)
        return err_set(e, KBV_EINPUT, "baseline %s: bf16path.c's %s does not fit the chain", b->p->id,
                       suite_bf16_path_name(path));
    kbv_tensor in[BASE_MAX_TENSORS], out[BASE_MAX_TENSORS];
    kbv_call wide;
    /* x and the weights (and biases) stay bfloat16 for the products,
     * unless a step reads them again (x + original_x).  Where the rest of
     * the chain stays in bfloat16 into the output (a norm kept in
     * bfloat16, or the bf16 softmax, with no post stage), every kernel
     * after the products reads its parameters as bfloat16 (pbf16), so
     * nothing is widened: before, L2_028 widened its 8M-value input y for
     * the last pass (26 us of its 273 against PyTorch's 222 at 4cfcd11). */
    const int wi = sp->w_in > 0 ? sp->w_in : 1;
    const chain_rest16 how = chain_rest_bf16(cs, !cs->post);
    const int all16 = !cs->post && (how == REST16_STATS || how == REST16_SOFTMAX) && sp->w2 <= 0;
    int layer_in[5] = { 0, wi, sp->has_bias ? wi + 1 : -1, sp->w2 > 0 ? sp->w2 : -1, sp->w2 > 0 ? sp->w2 + 1 : -1 };
    unsigned keep = 0;
    /* (x that a post stage adds back, L2_051's x + original_x, stays
     * bfloat16 too: that stage reads either type, chain_reads_param) */
    for (int k = 0; k < 5; k++)
        if (layer_in[k] >= 0 && layer_in[k] < 32 && !chain_reads_param(sp, layer_in[k])) keep |= 1u << layer_in[k];
    int rc = all16 ? 0 : base_bf16_widen(b, call, keep, in, out, &wide, e);
    if (rc) return rc;
    rc = need_pre16(b, e);
    if (rc) return rc;
    float *o = cs->post ? cs->mid : all16 ? NULL : (float *)wide.outputs[0].data;
    float *pre = cs->pre ? cs->pre : o;
    long long N = cs->N, C = cs->C, K = call->inputs[0].shape[1];
    /* the choice text begins with what kind of baseline this is; the
     * product's kernel follows it (base_linear_bf16 names it) */
    if (!b->choice[BASE_BF16][0]) {
        /* in chain_rest16's order */
        static const char *const rest[] = {
            "widened in the pass of the first steps, then the chain's fp32 steps, output "
            "rounded to bf16",
            "the row reduction reads the bf16 output, the first steps applied as it reads; "
            "the rest in fp32, output rounded to bf16",
            "the first steps one bf16 pass in place, the norm's statistics read from bf16, "
            "the normalisation and the last steps one pass from bf16 (fp32 arithmetic)",
            "the first steps one bf16 pass in place, then kbv's bf16 softmax into the output",
            "the first post stage reads the bf16 output, the first steps applied as it reads; the rest in fp32, "
            "output rounded to bf16",
        };
        base_note_choice(b, BASE_BF16, "native bf16 linear layer%s: cuBLASLt GEMM, bf16 operands, bias and output, "
                                       "CUBLAS_COMPUTE_32F, %s; %s",
                         sp->w2 > 0 ? "s (the first layer's steps one bf16 pass between them)" : "",
                         sp->has_bias ? "the bias as its epilogue" : "no bias", rest[chain_rest_bf16(cs, !cs->post)]);
    }
    const void *x = call->inputs[0].data;
    if (sp->w2 > 0) {
        /* The first layer into the hidden buffer, which holds N H floats
         * for the float paths; bfloat16 values take half of it here. */
        long long H = call->inputs[wi].shape[0];
        __nv_bfloat16 *hid16 = (__nv_bfloat16 *)cs->hid;
        rc = base_linear_bf16(b, N, H, K, x, call->inputs[wi].data, sp->has_bias ? call->inputs[wi + 1].data : NULL,
                              hid16, call->stream, e);
        if (rc) return rc;
        ew_args L1;
        memset(&L1, 0, sizeof L1);
        L1.C = H; L1.S = 1; L1.rows = N; L1.L = H;
        L1.pbf16 = 1;
        chain_fill_ops(&L1, sp->ew1, call);
        if (L1.n_ops) chain_launch_ew_bf16(b, hid16, hid16, L1, call->stream);
        rc = base_linear_bf16(b, N, C, H, hid16, call->inputs[sp->w2].data, call->inputs[sp->w2 + 1].data,
                              cs->pre16, call->stream, e);
    } else {
        rc = base_linear_bf16(b, N, C, K, x, call->inputs[wi].data, sp->has_bias ? call->inputs[wi + 1].data : NULL,
                              cs->pre16, call->stream, e);
    }
    int wrote16 = 0;
    if (!rc) rc = chain_run_rest(b, all16 ? call : &wide, pre, e, call->outputs[0].data, &wrote16, 1, cs->pre16);
    if (!rc && !wrote16 && all16)
        return err_set(e, KBV_EINPUT, "baseline %s: the bf16 path wrote no output", b->p->id);
    if (!rc && !wrote16) rc = base_bf16_narrow(call, &wide, e);
    return rc;
}

