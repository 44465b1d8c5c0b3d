#!/usr/bin/env python3
"""tests/gpu/replay.py BUILD_DIR - the recurrent baselines replayed as a
CUDA graph (collect/baselines/problems/rnn.cu) compute what their direct
launch computes.

For each recurrent network below and each variant (fp32, tf32): one
baseline handle is created on D1 inputs and called once (the direct call,
after which it captures its graph); then it is called on inputs drawn with
another seed into tensors at other addresses (the graph's staging path),
and a second, fresh handle is called once, directly, on those same inputs.
The two outputs must be equal bit for bit (the same cuDNN kernels on the
same inputs), the first handle's choice must say that it replays a graph,
and a third call of the first handle on the first inputs must repeat its
first output.  Needs PyTorch (the tensors) and a GPU; prints one line per
case and `N passed, N failed`."""
import ctypes
import json
import os
import subprocess
import sys

import torch

PROBLEMS = ["L3_034_vanillarnnhidden", "L3_035_lstm", "L3_036_lstmhn", "L3_039_gru",
            "L3_042_grubidirectionalhidden"]


def tensors(lib, p, seed, sp, err):
    """D1 inputs of p drawn by kbv's generator with seed, and empty outputs."""
    ins = [torch.empty(t["shape"], dtype=torch.float32, device="cuda") for t in p["inputs"]]
    for i, t in enumerate(ins):
        if lib.kbvb_gen(p["id"].encode(), i, 1, ctypes.c_ulonglong(seed), 0, ctypes.c_void_p(t.data_ptr()), sp,
                        err, 2048):
            raise RuntimeError("kbv generator: " + err.value.decode())
    outs = [torch.empty(t["shape"], dtype=torch.float32, device="cuda") for t in p["outputs"]]
    return ins, outs


def bf16(t):
    """A bfloat16 copy of a float tensor (rounded to nearest even, as kbv
    rounds the BF16 setting's inputs); other tensors as they are."""
    return t.to(torch.bfloat16) if t.dtype == torch.float32 else t


def ptrs(ts):
    return (ctypes.c_void_p * len(ts))(*[t.data_ptr() for t in ts])


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    lib = ctypes.CDLL(os.path.join(build, "libkbv_baseline.so"))
    lib.kbvb_choice.restype = ctypes.c_char_p
    listing = json.loads(subprocess.check_output([os.path.join(build, "kbv-list"), "--json"]))
    byid = {p["id"]: p for p in listing["problems"]}
    sp = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    err = ctypes.create_string_buffer(2048)
    passed = failed = 0

    def verdict(ok, what):
        nonlocal passed, failed
        print(("ok   " if ok else "FAIL ") + what)
        if ok:
            passed += 1
        else:
            failed += 1

    for pid in PROBLEMS:
        p = byid.get(pid)
        if p is None:
            verdict(False, f"{pid}: not in kbv list")
            continue
        fp32_out = None
        for variant, name in ((0, "fp32"), (1, "tf32"), (2, "bf16")):
            handles = []
            try:
                a_in, a_out = tensors(lib, p, 7, sp, err)
                b_in, b_out = tensors(lib, p, 8, sp, err)
                c_out = [torch.empty_like(t) for t in b_out]
                torch.cuda.synchronize()
                # Created on float tensors, as the worker creates a
                # baseline (with the reference's call) in both settings.
                for ins, outs in ((a_in, a_out), (b_in, c_out)):
                    h = ctypes.c_void_p()
                    if lib.kbvb_create(pid.encode(), ptrs(ins), ptrs(outs), sp, ctypes.byref(h), err, 2048):
                        raise RuntimeError("create: " + err.value.decode())
                    handles.append(h)
                first, fresh = handles
                if variant == 2:   # the BF16 setting's calls: bfloat16 copies
                    a_in, b_in = [bf16(t) for t in a_in], [bf16(t) for t in b_in]
                    a_out, b_out, c_out = [bf16(t) for t in a_out], [bf16(t) for t in b_out], [bf16(t) for t in c_out]

                def call(h, ins, outs):
                    if lib.kbvb_run(h, variant, ptrs(ins), ptrs(outs), sp, err, 2048):
                        raise RuntimeError("run: " + err.value.decode())
                    torch.cuda.synchronize()

                call(first, a_in, a_out)                  # direct, then the capture
                direct_a = a_out[0].clone()
                call(first, b_in, b_out)                  # the graph, on staged inputs
                call(fresh, b_in, c_out)                  # a fresh handle's direct call
                a_out[0].fill_(float("nan"))
                call(first, a_in, a_out)                  # the graph again, on the first inputs
                choice = (lib.kbvb_choice(first, variant) or b"").decode(errors="replace")
                verdict("replayed as one CUDA graph" in choice, f"{pid} {name}: the choice names the replay ({choice})")
                if variant == 0:
                    fp32_out = direct_a.float()
                elif variant == 2:
                    # cuDNN's bfloat16 RNN, not the widened fallback, and
                    # the same network: within bfloat16's error of fp32.
                    verdict(choice.startswith("native bf16"), f"{pid} bf16: the native path ran ({choice})")
                    if fp32_out is not None:
                        d = float((direct_a.float() - fp32_out).abs().max())
                        scale = float(fp32_out.abs().max())
                        verdict(d <= 3e-2 * max(scale, 1e-6),
                                f"{pid} bf16: within bfloat16's error of the fp32 output "
                                f"(max |d| {d:.3g}, max |fp32| {scale:.3g})")
                verdict(torch.equal(b_out[0], c_out[0]),
                        f"{pid} {name}: the graph's output on new inputs equals a direct call's "
                        f"(max |d| {float((b_out[0] - c_out[0]).abs().max()):.3g})")
                verdict(torch.equal(a_out[0], direct_a), f"{pid} {name}: the graph repeats the direct call's output")
                verdict(not torch.equal(b_out[0], direct_a), f"{pid} {name}: other inputs give another output")
            except RuntimeError as ex:
                verdict(False, f"{pid} {name}: {ex}")
            finally:
                for h in handles:
                    lib.kbvb_destroy(h)
                torch.cuda.empty_cache()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
