#!/usr/bin/env python3
"""scripts/compare-runs.py RUN_A RUN_B [--json FILE] - how far two collects
of the same candidates on the same GPU disagree (the baselines issue's
run-to-run figure).

For every (set, problem, variant) timed in both runs: the median event time
of each run (where the records name the round's input set, the mean of the
sets' medians, as analyze's time_ms: runjournal.centre), their ratio B/A and the relative deviation |B/A - 1|; and
whether the baselines chose the same kernels (the "pins" of the baseline
records).  Prints the largest deviations per variant and a one-line summary;
--json writes every row.  A run is a folder with manifest.json and
samples.jsonl or samples.jsonl.gz, or a .tar.gz of one."""
import argparse
import gzip
import json
import os
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runjournal import centre  # noqa: E402


def open_run(path, tmp):
    if path.endswith(".tar.gz"):
        with tarfile.open(path) as t:
            t.extractall(tmp, filter="data")
        # The suite's archive also carries files beside the run folder
        # (suite.harness, suite.commits): the run is the one folder with
        # a manifest.
        runs = [d for d in os.listdir(tmp) if os.path.isfile(os.path.join(tmp, d, "manifest.json"))]
        if len(runs) != 1:
            raise ValueError(f"{path}: holds {len(runs)} run folders, not one")
        path = os.path.join(tmp, runs[0])
    return path


def read_run(path):
    fn = os.path.join(path, "samples.jsonl")
    opener = open
    if not os.path.exists(fn):
        fn += ".gz"
        opener = gzip.open
    times, pins = {}, {}
    with opener(fn, "rt") as f:
        for line in f:
            i = line.find("{")
            try:
                r = json.loads(line[i:])
            except ValueError:
                continue
            if r.get("type") == "time" and r.get("gpu_ms") is not None and not r.get("same_as"):
                times.setdefault((r["set"], r["problem"], r["variant"]), []).append((r["gpu_ms"], r.get("input_set")))
            elif r.get("type") == "baseline" and r.get("pins"):
                pins[(r["set"], r["problem"], r["variant"])] = r["pins"]
    return {k: centre(v) for k, v in times.items()}, pins


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_a")
    ap.add_argument("run_b")
    ap.add_argument("--json", default=None)
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as ta, tempfile.TemporaryDirectory() as tb:
        try:
            ma, pa = read_run(open_run(a.run_a, ta))
            mb, pb = read_run(open_run(a.run_b, tb))
        except (OSError, ValueError, KeyError, tarfile.TarError) as ex:
            print(f"compare-runs: {ex}", file=sys.stderr)
            return 2
    rows = []
    for k in sorted(set(ma) & set(mb)):
        ratio = mb[k] / ma[k] if ma[k] > 0 else float("nan")
        rows.append({"set": k[0], "problem": k[1], "variant": k[2], "median_a_ms": ma[k], "median_b_ms": mb[k],
                     "ratio": ratio, "deviation": abs(ratio - 1), "same_kernel": pa.get(k) == pb.get(k)})
    if not rows:
        print("compare-runs: the runs share no timed (set, problem, variant)", file=sys.stderr)
        return 1
    for variant in ("candidate", "fp32", "tf32", "bf16"):
        vr = sorted((r for r in rows if r["variant"] == variant), key=lambda r: -r["deviation"])
        if not vr:
            continue
        print(f"{variant}: largest deviation {vr[0]['deviation'] * 100:.2f}% over {len(vr)} problems")
        for r in vr[:a.top]:
            print(f"  {r['problem']:<50} {r['median_a_ms']:9.4f} {r['median_b_ms']:9.4f} ms  "
                  f"{(r['ratio'] - 1) * 100:+6.2f}%{'' if r['same_kernel'] else '  (other kernel)'}")
    worst = max(rows, key=lambda r: r["deviation"])
    over = sum(r["deviation"] > 0.02 for r in rows)
    print(f"{len(rows)} medians compared; {over} differ by more than 2%; worst {worst['problem']} "
          f"{worst['variant']} {worst['deviation'] * 100:.2f}%")
    if a.json:
        tmp = a.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"run_a": a.run_a, "run_b": a.run_b, "rows": rows}, f, indent=1)
        os.replace(tmp, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
