#!/usr/bin/env bash
# kbv-render on awkward inputs: no sets at all; a set with no problems and
# null everything; SOURCE_DATE_EPOCH in place of created_utc; no
# manifest.json; and, when kbv-analyze is built, the analysis of the
# synthetic run tests/fixtures/run_small.  Each must give a PDF qpdf accepts.
# usage: tests/cli/render_edge.sh BUILD_DIR
set -u
# The environment must not steer the date; the templates are this
# checkout's, wherever the build folder is.
unset SOURCE_DATE_EPOCH
export KBV_TEMPLATES="$PWD/templates"
build=$(cd "${1:-build}" && pwd)
render="$build/kbv-render"
fail() { echo "render_edge: $*"; exit 1; }
tmp=$(mktemp -d /tmp/kbv-render-edge.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

check_pdf() {
    qpdf --check "$1/report/report.pdf" >"$tmp/qpdf" 2>&1 || fail "$2: qpdf --check: $(tail -2 "$tmp/qpdf")"
    for s in "$1"/report/figures/*.svg; do
        xmllint --noout "$s" 2>/dev/null || fail "$2: xmllint rejects $(basename "$s")"
    done
}

# No sets.
mkdir -p "$tmp/nosets"
python3 - tests/fixtures/render_run/analysis.json "$tmp/nosets/analysis.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
a["sets"] = []
json.dump(a, open(sys.argv[2], "w"), indent=2)
PY
"$render" "$tmp/nosets" 2>"$tmp/err" || fail "no sets: exit $?: $(cat "$tmp/err")"
grep -q "manifest.json: not found" "$tmp/err" || fail "no warning for the missing manifest: $(cat "$tmp/err")"
check_pdf "$tmp/nosets" "no sets"

# A set with no problems and null estimates everywhere.
mkdir -p "$tmp/empty"
python3 - tests/fixtures/render_run/analysis.json "$tmp/empty/analysis.json" tests/fixtures/render_run/manifest.json \
    "$tmp/empty/manifest.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[3]))
s = a["sets"][2]
# renamed in the manifest too: render refuses a set the manifest lacks
for ms in m["sets"]:
    if ms["name"] == s["name"]:
        ms["name"] = "empty set/with odd name"
json.dump(m, open(sys.argv[4], "w"), indent=2)
s["name"] = "empty set/with odd name"
s["n_problems"] = 0
s["problems"] = []
s["counts"] = {c: 0 for c in a["classes"]}
null = {"estimate": None, "ci_low": None, "ci_high": None, "n": 0}
for b in ("fp32", "tf32"):
    s["baselines"][b] = {"geomean_speedup_correct": null, "geomean_speedup_all": null,
                         "fast_p": [{"p": p, "estimate": None, "ci_low": None, "ci_high": None}
                                    for p in (0, 0.5, 0.8, 1, 1.5, 2)]}
s["memory"] = {"efficiency_geomean": None, "efficient_share": None}
s["inflation"] = []
json.dump(a, open(sys.argv[2], "w"), indent=2)
PY
"$render" "$tmp/empty" 2>"$tmp/err" || fail "empty set: exit $?: $(cat "$tmp/err")"
check_pdf "$tmp/empty" "empty set"
[ -s "$tmp/empty/report/figures/forest_empty_set_with_odd_name.svg" ] || fail "the odd set name has no forest file: $(ls "$tmp/empty/report/figures")"

# Only what DESIGN.md section 6 requires: no fast_p_curve, no inflation,
# no n_samples, no memory object.
mkdir -p "$tmp/minimal"
python3 - tests/fixtures/render_run/analysis.json "$tmp/minimal/analysis.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
for s in a["sets"]:
    s.pop("inflation", None)
    s.pop("memory", None)
    for b in s["baselines"].values():
        b.pop("fast_p_curve", None)
    for p in s["problems"]:
        p.pop("n_samples", None)
        p.pop("max_rel_err", None)
        p.pop("tier", None)
json.dump(a, open(sys.argv[2], "w"), indent=2)
PY
"$render" "$tmp/minimal" 2>"$tmp/err" || fail "minimal analysis: exit $?: $(cat "$tmp/err")"
check_pdf "$tmp/minimal" "minimal analysis"

# SOURCE_DATE_EPOCH replaces created_utc (2001-09-09 01:46:40 UTC).
cp -r tests/fixtures/render_run "$tmp/sde"
SOURCE_DATE_EPOCH=1000000000 "$render" "$tmp/sde" 2>"$tmp/err" || fail "SOURCE_DATE_EPOCH: $(cat "$tmp/err")"
TZ=UTC pdfinfo "$tmp/sde/report/report.pdf" | grep -q "CreationDate: *Sun Sep  9 01:46:40 2001" ||
    fail "CreationDate is not SOURCE_DATE_EPOCH: $(TZ=UTC pdfinfo "$tmp/sde/report/report.pdf" | grep Creation)"
pdftotext "$tmp/sde/report/report.pdf" - | grep -q "2001-09-09 01:46 UTC" || fail "the printed date is not SOURCE_DATE_EPOCH"

# The real analyze stage's output, when both exist.
if [ -x "$build/kbv-analyze" ] && [ -d tests/fixtures/run_small ]; then
    cp -r tests/fixtures/run_small "$tmp/small"
    "$build/kbv-analyze" "$tmp/small" >/dev/null 2>"$tmp/err" || fail "kbv-analyze run_small: $(cat "$tmp/err")"
    "$render" "$tmp/small" 2>"$tmp/err" || fail "render run_small: exit $?: $(cat "$tmp/err")"
    check_pdf "$tmp/small" "run_small"
    pdftotext "$tmp/small/report/report.pdf" "$tmp/small.txt"
    python3 tests/fixtures/render_tools/check_numbers.py "$tmp/small/analysis.json" "$tmp/small.txt" >"$tmp/num" ||
        fail "run_small: $(cat "$tmp/num")"
fi
exit 0
