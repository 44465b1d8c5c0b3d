#!/usr/bin/env bash
# Baseline drift across sets, from journal to PDF: a run of two sets where
# p_gemm's tf32 baseline is 10% slower in set beta (reported) and its fp32
# baseline 0.4% slower (within noise, not reported); kbv-analyze writes
# baseline_drift with the hand-computed medians and order-statistic
# intervals, twice byte-identical; kbv-render writes tables/baseline_drift.csv
# (that row only) and .tex, the PDF has the section "Baseline stability
# across sets" with the row and marks p_gemm "baseline drift"; with no drift
# the section says every baseline agrees within 1.05; an analysis.json
# without the field says it was not computed and has no drift table.
# usage: tests/cli/render_drift.sh BUILD_DIR
set -u
unset SOURCE_DATE_EPOCH
export KBV_TEMPLATES="$PWD/templates"
build=$(cd "${1:-build}" && pwd)
fail() { echo "render_drift: $*"; exit 1; }
tmp=$(mktemp -d /tmp/kbv-render-drift.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# make_run DIR BETA_TF32: 31 samples a variant, base * (1 + 0.001 (j - 15))
# for j = 0..30 in a scrambled order (median base, 2nd..30th smallest 0.1%
# apart).  p_gemm: fp32 1.0 (alpha) and 1.004 (beta), tf32 0.2 (alpha) and
# BETA_TF32 (beta); p_relu: 0.5 for both baselines in both sets; candidates
# 0.1 everywhere, every D1 check passing.
make_run() {
    mkdir -p "$1"
    python3 - "$1" "$2" <<'PY'
import json, sys
d, beta_tf32 = sys.argv[1], float(sys.argv[2])
sets, probs = ["alpha", "beta"], ["p_gemm", "p_relu"]
json.dump({"schema": "kbv-run/1", "run_id": "drift-test", "created_utc": "2026-11-30T00:00:00Z",
           "harness": {"version": "0.1.0", "git_commit": "test"}, "device": {"name": "Test GPU"},
           "config": {"seed": 7, "atol": 1e-3, "rtol": 1e-3}, "problems": probs,
           "sets": [{"name": s} for s in sets]}, open(d + "/manifest.json", "w"))
base = {("alpha", "p_gemm"): {"candidate": 0.1, "fp32": 1.0, "tf32": 0.2},
        ("beta", "p_gemm"): {"candidate": 0.1, "fp32": 1.004, "tf32": beta_tf32},
        ("alpha", "p_relu"): {"candidate": 0.1, "fp32": 0.5, "tf32": 0.5},
        ("beta", "p_relu"): {"candidate": 0.1, "fp32": 0.5, "tf32": 0.5}}
with open(d + "/samples.jsonl", "w") as f:
    for s in sets:
        for p in probs:
            w = lambda r: f.write(json.dumps(dict(r, set=s, problem=p), separators=(",", ":")) + "\n")
            w({"type": "build", "ok": True, "seconds": 1.0, "log": ""})
            w({"type": "status", "status": "ok"})
            for t in range(3):
                w({"type": "check", "dist": "D1", "trial": t, "seed": 7, "pass": True, "max_abs_err": 1e-7,
                   "max_rel_err": 1e-7, "mismatches": 0, "nonfinite": 0, "unwritten": 0, "tier": "fp32",
                   "count": 1024})
            for v, b in base[(s, p)].items():
                for i in range(31):
                    j = (i * 7) % 31
                    w({"type": "time", "variant": v, "round": i, "gpu_ms": b * (1 + 0.001 * (j - 15))})
PY
}

run="$tmp/run"
make_run "$run" 0.22
"$build/kbv-analyze" "$run" 2>"$tmp/log" || fail "analyze failed: $(cat "$tmp/log")"
cp "$run/analysis.json" "$tmp/first.json"
"$build/kbv-analyze" "$run" 2>/dev/null && cmp -s "$run/analysis.json" "$tmp/first.json" ||
    fail "two analyses are not byte-identical"
"$build/kbv-analyze" --jobs 2 "$run" 2>/dev/null && cmp -s "$run/analysis.json" "$tmp/first.json" ||
    fail "--jobs 2 differs"

# n = 31: P(B <= 9) = 0.0147 < 0.025 <= P(B <= 10) = 0.0354 for B ~
# Binomial(31, 1/2), so the interval is [x_(10), x_(22)] = base * [0.994, 1.006].
python3 - "$run/analysis.json" <<'PY' || fail "baseline_drift in analysis.json (above)"
import json, sys
a = json.load(open(sys.argv[1]))
bd = a["baseline_drift"]
def bad(m):
    print(m); sys.exit(1)
if [(x["problem"], x["baseline"]) for x in bd] != [("p_gemm", "tf32")]:
    bad("flagged %r, not p_gemm/tf32 alone" % [(x["problem"], x["baseline"]) for x in bd])
x = bd[0]
close = lambda u, v: abs(u - v) < 1e-12 * max(1, abs(v))
if not close(x["drift"], 1.1):
    bad("drift %r, not 1.1" % x["drift"])
want = [("alpha", 0.2), ("beta", 0.22)]
for s, (name, b) in zip(x["sets"], want):
    if s["set"] != name or s["n"] != 31 or not close(s["median_ms"], b) or not close(s["ci_low_ms"], b * 0.994) \
       or not close(s["ci_high_ms"], b * 1.006):
        bad("set %r, want %s median %g [%g, %g] n 31" % (s, name, b, b * 0.994, b * 1.006))
PY

"$build/kbv-render" "$run" 2>"$tmp/log" || fail "render failed: $(cat "$tmp/log")"
t="$run/report/tables"
[ -s "$t/baseline_drift.csv" ] && [ -s "$t/baseline_drift.tex" ] || fail "tables/baseline_drift.csv or .tex missing"
grep -q '\\toprule' "$t/baseline_drift.tex" || fail "baseline_drift.tex is not booktabs"
python3 - "$t/baseline_drift.csv" "$t/problems.csv" <<'PY' || exit 1
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
def bad(m):
    print("render_drift: " + m); sys.exit(1)
if rows[0] != ["problem", "baseline", "drift", "slowest_set", "slowest_median_ms", "slowest_ci_low_ms",
               "slowest_ci_high_ms", "fastest_set", "fastest_median_ms", "fastest_ci_low_ms", "fastest_ci_high_ms",
               "n_sets"]:
    bad("baseline_drift.csv columns %r" % rows[0])
if len(rows) != 2:
    bad("baseline_drift.csv has %d rows, not one" % (len(rows) - 1))
r = rows[1]
want = ["p_gemm", "tf32", 1.1, "beta", 0.22, 0.22 * 0.994, 0.22 * 1.006, "alpha", 0.2, 0.2 * 0.994, 0.2 * 1.006, "2"]
for k, (g, w) in enumerate(zip(r, want)):
    if (isinstance(w, float) and abs(float(g) - w) > 1e-12) or (isinstance(w, str) and g != w):
        bad("baseline_drift.csv column %s is %r, not %r" % (rows[0][k], g, w))
for p in csv.DictReader(open(sys.argv[2])):
    w = "tf32" if p["problem"] == "p_gemm" else "ok"
    if p["baseline_drift"] != w:
        bad("problems.csv: %s/%s baseline_drift %r, not %r" % (p["set"], p["problem"], p["baseline_drift"], w))
PY
pdftotext "$run/report/report.pdf" - | tr '\n' ' ' | tr -s ' ' >"$tmp/flat.txt" || fail "pdftotext failed"
grep -q "Baseline stability across sets" "$tmp/flat.txt" || fail "the PDF has no drift section"
# The row as laid out: medians on its first line, their intervals under them.
pdftotext -layout "$run/report/report.pdf" "$tmp/layout.txt" || fail "pdftotext -layout failed"
grep -A1 -E "^p_gemm +tf32 +1\.100 +beta +0\.22 +alpha +0\.2$" "$tmp/layout.txt" >"$tmp/row.txt" ||
    fail "the PDF's drift table lacks the p_gemm row: $(grep -E '^p_gemm +tf32' "$tmp/layout.txt" | head -1)"
grep -qE "^ +\[0\.2187, 0\.2213\] +\[0\.1988, 0\.2012\]$" "$tmp/row.txt" ||
    fail "the PDF's drift table lacks the intervals: $(cat "$tmp/row.txt")"
grep -q "(1 baselines)" "$tmp/flat.txt" || fail "the caption does not count the drifting baselines"
# Each set's table marks p_gemm after its class, and nothing else.
n=$(grep -o "p_gemm correct baseline drift" "$tmp/flat.txt" | wc -l)
[ "$n" -eq 2 ] || fail "p_gemm is marked 'baseline drift' in $n per-problem tables, not 2"
n=$(grep -o "correct baseline drift" "$tmp/flat.txt" | wc -l)
[ "$n" -eq 2 ] || fail "$n problems marked 'baseline drift', not p_gemm's 2 rows"
cp -r "$run/report" "$tmp/first_report"
"$build/kbv-render" "$run" 2>/dev/null || fail "second render failed"
diff -r "$tmp/first_report" "$run/report" >/dev/null || fail "two renders differ"

# No drift: tf32 in beta as in alpha.
run2="$tmp/run2"
make_run "$run2" 0.2
"$build/kbv-analyze" "$run2" 2>/dev/null || fail "analyze (no drift) failed"
grep -q '"baseline_drift":[[:space:]]*\[\]' "$run2/analysis.json" || fail "baseline_drift is not empty without drift"
"$build/kbv-render" "$run2" 2>"$tmp/log" || fail "render (no drift) failed: $(cat "$tmp/log")"
pdftotext "$run2/report/report.pdf" - | tr '\n' ' ' | tr -s ' ' >"$tmp/flat2.txt"
grep -q "Every baseline measured in several sets of the run agrees across them within 1.05" "$tmp/flat2.txt" ||
    fail "no 'agrees within 1.05' sentence"
grep -q "correct baseline drift" "$tmp/flat2.txt" && fail "a problem is marked 'baseline drift' without drift"
[ "$(grep -c . "$run2/report/tables/baseline_drift.csv")" -eq 1 ] || fail "baseline_drift.csv should hold its column line only"

# An analysis.json from before the field: the section says so, no table.
run3="$tmp/run3"
cp -r "$run2" "$run3"
python3 - "$run3/analysis.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
del a["baseline_drift"]
json.dump(a, open(sys.argv[1], "w"))
PY
"$build/kbv-render" "$run3" 2>"$tmp/log" || fail "render (old analysis) failed: $(cat "$tmp/log")"
pdftotext "$run3/report/report.pdf" - | tr '\n' ' ' | tr -s ' ' | grep -q "not computed by this analysis" ||
    fail "an old analysis.json does not say drift was not computed"
[ ! -e "$run3/report/tables/baseline_drift.csv" ] || fail "a drift table without baseline_drift"

# A malformed baseline_drift is an input error (exit 2) naming the field.
python3 - "$run3/analysis.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
a["baseline_drift"] = [{"problem": "p_gemm", "baseline": "bf16", "drift": 1.2, "sets": []}]
json.dump(a, open(sys.argv[1], "w"))
PY
"$build/kbv-render" "$run3" >/dev/null 2>"$tmp/log"
[ $? -eq 2 ] || fail "a malformed baseline_drift must exit 2"
grep -q "baseline_drift\[0\]" "$tmp/log" || fail "the error does not name baseline_drift[0]: $(cat "$tmp/log")"
exit 0
