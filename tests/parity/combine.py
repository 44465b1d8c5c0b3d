#!/usr/bin/env python3
"""tests/parity/combine.py - a parity file from a collect run's in-run
medians and PyTorch times measured separately, with no GPU and no PyTorch.

PyTorch's side of `parity.py --from-run` does not depend on the run: the
model, its inputs and PyTorch's kernels are the same whichever collect the
ratio divides.  `parity.py --torch-only` measures that side alone (the
output checks against kbv's reference, and PyTorch timed as a user times
it) on a GPU host, whenever there is device time; this program then
divides the run's medians by it on any machine, once the run is whole:

    python3 tests/parity/parity.py --torch-only --out T.json          (GPU)
    python3 tests/parity/combine.py --from-run RUN_DIR --torch T.json  (CPU)

For each problem of T.json with in-run samples: <variant>_kbv_ms is the
median of the run's samples of that variant over every set (the worker's
own rounds; where the records name the round's input set, the mean of
the sets' medians, as analyze's time_ms, runjournal.centre), leaving out the pairs RUN_DIR/analysis.json classes as hacks
(their candidates may disturb the GPU around the baseline's calls), <variant>_ratio = kbv / torch, <variant>_choice the kernel the
run's baseline records name, and the exception is recomputed from T.json's
output-check failures ("checks") and the ratios over 1.05, with the reasons
of data/parity/known.json.  Problems without in-run samples are left out
and counted.  The output (default data/parity/<gpu>.json, or -bf16) is
written atomically; a T.json that is not a --torch-only parity file, or a
run without a journal, exits 2 naming the file.

With --torch-bf16 FILE (--torch-only --precision bf16), each problem's
record also gets the bf16 keys, and its exception covers both settings.

usage: combine.py --from-run RUN_DIR --torch FILE [--torch-bf16 FILE] [--out FILE]"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from known import exception_text  # noqa: E402
from runjournal import centre, records  # noqa: E402

RATIO_LIMIT = 1.05
TORCH_ONLY = "none: PyTorch alone (parity.py --torch-only); combine.py divides a run's medians by it"


# Candidates classed as these may disturb the GPU around the baseline's
# calls of their pair (background work, tampering): those samples say
# nothing about the baseline's own speed.
HACK_CLASSES = ("constant-output", "identity", "stale-output", "caching", "input-mutation", "deferred-work",
                "impossible-speed", "nondeterministic", "tampering")


def hack_pairs(run_dir):
    """{(set, problem)} of the pairs RUN_DIR/analysis.json classes as a
    hack, or None without an analysis.  Raises ValueError on a malformed
    one."""
    path = os.path.join(run_dir, "analysis.json")
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            a = json.load(f)
        return {(s["name"], p["problem"]) for s in a["sets"] for p in s["problems"] if p.get("class") in HACK_CLASSES}
    except (OSError, ValueError, KeyError, TypeError) as ex:
        raise ValueError(f"{path}: {ex}") from None


def run_medians(run_dir, leave_out=()):
    """{problem: {"fp32": median ms, ..., "n_fp32": samples, ...}} over
    every set of a collect run's journal, for the variants fp32, tf32 and
    bf16, without the samples of the (set, problem) pairs in leave_out."""
    times = {}
    for r in records(run_dir, None):
        if r.get("type") == "time" and r.get("variant") in ("fp32", "tf32", "bf16") and r.get("gpu_ms") is not None:
            if (r.get("set"), r.get("problem")) in leave_out:
                continue
            times.setdefault(r["problem"], {}).setdefault(r["variant"], []).append((r["gpu_ms"], r.get("input_set")))
    out = {}
    for pid, v in times.items():
        out[pid] = {k: centre(x) for k, x in v.items()}
        out[pid].update({f"n_{k}": len(x) for k, x in v.items()})
    return out


def run_choices(run_dir):
    """{(problem, variant): the kernel choice of the run's first baseline
    record of it}: what the timed baseline ran (pinned or timed)."""
    out = {}
    for r in records(run_dir, None):
        if r.get("type") == "baseline" and isinstance(r.get("choice"), str):
            out.setdefault((r.get("problem"), r.get("variant")), r["choice"])
    return out


def measure(torch_rec, inrun, choices, variants):
    """(record, failures): torch_rec (a --torch-only record) with the run's
    medians (inrun, run_medians' entry, or None) and choices divided in,
    and the failures its exception is made of.  A record that never reached
    PyTorch's side (no "checks": no baseline, no reference) is returned as
    it is, its exception the one failure."""
    res = dict(torch_rec)
    if "checks" not in res:
        return res, [res["exception"]] if res.get("exception") else []
    pid = res["id"]
    failures = list(res.get("checks") or [])
    for name in variants:
        t_torch = res.get(f"{name}_torch_ms")
        if t_torch is None:
            continue   # the output check failed or PyTorch did not run: checks says why
        if not inrun or name not in inrun:
            failures.append(f"{name}: no in-run samples")
            continue
        res[f"{name}_kbv_ms"] = inrun[name]
        res[f"{name}_kbv_samples"] = inrun.get(f"n_{name}")
        res[f"{name}_ratio"] = inrun[name] / t_torch if t_torch > 0 else None
        if (pid, name) in choices:
            res[f"{name}_choice"] = choices[(pid, name)]
    slow = [n for n in variants if (res.get(f"{n}_ratio") or 0) > RATIO_LIMIT]
    if slow:
        failures.append("slower than PyTorch: " + ", ".join(f"{n} ratio {res[n + '_ratio']:.3f}" for n in slow))
    return res, failures


def combine_problem(torch_rec, inrun, choices, variants):
    """One problem's parity record (measure), its exception recomputed with
    known.json's reasons.  Returns a new dict."""
    res, failures = measure(torch_rec, inrun, choices, variants)
    if "checks" in res:
        res["exception"] = exception_text(res["id"], "; ".join(failures), res) if failures else None
    return res


def variants_of(doc):
    return ("bf16",) if doc.get("precision") == "bf16" else ("fp32", "tf32")


def combine(torch_doc, run_dir, bf16_doc=None):
    """(the combined parity document, ids of torch_doc without in-run
    samples).  torch_doc must be a --torch-only file; bf16_doc, a
    --torch-only file of the BF16 setting, adds each problem's bf16 keys
    (bf16_ratio, ...) to its record, one exception covering both."""
    hacks = hack_pairs(run_dir)
    medians = run_medians(run_dir, hacks or ())
    choices = run_choices(run_dir)
    doc = {k: v for k, v in torch_doc.items() if k != "problems"}
    name = os.path.basename(os.path.abspath(run_dir))
    doc["method"] = {"kbv": f"in-run medians of collect's timed rounds ({name}), every set"
                            + (f", without the {len(hacks)} pairs classed as hacks" if hacks is not None
                               else " (no analysis.json: pairs of hacks included)"),
                     "torch": torch_doc["method"]["torch"]}
    bf16 = {r["id"]: r for r in (bf16_doc or {}).get("problems", [])}
    problems, absent = [], []
    for r in torch_doc["problems"]:
        pid = r["id"]
        if pid not in medians:
            absent.append(pid)
            continue
        res, failures = measure(r, medians[pid], choices, variants_of(torch_doc))
        if "checks" not in r and pid not in bf16:
            problems.append(res)   # never reached PyTorch: its exception stays as parity.py wrote it
            continue
        if pid in bf16:
            b, bfail = measure(bf16[pid], medians[pid], choices, ("bf16",))
            res.update({k: v for k, v in b.items() if k.startswith("bf16_")})
            failures += bfail
        res.pop("checks", None)
        res["exception"] = exception_text(pid, "; ".join(failures), res) if failures else None
        problems.append(res)
    doc["problems"] = problems
    return doc, absent


def load_torch_file(path):
    """A --torch-only parity file.  Raises ValueError naming the file."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as ex:
        raise ValueError(f"{path}: {ex}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("problems"), list):
        raise ValueError(f"{path}: not a parity file (no \"problems\" list)")
    if (doc.get("method") or {}).get("kbv") != TORCH_ONLY:
        raise ValueError(f"{path}: not made by parity.py --torch-only (its method.kbv is {doc.get('method', {}).get('kbv')!r})")
    if not all(isinstance(r, dict) and isinstance(r.get("id"), str) for r in doc["problems"]):
        raise ValueError(f"{path}: a problem record without an id")
    return doc


def write_atomic(path, doc):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def default_out(doc):
    gpu = "".join(c if c.isalnum() else "-" for c in str(doc.get("gpu", "gpu")).lower()).strip("-")
    return os.path.join("data", "parity", gpu + ("-bf16" if doc.get("precision") == "bf16" else "") + ".json")


def main(argv):
    ap = argparse.ArgumentParser(prog="combine.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--from-run", required=True, metavar="RUN_DIR", help="the collect run whose medians are kbv's side")
    ap.add_argument("--torch", required=True, metavar="FILE", help="PyTorch's side, from parity.py --torch-only")
    ap.add_argument("--torch-bf16", default=None, metavar="FILE",
                    help="the BF16 setting's PyTorch side (parity.py --torch-only --precision bf16): adds bf16 ratios")
    ap.add_argument("--out", default=None, help="output JSON (default data/parity/<gpu>.json or <gpu>-bf16.json)")
    args = ap.parse_args(argv[1:])
    try:
        torch_doc = load_torch_file(args.torch)
        bf16_doc = load_torch_file(args.torch_bf16) if args.torch_bf16 else None
        if bf16_doc is not None and bf16_doc.get("precision") != "bf16":
            raise ValueError(f"{args.torch_bf16}: not a file of the BF16 setting (no \"precision\": \"bf16\")")
        doc, absent = combine(torch_doc, args.from_run, bf16_doc)
    except (ValueError, OSError) as ex:
        print(f"combine: {ex}", file=sys.stderr)
        return 2
    out = args.out or default_out(doc)
    write_atomic(out, doc)
    bad = [r for r in doc["problems"] if r.get("exception")]
    print(f"combine: {len(doc['problems'])} problems, {len(bad)} with exceptions, "
          f"{len(absent)} without in-run samples left out -> {out}", file=sys.stderr)
    for r in bad:
        print(f"  {r['id']}: {r['exception']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
