#!/usr/bin/env bash
# kbv-analyze on tests/fixtures/run_small: a schema-complete analysis.json
# whose classes and flags are those the synthetic run was made with, whose
# intervals cover the true speedups, and whose bytes do not change with the
# journal's compression or the number of threads.
set -u
build=${1:-build}
bin="$build/kbv-analyze"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "analyze_fixture: $*"; exit 1; }

"$bin" --help | grep -q "usage: kbv-analyze" || fail "--help"
"$bin" --version | grep -q "kbv-analyze" || fail "--version"
"$bin" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no RUN_DIR must exit 2"
"$bin" --bogus x >/dev/null 2>&1; [ $? -eq 2 ] || fail "an unknown option must exit 2"

cp -R tests/fixtures/run_small "$tmp/run"
"$bin" "$tmp/run" 2>"$tmp/log" || { cat "$tmp/log"; fail "exit $? on the fixture"; }
[ -f "$tmp/run/analysis.json" ] || fail "no analysis.json"
cp "$tmp/run/analysis.json" "$tmp/first.json"

python3 - "$tmp/run" <<'PY' || fail "analysis.json content (above)"
import json, math, sys
d = sys.argv[1]
a = json.load(open(d + "/analysis.json"))
t = json.load(open(d + "/synth_truth.json"))
m = json.load(open(d + "/manifest.json"))
errs = []
def need(cond, what):
    if not cond:
        errs.append(what)
def est(x, what, n=False):
    need(isinstance(x, dict) and list(x)[:3] == ["estimate", "ci_low", "ci_high"], what + " is an estimate")
    if n: need("n" in x, what + " has n")
    if x["estimate"] is not None:
        need(x["ci_low"] <= x["estimate"] <= x["ci_high"], what + " interval holds the estimate")
classes = ["correct", "hidden-fail", "incorrect", "error", "constant-output", "identity", "stale-output",
           "caching", "input-mutation", "deferred-work", "impossible-speed", "nondeterministic", "tampering",
           "missing"]
need(list(a) == ["schema", "run_id", "created_utc", "harness", "device", "config", "classes", "pairs", "sets",
                 "baseline_drift", "parity"], "top-level keys")
# The synthetic run leaves one pair without any record (synth_truth's error).
need(a["pairs"] == {"total": len(m["sets"]) * len(m["problems"]), "unfinished": 1}, "pairs")
# The fixture run has no parity.json (docs/parity.md): no verdicts.
need(a["parity"] is None, "parity is null without parity.json")
need(a["schema"] == "kbv-analysis/1", "schema")
need(a["run_id"] == m["run_id"] and a["created_utc"] == m["created_utc"], "run_id and created_utc")
need(a["harness"] == m["harness"] and a["device"] == m["device"], "harness and device copied")
need(a["config"] == {"bootstrap_resamples": 10000, "bootstrap_seed": m["config"]["seed"], "ci_level": 0.95,
                     "fast_p_points": [0, 0.5, 0.8, 1, 1.5, 2], "memory_baseline": "tf32"}, "config")
need(a["classes"] == classes, "classes")
need([s["name"] for s in a["sets"]] == [s["name"] for s in m["sets"]], "sets in manifest order")
for s in a["sets"]:
    nm = s["name"]
    need(s["n_problems"] == len(m["problems"]), nm + " n_problems")
    need(list(s["counts"]) == classes, nm + " counts keys")
    need(sum(s["counts"].values()) == len(m["problems"]), nm + " counts sum")
    for b in ("fp32", "tf32"):
        bl = s["baselines"][b]
        est(bl["geomean_speedup_correct"], nm + " gc", True)
        est(bl["geomean_speedup_all"], nm + " ga", True)
        need([p["p"] for p in bl["fast_p"]] == [0, 0.5, 0.8, 1, 1.5, 2], nm + " fast_p points")
        need(len(bl["fast_p_curve"]) == 61, nm + " curve length")
        ps = [p["p"] for p in bl["fast_p_curve"]]
        need(abs(ps[0] - 0.1) < 1e-12 and abs(ps[-1] - 10) < 1e-9 and ps == sorted(ps), nm + " curve grid")
        for p in bl["fast_p"] + bl["fast_p_curve"]:
            need(p["ci_low"] <= p["estimate"] <= p["ci_high"], nm + " fast_p band")
        # fast_p from the problems' own speedups, strict ">".
        for p in bl["fast_p"]:
            k = sum(1 for q in s["problems"] if q["class"] == "correct" and q["speedup"][b]
                    and q["speedup"][b]["estimate"] > p["p"])
            need(abs(p["estimate"] - k / len(s["problems"])) < 1e-12, nm + " fast_p value")
        corr = [q["speedup"][b]["estimate"] for q in s["problems"] if q["class"] == "correct"]
        g = math.exp(sum(math.log(x) for x in corr) / len(corr)) if corr else None
        ge = bl["geomean_speedup_correct"]["estimate"]
        need((g is None and ge is None) or abs(ge - g) < 1e-9 * g, nm + " geomean of correct speedups")
    est(s["memory"]["efficiency_geomean"], nm + " memory", True)
    est(s["memory"]["efficient_share"], nm + " share", True)
    need([x["step"] for x in s["inflation"]] == ["original", "hidden", "probes", "tf32"], nm + " inflation")
    need(s["inflation"][2]["geomean"] == s["baselines"]["fp32"]["geomean_speedup_correct"], nm + " probes step")
    need(s["inflation"][3]["geomean"] == s["baselines"]["tf32"]["geomean_speedup_correct"], nm + " tf32 step")
    need([q["problem"] for q in s["problems"]] == m["problems"], nm + " problems in suite order")
    for q in s["problems"]:
        w = t["sets"][nm][q["problem"]]
        where = "%s/%s" % (nm, q["problem"])
        need(list(q) == ["problem", "class", "flags", "evidence", "speedup", "time_ms", "n_samples",
                         "peak_bytes", "max_rel_err", "tier"], where + " keys")
        need(q["class"] == w["class"], where + " class %s, made as %s" % (q["class"], w["class"]))
        need(sorted(q["flags"]) == sorted(w["flags"]), where + " flags %s, made as %s" % (q["flags"], w["flags"]))
        need(q["evidence"][0]["kind"] == "class" and q["evidence"][0]["name"] == q["class"]
             and q["evidence"][0]["text"], where + " class evidence")
        need([e["name"] for e in q["evidence"][1:]] == q["flags"], where + " flag evidence")
        if w.get("speedup"):
            for b in ("fp32", "tf32"):
                sp = q["speedup"][b]
                est(sp, where + " speedup")
                need(sp["ci_low"] <= w["speedup"][b] <= sp["ci_high"] or
                     abs(math.log(sp["estimate"] / w["speedup"][b])) < 0.03,
                     where + " %s interval [%g, %g] far from the true %g" % (b, sp["ci_low"], sp["ci_high"],
                                                                            w["speedup"][b]))
        else:
            need(q["speedup"] == {"fp32": None, "tf32": None}, where + " null speedups")
# baseline_drift: every flagged (problem, baseline) once, by drift descending;
# drift is max/min of the sets' medians, and the slowest and fastest sets'
# intervals are apart; the journal's clocks are all 1980 MHz and it has no
# baseline records, so every cause is "unexplained" with clock_ratio 1.
bd = a["baseline_drift"]
need(isinstance(bd, list), "baseline_drift is a list")
need([x["drift"] for x in bd] == sorted((x["drift"] for x in bd), reverse=True), "baseline_drift order")
need(len({(x["problem"], x["baseline"]) for x in bd}) == len(bd), "baseline_drift entries unique")
for x in bd:
    where = "drift %s/%s" % (x["problem"], x["baseline"])
    need(list(x) == ["problem", "baseline", "drift", "clock_ratio", "cause", "sets"] and
         x["baseline"] in ("fp32", "tf32"), where + " keys")
    need(x["cause"] == "unexplained" and x["clock_ratio"] == 1, where + " cause")
    need(all(s.get("sm_mhz") == 1980 and "choice" not in s for s in x["sets"]), where + " sm_mhz and choice")
    ss = x["sets"]
    need(len(ss) >= 2 and [s["set"] for s in ss] == [s["name"] for s in a["sets"] if s["name"] in
                                                   {t["set"] for t in ss}], where + " sets in run order")
    meds = [s["median_ms"] for s in ss]
    need(abs(x["drift"] - max(meds) / min(meds)) < 1e-12 * x["drift"] and x["drift"] > 1.05, where + " value")
    slow, fast = max(ss, key=lambda s: s["median_ms"]), min(ss, key=lambda s: s["median_ms"])
    need(slow["ci_low_ms"] > fast["ci_high_ms"], where + " intervals apart")
    for s in ss:
        need(s["ci_low_ms"] <= s["median_ms"] <= s["ci_high_ms"] and s["n"] >= 1, where + " interval")
        q = next(q for t in a["sets"] if t["name"] == s["set"] for q in t["problems"] if q["problem"] == x["problem"])
        need(q["time_ms"][x["baseline"]] == s["median_ms"] and q["n_samples"][x["baseline"]] == s["n"],
             where + " median and n as the set's own")
if errs:
    print("\n".join(errs))
    sys.exit(1)
PY

# The same bytes again, with one thread, and from a gzip-compressed journal.
"$bin" "$tmp/run" 2>/dev/null && cmp -s "$tmp/run/analysis.json" "$tmp/first.json" || fail "not deterministic"
"$bin" --jobs 1 "$tmp/run" 2>/dev/null && cmp -s "$tmp/run/analysis.json" "$tmp/first.json" || fail "--jobs 1 differs"
gzip -n "$tmp/run/samples.jsonl"
"$bin" "$tmp/run" 2>/dev/null && cmp -s "$tmp/run/analysis.json" "$tmp/first.json" || fail "samples.jsonl.gz differs"
# Another seed changes intervals, and says so.
"$bin" --seed 99 "$tmp/run" 2>/dev/null || fail "--seed"
cmp -s "$tmp/run/analysis.json" "$tmp/first.json" && fail "--seed changed nothing"
grep -q '"bootstrap_seed":[[:space:]]*99' "$tmp/run/analysis.json" || fail "--seed not recorded"
exit 0
