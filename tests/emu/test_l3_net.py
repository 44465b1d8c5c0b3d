"""test_l3_net.py - the baseline's layer-program interpreter
(collect/baselines/problems/net.cu) on the CPU, in fp32 and in bf16.

net.cu, as it is, runs under the emulator with its walk (net.c, compiled
with gcc): its own kernels (the fused bias, batch norm, residual and
activation pass, the batch-norm statistics, softmax, the global average
pool, concatenation, the channel shuffle) in both element types, the
buffers, the stack and the skip as the interpreter juggles them.  What it
takes from the libraries is a plain loop here (base_impl.h's contracts):
cuBLAS's product, cuBLASLt's bfloat16 linear layer (float accumulation,
the bias as its epilogue, one rounding), cuDNN's convolutions (float, or
bfloat16 tensors with float accumulation and one rounding), pool.cu's
poolings, and the attention's bfloat16 batched products (base_gemm_bf16)
and row softmax.  The transformer layers are net_tokens.cu as it is.
Every program of test_l3.py's NETS, three attention programs over
sequences longer than NET_TOK_SHORT (the per-head path) and ViT's
embedded tokens, goes through run (fp32) and, where the program has a
bf16 path (not Swin's window layers nor a patch embedding), run_bf16 on
the same bfloat16-representable inputs, and both are compared with test_l3.py's numpy reference in
float64: fp32 with kbv's tolerance, bf16 with the BF16 setting's
(check.py: max(1e-2 min(1, max |ref|), 2^-23) + 1e-2 |ref|, here with twice that
room, since every layer rounds its activations to bfloat16 as PyTorch's
bfloat16 eager does), a value passing that is within it of the float64
reference or of the same reference with each layer's output rounded to
bfloat16 (where bfloat16 cannot compute the program at all).  Each
setting also runs again with params placed one element past a 256-byte
boundary, where the parts a library call reads are staged into aligned
copies (net_stage.cu): first with other values there, then with
the real ones, and the output must equal the first run's bit for bit (the
copies are made every call and read where the layers read them).

usage: python3 tests/emu/test_l3_net.py   (g++, gcc, numpy)
"""
import ast
import math
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srcparts import base_device_helpers, bf16_round, emu_build, run_xp, source  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
CACHE = os.environ.get("KBV_EMU_CACHE", os.path.join(os.environ.get("TMPDIR", "/tmp"), "kbv-emu"))
W = os.path.join(CACHE, "l3net")

# test_l3.py's numpy references, layer-list writer and programs (its
# functions and its NETS table only: the file runs its checks when executed)
_t3 = ast.parse(open(os.path.join(HERE, "test_l3.py")).read())
_keep = [n for n in _t3.body if isinstance(n, ast.FunctionDef) or
         (isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "NETS" for t in n.targets))]
_ns = {"np": np, "math": math}
exec(compile(ast.Module(body=_keep, type_ignores=[]), "test_l3.py", "exec"), _ns)
describe, reference, NETS, L = _ns["describe"], _ns["reference"], _ns["NETS"], _ns["L"]
# and attention over sequences longer than NET_TOK_SHORT (64), which takes
# the per-head path (q, k and v read in place from the packed projection),
# and ViT's embedded tokens
NETS = dict(NETS)
NETS.update({
    "gpt_long": ([2, 70, 12], [L("linear", 36), L("attn", 0, 1, g=2), L("linear", 12)]),
    "relu_long": ([1, 67, 12], [L("linear", 36), L("attn", 0, 3, g=3)]),
    "mha_sf_long": ([66, 2, 8], [L("linear", 24), L("attn", 0, 4, g=2), L("linear", 8)]),
    # every token of ViT's embedding kept (its head keeps token 0 alone,
    # which a positional embedding indexed by channel alone gets right)
    "vit_tokens": ([2, 2, 8, 8], [L("unfold", 0, 4), L("linear", 12), L("cls"), L("pos"), L("ln")]),
})


def _bf16_eager():
    """test_l3.py's reference with every layer's output rounded to
    bfloat16, as PyTorch's bfloat16 eager rounds each module's output."""
    fn = next(n for n in _t3.body if isinstance(n, ast.FunctionDef) and n.name == "reference")
    fn = ast.parse(ast.unparse(fn)).body[0]
    fn.name = "reference16"
    loop = next(n for n in fn.body if isinstance(n, ast.For))
    loop.body.append(ast.parse("cur = _round(cur)").body[0])
    ns = dict(_ns)
    ns["_round"] = lambda a: bf16_round(np.asarray(a, dtype=np.float64)).astype(np.float64)
    exec(compile(ast.fix_missing_locations(ast.Module(body=[fn], type_ignores=[])), "reference16", "exec"), ns)
    return ns["reference16"]

ENUM = {"linear": "NET_LINEAR", "conv": "NET_CONV2D", "convt": "NET_CONVT2D", "bn": "NET_BN2D", "relu": "NET_RELU",
        "relu6": "NET_RELU6", "sigmoid": "NET_SIGMOID", "maxpool": "NET_MAXPOOL2D", "maxpool_ceil": "NET_MAXPOOL2D",
        "avgpool": "NET_AVGPOOL2D", "gap": "NET_GAP", "flatten": "NET_FLATTEN", "dropout": "NET_DROPOUT",
        "save": "NET_SAVE", "swap": "NET_SWAP", "add": "NET_ADD", "push": "NET_PUSH", "exchange": "NET_EXCHANGE",
        "concat": "NET_CONCAT", "shuffle": "NET_SHUFFLE", "softmax": "NET_SOFTMAX", "gelu": "NET_GELU_TANH",
        "gelu_erf": "NET_GELU", "attn": "NET_ATTENTION", "ln": "NET_LAYERNORM", "tokens": "NET_TOKENS",
        "untokens": "NET_UNTOKENS", "unfold": "NET_UNFOLD", "cls": "NET_CLS", "pos": "NET_POS",
        "first": "NET_FIRST_TOKEN", "wmlp": "NET_WINDOW_MLP", "merge": "NET_MERGE", "tmean": "NET_TOKEN_MEAN",
        "wattn": "NET_WINDOW_ATTN"}
# Swin's window layers have no bfloat16 path, nor has a patch embedding (a
# convolution whose stride is its kernel, net.c's net_is_patch_conv): their
# programs run in fp32 only.
FLOAT_ONLY = {"wmlp", "merge", "tmean", "wattn"}


def has_bf16(prog):
    return not any(kind in FLOAT_ONLY or (kind == "conv" and k > 1 and s == k and p == 0 and g <= 1)
                   for kind, out, k, s, p, bias, g in prog)

PRELUDE = r'''
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern "C" {
#include "convpin.h"
#include "net.h"
}
/* what net.cu takes from base_impl.h, net_tokens.h and suite_host.h, for
 * the CPU: base_stub.h, base_impl.h's device helpers as they are, and the
 * library calls as plain loops (their contracts in base_impl.h) */
#define EMU_GRID_CAP 3
#include "base_stub.h"
%(helpers)s
static int suite_host_available(const suite_problem *, const char **) { return 1; }
static int base_need_blas(base_ctx *, kbv_err *) { return 0; }
static float ld(const float *p, long long i) { return p[i]; }
static float ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
static void st(float *p, long long i, double v) { p[i] = (float)v; }
static void st(__nv_bfloat16 *p, long long i, double v) { p[i] = __float2bfloat16_rn((float)v); }
static int base_linear_bf16(base_ctx *, long long m, long long n, long long k, const void *X, const void *Wt,
                            const void *bias, void *Y, cudaStream_t, kbv_err *)
{
    const __nv_bfloat16 *x = (const __nv_bfloat16 *)X, *w = (const __nv_bfloat16 *)Wt, *b = (const __nv_bfloat16 *)bias;
    for (long long i = 0; i < m; i++)
        for (long long j = 0; j < n; j++) {
            float acc = 0.0f;
            for (long long t = 0; t < k; t++) acc += ld(x, i * k + t) * ld(w, j * k + t);
            st((__nv_bfloat16 *)Y, i * n + j, acc + (b ? ld(b, j) : 0.0f));
        }
    return 0;
}
struct conv_runner { conv_geom g; };
static int conv_runner_create(base_ctx *, const conv_geom *g, conv_runner **out, kbv_err *)
{
    *out = new conv_runner{*g};
    return 0;
}
static int conv_runner_tune(base_ctx *, conv_runner *, const float *, const float *, float *, cudaStream_t, kbv_err *)
{
    return 0;
}
static void conv_runner_destroy(conv_runner *r) { delete r; }
/* y = conv(x, w) (+ bias), or the transposed convolution, 2-d, groups;
 * float accumulation, one store */
template <typename T>
static void conv_loop(const conv_geom &g, const T *x, const T *w, const T *bias, T *y)
{
    long long G = g.groups, cin = g.cin / G, cout = g.cout / G, k = g.k[0];
    long long H = g.in[0], Wd = g.in[1], OH = g.out[0], OW = g.out[1];
    std::vector<float> acc((size_t)(g.n * g.cout * OH * OW), 0.0f);
    for (long long n = 0; n < g.n; n++)
        for (long long gi = 0; gi < G; gi++)
            for (long long co = 0; co < cout; co++)
                for (long long ci = 0; ci < cin; ci++)
                    for (long long a = 0; a < k; a++)
                        for (long long c = 0; c < k; c++) {
                            /* forward: each output reads input (u s - p + a); transposed:
                             * each input adds into output (u s - p + a) */
                            float wv = ld(w, (g.transposed ? (gi * cin + ci) * cout + co : (gi * cout + co) * cin + ci) *
                                                 k * k + a * k + c);
                            long long UH = g.transposed ? H : OH, UW = g.transposed ? Wd : OW;
                            for (long long u = 0; u < UH; u++)
                                for (long long v = 0; v < UW; v++) {
                                    long long t = u * g.s[0] - g.p[0] + a, q = v * g.s[1] - g.p[1] + c;
                                    long long ih = g.transposed ? u : t, iw = g.transposed ? v : q;
                                    long long oh = g.transposed ? t : u, ow = g.transposed ? q : v;
                                    if (ih < 0 || ih >= H || iw < 0 || iw >= Wd || oh < 0 || oh >= OH || ow < 0 || ow >= OW)
                                        continue;
                                    acc[(size_t)(((n * g.cout + gi * cout + co) * OH + oh) * OW + ow)] +=
                                        ld(x, ((n * g.cin + gi * cin + ci) * H + ih) * Wd + iw) * wv;
                                }
                        }
    for (long long i = 0; i < (long long)acc.size(); i++)
        st(y, i, acc[(size_t)i] + (bias ? ld(bias, (i / (OH * OW)) % g.cout) : 0.0f));
}
static int conv_runner_run(base_ctx *, conv_runner *r, base_variant, const float *x, const float *w, const float *bias,
                           float *y, cudaStream_t, kbv_err *)
{
    conv_loop(r->g, x, w, bias, y);
    return 0;
}
static int conv_runner_run_bf16(base_ctx *, conv_runner *r, const void *x, const void *w, const void *bias, void *y,
                                cudaStream_t, kbv_err *)
{
    conv_loop(r->g, (const __nv_bfloat16 *)x, (const __nv_bfloat16 *)w, (const __nv_bfloat16 *)bias,
              (__nv_bfloat16 *)y);
    return 0;
}
/* PyTorch's pools: max over the window's elements inside the input (a
 * ceil-mode window may run past its end), average over k^2 with the
 * padding counted */
template <typename T>
static void pool_loop(int max, const T *x, T *y, long long planes, int H, int Wd, int OH, int OW, int k, int s, int p)
{
    for (long long q = 0; q < planes; q++)
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                double m = -INFINITY, sum = 0.0;
                for (int a = 0; a < k; a++)
                    for (int c = 0; c < k; c++) {
                        int ih = oh * s - p + a, iw = ow * s - p + c;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= Wd) continue;
                        double v = ld(x, (q * H + ih) * Wd + iw);
                        m = v > m ? v : m;
                        sum += v;
                    }
                st(y, (q * OH + oh) * OW + ow, max ? m : sum / (k * k));
            }
}
static int base_pool2d(const base_ctx *, int max, const float *x, float *y, long long planes, int H, int W, int OH,
                       int OW, int k, int s, int p, cudaStream_t)
{
    pool_loop(max, x, y, planes, H, W, OH, OW, k, s, p);
    return 0;
}
static int base_pool2d_bf16(const base_ctx *, int max, const void *x, void *y, long long planes, int H, int W, int OH,
                            int OW, int k, int s, int p, cudaStream_t)
{
    pool_loop(max, (const __nv_bfloat16 *)x, (__nv_bfloat16 *)y, planes, H, W, OH, OW, k, s, p);
    return 0;
}
'''

HARNESS = r'''
static const net_layer PROG[] = {
%(rows)s
};
static net_spec SPEC = { 1, (int)(sizeof PROG / sizeof PROG[0]), PROG, 1e-5 };
extern "C" const net_spec *suite_net(int op) { return op == 1 ? &SPEC : NULL; }

#include "harness_io.h"

/* The call c once more with its params (np elements of elem bytes, at P)
 * placed one element past a 256-byte boundary, so that the parts a
 * library call reads are staged (net_stage.cu) wherever that
 * leaves them less aligned than the call wants: first with other
 * values there, then with P's, whose output must equal y (bytes) bit for
 * bit, which it does only if the staged copies are made again each call
 * and read where the layers read them.  0 when it does. */
static int staged_again(base_ctx *b, const kbv_call *c, kbv_tensor *in, kbv_tensor *outs, const void *P, int elem,
                        const void *y, long long bytes, int bf16)
{
    long long np = in[1].shape[0];
    std::vector<unsigned char> raw((size_t)(np * elem + 512)), out((size_t)bytes);
    unsigned char *at = (unsigned char *)(((uintptr_t)raw.data() + 255) & ~(uintptr_t)255) + elem;
    void *keep_p = in[1].data, *keep_y = outs[0].data;
    kbv_err e;
    memset(&e, 0, sizeof e);
    in[1].data = at;
    outs[0].data = out.data();
    int rc = 0;
    for (int pass = 0; pass < 2 && !rc; pass++) {
        if (pass == 0) for (long long i = 0; i < np * elem; i++) at[i] = (unsigned char)(i * 7 + 1);
        else memcpy(at, P, (size_t)(np * elem));
        rc = bf16 ? run_bf16(b, c, &e) : run(b, BASE_FP32, c, &e);
        if (rc) fprintf(stderr, "staged %%s run: %%s\n", bf16 ? "bf16" : "fp32", e.msg);
    }
    const net_state *ns = (const net_state *)b->state;
    const net_stage *st = &ns->stage;
    int needs = 0;
    for (int i = 0; i < ns->plan->n_params; i++)
        needs += st->need[i] != 0 && (uintptr_t)(at + ns->plan->param[i].offset * elem) %% st->need[i] != 0;
    if (!rc && needs > 0 && st->n_seg != needs) {
        fprintf(stderr, "staged %%s: %%d of %%d parts staged\n", bf16 ? "bf16" : "fp32", st->n_seg, needs);
        rc = 1;
    }
    if (!rc && memcmp(out.data(), y, (size_t)bytes) != 0) {
        fprintf(stderr, "staged %%s: the output differs from the unstaged call's\n", bf16 ? "bf16" : "fp32");
        rc = 1;
    }
    in[1].data = keep_p;
    outs[0].data = keep_y;
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    const int64_t xs[] = { %(xs)s };
    const int xdim = (int)(sizeof xs / sizeof xs[0]);
    net_plan pl;
    char why[200];
    if (net_plan_make(&SPEC, xs, xdim, &pl, why, sizeof why)) { fprintf(stderr, "%%s\n", why); return 3; }
    long long nx = 1, ny = 1, np_ = pl.n_param_floats;
    for (int a = 0; a < xdim; a++) nx *= xs[a];
    for (int a = 0; a < pl.result.ndim; a++) ny *= pl.result.d[a];
    std::vector<float> x = read_f(argv[1], nx), P = read_f(argv[2], np_), y((size_t)ny);
    std::vector<__nv_bfloat16> x16 = to_bf16(x), P16 = to_bf16(P), y16((size_t)ny);
    static emu_call h;
    emu_call_init(&h, "L3_emu", 1, 4, xs, xdim, np_, pl.result.d, pl.result.ndim);
    base_ctx &b = h.b;
    kbv_err &e = h.e;
    emu_call_data(&h, x.data(), P.data(), y.data());
    if (create(&b, &h.c, &e)) { fprintf(stderr, "create: %%s\n", e.msg); return 4; }
    if (run(&b, BASE_FP32, &h.c, &e)) { fprintf(stderr, "run: %%s\n", e.msg); return 5; }
    write_f(argv[3], y.data(), ny);
    if (staged_again(&b, &h.c, h.in, h.out, P.data(), 4, y.data(), ny * 4, 0)) return 7;
    if (!%(bf16)d) y16.clear();   /* no bf16 path: an empty output */
    if (%(bf16)d) {
        emu_call_data(&h, x16.data(), P16.data(), y16.data());
        if (run_bf16(&b, &h.c, &e)) { fprintf(stderr, "run_bf16: %%s\n", e.msg); return 6; }
        if (staged_again(&b, &h.c, h.in, h.out, P16.data(), 2, y16.data(), ny * 2, 1)) return 8;
    }
    write_bf16((std::string(argv[3]) + ".bf16").c_str(), y16);
    destroy(&b);
    return 0;
}
'''


def harness(xs, prog):
    rows = []
    for kind, out, k, s, p, bias, g in prog:
        rows.append("    { .kind = %s, .out = %d, .k = %d, .s = %d, .p = %d, .bias = %d, .groups = %d, .init = 0, "
                    ".ceil = %d, .order = 0 }," % (ENUM[kind], out, k, s, p, bias, g, kind == "maxpool_ceil"))
    text = source("net.cu")
    # net.cu without its includes and without the family tables after its
    # anonymous namespace (the harness calls create, run and run_bf16)
    # net_stage.h's state and net_stage.cu (where the interpreter reads the
    # parameters) first, as they are
    stage = "\n".join(source(n) for n in ("net_stage.h", "net_stage.cu"))
    stage = stage.replace('extern "C" {\n#include "net.h"\n}\n', "")
    # net_tokens.h and net_tokens.cu, as they are, in a namespace of their
    # own: their file-local helpers share names with net.cu's
    tok = "\n".join(source(n) for n in ("net_tokens.h", "net_tokens.cu"))
    tok = tok.replace('extern "C" {\n#include "net.h"\n}\n', "")
    tok = ("namespace tokens {\n" + tok + "\n} /* namespace tokens */\n" +
           "".join("using tokens::%s;\n" % n for n in
                   ("net_tok_scratch", "net_tok_create", "net_tok_destroy", "net_tok_run", "net_tok_run_bf16")))
    text = stage + "\n" + tok + "\n" + text
    body = "\n".join(l for l in text.split("\n") if not l.startswith("#include"))
    body = body[:body.rindex("} /* namespace */")] + "} /* namespace */\n"
    return ('#include "kbv.h"\n#include <string>\n' + PRELUDE.replace("%(helpers)s", base_device_helpers()) + body +
            HARNESS % {"rows": "\n".join(rows), "xs": ", ".join(str(d) for d in xs), "bf16": int(has_bf16(prog))})


def build(src_path):
    inc = ["-I" + os.path.join(ROOT, d) for d in ("include", "common", "collect/suite", "collect/suite/problems")]
    objs = []
    stubs = os.path.join(W, "stubs.c")
    open(stubs, "w").write(
        '#include "sbuf.h"\n#include "suite.h"\n#include "net.h"\n'
        "void sb_puts(sbuf *b, const char *s) { (void)b; (void)s; }\n"
        "void sb_printf(sbuf *b, const char *f, ...) { (void)b; (void)f; }\n"
        "void suite_gen_text(sbuf *b, const suite_tensor *t) { (void)b; (void)t; }\n"
        "void suite_num_text(sbuf *b, double v) { (void)b; (void)v; }\n")
    for name, src in (("net_c.o", os.path.join(ROOT, "collect/suite/problems/net.c")), ("stubs.o", stubs)):
        o = os.path.join(W, name)
        r = subprocess.run(["gcc", "-std=c11", "-O1", "-c", src, "-o", o] + inc, capture_output=True, text=True)
        if r.returncode:
            return None, r.stderr[-1500:]
        objs.append(o)
    return emu_build(src_path, CACHE, objs)


def main():
    reference16 = _bf16_eager()
    os.makedirs(W, exist_ok=True)
    rng = np.random.default_rng(7)
    failed = 0
    ran = 0
    for name, (xs, prog) in NETS.items():
        text, parts, total, out_shape = describe(xs, prog)
        path = os.path.join(W, name + ".cu")
        open(path, "w").write(harness(xs, prog))
        exe, log = build(path)
        if exe is None:
            print("ERR  %-12s the harness does not build:\n%s" % (name, log))
            failed += 1
            continue
        # bfloat16-representable inputs, so that both settings see the same
        x = bf16_round(rng.uniform(-1.0, 1.0, size=xs).astype(np.float32))
        P = bf16_round(rng.uniform(-0.5, 0.5, size=total).astype(np.float32))
        y32, y16, why = run_xp(exe, W, x, P)
        if y32 is None:
            print("ERR  %-12s %s" % (name, why))
            failed += 1
            continue
        ran += 1
        ref = reference(x, prog, parts, P)
        y32 = y32.reshape(ref.shape)
        err32 = np.abs(y32 - ref)
        # "not within" rather than "beyond", so that a NaN counts
        bad32 = int((~(err32 <= 1e-3 + 1e-3 * np.abs(ref))).sum())
        if not has_bf16(prog):
            ok = bad32 == 0 and y16.size == 0
            failed += not ok
            print("%s %-12s fp32 max err %.2g (%d beyond) of %d; no bf16 path (fp32 only)" %
                  ("ok  " if ok else "FAIL", name, err32.max(), bad32, ref.size))
            continue
        y16 = y16.reshape(ref.shape)
        s = min(1.0, float(np.abs(ref).max()))
        tol16 = 2e-2 * s + 2e-2 * np.abs(ref)
        err16 = np.abs(y16 - ref)
        # Against the float64 reference, or where bfloat16 itself cannot
        # compute it (EfficientNet-B2's batch norm over the two values of a
        # 1x1 map), against the same reference rounded as PyTorch's bf16
        # eager rounds: a slip in the walk or the kernels misses both.
        eager = reference16(x, prog, parts, P)
        bad16 = int((~((err16 <= tol16) | (np.abs(y16 - eager) <= tol16))).sum())
        ok = bad32 == 0 and bad16 == 0
        failed += not ok
        print("%s %-12s fp32 max err %.2g (%d beyond), bf16 max err %.2g (%.2g from bf16 eager; %d beyond) of %d" %
              ("ok  " if ok else "FAIL", name, err32.max(), bad32, err16.max(), np.abs(y16 - eager).max(), bad16,
               ref.size))
    print("l3_net: %d programs, %d failed" % (ran, failed))
    return 1 if failed or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
