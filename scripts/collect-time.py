#!/usr/bin/env python3
"""collect-time.py RUN_DIR [--top N] [--rounds] [--fixed] - where a run's collect time went.

Reads the run's journal (samples.jsonl or samples.jsonl.gz) and prints, per
set, the number of pairs and the sum of their worker seconds (each status
record's "seconds": the worker's life from start to its status, which is
what one GPU spends on the pair), the phase totals the status detail names
(setup, checks, probes, timing, memory), and the N slowest pairs (default
10).  The sum over all sets is the GPU time of a one-GPU collect without
the builds, which run before the first pair.  The suite issue's speed
target is this figure for one candidate set: at most 20 minutes.

--fixed adds, per set and phase, a least-squares fit of the phase's
seconds against the candidate's median timed call: the intercept is what
the phase costs a pair whatever its kernel (process and context start,
scrubs, allocations, synchronisations), the slope how many candidate
calls' worth of work it does.  The intercepts times the pairs are the part
of a set's collect time that faster candidates would not shorten.

--rounds adds, per set, how many timed pairs stopped at the protocol's
minimum of rounds (the manifest's config.timing.min_samples) and how many
ran past it (and to max_samples), with the rounds past the minimum and the
timing seconds of those pairs: the share of the timing phase that the
stopping rule's 1% interval asks for.
"""
import argparse
import json
import os
import re
import signal
import sys

from runjournal import pair_seconds, records


def rounds_table(run, pairs):
    """Per set: the candidate's timed rounds of each pair against the
    manifest's minimum and maximum, and the timing seconds of the pairs
    that ran past the minimum."""
    try:
        timing = json.load(open(os.path.join(run, "manifest.json")))["config"]["timing"]
        lo, hi = int(timing["min_samples"]), int(timing["max_samples"])
    except (OSError, ValueError, KeyError, TypeError) as ex:
        sys.exit("collect-time: %s/manifest.json: no config.timing min_samples/max_samples (%s)" % (run, ex))
    rounds = {}
    for r in records(run, "collect-time", "time"):
        if r.get("variant") == "candidate":
            key = (r["set"], r["problem"])
            rounds[key] = rounds.get(key, 0) + 1
    per = {}
    for sec, st, prob, status, det in pairs:
        n = rounds.get((st, prob))
        if not n:
            continue
        m = re.search(r"timing ([0-9.]+)", det)
        t = per.setdefault(st, {"pairs": 0, "at_min": 0, "over": 0, "at_max": 0, "extra": 0, "over_s": 0.0, "timing_s": 0.0})
        t["pairs"] += 1
        secs = float(m.group(1)) if m else 0.0
        t["timing_s"] += secs
        if n <= lo:
            t["at_min"] += 1
        else:
            t["over"] += 1
            t["extra"] += n - lo
            t["over_s"] += secs
            t["at_max"] += n >= hi
    print("\nrounds (minimum %d, maximum %d):" % (lo, hi))
    print("%-14s %6s %7s %6s %7s %12s %22s" % ("set", "timed", "at min", "past", "at max", "rounds past",
                                            "timing s (past / all)"))
    for st, t in sorted(per.items()):
        print("%-14s %6d %7d %6d %7d %12d %11.0f / %.0f" % (st, t["pairs"], t["at_min"], t["over"], t["at_max"],
                                                          t["extra"], t["over_s"], t["timing_s"]))


def fixed_table(run, pairs):
    """Per set and phase: the intercept and slope of phase seconds against
    the candidate's median timed call in seconds (ordinary least squares)."""
    calls = {}
    for r in records(run, "collect-time", "time"):
        if r.get("variant") == "candidate" and isinstance(r.get("gpu_ms"), (int, float)):
            calls.setdefault((r["set"], r["problem"]), []).append(r["gpu_ms"] / 1e3)
    per = {}
    for _sec, st, prob, _status, det in pairs:
        c = calls.get((st, prob))
        if not c:
            continue
        c.sort()
        med = c[len(c) // 2] if len(c) % 2 else 0.5 * (c[len(c) // 2 - 1] + c[len(c) // 2])
        for name, val in re.findall(r"(\w+) ([0-9.]+)", det):
            per.setdefault(st, {}).setdefault(name, []).append((med, float(val)))
    print("\nfixed cost per pair (phase s = fixed + calls x the candidate's median call):")
    print("%-14s %-8s %6s %9s %9s %11s" % ("set", "phase", "pairs", "fixed s", "calls", "fixed total"))
    for st in sorted(per):
        for name, pts in per[st].items():
            n = len(pts)
            mx = sum(x for x, _ in pts) / n
            my = sum(y for _, y in pts) / n
            sxx = sum((x - mx) ** 2 for x, _ in pts)
            slope = sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx > 0 else 0.0
            fixed = my - slope * mx
            print("%-14s %-8s %6d %9.3f %9.1f %11.0f" % (st, name, n, fixed, slope, fixed * n))


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # quiet when piped into head
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--rounds", action="store_true", help="rounds against the protocol's minimum, per set")
    ap.add_argument("--fixed", action="store_true", help="each phase's fixed cost per pair, per set")
    a = ap.parse_args()
    sets, pairs = pair_seconds(a.run, "collect-time")
    if not pairs:
        sys.exit("collect-time: %s has no timed pair status" % a.run)
    total = 0.0
    print("%-14s %6s %10s  %s" % ("set", "pairs", "seconds", "phases (s)"))
    for name, s in sorted(sets.items()):
        total += s["seconds"]
        ph = ", ".join("%s %.0f" % (k, v) for k, v in s["phases"].items())
        print("%-14s %6d %10.1f  %s" % (name, s["pairs"], s["seconds"], ph))
    print("%-14s %6d %10.1f  (%.1f min)" % ("all", len(pairs), total, total / 60))
    print("\nslowest %d pairs:" % min(a.top, len(pairs)))
    for sec, st, prob, status, det in sorted(pairs, reverse=True)[: a.top]:
        print("  %7.1f s  %-12s %-58s %-8s %s" % (sec, st, prob, status, det))
    if a.rounds:
        rounds_table(a.run, pairs)
    if a.fixed:
        fixed_table(a.run, pairs)


if __name__ == "__main__":
    main()
