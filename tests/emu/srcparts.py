"""srcparts.py - pieces of kbv's CUDA sources, as they are, for the CPU
harnesses that run baseline kernels under the emulator."""
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PROB = os.path.join(ROOT, "collect", "baselines", "problems")


def source(name):
    """The text of collect/baselines/problems/<name>."""
    return open(os.path.join(PROB, name)).read()


def definition(text, start, what="the source"):
    """The definition in text that begins with `start`, to its end: the
    first line that is "}" alone after it."""
    i = text.find(start)
    if i < 0:
        raise SystemExit("srcparts: %s not found in %s" % (start.splitlines()[0], what))
    j = text.find("\n}\n", i)
    return text[i:j + 3]


def base_device_helpers():
    """base_impl.h's device helpers that the kernels call: the bfloat16
    vector accesses and block_sum2."""
    text = source("base_impl.h")
    return "\n".join(definition(text, s, "base_impl.h") for s in (
        "__device__ __forceinline__ float4 base_ld4_bf16(",
        "__device__ __forceinline__ void base_st4_bf16(",
        "__device__ __forceinline__ void base_ld8_bf16(",
        "__device__ __forceinline__ void base_st8_bf16(",
        "__device__ __forceinline__ void block_sum2(")) + "\n"


def emu_build(src_path, cache, objs=()):
    """Compiles the CUDA program src_path for the emulator (xform.py, then
    g++ with the emulator's object, made once in cache, and objs): (the
    executable, "") or (None, the compiler's complaint)."""
    here = os.path.dirname(os.path.abspath(__file__))
    emu_o = os.path.join(cache, "emu1.o")
    if not os.path.exists(emu_o):
        subprocess.run(["g++", "-std=c++17", "-O1", "-DEMU_CLUSTER=1", "-I" + here, "-I" + os.path.join(ROOT, "include"),
                        "-c", os.path.join(here, "emu.cpp"), "-o", emu_o], check=True)
    cpp, exe = src_path + ".cpp", src_path + ".exe"
    subprocess.run([sys.executable, os.path.join(here, "xform.py"), src_path, cpp], check=True)
    inc = ["-I" + os.path.join(ROOT, d) for d in ("include", "common", "collect/suite", "collect/suite/problems")]
    r = subprocess.run(["g++", "-std=c++20", "-O1", "-w", "-I" + here] + inc + ["-o", exe, cpp, emu_o] + list(objs) +
                       ["-lm"], capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr[-3000:]
    return exe, ""


def bf16_round(a):
    """a rounded to bfloat16 (to nearest even, as __float2bfloat16_rn),
    as float32."""
    b = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = (((b + 0x7fff + ((b >> 16) & 1)) >> 16) & 0xffff).astype(np.uint32) << 16
    return r.view(np.float32)


def run_xp(exe, folder, x, params):
    """Runs a harness of harness_io.h's kind on x and params (written as
    float32 files in folder): (its fp32 output, its bf16 output as
    float32, "") as flat arrays, or (None, None, what it said on failing)."""
    xp, pp, outp = (os.path.join(folder, n) for n in ("x.bin", "p.bin", "y.bin"))
    x.astype(np.float32).tofile(xp)
    params.astype(np.float32).tofile(pp)
    r = subprocess.run([exe, xp, pp, outp], capture_output=True, text=True, timeout=600)
    if r.returncode:
        return None, None, "exit %d: %s" % (r.returncode, (r.stdout + r.stderr).strip()[-400:])
    return np.fromfile(outp, dtype=np.float32), np.fromfile(outp + ".bf16", dtype=np.float32), ""
