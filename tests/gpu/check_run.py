#!/usr/bin/env python3
"""Checks a collect run of tests/gpu/sets against each set.json's expectations.

usage: check_run.py RUN_DIR SETS_DIR [--journal-only]

- the journal holds every (set, problem) pair exactly once: one status, at
  most one build record, no check or time record twice;
- every time record names its pre-roll (an integer within the manifest's
  preroll_max_calls; DESIGN.md 5a step 7), and every variant of a pair
  that pre-rolls gets the same count in every round;
- "expected_status": {problem: "status:substring of detail"} matches;
- unless --journal-only, RUN_DIR/analysis.json gives every problem of
  "expected" its class; a problem that set.json also lists under
  "known_gaps" ({problem: reason}) and gets another class is printed as a
  GAP with its reason instead of failing: kbv's own open defect, shown on
  every run until it is fixed, rather than a wrong expectation.
Prints one line per failure and exits 1 if there is any.
"""
import collections, json, os, sys


def main():
    run, sets_dir = sys.argv[1], sys.argv[2]
    journal_only = "--journal-only" in sys.argv
    fails = []
    status = collections.defaultdict(list)
    builds = collections.Counter()
    checks = collections.Counter()
    times = collections.Counter()
    prerolls = collections.defaultdict(set)
    manifest = json.load(open(os.path.join(run, "manifest.json")))
    most = manifest["config"]["timing"]["preroll_max_calls"]
    with open(os.path.join(run, "samples.jsonl")) as f:
        for n, line in enumerate(f, 1):
            if not line.endswith("\n"):
                fails.append(f"samples.jsonl:{n}: torn line")
                continue
            r = json.loads(line)
            key = (r["set"], r["problem"])
            t = r["type"]
            if t == "status":
                status[key].append(r)
            elif t == "build":
                builds[key] += 1
            elif t == "check":
                checks[key + (r["dist"], r["trial"])] += 1
            elif t == "time":
                times[key + (r["variant"], r["round"])] += 1
                pre = r.get("preroll")
                if not isinstance(pre, int) or not 0 <= pre <= most:
                    fails.append(f"samples.jsonl:{n}: preroll {pre!r} is not a count within 0..{most}")
                prerolls[key + (r["variant"],)].add(pre)
    for key, recs in status.items():
        if len(recs) != 1:
            fails.append(f"{key}: {len(recs)} status records")
    for key, n in builds.items():
        if n != 1:
            fails.append(f"{key}: {n} build records")
    for key, n in list(checks.items()) + list(times.items()):
        if n != 1:
            fails.append(f"{key}: recorded {n} times")
    for key, counts in prerolls.items():
        if len(counts) != 1:
            fails.append(f"{key}: pre-roll counts {sorted(map(str, counts))} differ between rounds")
    for s in manifest["sets"]:
        for p in manifest["problems"]:
            if (s["name"], p) not in status:
                fails.append(f"({s['name']}, {p}): no status record")

    expected = {}
    for d in sorted(os.listdir(sets_dir)):
        path = os.path.join(sets_dir, d, "set.json")
        if not os.path.exists(path):
            continue
        j = json.load(open(path))
        expected[j["name"]] = j
    classes = {}
    if not journal_only:
        a = json.load(open(os.path.join(run, "analysis.json")))
        for s in a["sets"]:
            for p in s["problems"]:
                classes[(s["name"], p["problem"])] = p
    names = {s["name"] for s in manifest["sets"]}
    for name, j in expected.items():
        if name not in names:
            continue
        for prob, want in j.get("expected_status", {}).items():
            recs = status.get((name, prob))
            if not recs:
                continue
            st, _, sub = want.partition(":")
            got = recs[0]
            if got["status"] != st or sub.lower() not in got.get("detail", "").lower():
                fails.append(f"{name}/{prob}: status {got['status']} ({got.get('detail', '')[:160]!r}), "
                             f"expected {st} with {sub!r}")
        if journal_only:
            continue
        for prob, want in j.get("expected", {}).items():
            if prob not in manifest["problems"]:
                continue
            got = classes.get((name, prob))
            if got is None:
                fails.append(f"{name}/{prob}: not in analysis.json")
                continue
            gap = j.get("known_gaps", {}).get(prob)
            mark = "ok  " if got["class"] == want else "GAP " if gap else "FAIL"
            ev = [e["text"] for e in got.get("evidence", []) if e.get("kind") == "class"]
            print(f"  {mark} {name}/{prob}: {got['class']} (expected {want})"
                  f"{': ' + ev[0][:150] if ev else ''}")
            if got["class"] != want and gap:
                print(f"       known gap, not a failure: {gap}")
            elif got["class"] != want:
                fails.append(f"{name}/{prob}: class {got['class']}, expected {want}")
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
