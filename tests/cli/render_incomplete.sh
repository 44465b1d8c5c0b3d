#!/usr/bin/env bash
# An interrupted run's report says so before any verdict: analyze counts
# the pairs without a status (analysis.json "pairs"), and render's headline
# and run summary name them; a whole run's report says nothing of it, an
# analysis without "pairs" (older analyze) renders as before, and a
# malformed "pairs" is bad input naming analysis.json (exit 2).
# usage: tests/cli/render_incomplete.sh BUILD_DIR
set -u
unset SOURCE_DATE_EPOCH
export KBV_TEMPLATES="$PWD/templates"
build=$(cd "${1:-build}" && pwd)
fail() { echo "render_incomplete: $*"; exit 1; }
tmp=$(mktemp -d /tmp/kbv-render-incomplete.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
text() { pdftotext "$1/report/report.pdf" - | tr '\n' ' ' | tr -s ' '; }

# run_small leaves one of its 21 pairs without any record.
cp -R tests/fixtures/run_small "$tmp/part"
"$build/kbv-analyze" "$tmp/part" >/dev/null 2>&1 || fail "analyze of the interrupted run: exit $?"
"$build/kbv-render" "$tmp/part" >/dev/null 2>"$tmp/err" || fail "render: exit $?: $(cat "$tmp/err")"
text "$tmp/part" >"$tmp/t"
grep -q "This run is incomplete: 1 of its 21 (set, problem) pairs were not collected" "$tmp/t" ||
    fail "no incomplete line in the headline"
grep -q "incomplete: 1 of 21 pairs not collected" "$tmp/t" || fail "no incomplete note in the run summary"

# The same run whole: no such line.
cp -R tests/fixtures/run_small "$tmp/whole"
echo '{"type":"status","set":"mixed","problem":"L2_012_gemm_multiply_leakyrelu","status":"crash","detail":"test"}' \
    >>"$tmp/whole/samples.jsonl"
"$build/kbv-analyze" "$tmp/whole" >/dev/null 2>"$tmp/err" || fail "analyze of the whole run: exit $?"
grep -q "no status" "$tmp/err" && fail "analyze warns of a whole run: $(cat "$tmp/err")"
"$build/kbv-render" "$tmp/whole" >/dev/null 2>&1 || fail "render of the whole run: exit $?"
text "$tmp/whole" | grep -q "incomplete" && fail "a whole run's report calls it incomplete"

# An older analysis without "pairs" renders without the line.
python3 - "$tmp/part/analysis.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1])); del a["pairs"]; json.dump(a, open(sys.argv[1], "w"))
PY
"$build/kbv-render" "$tmp/part" >/dev/null 2>&1 || fail "render without pairs: exit $?"
text "$tmp/part" | grep -q "This run is incomplete" && fail "an analysis without pairs called incomplete"

# A malformed "pairs".
for bad in '{"total": 21}' '{"total": 3, "unfinished": 4}' '{"total": -1, "unfinished": 0}' '[1, 2]'; do
    python3 - "$tmp/part/analysis.json" "$bad" <<'PY'
import json, sys
a = json.load(open(sys.argv[1])); a["pairs"] = json.loads(sys.argv[2]); json.dump(a, open(sys.argv[1], "w"))
PY
    "$build/kbv-render" "$tmp/part" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] && grep -q "analysis.json: pairs" "$tmp/err" || fail "pairs $bad: exit $rc: $(cat "$tmp/err")"
done
echo "render_incomplete: ok"
