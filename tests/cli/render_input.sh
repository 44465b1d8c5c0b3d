#!/usr/bin/env bash
# Issue 19, cases 5 (render), 6 and 7: kbv-render refuses, with exit 2, an
# analysis.json whose numbers leave their ranges (fast_p 7, an inverted or
# negative interval, a negative speedup) or that does not describe the run
# beside it (another run_id, a set the manifest lacks); a 5 MB evidence text
# renders in under 2 s; a `.report.tmp.<pid>/` left by a killed render is
# removed by the next one; inputs that are not regular files (/dev/zero as
# --style or --template, a manifest that links to /dev/zero, a FIFO as
# analysis.json, /dev/zero as prompt --template) are refused at once.
# usage: tests/cli/render_input.sh BUILD_DIR
set -u
build=$(cd "${1:-build}" && pwd)
R="$build/kbv-render"
export KBV_TEMPLATES="$PWD/templates"
unset SOURCE_DATE_EPOCH
tmp=$(mktemp -d /tmp/kbv-render-input.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "render_input: $*"; exit 1; }
FX=tests/fixtures/render_run

# edited NAME PYTHON: a copy of the fixture run whose analysis.json (a) and
# manifest.json (m) the python statements change; the run must be refused
# with exit 2 and a message holding WORDS ($3), and no report written.
edited() {
    rm -rf "$tmp/e" && mkdir "$tmp/e"
    python3 - "$FX" "$tmp/e" "$2" <<'PY' || fail "$1: the edit failed"
import json, sys
fx, d, code = sys.argv[1], sys.argv[2], sys.argv[3]
a = json.load(open(fx + "/analysis.json"))
m = json.load(open(fx + "/manifest.json"))
exec(code)
json.dump(a, open(d + "/analysis.json", "w"))
json.dump(m, open(d + "/manifest.json", "w"))
PY
    timeout 20 "$R" "$tmp/e" >/dev/null 2>"$tmp/err"; local rc=$?
    [ $rc -eq 2 ] || { cat "$tmp/err"; fail "$1: exit $rc, want 2"; }
    grep -q -- "$3" "$tmp/err" || { cat "$tmp/err"; fail "$1: no '$3' in the message"; }
    [ ! -e "$tmp/e/report" ] || fail "$1: a report was written"
}

# Case 5: ranges and agreement with the manifest.
edited "fast_p 7" 'a["sets"][0]["baselines"]["fp32"]["fast_p"][3]["estimate"] = 7' "is outside \[0, 1\]"
edited "inverted interval" '
g = a["sets"][0]["baselines"]["tf32"]["geomean_speedup_correct"]
g["ci_low"], g["ci_high"] = g["ci_high"] * 2, g["ci_low"] / 2' "ci_low .* <= estimate .* <= ci_high .* does not hold"
edited "negative interval" '
s = [p for p in a["sets"][0]["problems"] if p["speedup"]["fp32"]["estimate"]][0]["speedup"]["fp32"]
s["ci_low"] = -1' "ci_low: -1 is outside (0"
edited "negative speedup" '
s = [p for p in a["sets"][1]["problems"] if p["speedup"]["tf32"]["estimate"]][0]["speedup"]["tf32"]
s["estimate"] = -2' "estimate: -2 is outside (0"
edited "efficient share 1.5" 'a["sets"][0]["memory"]["efficient_share"] = {"estimate": 1.5, "ci_low": 1, "ci_high": 2}' \
    "efficient_share.estimate: 1.5 is outside"
edited "another run_id" 'a["run_id"] = "someone-else"' "run_id 'someone-else' is not the manifest's"
edited "set not in the manifest" 'a["sets"][1]["name"] = "ghost"' "set 'ghost' is not in manifest.json"

# Case 6: a 5 MB evidence text, with and without spaces, in under 2 s.
rm -rf "$tmp/big" && mkdir "$tmp/big" && cp "$FX/manifest.json" "$tmp/big/"
python3 - "$FX/analysis.json" "$tmp/big/analysis.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
p = [p for s in a["sets"] for p in s["problems"] if p["evidence"]][0]
words = " ".join("word%d_x" % i for i in range(400000))
p["evidence"][0]["text"] = words[:2500000] + "y" * 2500000
json.dump(a, open(sys.argv[2], "w"))
PY
t0=$(date +%s%N)
timeout 60 "$R" "$tmp/big" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "5 MB evidence: exit $?"; }
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -lt 2000 ] || fail "5 MB evidence took $ms ms (limit 2000)"

# Case 6: a killed render's folder is removed by the next render; a live
# one's is not.
rm -rf "$tmp/k" && cp -R "$FX" "$tmp/k"
sleep 30 & live=$!
dead=999999
while kill -0 "$dead" 2>/dev/null; do dead=$((dead - 1)); done
mkdir -p "$tmp/k/.report.tmp.$dead/figures" "$tmp/k/.report.tmp.$live" "$tmp/k/.report.old.$dead"
echo x >"$tmp/k/.report.tmp.$dead/figures/a.svg"
"$R" "$tmp/k" >/dev/null 2>&1 || fail "render beside stale folders"
[ ! -e "$tmp/k/.report.tmp.$dead" ] && [ ! -e "$tmp/k/.report.old.$dead" ] || fail "a dead render's folder was not removed"
[ -d "$tmp/k/.report.tmp.$live" ] || fail "a live render's folder was removed"
kill "$live" 2>/dev/null; wait "$live" 2>/dev/null

# Case 7: inputs that are not regular files, refused at once.
# at_once NAME CMD...: exit 2 within 5 s, naming "not a regular file".
at_once() {
    local name=$1; shift
    timeout 5 "$@" >/dev/null 2>"$tmp/err"; local rc=$?
    [ $rc -ne 124 ] || fail "$name: hangs"
    [ $rc -eq 2 ] || { cat "$tmp/err"; fail "$name: exit $rc, want 2"; }
    grep -q "not a regular file" "$tmp/err" || { cat "$tmp/err"; fail "$name: no 'not a regular file'"; }
}
rm -rf "$tmp/n" && cp -R "$FX" "$tmp/n"
at_once "--style /dev/zero" "$R" "$tmp/n" --style /dev/zero
at_once "--template /dev/zero" "$R" "$tmp/n" --template /dev/zero
at_once "--template a folder" "$R" "$tmp/n" --template "$tmp"
rm "$tmp/n/manifest.json" && ln -s /dev/zero "$tmp/n/manifest.json"
at_once "manifest -> /dev/zero" "$R" "$tmp/n"
rm -rf "$tmp/n" && cp -R "$FX" "$tmp/n"
rm "$tmp/n/analysis.json" && mkfifo "$tmp/n/analysis.json"
at_once "analysis.json a FIFO" "$R" "$tmp/n"
if [ -x "$build/kbv-prompt" ]; then
    at_once "prompt --template /dev/zero" "$build/kbv-prompt" --template /dev/zero L1_019_relu
fi
# a FIFO as the journal or as a file SHA256SUMS lists
rm -rf "$tmp/n" && cp -R tests/fixtures/run_small "$tmp/n" && rm "$tmp/n/samples.jsonl" && mkfifo "$tmp/n/samples.jsonl"
at_once "journal a FIFO" "$build/kbv-analyze" "$tmp/n"
printf '%s  samples.jsonl\n' "$(printf '0%.0s' $(seq 64))" >"$tmp/n/SHA256SUMS"
timeout 5 "$build/kbv" verify "$tmp/n" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "verify with a FIFO listed: exit $rc, want 2"
exit 0
