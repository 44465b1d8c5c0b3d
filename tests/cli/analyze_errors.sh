#!/usr/bin/env bash
# kbv-analyze's handling of bad runs: a torn last journal line is dropped
# with a warning; a malformed line elsewhere, a record for a set or problem
# the manifest does not name, a time that is not positive and finite, and a
# manifest of another schema are errors that exit 2, print
# "kbv: analyze: ..." naming the file (and line), and leave the analysis.json
# that was there untouched (issue 19, case 4).  A record that breaks the
# journal grammar classes its pair `tampering`.
set -u
build=${1:-build}
bin="$build/kbv-analyze"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "analyze_errors: $*"; exit 1; }

mkrun() {  # mkrun DIR: the fixture with a stale analysis.json beside it
    rm -rf "$1" && cp -R tests/fixtures/run_small "$1" && echo '{"stale":true}' >"$1/analysis.json"
}

# expect_error NAME WORDS: the run in $tmp/r must fail with exit 2 and a
# message holding WORDS, and leave the earlier analysis.json as it was.
expect_error() {
    "$bin" "$tmp/r" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "$1: exit $rc, want 2"
    grep -q "^kbv: analyze: .*$2" "$tmp/err" || { cat "$tmp/err"; fail "$1: no 'kbv: analyze: ...$2' message"; }
    [ "$(cat "$tmp/r/analysis.json" 2>/dev/null)" = '{"stale":true}' ] || fail "$1: the earlier analysis.json was not kept"
    ls "$tmp/r" | grep -q 'analysis.json.tmp' && fail "$1: temporary left behind"
    return 0
}

j=samples.jsonl
line='{"type":"time","set":"tuned","problem":"L1_019_relu","variant":"fp32","round":99,"gpu_ms":0.5}'

# A torn last line: dropped, with a warning; the analysis is that of the
# journal without it.
mkrun "$tmp/ok" && rm "$tmp/ok/analysis.json"
"$bin" "$tmp/ok" 2>/dev/null || fail "fixture"
mkrun "$tmp/r"
printf '%s' '{"type":"time","set":"tuned","problem":"L1_019_re' >>"$tmp/r/$j"
"$bin" "$tmp/r" 2>"$tmp/err" || { cat "$tmp/err"; fail "torn line: exit $?"; }
grep -q "warning: .*samples.jsonl:2245: dropped a torn last line" "$tmp/err" || { cat "$tmp/err"; fail "torn line: no warning"; }
cmp -s "$tmp/r/analysis.json" "$tmp/ok/analysis.json" || fail "torn line changed the analysis"

# The same bytes on a line in the middle: an error naming the line.
mkrun "$tmp/r"
sed -i '10s/.*/{"type":"time","set":"tuned","problem":"L1_019_re/' "$tmp/r/$j"
expect_error "malformed line" "samples.jsonl:10: malformed JSON"

mkrun "$tmp/r"
sed -i '12s/.*/not json at all/' "$tmp/r/$j"
expect_error "garbage line" "samples.jsonl:12: "

mkrun "$tmp/r"
echo "${line/tuned/nosuchset}" >>"$tmp/r/$j"
expect_error "unknown set" "samples.jsonl:2245: set \"nosuchset\" is not in the manifest"

mkrun "$tmp/r"
echo "${line/L1_019_relu/L9_999_nothing}" >>"$tmp/r/$j"
expect_error "unknown problem" "samples.jsonl:2245: problem \"L9_999_nothing\" is not in the manifest"

for bad in 0 -0.25 null '"fast"' 1e999; do
    mkrun "$tmp/r"
    sed -i "23s/\"gpu_ms\":[0-9.]*/\"gpu_ms\":$bad/" "$tmp/r/$j"
    expect_error "gpu_ms $bad" "samples.jsonl:23: \"gpu_ms\" must be a positive finite number"
done

mkrun "$tmp/r"
sed -i 's/"kbv-run\/1"/"kbv-run\/0"/' "$tmp/r/manifest.json"
expect_error "schema" "manifest.json: schema \"kbv-run/0\" is not kbv-run/1"

mkrun "$tmp/r"
rm "$tmp/r/$j"
expect_error "no journal" "no samples.jsonl"

mkrun "$tmp/r"
echo '{"schema":' >"$tmp/r/manifest.json"
expect_error "bad manifest" "manifest.json"

# Unknown record types and fields break the journal grammar: the pair is
# classed tampering, with the record as evidence, and the rest is as before.
mkrun "$tmp/r"
sed -i '5s/}$/,"future":{"x":[1,2]}}/' "$tmp/r/$j"
"$bin" "$tmp/r" 2>/dev/null || fail "unknown field: exit $?"
python3 - "$tmp/r/analysis.json" <<'PY' || fail "unknown field: not tampering"
import json, sys
a = json.load(open(sys.argv[1]))
p = a["sets"][0]["problems"][0]
assert p["class"] == "tampering", p["class"]
assert "future" in json.dumps(p["evidence"]), p["evidence"]
assert a["sets"][0]["counts"]["tampering"] == 1
PY

"$bin" "$tmp/nonexistent" 2>"$tmp/err"; [ $? -eq 2 ] || fail "a missing RUN_DIR must exit 2"
exit 0
