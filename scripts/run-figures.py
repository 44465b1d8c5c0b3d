#!/usr/bin/env python3
"""run-figures.py RUN_DIR [--parity FILE]... [--top N] - the figures the
README and an issue note quote about a run, as Markdown tables.

From RUN_DIR/analysis.json (run `kbv analyze RUN_DIR` first): per set, the
class counts and the geometric-mean speedup of the correct problems against
each baseline the set was timed against, with its 95% interval; and per
level, the speedup against the fast baseline (tf32 for fp32 sets, bf16 for
bf16 sets).  From the journal: the collect time per set (the sum of worker
seconds; the suite issue's speed figure) and the N slowest pairs.  From
each parity file given (data/parity/<gpu>.json, its -bf16 twin, or a run's
parity.json): the N highest ratios of each baseline with their exceptions,
and where the file has them (parity.py --precision bf16 records
bf16_torch_collect_check), the problems whose PyTorch bf16 eager output
itself fails collect's BF16 check against the float reference: a bf16
candidate failing there measures the tolerance as much as the candidate.
"""
import argparse
import json
import os
import signal
import sys

from runjournal import pair_seconds

HACKS = ("constant-output", "identity", "stale-output", "caching", "input-mutation", "deferred-work",
         "impossible-speed", "nondeterministic", "tampering")


def interval(g):
    """'0.31x [0.26, 0.36]' from an analysis geomean object, or '-'."""
    if not g or g.get("estimate") is None:
        return "-"
    if g.get("ci_low") is None or g.get("ci_high") is None:
        return "%.2fx" % g["estimate"]
    return "%.2fx [%.2f, %.2f]" % (g["estimate"], g["ci_low"], g["ci_high"])


def fast_baseline(s):
    return "bf16" if s.get("precision") == "bf16" else "tf32"


def headline(a):
    print("| set | precision | correct | hidden-fail | hack | incorrect | error | no candidate "
          "| geomean vs strict fp32 | geomean vs tf32 | geomean vs bf16 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in a["sets"]:
        c = s["counts"]
        b = s["baselines"]
        cells = [interval((b.get(v) or {}).get("geomean_speedup_correct")) for v in ("fp32", "tf32", "bf16")]
        print("| %s | %s | %d | %d | %d | %d | %d | %d | %s |" % (
            s["name"], s.get("precision", "fp32"), c.get("correct", 0), c.get("hidden-fail", 0),
            sum(c.get(h, 0) for h in HACKS), c.get("incorrect", 0), c.get("error", 0), c.get("missing", 0),
            " | ".join(cells)))
    print("\n(geometric means over the correct problems, 95% bootstrap intervals; "
          "speedups are medians of per-round ratios.)\n")
    levels = sorted({lv["level"] for s in a["sets"] for lv in s.get("levels", [])})
    print("| set | fast baseline | " + " | ".join("%s: correct, geomean" % lv for lv in levels) + " |")
    print("|---|---|" + "---|" * len(levels))
    for s in a["sets"]:
        fb = fast_baseline(s)
        by = {lv["level"]: lv for lv in s.get("levels", [])}
        cells = []
        for lv in levels:
            x = by.get(lv)
            if not x:
                cells.append("-")
                continue
            g = (x["baselines"].get(fb) or {}).get("geomean_speedup_correct")
            cells.append("%d/%d, %s" % (x["counts"].get("correct", 0), x["n_problems"], interval(g)))
        print("| %s | %s | %s |" % (s["name"], fb, " | ".join(cells)))
    print()


def collect_time(run, top):
    sets, pairs = pair_seconds(run, "run-figures")
    if not pairs:
        print("(the journal has no worker status yet)\n")
        return
    print("| set | pairs timed | collect time |")
    print("|---|---|---|")
    for name, s in sorted(sets.items()):
        print("| %s | %d | %.1f min |" % (name, s["pairs"], s["seconds"] / 60))
    print("| all | %d | %.1f min |\n" % (len(pairs), sum(p[0] for p in pairs) / 60))
    print("| slowest pairs | time | phases |")
    print("|---|---|---|")
    for sec, st, prob, _status, det in sorted(pairs, reverse=True)[:top]:
        print("| %s %s | %.1f s | %s |" % (st, prob.split("_")[0] + "_" + prob.split("_")[1], sec,
                                          det.replace("seconds: ", "")))
    print()


def parity_worst(path, top):
    try:
        with open(path) as f:
            doc = json.load(f)
        probs = doc["problems"]
    except (OSError, ValueError, KeyError, TypeError) as ex:
        sys.exit("run-figures: %s: %s" % (path, ex))
    print("Parity, %s (%s):\n" % (os.path.basename(path), (doc.get("method") or {}).get("kbv", "method not given")))
    for key in ("fp32_ratio", "tf32_ratio", "bf16_ratio"):
        rows = [(r[key], r["id"], r.get("exception") or "") for r in probs if isinstance(r.get(key), (int, float))]
        if not rows:
            continue
        over = sum(1 for v, _, _ in rows if v > 1.05)
        print("%s: %d problems, %d over 1.05\n" % (key.split("_")[0], len(rows), over))
        print("| problem | ratio | exception |")
        print("|---|---|---|")
        for v, pid, ex in sorted(rows, reverse=True)[:top]:
            print("| %s | %.3f | %s |" % (pid, v, ex[:140] + ("..." if len(ex) > 140 else "")))
        print()
    bf16_tolerance(probs)


def bf16_tolerance(probs):
    """The problems where PyTorch's bf16 eager fails collect's BF16 check
    (all of them, worst share of mismatches first), beside kbv's bf16
    baseline judged the same way."""
    judged = [r for r in probs if isinstance(r.get("bf16_torch_collect_check"), dict)]
    if not judged:
        return
    fails = [r for r in judged if not r["bf16_torch_collect_check"].get("pass")]
    print("PyTorch's bf16 eager under collect's BF16 check (max(1e-2 min(1, max|ref|), 2^-23) + 1e-2 |ref| against the "
          "float computation on the same rounded inputs): %d of %d problems fail\n" % (len(fails), len(judged)))
    if not fails:
        return
    def share(c):
        return c.get("mismatches", 0) / max(1, c.get("count", 0))
    print("| problem | PyTorch bf16: mismatches | max abs err | max abs ref | kbv bf16 baseline: mismatches |")
    print("|---|---|---|---|---|")
    for r in sorted(fails, key=lambda r: -share(r["bf16_torch_collect_check"])):
        c, k = r["bf16_torch_collect_check"], r.get("bf16_kbv_collect_check")
        kb = "%d of %d" % (k["mismatches"], k["count"]) if isinstance(k, dict) else "-"
        print("| %s | %d of %d | %.3g | %.3g | %s |" % (r["id"], c["mismatches"], c["count"], c["max_abs_err"],
                                                      c["ref_absmax"], kb))
    print()


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run")
    ap.add_argument("--parity", action="append", default=[], metavar="FILE")
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args()
    path = os.path.join(a.run, "analysis.json")
    try:
        with open(path) as f:
            analysis = json.load(f)
        analysis["sets"]
    except (OSError, ValueError, KeyError, TypeError) as ex:
        sys.exit("run-figures: %s: %s (run kbv analyze %s first)" % (path, ex, a.run))
    headline(analysis)
    collect_time(a.run, a.top)
    for p in a.parity:
        parity_worst(p, a.top)


if __name__ == "__main__":
    main()
