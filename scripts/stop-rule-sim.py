#!/usr/bin/env python3
"""stop-rule-sim.py RUN_DIR [--set S]... [rule options] - replays the timed
phase's stopping rule on a run's rounds under other settings, and estimates
the timing seconds they would have taken.  No GPU: a planning aid for the
collect-time target of the suite issue (one set in 20 minutes), which asks
what a looser rule would save before anyone collects with it.

For each timed pair the journal holds every round's samples.  The replay
walks the rounds in order and stops where the worker's rule would
(collect/supervise/cstat.c cstat_should_stop_paired): at --max-rounds; when
a variant's timed wall time plus its pre-roll reaches --max-s (with --cap pair,
the sum over the round's variants: the contract's reading of "10 s"); else, once
--min-rounds rounds and --min-gpu-s seconds of candidate GPU time are
reached, when every paired speedup (each baseline's time / the candidate's
in the same round: fp32 and tf32, or bf16) has a 95% order-statistic
interval of its median narrower than +-halfwidth (where the records name
the round's input set and two sets hold 5 rounds, the geometric mean of
the sets' medians and of their intervals' ends, as the worker takes it
(cstat.c ratio_precise)).  Defaults are the run's
own (the manifest's config.timing), so a replay without options should stop
every pair where it stopped; the script says in how many it did (the wall
and pre-roll times are approximated from the records: the pre-roll as its
call count times the sample's event time).

The estimate: a pair's timing seconds (from its status detail) less the
warm-up (the manifest's warmup_min_ms: the warm-up's rounds are not in the
journal), spread evenly over its rounds, times the replayed rounds, plus
the warm-up.  A rule that stops earlier also verifies fewer rounds: the
secret verified rounds are drawn among the first min_samples, which
--min-rounds below the run's changes.

Prints, per set: pairs, rounds and timing seconds as run, as replayed
under the run's rule, and under the given rule.
"""
import argparse
import json
import math
import os
import re
import signal
import sys

from runjournal import records


def median_rank(n, level):
    """The largest rank l whose order statistics x(l), x(n+1-l) bound the
    median with the given confidence (common/ostat.c ostat_median_rank)."""
    alpha = (1 - level) / 2
    lgn = math.lgamma(n + 1)
    cdf = 0.0
    k = n
    for j in range(n + 1):
        cdf += math.exp(lgn - math.lgamma(j + 1) - math.lgamma(n - j + 1) + n * math.log(0.5))
        if cdf >= alpha - 1e-12:
            k = j
            break
    return min(k, (n + 1) // 2)


def median_ci(x, level, ranks):
    """The median of sorted x and its order-statistic interval, or None
    when len(x) is too small for the level (ostat_median_ci)."""
    n = len(x)
    med = x[n // 2] if n % 2 else 0.5 * (x[n // 2 - 1] + x[n // 2])
    if n not in ranks:
        ranks[n] = median_rank(n, level)
    lrank = ranks[n]
    if lrank < 1:
        return None
    i = min(lrank - 1, (n - 1) // 2)
    return med, x[i], x[n - 1 - i]


ISET_MIN = 5   # collect/supervise/cstat.h CSTAT_ISET_MIN


def precise(ratios, isets, n, halfwidth, level, ranks):
    """The worker's rule: every ratio's centre has an interval narrower
    than +-halfwidth; the centre is the pooled median, or where the rounds
    name their input set and two sets hold ISET_MIN rounds, the geometric
    mean of the sets' medians (cstat.c ratio_precise)."""
    counts = {}
    for k in isets[:n]:
        if k is not None:
            counts[k] = counts.get(k, 0) + 1
    strata = sorted(k for k, c in counts.items() if c >= ISET_MIN)
    for r in ratios:
        if len(strata) < 2:
            got = median_ci(sorted(r[:n]), level, ranks)
            if got is None:
                return False
            med, lo, hi = got
        else:
            logs = [0.0, 0.0, 0.0]
            for k in strata:
                got = median_ci(sorted(x for x, s in zip(r[:n], isets[:n]) if s == k), level, ranks)
                if got is None or min(got) <= 0:
                    return False
                logs = [a + math.log(b) for a, b in zip(logs, got)]
            med, lo, hi = (math.exp(a / len(strata)) for a in logs)
        if not (hi - lo) / 2 < halfwidth * med:
            return False
    return True


def replay(rounds, rule, ranks):
    """The round count at which the rule stops this pair's rounds (a list
    of {variant: record}, in round order)."""
    bases = [v for v in ("fp32", "tf32", "bf16")
             if v in rounds[0] and not rounds[0][v].get("same_as")]
    ratios = [[r[v]["gpu_ms"] / r["candidate"]["gpu_ms"] for r in rounds] for v in bases]
    isets = [r["candidate"].get("input_set") for r in rounds]
    cand_gpu_s = 0.0
    wall = {}
    for n in range(1, len(rounds) + 1):
        r = rounds[n - 1]
        cand_gpu_s += r["candidate"]["gpu_ms"] * 1e-3
        for v, rec in r.items():
            if rec.get("same_as"):
                continue
            wall[v] = wall.get(v, 0.0) + (rec.get("wall_ms", 0) + rec.get("preroll", 0) * rec["gpu_ms"]) * 1e-3
        capped = sum(wall.values()) if rule["cap"] == "pair" else max(wall.values())
        if n >= rule["max_rounds"] or capped >= rule["max_s"]:
            return n
        if n < rule["min_rounds"] or cand_gpu_s < rule["min_gpu_s"]:
            continue
        if precise(ratios, isets, n, rule["halfwidth"], rule["level"], ranks):
            return n
    return len(rounds)


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run")
    ap.add_argument("--set", action="append", dest="sets", help="only this set (repeatable)")
    ap.add_argument("--min-rounds", type=int)
    ap.add_argument("--min-gpu-s", type=float)
    ap.add_argument("--halfwidth", type=float, help="the interval's relative half-width (0.01: 1%%)")
    ap.add_argument("--max-rounds", type=int)
    ap.add_argument("--max-s", type=float)
    ap.add_argument("--cap", choices=("variant", "pair"),
                    help="what --max-s bounds: one variant's wall time, or the sum of the round's variants")
    a = ap.parse_args()
    who = "stop-rule-sim"
    try:
        t = json.load(open(os.path.join(a.run, "manifest.json")))["config"]["timing"]
        own = {"min_rounds": int(t["min_samples"]), "min_gpu_s": float(t["min_gpu_s"]),
               "halfwidth": float(t["ci_rel_halfwidth"]), "level": float(t["ci_level"]),
               "max_rounds": int(t["max_samples"]), "max_s": float(t["max_s"]),
               "cap": t.get("max_s_scope", "variant")}
        warm_s = float(t["warmup_min_ms"]) * 1e-3
    except (OSError, ValueError, KeyError, TypeError) as ex:
        sys.exit("%s: %s/manifest.json: no usable config.timing (%s)" % (who, a.run, ex))
    new = dict(own)
    for key in ("min_rounds", "min_gpu_s", "halfwidth", "max_rounds", "max_s"):
        v = getattr(a, key)
        if v is not None:
            if v < 0 or (key in ("min_rounds", "max_rounds") and v < 1):
                sys.exit("%s: --%s must be positive" % (who, key.replace("_", "-")))
            new[key] = v
    if a.cap:
        new["cap"] = a.cap

    timing_s = {}
    for r in records(a.run, who, "status"):
        m = re.search(r"timing ([0-9.]+)", r.get("detail", ""))
        if r.get("status") == "ok" and m:
            timing_s[(r["set"], r["problem"])] = float(m.group(1))
    pairs = {}
    for r in records(a.run, who, "time"):
        key = (r["set"], r["problem"])
        if key in timing_s and (not a.sets or r["set"] in a.sets):
            pairs.setdefault(key, {}).setdefault(r["round"], {})[r["variant"]] = r
    if not pairs:
        sys.exit("%s: %s: no timed pair with a status%s" % (who, a.run, " in the chosen sets" if a.sets else ""))

    ranks = {}
    table = {}
    for key in sorted(pairs):
        by_round = pairs[key]
        rounds = [by_round[k] for k in sorted(by_round) if "candidate" in by_round[k]]
        if not rounds:
            continue
        n_run = len(rounds)
        n_own = replay(rounds, own, ranks)
        n_new = replay(rounds, new, ranks)
        secs = timing_s[key]
        per_round = max(secs - warm_s, 0.0) / n_run
        s = table.setdefault(key[0], {"pairs": 0, "agree": 0, "rounds": [0, 0, 0], "secs": [0.0, 0.0, 0.0]})
        s["pairs"] += 1
        s["agree"] += n_own == n_run
        for i, n in enumerate((n_run, n_own, n_new)):
            s["rounds"][i] += n
            s["secs"][i] += secs if i == 0 else min(secs, warm_s) + n * per_round
    desc = "min %d rounds, %.3g s GPU, +-%.3g%%, max %d rounds, %.3g s of %s" % (
        new["min_rounds"], new["min_gpu_s"], new["halfwidth"] * 100, new["max_rounds"], new["max_s"],
        "the pair's rounds" if new["cap"] == "pair" else "one variant")
    print("rule replayed: %s" % desc)
    print("%-12s %6s %8s  %-17s %-17s %-17s" % ("set", "pairs", "replay=", "as run", "run's rule", "this rule"))
    tot = [0.0, 0.0, 0.0]
    for name, s in sorted(table.items()):
        cells = ["%6d r %6.0f s" % (s["rounds"][i], s["secs"][i]) for i in range(3)]
        print("%-12s %6d %8d  %-17s %-17s %-17s" % (name, s["pairs"], s["agree"], *cells))
        for i in range(3):
            tot[i] += s["secs"][i]
    print("all: timing %.0f s as run, %.0f s replayed, %.0f s under this rule (%+.1f%%)"
          % (tot[0], tot[1], tot[2], 100 * (tot[2] - tot[1]) / tot[1] if tot[1] else 0))


if __name__ == "__main__":
    main()
