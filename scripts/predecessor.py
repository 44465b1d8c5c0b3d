#!/usr/bin/env python3
"""scripts/predecessor.py RUN_DIR [--min N] [--top K] [--json FILE] - does
what ran just before a timed call change its time?

collect times the variants of a round (fp32, tf32 or bf16 baselines and the
candidate) in a secretly shuffled order, and the journal keeps them in the
order they ran.  For every (set, problem, variant) this groups the samples
by the variant that ran just before in the same round ("start" for the
first of a round) and compares the medians of the groups: the spread is
(largest median - smallest) / smallest, over the groups with at least N
samples (default 8).  Without an effect the spread is noise (a fraction of a
percent); DESIGN.md 5a step 7's pre-roll exists because it was not (tf32
GEMMs up to 22% slower after a long FMA-bound candidate on the H200).

Prints, per variant and call length, the median, 90th percentile and
largest spread and the pair that had it, then the K pairs with the largest
spread (default 10), with each pre-roll count the time records name.
--json writes every row.  A run is a folder with samples.jsonl or
samples.jsonl.gz."""
import argparse
import collections
import json
import os
import statistics
import sys

from runjournal import records




def bucket(ms):
    for lim, name in ((0.05, "< 0.05 ms"), (0.2, "< 0.2 ms"), (1.0, "< 1 ms"), (3.0, "< 3 ms")):
        if ms < lim:
            return name
    return ">= 3 ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run")
    ap.add_argument("--min", type=int, default=8, help="samples a group needs (default 8)")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--json")
    a = ap.parse_args()
    rounds = collections.defaultdict(list)   # (set, problem, round) -> [(variant, gpu_ms)] in journal order
    preroll = {}
    for r in records(a.run, "predecessor", "time"):
        if r.get("same_as"):
            continue  # not a call of its own (the fp32 sample recorded for tf32)
        key = (r["set"], r["problem"])
        rounds[key + (r["round"],)].append((r["variant"], r["gpu_ms"]))
        if "preroll" in r:
            preroll[key + (r["variant"],)] = r["preroll"]
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    for (s, p, _), calls in rounds.items():
        for i, (v, ms) in enumerate(calls):
            groups[(s, p, v)][calls[i - 1][0] if i else "start"].append(ms)
    rows = []
    for (s, p, v), by in groups.items():
        meds = {prev: statistics.median(x) for prev, x in by.items() if len(x) >= a.min}
        if len(meds) < 2 or min(meds.values()) <= 0:
            continue
        lo = min(meds.values())
        rows.append({"set": s, "problem": p, "variant": v, "spread": (max(meds.values()) - lo) / lo,
                     "median_ms": statistics.median([x for xs in by.values() for x in xs]),
                     "medians_by_previous": meds, "preroll": preroll.get((s, p, v))})
    if not rows:
        sys.exit("predecessor: %s has no variant with two groups of %d samples" % (a.run, a.min))
    table = collections.defaultdict(list)
    for r in rows:
        table[(r["variant"], bucket(r["median_ms"]))].append(r)
    print("%-10s %-10s %5s %9s %9s %9s  %s" % ("variant", "call", "n", "median", "p90", "largest", "pair"))
    order = {"< 0.05 ms": 0, "< 0.2 ms": 1, "< 1 ms": 2, "< 3 ms": 3, ">= 3 ms": 4}
    for (v, b) in sorted(table, key=lambda k: (k[0], order[k[1]])):
        xs = sorted(table[(v, b)], key=lambda r: r["spread"])
        n = len(xs)
        print("%-10s %-10s %5d %8.2f%% %8.2f%% %8.2f%%  %s/%s" % (
            v, b, n, 100 * xs[n // 2]["spread"], 100 * xs[min(n - 1, int(n * 0.9))]["spread"],
            100 * xs[-1]["spread"], xs[-1]["set"], xs[-1]["problem"]))
    print("\nlargest %d spreads:" % min(a.top, len(rows)))
    for r in sorted(rows, key=lambda r: -r["spread"])[: a.top]:
        meds = ", ".join("after %s %.4g" % (k, m) for k, m in sorted(r["medians_by_previous"].items()))
        pre = "" if r["preroll"] is None else ", preroll %d" % r["preroll"]
        print("  %6.2f%%  %-10s %-6s %s (%s%s)" % (100 * r["spread"], r["set"], r["variant"], r["problem"], meds, pre))
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump(rows, f, indent=1, sort_keys=True)
        os.replace(a.json + ".tmp", a.json)


if __name__ == "__main__":
    main()
