#!/usr/bin/env bash
# RUN_DIR/parity.json (kbv-parity/1, docs/parity.md) judged by kbv-analyze
# (--parity-only: into the fixture's analysis.json) and drawn by kbv-render: with
# one exception, tables/baseline_parity.csv holds that problem's row (and
# only it) under its header row, each row naming GPU, torch and samples, the .tex is
# booktabs, the PDF has the section "Baseline parity with PyTorch" with the
# reason and marks the problem "parity exception" in the per-problem
# tables; with every ratio within 1.05 the section says so; without
# parity.json it says that no parity file was found; a malformed parity.json
# makes analyze exit 2 naming the file and leaves analysis.json as it was.
# usage: tests/cli/render_parity.sh BUILD_DIR
set -u
# The environment must not steer the date; the templates are this
# checkout's, wherever the build folder is.
unset SOURCE_DATE_EPOCH
export KBV_TEMPLATES="$PWD/templates"
build=$(cd "${1:-build}" && pwd)
render="$build/kbv-render"
judge() { "$build/kbv-analyze" --parity-only "$1" 2>"$tmp/log" || fail "analyze --parity-only failed (exit $?): $(cat "$tmp/log")"; }
fail() { echo "render_parity: $*"; exit 1; }
tmp=$(mktemp -d /tmp/kbv-render-parity.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# parity.json for the fixture's eight problems: L1_003_softmax has a known
# exception, L1_002_relu's fp32 ratio is exactly the limit (not flagged),
# L1_004_layernorm is not in the run (ignored); L2_008_batched_matmul is
# absent (flagged as not measured) unless $2 is "all"; L1_005_sum_reduction's
# bf16 ratio is over the limit unless $2 is "all" (a bf16 ratio is optional:
# the others have none, and are not flagged for it).
make_parity() {
    python3 - "$1" "${2:-}" <<'PY'
import json, sys
ids = ["L1_001_square_matrix_multiplication", "L1_002_relu", "L1_003_softmax", "L1_004_layernorm",
       "L1_005_sum_reduction", "L2_006_conv2d_3x3", "L2_007_gemm_multiply_leakyrelu"]
if sys.argv[2] == "all":
    ids.append("L2_008_batched_matmul")
probs = []
for i in ids:
    p = {"id": i, "fp32_ratio": 0.99, "tf32_ratio": 1.01, "exception": None,
         "fp32_torch_ms": 1.0, "fp32_kbv_ms": 0.99, "tf32_torch_ms": 0.5, "tf32_kbv_ms": 0.505}
    if i == "L1_002_relu":
        p["fp32_ratio"] = 1.05
        p["bf16_ratio"] = 0.9   # a bf16 ratio within the limit
    if i == "L1_005_sum_reduction" and sys.argv[2] != "all":
        p["bf16_ratio"] = 1.3   # the BF16 baseline alone over the limit, without an exception
    if i == "L1_003_softmax" and sys.argv[2] != "all":
        p["fp32_ratio"] = 1.2
        p["exception"] = "known: softmax reads its row twice; slower than PyTorch: fp32 ratio 1.200"
    probs.append(p)
probs.append({"id": "L9_999_not_in_run", "fp32_ratio": 3.0, "tf32_ratio": 3.0, "exception": "unexplained: x"})
json.dump({"gpu": "NVIDIA H200", "torch": "2.11.0+cu130", "cuda": "13.0", "samples": 20, "problems": probs},
          open(sys.argv[1], "w"), indent=1)
PY
}

# One exception and one problem without a measurement.
run="$tmp/run"
cp -r tests/fixtures/render_run "$run"
make_parity "$run/parity.json"
judge "$run"
"$render" "$run" 2>"$tmp/log" || fail "render failed (exit $?): $(cat "$tmp/log")"
t="$run/report/tables"
[ -s "$t/baseline_parity.csv" ] && [ -s "$t/baseline_parity.tex" ] || fail "tables/baseline_parity.csv or .tex missing"
grep -q '\\toprule' "$t/baseline_parity.tex" && grep -q '\\bottomrule' "$t/baseline_parity.tex" ||
    fail "baseline_parity.tex is not booktabs"
python3 - "$t/baseline_parity.csv" "$t/problems.csv" <<'PY' || exit 1
import csv, sys
lines = open(sys.argv[1]).read().split("\n")
def bad(msg):
    print("render_parity: baseline_parity.csv: " + msg)
    sys.exit(1)
rows = list(csv.reader(lines))
rows = [r for r in rows if r]
if rows[0] != ["id", "fp32_ratio", "tf32_ratio", "bf16_ratio", "reason", "gpu", "torch", "cuda", "samples", "limit"]:
    bad("the first line is not the header row: %r" % rows[0])
for r in rows[1:]:
    if r[5:] != ["NVIDIA H200", "2.11.0+cu130", "13.0", "20", "1.05"]:
        bad("row %r does not name GPU, torch, CUDA, samples and limit" % r)
got = {r[0]: r for r in rows[1:]}
if sorted(got) != ["L1_003_softmax", "L1_005_sum_reduction", "L2_008_batched_matmul"]:
    bad("rows are %r, not L1_003_softmax, L1_005_sum_reduction and L2_008_batched_matmul" % sorted(got))
s = got["L1_003_softmax"]
if abs(float(s[1]) - 1.2) > 1e-12 or abs(float(s[2]) - 1.01) > 1e-12 or s[3] != "":
    bad("ratios of L1_003_softmax are %r" % s[1:4])
if s[4] != "known: softmax reads its row twice; slower than PyTorch: fp32 ratio 1.200":
    bad("reason of L1_003_softmax is %r" % s[4])
b = got["L1_005_sum_reduction"]
if abs(float(b[3]) - 1.3) > 1e-12 or b[4] != "slower than PyTorch: bf16 ratio 1.300":
    bad("the bf16 row of L1_005_sum_reduction is %r" % b)
if "not measured" not in got["L2_008_batched_matmul"][4]:
    bad("L2_008_batched_matmul's reason is %r" % got["L2_008_batched_matmul"][4])
# problems.csv marks the same problems in every set.
prows = list(csv.DictReader(open(sys.argv[2])))
for r in prows:
    want = "exception" if r["problem"] in got else "ok"
    if r["baseline_parity"] != want:
        print("render_parity: problems.csv: %s/%s baseline_parity is %r, not %r" %
              (r["set"], r["problem"], r["baseline_parity"], want))
        sys.exit(1)
PY
pdftotext "$run/report/report.pdf" "$tmp/text.txt" || fail "pdftotext failed"
tr '\n' ' ' <"$tmp/text.txt" | tr -s ' ' >"$tmp/flat.txt"
grep -q "Baseline parity with PyTorch" "$tmp/flat.txt" || fail "the PDF has no parity section"
grep -q "softmax reads its row twice" "$tmp/flat.txt" || fail "the PDF does not give the exception's reason"
grep -q "parity exception" "$tmp/flat.txt" || fail "the per-problem tables do not mark the exception"
grep -q "not measured" "$tmp/flat.txt" || fail "the PDF does not say that a problem was not measured"
# Deterministic: a second render is byte-identical.
cp -r "$run/report" "$tmp/first"
"$render" "$run" 2>/dev/null || fail "second render failed"
diff -r "$tmp/first" "$run/report" >/dev/null || fail "two renders with parity.json differ"

# Every baseline within 1.05: the sentence instead of the table.
run2="$tmp/run2"
cp -r tests/fixtures/render_run "$run2"
make_parity "$run2/parity.json" all
judge "$run2"
"$render" "$run2" 2>"$tmp/log" || fail "render (all within) failed: $(cat "$tmp/log")"
pdftotext "$run2/report/report.pdf" - | tr '\n' ' ' | tr -s ' ' >"$tmp/flat2.txt"
grep -q "Every baseline of the run is within 1.05 of PyTorch eager on NVIDIA H200 (torch 2.11.0+cu130" "$tmp/flat2.txt" ||
    fail "no 'every baseline is within 1.05' sentence"
[ "$(grep -c . "$run2/report/tables/baseline_parity.csv")" -eq 1 ] ||
    fail "baseline_parity.csv should hold its header row only: $(cat "$run2/report/tables/baseline_parity.csv")"

# No parity.json: the section says so, and there is no parity table.
run3="$tmp/run3"
cp -r tests/fixtures/render_run "$run3"
"$render" "$run3" 2>"$tmp/log" || fail "render (no parity) failed: $(cat "$tmp/log")"
pdftotext "$run3/report/report.pdf" - | tr '\n' ' ' | tr -s ' ' | grep -q "No parity file was found for the run" ||
    fail "without parity.json the PDF does not say so"
[ ! -e "$run3/report/tables/baseline_parity.csv" ] || fail "a parity table without parity.json"

# Malformed parity.json: analyze exits 2 naming the file; analysis.json and
# the earlier report are kept, and no temporaries are left.
cp "$run3/analysis.json" "$tmp/before.json"
bad_case() {
    local what=$1
    "$build/kbv-analyze" --parity-only "$run3" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [ "$rc" -eq 2 ] || fail "$what: exit $rc, not 2: $(cat "$tmp/err")"
    grep -qF "kbv: analyze:" "$tmp/err" && grep -qF "$run3/parity.json" "$tmp/err" ||
        fail "$what: the message does not name $run3/parity.json: $(cat "$tmp/err")"
    cmp -s "$run3/analysis.json" "$tmp/before.json" || fail "$what: analysis.json changed"
    [ "$(cd "$run3" && ls -A | sort | tr '\n' ' ')" = "analysis.json manifest.json parity.json report " ] ||
        fail "$what: temporaries left: $(ls -A "$run3")"
}
make_parity "$tmp/good.json"
head -c 300 "$tmp/good.json" >"$run3/parity.json"
bad_case "truncated JSON"
sed 's/"fp32_ratio": 0.99/"fp32_ratio": "fast"/' "$tmp/good.json" >"$run3/parity.json"
bad_case "a ratio that is a string"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["gpu"]; json.dump(d, open(sys.argv[2], "w"))' \
    "$tmp/good.json" "$run3/parity.json"
bad_case "no gpu"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["schema"] = "kbv-parity/2"; json.dump(d, open(sys.argv[2], "w"))' \
    "$tmp/good.json" "$run3/parity.json"
bad_case "another schema"

# The verdicts are analyze's: render draws a limit and reasons it is given,
# and a malformed verdict is an input error naming analysis.json.
python3 - "$run/analysis.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
a["parity"]["limit"] = 1.5
json.dump(a, open(sys.argv[1], "w"))
PY
"$render" "$run" 2>"$tmp/log" || fail "render with limit 1.5 failed: $(cat "$tmp/log")"
grep -q ',1.50$' "$run/report/tables/baseline_parity.csv" || fail "render did not take analyze's limit"
python3 - "$run/analysis.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
a["parity"]["problems"][2]["reason"] = None
json.dump(a, open(sys.argv[1], "w"))
PY
"$render" "$run" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -qF "analysis.json" "$tmp/err" || fail "a verdict without a reason was not refused: $(cat "$tmp/err")"
exit 0
