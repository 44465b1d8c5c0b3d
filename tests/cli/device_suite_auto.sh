#!/bin/bash
# scripts/device-suite.sh auto, its order of work without a GPU: make,
# timeout and nvidia-smi are stand-ins that log their arguments.  A suite
# run that is not whole gets the call's share and nothing else; a whole one
# goes on to PyTorch's parity (fp32, then bf16, resumed into OUT) and then
# the second collect; a run, parity files and a whole second collect with
# its comparison leave nothing to do.  speed collects the naive set with
# the checkout's own build and the pin table of the GPU it runs on.  With
# a frozen harness and no run yet, auto starts the run.  pinbench times
# every problem in chunks, continued from the kept file, and makes the
# table once none is left.  Without a suite run in progress, auto does
# main's work: make test-gpu once per state of the sources it tests, a
# step at a time (a step cut off by the call's end runs again in the next
# call, the steps that passed do not), then on an H200 the naive set's
# speed collect until speed-time.txt is kept (never on another GPU), the
# spot checks and the tuned collects; spot runs
# the spot checks alone; tested runs the test-gpu steps owed and nothing
# else.  An unknown mode exits 2.
set -u
T=$(mktemp -d /tmp/kbv-cli-devauto.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "device_suite_auto: $*"; exit 1; }
R=$T/repo
mkdir -p "$R/scripts" "$R/tests/parity" "$T/bin" "$T/partial" "$T/stage/suite" "$T/stage/r2r"
cp scripts/device-suite.sh scripts/gpu-slug.sh "$R/scripts/"
printf '#!/bin/sh\necho digest\n' >"$R/scripts/harness-digest.sh"
printf '#!/bin/sh\necho "suite-session $*" >>"%s/calls"\n' "$T" >"$R/scripts/suite-session.sh"
printf '#!/bin/sh\necho "make $*" >>"%s/calls"\n' "$T" >"$T/bin/make"
# timeout: exits 124 (time ran out) for a command that holds the text of
# $T/cut (a test-gpu step's "KBV_GPU_STEPS=hostile ", a parity run's
# "--precision bf16")
printf '#!/bin/sh\nshift 3\necho "timeout $*" >>"%s/calls"\n[ -f "%s/cut" ] && case "$*" in *"$(cat "%s/cut")"*) exit 124 ;; esac\nexit 0\n' \
    "$T" "$T" "$T" >"$T/bin/timeout"
# nvidia-smi: an H200, whose pin table the checkout has
# (another when $T/gpu names it)
printf '#!/bin/sh\ng=$(cat "%s/gpu" 2>/dev/null || echo "NVIDIA H200")\ncase "$*" in *--query-gpu=name\ *) echo "$g" ;; *) echo "0, $g, GPU-0, 1, 0:0" ;; esac\n' \
    "$T" >"$T/bin/nvidia-smi"
mkdir -p "$R/data/baselines" && echo '{}' >"$R/data/baselines/nvidia-h200.json"
chmod +x "$R/scripts/"*.sh "$T/bin/"*
export PATH="$T/bin:$PATH" KBV_PARTIAL="$T/partial"
budget=300
run() { rm -f "$T/calls"; rm -rf "$T/out"; OUT="$T/out" bash "$R/scripts/device-suite.sh" auto "$budget" >"$T/log" 2>&1; }

touch "$T/stage/suite/manifest.json"
tar -C "$T/stage" -czf "$T/partial/suite-run.tar.gz" suite
run || fail "exit $?: $(cat "$T/log")"
grep -q '^suite-session ' "$T/calls" || fail "no suite share for a run that is not whole: $(cat "$T/calls")"
grep -q 'parity' "$T/calls" && fail "parity ran before the suite was whole: $(cat "$T/calls")"

touch "$T/stage/suite/SHA256SUMS"
tar -C "$T/stage" -czf "$T/partial/suite-run.tar.gz" suite
run || fail "exit $?: $(cat "$T/log")"
grep -q '^suite-session ' "$T/calls" && fail "a whole suite got another share"
grep -n 'parity.py\|kbv-collect' "$T/calls" | cut -d: -f1 | tr '\n' ' ' >"$T/order"
[ "$(wc -w <"$T/order")" = 3 ] || fail "want parity fp32, parity bf16, r2r: $(cat "$T/calls")"
sed -n "$(cut -d' ' -f1 "$T/order")p" "$T/calls" | grep -q -- '--precision fp32 .*--out '"$T"'/out/torch-fp32.json' ||
    fail "first parity call: $(cat "$T/calls")"
sed -n "$(cut -d' ' -f2 "$T/order")p" "$T/calls" | grep -q -- '--resume --precision bf16' || fail "second: $(cat "$T/calls")"
sed -n "$(cut -d' ' -f3 "$T/order")p" "$T/calls" | grep -q -- 'kbv-collect --out runs/r2r --candidates' ||
    fail "third, a fresh second collect: $(cat "$T/calls")"
grep -q "r2r not whole yet" "$T/log" || fail "an unfinished r2r not said: $(cat "$T/log")"
[ -f "$T/out/logs.tar.gz" ] || fail "no logs.tar.gz"

touch "$T/stage/r2r/manifest.json"
tar -C "$T/stage" -czf "$T/partial/r2r-run.tar.gz" r2r
run || fail "exit $?: $(cat "$T/log")"
grep -q 'kbv-collect --out runs/r2r --resume ' "$T/calls" || fail "the second collect not resumed: $(cat "$T/calls")"

touch "$T/stage/r2r/SHA256SUMS"
tar -C "$T/stage" -czf "$T/partial/r2r-run.tar.gz" r2r
echo '{}' >"$T/partial/r2r-compare.json"
run || fail "exit $?: $(cat "$T/log")"
grep -q 'kbv-collect' "$T/calls" && fail "a whole second collect ran again: $(cat "$T/calls")"
grep -q "suite, parity and r2r are done" "$T/log" || fail "done not said: $(cat "$T/log")"

# speed: the naive set by the checkout's own build, continued like r2r.
rm -f "$T/calls"; rm -rf "$T/out"
OUT="$T/out" bash "$R/scripts/device-suite.sh" speed 300 >"$T/log" 2>&1 || fail "speed: exit $?: $(cat "$T/log")"
grep -q "kbv-collect --out runs/speed --candidates $R/data/candidates/naive --pins data/baselines/nvidia-h200.json" "$T/calls" ||
    fail "speed: the naive set's collect: $(cat "$T/calls")"
grep -q "speed not whole yet" "$T/log" || fail "speed: an unfinished run not said: $(cat "$T/log")"

# auto with a frozen harness and no run yet: a new run, by the frozen
# harness's own suite-session.sh.
rm -f "$T/partial/"*
mkdir -p "$T/frozen/scripts"
echo 0123456789abcdef0123456789abcdef01234567 >"$T/frozen/KBV_COMMIT"
printf '#!/bin/sh\necho digest\n' >"$T/frozen/scripts/harness-digest.sh"
printf '#!/bin/sh\necho "frozen suite-session $*" >>"%s/calls"\n' "$T" >"$T/frozen/scripts/suite-session.sh"
chmod +x "$T/frozen/scripts/"*.sh
tar -C "$T/frozen" -czf "$T/partial/harness-src.tar.gz" .
run || fail "a new run: exit $?: $(cat "$T/log")"
grep -q '^frozen suite-session ' "$T/calls" || fail "no new run by the frozen harness: $(cat "$T/calls")"
grep -q 'test-gpu' "$T/calls" && fail "main's work instead of a new run: $(cat "$T/calls")"

# pinbench: the bench's stand-in prints a line per problem of its list and
# dies at a problem named *crash*; timeout runs it here.
rm -f "$T/partial/"*
mkdir -p "$R/build"
printf '#!/bin/sh\necho "problem  GFLOP"; echo "L1_001_a 1"; echo "L1_002_crash 1"; echo "L1_003_b 1"; echo "3 problems"\n' \
    >"$R/build/kbv"
printf '#!/bin/sh\nIFS=,; for id in $2; do case $id in *crash*) exit 1 ;; esac\necho "{\\"id\\": \\"$id\\", \\"fp32_pins\\": \\"k=default\\"}"; done\n' \
    >"$R/build/kbv-baseline-bench"
printf '#!/bin/sh\necho "kbv-collect $*" >>"%s/calls"\n' "$T" >"$R/build/kbv-collect"
printf 'import sys\nopen("%s/calls", "a").write("pins.py %%s\\n" %% " ".join(sys.argv[1:]))\nopen(sys.argv[sys.argv.index("--out") + 1], "w").write("{}")\n' \
    "$T" >"$R/scripts/pins.py"
chmod +x "$R/build/"*
mkdir -p "$T/bin2"
printf '#!/bin/sh\nshift 5\necho "timeout $*" >>"%s/calls"\nexec "$@"\n' "$T" >"$T/bin2/timeout"
chmod +x "$T/bin2/timeout"
pinbench() { rm -f "$T/calls"; rm -rf "$T/out"; PATH="$T/bin2:$PATH" OUT="$T/out" bash "$R/scripts/device-suite.sh" pinbench 300 >"$T/log" 2>&1; }
pinbench || fail "pinbench: exit $?: $(cat "$T/log")"
[ "$(grep -c 'kbv-baseline-bench' "$T/calls")" = 3 ] || fail "pinbench: want three bench chunks: $(cat "$T/calls")"
grep -q -- '--problems L1_001_a,L1_002_crash,L1_003_b ' "$T/calls" || fail "pinbench: the first chunk: $(cat "$T/calls")"
grep -q '"id": "L1_002_crash", "error"' "$T/out/pinbench.jsonl" || fail "pinbench: no error line: $(cat "$T/out/pinbench.jsonl")"
[ "$(wc -l <"$T/out/pinbench.jsonl")" = 3 ] || fail "pinbench: a line per problem: $(cat "$T/out/pinbench.jsonl")"
grep -q "pins.py runs/pinref --bench $T/out/pinbench.jsonl --out $T/out/pins-nvidia-h200.json" "$T/calls" ||
    fail "pinbench: no table: $(cat "$T/calls")"
[ -f "$T/out/pins-nvidia-h200.json" ] || fail "pinbench: pins-nvidia-h200.json not written"
# continued from the kept file: only what is left is timed, and a line
# cut in the middle (a bench killed as it wrote) is dropped and re-timed
grep L1_001_a "$T/out/pinbench.jsonl" >"$T/partial/pinbench.jsonl"
printf '{"id": "L1_003_b", "fp32_pi' >>"$T/partial/pinbench.jsonl"
pinbench || fail "pinbench again: exit $?: $(cat "$T/log")"
grep -q -- '--problems L1_002_crash,L1_003_b ' "$T/calls" || fail "pinbench again: not continued: $(cat "$T/calls")"
grep -q -- 'L1_001_a,' "$T/calls" && fail "pinbench again: a kept problem timed again: $(cat "$T/calls")"
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/out/pinbench.jsonl" ||
    fail "pinbench again: a line that is not JSON kept: $(cat "$T/out/pinbench.jsonl")"
[ "$(grep -c L1_003_b "$T/out/pinbench.jsonl")" = 1 ] || fail "pinbench again: L1_003_b: $(cat "$T/out/pinbench.jsonl")"
rm -rf "$R/build"

# auto without a suite run in progress: main's work, make test-gpu first
# (once per state of what it tests), then the two tuned collects; never a
# new suite run.
rm -f "$T/partial/"*
mkdir -p "$R/.deps" && echo 0123456789abcdef >"$R/.deps/commit"
budget=590   # a whole call: time for the spot parity before the collects
run || fail "main: exit $?: $(cat "$T/log")"
grep -q '^suite-session ' "$T/calls" && fail "main: a new suite run was started: $(cat "$T/calls")"
grep -q 'make .*test-gpu' "$T/calls" || fail "main: no make test-gpu: $(cat "$T/calls")"
[ "$(grep -Ec '^[0-9a-f]{16} 0123456789ab (smoke|resume|tanh|replay|hostile|interrupt|pins) PASS' "$T/out/test-gpu.txt")" = 7 ] ||
    fail "main: test-gpu.txt, a PASS per step: $(cat "$T/out/test-gpu.txt")"
# On an H200 the naive set's speed collect comes next, and while it is not
# whole nothing after it runs.
grep -q "kbv-collect --out runs/speed --candidates $R/data/candidates/naive " "$T/calls" ||
    fail "main on an H200: no speed collect after test-gpu: $(cat "$T/calls")"
grep -q 'parity.py\|runs/r2ra' "$T/calls" && fail "main: went on past an unfinished speed run: $(cat "$T/calls")"
# Once speed-time.txt is kept: the spot checks, then the tuned collects.
echo kept >"$T/speed-time.txt"
keep_speed() { cp "$T/speed-time.txt" "$T/partial/"; }
cp "$T/out/test-gpu.txt" "$T/partial/" && keep_speed
run || fail "main after speed: exit $?: $(cat "$T/log")"
grep -q 'runs/speed' "$T/calls" && fail "main: the speed run again after speed-time.txt: $(cat "$T/calls")"
grep -q "kbv-collect --out runs/r2ra --candidates $R/data/candidates/tuned " "$T/calls" ||
    fail "main: the first tuned collect: $(cat "$T/calls")"
grep -n 'parity.py\|runs/r2ra' "$T/calls" | head -1 | grep -q parity.py || fail "main: the spot parity before r2r: $(cat "$T/calls")"
# On another GPU the speed run is not started, and main goes on to the rest.
echo "NVIDIA H100 80GB HBM3" >"$T/gpu" && rm -f "$T/partial/speed-time.txt"
run || fail "main on an H100: exit $?: $(cat "$T/log")"
grep -q 'runs/speed' "$T/calls" && fail "main on an H100: a speed run started: $(cat "$T/calls")"
grep -q 'kbv-collect --out runs/r2ra ' "$T/calls" || fail "main on an H100: no tuned collect: $(cat "$T/calls")"
rm -f "$T/gpu" && keep_speed
run || fail "main again: exit $?: $(cat "$T/log")"
grep -q 'make .*test-gpu' "$T/calls" && fail "main: test-gpu ran twice on the same sources: $(cat "$T/calls")"
grep -q 'kbv-collect --out runs/r2ra ' "$T/calls" || fail "main: r2ra not continued: $(cat "$T/calls")"
# A commit that leaves the tested sources as they were does not re-run it;
# another harness does.
echo fedcba9876543210 >"$R/.deps/commit"
run || fail "main at another commit: exit $?: $(cat "$T/log")"
grep -q 'make .*test-gpu' "$T/calls" && fail "main: test-gpu re-run for a commit of untested files: $(cat "$T/calls")"
printf '#!/bin/sh\necho another\n' >"$R/scripts/harness-digest.sh"
run || fail "main with another harness: exit $?: $(cat "$T/log")"
grep -q 'make .*test-gpu' "$T/calls" || fail "main: test-gpu not re-run for another harness: $(cat "$T/calls")"

# A call whose time runs out in the middle of test-gpu (its hostile step
# cut off): the steps before it keep their verdicts, the cut one has none,
# and main goes no further; the next call runs the steps left.
rm -f "$T/partial/"* && keep_speed
printf 'KBV_GPU_STEPS=hostile ' >"$T/cut"
run || fail "main, cut off: exit $?: $(cat "$T/log")"
grep -q 'KBV_GPU_STEPS=hostile ' "$T/calls" || fail "main, cut off: hostile not run: $(cat "$T/calls")"
grep -q 'KBV_GPU_STEPS=interrupt \|kbv-collect' "$T/calls" && fail "main, cut off: went on: $(cat "$T/calls")"
[ "$(grep -c ' PASS' "$T/out/test-gpu.txt")" = 4 ] && ! grep -q ' hostile ' "$T/out/test-gpu.txt" ||
    fail "main, cut off: verdicts: $(cat "$T/out/test-gpu.txt")"
grep -q "hostile cut off by the call's end" "$T/log" || fail "main, cut off: not said: $(cat "$T/log")"
cp "$T/out/test-gpu.txt" "$T/partial/"
rm -f "$T/cut"
run || fail "main after the cut: exit $?: $(cat "$T/log")"
grep -o 'KBV_GPU_STEPS=[a-z]*' "$T/calls" | tr '\n' ' ' >"$T/steps"
[ "$(cat "$T/steps")" = "KBV_GPU_STEPS=hostile KBV_GPU_STEPS=interrupt KBV_GPU_STEPS=pins " ] ||
    fail "main after the cut: the steps left, in order: $(cat "$T/steps")"
grep -q "kbv-collect --out runs/r2ra " "$T/calls" || fail "main after the cut: no tuned collect: $(cat "$T/calls")"
# A verdict of an older call, one line for every step, still counts.
rm -f "$T/partial/"* && keep_speed
key=$(grep -Eo '^[0-9a-f]{16}' "$T/out/test-gpu.txt" | head -1)
echo "$key 0123456789ab PASS test-gpu: PASS in 474 s" >"$T/partial/test-gpu.txt"
run || fail "main after an old verdict: exit $?: $(cat "$T/log")"
grep -q 'make .*test-gpu' "$T/calls" && fail "main: test-gpu re-run after an old whole verdict: $(cat "$T/calls")"

# spot: the spot checks alone, no test-gpu, no collect
rm -f "$T/partial/"* "$T/calls"; rm -rf "$T/out"
OUT="$T/out" bash "$R/scripts/device-suite.sh" spot 590 >"$T/log" 2>&1 || fail "spot: exit $?: $(cat "$T/log")"
grep -q 'parity.py .*--precision bf16' "$T/calls" || fail "spot: no bf16 spot parity: $(cat "$T/calls")"
grep -q 'kernels.py --variant bf16' "$T/calls" || fail "spot: no bf16 kernels: $(cat "$T/calls")"
grep -q 'test-gpu\|kbv-collect' "$T/calls" && fail "spot: more than the spot checks: $(cat "$T/calls")"

# The spot parity goes on from the files the last call kept (--resume),
# each precision in turn within what is left of a ten-minute call less the
# build (at 540 s, main once never reached it: both limits were asked at
# once); a parity run cut by its time keeps main from going on.
echo '{"problems": []}' >"$T/partial/parity-spot-fp32.json"
rm -f "$T/calls"; rm -rf "$T/out"
OUT="$T/out" bash "$R/scripts/device-suite.sh" spot 540 >"$T/log" 2>&1 || fail "spot 540: exit $?: $(cat "$T/log")"
[ -f "$T/out/parity-spot-fp32.json" ] || fail "spot 540: the kept fp32 file not carried on into OUT"
[ "$(grep -c 'parity.py .*--resume' "$T/calls")" = 2 ] || fail "spot 540: both precisions resumed: $(cat "$T/calls")"
printf -- '--precision bf16' >"$T/cut"
budget=540
keep_speed
run || fail "main, spot cut: exit $?: $(cat "$T/log")"
grep -q 'parity.py .*--precision bf16' "$T/calls" || fail "main at 540 s: no bf16 spot parity: $(cat "$T/calls")"
grep -q 'kbv-collect' "$T/calls" && fail "main: went on past a cut spot parity: $(cat "$T/calls")"
grep -q 'spot parity goes on in the next call' "$T/log" || fail "main: the cut spot parity not said: $(cat "$T/log")"
rm -f "$T/cut"

# tested: the test-gpu steps owed, and nothing else; with none owed, not
# even a build.
rm -f "$T/partial/"* "$T/calls"; rm -rf "$T/out"
OUT="$T/out" bash "$R/scripts/device-suite.sh" tested 590 >"$T/log" 2>&1 || fail "tested: exit $?: $(cat "$T/log")"
[ "$(grep -c 'make .*test-gpu' "$T/calls")" = 7 ] || fail "tested: want the seven steps: $(cat "$T/calls")"
grep -q 'parity.py\|kbv-collect\|suite-session' "$T/calls" && fail "tested: more than test-gpu: $(cat "$T/calls")"
cp "$T/out/test-gpu.txt" "$T/partial/"
rm -f "$T/calls"; rm -rf "$T/out"
OUT="$T/out" bash "$R/scripts/device-suite.sh" tested 590 >"$T/log" 2>&1 || fail "tested again: exit $?: $(cat "$T/log")"
[ ! -s "$T/calls" ] || fail "tested with nothing owed: $(cat "$T/calls")"
grep -q 'every step passed for' "$T/log" || fail "tested: nothing owed not said: $(cat "$T/log")"

OUT="$T/out" bash "$R/scripts/device-suite.sh" nosuch 10 >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown mode did not exit 2"
echo "device_suite_auto: ok"
