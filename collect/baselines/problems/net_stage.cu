/* net_stage.cu - where the level-3 interpreter reads a network's
 * parameters (net_stage.h).
 *
 * PyTorch's parameters are tensors of their own, each as aligned as its
 * allocator makes it; the ABI packs them into one input, `params`, where
 * a part's offset times the element size can fall on 16 or even 2 bytes.
 * The libraries choose by alignment: cuDNN's graph plans are declared for
 * 32-byte aligned tensors (conv.cu's graph_align) and are left out for a
 * less aligned weight (the ShuffleNet unit's last two bfloat16 1x1
 * convolutions ran cuDNN's legacy explicit GEMM for that, 1.34x
 * PyTorch's time, where PyTorch runs an sm90 implicit GEMM); cuBLAS and
 * cuBLASLt choose among fewer kernels below 16 bytes.  So each part that a
 * library call reads and that sits less aligned than the call wants is
 * copied, by one kernel at the start of every call (the parameters may
 * change between calls), into a buffer where each part starts on 256
 * bytes; the copy reads and writes only those parts, once, and its time
 * and memory are the baseline's.  The table of staged parts is made again
 * only when params or the element size changes, and copied to the device
 * only when the element size or params' alignment does.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net_stage.h"

namespace {

/* Copies the staged parts (net_stage_run): part blockIdx.y of seg, as
 * (byte offset in params, byte offset in the copy, bytes), in units of
 * `unit` bytes, the element size (the source is aligned to no more). */
__global__ void __launch_bounds__(256) stage_kernel(const unsigned char *__restrict__ params,
                                                    unsigned char *__restrict__ copy,
                                                    const long long *__restrict__ seg, int unit)
{
    const long long *g = seg + 3 * (long long)blockIdx.y;
    const long long step = (long long)gridDim.x * blockDim.x;
    const long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (unit == 4) {
        const unsigned *src = reinterpret_cast<const unsigned *>(params + g[0]);
        unsigned *dst = reinterpret_cast<unsigned *>(copy + g[1]);
        for (long long i = t0; i < g[2] / 4; i += step) dst[i] = src[i];
    } else {
        const unsigned short *src = reinterpret_cast<const unsigned short *>(params + g[0]);
        unsigned short *dst = reinterpret_cast<unsigned short *>(copy + g[1]);
        for (long long i = t0; i < g[2] / 2; i += step) dst[i] = src[i];
    }
}

/* The byte alignment that the library call reading part `part` of layer L
 * wants, or 0 where only kbv's kernels read it (its element type's
 * alignment does for them).  cuDNN's graph plans are declared for 32-byte
 * aligned tensors (conv.cu's graph_align), and a weight placed less
 * aligned leaves them out for the legacy algorithms; cuBLAS and cuBLASLt
 * choose among fewer kernels below 16 bytes (gemm.cu keys its plans by
 * the operands' alignment), and a bfloat16 linear layer's bias is read by
 * cuBLASLt's epilogue. */
int part_need(const net_layer *L, int part)
{
    switch (L->kind) {
    case NET_CONV2D: case NET_CONVT2D:
        return part != 0 ? 0 : net_is_patch_conv(L) ? 16 : 32;
    case NET_LINEAR:
        return 16;
    case NET_WINDOW_MLP:
        return part == 0 ? 16 : 0;
    case NET_WINDOW_ATTN:
        return part == 6 || part == 7 ? 16 : 0;   /* qkv.weight and proj.weight */
    default:
        return 0;
    }
}

/* Whether part i, at addr this call, is to be read from the copy: a
 * library call reads it and addr is less aligned than the call wants. */
bool staged(const net_stage *st, int i, const unsigned char *addr)
{
    return st->need[i] && (uintptr_t)addr % (uintptr_t)st->need[i] != 0;
}

/* A staged part's room in the copy: its bytes rounded up to 256. */
size_t room(long long bytes)
{
    return ((size_t)bytes + 255) / 256 * 256;
}

} /* namespace */

int net_stage_create(base_ctx *b, const net_spec *sp, const net_plan *pl, net_stage *st, kbv_err *e)
{
    memset(st, 0, sizeof *st);
    /* KBV_NET_STAGE=0 reads every part in place, as before the staging:
     * for measuring what it changes (the environment probe keeps candidate
     * code from setting it). */
    const char *env = getenv("KBV_NET_STAGE");
    int off = env && strcmp(env, "0") == 0;
    int needs = 0;
    for (int i = 0; i < pl->n_params; i++) {
        const net_param *q = &pl->param[i];
        st->need[i] = off ? 0 : part_need(&sp->layers[q->layer], q->is_bias);
        needs += st->need[i] != 0;
    }
    if (needs == 0) return 0;
    cudaError_t ce = cudaMalloc(&st->seg, (size_t)(3 * needs) * sizeof(long long));
    if (ce != cudaSuccess) {
        st->seg = NULL;
        return base_cuda_err(e, b, "parameter staging table", ce);
    }
    return 0;
}

int net_stage_run(base_ctx *b, const net_plan *pl, net_stage *st, const void *params, int elem, cudaStream_t s,
                  kbv_err *e)
{
    const unsigned char *base = static_cast<const unsigned char *>(params);
    if (params != st->params || elem != st->elem) {
        size_t total = 0;
        long long most = 0;
        int n = 0;
        for (int i = 0; i < pl->n_params; i++) {
            const net_param *q = &pl->param[i];
            if (!staged(st, i, base + q->offset * elem)) continue;
            long long bytes = q->count * elem;
            if (bytes > most) most = bytes;
            total += room(bytes);
            n++;
        }
        cudaError_t ce = cudaSuccess;
        int cls = elem * 256 + (int)((uintptr_t)params % 256);
        if (total > st->copy_bytes || (n > 0 && cls != st->seg_class)) {
            /* earlier calls' copies may still read the old buffer or table */
            ce = cudaStreamSynchronize(s);
            if (ce == cudaSuccess && total > st->copy_bytes) {
                cudaFree(st->copy);
                st->copy = NULL;
                st->copy_bytes = 0;
                ce = cudaMalloc(&st->copy, total);
                if (ce == cudaSuccess) st->copy_bytes = total;
                else st->copy = NULL;
            }
        }
        long long *seg = n > 0 ? (long long *)malloc((size_t)(3 * n) * sizeof(long long)) : NULL;
        if (n > 0 && !seg) return err_set(e, KBV_ENOMEM, "baseline %s: out of memory", b->p->id);
        size_t at = 0;
        for (int i = 0, j = 0; ce == cudaSuccess && i < pl->n_params; i++) {
            const net_param *q = &pl->param[i];
            st->at[i] = base + q->offset * elem;
            if (!staged(st, i, base + q->offset * elem)) continue;
            seg[3 * j] = q->offset * elem;
            seg[3 * j + 1] = (long long)at;
            seg[3 * j + 2] = q->count * elem;
            st->at[i] = static_cast<unsigned char *>(st->copy) + at;
            at += room(seg[3 * j + 2]);
            j++;
        }
        if (ce == cudaSuccess && n > 0 && cls != st->seg_class) {
            /* from pageable memory: returns once seg has been taken */
            ce = cudaMemcpyAsync(st->seg, seg, (size_t)(3 * n) * sizeof(long long), cudaMemcpyHostToDevice, s);
            if (ce == cudaSuccess) st->seg_class = cls;
        }
        free(seg);
        if (ce != cudaSuccess) {
            st->params = NULL;
            st->seg_class = 0;
            return base_cuda_err(e, b, "parameter staging", ce);
        }
        st->n_seg = n;
        st->seg_most = most;
        st->params = params;
        st->elem = elem;
    }
    if (st->n_seg == 0) return 0;
    long long units = st->seg_most / elem;
    unsigned gx = (unsigned)((units + 255) / 256);
    if (gx > 512) gx = 512;
    stage_kernel<<<dim3(gx, (unsigned)st->n_seg), 256, 0, s>>>(base, static_cast<unsigned char *>(st->copy),
                                                               st->seg, elem);
    cudaError_t ce = cudaGetLastError();
    return ce == cudaSuccess ? 0 : base_cuda_err(e, b, "parameter staging launch", ce);
}

void net_stage_destroy(net_stage *st)
{
    if (st->seg) cudaFree(st->seg);
    if (st->copy) cudaFree(st->copy);
    st->seg = NULL;
    st->copy = NULL;
    st->copy_bytes = 0;
}
