#!/usr/bin/env python3
"""scripts/bf16-regnet.py [--dists D1,D3] [--seed N] [--batch B] - whether
bfloat16 arithmetic as PyTorch's eager mode does it can pass kbv collect's
BF16 check on RegNet (KernelBench level 3, problem 27) under each input
distribution, on the CPU (numpy, no GPU, no PyTorch).

Why.  The naive-bf16 candidate of L3_027 fails collect's check on D3 (the
input scaled by 0.01) by 18 of 80 elements (max 0.018), and the set listed
that as the kernel's defect "where PyTorch's own bf16 passes the check".
But parity.py applies that check to PyTorch's bf16 output on D1 inputs
only.  At D3 the first convolution's output is its bias (|b| up to 0.19)
plus a signal about a hundred times smaller than at D1, a few bfloat16
steps of the bias: any implementation that stores that output in
bfloat16 keeps only those steps, and batch norm then scales them up.

What.  Three forwards of the network on the same bf16-rounded input and
parameters (the distributions of docs/DESIGN.md 5: D1 x ~ U[0, 1); D2 x3,
D3 x0.01, D4 x(-1); in D2-D4 batch norm's weight ~ U[0.5, 1.5) and bias
~ U[-0.5, 0.5); convolution and linear parameters PyTorch's default
U(-1/sqrt(fan_in), 1/sqrt(fan_in))), drawn with numpy (not kbv's
generator: the statistics matter here, not the values):
  - the reference: float64 throughout (collect's is float32);
  - "eager": every layer's output rounded to bfloat16 with float
    arithmetic inside the layer, the convolution's bias added in a pass of
    its own (two roundings), as PyTorch runs bf16 convolutions;
  - "fused": the same with the bias added before the one rounding, as the
    naive-bf16 candidate and kbv's bf16 baseline chain do.
Each is judged by collect's rule, |out - ref| <= max(1e-2 min(1, max
|ref|), 2^-23) + 1e-2 |ref|, and the script prints the mismatches and the
largest error per distribution.  --batch below 8 runs faster but changes
the batch statistics (the problem's batch is 8).  Takes about a minute a
forward at batch 8 on two cores.
"""
import argparse
import sys

import numpy as np


def bf16(a):
    """a rounded to the nearest bfloat16 (ties to even), as float32."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32)
    r = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)).astype(np.uint32)
    out = r.view(np.float32)
    return np.where(np.isfinite(a), out, a)


def conv3x3(x, w, dtype):
    """3x3 convolution, stride 1, padding 1, no bias: x [N, C, H, W], w
    [O, C, 3, 3], accumulated in dtype, one image at a time."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    xp = np.pad(x.astype(dtype), ((0, 0), (0, 0), (1, 1), (1, 1)))
    wm = w.reshape(o, c * 9).astype(dtype)
    y = np.empty((n, o, h, wd), dtype=dtype)
    for i in range(n):
        s = xp[i].strides
        cols = np.lib.stride_tricks.as_strided(xp[i], shape=(c, 3, 3, h, wd),
                                               strides=(s[0], s[1], s[2], s[1], s[2]))
        y[i] = (wm @ cols.reshape(c * 9, h * wd)).reshape(o, h, wd)
    return y


def batchnorm(x, g, b, dtype, eps=1e-5):
    """training mode: batch statistics per channel, biased variance."""
    x = x.astype(dtype)
    m = x.mean(axis=(0, 2, 3), keepdims=True, dtype=np.float64).astype(dtype)
    v = ((x - m) ** 2).mean(axis=(0, 2, 3), keepdims=True, dtype=np.float64).astype(dtype)
    return (x - m) / np.sqrt(v + dtype(eps)) * g.reshape(1, -1, 1, 1) + b.reshape(1, -1, 1, 1)


def maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def params(rng, dist):
    """Per stage: (w1, b1, g1, be1, w2, b2, g2, be2); then the linear layer."""
    stages, cin = [], 3
    hidden = dist in ("D2", "D3", "D4")
    for w in (64, 128, 256):
        st = []
        for ci in (cin, w):
            k = 1 / np.sqrt(ci * 9)
            st.append(rng.uniform(-k, k, (w, ci, 3, 3)))
            st.append(rng.uniform(-k, k, w))
            st.append(rng.uniform(0.5, 1.5, w) if hidden else np.ones(w))
            st.append(rng.uniform(-0.5, 0.5, w) if hidden else np.zeros(w))
        stages.append(st)
        cin = w
    k = 1 / np.sqrt(256)
    return stages, rng.uniform(-k, k, (10, 256)), rng.uniform(-k, k, 10)


def forward(x, stages, fw, fb, mode):
    """mode: ref (float64), eager or fused (bfloat16 storage)."""
    dt = np.float64 if mode == "ref" else np.float32
    r = (lambda a: a.astype(np.float64)) if mode == "ref" else bf16
    h = x
    for w1, b1, g1, be1, w2, b2, g2, be2 in stages:
        for w, b, g, be in ((w1, b1, g1, be1), (w2, b2, g2, be2)):
            y = conv3x3(h, w, dt)
            if mode == "eager":
                y = r(r(y) + b.reshape(1, -1, 1, 1).astype(dt))
            else:
                y = r(y + b.reshape(1, -1, 1, 1).astype(dt))
            y = r(batchnorm(y, g.astype(dt), be.astype(dt), dt))
            h = np.maximum(y, 0)
        h = maxpool2(h)
    pooled = r(h.mean(axis=(2, 3), dtype=np.float64).astype(dt))
    return r(pooled @ fw.T.astype(dt) + fb.astype(dt))


def rule(out, ref):
    """collect's BF16 check: (mismatches, count, max |d|, atol)."""
    atol = max(1e-2 * min(1.0, float(np.abs(ref).max())), 2.0 ** -23)
    d = np.abs(out.astype(np.float64) - ref)
    miss = ~(d <= atol + 1e-2 * np.abs(ref))
    return int(miss.sum()), ref.size, float(d.max()), atol


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dists", default="D1,D3", help="comma-separated, of D1 D2 D3 D4 (default D1,D3)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--size", type=int, default=224, help="input height and width (the problem's: 224)")
    a = ap.parse_args()
    scale = {"D1": 1.0, "D2": 3.0, "D3": 0.01, "D4": -1.0}
    for dist in a.dists.split(","):
        if dist not in scale:
            print(f"bf16-regnet: unknown distribution {dist!r}", file=sys.stderr)
            return 2
        rng = np.random.default_rng(a.seed)
        x = bf16(rng.uniform(0, 1, (a.batch, 3, a.size, a.size)) * scale[dist])
        stages, fw, fb = params(rng, dist)
        stages = [[bf16(p) for p in st] for st in stages]
        fw, fb = bf16(fw), bf16(fb)
        ref = forward(x, stages, fw, fb, "ref")
        for mode in ("eager", "fused"):
            bad, n, mx, atol = rule(forward(x, stages, fw, fb, mode), ref)
            print(f"{dist} {mode:5s}: {bad} of {n} elements beyond the BF16 tolerance "
                  f"(max |d| {mx:.3g}, atol {atol:.3g}, max |ref| {np.abs(ref).max():.3g})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
