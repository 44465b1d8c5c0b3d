#!/usr/bin/env bash
# scripts/device-suite.sh MODE SECONDS - one device call of the whole-suite
# work, for a lent GPU host reached by one scripted command at a time
# (OUT names the folder whose files come back).
#
# MODE:
#   suite    build, then one share of the whole-suite collect
#            (scripts/suite-session.sh) for what is left of SECONDS
#   parity   build, then PyTorch's side of parity (tests/parity/parity.py
#            --torch-only --resume), fp32 and then bf16, for what is left
#   both     suite, then parity with the time left over
#   test-gpu build, then `make test-gpu` (run it first whenever collect changed)
#            (KBV_GPU_STEPS picks a share of its steps: tests/gpu/run.sh)
#   tested   the steps of make test-gpu that this checkout's sources still
#            owe (test-gpu.txt of the partial folder; main's first work),
#            and nothing else; without any owed, not even a build
#   r2r      a second collect of the tuned set, compared with the suite run
#            (scripts/compare-runs.py): the run-to-run figure of issue 15;
#            continued with --resume from r2r-run.tar.gz when that is in
#            the partial folder
#   speed    a collect of the naive set by this checkout (not the frozen
#            harness), continued from speed-run.tar.gz: issue 16's collect
#            time of one set, from scripts/collect-time.py once it is whole
#   main     what this checkout's harness still owes, in order: make
#            test-gpu once per state of the sources it tests
#            (test-gpu.txt), on an H200 the naive set's collect time
#            (speed, until speed-time.txt is kept), parity.py on the
#            baselines changed since the archived run (parity-spot-*.json),
#            the kernels behind the fp32 and bf16 parity exceptions
#            (kernels-*.txt), then two collects of the tuned set compared
#            (r2ra, r2rb: r2r-main-compare.json)
#   repin    build, then kbv-baseline-bench, unpinned, on every problem
#            whose convolutions the committed pin table pins (their fp32
#            variant now also times cuDNN's graph plans), continued from
#            repin-bench.jsonl, for scripts/pins.py --bench to re-make
#            the table from
#   spot     build, then main's spot checks alone (parity.py on the
#            baselines changed since the archived run, kernels.py on the
#            worst ratios), for a call too short for test-gpu
#   pinbench a pin table for a GPU model without one (data/baselines/
#            <gpu>.json): kbv-baseline-bench, unpinned, on every problem,
#            continued from pinbench.jsonl of the partial folder; once every
#            problem is in it, a one-pair collect for the device's name and
#            cuBLAS version and scripts/pins.py write pins-<gpu>.json, to be
#            committed as data/baselines/<gpu>.json before the harness that
#            runs the suite on that GPU is frozen
#   auto     what is left, in order, for as long as the call lasts: with a
#            suite run in the partial folder, or a frozen harness and no
#            run yet (a new run starts), the suite until it is whole, then
#            parity until both of PyTorch's files are, then r2r; with
#            neither, main; the same command for every call
#
# Ignored folders are not kept from one session to the next here, so the
# work in progress lives in tracked files under data/suite-partial/ (the
# run so far, and PyTorch's parity files), so that it reaches the device with
# the working tree and survives between sessions whose ignored folders are
# not kept; copy what comes back in OUT there after each call
# (scripts/device-suite-keep.sh OUT_COPY does, and says what it kept).  A run is only
# continued by the harness that started it (scripts/suite-session.sh).
# DEPS_ROOT (default .deps/root) holds the unpacked Debian packages that the
# host lacks (README: Building on a GPU host without a package registry).
#
# When the partial folder holds harness-src.tar.gz (scripts/harness-freeze.sh:
# the sources of the commit that started the run), suite and r2r build and
# run those sources in runs/harness instead of this checkout, so that the
# run is finished by the harness that started it while main's collect
# moves on; test-gpu and parity always use this checkout.
set -uo pipefail
mode=${1:?usage: scripts/device-suite.sh suite|parity|both|test-gpu|tested|r2r|speed|main|spot|repin|pinbench|auto SECONDS}
budget=${2:?usage: scripts/device-suite.sh suite|parity|both|test-gpu|tested|r2r|speed|main|spot|repin|pinbench|auto SECONDS}
cd "$(dirname "$0")/.." || exit 2
out=${OUT:?device-suite: OUT names no folder}
partial=${KBV_PARTIAL:-data/suite-partial}
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }
log() { echo "== $(date -u +%H:%M:%S) [$(left) s left] $*"; }
export DEPS_ROOT=${DEPS_ROOT:-$PWD/.deps/root}
# A copy of the tree without .git learns its commit from .deps/commit
# (`git rev-parse HEAD > .deps/commit` before the call, carried with it).
if [ -z "${KBV_GIT_COMMIT:-}" ] && [ -f .deps/commit ]; then
    KBV_GIT_COMMIT=$(cut -c1-12 .deps/commit)
    export KBV_GIT_COMMIT
fi
mkdir -p "$out" runs
out=$(cd "$out" && pwd)
root=$PWD
partial=$(cd "$partial" && pwd) || { echo "device-suite: no folder $partial"; exit 2; }
frozen=$partial/harness-src.tar.gz

# Which GPU this call has (the lent hosts change between calls): kept
# beside the work (device-suite-keep appends it to devices.txt), so that a
# comparison of two collects can say whether they ran on one GPU.
nvidia-smi --query-gpu=index,name,uuid,serial,pci.bus_id --format=csv,noheader >"$out/device.txt" 2>/dev/null ||
    echo "unknown (nvidia-smi failed)" >"$out/device.txt"
echo "device: $(head -1 "$out/device.txt")"
# The GPU's name as data/baselines/ names its pin table, as
# suite-session.sh finds it.
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | scripts/gpu-slug.sh)

build_here() {
    log "build"
    if ! make -j"$(nproc)" DEPS_ROOT="$DEPS_ROOT" all >"$out/build.log" 2>&1; then
        tail -30 "$out/build.log"
        exit 1
    fi
    echo "harness $(scripts/harness-digest.sh) (this checkout)"
}

# The tree that collects: this checkout, or the frozen sources unpacked
# into runs/harness (kept between calls of one session while the archive is
# the same, so that the build there is incremental).
tree=$root
build_tree() {
    if [ ! -f "$frozen" ]; then
        build_here
        return
    fi
    local sum
    sum=$(sha256sum "$frozen" | cut -d' ' -f1)
    if [ "$(cat runs/harness.sha256 2>/dev/null)" != "$sum" ]; then
        rm -rf runs/harness runs/harness.sha256 && mkdir -p runs/harness &&
            tar -C runs/harness -xzf "$frozen" || { echo "device-suite: $frozen does not unpack"; exit 1; }
        echo "$sum" >runs/harness.sha256
    fi
    tree=$root/runs/harness
    log "build the frozen harness $(cut -c1-12 "$tree/KBV_COMMIT")"
    if ! make -C "$tree" -j"$(nproc)" DEPS_ROOT="$DEPS_ROOT" KBV_GIT_COMMIT="$(cut -c1-12 "$tree/KBV_COMMIT")" all \
            >"$out/build-harness.log" 2>&1; then
        tail -30 "$out/build-harness.log"
        exit 1
    fi
    echo "harness $("$tree/scripts/harness-digest.sh") (frozen at $(cut -c1-12 "$tree/KBV_COMMIT"))"
}

# Seconds kept back at the end of the call: collect's grace after SIGINT
# (30 s), packing the run, and the copy back (the calls of run 9d20bada
# ended 73 s early with 75 kept back: collect stops at once on SIGINT).
reserve=45

# 0 when the run NAME-run.tar.gz of the partial folder (suite, r2r, speed)
# is whole: sealed by collect, SHA256SUMS in it.
sealed() {
    [ -f "$partial/$1-run.tar.gz" ] && tar -tzf "$partial/$1-run.tar.gz" | grep -qx "$1/SHA256SUMS"
}

run_suite() {
    local secs=$(($(left) - reserve))
    [ "$secs" -gt 60 ] || { log "no time for a suite share"; return 0; }
    log "suite share of $secs s"
    KBV_SUITE_CARRY="$partial/suite-run.tar.gz" "$tree/scripts/suite-session.sh" "$out" "$secs"
}

# parity.py exits 3 when the CUDA context is lost (a problem that leaves
# the device unusable): the next invocation resumes after it.
parity_done=0
run_parity() {
    local prec file secs rc
    for prec in fp32 bf16; do
        file=torch-$prec.json
        [ -f "$partial/$file" ] && cp "$partial/$file" "$out/$file"
        while :; do
            secs=$(($(left) - 30))
            [ "$secs" -gt 30 ] || { log "parity $prec: out of time"; return 0; }
            log "parity $prec for $secs s"
            timeout -s INT -k 10 "$secs" python3 tests/parity/parity.py --torch-only --resume \
                --precision "$prec" --samples 30 --warm-s 0.3 --out "$out/$file" >>"$out/parity-$prec.log" 2>&1
            rc=$?
            tail -2 "$out/parity-$prec.log"
            [ "$rc" -eq 3 ] && continue
            [ "$rc" -eq 0 ] || return 0
            break
        done
    done
    parity_done=1
}

# A collect of one set besides the suite run (NAME: r2r or speed), kept in
# NAME-run.tar.gz of the partial folder between calls (runs/NAME packed,
# SHA256SUMS in it once whole) and continued with --resume, as the suite
# run is.  Returns 0 once the run is whole, 1 while it is not.
run_set() {
    local name=$1 bin=$2 set=$3 secs=$(($(left) - reserve)) resume=()
    [ "$secs" -gt 60 ] || { log "no time for $name"; return 1; }
    mkdir -p runs && rm -rf "runs/$name"
    if [ -f "$partial/$name-run.tar.gz" ]; then
        tar -C runs -xzf "$partial/$name-run.tar.gz" || { log "$name-run.tar.gz does not unpack"; return 1; }
        [ -f "runs/$name/manifest.json" ] && resume=(--resume)
    fi
    # The pin table of this GPU model, from the tree that collects (the
    # frozen harness's for r2r), as the suite run had it.
    local pins=()
    [ -n "$slug" ] && [ -f "data/baselines/$slug.json" ] && pins=(--pins "data/baselines/$slug.json")
    log "$name: collect of $set for $secs s ${resume[*]} ${pins[*]}"
    timeout -s INT -k 30 "$secs" "$bin/kbv-collect" --out "runs/$name" "${resume[@]}" \
        --candidates "$set" "${pins[@]}" 2>"$out/$name-collect.log"
    echo "$name collect exit $?"; tail -2 "$out/$name-collect.log"
    [ -d "runs/$name" ] && tar -C runs -czf "$out/$name-run.tar.gz" "$name"
    [ -f "runs/$name/SHA256SUMS" ] || { log "$name not whole yet: continue with the next call"; return 1; }
}

# The second collect of the tuned set, by the suite run's harness, and its
# comparison with the suite run.
run_r2r() {
    [ -f "$partial/suite-run.tar.gz" ] || { log "no suite run to compare with"; return 1; }
    (cd "$tree" && run_set r2r "$tree/build" "$tree/data/candidates/tuned") || return 0
    python3 scripts/compare-runs.py "$partial/suite-run.tar.gz" "$tree/runs/r2r" --json "$out/r2r-compare.json" \
        >"$out/r2r-compare.txt" 2>&1
    echo "compare exit $?"; tail -5 "$out/r2r-compare.txt"
}

# Two collects of the tuned set by this checkout (r2ra, r2rb), one after
# the other, and their comparison: the run-to-run figure of main's harness.
run_r2r_main() {
    run_set r2ra "$root/build" "$root/data/candidates/tuned" || return 1
    run_set r2rb "$root/build" "$root/data/candidates/tuned" || return 1
    python3 scripts/compare-runs.py runs/r2ra runs/r2rb --json "$out/r2r-main-compare.json" \
        >"$out/r2r-main-compare.txt" 2>&1
    echo "compare exit $?"; tail -5 "$out/r2r-main-compare.txt"
}

# The spot checks of the baselines changed since the archived run:
# parity.py on them (parity-spot-*.json) and the kernels behind the fp32
# and bf16 parity exceptions (kernels-*.txt), each once (a file kept in
# the partial folder says it is done).  Returns 1 when time ran out
# before the parity.
#
# SPOT_FP32, SPOT_BF16 (parity.py --problems) and SPOT_K32, SPOT_K16
# (kernels.py) replace the lists below for a check of a few changed
# baselines; SPOT_T32 and SPOT_T16 are the two parity runs' limits in
# seconds (180 and 330).
spot_fp32=${SPOT_FP32:-'L1_04[7-9]_*,L1_05[1-3]_*,L3_028_*,L3_031_*,L3_043_*,L3_044_*,L3_050_*,L3_004_*,L3_026_*,L3_029_*,L3_030_*,L3_03[4-9]_*,L3_04[0-2]_*,L3_007_*,L3_009_*,L3_010_*,L1_063_*,L2_008_*,L2_023_*,L2_028_*,L2_030_*,L2_062_*,L2_075_*,L2_083_*,L2_085_*,L2_088_*,L2_092_*,L2_011_*,L2_015_*,L2_027_*,L2_072_*,L2_077_*,L2_079_*'}
spot_bf16=${SPOT_BF16:-'L3_03[4-9]_*,L3_04[0-2]_*,L3_014_*,L3_027_*,L3_028_*,L3_030_*,L3_00[1-9]_*,L3_01[0-3]_*,L3_01[5-9]_*,L3_02[0-6]_*,L3_045_*,L3_046_*,L3_047_*,L3_043_*,L3_044_*,L3_033_*,L2_038_*,L1_089_*,L1_09[0-3]_*,L2_014_*,L2_018_*,L2_022_*,L2_028_*,L2_045_*,L2_030_*,L2_033_*,L2_037_*,L2_039_*,L2_041_*,L2_051_*,L2_055_*,L2_056_*,L2_062_*,L2_064_*,L2_075_*,L2_080_*,L2_084_*,L2_088_*,L2_094_*,L2_097_*,L2_098_*,L2_099_*,L2_100_*,L2_026_*,L2_005_*,L2_004_*,L2_078_*,L2_011_*,L2_015_*,L2_023_*,L2_027_*,L2_072_*,L2_077_*,L2_079_*,L2_085_*,L2_092_*'}
spot_k32=${SPOT_K32:-'L3_007_*,L3_010_*'}
spot_k16=${SPOT_K16:-'L3_025_*,L2_028_*,L2_033_*,L2_051_*,L2_084_*,L2_098_*,L1_045_*'}
spot_t32=${SPOT_T32:-180}
spot_t16=${SPOT_T16:-330}
run_spot() {
    # The baselines changed since the archived run, measured interleaved
    # with PyTorch (parity.py's own loop).  fp32 and tf32: the reductions
    # over a dimension (max, min and their arg forms now read flat, as sum
    # and mean did; all six, since they share the plan), the recurrent
    # networks replayed as a graph; the transformer programs (net_tokens.cu
    # now templated on the element type); the convolutions whose fp32 variant
    # now also times cuDNN's graph plans (GoogLeNet, ResNet-18 and -101, a
    # level-1 and a level-2 convolution); the chains whose bias is now
    # folded into their group norm.  bf16: the level-3 networks that the
    # interpreter runs natively (every layer program without a transformer
    # layer, and minGPT's causal attention and block), NetVLAD, the vanilla
    # RNN cell, the recurrent networks over a sequence (their fallback
    # widens into the tf32 graph replay, which the archived run's 1.41 and
    # 1.46 for the bidirectional GRUs predate), the scans, L2_038, the level-2 linear
    # chains (each layer cuBLASLt's bf16 product with the bias epilogue;
    # the norm and softmax ones kept in bf16) and five convolution chains
    # (their steps on the bf16 output).  Both: the convolution chains whose
    # first post stage now reads through the chain's last pass (19ca832).
    # Each precision continues from the file the last call kept (parity.py
    # --resume: it saves after every problem, so a call cut short leaves
    # what it measured) for at most its limit or the time left, so that
    # calls of ten minutes, less the build, get through the lists in turn
    # (with both limits in one call, main never reached them).  A file
    # that holds every problem of its list costs a few seconds.
    local prec file lim list rc cut=0
    for prec in fp32 bf16; do
        file=parity-spot-$prec.json
        if [ "$prec" = fp32 ]; then lim=$spot_t32 list=$spot_fp32; else lim=$spot_t16 list=$spot_bf16; fi
        [ -f "$partial/$file" ] && cp "$partial/$file" "$out/$file"
        [ "$(left)" -gt 60 ] || { log "no time for the $prec parity of the changed baselines"; return 1; }
        [ "$lim" -lt $(($(left) - 30)) ] || lim=$(($(left) - 30))
        log "$prec parity of the changed baselines (at most $lim s)"
        timeout -s INT -k 10 "$lim" python3 tests/parity/parity.py --samples 10 --warm-s 0.3 --resume \
            $([ "$prec" = bf16 ] && echo "--precision bf16") --problems "$list" --out "$out/$file" \
            >>"$out/parity-spot.log" 2>&1
        rc=$?
        echo "parity $prec exit $rc"
        { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && cut=1
    done
    tail -12 "$out/parity-spot.log"
    [ $cut -eq 0 ] || { log "the spot parity goes on in the next call"; return 1; }
    # The kernels behind the archived run's fp32 ratios above 1.05
    # (GoogLeNet, ResNet-101; L2_023's went with 19ca832), PyTorch's and
    # kbv's side by side.
    if [ ! -f "$partial/kernels-fp32.txt" ] && [ "$(left)" -gt 150 ]; then
        log "kernels of the fp32 parity exceptions"
        timeout -s INT -k 10 100 python3 tests/parity/kernels.py --variant fp32 \
            "$spot_k32" >"$out/kernels-fp32.txt" 2>"$out/kernels.log"
        echo "kernels exit $?"
    fi
    # The same for the native bf16 baselines furthest over PyTorch's bf16
    # eager at the last spot check (the ShuffleNet unit, whose 1x1
    # convolutions took cuDNN's explicit GEMM; GEMM chains with a norm, a
    # softmax or a pooling; the average pooling).
    if [ ! -f "$partial/kernels-bf16.txt" ] && [ "$(left)" -gt 150 ]; then
        log "kernels of the bf16 parity exceptions"
        timeout -s INT -k 10 100 python3 tests/parity/kernels.py --variant bf16 \
            "$spot_k16" >"$out/kernels-bf16.txt" 2>"$out/kernels16.log"
        echo "kernels exit $?"
    fi
    return 0
}

# make test-gpu on this checkout, a step at a time (tests/gpu/run.sh's
# KBV_GPU_STEPS), each step's verdict kept in test-gpu.txt as
# "KEY COMMIT STEP PASS|FAIL ..." (KEY: the digest of what it tests; a line
# without a step, of an older call, is every step).  The steps that have
# not passed for KEY run in order while the call lasts, so that a call too
# short for all of them (an H100's, with the build) leaves the rest to the
# next; a step cut off by the call's end is no verdict and runs again.
# 0 when every step has passed for KEY; 1 otherwise (one failed, or time
# ran out).
gpu_steps="smoke resume tanh replay hostile interrupt pins"
# The steps that have not passed for key $1 in verdict file $2, in order.
gpu_steps_todo() {
    local st
    for st in $gpu_steps; do
        grep -Eq "^$1 [^ ]+ ($st )?PASS" "$2" 2>/dev/null || printf ' %s' "$st"
    done
}
run_test_gpu_steps() {
    local key=$1 commit=$2 st rc todo
    [ -f "$partial/test-gpu.txt" ] && cp "$partial/test-gpu.txt" "$out/test-gpu.txt"
    todo=$(gpu_steps_todo "$key" "$out/test-gpu.txt")
    [ -z "$todo" ] && return 0
    log "test-gpu at $commit (tested sources $key):$todo"
    for st in $todo; do
        [ "$(left)" -gt $((reserve + 60)) ] || { log "test-gpu: no time for $st"; return 1; }
        timeout -s INT -k 10 "$(($(left) - 20))" env KBV_GPU_STEPS="$st" make DEPS_ROOT="$DEPS_ROOT" test-gpu \
            >"$out/test-gpu-$st.log" 2>&1
        rc=$?
        echo "test-gpu $st exit $rc"; tail -5 "$out/test-gpu-$st.log"
        if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
            log "test-gpu: $st cut off by the call's end (no verdict)"
            return 1
        fi
        echo "$key $commit $st $([ $rc -eq 0 ] && echo PASS || echo "FAIL (exit $rc)") $(tail -1 "$out/test-gpu-$st.log")" \
            >>"$out/test-gpu.txt"
        [ $rc -eq 0 ] || return 1
    done
    return 0
}

# What main's harness still owes, in order, for as long as the call lasts:
# make test-gpu once per state of what it tests (its verdict kept in
# test-gpu.txt), on an H200 the naive set's collect time, the spot
# checks, then the two tuned collects and their comparison.
# test-gpu's verdict holds for what it tests, not for a commit: the
# harness (scripts/harness-digest.sh), the GPU tests and analyze, so that a
# commit to scripts or documentation does not spend nine device minutes on
# it again.  Prints the key of test-gpu.txt.
test_gpu_key() {
    { scripts/harness-digest.sh; find tests/gpu analyze -type f ! -name '*.pyc' -print0 2>/dev/null |
        LC_ALL=C sort -z | xargs -0 sha256sum; } | sha256sum | cut -c1-16
}

# 0 when a step of make test-gpu has not passed for key $1.
test_gpu_owed() {
    [ -n "$(gpu_steps_todo "$1" "$partial/test-gpu.txt")" ]
}

run_main() {
    local commit key
    commit=$(cut -c1-12 .deps/commit 2>/dev/null || echo unknown)
    key=$(test_gpu_key)
    build_here
    run_test_gpu_steps "$key" "$commit" || return 0
    # The suite issue's speed figure is an H200's: on one it comes before
    # the spot checks, which any GPU can run; on another GPU it is not
    # started (a run is only continued on the model it started on).
    if [ "$slug" = nvidia-h200 ] && [ ! -f "$partial/speed-time.txt" ]; then
        run_speed || return 0
    fi
    run_spot || return 0
    if [ ! -f "$partial/r2r-main-compare.json" ]; then
        run_r2r_main || return 0
    fi
    log "test-gpu, the spot checks and r2r are done$([ -f "$partial/speed-time.txt" ] || echo "; speed waits for an H200")"
}

# The naive set by this checkout's harness, continued from speed-run.tar.gz:
# issue 16's collect time of one set (scripts/collect-time.py on the
# whole run, into speed-time.txt).  1 while the run is not whole.
run_speed() {
    run_set speed "$root/build" "$root/data/candidates/naive" || return 1
    python3 scripts/collect-time.py runs/speed --rounds --fixed >"$out/speed-time.txt" 2>&1
    echo "collect-time exit $?"; head -20 "$out/speed-time.txt"
}

run_auto() {
    # No suite run in progress, and none to start: main's harness's own work.
    if [ ! -f "$partial/suite-run.tar.gz" ] && [ ! -f "$frozen" ]; then
        run_main
        return 0
    fi
    if ! sealed suite; then
        build_tree
        run_suite
        # The run in the partial folder is the one before this call's share.
        [ -f "$out/suite-run.tar.gz" ] && cp "$out/suite-run.tar.gz" "$partial/suite-run.tar.gz"
        sealed suite || return 0
    fi
    build_here
    run_parity
    [ "$parity_done" = 1 ] || return 0
    sealed r2r && [ -f "$partial/r2r-compare.json" ] && { log "suite, parity and r2r are done"; return 0; }
    build_tree   # incremental where the suite's share built it in this call
    run_r2r
}

case "$mode" in
suite) build_tree; run_suite ;;
parity) build_here; run_parity ;;
both) build_tree; run_suite; build_here; run_parity ;;
r2r) build_tree; run_r2r ;;
speed) build_here; run_speed ;;
auto) run_auto ;;
main) run_main ;;
tested)
    key=$(test_gpu_key)
    if test_gpu_owed "$key"; then
        build_here
        run_test_gpu_steps "$key" "$(cut -c1-12 .deps/commit 2>/dev/null || echo unknown)" ||
            log "test-gpu: not every step passed for $key (test-gpu.txt)"
    else
        log "test-gpu: every step passed for $key already"
    fi
    ;;
spot) build_here; run_spot ;;
test-gpu)
    build_here
    log "test-gpu"
    timeout -s INT -k 10 "$(($(left) - 20))" make DEPS_ROOT="$DEPS_ROOT" test-gpu >"$out/test-gpu.log" 2>&1
    echo "test-gpu exit $?"; tail -25 "$out/test-gpu.log"
    ;;
repin)
    # The fp32 convolutions now also time cuDNN's graph plans, but the
    # committed table (data/baselines/nvidia-h200.json) pins each one's
    # choice of the older contest: time every problem with a pinned
    # convolution again, unpinned (kbv-baseline-bench), continuing
    # repin-bench.jsonl of the partial folder; then, here,
    # `python3 scripts/pins.py RUN_DIR --bench data/suite-partial/repin-bench.jsonl
    # --merge data/baselines/nvidia-h200.json --out data/baselines/nvidia-h200.json`
    # (RUN_DIR: any run on the same GPU, for its name and cuBLAS version).
    build_here
    [ -f "$partial/repin-bench.jsonl" ] && cp "$partial/repin-bench.jsonl" "$out/repin-bench.jsonl"
    touch "$out/repin-bench.jsonl"
    # REPIN_ONLY (problem ids, space-separated): these alone, timed again
    # even where repin-bench.jsonl has them (a baseline changed since)
    python3 - data/baselines/nvidia-h200.json "$out/repin-bench.jsonl" "${REPIN_ONLY:-}" \
        >"$out/repin-todo.txt" <<'PY'
import json, sys
table = json.load(open(sys.argv[1]))["problems"]
only = sys.argv[3].split()
if only:
    print("\n".join(only))
else:
    done = {json.loads(l).get("id") for l in open(sys.argv[2]) if l.strip()}
    print("\n".join(p for p, pins in sorted(table.items()) if "conv.f:" in pins and p not in done))
PY
    log "repin: $(wc -l <"$out/repin-todo.txt") problems with pinned convolutions left"
    while read -r pid; do
        [ "$(left)" -gt $((reserve + 30)) ] || { log "repin: out of time"; break; }
        timeout -s INT -k 10 $(($(left) - reserve)) build/kbv-baseline-bench --problems "$pid" --samples 5 \
            >>"$out/repin-bench.jsonl" 2>>"$out/repin.log" || { echo "repin: $pid exit $?"; }
    done <"$out/repin-todo.txt"
    rm -f "$out/repin-todo.txt"
    ;;
pinbench)
    # The pins of a GPU model that has no table yet, so that a suite run on
    # it times the same kernels in every pair (docs/DESIGN.md, pins).  The
    # bench runs the problems left in chunks, each chunk one process (its
    # CUDA context and library handles made once), and prints a line per
    # problem as it finishes, so that a chunk cut by the call's end keeps
    # what it timed; a problem that ends its process (a lost context) is
    # recorded as an error line and skipped.
    build_here
    [ -n "$slug" ] || { log "pinbench: nvidia-smi names no GPU"; exit 1; }
    [ -f "$partial/pinbench.jsonl" ] && cp "$partial/pinbench.jsonl" "$out/pinbench.jsonl"
    touch "$out/pinbench.jsonl"
    # The problem ids of FILE (kbv list's lines, or the list so far) that
    # pinbench.jsonl has no line for, into the list of those left.  A line
    # that is not whole JSON (a bench killed while it wrote) is dropped
    # from pinbench.jsonl, so that its problem is timed again and pins.py
    # reads a clean file.
    pinbench_left() {
        python3 - "$out/pinbench.jsonl" "$1" >"$out/pinbench-todo.new" <<'PY'
import json, os, sys
done, good, bad = set(), [], 0
for line in open(sys.argv[1]):
    if line.strip():
        try:
            done.add(json.loads(line)["id"])
            good.append(line if line.endswith("\n") else line + "\n")
        except (ValueError, KeyError, TypeError):
            bad += 1
if bad:
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.writelines(good)
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
ids = [l.split()[0] for l in open(sys.argv[2]) if l[:1] == "L" and l[2:3] == "_"]
print("".join(i + "\n" for i in ids if i not in done), end="")
PY
        mv "$out/pinbench-todo.new" "$out/pinbench-todo.txt"
    }
    pinbench_left <(build/kbv list)
    log "pinbench: $(grep -c . "$out/pinbench-todo.txt") problems left"
    while [ -s "$out/pinbench-todo.txt" ]; do
        [ "$(left)" -gt $((reserve + 30)) ] || { log "pinbench: out of time"; break; }
        chunk=$(head -n 16 "$out/pinbench-todo.txt" | paste -sd, -)
        before=$(wc -l <"$out/pinbench.jsonl")
        timeout -s INT -k 10 $(($(left) - reserve)) build/kbv-baseline-bench --problems "$chunk" --samples 3 \
            >>"$out/pinbench.jsonl" 2>>"$out/pinbench.log"
        rc=$?
        [ $rc -eq 124 ] || [ $rc -eq 137 ] && { log "pinbench: cut by the call's end"; break; }
        if [ "$(wc -l <"$out/pinbench.jsonl")" -eq "$before" ]; then
            # The chunk's first problem ended the process before it printed
            # (or the bench printed nothing at all): recorded, so that
            # every pass of the loop moves on.
            first=${chunk%%,*}
            echo "{\"id\": \"$first\", \"error\": \"kbv-baseline-bench exit $rc before its line\"}" >>"$out/pinbench.jsonl"
        fi
        pinbench_left "$out/pinbench-todo.txt"
    done
    if [ ! -s "$out/pinbench-todo.txt" ]; then
        log "pinbench: every problem timed; the table"
        rm -rf runs/pinref
        build/kbv-collect --out runs/pinref --problems 'L1_019_*' --candidates data/candidates/naive \
            2>"$out/pinref-collect.log" || { echo "pinref collect exit $?"; tail -3 "$out/pinref-collect.log"; }
        python3 scripts/pins.py runs/pinref --bench "$out/pinbench.jsonl" --out "$out/pins-$slug.json"
        echo "pins exit $?"
    fi
    rm -f "$out/pinbench-todo.txt"
    ;;
*) echo "device-suite: unknown mode $mode" >&2; exit 2 ;;
esac
(cd "$out" && tar -czf logs.tar.gz ./*.log && rm -f ./*.log)
log "done"
