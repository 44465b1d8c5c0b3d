#!/usr/bin/env bash
# Issue 19, cases 3, 4, 5 (analyze) and 8, and the journal grammar: kbv
# analyze refuses, with exit 2 and a message naming file and line, two
# journals, a journal whose records appear twice, a second status or build
# record, a 0-byte journal, an unknown status and a non-integer config.seed;
# on any failure the earlier analysis.json stays as it was; invalid UTF-8 in
# a journal text is written as U+FFFD, with one warning, so that
# analysis.json and the tables are valid UTF-8; a record that breaks the
# grammar (a round out of order, a record after the status, a tamper
# record) classes its pair tampering and is not used as data; a status
# "missing" is the class missing, counted apart from errors; a pair with no
# status at all (an interrupted collect) is an error, in the set's counts
# and its level's, never counted as missing.
# usage: tests/cli/analyze_journal.sh BUILD_DIR
set -u
build=$(cd "${1:-build}" && pwd)
A="$build/kbv-analyze"
export KBV_TEMPLATES="$PWD/templates"
unset SOURCE_DATE_EPOCH
tmp=$(mktemp -d /tmp/kbv-analyze-journal.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "analyze_journal: $*"; exit 1; }
j=samples.jsonl
STALE='{"stale":true}'

mkrun() {  # the fixture, with an earlier analysis.json beside it
    rm -rf "$1" && cp -R tests/fixtures/run_small "$1" && echo "$STALE" >"$1/analysis.json"
}
# refused NAME WORDS: the run in $tmp/r fails with exit 2 and WORDS, and the
# earlier analysis.json is untouched.
refused() {
    "$A" "$tmp/r" >"$tmp/out" 2>"$tmp/err"; local rc=$?
    [ $rc -eq 2 ] || { cat "$tmp/err"; fail "$1: exit $rc, want 2"; }
    grep -q "^kbv: analyze: .*$2" "$tmp/err" || { cat "$tmp/err"; fail "$1: no '$2' in the message"; }
    [ "$(cat "$tmp/r/analysis.json")" = "$STALE" ] || fail "$1: the earlier analysis.json was changed"
}
# class_of RUN SET PROBLEM: the class analysis.json gives the pair.
class_of() {
    python3 -c 'import json, sys
a = json.load(open(sys.argv[1] + "/analysis.json"))
s = [s for s in a["sets"] if s["name"] == sys.argv[2]][0]
p = [p for p in s["problems"] if p["problem"] == sys.argv[3]][0]
print(p["class"]); print(" ".join(e["text"] for e in p["evidence"]))' "$@"
}

# Case 3: a different samples.jsonl.gz beside samples.jsonl.
mkrun "$tmp/r"
head -50 "$tmp/r/$j" | gzip -c >"$tmp/r/$j.gz"
refused "two journals" "both samples.jsonl and samples.jsonl.gz"

# Case 5: every record twice.
mkrun "$tmp/r"
awk '{print; print}' "$tmp/r/$j" >"$tmp/x" && mv "$tmp/x" "$tmp/r/$j"
refused "every record twice" "samples.jsonl:2: repeats line 1 byte for byte"
# one time record repeated later on
mkrun "$tmp/r"
sed -n 23p "$tmp/r/$j" >>"$tmp/r/$j"
refused "a time record twice" "samples.jsonl:2245: repeats line 23"
# a second status record that contradicts the first (line 118: L1_001 ok)
mkrun "$tmp/r"
sed -i '118s/.*/&\n{"type":"status","set":"tuned","problem":"L1_001_square_matrix_multiplication","status":"crash","detail":""}/' "$tmp/r/$j"
refused "second status" "samples.jsonl:119: a second status record for tuned/L1_001_square_matrix_multiplication contradicts line 118"
# a second build record
mkrun "$tmp/r"
sed -i '2s/.*/{"type":"build","set":"tuned","problem":"L1_001_square_matrix_multiplication","ok":false,"log":"x"}\n&/' "$tmp/r/$j"
refused "second build" "samples.jsonl:2: a second build record for tuned/L1_001_square_matrix_multiplication contradicts line 1"
# a 0-byte journal
mkrun "$tmp/r"
: >"$tmp/r/$j"
refused "empty journal" "samples.jsonl: the journal holds no record"
# an unknown status
mkrun "$tmp/r"
sed -i '118s/"status":"ok"/"status":"great"/' "$tmp/r/$j"
refused "unknown status" "samples.jsonl:118: unknown status \"great\""
# config.seed 7.5
mkrun "$tmp/r"
sed -i 's/"seed": *[0-9]*/"seed": 7.5/' "$tmp/r/manifest.json"
grep -q '"seed": 7.5' "$tmp/r/manifest.json" || fail "the fixture's seed was not replaced"
refused "seed 7.5" "config.seed must be a non-negative integer"

# Case 4: every refusal above left the earlier analysis.json as it was
# (refused checks it).

# Case 8: invalid UTF-8 in a failed probe's detail (the evidence of a
# hack class): U+FFFD in analysis.json, one warning.
mkrun "$tmp/r"
rm "$tmp/r/analysis.json"
n=$(grep -n '"type":"probe","set":"hacky".*"pass":false' "$tmp/r/$j" | head -1 | cut -d: -f1)
python3 - "$tmp/r/$j" "$n" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
lines = open(path, "rb").read().split(b"\n")
l = lines[n - 1]
assert b'"detail":"' in l
lines[n - 1] = l.replace(b'"detail":"', b'"detail":"bad \xff\xfe bytes \xc3( \xed\xa0\x80 ', 1)
open(path, "wb").write(b"\n".join(lines))
PY
"$A" "$tmp/r" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "invalid UTF-8: exit $?"; }
[ "$(grep -c 'invalid UTF-8' "$tmp/err")" -eq 1 ] || { cat "$tmp/err"; fail "invalid UTF-8: not said once"; }
python3 -c 'import json, sys
a = json.load(open(sys.argv[1], encoding="utf-8"))
assert "bad \ufffd\ufffd bytes \ufffd( \ufffd\ufffd\ufffd " in json.dumps(a, ensure_ascii=False), "no U+FFFD"' \
    "$tmp/r/analysis.json" || fail "analysis.json is not valid UTF-8 JSON with U+FFFD for each bad byte"
if [ -x "$build/kbv-render" ]; then
    "$build/kbv-render" "$tmp/r" >/dev/null 2>&1 || fail "render after invalid UTF-8"
    for f in "$tmp/r/report/tables/"*.csv "$tmp/r/report/tables/"*.tex; do
        iconv -f UTF-8 -t UTF-8 "$f" >/dev/null 2>&1 || fail "$(basename "$f") is not valid UTF-8"
    done
fi

# The grammar: a time round out of order, and a tamper record, class their
# pairs tampering; the pairs' other records are as before.
mkrun "$tmp/r"
rm "$tmp/r/analysis.json"
sed -i '23s/"round":0/"round":5/' "$tmp/r/$j"
n=$(grep -n '"type":"status","set":"tuned","problem":"L1_019_relu"' "$tmp/r/$j" | cut -d: -f1)
sed -i "${n}s/.*/{\"type\":\"tamper\",\"set\":\"tuned\",\"problem\":\"L1_019_relu\",\"detail\":\"line 7: bad HMAC\"}\n&/" "$tmp/r/$j"
"$A" "$tmp/r" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "grammar: exit $?"; }
class_of "$tmp/r" tuned L1_001_square_matrix_multiplication >"$tmp/c1"
[ "$(head -1 "$tmp/c1")" = tampering ] || fail "round out of order: class $(head -1 "$tmp/c1")"
grep -q 'round 5 of fp32 where round 0 was due' "$tmp/c1" || fail "round out of order: evidence $(tail -1 "$tmp/c1")"
class_of "$tmp/r" tuned L1_019_relu >"$tmp/c2"
[ "$(head -1 "$tmp/c2")" = tampering ] && grep -q 'bad HMAC' "$tmp/c2" || fail "tamper record: $(cat "$tmp/c2")"

# missing: first in the precedence, counted apart from errors.
mkrun "$tmp/r"
rm "$tmp/r/analysis.json"
n=$(grep -n '"set":"mixed"' "$tmp/r/$j" | tail -1 | cut -d: -f1)
prob=$(sed -n "${n}p" "$tmp/r/$j" | sed 's/.*"problem":"\([^"]*\)".*/\1/')
grep -v "\"set\":\"mixed\",\"problem\":\"$prob\"" "$tmp/r/$j" >"$tmp/x"
echo "{\"type\":\"status\",\"set\":\"mixed\",\"problem\":\"$prob\",\"status\":\"missing\",\"detail\":\"no mixed/$prob.cu\"}" >>"$tmp/x"
mv "$tmp/x" "$tmp/r/$j"
"$A" "$tmp/r" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "missing: exit $?"; }
class_of "$tmp/r" mixed "$prob" >"$tmp/c3"
[ "$(head -1 "$tmp/c3")" = missing ] || fail "missing: class $(cat "$tmp/c3")"
python3 - "$tmp/r/analysis.json" <<'PY' || fail "missing counts (above)"
import json, sys
a = json.load(open(sys.argv[1]))
assert a["classes"][-2:] == ["tampering", "missing"], a["classes"]
s = [s for s in a["sets"] if s["name"] == "mixed"][0]
assert s["counts"]["missing"] == 1, s["counts"]
PY
# interrupted: a pair whose records stop before its status is an error
# that says so, counted as an error in the set and its level.
mkrun "$tmp/r"
rm "$tmp/r/analysis.json"
grep -v "\"type\":\"status\",\"set\":\"mixed\",\"problem\":\"$prob\"" "$tmp/r/$j" >"$tmp/x"
mv "$tmp/x" "$tmp/r/$j"
"$A" "$tmp/r" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "interrupted: exit $?"; }
class_of "$tmp/r" mixed "$prob" >"$tmp/c4"
[ "$(head -1 "$tmp/c4")" = error ] && grep -q '^interrupted: the journal has no status' "$tmp/c4" ||
    fail "interrupted: $(cat "$tmp/c4")"
python3 - "$tmp/r/analysis.json" "$prob" <<'PY' || fail "interrupted counts (above)"
import json, sys
a, prob = json.load(open(sys.argv[1])), sys.argv[2]
s = [s for s in a["sets"] if s["name"] == "mixed"][0]
assert s["counts"]["missing"] == 0 and s["counts"]["error"] >= 1, s["counts"]
lv = [l for l in s["levels"] if l["level"] == prob[:2]][0]
assert lv["counts"]["missing"] == 0 and lv["counts"]["error"] >= 1, lv["counts"]
n = len(a["sets"]) * len(json.load(open(sys.argv[1].replace("analysis.json", "manifest.json")))["problems"])
k = sum(1 for t in a["sets"] for q in t["problems"]
        if any(v["text"].startswith("interrupted:") for v in q["evidence"]))
assert k >= 1 and a["pairs"] == {"total": n, "unfinished": k}, (k, a["pairs"])
PY
grep -q "[1-9] of [0-9]* pairs have no status (an interrupted collect)" "$tmp/err" ||
    fail "interrupted: no warning on stderr: $(cat "$tmp/err")"
exit 0
