#!/usr/bin/env python3
"""collect-time.py RUN_DIR [--top N] - where a run's collect time went.

Reads the run's journal (samples.jsonl or samples.jsonl.gz) and prints, per
set, the number of pairs and the sum of their worker seconds (each status
record's "seconds": the worker's life from start to its status, which is
what one GPU spends on the pair), the phase totals the status detail names
(setup, checks, probes, timing, memory), and the N slowest pairs (default
10).  The sum over all sets is the GPU time of a one-GPU collect without
the builds, which run before the first pair.  The suite issue's speed
target is this figure for one candidate set: at most 20 minutes.
"""
import argparse
import signal
import sys

from runjournal import pair_seconds


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # quiet when piped into head
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run")
    ap.add_argument("--top", type=int, default=10)
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


if __name__ == "__main__":
    main()
