#!/usr/bin/env python3
"""input-sets.py RUN_DIR [--limit PCT] - which pairs' times depend on the
round's timed input set.

collect times every round on one of two input sets in distinct buffers,
drawn at random, and every variant of the round uses that set.  Where the
two placements run a call at different speeds, a variant's samples fall in
two groups and its pooled median lands on either by chance
(docs/DESIGN.md 5a step 7).  For each (set, problem, baseline):

- a journal whose time records name the set ("input_set"): the medians of
  each input set's samples, for the baseline and the candidate, and how far
  apart the two sets' medians are;
- an older journal: the share of rounds in which the candidate and the
  baseline fall on the same side of their own medians (about 0.5 when the
  round does not matter; near 1 when something the round shares, such as
  its input set, moves both), beside the baseline's interquartile spread.

Prints the pairs over the limit (default 1%: sets' medians that far apart,
or a spread that wide with a share over 0.75), the worst first, and a
count.  Exit 0; 2 when the run has no journal.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runjournal import records  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("--limit", type=float, default=1.0, help="percent (default 1)")
    a = ap.parse_args()
    lim = a.limit / 100
    times = {}
    try:
        for r in records(a.run, None, "time"):
            if r.get("same_as") or not isinstance(r.get("gpu_ms"), (int, float)) or "round" not in r:
                continue
            times.setdefault((r["set"], r["problem"]), {}).setdefault(r["variant"], {})[r["round"]] = (
                r["gpu_ms"], r.get("input_set"))
    except FileNotFoundError as ex:
        print("input-sets: %s" % ex, file=sys.stderr)
        return 2
    rows, labelled, judged = [], 0, 0
    for (sname, prob), v in sorted(times.items()):
        cand = v.get("candidate")
        if not cand:
            continue
        for base, b in sorted(v.items()):
            if base == "candidate":
                continue
            rounds = sorted(set(b) & set(cand))
            if len(rounds) < 30:
                continue
            judged += 1
            sets = {b[r][1] for r in rounds}
            if None not in sets and len(sets) >= 2:
                labelled += 1
                med = {}
                for who, d in (("baseline", b), ("candidate", cand)):
                    for k in sorted(sets):
                        xs = [d[r][0] for r in rounds if d[r][1] == k]
                        if len(xs) >= 5:
                            med[(who, k)] = statistics.median(xs)
                bm = [med[("baseline", k)] for k in sorted(sets) if ("baseline", k) in med]
                if len(bm) < 2:
                    continue
                apart = max(bm) / min(bm) - 1
                if apart > lim:
                    text = " ".join("%s set %s %.4f" % (w, k, m) for (w, k), m in sorted(med.items()))
                    rows.append((apart, sname, prob, base, "sets %.2f%% apart: %s" % (100 * apart, text)))
            else:
                bx = [b[r][0] for r in rounds]
                cx = [cand[r][0] for r in rounds]
                bmed, cmed = statistics.median(bx), statistics.median(cx)
                share = sum((b[r][0] > bmed) == (cand[r][0] > cmed) for r in rounds) / len(rounds)
                q = statistics.quantiles(bx, n=4)
                spread = q[2] / q[0] - 1
                if spread > lim and share > 0.75:
                    rows.append((spread, sname, prob, base,
                                 "no input_set; interquartile %.2f%%, same side in %.2f of %d rounds"
                                 % (100 * spread, share, len(rounds))))
    rows.sort(key=lambda x: -x[0])
    for _, sname, prob, base, text in rows:
        print("%-10s %-55s %-5s %s" % (sname, prob, base, text))
    print("%d of %d (set, problem, baseline) over %g%% (%d with input sets recorded)"
          % (len(rows), judged, a.limit, labelled))
    return 0


if __name__ == "__main__":
    sys.exit(main())
