"""test_chain_ew.py - the level-2 chains' elementwise passes and norm
statistics (collect/baselines/problems/chain_ew.h, chain.cu, chain_bf16.cu)
on the CPU.

The kernels are taken from the sources as they are (no copy kept here) and
run under the emulator with a stub of what they use from base_impl.h.  Each
vectorised or flat pass is compared with chain_ew.h's scalar apply() on
every element, its row and column found by division: the flat bfloat16
pass (eight values a load across row ends, its rows and channels stepped
instead of divided), the row-wise bfloat16 pass, the pass from bfloat16 to
float and back, on maps whose rows are no multiple of eight, shorter than
eight, per channel (S > 1) or per feature (S = 1), with per-channel,
whole-tensor and remembered-value steps; the group statistics from
bfloat16 with a bias folded in are compared with a sum in double.  The
passes must agree bit for bit: they run the same float operations.

usage: python3 tests/emu/test_chain_ew.py   (g++; prints one line per case)
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srcparts import base_device_helpers, definition  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PROB = os.path.join(ROOT, "collect", "baselines", "problems")
CACHE = os.environ.get("KBV_EMU_CACHE", os.path.join(os.environ.get("TMPDIR", "/tmp"), "kbv-emu"))

PRELUDE = r'''
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern "C" {
#include "chain.h"
}
#define EMU_GRID_CAP 3
#include "base_stub.h"
struct conv_runner;
'''

HARNESS = r'''
static __nv_bfloat16 bf(float v) { return __float2bfloat16_rn(v); }
static float fl(__nv_bfloat16 h) { return __bfloat162float(h); }
static unsigned long long rng = 88172645463325252ull;
static float rnd(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (float)((rng >> 11) % 20001) / 5000.0f - 2.0f;
}

static int failures = 0;

/* One case: rows x L values (C channels, S > 1: row = plane), the steps
 * of list `kind` (0: per-channel add, multiply, clamp, tanh; 1: bias,
 * remember, whole-tensor add, sigmoid, add remembered; 2: bias only), the
 * parameters bfloat16 (pbf16) or float, x offset by `shift` values. */
static void run_case(const char *name, long long rows, long long L, long long C, long long S, int kind, int pbf16,
                     int shift)
{
    long long n = rows * L;
    __nv_bfloat16 *x = (__nv_bfloat16 *)calloc((size_t)(n + 16), 2);
    __nv_bfloat16 *y = (__nv_bfloat16 *)calloc((size_t)(n + 16), 2);
    float *yf = (float *)calloc((size_t)(n + 16), 4);
    __nv_bfloat16 *y2 = (__nv_bfloat16 *)calloc((size_t)(n + 16), 2);
    float pf[3][4096];
    __nv_bfloat16 pb[3][4096];
    static float tf[1 << 16];
    static __nv_bfloat16 tb[1 << 16];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 4096; i++) { pb[k][i] = bf(rnd()); pf[k][i] = fl(pb[k][i]); }
    for (long long i = 0; i < n; i++) { tb[i] = bf(rnd()); tf[i] = fl(tb[i]); }
    for (long long i = 0; i < n + 16; i++) x[i] = bf(rnd());
    __nv_bfloat16 *xs = x + shift, *ys = y + shift, *y2s = y2 + shift;
    ew_args A;
    memset(&A, 0, sizeof A);
    A.C = C; A.S = S; A.rows = rows; A.L = L; A.pbf16 = pbf16;
    const void *P0 = pbf16 ? (const void *)pb[0] : (const void *)pf[0];
    const void *P1 = pbf16 ? (const void *)pb[1] : (const void *)pf[1];
    const void *T = pbf16 ? (const void *)tb : (const void *)tf;
    if (kind == 0) {
        A.n_ops = 4;
        A.kind[0] = EW_ADD_P; A.p[0] = P0; A.p_scalar[0] = 0;
        A.kind[1] = EW_MUL_C; A.a[1] = 1.5f;
        A.kind[2] = EW_CLAMP; A.a[2] = -1.0f; A.b[2] = 1.25f;
        A.kind[3] = EW_TANH;
    } else if (kind == 1) {
        A.bias = P1;
        A.n_ops = 4;
        A.kind[0] = EW_SAVE;
        A.kind[1] = EW_ADD_T; A.p[1] = T; A.p_scalar[1] = 2;
        A.kind[2] = EW_SIGMOID;
        A.kind[3] = EW_ADD_SAVED;
    } else {
        A.bias = P1;
    }
    base_ctx b;
    memset(&b, 0, sizeof b);
    b.sm_count = 4;
    /* bf16 to bf16 (chain_launch_ew_bf16: flat or row-wise) */
    chain_launch_ew_bf16(&b, xs, ys, A, 0);
    /* bf16 to float, then float to bf16 with no steps (chain.cu's pass) */
    launch_ew(&b, (const __nv_bfloat16 *)xs, yf, A, 0);
    ew_args none;
    memset(&none, 0, sizeof none);
    none.C = C; none.S = S; none.rows = rows; none.L = L;
    launch_ew(&b, (const float *)yf, y2s, none, 0);
    long long bad16 = 0, badf = 0, first = -1;
    for (long long i = 0; i < n; i++) {
        long long row = i / L, j = i - row * L;
        float want = apply(A, fl(xs[i]), row, j);
        if (__bfloat16_as_ushort(ys[i]) != __bfloat16_as_ushort(bf(want))) { bad16++; if (first < 0) first = i; }
        if (__float_as_uint(yf[i]) != __float_as_uint(want) || __bfloat16_as_ushort(y2s[i]) != __bfloat16_as_ushort(bf(want)))
            badf++;
    }
    /* nothing written past the end */
    for (long long i = n; i < n + 16 - shift; i++)
        if (__bfloat16_as_ushort(ys[i]) != 0) { bad16++; if (first < 0) first = i; }
    if (bad16 || badf) {
        failures++;
        printf("FAIL %-34s rows %lld L %lld C %lld S %lld: %lld bf16 and %lld float values differ from apply() (first at %lld)\n",
               name, rows, L, C, S, bad16, badf, first);
    } else {
        printf("ok   %-34s rows %lld L %lld C %lld S %lld\n", name, rows, L, C, S);
    }
    free(x); free(y); free(yf); free(y2);
}

/* The group statistics of [N, C] from bfloat16 with each feature's bias
 * folded in, against a sum in double. */
static void stats_case(long long N, long long C, int G)
{
    long long n = N * C, len = C / G;
    __nv_bfloat16 *x = (__nv_bfloat16 *)malloc((size_t)n * 2);
    float *bias = (float *)malloc((size_t)C * 4);
    float2 *st = (float2 *)malloc((size_t)(N * G) * sizeof(float2));
    for (long long i = 0; i < n; i++) x[i] = bf(rnd());
    for (long long c = 0; c < C; c++) bias[c] = rnd();
    long long groups = N * G;
    warp_group_stats<<<(unsigned)((groups * 32 + 255) / 256), 256>>>((const __nv_bfloat16 *)x, groups, len, 1e-5, st,
                                                                     (const float *)bias, G);
    int bad = 0;
    for (long long g = 0; g < groups; g++) {
        double s = 0, ss = 0;
        for (long long i = 0; i < len; i++) {
            double v = (double)fl(x[g * len + i]) + (double)bias[(g % G) * len + i];
            s += v; ss += v * v;
        }
        double mean = s / len, var = ss / len - mean * mean;
        double rstd = 1.0 / sqrt(var + 1e-5);
        if (fabs(st[g].x - mean) > 1e-5 * (1 + fabs(mean)) || fabs(st[g].y - rstd) > 1e-4 * rstd) bad++;
    }
    if (bad) { failures++; printf("FAIL %-34s N %lld C %lld G %d: %d groups differ\n", "group stats, bf16, bias folded", N, C, G, bad); }
    else printf("ok   %-34s N %lld C %lld G %d\n", "group stats, bf16, bias folded", N, C, G);
    free(x); free(bias); free(st);
}

int main(void)
{
    for (int pb = 0; pb < 2; pb++) {
        const char *t = pb ? "bf16 parameters" : "float parameters";
        char nm[64];
        snprintf(nm, sizeof nm, "map, flat, steps (%s)", t);
        run_case(nm, 3 * 5, 13, 5, 13, 0, pb, 0);
        snprintf(nm, sizeof nm, "map rows < 8, flat (%s)", t);
        run_case(nm, 2 * 7, 3, 7, 3, 1, pb, 0);
        snprintf(nm, sizeof nm, "features, flat (%s)", t);
        run_case(nm, 9, 12, 12, 1, 1, pb, 0);
        snprintf(nm, sizeof nm, "features, rows of 16 (%s)", t);
        run_case(nm, 5, 16, 16, 1, 0, pb, 0);
        snprintf(nm, sizeof nm, "map, rows of 24 (%s)", t);
        run_case(nm, 2 * 3, 24, 3, 24, 1, pb, 0);
        snprintf(nm, sizeof nm, "map, unaligned, one at a time (%s)", t);
        run_case(nm, 4 * 3, 11, 3, 11, 0, pb, 1);
    }
    run_case("bias only, map, flat", 2 * 6, 9, 6, 9, 2, 0, 0);
    run_case("bias only, long map", 2 * 4, 1001, 4, 1001, 2, 1, 0);
    stats_case(3, 32, 4);
    stats_case(2, 96, 3);
    printf("chain_ew: %d failed\n", failures);
    return failures ? 1 : 0;
}
'''


def source():
    ew_h = open(os.path.join(PROB, "chain_ew.h")).read()
    chain = open(os.path.join(PROB, "chain.cu")).read()
    bf16 = open(os.path.join(PROB, "chain_bf16.cu")).read()
    # chain_ew.h without its includes and its C linkage block
    ew_h = re.sub(r'#include [<"][^>"]+[>"]\n', "", ew_h)
    ew_h = ew_h.replace('extern "C" {\n}\n', "")
    parts = [PRELUDE, base_device_helpers(), ew_h]
    # chain.cu's loads, stores, the pass and the group statistics
    for start in ("template <class TI, class TO>\n__global__ void __launch_bounds__(256) ew_kernel(",
                  "__device__ __forceinline__ float2 mean_rstd(",
                  "template <typename T>\n__global__ void warp_group_stats(",
                  "template <class TI, class TO>\nvoid launch_ew("):
        parts.append(definition(chain, start, "chain.cu"))
    one_liners = [l for l in chain.split("\n") if l.startswith("__device__ __forceinline__ void st1(")
                  or l.startswith("__device__ __forceinline__ float row_value(")
                  or l.startswith("__device__ __forceinline__ float4 ld4(")
                  or l.startswith("__device__ __forceinline__ void st4(")]
    parts.insert(3, "\n".join(one_liners) + "\n")
    # chain_bf16.cu's passes, from the row-wise kernel to the launcher
    i = bf16.find("__global__ void __launch_bounds__(256) ew_kernel_bf16(")
    j = bf16.find("/* bf16, a single linear layer")
    if i < 0 or j < 0:
        raise SystemExit("test_chain_ew: chain_bf16.cu's passes not found")
    parts.append("namespace {\n" + bf16[i:j] + "}\n")
    return '#include "kbv.h"\n' + "\n".join(parts) + HARNESS


def main():
    os.makedirs(CACHE, exist_ok=True)
    src = os.path.join(CACHE, "chain_ew.cu")
    open(src, "w").write(source())
    emu_o = os.path.join(CACHE, "emu1.o")
    if not os.path.exists(emu_o):
        subprocess.run(["g++", "-std=c++17", "-O1", "-DEMU_CLUSTER=1", "-I" + HERE, "-I" + os.path.join(ROOT, "include"),
                        "-c", os.path.join(HERE, "emu.cpp"), "-o", emu_o], check=True)
    cpp, exe = src + ".cpp", src + ".exe"
    subprocess.run([sys.executable, os.path.join(HERE, "xform.py"), src, cpp], check=True)
    inc = ["-I" + os.path.join(ROOT, d) for d in ("include", "common", "collect/suite", "collect/suite/problems")]
    r = subprocess.run(["g++", "-std=c++20", "-O1", "-w", "-I" + HERE] + inc + ["-o", exe, cpp, emu_o, "-lm"],
                       capture_output=True, text=True)
    if r.returncode:
        print(r.stderr[-3000:])
        print("chain_ew: 1 failed (the harness does not build)")
        return 1
    return subprocess.run([exe]).returncode


if __name__ == "__main__":
    sys.exit(main())
