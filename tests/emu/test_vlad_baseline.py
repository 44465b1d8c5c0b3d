"""test_vlad_baseline.py - NetVLAD's baseline (collect/baselines/problems/
netvlad.cu) on the CPU, in fp32 and in bf16.

netvlad.cu, as it is, runs under the emulator: its kernels (the column
statistics, the batch norm with the softmax, the normalisation) in both
element types, and vlad_run and vlad_run_bf16 with the products they ask
for.  What it takes from the libraries is a plain loop here: base_gemm's
row-major contract (base_stub.h) for fp32; for bf16, gemm.cu's own
base_gemm_bf16 on cuBLAS's column-major contract of cublasGemmEx and
cublasGemmStridedBatchedEx (the 64-bit entry points: op, leading
dimensions, batch strides; float or bfloat16 operands and outputs, float
accumulation, one rounding), so that the transposes through which
base_gemm_bf16 reads row-major tensors are checked too.  Two models,
with and without ghost clusters, go through vlad_create, vlad_run and
vlad_run_bf16 on the same bfloat16-representable inputs and are compared
with a numpy reference in float64 (KernelBench's forward): fp32 with
kbv's tolerance, bf16 with the BF16 setting's (check.py's rule, with
twice its room, since the assignment and its probabilities are rounded
to bfloat16 as PyTorch's bfloat16 eager rounds them).

usage: python3 tests/emu/test_vlad_baseline.py   (g++, numpy)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srcparts import bf16_round, definition, emu_build, run_xp, source  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.environ.get("KBV_EMU_CACHE", os.path.join(os.environ.get("TMPDIR", "/tmp"), "kbv-emu"))
W = os.path.join(CACHE, "vlad")

PRELUDE = r'''
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
extern "C" {
#include "l3model.h"
}
#define BASE_STUB_REAL_GEMM_BF16
#include "base_stub.h"
static int base_need_blas(base_ctx *, kbv_err *) { return 0; }
/* cuBLAS's types and the two products base_gemm_bf16 calls, column-major
 * as cuBLAS defines them */
typedef void *cublasHandle_t;
enum cublasStatus_t { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7 };
enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum cudaDataType { CUDA_R_32F = 0, CUDA_R_16BF = 14 };
enum cublasComputeType_t { CUBLAS_COMPUTE_32F = 68 };
enum cublasGemmAlgo_t { CUBLAS_GEMM_DEFAULT = -1 };
static const char *cublasGetStatusString(cublasStatus_t) { return "emulated cuBLAS: bad arguments"; }
static float ldt(const void *p, cudaDataType t, long long i)
{
    return t == CUDA_R_16BF ? __bfloat162float(((const __nv_bfloat16 *)p)[i]) : ((const float *)p)[i];
}
static void stt(void *p, cudaDataType t, long long i, float v)
{
    if (t == CUDA_R_16BF) ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
    else ((float *)p)[i] = v;
}
static cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb,
                                                    int64_t m, int64_t n, int64_t k, const void *alpha, const void *A,
                                                    cudaDataType at, int64_t lda, long long sa, const void *B,
                                                    cudaDataType bt, int64_t ldb, long long sb, const void *beta,
                                                    void *C, cudaDataType ct, int64_t ldc, long long sc, int64_t batch,
                                                    cublasComputeType_t comp, cublasGemmAlgo_t)
{
    if (comp != CUBLAS_COMPUTE_32F || lda < (ta ? k : m) || ldb < (tb ? n : k) || ldc < m) return CUBLAS_STATUS_INVALID_VALUE;
    float al = *(const float *)alpha, be = *(const float *)beta;
    for (int64_t q = 0; q < batch; q++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float acc = 0.0f;
                for (int64_t l = 0; l < k; l++)
                    acc += ldt(A, at, q * sa + (ta ? l + i * lda : i + l * lda)) *
                           ldt(B, bt, q * sb + (tb ? j + l * ldb : l + j * ldb));
                long long c = q * sc + i + j * ldc;
                stt(C, ct, c, al * acc + (be != 0.0f ? be * ldt(C, ct, c) : 0.0f));
            }
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t cublasGemmEx_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                      int64_t n, int64_t k, const void *alpha, const void *A, cudaDataType at,
                                      int64_t lda, const void *B, cudaDataType bt, int64_t ldb, const void *beta,
                                      void *C, cudaDataType ct, int64_t ldc, cublasComputeType_t comp,
                                      cublasGemmAlgo_t algo)
{
    return cublasGemmStridedBatchedEx_64(h, ta, tb, m, n, k, alpha, A, at, lda, 0, B, bt, ldb, 0, beta, C, ct, ldc, 0, 1,
                                         comp, algo);
}
/* the handle's stream and workspace: nothing to set here */
static int blas_on_stream(base_ctx *, cudaStream_t, kbv_err *) { return 0; }
'''

HARNESS = r'''
#include "harness_io.h"

int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    const long long Bn = %(B)d, N = %(N)d, D = %(D)d;
    const int K = %(K)d, G = %(G)d, C = K + G;
    model_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.kind = MODEL_NETVLAD;
    sp.input = (int)D;
    sp.clusters = K;
    sp.ghost = G;
    model_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.B = Bn;
    pl.T = N;
    const long long counts[4] = { D * C, D * K, C, C };   /* clusters, clusters2, bn weight, bn bias */
    long long np_ = 0;
    for (int i = 0; i < 4; i++) {
        pl.part[i].offset = np_;
        pl.part[i].count = counts[i];
        np_ += counts[i];
    }
    pl.n_parts = 4;
    pl.n_param_floats = np_;
    long long nx = Bn * N * D, ny = Bn * D * K;
    std::vector<float> x = read_f(argv[1], nx), P = read_f(argv[2], np_), y((size_t)ny);
    std::vector<__nv_bfloat16> x16 = to_bf16(x), P16 = to_bf16(P), y16((size_t)ny);
    const int64_t xs[] = { Bn, N, D }, ys[] = { Bn, D * K };
    static emu_call h;
    emu_call_init(&h, "L3_emu_vlad", 0, 2, xs, 3, np_, ys, 2);
    vlad_state *s = NULL;
    if (vlad_create(&h.b, &sp, &pl, &s, &h.e)) { fprintf(stderr, "create: %%s\n", h.e.msg); return 4; }
    emu_call_data(&h, x.data(), P.data(), y.data());
    if (vlad_run(&h.b, BASE_FP32, s, &h.c, &h.e)) { fprintf(stderr, "run: %%s\n", h.e.msg); return 5; }
    write_f(argv[3], y.data(), ny);
    emu_call_data(&h, x16.data(), P16.data(), y16.data());
    if (vlad_run_bf16(&h.b, s, &h.c, &h.e)) { fprintf(stderr, "run_bf16: %%s\n", h.e.msg); return 6; }
    write_bf16((std::string(argv[3]) + ".bf16").c_str(), y16);
    vlad_destroy(s);
    return 0;
}
'''


def harness(cfg):
    header = source("netvlad.h").replace('extern "C" {\n#include "l3model.h"\n}\n', "")
    # gemm.cu's base_gemm_bf16 as it is, on the emulated cuBLAS above
    gemm = definition(source("gemm.cu"), "int base_gemm_bf16(", "gemm.cu")
    text = header + "\n" + gemm + "\n" + source("netvlad.cu")
    body = "\n".join(l for l in text.split("\n") if not l.startswith("#include"))
    return '#include "kbv.h"\n#include <string>\n' + PRELUDE + body + HARNESS % cfg


def reference(cfg, x, P):
    """KernelBench's NetVLAD forward in float64 (training-mode batch norm)."""
    B, N, D, K, G = cfg["B"], cfg["N"], cfg["D"], cfg["K"], cfg["G"]
    C = K + G
    x = x.astype(np.float64).reshape(B * N, D)
    P = P.astype(np.float64)
    o = 0
    cl = P[o:o + D * C].reshape(D, C); o += D * C
    c2 = P[o:o + D * K].reshape(D, K); o += D * K
    g = P[o:o + C]; o += C
    bb = P[o:o + C]
    a = x @ cl
    a = (a - a.mean(0)) / np.sqrt(a.var(0) + 1e-5) * g + bb
    a = np.exp(a - a.max(1, keepdims=True))
    a = (a / a.sum(1, keepdims=True))[:, :K].reshape(B, N, K)
    vlad = np.einsum("bnk,bnd->bdk", a, x.reshape(B, N, D)) - a.sum(1)[:, None, :] * c2[None]
    vlad = vlad / np.maximum(np.sqrt((vlad ** 2).sum(1, keepdims=True)), 1e-12)
    vlad = vlad.reshape(B, D * K)
    return vlad / np.maximum(np.sqrt((vlad ** 2).sum(1, keepdims=True)), 1e-12)


CASES = {
    "ghost": dict(B=3, N=5, D=8, K=4, G=2),
    "no_ghost": dict(B=2, N=7, D=6, K=8, G=0),
}


def main():
    os.makedirs(W, exist_ok=True)
    rng = np.random.default_rng(11)
    failed = 0
    for name, cfg in CASES.items():
        path = os.path.join(W, name + ".cu")
        open(path, "w").write(harness(cfg))
        exe, log = emu_build(path, CACHE)
        if exe is None:
            print("ERR  %-10s the harness does not build:\n%s" % (name, log))
            failed += 1
            continue
        B, N, D, K, G = cfg["B"], cfg["N"], cfg["D"], cfg["K"], cfg["G"]
        total = D * (K + G) + D * K + 2 * (K + G)
        x = bf16_round(rng.uniform(-1.0, 1.0, size=(B, N, D)).astype(np.float32))
        P = bf16_round(rng.uniform(-0.5, 0.5, size=total).astype(np.float32))
        P[D * (K + G) + D * K:D * (K + G) + D * K + K + G] += 1.0   # batch-norm weights around 1, as initialised
        P = bf16_round(P)
        y32, y16, why = run_xp(exe, W, x, P)
        if y32 is None:
            print("ERR  %-10s %s" % (name, why))
            failed += 1
            continue
        ref = reference(cfg, x, P)
        y32, y16 = y32.reshape(ref.shape), y16.reshape(ref.shape)
        err32 = np.abs(y32 - ref)
        bad32 = int((err32 > 1e-4 + 1e-4 * np.abs(ref)).sum())
        room16 = 2 * (1e-2 * min(1.0, float(np.abs(ref).max())) + 1e-2 * np.abs(ref))
        err16 = np.abs(y16 - ref)
        bad16 = int((err16 > room16).sum())
        ok = bad32 == 0 and bad16 == 0 and np.isfinite(y16).all()
        failed += not ok
        print("%s %-10s fp32 max err %.3g (%d beyond), bf16 max err %.3g (%d beyond)" %
              ("ok  " if ok else "FAIL", name, err32.max(), bad32, err16.max(), bad16))
    print("vlad: %d models, %d failed" % (len(CASES), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
