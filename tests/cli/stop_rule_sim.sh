#!/bin/bash
# scripts/stop-rule-sim.py on a small run: the replay of the run's own rule
# stops each pair where it stopped, and a looser rule (no GPU-time minimum)
# stops earlier, with the timing seconds scaled by the rounds; --cap pair
# bounds the round's variants' summed wall time instead of one's; rounds
# that name their input set are judged by set, as the worker does; bad options
# and a run without a manifest are errors.
set -u
T=$(mktemp -d /tmp/kbv-cli-srsim.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "stop_rule_sim: $*"; exit 1; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
mkdir -p "$T/run"
# Six rounds are the fewest whose 95% interval of the median is bounded;
# 0.1 s of candidate GPU time at 10 ms a round takes ten.
cat >"$T/run/manifest.json" <<'J'
{"config":{"timing":{"min_samples":6,"min_gpu_s":0.1,"ci_level":0.95,"ci_rel_halfwidth":0.01,"max_samples":50,"max_s":10,"warmup_min_ms":0}}}
J
{
    for k in $(seq 0 9); do
        echo "{\"type\":\"time\",\"set\":\"naive\",\"problem\":\"L1_001_a\",\"variant\":\"candidate\",\"round\":$k,\"gpu_ms\":10,\"wall_ms\":10.1,\"preroll\":0}"
        echo "{\"type\":\"time\",\"set\":\"naive\",\"problem\":\"L1_001_a\",\"variant\":\"fp32\",\"round\":$k,\"gpu_ms\":20,\"wall_ms\":20.1,\"preroll\":0}"
        echo "{\"type\":\"time\",\"set\":\"naive\",\"problem\":\"L1_001_a\",\"variant\":\"tf32\",\"round\":$k,\"gpu_ms\":20,\"wall_ms\":20.1,\"preroll\":0,\"same_as\":\"fp32\"}"
    done
    echo '{"type":"status","set":"naive","problem":"L1_001_a","status":"ok","detail":"seconds: setup 0.10, checks 0.10, probes 0.10, timing 1.00, memory 0.00","seconds":1.3}'
    echo '{"type":"status","set":"naive","problem":"L1_002_b","status":"missing","detail":"no naive/L1_002_b.cu"}'
} >"$T/run/samples.jsonl"
python3 scripts/stop-rule-sim.py "$T/run" >"$T/out" 2>&1 || fail "exit $?: $(cat "$T/out")"
grep -Eq '^naive +1 +1 +10 r +1 s +10 r +1 s +10 r +1 s$' "$T/out" || fail "own rule: $(cat "$T/out")"
python3 scripts/stop-rule-sim.py "$T/run" --min-gpu-s 0 >"$T/out" 2>&1 || fail "exit $?: $(cat "$T/out")"
grep -q '^rule replayed: min 6 rounds, 0 s GPU, ' "$T/out" || fail "rule line: $(cat "$T/out")"
grep -Eq '^naive +1 +1 +10 r +1 s +10 r +1 s +6 r +1 s$' "$T/out" || fail "no GPU minimum: $(cat "$T/out")"
grep -q '(-40.0%)' "$T/out" || fail "the estimate is not 6/10 of the timing: $(cat "$T/out")"
# A 0.2 s cap: one variant's wall time (fp32's 20.1 ms a round) reaches it
# in round 10, the pair's (30.2 ms a round; tf32 is fp32's samples) in 7.
python3 scripts/stop-rule-sim.py "$T/run" --max-s 0.2 >"$T/out" 2>&1 || fail "exit $?: $(cat "$T/out")"
grep -Eq '^naive +1 +1 +10 r .* +10 r +1 s$' "$T/out" || fail "variant cap: $(cat "$T/out")"
python3 scripts/stop-rule-sim.py "$T/run" --max-s 0.2 --cap pair >"$T/out" 2>&1 || fail "exit $?: $(cat "$T/out")"
grep -q "0.2 s of the pair's rounds" "$T/out" || fail "pair cap rule line: $(cat "$T/out")"
grep -Eq '^naive +1 +1 +10 r .* +7 r +1 s$' "$T/out" || fail "pair cap: $(cat "$T/out")"
python3 scripts/stop-rule-sim.py "$T/run" --max-rounds 0 >/dev/null 2>&1 && fail "--max-rounds 0 passed"
python3 scripts/stop-rule-sim.py "$T/run" --set tuned >/dev/null 2>&1 && fail "a set without pairs passed"
# Rounds that name their input set: the fp32 baseline runs 20 ms on set 0
# and 21 on set 1, alternately, so the pooled ratios (2.0 and 2.1 by
# halves) never give an interval within 1%, and the pair ran its 20
# rounds; judged by set, as the worker does (cstat.c), each set's six
# rounds have a zero-width interval, and the rule stops at round 12.
mkdir -p "$T/strata"
cp "$T/run/manifest.json" "$T/strata/"
{
    for k in $(seq 0 19); do
        s=$((k % 2))
        echo "{\"type\":\"time\",\"set\":\"naive\",\"problem\":\"L1_001_a\",\"variant\":\"candidate\",\"round\":$k,\"input_set\":$s,\"gpu_ms\":10,\"wall_ms\":10.1,\"preroll\":0}"
        echo "{\"type\":\"time\",\"set\":\"naive\",\"problem\":\"L1_001_a\",\"variant\":\"fp32\",\"round\":$k,\"input_set\":$s,\"gpu_ms\":2$s,\"wall_ms\":20.1,\"preroll\":0}"
    done
    echo '{"type":"status","set":"naive","problem":"L1_001_a","status":"ok","detail":"seconds: setup 0.10, checks 0.10, probes 0.10, timing 2.00, memory 0.00","seconds":2.3}'
} >"$T/strata/samples.jsonl"
python3 scripts/stop-rule-sim.py "$T/strata" >"$T/out" 2>&1 || fail "exit $?: $(cat "$T/out")"
grep -Eq '^naive +1 +0 +20 r +2 s +12 r +1 s +12 r +1 s$' "$T/out" || fail "by input set: $(cat "$T/out")"
sed -i 's/,"input_set":[01]//' "$T/strata/samples.jsonl"
python3 scripts/stop-rule-sim.py "$T/strata" >"$T/out" 2>&1 || fail "exit $?: $(cat "$T/out")"
grep -Eq '^naive +1 +1 +20 r +2 s +20 r +2 s +20 r +2 s$' "$T/out" || fail "pooled: $(cat "$T/out")"
rm "$T/run/manifest.json"
python3 scripts/stop-rule-sim.py "$T/run" >/dev/null 2>&1 && fail "a run without a manifest passed"
echo "stop_rule_sim: ok"
