#!/bin/bash
# scripts/collect-time.py on a small journal: the per-set sums of the
# workers' seconds and phases, the slowest pairs first, pairs without
# seconds (missing) and a torn last line left out; a run without timed
# pairs is an error.
set -u
T=$(mktemp -d /tmp/kbv-cli-ctime.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "collect_time: $*"; exit 1; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
mkdir -p "$T/run"
cat >"$T/run/samples.jsonl" <<'J'
{"type":"status","set":"naive","problem":"L1_001_a","status":"ok","detail":"seconds: setup 1.00, checks 2.00, probes 1.00, timing 6.00, memory 0.50","seconds":10.5}
{"type":"status","set":"naive","problem":"L1_002_b","status":"ok","detail":"seconds: setup 0.50, checks 0.50, probes 0.25, timing 2.00, memory 0.25","seconds":3.5}
{"type":"status","set":"tuned","problem":"L1_001_a","status":"ok","detail":"seconds: setup 0.50, checks 0.50, probes 0.50, timing 1.00, memory 0.00","seconds":2.5}
{"type":"status","set":"tuned","problem":"L1_002_b","status":"missing","detail":"no tuned/L1_002_b.cu"}
{"type":"status","set":"naive","problem":"L1_00
J
python3 scripts/collect-time.py "$T/run" --top 2 >"$T/out" 2>&1 || fail "exit $?: $(cat "$T/out")"
grep -Eq '^naive +2 +14\.0 +setup 2, checks 2, probes 1, timing 8, memory 1$' "$T/out" || fail "naive line: $(cat "$T/out")"
grep -Eq '^tuned +1 +2\.5 ' "$T/out" || fail "tuned line: $(cat "$T/out")"
grep -Eq '^all +3 +16\.5 +\(0\.3 min\)$' "$T/out" || fail "total: $(cat "$T/out")"
[ "$(grep -c '^ .* s  ' "$T/out")" = 2 ] || fail "--top 2 listed $(grep -c '^ .* s  ' "$T/out") pairs"
sed -n '/slowest/{n;p}' "$T/out" | grep -q "10.5 s  naive        L1_001_a" || fail "slowest first: $(cat "$T/out")"
# --rounds: candidate rounds against the manifest's minimum and maximum
# (L1_001_a: 3 rounds, past a minimum of 2 and at the maximum of 3;
# L1_002_b: 2, at the minimum; tuned's L1_001_a: no time records).
echo '{"config":{"timing":{"min_samples":2,"max_samples":3}}}' >"$T/run/manifest.json"
for k in 0 1 2; do
    echo "{\"type\":\"time\",\"set\":\"naive\",\"problem\":\"L1_001_a\",\"variant\":\"candidate\",\"round\":$k,\"gpu_ms\":1}"
    echo "{\"type\":\"time\",\"set\":\"naive\",\"problem\":\"L1_001_a\",\"variant\":\"fp32\",\"round\":$k,\"gpu_ms\":1}"
done >>"$T/run/samples.jsonl"
for k in 0 1; do
    echo "{\"type\":\"time\",\"set\":\"naive\",\"problem\":\"L1_002_b\",\"variant\":\"candidate\",\"round\":$k,\"gpu_ms\":1}"
done >>"$T/run/samples.jsonl"
python3 scripts/collect-time.py "$T/run" --rounds >"$T/out" 2>&1 || fail "--rounds exit $?: $(cat "$T/out")"
grep -q '^rounds (minimum 2, maximum 3):$' "$T/out" || fail "--rounds heading: $(cat "$T/out")"
grep -Eq '^naive +2 +1 +1 +1 +1 +6 / 8$' "$T/out" || fail "--rounds naive line: $(cat "$T/out")"
grep -Eq '^tuned ' <(sed -n '/^rounds/,$p' "$T/out") && fail "--rounds lists a set without time records"
# --fixed: probes = 0.5 s + 10 calls of the candidate's median (1, 2 and
# 3 ms over three pairs), timing = 2 s whatever the call.
mkdir -p "$T/fit"
for k in 1 2 3; do
    printf '{"type":"status","set":"naive","problem":"L1_00%d_p","status":"ok","detail":"seconds: probes 0.5%d, timing 2.00","seconds":3}\n' "$k" "$k"
    for r in 0 1 2; do
        echo "{\"type\":\"time\",\"set\":\"naive\",\"problem\":\"L1_00${k}_p\",\"variant\":\"candidate\",\"round\":$r,\"gpu_ms\":$((k + r - 1))}"
    done
done >"$T/fit/samples.jsonl"
python3 scripts/collect-time.py "$T/fit" --fixed >"$T/out" 2>&1 || fail "--fixed exit $?: $(cat "$T/out")"
grep -Eq '^naive +probes +3 +0\.500 +10\.0 +2$' "$T/out" || fail "--fixed probes line: $(cat "$T/out")"
grep -Eq '^naive +timing +3 +2\.000 +0\.0 +6$' "$T/out" || fail "--fixed timing line: $(cat "$T/out")"
rm "$T/run/manifest.json"
python3 scripts/collect-time.py "$T/run" --rounds >/dev/null 2>&1 && fail "--rounds without a manifest passed"
gzip "$T/run/samples.jsonl"
python3 scripts/collect-time.py "$T/run" >/dev/null 2>&1 || fail "a gzip journal is not read"
printf '{"type":"status","set":"x","problem":"p","status":"missing","detail":""}\n' >"$T/empty.jsonl"
mkdir -p "$T/e" && mv "$T/empty.jsonl" "$T/e/samples.jsonl"
python3 scripts/collect-time.py "$T/e" >/dev/null 2>&1 && fail "a run without timed pairs passed"
echo "collect_time: ok"
