"""test_l3_baseline.py - the baseline's transformer layers
(collect/baselines/problems/net_tokens.cu) on the CPU.

net_tokens.cu's kernels and its net_tok_run, as they are, run under the
emulator inside a harness: the walk is net.c's (net_plan_make, compiled
with gcc), cuBLAS's strided-batched products are a plain loop in double
(base_gemm's contract: row-major, ta/tb, leading dimensions and batch
strides, alpha and beta), the row softmax a plain loop too.  Linear
layers, `save` and `add` between the token layers are the harness's own
loops; a window MLP followed by `add` gets the residual, as net.cu fuses
it.  Small programs of every token layer go through it and are compared
with test_l3.py's numpy references (float64), kbv's tolerance.
"""
import ast, os, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import *

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.environ.get("KBV_EMU_CACHE", os.path.join(os.environ.get("TMPDIR", "/tmp"), "kbv-emu"))

# the numpy references and the layer-list writer of test_l3.py (its
# functions only: the file runs its checks when executed)
_t3 = ast.parse(open(os.path.join(HERE, "test_l3.py")).read())
_ns = {"np": np, "math": math}
exec(compile(ast.Module(body=[n for n in _t3.body if isinstance(n, ast.FunctionDef)], type_ignores=[]),
             "test_l3.py", "exec"), _ns)
describe, reference, L, ENC = _ns["describe"], _ns["reference"], _ns["L"], _ns["ENC"]

PRELUDE = r'''
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern "C" {
#include "net.h"
}
/* what net_tokens.cu takes from base_impl.h, for the CPU (base_stub.h) */
#include "base_stub.h"
'''

HARNESS = r'''
static const net_layer PROG[] = {
%(rows)s
};

extern "C" int kbv_forward(const kbv_call *call)
{
    net_spec sp = { 0, (int)(sizeof PROG / sizeof PROG[0]), PROG, 1e-5 };
    static net_plan pl;
    char why[200];
    const kbv_tensor *x = &call->inputs[0];
    if (net_plan_make(&sp, x->shape, x->ndim, &pl, why, sizeof why)) { fprintf(stderr, "%%s\n", why); return 1; }
    base_ctx b;
    memset(&b, 0, sizeof b);
    b.sm_count = 4;
    net_tok_scratch t;
    int blas = 0;
    kbv_err e;
    if (net_tok_create(&b, &sp, &pl, &t, &blas, &e)) return 2;
    const float *P = (const float *)call->inputs[1].data, *cur = (const float *)x->data;
    /* every part read in place (net.cu stages none of these aligned ones) */
    static const void *at[2 * NET_MAX_LAYERS];
    for (int i = 0; i < pl.n_params; i++) at[i] = P + pl.param[i].offset;
    const float *skip = NULL;
    for (int l = 0; l < sp.n_layers; l++) {
        const net_layer *Ly = &PROG[l];
        long long n = 1;
        for (int a = 0; a < pl.out[l].ndim; a++) n *= pl.out[l].d[a];
        float *dst = (float *)malloc((size_t)n * sizeof(float)), *wrote = dst;
        if (Ly->kind == NET_SAVE) { skip = cur; continue; }
        if (Ly->kind == NET_DROPOUT) continue;
        if (Ly->kind == NET_LINEAR) {
            const net_param *w = net_param_of(&pl, l, 0), *bi = net_param_of(&pl, l, 1);
            long long K = pl.in[l].d[pl.in[l].ndim - 1], N = pl.out[l].d[pl.out[l].ndim - 1], M = n / N;
            base_gemm(&b, BASE_FP32, 0, 1, M, N, K, 1.0f, cur, K, 0, P + w->offset, K, 0, 0.0f, dst, N, 0, 1, 0, &e);
            if (bi) for (long long i = 0; i < n; i++) dst[i] += P[bi->offset + i %% N];
        } else if (Ly->kind == NET_ADD) {
            for (long long i = 0; i < n; i++) dst[i] = cur[i] + skip[i];
        } else {
            int fuse = Ly->kind == NET_WINDOW_MLP && l + 1 < sp.n_layers && PROG[l + 1].kind == NET_ADD;
            int rc = net_tok_run(&b, BASE_FP32, &sp, &pl, l, cur, fuse ? skip : NULL, dst, %(inplace)d, at, &t, 0, &wrote, &e);
            if (rc) { fprintf(stderr, "layer %%d: net_tok_run %%d\n", l + 1, rc); return 3; }
            if (fuse) l++;
        }
        cur = wrote;
    }
    memcpy(call->outputs[0].data, cur, (size_t)kbv_numel(&call->outputs[0]) * sizeof(float));
    net_tok_destroy(&t);
    return 0;
}
'''

ENUM = {"linear": "NET_LINEAR", "attn": "NET_ATTENTION", "ln": "NET_LAYERNORM", "tokens": "NET_TOKENS",
        "untokens": "NET_UNTOKENS", "unfold": "NET_UNFOLD", "cls": "NET_CLS", "pos": "NET_POS", "first": "NET_FIRST_TOKEN",
        "wmlp": "NET_WINDOW_MLP", "merge": "NET_MERGE", "tmean": "NET_TOKEN_MEAN", "wattn": "NET_WINDOW_ATTN",
        "save": "NET_SAVE", "add": "NET_ADD", "dropout": "NET_DROPOUT"}


def harness(prog, inplace):
    rows = []
    for kind, out, k, s, p, bias, g in prog:
        rows.append("    { .kind = %s, .out = %d, .k = %d, .s = %d, .bias = %d, .groups = %d }," %
                    (ENUM[kind], out, k, s, bias, g))
    text = open(os.path.join(ROOT, "collect", "baselines", "problems", "net_tokens.cu")).read()
    header = open(os.path.join(ROOT, "collect", "baselines", "problems", "net_tokens.h")).read()
    # net_tokens.h's declarations (its extern "C" block and includes dropped)
    header = header.replace('extern "C" {\n#include "net.h"\n}\n', "").replace('#include "base_impl.h"\n', "")
    body = "\n".join(l for l in text.split("\n") if not l.startswith("#include"))
    return '#include "kbv.h"\n' + PRELUDE + header + body + HARNESS % {"rows": "\n".join(rows), "inplace": inplace}


def build(src_path):
    """Compiles a harness like run1.sh, with net.c and the suite's headers."""
    inc = ["-I" + os.path.join(ROOT, d) for d in ("include", "common", "collect/suite", "collect/suite/problems")]
    os.makedirs(CACHE, exist_ok=True)
    objs = {"net_c.o": os.path.join(W, "net_c.o"), "net_stubs.o": os.path.join(W, "net_stubs.o")}
    # net.c's prompt text is not used here: its helpers are stubs
    open(os.path.join(W, "stubs.c"), "w").write(
        '#include "sbuf.h"\n#include "suite.h"\n#include "net.h"\n'
        "void sb_puts(sbuf *b, const char *s) { (void)b; (void)s; }\n"
        "void sb_printf(sbuf *b, const char *f, ...) { (void)b; (void)f; }\n"
        "void suite_gen_text(sbuf *b, const suite_tensor *t) { (void)b; (void)t; }\n"
        "void suite_num_text(sbuf *b, double v) { (void)b; (void)v; }\n"
        "const net_spec *suite_net(int op) { (void)op; return 0; }\n")
    for name, src in (("net_c.o", os.path.join(ROOT, "collect/suite/problems/net.c")),
                      ("net_stubs.o", os.path.join(W, "stubs.c"))):
        r = subprocess.run(["gcc", "-std=c11", "-O1", "-c", src, "-o", objs[name]] + inc, capture_output=True, text=True)
        if r.returncode:
            return None, r.stderr[-800:]
    # the emulator's own objects, as run1.sh builds them
    emu_o, drv_o = os.path.join(CACHE, "emu1.o"), os.path.join(CACHE, "driver.o")
    if not os.path.exists(emu_o) or not os.path.exists(drv_o):
        subprocess.run(["g++", "-std=c++17", "-O1", "-DEMU_CLUSTER=1", "-I" + HERE, "-I" + os.path.join(ROOT, "include"),
                        "-c", os.path.join(HERE, "emu.cpp"), "-o", emu_o], check=True)
        subprocess.run(["g++", "-std=c++17", "-O1", "-I" + HERE, "-I" + os.path.join(ROOT, "include"), "-c",
                        os.path.join(HERE, "driver.cpp"), "-o", drv_o], check=True)
    cpp = src_path + ".cpp"
    subprocess.run([sys.executable, os.path.join(HERE, "xform.py"), src_path, cpp], check=True)
    exe = src_path + ".exe"
    r = subprocess.run(["g++", "-std=c++20", "-O1", "-w", "-I" + HERE] + inc +
                       ["-o", exe, cpp, emu_o, drv_o, objs["net_c.o"], objs["net_stubs.o"], "-lm"],
                       capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr[-1500:]
    return exe, ""


def SWIN2(c, h, k, shift):
    return [L("save"), L("wattn", 0, k, shift, g=h), L("ln"), L("add")]


CASES = {
    "gpt_causal": ([2, 7, 12], [L("linear", 36), L("attn", 0, 1, g=2), L("linear", 12)]),
    "relu_causal": ([2, 9, 12], [L("linear", 36), L("attn", 0, 3, g=3)]),
    # sequences over NET_TOK_SHORT (64) take the per-head path
    "gpt_long": ([2, 70, 12], [L("linear", 36), L("attn", 0, 1, g=2), L("linear", 12)]),
    "relu_long": ([1, 67, 12], [L("linear", 36), L("attn", 0, 3, g=3)]),
    "mha_seqfirst_long": ([66, 2, 8], [L("linear", 24), L("attn", 0, 4, g=2), L("linear", 8)]),
    "mha_seqfirst": ([3, 4, 8], [L("linear", 24), L("attn", 0, 4, g=2), L("linear", 8)]),
    "vision_attn": ([2, 8, 3, 5], [L("tokens"), L("save"), L("linear", 24), L("attn", 0, 0, g=2), L("linear", 8),
                                   L("add"), L("ln"), L("untokens")]),
    "vit_head": ([2, 2, 8, 8], [L("unfold", 0, 4), L("linear", 12), L("cls"), L("pos"), L("first")]),
    "swin_mlp": ([2, 36, 8], [L("ln"), L("save"), L("wmlp", 0, 3, 0, g=2), L("add"), L("save"),
                              L("wmlp", 0, 3, 1, g=2), L("add"), L("wmlp", 0, 3, 1, g=4), L("merge"), L("tmean")]),
    "swin_v2": ([2, 36, 8], SWIN2(8, 2, 3, 0) + SWIN2(8, 2, 3, 1)),
}

for name, (xs, prog) in CASES.items():
    for inplace in (0, 1):
        text, parts, total, out_shape = describe(xs, prog)
        pid = "L3_base_%s%s" % (name, "_inplace" if inplace else "")
        path = os.path.join(W, pid + ".cu")
        open(path, "w").write(harness(prog, inplace))
        exe, log = build(path)
        if exe is None:
            print("ERR  base   %-40s %s" % (pid, log.strip().splitlines()[-1] if log.strip() else "?"))
            print(log)
            results.append(("base", pid, "error"))
            continue
        x = U(*xs, lo=-1.0, hi=1.0)
        P = U(total, lo=-0.5, hi=0.5)
        ref = reference(x, prog, parts, P)
        spec = ["2"]
        for i, a in enumerate((x, P)):
            f = "%s/in%d.bin" % (W, i)
            a.astype(np.float32).tofile(f)
            spec.append("0 %d %s %s" % (a.ndim, " ".join(map(str, a.shape)), f))
        spec += ["1", "0 %d %s %s/out0.bin" % (len(out_shape), " ".join(map(str, out_shape)), W), "0"]
        open(W + "/spec.txt", "w").write("\n".join(spec) + "\n")
        r = subprocess.run([exe, W + "/spec.txt"], capture_output=True, text=True, timeout=600)
        if r.returncode:
            print("ERR  base   %-40s %s" % (pid, (r.stdout + r.stderr).strip()[-300:]))
            results.append(("base", pid, "error"))
            continue
        out = np.fromfile(W + "/out0.bin", dtype=np.float32).reshape(out_shape)
        bad, mx = compare(out, ref)
        print("%s base   %-40s mismatches %d max err %.3g" % ("ok  " if bad == 0 else "FAIL", pid, bad, mx))
        results.append(("base", pid, "ok" if bad == 0 else "fail"))

sys.exit(summary())
