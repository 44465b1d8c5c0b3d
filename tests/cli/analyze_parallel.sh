#!/usr/bin/env bash
# kbv-analyze reads a journal of several megabytes in parallel chunks: the
# result must be the same bytes as reading it on one thread, and torn or bad
# lines must be reported with the line numbers of the whole file.
set -u
build=${1:-build}
bin="$build/kbv-analyze"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "analyze_parallel: $*"; exit 1; }

python3 scripts/synth_run.py --out "$tmp/run" --problems 40 --sets 3 --samples 101 --seed 5 2>/dev/null ||
    fail "synth_run.py"
j="$tmp/run/samples.jsonl"
size=$(stat -c %s "$j")
[ "$size" -gt $((4 * 1024 * 1024)) ] || fail "the journal ($size bytes) is too small to be split"
n=$(wc -l <"$j")

"$bin" --jobs 1 "$tmp/run" 2>/dev/null || fail "--jobs 1"
cp "$tmp/run/analysis.json" "$tmp/one.json"
for k in 2 3 5; do
    "$bin" --jobs $k "$tmp/run" 2>/dev/null || fail "--jobs $k"
    cmp -s "$tmp/run/analysis.json" "$tmp/one.json" || fail "--jobs $k differs from --jobs 1"
done

# CRLF line ends read the same.
cp "$j" "$tmp/lf"
sed -i 's/$/\r/' "$j"
"$bin" --jobs 2 "$tmp/run" 2>/dev/null || fail "CRLF"
cmp -s "$tmp/run/analysis.json" "$tmp/one.json" || fail "CRLF differs"
cp "$tmp/lf" "$j"

# A torn last line: a warning with its line number, the same analysis.
printf '%s' '{"type":"time","set":"set1","prob' >>"$j"
"$bin" --jobs 2 "$tmp/run" 2>"$tmp/err" || fail "torn line"
grep -q "samples.jsonl:$((n + 1)): dropped a torn last line" "$tmp/err" || { cat "$tmp/err"; fail "torn line warning"; }
cmp -s "$tmp/run/analysis.json" "$tmp/one.json" || fail "torn line changed the analysis"

# Bad lines in each half, and two bad lines: the first is the one reported.
for at in 7 $((n / 2 + 3)) $((n * 3 / 4)) $n; do
    cp "$tmp/lf" "$j"
    sed -i "${at}s/.*/{\"type\":\"time\",\"set\":\"set1\",\"problem\":/" "$j"
    "$bin" --jobs 2 "$tmp/run" >/dev/null 2>"$tmp/err"
    [ $? -eq 2 ] || fail "bad line $at: exit status"
    grep -q "^kbv: analyze: .*samples.jsonl:$at: malformed JSON" "$tmp/err" || { cat "$tmp/err"; fail "bad line $at"; }
    cmp -s "$tmp/run/analysis.json" "$tmp/one.json" || fail "bad line $at: the earlier analysis.json was not kept"
done
cp "$tmp/lf" "$j"
a=$((n / 2 + 10)) b=$((n * 3 / 4))
sed -i "${b}s/\"gpu_ms\":[0-9.e-]*/\"gpu_ms\":-1/" "$j"
sed -i "${a}s/\"set\":\"[a-z0-9]*\"/\"set\":\"nosuch\"/" "$j"
"$bin" --jobs 2 "$tmp/run" >/dev/null 2>"$tmp/err"
grep -q "samples.jsonl:$a: set \"nosuch\" is not in the manifest" "$tmp/err" || { cat "$tmp/err"; fail "first of two errors"; }
cp "$tmp/lf" "$j"
sed -i "${b}s/\"gpu_ms\":[0-9.e-]*/\"gpu_ms\":-1/" "$j"
"$bin" --jobs 2 "$tmp/run" >/dev/null 2>"$tmp/err"
grep -q "samples.jsonl:$b: \"gpu_ms\" must be a positive finite number" "$tmp/err" || { cat "$tmp/err"; fail "bad time"; }
exit 0
