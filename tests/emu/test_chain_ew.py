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

A second program runs chain.cu's chain_run_rest itself (steps 2 to 4 of a
chain: the first pass, the middle stage, the last pass) on hand-made
chains of every middle-stage path that the fp32 and bf16 baselines take
now: a group norm with its bias folded into the statistics (a linear
layer's features and a map's planes), one after a step, a batch norm
after a scale, a softmax after GELU, a map's post stages (chain_post*.cu:
a max pool and a channel sum, a channel softmax, a softmax over each
plane's positions with a step of its own, which as the last stage writes
the bfloat16 output itself) whose first stage reads the bfloat16 output
through the steps; a map's group norm whose post stage (each sample's
mean, or each plane's softmax unless a tanh follows the norm) reads the
norm's input through the last pass, never written; a linear chain's
batch norm and scale whose post stage (a softmax or minimum over the
features) reads the same way, in bf16 from the bfloat16 product output;
a linear output viewed as one map whose pooling reads the bfloat16
product output itself; x + original_x after a mean over features, the
bf16 input x read as it is and the bf16 output written by that stage; in fp32 from the float producer
output, in bf16 from the bfloat16 output with the bias added by the
product (kept in bfloat16 through the statistics, or the bf16 softmax),
against a reference in double (bf16: rounded where the baseline rounds).

usage: python3 tests/emu/test_chain_ew.py   (g++; prints one line per case)
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srcparts import base_device_helpers, definition, emu_build  # noqa: E402

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
 * remember, whole-tensor add, sigmoid, add remembered; 2: bias only; 3
 * to 5: a batch norm, a group norm of pairs or of halves, with gamma and
 * beta, then whole-tensor, per-channel and scalar parameters), the
 * parameters bfloat16 (pbf16) or float, x offset by `shift` values. */
static void run_case(const char *name, long long rows, long long L, long long C, long long S, int kind, int pbf16,
                     int shift)
{
    long long n = rows * L;
    __nv_bfloat16 *x = (__nv_bfloat16 *)calloc((size_t)(n + 16), 2);
    __nv_bfloat16 *y = (__nv_bfloat16 *)calloc((size_t)(n + 16), 2);
    float *yf = (float *)calloc((size_t)(n + 16), 4);
    __nv_bfloat16 *y2 = (__nv_bfloat16 *)calloc((size_t)(n + 16), 2);
    /* aligned as cudaMalloc's buffers are: the row-wise passes load
     * parameters eight (or four) at a time */
    alignas(16) float pf[3][4096];
    alignas(16) __nv_bfloat16 pb[3][4096];
    alignas(16) static float tf[1 << 16];
    alignas(16) static __nv_bfloat16 tb[1 << 16];
    static float2 st[4096];
    for (int i = 0; i < 4096; i++) st[i] = make_float2(rnd() * 0.5f, 0.5f + 0.25f * (rnd() + 2.0f));
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
    } else if (kind == 3 || kind == 4 || kind == 5) {
        /* a batch norm (3) or a group norm of C / 2 groups (4) or of two
         * (5) with gamma and beta, then a whole-tensor product, a
         * per-channel product and a scalar addition */
        A.norm = kind == 3 ? MID_BATCHNORM : MID_GROUPNORM;
        A.G = kind == 5 ? 2 : (int)(C / 2);
        A.stat = st;
        A.gamma = P0;
        A.beta = P1;
        const void *P2 = pbf16 ? (const void *)pb[2] : (const void *)pf[2];
        A.n_ops = 3;
        A.kind[0] = EW_MUL_T; A.p[0] = T; A.p_scalar[0] = 2;
        A.kind[1] = EW_MUL_P; A.p[1] = P2; A.p_scalar[1] = 0;
        A.kind[2] = EW_ADD_P; A.p[2] = P2; A.p_scalar[2] = 1;
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
    /* each case with float and with bfloat16 parameters */
    static const struct {
        const char *label;
        long long rows, L, C, S;
        int kind, shift;
    } cases[] = {
        { "map, flat, steps", 3 * 5, 13, 5, 13, 0, 0 },
        { "map rows < 8, flat", 2 * 7, 3, 7, 3, 1, 0 },
        { "features, flat", 9, 12, 12, 1, 1, 0 },
        { "features, rows of 16", 5, 16, 16, 1, 0, 0 },
        { "map, rows of 24", 2 * 3, 24, 3, 24, 1, 0 },
        { "map, unaligned, one at a time", 4 * 3, 11, 3, 11, 0, 1 },
        { "features, batch norm", 6, 32, 32, 1, 3, 0 },
        { "features, group norm", 6, 24, 24, 1, 4, 0 },
        { "features, two groups of 12", 6, 24, 24, 1, 5, 0 },
        { "map, batch norm", 3 * 4, 16, 4, 16, 3, 0 },
        { "map, group norm", 3 * 4, 40, 4, 40, 4, 0 },
        { "map, group norm, flat", 3 * 4, 13, 4, 13, 4, 0 },
    };
    for (int pb = 0; pb < 2; pb++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            char nm[64];
            snprintf(nm, sizeof nm, "%s (%s)", cases[k].label, pb ? "bf16 parameters" : "float parameters");
            run_case(nm, cases[k].rows, cases[k].L, cases[k].C, cases[k].S, cases[k].kind, pb, cases[k].shift);
        }
    run_case("bias only, map, flat", 2 * 6, 9, 6, 9, 2, 0, 0);
    run_case("bias only, long map", 2 * 4, 1001, 4, 1001, 2, 1, 0);
    stats_case(3, 32, 4);
    stats_case(2, 96, 3);
    stats_case(2, 36, 3);   /* groups of 12: the two-byte loads */
    printf("chain_ew kernels: %d failed\n", failures);
    return failures ? 1 : 0;
}
'''


REST_PRELUDE = r'''
/* what chain_run_rest calls beyond the kernels: the row softmax
 * (base_stub.h's loops, float and bfloat16); the post
 * stages are chain_post.cu's, with chain.c's shape functions */
/* chain_post_create's (not called here: the harness makes its chain_post) */
extern "C" int chain_shapes(const suite_problem *, const chain_spec *, chain_dims *, chain_dims *, chain_dims *,
                            long long *)
{
    return -1;
}
'''

REST_HARNESS = r'''
static double gelu_d(double v) { return 0.5 * v * (1.0 + erf(v / sqrt(2.0))); }
static float r16(double v) { return __bfloat162float(__float2bfloat16_rn((float)v)); }
static unsigned long long rs = 0x9E3779B97F4A7C15ull;
static float rn(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (float)((rs >> 11) % 20001) / 10000.0f - 1.0f; }

/* The reference of the chains below, in double: the producer's output
 * (with its bias) v, the first steps, the middle stage, the last steps;
 * with bf16, rounded where the baseline rounds (the first steps' pass, the
 * output). */
static void reference(const chain_spec &sp, long long N, long long C, long long S, const float *pre,
                      const float *const *par, int bf16, std::vector<double> &out)
{
    long long n = N * C * S;
    std::vector<double> v((size_t)n);
    for (long long i = 0; i < n; i++) {
        long long c = (i / S) % C;
        double x = (double)pre[i] + (sp.has_bias ? par[2][c] : 0.0);
        if (bf16) x = r16(x);   /* the product's bfloat16 output, its bias added by the epilogue */
        for (int k = 0; k < CHAIN_MAX_EW && sp.ew1[k].kind != EW_END; k++) {
            const chain_ew &o = sp.ew1[k];
            if (o.kind == EW_MUL_P) x *= par[o.p][c];
            else if (o.kind == EW_GELU) x = gelu_d(x);
            else if (o.kind == EW_RELU) x = x > 0 ? x : 0;
        }
        if (bf16 && sp.ew1[0].kind != EW_END) x = r16(x);   /* the first steps' bfloat16 pass */
        v[(size_t)i] = x;
    }
    out.assign((size_t)n, 0.0);
    if (sp.mid == MID_SOFTMAX_C) {
        for (long long r = 0; r < N; r++) {
            double m = -INFINITY, s = 0;
            for (long long j = 0; j < C; j++) m = fmax(m, v[(size_t)(r * C + j)]);
            for (long long j = 0; j < C; j++) s += exp(v[(size_t)(r * C + j)] - m);
            for (long long j = 0; j < C; j++) out[(size_t)(r * C + j)] = exp(v[(size_t)(r * C + j)] - m) / s;
        }
    } else {
        /* a group (or batch) norm: the statistic group of element i */
        long long G = sp.mid == MID_GROUPNORM ? sp.groups : 0;
        long long groups = G ? N * G : C;
        std::vector<double> sum((size_t)groups, 0), sq((size_t)groups, 0), cnt((size_t)groups, 0);
        auto grp = [&](long long i) { long long c = (i / S) % C; return G ? (i / (C * S)) * G + c / (C / G) : c; };
        for (long long i = 0; i < n; i++) {
            long long g = grp(i);
            sum[(size_t)g] += v[(size_t)i]; sq[(size_t)g] += v[(size_t)i] * v[(size_t)i]; cnt[(size_t)g] += 1;
        }
        for (long long i = 0; i < n; i++) {
            long long g = grp(i), c = (i / S) % C;
            double mean = sum[(size_t)g] / cnt[(size_t)g], var = sq[(size_t)g] / cnt[(size_t)g] - mean * mean;
            double x = (v[(size_t)i] - mean) / sqrt(var + sp.eps);
            if (sp.gamma >= 0) x = x * par[sp.gamma][c] + par[sp.beta][c];
            for (int k = 0; k < CHAIN_MAX_EW && sp.ew2[k].kind != EW_END; k++)
                if (sp.ew2[k].kind == EW_CLAMP) x = fmin(fmax(x, sp.ew2[k].a), sp.ew2[k].b);
            out[(size_t)i] = x;
        }
    }
    if (bf16)
        for (long long i = 0; i < n; i++) out[(size_t)i] = r16(out[(size_t)i]);
}

static int failures = 0;

/* Judges n float outputs against ref (1e-4 + 1e-4 |ref|) and prints the
 * case's line. */
static void judge32(const char *name, const char *what, int rc, const float *out, const std::vector<double> &ref,
                    long long n)
{
    long long bad = 0;
    double worst = 0;
    for (long long i = 0; i < n; i++) {
        double d = fabs(out[i] - ref[(size_t)i]);
        worst = fmax(worst, d);
        if (d > 1e-4 + 1e-4 * fabs(ref[(size_t)i])) bad++;
    }
    if (rc || bad) {
        failures++;
        printf("FAIL %-40s %s: rc %d, %lld of %lld beyond (max %.3g)\n", name, what, rc, bad, n, worst);
    } else {
        printf("ok   %-40s %s max err %.2g\n", name, what, worst);
    }
}

/* A bf16 output that the stage wrote itself, against the reference in
 * double: within its own rounding (2^-9 relative) and the float sums'
 * error, 4e-3 relative plus floor (for values near zero). */
static void judge16(const char *name, int rc, const __nv_bfloat16 *out, const std::vector<double> &ref, long long n,
                    double floor)
{
    long long bad = 0;
    double worst = 0;
    for (long long i = 0; i < n; i++) {
        double d = fabs(__bfloat162float(out[i]) - ref[(size_t)i]);
        if (!(d <= worst)) worst = d;
        if (!(d <= 4e-3 * fabs(ref[(size_t)i]) + floor)) bad++;
    }
    if (rc || bad) {
        failures++;
        printf("FAIL %-40s bf16 output: rc %d, %lld of %lld beyond (max %.3g)\n", name, rc, bad, n, worst);
    } else {
        printf("ok   %-40s bf16 output max err %.2g\n", name, worst);
    }
}

static void rest_case(const char *name, const chain_spec &sp, long long N, long long C, long long S)
{
    long long n = N * C * S, groups = sp.mid == MID_GROUPNORM ? N * sp.groups : C;
    std::vector<float> pre((size_t)n), work((size_t)n), out((size_t)n), pars[6];
    for (auto &v : pre) v = rn() * 2.0f;
    const float *par[6];
    for (int k = 0; k < 6; k++) {
        pars[k].resize((size_t)C);
        for (auto &v : pars[k]) v = r16(rn());
        par[k] = pars[k].data();
    }
    kbv_tensor in[6], o[1];
    memset(in, 0, sizeof in);
    memset(o, 0, sizeof o);
    for (int k = 0; k < 6; k++) { in[k].data = (void *)par[k]; in[k].ndim = 1; in[k].shape[0] = C; }
    o[0].data = out.data();
    o[0].ndim = 3; o[0].shape[0] = N; o[0].shape[1] = C; o[0].shape[2] = S;
    kbv_call c;
    memset(&c, 0, sizeof c);
    c.inputs = in; c.n_inputs = 6; c.outputs = o; c.n_outputs = 1;
    chain_state cs;
    memset(&cs, 0, sizeof cs);
    cs.spec = &sp; cs.N = N; cs.C = C; cs.S = S;
    std::vector<double2> part((size_t)(64 * C + N * C));
    std::vector<float2> stat((size_t)groups);
    cs.part = part.data(); cs.stat = stat.data();
    base_ctx b;
    memset(&b, 0, sizeof b);
    b.sm_count = 4;
    b.state = &cs;
    kbv_err e;
    memset(&e, 0, sizeof e);
    std::vector<double> ref;
    /* fp32: the float producer output without its bias */
    work = pre;
    int rc = chain_run_rest(&b, &c, work.data(), &e, NULL, NULL, 0, NULL);
    reference(sp, N, C, S, pre.data(), par, 0, ref);
    judge32(name, "fp32", rc, out.data(), ref, n);
    /* bf16: the bfloat16 product output with its bias (the epilogue's) */
    std::vector<__nv_bfloat16> p16((size_t)n), o16((size_t)n);
    for (long long i = 0; i < n; i++)
        p16[(size_t)i] = __float2bfloat16_rn(pre[(size_t)i] + (sp.has_bias ? par[2][(i / S) % C] : 0.0f));
    int wrote16 = 0;
    rc = chain_run_rest(&b, &c, work.data(), &e, o16.data(), &wrote16, 1, p16.data());
    reference(sp, N, C, S, pre.data(), par, 1, ref);
    long long bad = 0;
    double worst = 0;
    for (long long i = 0; i < n; i++) {
        double d = fabs(__bfloat162float(o16[(size_t)i]) - ref[(size_t)i]);
        worst = fmax(worst, d);
        if (d > 1.6e-2 * fmax(1.0, fabs(ref[(size_t)i]))) bad++;
    }
    if (rc || bad || !wrote16) {
        failures++;
        printf("FAIL %-40s bf16: rc %d, wrote %d, %lld of %lld beyond (max %.3g)\n", name, rc, wrote16, bad, n, worst);
    } else {
        printf("ok   %-40s bf16 max err %.2g\n", name, worst);
    }
    /* bf16 with the parameters as the call's bfloat16 tensors (nothing
     * widened: chain_run_bf16 where the rest stays in bfloat16, a norm or
     * the softmax of features): the same values, so the same output, bit
     * for bit */
    const chain_rest16 how = chain_rest_bf16(&cs, 1);
    if (how != REST16_STATS && how != REST16_SOFTMAX) return;
    std::vector<__nv_bfloat16> p16s[6], o16b((size_t)n);
    kbv_tensor in16[6];
    memcpy(in16, in, sizeof in);
    for (int k = 0; k < 6; k++) {
        p16s[k].resize((size_t)C);
        for (long long i = 0; i < C; i++) p16s[k][(size_t)i] = __float2bfloat16_rn(par[k][i]);
        in16[k].data = p16s[k].data();
        in16[k].dtype = KBV_BF16;
    }
    kbv_call c16 = c;
    c16.inputs = in16;
    /* the first run's steps went over p16 in place: make it again */
    for (long long i = 0; i < n; i++)
        p16[(size_t)i] = __float2bfloat16_rn(pre[(size_t)i] + (sp.has_bias ? par[2][(i / S) % C] : 0.0f));
    int wrote16b = 0;
    rc = chain_run_rest(&b, &c16, NULL, &e, o16b.data(), &wrote16b, 1, p16.data());
    long long differ = 0;
    for (long long i = 0; i < n; i++)
        differ += __bfloat16_as_ushort(o16b[(size_t)i]) != __bfloat16_as_ushort(o16[(size_t)i]);
    if (rc || !wrote16b || differ) {
        failures++;
        printf("FAIL %-40s bf16 parameters: rc %d, wrote %d, %lld values differ from the float parameters' run\n",
               name, rc, wrote16b, differ);
    } else {
        printf("ok   %-40s bf16 parameters: the same output\n", name);
    }
}

/* What chain_run_rest needs around a map's chain [N, C, H, Wd] (H = 0:
 * a linear chain's [N, C]) with post stages, as chain.cu's create makes
 * it: the post stages' two buffers, the chain state (mid: the middle
 * stage's output buffer), the problem and the context.  Fixed in memory
 * once made (pointers into itself). */
struct map_rig {
    std::vector<float> b0, b1;
    chain_post cp;
    chain_state cs;
    suite_problem prob;
    base_ctx b;
    kbv_err e;
    map_rig(const chain_spec *sp, long long N, long long C, long long H, long long Wd, float *mid)
        : b0((size_t)(N * C * (H ? H * Wd : 1))), b1((size_t)(N * C * (H ? H * Wd : 1)))
    {
        memset(&cp, 0, sizeof cp);
        cp.sp = sp;
        cp.buf[0] = b0.data(); cp.buf[1] = b1.data();
        memset(&cs, 0, sizeof cs);
        cs.spec = sp; cs.N = N; cs.C = C; cs.S = H ? H * Wd : 1; cs.post = &cp;
        cs.after_mid.N = N; cs.after_mid.C = C; cs.after_mid.nd = H ? 2 : 0;
        cs.after_mid.d[0] = H; cs.after_mid.d[1] = Wd;
        cs.mid = mid;
        memset(&prob, 0, sizeof prob);
        prob.id = "L2_emu";
        memset(&b, 0, sizeof b);
        b.sm_count = 4; b.state = &cs; b.p = &prob;
        memset(&e, 0, sizeof e);
    }
    map_rig(const map_rig &) = delete;
    map_rig &operator=(const map_rig &) = delete;
};

/* A map's chain with post stages right after its first steps (the bias
 * and a ReLU), as a convolution chain runs them: fp32 from the float
 * output, bf16 with the first post stage reading the bfloat16 output
 * through the steps (chain_post_run16).  The stages: a 2x2 max pool then
 * a sum over channels, or a softmax over channels (the output the float
 * one, which the caller rounds), or a softmax over each plane's
 * positions whose values are then scaled per channel (a stage step),
 * which as the last stage writes the bfloat16 output itself. */
enum { POST_POOL_SUM, POST_SOFTMAX_C, POST_SOFTMAX_S };

static void post_case(const char *name, int kind, long long N, long long C, long long H, long long Wd)
{
    chain_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.producer = CHAIN_CONV;
    sp.has_bias = 1;
    sp.ew1[0] = { EW_RELU, 0, 0, -1 };
    sp.gamma = sp.beta = -1;
    if (kind == POST_SOFTMAX_C) {
        sp.post[0].kind = ST_SOFTMAX_C;
    } else if (kind == POST_SOFTMAX_S) {
        sp.post[0].kind = ST_SOFTMAX_S;
        sp.post[0].ew[0] = { EW_MUL_P, 0, 0, 3 };
    } else {
        sp.post[0].kind = ST_MAXPOOL;
        sp.post[0].k = 2;
        sp.post[0].s = 2;
        sp.post[1].kind = ST_SUM_C;
    }
    const int pooled = kind == POST_POOL_SUM;
    long long S = H * Wd, n = N * C * S, OH = pooled ? H / 2 : H, OW = pooled ? Wd / 2 : Wd;
    long long on = pooled ? N * OH * OW : n;
    std::vector<float> pre((size_t)n), work((size_t)n), out((size_t)on), bias((size_t)C), scale((size_t)C);
    for (auto &v : pre) v = rn() * 2.0f;
    for (auto &v : bias) v = r16(rn());
    for (auto &v : scale) v = r16(1.0f + rn());
    kbv_tensor in[4], o[1];
    memset(in, 0, sizeof in);
    memset(o, 0, sizeof o);
    in[2].data = bias.data(); in[2].ndim = 1; in[2].shape[0] = C;
    in[3].data = scale.data(); in[3].ndim = 1; in[3].shape[0] = C;
    o[0].data = out.data();
    kbv_call c;
    memset(&c, 0, sizeof c);
    c.inputs = in; c.n_inputs = 4; c.outputs = o; c.n_outputs = 1;
    map_rig R(&sp, N, C, H, Wd, work.data());
    std::vector<__nv_bfloat16> p16((size_t)n), o16((size_t)on, __float2bfloat16_rn(NAN));
    for (long long i = 0; i < n; i++) p16[(size_t)i] = __float2bfloat16_rn(pre[(size_t)i]);
    if (chain_rest_bf16(&R.cs, 0) != REST16_POST) { failures++; printf("FAIL %-40s not the post path\n", name); return; }
    for (int bf = 0; bf < 2; bf++) {
        /* the reference: v = relu(pre + bias), then the stages, in double */
        std::vector<double> v((size_t)n), ref((size_t)on, 0.0);
        for (long long i = 0; i < n; i++) {
            double x = (bf ? (double)__bfloat162float(p16[(size_t)i]) : (double)pre[(size_t)i]) + bias[(size_t)((i / S) % C)];
            v[(size_t)i] = x > 0 ? x : 0;
        }
        if (kind == POST_SOFTMAX_S) {
            for (long long r = 0; r < N * C; r++) {
                double m = -INFINITY, sum = 0;
                for (long long j = 0; j < S; j++) m = fmax(m, v[(size_t)(r * S + j)]);
                for (long long j = 0; j < S; j++) sum += exp(v[(size_t)(r * S + j)] - m);
                for (long long j = 0; j < S; j++)
                    ref[(size_t)(r * S + j)] = exp(v[(size_t)(r * S + j)] - m) / sum * scale[(size_t)(r % C)];
            }
        }
        for (long long q = 0; q < N && kind != POST_SOFTMAX_S; q++)
            for (long long s2 = 0; s2 < OH * OW; s2++) {
                if (kind == POST_SOFTMAX_C) {
                    double m = -INFINITY, sum = 0;
                    for (long long ch = 0; ch < C; ch++) m = fmax(m, v[(size_t)((q * C + ch) * S + s2)]);
                    for (long long ch = 0; ch < C; ch++) sum += exp(v[(size_t)((q * C + ch) * S + s2)] - m);
                    for (long long ch = 0; ch < C; ch++)
                        ref[(size_t)((q * C + ch) * S + s2)] = exp(v[(size_t)((q * C + ch) * S + s2)] - m) / sum;
                } else {
                    long long oh = s2 / OW, ow = s2 % OW;
                    for (long long ch = 0; ch < C; ch++) {
                        double m = -INFINITY;
                        for (int a = 0; a < 2; a++)
                            for (int c2 = 0; c2 < 2; c2++)
                                m = fmax(m, v[(size_t)((q * C + ch) * S + (2 * oh + a) * Wd + 2 * ow + c2)]);
                        ref[(size_t)(q * OH * OW + s2)] += m;
                    }
                }
            }
        work = pre;
        if (!bf) {
            int rc = chain_run_rest(&R.b, &c, work.data(), &R.e, NULL, NULL, 0, NULL);
            judge32(name, "fp32", rc, out.data(), ref, on);
            continue;
        }
        int wrote16 = 0;
        int rc = chain_run_rest(&R.b, &c, work.data(), &R.e, o16.data(), &wrote16, 0, p16.data());
        /* only a stage over each plane's positions writes the bf16
         * output; the others leave the float one for the caller */
        if (wrote16 != (kind == POST_SOFTMAX_S)) {
            failures++;
            printf("FAIL %-40s bf16: wrote16 %d\n", name, wrote16);
            continue;
        }
        if (!wrote16) {
            judge32(name, "bf16", rc, out.data(), ref, on);
            continue;
        }
        judge16(name, rc, o16.data(), ref, on, 1e-7);
    }
}

/* A map's chain whose middle stage is a group norm (bias before it,
 * gamma and beta after) and whose one post stage reduces each whole
 * sample to its mean: the first post stage reads the norm's input
 * through the last pass (chain_post_run_through), which is never
 * written.  fp32 from the float producer output; bf16 from the bfloat16
 * output, widened with the bias, the mean written into the bfloat16
 * output by the stage itself.  Or the post stage is a softmax over each
 * plane, which reads every value three times: it reads through the norm
 * alone, but not through a tanh after it (tanh_after), whose pass then
 * writes its output for the stage to read (the bf16 output then rounded
 * by the caller from the float one).  Planes of a multiple of eight
 * values take the eight-wide kernel. */
static void norm_post_case(const char *name, int stage, int tanh_after, long long N, long long C, long long G,
                           long long H, long long Wd)
{
    chain_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.producer = CHAIN_CONV;
    sp.has_bias = 1;
    sp.mid = MID_GROUPNORM;
    sp.groups = (int)G;
    sp.eps = 1e-5;
    sp.gamma = 3;
    sp.beta = 4;
    sp.post[0].kind = stage;
    if (tanh_after) sp.ew2[0] = { EW_TANH, 0, 0, -1 };
    const int through = stage == ST_MEAN_ALL || !tanh_after;
    long long S = H * Wd, n = N * C * S, on = stage == ST_MEAN_ALL ? N : n;
    std::vector<float> pre((size_t)n), work((size_t)n), out((size_t)on), pars[3];
    for (auto &v : pre) v = rn() * 2.0f;
    for (int k = 0; k < 3; k++) {
        pars[k].resize((size_t)C);
        for (auto &v : pars[k]) v = r16(k == 1 ? 1.0f + rn() : rn());
    }
    kbv_tensor in[5], o[1];
    memset(in, 0, sizeof in);
    memset(o, 0, sizeof o);
    for (int k = 0; k < 3; k++) { in[2 + k].data = pars[k].data(); in[2 + k].ndim = 1; in[2 + k].shape[0] = C; }
    o[0].data = out.data();
    kbv_call c;
    memset(&c, 0, sizeof c);
    c.inputs = in; c.n_inputs = 5; c.outputs = o; c.n_outputs = 1;
    std::vector<float> mid((size_t)n);
    map_rig R(&sp, N, C, H, Wd, mid.data());
    std::vector<double2> part((size_t)(N * C));
    std::vector<float2> stat((size_t)(N * G));
    R.cs.part = part.data(); R.cs.stat = stat.data();
    std::vector<__nv_bfloat16> p16((size_t)n), o16((size_t)on, __float2bfloat16_rn(NAN));
    for (long long i = 0; i < n; i++) p16[(size_t)i] = __float2bfloat16_rn(pre[(size_t)i]);
    for (int bf = 0; bf < 2; bf++) {
        /* the reference in double: the group statistics of pre + bias,
         * the normalised, scaled and shifted values, then the stage */
        std::vector<double> v((size_t)n), nv((size_t)n), ref((size_t)on, 0.0);
        for (long long i = 0; i < n; i++)
            v[(size_t)i] = (bf ? (double)__bfloat162float(p16[(size_t)i]) : (double)pre[(size_t)i]) +
                           pars[0][(size_t)((i / S) % C)];
        long long len = C / G * S;
        for (long long q = 0; q < N; q++)
            for (long long g = 0; g < G; g++) {
                double sum = 0, sq = 0;
                const double *p = &v[(size_t)((q * G + g) * len)];
                for (long long k = 0; k < len; k++) { sum += p[k]; sq += p[k] * p[k]; }
                double mu = sum / (double)len, var = sq / (double)len - mu * mu, rs = 1.0 / sqrt(var + 1e-5);
                for (long long k = 0; k < len; k++) {
                    long long ch = g * (C / G) + k / S;
                    double y = (p[k] - mu) * rs * pars[1][(size_t)ch] + pars[2][(size_t)ch];
                    nv[(size_t)((q * G + g) * len + k)] = tanh_after ? tanh(y) : y;
                }
            }
        if (stage == ST_MEAN_ALL) {
            for (long long i = 0; i < n; i++) ref[(size_t)(i / (C * S))] += nv[(size_t)i] / (double)(C * S);
        } else {
            for (long long r = 0; r < N * C; r++) {
                double m = -INFINITY, sum = 0;
                for (long long j = 0; j < S; j++) m = fmax(m, nv[(size_t)(r * S + j)]);
                for (long long j = 0; j < S; j++) sum += exp(nv[(size_t)(r * S + j)] - m);
                for (long long j = 0; j < S; j++) ref[(size_t)(r * S + j)] = exp(nv[(size_t)(r * S + j)] - m) / sum;
            }
        }
        for (auto &x : mid) x = NAN;
        work = pre;
        int wrote16 = 0, rc;
        if (bf) rc = chain_run_rest(&R.b, &c, work.data(), &R.e, o16.data(), &wrote16, 0, p16.data());
        else rc = chain_run_rest(&R.b, &c, work.data(), &R.e, NULL, NULL, 0, NULL);
        int touched = 0;
        for (auto x : mid) touched |= !std::isnan(x);
        if (touched == through || (bf && wrote16 != through)) {
            failures++;
            printf("FAIL %-40s %s: the norm's output was %swritten, the bf16 output %sby the stage\n", name,
                   bf ? "bf16" : "fp32", touched ? "" : "not ", wrote16 ? "" : "not ");
            continue;
        }
        if (!wrote16) {
            judge32(name, bf ? "bf16" : "fp32", rc, out.data(), ref, on);
            continue;
        }
        judge16(name, rc, o16.data(), ref, on, 1e-6);
    }
}

/* A linear chain [N, C] whose middle stage is a batch norm (gamma,
 * beta), whose second list scales each feature, and whose one post stage
 * is a softmax over the features or their minimum: the stage reads the
 * norm's input through the last pass, in fp32 from the float product
 * output, in bf16 from the bfloat16 one that the statistics read
 * (chain_post_run16), the result written into the bfloat16 output by the
 * stage itself.  The norm's output buffer is never written. */
static void feature_post_case(const char *name, int stage, long long N, long long C)
{
    chain_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.producer = CHAIN_LINEAR;
    sp.has_bias = 1;
    sp.mid = MID_BATCHNORM;
    sp.eps = 1e-5;
    sp.gamma = 3;
    sp.beta = 4;
    sp.ew2[0] = { EW_MUL_P, 0, 0, 5 };
    sp.post[0].kind = stage;
    const int soft = stage == ST_SOFTMAX_C;
    long long n = N * C, on = soft ? n : N;
    std::vector<float> pre((size_t)n), work((size_t)n), out((size_t)on), mid((size_t)n), pars[6];
    for (auto &v : pre) v = rn() * 2.0f;
    kbv_tensor in[6], o[1];
    memset(in, 0, sizeof in);
    memset(o, 0, sizeof o);
    for (int k = 2; k < 6; k++) {
        pars[k].resize((size_t)C);
        for (auto &v : pars[k]) v = r16(k == 3 || k == 5 ? 1.0f + 0.5f * rn() : rn());
        in[k].data = pars[k].data(); in[k].ndim = 1; in[k].shape[0] = C;
    }
    o[0].data = out.data();
    kbv_call c;
    memset(&c, 0, sizeof c);
    c.inputs = in; c.n_inputs = 6; c.outputs = o; c.n_outputs = 1;
    map_rig R(&sp, N, C, 0, 0, mid.data());
    std::vector<double2> part((size_t)(64 * C + N * C));
    std::vector<float2> stat((size_t)C);
    R.cs.part = part.data(); R.cs.stat = stat.data();
    std::vector<__nv_bfloat16> p16((size_t)n), o16((size_t)on, __float2bfloat16_rn(NAN));
    for (long long i = 0; i < n; i++) p16[(size_t)i] = __float2bfloat16_rn(pre[(size_t)i] + pars[2][(size_t)(i % C)]);
    for (int bf = 0; bf < 2; bf++) {
        /* the reference in double: batch statistics per feature, the
         * normalised values scaled and shifted, times the feature's
         * scale, then the stage over each row */
        std::vector<double> v((size_t)n), ref((size_t)on, 0.0);
        for (long long i = 0; i < n; i++)
            v[(size_t)i] = bf ? (double)__bfloat162float(p16[(size_t)i]) : (double)pre[(size_t)i] + pars[2][(size_t)(i % C)];
        for (long long f = 0; f < C; f++) {
            double sum = 0, sq = 0;
            for (long long q = 0; q < N; q++) { sum += v[(size_t)(q * C + f)]; sq += v[(size_t)(q * C + f)] * v[(size_t)(q * C + f)]; }
            double mu = sum / (double)N, rs = 1.0 / sqrt(sq / (double)N - mu * mu + 1e-5);
            for (long long q = 0; q < N; q++) {
                double &x = v[(size_t)(q * C + f)];
                x = ((x - mu) * rs * pars[3][(size_t)f] + pars[4][(size_t)f]) * pars[5][(size_t)f];
            }
        }
        for (long long q = 0; q < N; q++) {
            const double *r = &v[(size_t)(q * C)];
            if (soft) {
                double m = -INFINITY, sum = 0;
                for (long long f = 0; f < C; f++) m = fmax(m, r[f]);
                for (long long f = 0; f < C; f++) sum += exp(r[f] - m);
                for (long long f = 0; f < C; f++) ref[(size_t)(q * C + f)] = exp(r[f] - m) / sum;
            } else {
                double m = INFINITY;
                for (long long f = 0; f < C; f++) m = fmin(m, r[f]);
                ref[(size_t)q] = m;
            }
        }
        for (auto &x : mid) x = NAN;
        work = pre;
        int wrote16 = 0, rc;
        if (bf) rc = chain_run_rest(&R.b, &c, work.data(), &R.e, o16.data(), &wrote16, 1, p16.data());
        else rc = chain_run_rest(&R.b, &c, work.data(), &R.e, NULL, NULL, 0, NULL);
        int touched = 0;
        for (auto x : mid) touched |= !std::isnan(x);
        if (touched || (bf && !wrote16)) {
            failures++;
            printf("FAIL %-40s %s: the norm's output was %swritten, the bf16 output %sby the stage\n", name,
                   bf ? "bf16" : "fp32", touched ? "" : "not ", wrote16 ? "" : "not ");
            continue;
        }
        if (bf) judge16(name, rc, o16.data(), ref, on, 1e-6);
        else judge32(name, "fp32", rc, out.data(), ref, on);
    }
}

/* A linear output [N, C] viewed as one map (ST_FLAT), average-pooled by
 * four, then its maximum: in bf16 the pooling reads the bfloat16 product
 * output itself (REST16_POST after the view), against a reference in
 * double from those bfloat16 values; in fp32 from the float output. */
static void view_post_case(const char *name, long long N, long long C)
{
    chain_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.producer = CHAIN_LINEAR;
    sp.has_bias = 1;
    sp.gamma = sp.beta = -1;
    sp.post[0].kind = ST_FLAT;
    sp.post[1].kind = ST_AVGPOOL;
    sp.post[1].k = 4;
    sp.post[1].s = 4;
    sp.post[2].kind = ST_MAX_ALL;
    long long n = N * C;
    std::vector<float> pre((size_t)n), work((size_t)n), out((size_t)N), bias((size_t)C);
    for (auto &v : pre) v = rn() * 2.0f;
    for (auto &v : bias) v = r16(rn());
    kbv_tensor in[3], o[1];
    memset(in, 0, sizeof in);
    memset(o, 0, sizeof o);
    in[2].data = bias.data(); in[2].ndim = 1; in[2].shape[0] = C;
    o[0].data = out.data();
    kbv_call c;
    memset(&c, 0, sizeof c);
    c.inputs = in; c.n_inputs = 3; c.outputs = o; c.n_outputs = 1;
    map_rig R(&sp, N, C, 0, 0, work.data());
    if (chain_rest_bf16(&R.cs, 0) != REST16_POST) { failures++; printf("FAIL %-40s not the post path\n", name); return; }
    std::vector<__nv_bfloat16> p16((size_t)n);
    for (long long i = 0; i < n; i++) p16[(size_t)i] = __float2bfloat16_rn(pre[(size_t)i] + bias[(size_t)(i % C)]);
    for (int bf = 0; bf < 2; bf++) {
        std::vector<double> ref((size_t)N);
        for (long long q = 0; q < N; q++) {
            double m = -INFINITY;
            for (long long w = 0; w < C / 4; w++) {
                double a = 0;
                for (int k = 0; k < 4; k++) {
                    long long i = q * C + 4 * w + k;
                    a += bf ? (double)__bfloat162float(p16[(size_t)i]) : (double)pre[(size_t)i] + bias[(size_t)(i % C)];
                }
                m = fmax(m, a / 4);
            }
            ref[(size_t)q] = m;
        }
        work = pre;
        int rc = bf ? chain_run_rest(&R.b, &c, work.data(), &R.e, NULL, NULL, 1, p16.data())
                    : chain_run_rest(&R.b, &c, work.data(), &R.e, NULL, NULL, 0, NULL);
        judge32(name, bf ? "bf16" : "fp32", rc, out.data(), ref, N);
    }
}

/* A linear chain [N, C]: a per-feature subtraction, the mean over the
 * features, GELU, then x + original_x (ST_ADD_X0: the [N] means added to
 * the call's input x [N, F]).  In bf16 the mean reads the bfloat16
 * product output, and the last stage reads x as the call has it,
 * bfloat16 (chain_run_bf16 keeps it: chain_reads_param), writing the
 * bfloat16 output itself. */
static void add_x0_case(const char *name, long long N, long long C, long long F)
{
    chain_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.producer = CHAIN_LINEAR;
    sp.has_bias = 1;
    sp.gamma = sp.beta = -1;
    sp.ew1[0] = { EW_SUB_P, 0, 0, 3 };
    sp.mid = MID_MEAN_C;
    sp.ew2[0] = { EW_GELU, 0, 0, -1 };
    sp.post[0].kind = ST_ADD_X0;
    sp.post[0].gamma = sp.post[0].beta = -1;
    long long n = N * C, on = N * F;
    std::vector<float> pre((size_t)n), work((size_t)n), out((size_t)on), x((size_t)on), bias((size_t)C),
        sub((size_t)C), mid((size_t)N);
    for (auto &v : pre) v = rn() * 2.0f;
    for (auto &v : x) v = r16(rn());
    for (auto &v : bias) v = r16(rn());
    for (auto &v : sub) v = r16(rn());
    std::vector<__nv_bfloat16> x16((size_t)on), p16((size_t)n), o16((size_t)on, __float2bfloat16_rn(NAN));
    for (long long i = 0; i < on; i++) x16[(size_t)i] = __float2bfloat16_rn(x[(size_t)i]);
    for (long long i = 0; i < n; i++) p16[(size_t)i] = __float2bfloat16_rn(pre[(size_t)i] + bias[(size_t)(i % C)]);
    kbv_tensor in[4], o[1];
    memset(in, 0, sizeof in);
    memset(o, 0, sizeof o);
    in[0].ndim = 2; in[0].shape[0] = N; in[0].shape[1] = F;
    in[2].data = bias.data(); in[2].ndim = 1; in[2].shape[0] = C;
    in[3].data = sub.data(); in[3].ndim = 1; in[3].shape[0] = C;
    o[0].data = out.data();
    kbv_call c;
    memset(&c, 0, sizeof c);
    c.inputs = in; c.n_inputs = 4; c.outputs = o; c.n_outputs = 1;
    map_rig R(&sp, N, C, 0, 0, mid.data());
    R.cs.after_mid.C = 1;
    /* the stage's shape comes from the problem's input 0 */
    suite_tensor x_t;
    memset(&x_t, 0, sizeof x_t);
    x_t.ndim = 2; x_t.shape[0] = N; x_t.shape[1] = F;
    R.prob.inputs = &x_t;
    R.prob.n_inputs = 1;
    if (chain_rest_bf16(&R.cs, 0) != REST16_ROWS) { failures++; printf("FAIL %-40s not the rows path\n", name); return; }
    for (int bf = 0; bf < 2; bf++) {
        std::vector<double> ref((size_t)on);
        for (long long q = 0; q < N; q++) {
            double m = 0;
            for (long long f = 0; f < C; f++) {
                long long i = q * C + f;
                double v = bf ? (double)__bfloat162float(p16[(size_t)i]) : (double)pre[(size_t)i] + bias[(size_t)f];
                m += v - sub[(size_t)f];
            }
            double g = gelu_d(m / (double)C);
            for (long long f = 0; f < F; f++) ref[(size_t)(q * F + f)] = g + x[(size_t)(q * F + f)];
        }
        work = pre;
        int wrote16 = 0, rc;
        if (bf) {
            in[0].data = x16.data();
            in[0].dtype = KBV_BF16;
            rc = chain_run_rest(&R.b, &c, work.data(), &R.e, o16.data(), &wrote16, 1, p16.data());
            if (!wrote16) {
                failures++;
                printf("FAIL %-40s bf16: the last stage did not write the bf16 output\n", name);
                continue;
            }
            judge16(name, rc, o16.data(), ref, on, 1e-6);
        } else {
            in[0].data = x.data();
            in[0].dtype = KBV_F32;
            rc = chain_run_rest(&R.b, &c, work.data(), &R.e, NULL, NULL, 0, NULL);
            judge32(name, "fp32", rc, out.data(), ref, on);
        }
    }
}

static chain_spec spec(int mid, int groups, int has_bias, chain_ew e1, chain_ew e2)
{
    chain_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.producer = CHAIN_LINEAR;
    sp.has_bias = has_bias;
    sp.ew1[0] = e1;
    sp.mid = mid;
    sp.groups = groups;
    sp.eps = 1e-5;
    sp.gamma = mid == MID_SOFTMAX_C ? -1 : 4;
    sp.beta = mid == MID_SOFTMAX_C ? -1 : 5;
    sp.ew2[0] = e2;
    return sp;
}

int main(void)
{
    const chain_ew none = { EW_END, 0, 0, -1 };
    rest_case("group norm of features, bias folded", spec(MID_GROUPNORM, 4, 1, none, { EW_CLAMP, -0.5, 0.5, -1 }), 6, 16, 1);
    rest_case("group norm of a map, bias folded", spec(MID_GROUPNORM, 2, 1, none, none), 2, 8, 9);
    rest_case("group norm after a ReLU (no fold)", spec(MID_GROUPNORM, 2, 1, { EW_RELU, 0, 0, -1 }, none), 3, 8, 1);
    rest_case("batch norm after a scale", spec(MID_BATCHNORM, 0, 1, { EW_MUL_P, 0, 0, 3 }, none), 8, 12, 1);
    rest_case("softmax after GELU", spec(MID_SOFTMAX_C, 0, 1, { EW_GELU, 0, 0, -1 }, none), 5, 20, 1);
    post_case("max pool, channel sum after bias and ReLU", POST_POOL_SUM, 2, 5, 6, 8);
    post_case("channel softmax after bias and ReLU", POST_SOFTMAX_C, 2, 6, 3, 5);
    post_case("plane softmax, scaled, after bias and ReLU", POST_SOFTMAX_S, 2, 3, 7, 9);
    post_case("plane softmax, scaled, eight-wide", POST_SOFTMAX_S, 2, 3, 4, 6);
    norm_post_case("group norm of a map, then each sample's mean", ST_MEAN_ALL, 0, 3, 8, 4, 5, 7);
    norm_post_case("group norm, each sample's mean, eight-wide", ST_MEAN_ALL, 0, 2, 8, 2, 4, 4);
    norm_post_case("group norm, plane softmax, eight-wide", ST_SOFTMAX_S, 0, 2, 4, 2, 4, 6);
    norm_post_case("group norm, tanh, plane softmax (not through)", ST_SOFTMAX_S, 1, 2, 4, 2, 4, 6);
    feature_post_case("batch norm, scale, softmax of features", ST_SOFTMAX_C, 6, 24);
    feature_post_case("batch norm, scale, softmax, scalar rows", ST_SOFTMAX_C, 5, 13);
    feature_post_case("batch norm, scale, min of features", ST_MIN_C, 6, 16);
    view_post_case("a linear output as one map: pool, max", 3, 32);
    add_x0_case("mean of features, GELU, plus x", 4, 24, 40);
    printf("chain_rest: %d failed\n", failures);
    return failures ? 1 : 0;
}
'''


def rest_source():
    """chain.cu without its create, run, destroy and family tables (the
    kernels, launch_ew, norm_stats, chain_rest_bf16, chain_run_rest,
    chain_fill_ops), with chain_bf16.cu's passes and the stubs."""
    chain = open(os.path.join(PROB, "chain.cu")).read()
    body = "\n".join(l for l in chain.split("\n") if not l.startswith("#include"))
    body = body.replace('extern "C" {\n}\n', "")
    i, j = body.index("int create(base_ctx *b, const kbv_call *ex, kbv_err *e)"), body.index("template <class TI, class TO>\nvoid launch_ew(")
    body = body[:i] + body[j:]
    i, j = body.index("namespace {\n\nint run(base_ctx *b, base_variant v"), body.index("void chain_fill_ops(")
    body = body[:i] + body[j:]
    body = body[:body.index("const base_family base_fam_chain")]
    shapes = open(os.path.join(ROOT, "collect", "suite", "problems", "chain.c")).read()
    shapes = 'extern "C" {\n' + "\n".join(definition(shapes, start, "chain.c") for start in (
        "long long chain_spatial(", "long long chain_numel(", "static int pool_shape(",
        "int chain_stage_shape(", "static int ew_reads_input(", "int chain_reads_param(",
        "int chain_reads_input(")) + "}\n"
    # chain_post.cu after its header of shared kernels, then the files
    # that instantiate its row kernels through the last pass
    post = ""
    for name in ["chain_post_impl.h", "chain_post.cu"] + sorted(
            f for f in os.listdir(PROB) if f.startswith("chain_post_rows_") and f.endswith(".cu")):
        text = open(os.path.join(PROB, name)).read()
        post += "\n".join(l for l in text.split("\n") if not l.startswith("#include")) + "\n"
    parts = common_parts()
    parts[0] = PRELUDE + "#include <vector>\n"
    return '#include "kbv.h"\n' + "\n".join(parts) + REST_PRELUDE + shapes + body + post + REST_HARNESS


def common_parts():
    """The prelude, base_impl.h's device helpers, chain_ew.h (without its
    includes and its C linkage block) and chain_bf16.cu's passes (from the
    row-wise kernel to the launcher)."""
    ew_h = open(os.path.join(PROB, "chain_ew.h")).read()
    bf16 = open(os.path.join(PROB, "chain_bf16.cu")).read()
    ew_h = re.sub(r'#include [<"][^>"]+[>"]\n', "", ew_h)
    ew_h = ew_h.replace('extern "C" {\n}\n', "")
    i = bf16.find("__global__ void __launch_bounds__(256) ew_kernel_bf16(")
    j = bf16.find("/* bf16, a single linear layer")
    if i < 0 or j < 0:
        raise SystemExit("test_chain_ew: chain_bf16.cu's passes not found")
    return [PRELUDE, base_device_helpers(), ew_h, "namespace {\n" + bf16[i:j] + "}\n"]


def source():
    """The kernel program: chain.cu's loads, stores, pass, group statistics
    and launch_ew, beside the common parts."""
    chain = open(os.path.join(PROB, "chain.cu")).read()
    parts = common_parts()
    one_liners = [l for l in chain.split("\n") if l.startswith("__device__ __forceinline__ float4 ld4(")
                  or l.startswith("__device__ __forceinline__ void st4(")]
    parts.append("\n".join(one_liners) + "\n")
    for start in ("template <class TI, class TO>\n__global__ void __launch_bounds__(256) ew_kernel(",
                  "__device__ __forceinline__ float2 mean_rstd(",
                  "template <typename T>\n__global__ void warp_group_stats(",
                  "template <class TI, class TO>\nvoid launch_ew("):
        parts.append(definition(chain, start, "chain.cu"))
    return '#include "kbv.h"\n' + "\n".join(parts) + HARNESS


def build_run(name, text):
    """Builds the program text under the emulator and runs it: its exit
    status, or 1 when it does not build."""
    src = os.path.join(CACHE, name + ".cu")
    open(src, "w").write(text)
    exe, log = emu_build(src, CACHE)
    if exe is None:
        print(log)
        print("%s: the harness does not build" % name)
        return 1
    sys.stdout.flush()
    return subprocess.run([exe]).returncode


def main():
    os.makedirs(CACHE, exist_ok=True)
    rc = build_run("chain_ew", source())
    rc2 = build_run("chain_rest", rest_source())
    failed = (rc != 0) + (rc2 != 0)
    print("chain_ew: %d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
