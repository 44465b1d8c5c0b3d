#!/usr/bin/env python3
"""test_reduce_baseline.py - the reductions over dim 1 (collect/baselines/
problems/reduce.cu) on the CPU, in fp32 and bf16.

reduce.cu, as it is, runs under the emulator through its own create(),
run() and run_bf16(), so that each shape takes the path the plan gives it
on a GPU: the flat float4 reduction (fp32, R a multiple of 4, x 16-byte
aligned; every op since the H100 run measured max and min slower than
PyTorch on the streaming kernel), the streaming two-pass kernel (R not a
multiple of 4, x misaligned, and every bf16 call) and the single pass
(short or narrow shapes).  The context claims a few SMs, so that the plans
split R into several chunks and pass 2 combines them.

Each op of sum, mean, max, min, argmax and argmin is compared with numpy:
the sums and means within 1e-5 relative to a float64 sum (bf16: the same
sum rounded to bfloat16, within one bfloat16 step), max and min exactly,
argmax and argmin exactly on inputs drawn from four values, so that most
columns tie and the first index must win across the flat layout's row
classes and the chunks; a NaN or -inf placed in some columns checks that
the first NaN wins (numpy's rule and PyTorch's) and that a column of
nothing but -inf (argmax) gives row 0.

usage: python3 tests/emu/test_reduce_baseline.py   (g++, numpy)
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from srcparts import bf16_round, emu_build, source  # noqa: E402

CACHE = os.environ.get("KBV_EMU_CACHE", os.path.join(os.environ.get("TMPDIR", "/tmp"), "kbv-emu"))
W = os.path.join(CACHE, "reduce")

OPS = ["sum", "mean", "max", "min", "argmax", "argmin"]

PRELUDE = r'''
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kbv.h"
extern "C" {
#include "suite.h"
#include "ops.h"
}
#define EMU_GRID_CAP 4
#include "base_stub.h"
/* base_impl.h's workspace contract: grown to at least `bytes`, kept */
static int base_need_ws(base_ctx *b, size_t bytes, kbv_err *)
{
    if (bytes <= b->ws_bytes) return 0;
    free(b->ws);
    b->ws = aligned_alloc(256, (bytes + 255) / 256 * 256);
    b->ws_bytes = bytes;
    return b->ws ? 0 : -3;
}
'''

HARNESS = r'''
/* argv: op index (0..5: sum mean max min argmax argmin), outer, R, inner,
 * the offset of x in floats (0: 16-byte aligned), bf16 (0/1), the input
 * file (float32 values) and the output file (float32 values, or int64
 * indices for argmax and argmin). */
int main(int argc, char **argv)
{
    if (argc != 9) { fprintf(stderr, "usage: op outer R inner offset bf16 in out\n"); return 2; }
    static const int ops[] = { OP_SUM_DIM, OP_MEAN_DIM, OP_MAX_DIM, OP_MIN_DIM, OP_ARGMAX_DIM, OP_ARGMIN_DIM };
    const int opi = atoi(argv[1]);
    const long long outer = atoll(argv[2]), R = atoll(argv[3]), inner = atoll(argv[4]);
    const int off = atoi(argv[5]), bf16 = atoi(argv[6]);
    const long long n = outer * R * inner, no = outer * inner;
    float *xf = (float *)aligned_alloc(256, (size_t)(n + 64) * 4);
    __nv_bfloat16 *xb = (__nv_bfloat16 *)aligned_alloc(256, (size_t)(n + 64) * 2);
    FILE *f = fopen(argv[7], "rb");
    if (!f || fread(xf + off, 4, (size_t)n, f) != (size_t)n) { fprintf(stderr, "cannot read %s\n", argv[7]); return 2; }
    fclose(f);
    for (long long i = 0; i < n; i++) xb[off + i] = __float2bfloat16_rn(xf[off + i]);
    const int arg = opi >= 4;
    void *out = calloc((size_t)no, 8);
    suite_problem p;
    memset(&p, 0, sizeof p);
    p.id = "reduce-test";
    p.op = ops[opi];
    base_ctx b;
    memset(&b, 0, sizeof b);
    b.p = &p;
    b.sm_count = 2;
    kbv_tensor in, ot;
    memset(&in, 0, sizeof in);
    memset(&ot, 0, sizeof ot);
    in.data = bf16 ? (void *)(xb + off) : (void *)(xf + off);
    in.dtype = bf16 ? KBV_BF16 : KBV_F32;
    in.ndim = 3;
    in.shape[0] = outer; in.shape[1] = R; in.shape[2] = inner;
    ot.data = out;
    ot.dtype = arg ? KBV_I64 : bf16 ? KBV_BF16 : KBV_F32;
    ot.ndim = 2;
    ot.shape[0] = outer; ot.shape[1] = inner;
    kbv_call c;
    memset(&c, 0, sizeof c);
    c.inputs = &in; c.n_inputs = 1;
    c.outputs = &ot; c.n_outputs = 1;
    kbv_err e;
    memset(&e, 0, sizeof e);
    /* create() sizes the workspace from the fp32 example, as the worker
     * calls it; the bf16 call grows it when it needs more */
    kbv_tensor ex = in;
    ex.data = xf + off;
    kbv_call cx = c;
    cx.inputs = &ex;
    if (create(&b, &cx, &e)) { fprintf(stderr, "create: %s\n", e.msg); return 1; }
    int rc = bf16 ? run_bf16(&b, &c, &e) : run(&b, BASE_FP32, &c, &e);
    if (rc) { fprintf(stderr, "run: %s\n", e.msg); return 1; }
    plan pl = make_plan(&b, p.op, outer, R, inner, in.data, bf16);
    printf("path %s chunks %d\n", pl.flat ? "flat" : pl.two ? "two-pass" : "single", pl.chunks);
    f = fopen(argv[8], "wb");
    if (arg) fwrite(out, 8, (size_t)no, f);
    else if (bf16) {
        for (long long i = 0; i < no; i++) {
            float v = __bfloat162float(((__nv_bfloat16 *)out)[i]);
            fwrite(&v, 4, 1, f);
        }
    } else fwrite(out, 4, (size_t)no, f);
    fclose(f);
    return 0;
}
'''


def program():
    """reduce.cu without its includes and its family table (base_impl.h's
    type, which the stub does not define), then the harness."""
    text = source("reduce.cu")
    text = text[:text.index("const base_family base_fam_reduce")]
    body = "\n".join(line for line in text.split("\n") if not line.startswith("#include"))
    return PRELUDE + body + HARNESS


def reference(op, x):
    """numpy's reduction of x [outer, R, inner] over dim 1, in float64 for
    sums and means."""
    if op == "sum":
        return x.astype(np.float64).sum(axis=1)
    if op == "mean":
        return x.astype(np.float64).mean(axis=1)
    if op == "max":
        return x.max(axis=1)
    if op == "min":
        return x.min(axis=1)
    if op == "argmax":
        return x.argmax(axis=1)
    return x.argmin(axis=1)


def inputs(rng, outer, R, inner, special):
    """Values from four levels (most columns tie), with a NaN in a few
    columns and a column of -inf when `special`."""
    x = rng.choice(np.array([-1.5, 0.25, 0.75, 2.0], dtype=np.float32), size=(outer, R, inner))
    x = x + rng.integers(0, 2, size=x.shape).astype(np.float32) * 0.5   # still few distinct values
    if special:
        x[0, R // 3, 1] = np.nan
        x[0, R - 1, 1] = np.nan           # a later NaN in the same column: the first wins
        x[0, 5, 4] = np.nan               # rows 5 and 8, one chunk, two row classes: pass 2
        x[0, 8, 4] = np.nan               # meets row 8 first (class 0) and must still keep 5
        x[outer - 1, 5, inner - 1] = np.nan
        x[0, :, 2] = -np.inf              # argmax of a column of -inf: row 0
        x[0, R // 2, 3] = np.inf
    return x


def main():
    os.makedirs(W, exist_ok=True)
    src = os.path.join(W, "reduce.cu")
    with open(src, "w") as f:
        f.write(program())
    exe, why = emu_build(src, CACHE)
    if exe is None:
        print("not ok build: " + why)
        print("reduce: 1 failed")
        return 1
    rng = np.random.default_rng(20261208)
    # outer, R, inner, offset in floats, which paths: the flat reduction
    # (aligned, R % 4 == 0: several chunks, an odd inner whose windows
    # cross rows, two column tiles), the streaming two-pass kernel (R odd
    # or x misaligned) and the single pass (R < 64)
    shapes = [(2, 64, 130, 0, True), (3, 128, 131, 0, True), (1, 256, 1100, 0, False),
              (2, 100, 129, 0, True), (2, 66, 140, 0, True), (2, 128, 131, 1, True), (3, 12, 40, 0, True)]
    failed = 0
    cases = 0
    for outer, R, inner, off, special in shapes:
        x = inputs(rng, outer, R, inner, special)
        xin = os.path.join(W, "x.bin")
        x.astype(np.float32).tofile(xin)
        for bf in (0, 1):
            xr = bf16_round(x).reshape(x.shape) if bf else x
            for i, op in enumerate(OPS):
                cases += 1
                outp = os.path.join(W, "y.bin")
                r = subprocess.run([exe, str(i), str(outer), str(R), str(inner), str(off), str(bf), xin, outp],
                                   capture_output=True, text=True, timeout=600)
                name = "%s %s [%d, %d, %d]+%d" % (op, "bf16" if bf else "fp32", outer, R, inner, off)
                if r.returncode:
                    print("not ok %s: exit %d: %s" % (name, r.returncode, (r.stdout + r.stderr).strip()[-300:]))
                    failed += 1
                    continue
                path = r.stdout.strip().split("\n")[-1]
                want = reference(op, xr)
                if op.startswith("arg"):
                    got = np.fromfile(outp, dtype=np.int64).reshape(want.shape)
                    bad = np.argwhere(got != want)
                else:
                    got = np.fromfile(outp, dtype=np.float32).reshape(want.shape)
                    if op in ("sum", "mean"):
                        w = bf16_round(want.astype(np.float32)).reshape(want.shape).astype(np.float64) if bf else want
                        room = (2.0 ** -7 if bf else 1e-5) * np.maximum(np.abs(w), 1.0)
                        with np.errstate(invalid="ignore"):
                            ok = np.abs(got - w) <= room   # inf - inf is NaN: equal infinities below
                        ok |= (got == w) | (np.isnan(got) & np.isnan(w))
                    else:
                        ok = (got == want) | (np.isnan(got) & np.isnan(want))
                    bad = np.argwhere(~ok)
                if len(bad):
                    o, col = bad[0]
                    print("not ok %s (%s): %d of %d wrong, first [%d, %d]: got %s, want %s"
                          % (name, path, len(bad), want.size, o, col, got[o, col], want[o, col]))
                    failed += 1
                else:
                    print("ok %s (%s)" % (name, path))
    print("reduce: %d cases, %d failed" % (cases, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
