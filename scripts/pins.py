#!/usr/bin/env python3
"""scripts/pins.py RUN_DIR [--bench FILE] [--out FILE] - a table of baseline
kernel choices (kbv-pins/1) from a collect run, for `kbv collect --pins FILE`.

Each worker's baselines choose among a library's GEMM kernels and cuDNN's
convolution algorithms by timing and journal their choices as base_pin
text (the "pins" of "baseline" records; convpin.h for the convolutions').
With --bench FILE the choices come instead from kbv-baseline-bench's
output (its fp32_pins and tf32_pins, every problem it ran), and RUN_DIR
only gives the device (a collect run on the same GPU, its manifest); the
bench does not time the bf16 baselines, so their choices (bf16 linear
layers, "bf16.lin:...") come only from a run's journal, and --merge FILE
keeps an existing table's entries that the new source lacks.  Collected once and committed as data/baselines/<gpu>.json, the
table makes later runs on the same GPU model and cuBLAS run the same
kernels without timing them again (issue 15).  Per problem and variant the
first worker's pins in journal order are kept; the GPU name and cuBLAS version
come from the run's manifest.  Writes FILE (default stdout) atomically and
prints how many problems it pins and how many had differing choices."""
import argparse
import gzip
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--bench", default=None, metavar="FILE",
                    help="kbv-baseline-bench output (one JSON object a line) instead of RUN_DIR's journal")
    ap.add_argument("--out", default=None)
    ap.add_argument("--merge", default=None, metavar="FILE",
                    help="a kbv-pins/1 table whose choices stay where the new source has none for that "
                         "problem and variant (e.g. the bench's fp32/tf32 table, adding a run's bf16 pins)")
    a = ap.parse_args()
    try:
        with open(os.path.join(a.run_dir, "manifest.json")) as f:
            dev = json.load(f)["device"]
    except (OSError, ValueError, KeyError) as ex:
        print(f"pins: {a.run_dir}/manifest.json: {ex}", file=sys.stderr)
        return 2
    if a.bench:
        return write(a, dev, *from_bench(a.bench))
    path = os.path.join(a.run_dir, "samples.jsonl")
    opener = open
    if not os.path.exists(path):
        path += ".gz"
        opener = gzip.open
    first, seen, differ = {}, {}, set()
    try:
        with opener(path, "rt") as f:
            for line in f:
                if '"baseline"' not in line:
                    continue
                r = json.loads(line)
                if r.get("type") != "baseline" or not r.get("pins"):
                    continue
                pid, var = r["problem"], r["variant"]
                # the first set that journaled this variant (a bf16 set's
                # records come from other sets than the fp32 ones)
                if (pid, var) not in first:
                    first[(pid, var)] = r["set"]
                if first[(pid, var)] == r["set"]:
                    seen.setdefault(pid, {})[var] = r["pins"]
                elif seen[pid][var] != r["pins"]:
                    differ.add(pid)
    except (OSError, ValueError) as ex:
        print(f"pins: {path}: {ex}", file=sys.stderr)
        return 2
    return write(a, dev, seen, differ)


def from_bench(path):
    """(seen, differ) from kbv-baseline-bench lines: every problem with pins."""
    seen = {}
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                r = json.loads(line)
                for k in ("fp32", "tf32"):
                    if r.get(k + "_pins"):
                        seen.setdefault(r["id"], {})[k] = r[k + "_pins"]
    except (OSError, ValueError, KeyError) as ex:
        raise SystemExit(f"pins: {path}: {ex}")
    return seen, set()


def variant_of(piece):
    """The variant a pin belongs to: a bf16 linear layer's, a convolution's
    by its role (f and the reference r are fp32's, t is tf32's), else a GEMM
    key, whose first field is the variant (0 fp32, 1 tf32, 2 bf16)."""
    if piece.startswith("bf16."):
        return "bf16"
    if piece.startswith("conv."):
        return {"f": "fp32", "r": "fp32", "t": "tf32", "b": "bf16"}.get(piece[5:6], "fp32")
    return {"0": "fp32", "1": "tf32", "2": "bf16"}.get(piece.split(",", 1)[0], "fp32")


def merge(path, dev, seen):
    """seen with the choices of the table at path added where seen has none
    for the problem and variant; the table must be for the same GPU and
    cuBLAS."""
    try:
        with open(path) as f:
            old = json.load(f)
        if old.get("schema") != "kbv-pins/1" or not isinstance(old.get("problems"), dict):
            raise ValueError("not a kbv-pins/1 table")
        if (old.get("gpu"), old.get("cublas")) != (dev.get("name", ""), dev.get("cublas", "")):
            raise ValueError("made for %s (cuBLAS %s), not %s (cuBLAS %s)" % (
                old.get("gpu"), old.get("cublas"), dev.get("name", ""), dev.get("cublas", "")))
    except (OSError, ValueError) as ex:
        raise SystemExit(f"pins: --merge {path}: {ex}")
    out = {p: dict(v) for p, v in seen.items()}
    for pid, text in old["problems"].items():
        by = {}
        for piece in filter(None, text.split(";")):
            by.setdefault(variant_of(piece), []).append(piece)
        for var, pieces in by.items():
            out.setdefault(pid, {}).setdefault(var, ";".join(pieces))
    return out


def write(a, dev, seen, differ):
    if a.merge:
        seen = merge(a.merge, dev, seen)
    doc = {"schema": "kbv-pins/1", "gpu": dev.get("name", ""), "cublas": dev.get("cublas", ""),
           "problems": {p: ";".join(v[k] for k in ("fp32", "tf32", "bf16") if k in v) for p, v in sorted(seen.items())}}
    text = json.dumps(doc, indent=1) + "\n"
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, a.out)
    else:
        sys.stdout.write(text)
    print(f"pins: {len(doc['problems'])} problems pinned for {doc['gpu']} (cuBLAS {doc['cublas']}); "
          f"{len(differ)} chose differently in another set: {', '.join(sorted(differ)) or 'none'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
