#!/usr/bin/env bash
# Baseline drift across sets, from journal to PDF: a run of two sets where
# p_gemm's tf32 baseline is 10% slower in set beta (reported) and its fp32
# baseline 0.4% slower (within noise, not reported); p_clock's tf32 baseline
# 20% slower in beta, where most of its samples ran at 1485 MHz instead of
# 1980 (cause clock), and p_algo's fp32 baseline 15% slower in beta, whose
# worker chose another kernel (cause algorithm; p_gemm's, with neither
# clock nor choice, is unexplained); kbv-analyze writes baseline_drift with
# the hand-computed medians, order-statistic intervals, clocks and causes,
# twice byte-identical; kbv-render writes tables/baseline_drift.csv (those
# rows only) and .tex, the PDF has the section "Baseline stability across
# sets" with the rows, the clocks, the causes and both kernels, and marks
# the three problems "baseline drift" in the two sets compared, not in a
# third set without candidates (no baseline samples); with no drift the section says every
# baseline agrees within 1.05; an analysis.json without the field says it
# was not computed and has no drift table, one without the causes shows
# them as unknown; a malformed baseline record is an input error.
# usage: tests/cli/render_drift.sh BUILD_DIR
set -u
unset SOURCE_DATE_EPOCH
export KBV_TEMPLATES="$PWD/templates"
build=$(cd "${1:-build}" && pwd)
fail() { echo "render_drift: $*"; exit 1; }
tmp=$(mktemp -d /tmp/kbv-render-drift.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# make_run DIR DRIFT: 31 samples a variant, base * (1 + 0.001 (j - 15))
# for j = 0..30 in a scrambled order (median base, 2nd..30th smallest 0.1%
# apart).  p_gemm: fp32 1.0 (alpha) and 1.004 (beta), tf32 0.2 (alpha) and
# 0.22 (beta), no sm_mhz; p_relu: 0.5 for both baselines in both sets;
# p_clock: fp32 1.0, tf32 0.3 (alpha) and 0.36 (beta), at 1980 MHz but for
# beta's tf32, whose first 16 samples ran at 1485 (median 1485), and both
# sets' tf32 worker chose "cuBLASLt algo 6"; p_algo: fp32 0.5 (alpha) and
# 0.575 (beta) at 1980 MHz, alpha's worker chose kernel A, beta's kernel B
# (written twice: a resumed worker), tf32 0.1; DRIFT 0: every beta median as
# alpha's.  Candidates 0.1 everywhere, every D1 check passing.
KA="cuBLASLt algo 21 tile 128x256 stages 4 splitK 1"
KB="cuBLASLt algo 0 tile 64x64 stages 3 splitK 1"
make_run() {
    mkdir -p "$1"
    python3 - "$1" "$2" "$KA" "$KB" <<'PY'
import json, sys
d, drift, ka, kb = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4]
sets, probs = ["alpha", "beta"], ["p_gemm", "p_relu", "p_clock", "p_algo"]
# gamma has no candidates: its problems have no baseline samples, take no
# part in the comparison and must not be marked.
missing = ["gamma"]
json.dump({"schema": "kbv-run/1", "run_id": "drift-test", "created_utc": "2026-11-30T00:00:00Z",
           "harness": {"version": "0.1.0", "git_commit": "test"}, "device": {"name": "Test GPU"},
           "config": {"seed": 7, "atol": 1e-3, "rtol": 1e-3}, "problems": probs,
           "sets": [{"name": s} for s in sets + missing]}, open(d + "/manifest.json", "w"))
base = {("alpha", "p_gemm"): {"candidate": 0.1, "fp32": 1.0, "tf32": 0.2},
        ("beta", "p_gemm"): {"candidate": 0.1, "fp32": 1.004, "tf32": 0.22 if drift else 0.2},
        ("alpha", "p_relu"): {"candidate": 0.1, "fp32": 0.5, "tf32": 0.5},
        ("beta", "p_relu"): {"candidate": 0.1, "fp32": 0.5, "tf32": 0.5},
        ("alpha", "p_clock"): {"candidate": 0.1, "fp32": 1.0, "tf32": 0.3},
        ("beta", "p_clock"): {"candidate": 0.1, "fp32": 1.0, "tf32": 0.36 if drift else 0.3},
        ("alpha", "p_algo"): {"candidate": 0.1, "fp32": 0.5, "tf32": 0.1},
        ("beta", "p_algo"): {"candidate": 0.1, "fp32": 0.575 if drift else 0.5, "tf32": 0.1}}
choices = {("alpha", "p_clock", "tf32"): ["cuBLASLt algo 6"], ("beta", "p_clock", "tf32"): ["cuBLASLt algo 6"],
           ("alpha", "p_algo", "fp32"): [ka], ("beta", "p_algo", "fp32"): [kb, kb]}
with open(d + "/samples.jsonl", "w") as f:
    for s in sets:
        for p in probs:
            w = lambda r: f.write(json.dumps(dict(r, set=s, problem=p), separators=(",", ":")) + "\n")
            w({"type": "build", "ok": True, "seconds": 1.0, "log": ""})
            for t in range(3):
                w({"type": "check", "dist": "D1", "trial": t, "seed": 7, "pass": True, "max_abs_err": 1e-7,
                   "max_rel_err": 1e-7, "mismatches": 0, "nonfinite": 0, "unwritten": 0, "tier": "fp32",
                   "count": 1024})
            for v in ("fp32", "tf32"):
                for k, c in enumerate(choices.get((s, p, v), [])):
                    # the resumed worker's record again, with other spacing
                    # (a line repeated byte for byte is refused)
                    r = dict(type="baseline", variant=v, choice=c, set=s, problem=p)
                    f.write(json.dumps(r, separators=(",", ":") if k == 0 else (", ", ": ")) + "\n")
            for v, b in base[(s, p)].items():
                for i in range(31):
                    j = (i * 7) % 31
                    r = {"type": "time", "variant": v, "round": i, "gpu_ms": b * (1 + 0.001 * (j - 15))}
                    if p != "p_gemm":
                        r["sm_mhz"] = 1485 if (s, p, v) == ("beta", "p_clock", "tf32") and i < 16 else 1980
                    w(r)
            w({"type": "status", "status": "ok"})
    for s in missing:
        for p in probs:
            f.write(json.dumps({"type": "status", "set": s, "problem": p, "status": "missing",
                                "detail": "no candidate"}, separators=(",", ":")) + "\n")
PY
}

run="$tmp/run"
make_run "$run" 1
"$build/kbv-analyze" "$run" 2>"$tmp/log" || fail "analyze failed: $(cat "$tmp/log")"
cp "$run/analysis.json" "$tmp/first.json"
"$build/kbv-analyze" "$run" 2>/dev/null && cmp -s "$run/analysis.json" "$tmp/first.json" ||
    fail "two analyses are not byte-identical"
"$build/kbv-analyze" --jobs 2 "$run" 2>/dev/null && cmp -s "$run/analysis.json" "$tmp/first.json" ||
    fail "--jobs 2 differs"

# n = 31: P(B <= 9) = 0.0147 < 0.025 <= P(B <= 10) = 0.0354 for B ~
# Binomial(31, 1/2), so the interval is [x_(10), x_(22)] = base * [0.994, 1.006].
# By drift: p_clock 0.36 / 0.3 = 1.2, p_algo 0.575 / 0.5 = 1.15, p_gemm 1.1.
# p_clock's beta tf32 clocks: 16 of 31 at 1485, so the median is 1485 and
# clock_ratio 1980 / 1485 = 4/3; its choices are the same in both sets.
# p_algo: the same clock (ratio 1) but two kernels, beta's written twice and
# kept once.  p_gemm: no clock, no choice.
python3 - "$run/analysis.json" "$KA" "$KB" <<'PY' || fail "baseline_drift in analysis.json (above)"
import json, sys
a = json.load(open(sys.argv[1]))
ka, kb = sys.argv[2], sys.argv[3]
bd = a["baseline_drift"]
def bad(m):
    print(m); sys.exit(1)
got = [(x["problem"], x["baseline"]) for x in bd]
if got != [("p_clock", "tf32"), ("p_algo", "fp32"), ("p_gemm", "tf32")]:
    bad("flagged %r, not p_clock/tf32, p_algo/fp32, p_gemm/tf32" % got)
close = lambda u, v: abs(u - v) < 1e-12 * max(1, abs(v))
want = {"p_clock": (1.2, "clock", 4 / 3, [("alpha", 0.3, 1980, "cuBLASLt algo 6"), ("beta", 0.36, 1485, "cuBLASLt algo 6")]),
        "p_algo": (1.15, "algorithm", 1, [("alpha", 0.5, 1980, ka), ("beta", 0.575, 1980, kb)]),
        "p_gemm": (1.1, "unexplained", None, [("alpha", 0.2, None, None), ("beta", 0.22, None, None)])}
for x in bd:
    drift, cause, ratio, sets = want[x["problem"]]
    keys = ["problem", "baseline", "drift"] + (["clock_ratio"] if ratio else []) + ["cause", "sets"]
    if list(x) != keys:
        bad("%s: keys %r, not %r" % (x["problem"], list(x), keys))
    if not close(x["drift"], drift) or x["cause"] != cause or (ratio and not close(x["clock_ratio"], ratio)):
        bad("%s: drift %r cause %r clock_ratio %r, not %r %r %r" % (x["problem"], x["drift"], x["cause"],
                                                                   x.get("clock_ratio"), drift, cause, ratio))
    for s, (name, b, mhz, choice) in zip(x["sets"], sets):
        if s["set"] != name or s["n"] != 31 or not close(s["median_ms"], b) or \
           not close(s["ci_low_ms"], b * 0.994) or not close(s["ci_high_ms"], b * 1.006):
            bad("set %r, want %s median %g [%g, %g] n 31" % (s, name, b, b * 0.994, b * 1.006))
        if s.get("sm_mhz") != mhz or s.get("choice") != choice or (mhz is None and "sm_mhz" in s):
            bad("set %r, want sm_mhz %r choice %r" % (s, mhz, choice))
PY

"$build/kbv-render" "$run" 2>"$tmp/log" || fail "render failed: $(cat "$tmp/log")"
t="$run/report/tables"
[ -s "$t/baseline_drift.csv" ] && [ -s "$t/baseline_drift.tex" ] || fail "tables/baseline_drift.csv or .tex missing"
grep -q '\\toprule' "$t/baseline_drift.tex" || fail "baseline_drift.tex is not booktabs"
python3 - "$t/baseline_drift.csv" "$t/problems.csv" "$KA" "$KB" <<'PY' || exit 1
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
ka, kb = sys.argv[3], sys.argv[4]
def bad(m):
    print("render_drift: " + m); sys.exit(1)
if rows[0] != ["problem", "baseline", "drift", "slowest_set", "slowest_median_ms", "slowest_ci_low_ms",
               "slowest_ci_high_ms", "fastest_set", "fastest_median_ms", "fastest_ci_low_ms", "fastest_ci_high_ms",
               "n_sets", "slowest_sm_mhz", "fastest_sm_mhz", "clock_ratio", "cause", "slowest_choice",
               "fastest_choice"]:
    bad("baseline_drift.csv columns %r" % rows[0])
if len(rows) != 4:
    bad("baseline_drift.csv has %d rows, not three" % (len(rows) - 1))
def iv(b):
    return [b, b * 0.994, b * 1.006]
want = [["p_clock", "tf32", 1.2, "beta"] + iv(0.36) + ["alpha"] + iv(0.3) +
        ["2", "1485", "1980", 4 / 3, "clock", "cuBLASLt algo 6", "cuBLASLt algo 6"],
        ["p_algo", "fp32", 1.15, "beta"] + iv(0.575) + ["alpha"] + iv(0.5) + ["2", "1980", "1980", "1", "algorithm", kb, ka],
        ["p_gemm", "tf32", 1.1, "beta"] + iv(0.22) + ["alpha"] + iv(0.2) + ["2", "", "", "", "unexplained", "", ""]]
for r, wr in zip(rows[1:], want):
    if len(r) != len(wr):
        bad("baseline_drift.csv row %r" % r)
    for k, (g, w) in enumerate(zip(r, wr)):
        if (isinstance(w, float) and abs(float(g) - w) > 1e-12 * max(1, w)) or (isinstance(w, str) and g != w):
            bad("baseline_drift.csv %s column %s is %r, not %r" % (r[0], rows[0][k], g, w))
marks = {"p_gemm": "tf32", "p_clock": "tf32", "p_algo": "fp32"}
for p in csv.DictReader(open(sys.argv[2])):
    w = "ok" if p["set"] == "gamma" else marks.get(p["problem"], "ok")
    if p["baseline_drift"] != w:
        bad("problems.csv: %s/%s baseline_drift %r, not %r" % (p["set"], p["problem"], p["baseline_drift"], w))
PY
pdftotext "$run/report/report.pdf" - | tr '\n' ' ' | tr -s ' ' >"$tmp/flat.txt" || fail "pdftotext failed"
grep -q "Baseline stability across sets" "$tmp/flat.txt" || fail "the PDF has no drift section"
# The rows as laid out: medians, clocks and cause on the first line, the
# intervals under the medians; "-" for p_gemm's unknown clocks.
pdftotext -layout "$run/report/report.pdf" "$tmp/layout.txt" || fail "pdftotext -layout failed"
grep -A1 -E "^p_gemm +tf32 +1\.100 +beta +0\.22 +- +alpha +0\.2 +- +unexplained$" "$tmp/layout.txt" >"$tmp/row.txt" ||
    fail "the PDF's drift table lacks the p_gemm row: $(grep -E '^p_gemm +tf32' "$tmp/layout.txt" | head -1)"
grep -qE "^ +\[0\.2187, 0\.2213\] +\[0\.1988, 0\.2012\]$" "$tmp/row.txt" ||
    fail "the PDF's drift table lacks the intervals: $(cat "$tmp/row.txt")"
grep -qE "^p_clock +tf32 +1\.200 +beta +0\.36 +1485 +alpha +0\.3 +1980 +clock$" "$tmp/layout.txt" ||
    fail "the PDF's drift table lacks the p_clock row: $(grep -E '^p_clock +tf32' "$tmp/layout.txt" | head -1)"
grep -qE "^p_algo +fp32 +1\.150 +beta +0\.575 +1980 +alpha +0\.5 +1980 +algorithm$" "$tmp/layout.txt" ||
    fail "the PDF's drift table lacks the p_algo row: $(grep -E '^p_algo +fp32' "$tmp/layout.txt" | head -1)"
# The two kernels, slowest set first; the three causes explained.
grep -qF "algorithm beta: $KB alpha: $KA" "$tmp/flat.txt" || fail "the PDF does not name p_algo's two kernels"
for w in "clock: the fastest set's clock is at least 1.02 times the slowest set's" \
         "the speedups within each set stay fair" "algorithm: the workers of the two sets chose different kernels" \
         "unexplained: neither the clocks nor the recorded kernel choices differ"; do
    grep -qF "$w" "$tmp/flat.txt" || fail "the drift section does not say: $w"
done
grep -q "(3 baselines)" "$tmp/flat.txt" || fail "the caption does not count the drifting baselines"
# Each set's table marks the three problems after their class, and nothing else.
for p in p_gemm p_clock p_algo; do
    n=$(grep -o "$p correct baseline drift" "$tmp/flat.txt" | wc -l)
    [ "$n" -eq 2 ] || fail "$p is marked 'baseline drift' in $n per-problem tables, not 2"
done
n=$(grep -o "correct baseline drift" "$tmp/flat.txt" | wc -l)
[ "$n" -eq 6 ] || fail "$n problems marked 'baseline drift', not the three problems' 6 rows"
cp -r "$run/report" "$tmp/first_report"
"$build/kbv-render" "$run" 2>/dev/null || fail "second render failed"
diff -r "$tmp/first_report" "$run/report" >/dev/null || fail "two renders differ"

# An analysis.json from before the causes: the clocks and causes are unknown
# ("-" in the PDF, empty in the CSV).
run4="$tmp/run4"
cp -r "$run" "$run4"
rm -rf "$run4/report"
python3 - "$run4/analysis.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
for x in a["baseline_drift"]:
    del x["cause"]
    x.pop("clock_ratio", None)
    for s in x["sets"]:
        s.pop("sm_mhz", None)
        s.pop("choice", None)
json.dump(a, open(sys.argv[1], "w"))
PY
"$build/kbv-render" "$run4" 2>"$tmp/log" || fail "render (analysis without causes) failed: $(cat "$tmp/log")"
pdftotext -layout "$run4/report/report.pdf" - | grep -qE "^p_algo +fp32 +1\.150 +beta +0\.575 +- +alpha +0\.5 +- +-$" ||
    fail "an analysis.json without causes does not show them as unknown"
python3 - "$run4/report/tables/baseline_drift.csv" <<'PY' || fail "baseline_drift.csv without causes (above)"
import csv, sys
for r in list(csv.reader(open(sys.argv[1])))[1:]:
    if r[12:] != [""] * 6:
        print("row %r" % r); sys.exit(1)
PY

# A malformed baseline record is an input error (exit 2) naming file and line.
run5="$tmp/run5"
mkdir -p "$run5"
cp "$run/manifest.json" "$run5/"
head -3 "$run/samples.jsonl" >"$run5/samples.jsonl"
echo '{"type":"baseline","set":"alpha","problem":"p_gemm","variant":"tf32","choice":7}' >>"$run5/samples.jsonl"
"$build/kbv-analyze" "$run5" >/dev/null 2>"$tmp/log"
[ $? -eq 2 ] || fail "a baseline record whose choice is not a string must exit 2"
grep -q 'samples.jsonl:4: "choice" must be a string' "$tmp/log" || fail "the error does not name line 4: $(cat "$tmp/log")"
sed -i '$d' "$run5/samples.jsonl"
echo '{"type":"baseline","set":"alpha","problem":"p_gemm","variant":"candidate","choice":"k"}' >>"$run5/samples.jsonl"
"$build/kbv-analyze" "$run5" >/dev/null 2>"$tmp/log"
[ $? -eq 2 ] || fail "a baseline record for the candidate must exit 2"
grep -q 'samples.jsonl:4: unknown baseline variant "candidate"' "$tmp/log" || fail "the error does not name line 4: $(cat "$tmp/log")"

# No drift: every beta median as alpha's.
run2="$tmp/run2"
make_run "$run2" 0
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
# So is a clock that is not a number.
cp "$run/analysis.json" "$run3/analysis.json"
python3 - "$run3/analysis.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
a["baseline_drift"][0]["sets"][1]["sm_mhz"] = "fast"
json.dump(a, open(sys.argv[1], "w"))
PY
"$build/kbv-render" "$run3" >/dev/null 2>"$tmp/log"
[ $? -eq 2 ] || fail "a baseline_drift sm_mhz that is not a number must exit 2"
grep -q 'baseline_drift\[0\].sets\[1\]: "sm_mhz"' "$tmp/log" || fail "the error does not name the set: $(cat "$tmp/log")"
exit 0
